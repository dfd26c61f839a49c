// One test per scenario of each diagnostic code (the code table, validator/testkit/
// code_table.cpp): each validates a file that triggers the code (one fault where the format
// allows it) under every profile and checks the exact code, per-profile severity, byte offset,
// length and field path of the finding, plus the full set of codes reported (so noise fails too).
// The expected severities are transcribed from the catalogue table of design.md section 3, the
// contract; a test checks that catalogue.def agrees. Then the profile-specific behaviours the
// design describes (C-string keys in the llama.cpp profile, tensor name thresholds, big-endian and
// version 1 files, keep-going).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "code_table.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "read/file_kind.hpp"
#include "test_support.hpp"

namespace ggufcheck {
namespace {

using ggufcheck::detail::file_signatures;
using ggufcheck::detail::FileSignature;
using ggufcheck::detail::kIdentifyWindow;
using ggufcheck::testing::ByteVector;
using ggufcheck::testing::check;
using ggufcheck::testing::code_entry;
using ggufcheck::testing::code_table;
using ggufcheck::testing::CodeEntry;
using ggufcheck::testing::codes;
using ggufcheck::testing::CodeScenario;
using ggufcheck::testing::concat;
using ggufcheck::testing::container_options;
using ggufcheck::testing::document;
using ggufcheck::testing::find;
using ggufcheck::testing::kv_path;
using ggufcheck::testing::le64;
using ggufcheck::testing::model_document;
using ggufcheck::testing::nested_array;
using ggufcheck::testing::not_gguf_samples;
using ggufcheck::testing::NotGguf;
using ggufcheck::testing::pair;
using ggufcheck::testing::quantization_version;
using ggufcheck::testing::Scenario;
using ggufcheck::testing::tensor;
using ggufcheck::testing::tensor_path;
using ggufcheck::testing::text_bytes;
using ggufcheck::testing::with_data;
using ggufcheck::testing::zip_local_header;

// --- the contract: design.md section 3, transcribed --------------------------------------------

struct DesignRow {
  std::string_view code;
  std::string_view name;
  std::string_view severities;  // strict, spec, llama.cpp: E W N or - (silent)
};

constexpr DesignRow kDesign[] = {
    {"GGUF0001", "unreadable-file", "EEE"},
    {"GGUF0002", "limit-exceeded", "EEE"},
    {"GGUF1001", "truncated-header", "EEE"},
    {"GGUF1002", "bad-magic", "EEE"},
    {"GGUF1003", "unsupported-version", "EEE"},
    {"GGUF1004", "obsolete-version", "EEE"},
    {"GGUF1005", "old-version", "NW-"},
    {"GGUF1006", "byte-swapped-file", "ENE"},
    {"GGUF1007", "impossible-count", "EEE"},
    {"GGUF2001", "truncated-metadata", "EEE"},
    {"GGUF2002", "truncated-string", "EEE"},
    {"GGUF2003", "empty-key", "EEE"},
    {"GGUF2004", "duplicate-key", "EEE"},
    {"GGUF2005", "invalid-key-bytes", "EEW"},
    {"GGUF2006", "unconventional-key", "WE-"},
    {"GGUF2007", "key-too-long", "EEW"},
    {"GGUF2008", "unknown-value-type", "EEE"},
    {"GGUF2009", "unknown-array-type", "EEE"},
    {"GGUF2010", "nested-array", "E-E"},
    {"GGUF2011", "impossible-array-count", "EEE"},
    {"GGUF2012", "non-canonical-bool", "EE-"},
    {"GGUF2013", "invalid-utf8", "WE-"},
    {"GGUF2014", "string-too-long", "E-E"},
    {"GGUF2015", "array-too-long", "E-E"},
    {"GGUF2016", "nul-in-string", "W--"},
    {"GGUF3001", "truncated-tensor-info", "EEE"},
    {"GGUF3002", "tensor-name-too-long", "EEE"},
    {"GGUF3003", "empty-tensor-name", "W--"},
    {"GGUF3004", "duplicate-tensor-name", "EEE"},
    {"GGUF3005", "invalid-tensor-name-bytes", "EEW"},
    {"GGUF3006", "too-many-dims", "EEE"},
    {"GGUF3007", "negative-dim", "EEE"},
    {"GGUF3008", "zero-dim", "E-N"},
    {"GGUF3009", "element-count-overflow", "EEE"},
    {"GGUF3010", "unknown-tensor-type", "EEE"},
    {"GGUF3011", "removed-tensor-type", "EEE"},
    {"GGUF3012", "row-not-block-multiple", "EEE"},
    {"GGUF3013", "byte-size-overflow", "EEE"},
    {"GGUF3014", "new-tensor-type", "N--"},
    {"GGUF3015", "scalar-tensor", "N--"},
    {"GGUF4001", "misaligned-offset", "EEE"},
    {"GGUF4002", "overlapping-tensors", "EEE"},
    {"GGUF4003", "tensor-out-of-bounds", "EEE"},
    {"GGUF4004", "non-contiguous-layout", "E-E"},
    {"GGUF4005", "nonzero-padding", "EE-"},
    {"GGUF4006", "truncated-before-data", "EEE"},
    {"GGUF4007", "missing-final-padding", "WW-"},
    {"GGUF4008", "trailing-bytes", "WN-"},
    {"GGUF5001", "alignment-wrong-type", "EEE"},
    {"GGUF5002", "alignment-zero", "EEE"},
    {"GGUF5003", "alignment-not-power-of-two", "E-E"},
    {"GGUF5004", "alignment-not-multiple-of-8", "WE-"},
    {"GGUF5005", "alignment-too-large", "W--"},
    {"GGUF5006", "missing-architecture", "EEW"},
    {"GGUF5007", "missing-quantization-version", "WE-"},
    {"GGUF5008", "key-wrong-type", "EEW"},
    {"GGUF5009", "tokenizer-length-mismatch", "EEW"},
    {"GGUF5010", "token-id-out-of-range", "E-W"},
    {"GGUF1901", "writer-nul-terminated-strings", "NNN"},
    {"GGUF1902", "writer-header-alignment-field", "NNN"},
    {"GGUF1903", "writer-offset-before-type", "NNN"},
    {"GGUF1904", "writer-v1-field-widths", "NNN"},
};

Severity severity_from_letter(char letter) {
  switch (letter) {
    case 'E': return Severity::Error;
    case 'W': return Severity::Warning;
    case 'N': return Severity::Note;
    default: return Severity::Silent;
  }
}

const DesignRow* design_row(std::string_view code) {
  for (const DesignRow& row : kDesign) {
    if (row.code == code) return &row;
  }
  return nullptr;
}

// The severity design.md gives the code in the profile (the catalogue's for a code added later).
Severity expected_severity(Code code, Profile profile) {
  const DesignRow* row = design_row(code_string(code));
  if (row == nullptr) return catalogue_entry(code).severity(profile);
  return severity_from_letter(row->severities[static_cast<std::size_t>(profile)]);
}

// --- building files ----------------------------------------------------------------------------

constexpr std::uint64_t kSizeWidth = 8;  // u64 counts and lengths (v2, v3)
constexpr std::uint32_t kF32 = 0;

// --- one test case per scenario of the code table (some codes have several) ---------------------

struct CodeCase {
  Code code;
  std::string label;  // the test is named GGUFnnnn_<label>
  std::function<Scenario()> make;
};

void PrintTo(const CodeCase& c, std::ostream* out) {
  *out << code_string(c.code) << "_" << c.label;
}

std::vector<CodeCase> code_cases() {
  std::vector<CodeCase> cases;
  for (const CodeEntry& entry : code_table()) {
    for (const CodeScenario& s : entry.scenarios) cases.push_back({entry.code, s.label, s.make});
  }
  return cases;
}

// --- files that are not GGUF (GGUF1002 says what they are: the code table's not_gguf_samples()) --

// Bytes that look like a kind by their first bytes but are not: the generic message and hint.
// A false "this is ONNX" (or JSON, or safetensors) is worse than none.
std::vector<std::pair<std::string, ByteVector>> not_quite_samples() {
  const std::string header = R"({"w":{}})";
  return {
      {"onnx ir_version 0", ByteVector{0x08, 0x00, 0x12, 0x01, 'a', 0, 0, 0}},
      {"onnx fields out of order", ByteVector{0x08, 0x07, 0x1a, 0x01, 'a', 0x12, 0x01, 'a'}},
      {"onnx empty graph only", ByteVector{0x08, 0x07, 0x3a, 0x00, 0, 0, 0, 0}},
      {"onnx producer not printable", ByteVector{0x08, 0x07, 0x12, 0x02, 0x01, 0x02, 0, 0}},
      {"onnx graph longer than the file", ByteVector{0x08, 0x07, 0x3a, 0x7f, 0, 0, 0, 0}},
      {"onnx wrong wire type", ByteVector{0x08, 0x07, 0x10, 0x01, 0, 0, 0, 0}},
      {"json with a control byte", text_bytes(std::string("{\"a\":\"\x01\"}"))},
      {"json-like brace", text_bytes("{abc")},
      {"safetensors length past the end", concat(le64(1000), text_bytes(header))},
      {"safetensors header not closed", concat(le64(9), text_bytes("{\"w\":{} x"))},
      {"safetensors length zero", concat(le64(0), text_bytes("{\"}"))},
      {"bzip2 without block magic", text_bytes("BZh9abcdef")},
      {"bzip2 level 0", concat(text_bytes("BZh0"), ByteVector{0x31, 0x41, 0x59, 0x26, 0x53, 0x59})},
      {"gzip reserved flags", ByteVector{0x1f, 0x8b, 8, 0x80, 0, 0, 0, 0}},
      {"pickle unknown first opcode", ByteVector{0x80, 0x02, 0x00, 0x00}},
      {"tar magic, file ends before its terminator",
       [] {
         ByteVector v(262, 'a');
         std::memcpy(v.data() + 257, "ustar", 5);
         return v;
       }()},
      {"html in the middle", text_bytes("x<html>")},
      {"lfs pointer of another spec", text_bytes("version https://example.com/spec/v1\n")},
  };
}

// --- running a case ----------------------------------------------------------------------------

// A split set's files, written to a directory of their own and validated together as the CLI
// does (validate_set on the first one's path): the report of file `set_report`.
Report run_set(const Scenario& s, const Options& options) {
  static int runs = 0;
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) /
      ("ggufcheck-codes-set-" + std::to_string(::getpid()) + "-" + std::to_string(runs++));
  std::filesystem::remove_all(dir);
  for (const testing::ExampleFile& f : s.set) {
    if (!save_file(dir / f.name, f.written.bytes)) ADD_FAILURE() << "cannot write " << f.name;
  }
  const std::string wanted = (dir / s.set[s.set_report].name).string();
  SetReports reports = validate_set({(dir / s.set[0].name).string()}, options);
  std::filesystem::remove_all(dir);
  for (Report& r : reports.reports) {
    if (r.path == wanted) return std::move(r);
  }
  ADD_FAILURE() << wanted << " has no report";
  return {};
}

Report run_scenario(const Scenario& s, Profile profile) {
  Options options = container_options();
  options.profile = profile;
  options.model_checks = s.model_checks;
  options.limits = s.limits;
  options.data.enabled = s.data;
  if (!s.base.empty()) options.base_model = std::string(GGUFCHECK_SOURCE_DIR) + "/" + s.base;
  if (s.temp_file) {
    const std::string tmp = ::testing::TempDir();
    if (s.temp_file->empty()) return validate_file(tmp, options);
    const std::string missing = tmp + "/" + *s.temp_file;
    std::filesystem::remove(missing);
    return validate_file(missing, options);
  }
  if (!s.set.empty()) return run_set(s, options);
  if (s.big) return validate(s.big->bytes(), options);
  return validate(Bytes(s.bytes.data(), s.bytes.size()), options);
}

std::string describe(const Report& report) {
  std::ostringstream out;
  out << "findings (" << report.findings.size() << "):";
  for (const Finding& f : report.findings) {
    out << "\n  " << code_string(f.code) << ' ' << to_string(f.severity) << " @0x" << std::hex
        << f.offset << std::dec << '+' << f.length << ' ' << f.path << ": " << f.message;
  }
  return out.str();
}

std::vector<std::string> sorted_codes(const Report& report) {
  std::vector<std::string> out;
  for (Code code : codes(report)) out.push_back(code_string(code));
  std::sort(out.begin(), out.end());
  return out;
}

// The codes a file with these findings reports in the profile: those not silent there.
std::vector<std::string> expected_codes(Code target, const std::vector<Code>& also,
                                        Profile profile) {
  std::vector<std::string> out;
  const auto add = [&](Code code) {
    if (expected_severity(code, profile) != Severity::Silent) out.push_back(code_string(code));
  };
  add(target);
  for (Code code : also) add(code);
  std::sort(out.begin(), out.end());
  return out;
}

// design.md: "lower case, no trailing period".
void expect_message_style(const Finding& f) {
  EXPECT_FALSE(f.message.empty());
  if (f.message.empty()) return;
  // A capitalised first word ("Offset ..."), not an acronym ("NUL byte ...", "UTF-8 ...").
  const bool capitalised = f.message.size() > 1 &&
                           std::isupper(static_cast<unsigned char>(f.message[0])) != 0 &&
                           std::islower(static_cast<unsigned char>(f.message[1])) != 0;
  EXPECT_FALSE(capitalised) << f.message;
  EXPECT_NE(f.message.back(), '.') << f.message;
}

class CodeTest : public ::testing::TestWithParam<CodeCase> {};

TEST_P(CodeTest, ReportsExactFinding) {
  const CodeCase& c = GetParam();
  const Scenario s = c.make();
  if (s.big) {
    ASSERT_TRUE(s.big->ok()) << "cannot map the big buffer";
  }
  for (const Profile profile : kAllProfiles) {
    SCOPED_TRACE(std::string("profile ") + std::string(to_string(profile)));
    Scenario run = s;
    const Area area = catalogue_entry(c.code).area;
    run.model_checks = run.model_checks || area == Area::Model || area == Area::SplitSet;
    const Report report = run_scenario(run, profile);
    const Severity want = expected_severity(c.code, profile);
    const Finding* f = find(report, c.code);
    if (want == Severity::Silent) {
      EXPECT_EQ(f, nullptr) << describe(report);
    } else {
      ASSERT_NE(f, nullptr) << describe(report);
      EXPECT_EQ(to_string(f->severity), to_string(want)) << describe(report);
      EXPECT_EQ(f->offset, s.offset) << describe(report);
      EXPECT_EQ(f->length, s.length) << describe(report);
      EXPECT_EQ(f->path, s.path) << describe(report);
      if (!s.message_has.empty()) {
        EXPECT_NE(f->message.find(s.message_has), std::string::npos) << f->message;
      }
      if (!s.hint_has.empty()) {
        EXPECT_NE(f->hint.find(s.hint_has), std::string::npos) << f->hint;
      }
      expect_message_style(*f);
    }
    EXPECT_EQ(sorted_codes(report), expected_codes(c.code, s.also, profile)) << describe(report);
  }
}

INSTANTIATE_TEST_SUITE_P(Codes, CodeTest, ::testing::ValuesIn(code_cases()),
                         [](const ::testing::TestParamInfo<CodeCase>& param) {
                           return code_string(param.param.code) + "_" + param.param.label;
                         });

// --- writer diagnosis (GGUF19xx) ---------------------------------------------------------------

// design.md section 3: when a file fails structurally, the validator re-reads it under each known
// wrong-writer hypothesis (the course chapter's mistakes, gguf-format.md section 7) and notes the
// one under which the whole file parses cleanly.
// The writer's mistakes of the code table (GGUF1901 .. GGUF1904).
struct CodeMistake {
  Code code;
  testing::WriterMistake mistake;

  void apply(WriteOptions& options) const { options.*(mistake.flag) = true; }
};

std::vector<CodeMistake> writer_mistakes() {
  std::vector<CodeMistake> out;
  for (const CodeEntry& entry : code_table()) {
    if (entry.writer_mistake) out.push_back({entry.code, *entry.writer_mistake});
  }
  return out;
}

void PrintTo(const CodeMistake& m, std::ostream* out) {
  *out << code_string(m.code) << "_" << m.mistake.label;
}

class CodeWriterDiagnosis : public ::testing::TestWithParam<CodeMistake> {};

TEST_P(CodeWriterDiagnosis, NotesTheWritersMistake) {
  const CodeMistake& mistake = GetParam();
  WriteOptions options;
  mistake.apply(options);
  const ByteVector bytes = write_bytes(model_document(), options);
  for (const Profile profile : kAllProfiles) {
    SCOPED_TRACE(std::string("profile ") + std::string(to_string(profile)));
    const Report report = check(bytes, profile);
    EXPECT_FALSE(report.passed()) << describe(report);  // it fails structurally
    const Finding* f = find(report, mistake.code);
    ASSERT_NE(f, nullptr) << describe(report);
    EXPECT_EQ(to_string(f->severity), to_string(Severity::Note));
    expect_message_style(*f);
    for (const CodeMistake& other : writer_mistakes()) {  // only the right hypothesis parses
      if (other.code != mistake.code) {
        EXPECT_EQ(find(report, other.code), nullptr) << code_string(other.code) << "\n"
                                                     << describe(report);
      }
    }
  }
}

// The note is attached to the first error: at its offset and field, after it and the other
// findings at that offset, before anything further on; its hint is the fix.
TEST_P(CodeWriterDiagnosis, TheNoteFollowsTheFirstErrorAndSaysHowToFixTheWriter) {
  const CodeMistake& mistake = GetParam();
  WriteOptions options;
  mistake.apply(options);
  const Report report = check(write_bytes(model_document(), options));
  const auto first_error =
      std::find_if(report.findings.begin(), report.findings.end(),
                   [](const Finding& f) { return f.severity == Severity::Error; });
  ASSERT_NE(first_error, report.findings.end()) << describe(report);
  auto note_at = first_error + 1;
  while (note_at != report.findings.end() && note_at->severity != Severity::Note) {
    EXPECT_EQ(note_at->offset, first_error->offset) << describe(report);
    ++note_at;
  }
  ASSERT_NE(note_at, report.findings.end()) << describe(report);
  const Finding& note = *note_at;
  EXPECT_EQ(code_string(note.code), code_string(mistake.code)) << describe(report);
  EXPECT_EQ(note.offset, first_error->offset);
  EXPECT_EQ(note.path, first_error->path);
  EXPECT_FALSE(note.hint.empty());
  EXPECT_EQ(report.notes, static_cast<std::size_t>(std::count_if(
                              report.findings.begin(), report.findings.end(),
                              [](const Finding& f) { return f.severity == Severity::Note; })));
}

// A writer that followed the course chapter makes every mistake at once: each gets its note, in
// catalogue order, and nothing else is guessed.
TEST(CodeWriterDiagnosis, AllFourMistakesAtOnceGetFourNotes) {
  WriteOptions options;
  for (const CodeMistake& m : writer_mistakes()) m.apply(options);
  const Report report = check(write_bytes(model_document(), options));
  std::vector<std::string> notes;
  for (const Finding& f : report.findings) {
    if (code_string(f.code).rfind("GGUF19", 0) == 0) notes.push_back(code_string(f.code));
  }
  EXPECT_EQ(notes, (std::vector<std::string>{"GGUF1901", "GGUF1902", "GGUF1903", "GGUF1904"}))
      << describe(report);
}

// Two mistakes: exactly those two, not a bigger combination and not one alone.
TEST(CodeWriterDiagnosis, TwoMistakesGetExactlyTheirTwoNotes) {
  WriteOptions options;
  options.nul_terminated_strings = true;
  options.offset_before_type = true;
  const Report report = check(write_bytes(model_document(), options));
  EXPECT_TRUE(testing::has(report, Code::WriterNulTerminatedStrings)) << describe(report);
  EXPECT_TRUE(testing::has(report, Code::WriterOffsetBeforeType)) << describe(report);
  EXPECT_FALSE(testing::has(report, Code::WriterHeaderAlignmentField)) << describe(report);
  EXPECT_FALSE(testing::has(report, Code::WriterV1FieldWidths)) << describe(report);
}

// No false diagnosis: a correctly written file cut at any byte, or with any one byte changed,
// fails or passes on its own; no wrong-writer hypothesis claims to explain it.
TEST(CodeWriterDiagnosis, NeverOnCutOrEditedCorrectFiles) {
  const Written written = write(model_document());
  const ByteVector& bytes = written.bytes;
  const auto diagnosed = [](const Report& r) {
    return std::any_of(r.findings.begin(), r.findings.end(),
                       [](const Finding& f) { return static_cast<unsigned>(f.code) / 100 == 19; });
  };
  // Every byte of the header, metadata and tensor infos and near the data section's start; in
  // the tensor data, which no hypothesis reads differently, one byte in 61.
  const std::uint64_t start = written.layout.data_start;
  const auto tested = [&](std::size_t at) {
    return at < start + 64 || (at - start) % 61 == 0 || at + 64 >= bytes.size();
  };
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    if (!tested(cut)) continue;
    const ByteVector prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    const Report report = check(prefix);
    EXPECT_FALSE(diagnosed(report)) << "cut at " << cut << "\n" << describe(report);
  }
  for (std::size_t at = 0; at < bytes.size(); ++at) {
    if (!tested(at)) continue;
    for (const std::uint8_t value : std::initializer_list<std::uint8_t>{0x00, 0x01, 0x80, 0xFF}) {
      ByteVector edited = bytes;
      if (edited[at] == value) continue;
      edited[at] = value;
      const Report report = check(edited);
      EXPECT_FALSE(diagnosed(report)) << "byte " << at << " = " << int{value} << "\n"
                                      << describe(report);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Codes, CodeWriterDiagnosis, ::testing::ValuesIn(writer_mistakes()),
                         [](const ::testing::TestParamInfo<CodeMistake>& param) {
                           return code_string(param.param.code) + "_" +
                                  std::string(param.param.mistake.label);
                         });

// --- the catalogue -----------------------------------------------------------------------------

TEST(CodeCatalogue, EveryCodeHasATestCase) {
  for (const CatalogueEntry& entry : catalogue()) {
    if (entry.retired()) continue;  // no file shows it
    const CodeEntry* e = code_entry(entry.code);
    const bool tested = e != nullptr && (!e->scenarios.empty() || e->writer_mistake.has_value());
    EXPECT_TRUE(tested) << code_string(entry.code) << " " << entry.name
                        << " has no scenario (or writer's mistake) in its entry of the code table, "
                           "validator/testkit/code_table.cpp";
  }
}

TEST(CodeCatalogue, AgreesWithDesignTable) {
  for (const DesignRow& row : kDesign) {
    SCOPED_TRACE(std::string(row.code));
    const std::optional<Code> code = find_code(row.code);
    EXPECT_TRUE(code.has_value()) << row.code << " " << row.name
                                  << " is in design.md section 3 but not in catalogue.def";
    if (!code) continue;
    const CatalogueEntry& entry = catalogue_entry(*code);
    EXPECT_EQ(entry.name, row.name);
    for (const Profile profile : kAllProfiles) {
      EXPECT_EQ(to_string(entry.severity(profile)),
                to_string(severity_from_letter(row.severities[static_cast<std::size_t>(profile)])))
          << "profile " << to_string(profile);
    }
  }
}

// --- profile-specific behaviours -----------------------------------------------------------------

// The codes of a report, as strings, in report order.
std::vector<std::string> code_list(const Report& report) {
  std::vector<std::string> out;
  for (Code code : codes(report)) out.push_back(code_string(code));
  return out;
}

std::vector<std::string> code_names(std::vector<Code> list) {
  std::vector<std::string> out;
  for (Code code : list) out.push_back(code_string(code));
  std::sort(out.begin(), out.end());
  return out;
}

std::size_t count_of(const Report& report, Code code) {
  return static_cast<std::size_t>(std::count_if(report.findings.begin(), report.findings.end(),
                                                [&](const Finding& f) { return f.code == code; }));
}

TEST(CodeBehaviour, ModelDocumentIsCleanInEveryProfile) {
  const ByteVector bytes = write_bytes(model_document());
  for (const Profile profile : kAllProfiles) {
    EXPECT_TRUE(check(bytes, profile).findings.empty()) << describe(check(bytes, profile));
  }
}

TEST(CodeBehaviour, ArraysNested64DeepAreWithinTheDefaultLimit) {
  const ByteVector bytes = write_bytes(document({pair("my.nested", nested_array(64))}));
  const Report report = check(bytes, Profile::Strict);
  // Past @huggingface/gguf's depth, but GGUF9509 is not added to a file that has errors.
  EXPECT_EQ(sorted_codes(report), code_names({Code::NestedArray})) << describe(report);
  EXPECT_EQ(report.facts.kv_read, 2u);
}

// node-llama-cpp keeps tokenizer.chat_template.<name> and general.license.<field> flat beside
// their parent (noDirectSubNestingGGufMetadataKeys): the standard keys are no prefix conflict.
TEST(CodeBehaviour, StandardKeysUnderTemplateAndLicenseAreNoPrefixConflict) {
  const ByteVector bytes =
      write_bytes(document({pair("tokenizer.chat_template", Value::string("t")),
                            pair("tokenizer.chat_template.rag", Value::string("r")),
                            pair("general.license", Value::string("mit")),
                            pair("general.license.name", Value::string("MIT"))}));
  const Report report = check(bytes, Profile::Strict);
  EXPECT_EQ(find(report, Code::KeyPrefixConflict), nullptr) << describe(report);
}

TEST(CodeBehaviour, KeyOf65535BytesIsNotTooLong) {
  const ByteVector bytes = write_bytes(document({pair(std::string(65535, 'a'), Value::u8(1))}));
  for (const Profile profile : kAllProfiles) {
    EXPECT_EQ(find(check(bytes, profile), Code::KeyTooLong), nullptr) << to_string(profile);
  }
}

// Strict and llama.cpp follow ggml (length < 64); spec allows "at most 64".
TEST(CodeBehaviour, TensorNameTooLongThresholdPerProfile) {
  struct Row {
    std::size_t length;
    const char* severities;  // strict, spec, llama.cpp
  };
  for (const Row row : {Row{63, "---"}, Row{64, "E-E"}, Row{65, "EEE"}}) {
    const std::string name(row.length, 'n');
    const Written w = write(document({}, {tensor(name, {4})}));
    for (const Profile profile : kAllProfiles) {
      SCOPED_TRACE(std::to_string(row.length) + " bytes, profile " +
                   std::string(to_string(profile)));
      const Report report = check(w.bytes, profile);
      const Severity want = severity_from_letter(row.severities[static_cast<std::size_t>(profile)]);
      const Finding* f = find(report, Code::TensorNameTooLong);
      if (want == Severity::Silent) {
        EXPECT_EQ(f, nullptr) << describe(report);
        EXPECT_TRUE(report.findings.empty()) << describe(report);
        continue;
      }
      ASSERT_NE(f, nullptr) << describe(report);
      EXPECT_EQ(to_string(f->severity), to_string(want));
      EXPECT_EQ(f->offset, w.layout.tensors[0].name_offset);
      EXPECT_EQ(f->length, kSizeWidth + row.length);
      EXPECT_EQ(f->path, tensor_path(0, name, "name"));
      EXPECT_EQ(code_list(report), code_names({Code::TensorNameTooLong})) << describe(report);
    }
  }
}

// gguf-format.md section 4: ggml looks keys up as C strings, so only the llama.cpp profile
// takes "general.alignment\0x" as the alignment.
TEST(CodeBehaviour, LlamaCppTakesAlignmentFromKeyEqualUpToNul) {
  const std::string key("general.alignment\0x", 19);
  WriteOptions options;
  options.alignment = 64;  // the layout ggml expects
  const Written w = write(document({pair(key, Value::u32(64))}, {tensor("w", {4})}), options);
  const WrittenLayout& l = w.layout;

  const Report llama = check(w.bytes, Profile::LlamaCpp);
  EXPECT_EQ(llama.facts.alignment, 64u);
  EXPECT_EQ(llama.facts.data_start, l.data_start);
  EXPECT_EQ(code_list(llama), code_names({Code::InvalidKeyBytes})) << describe(llama);
  EXPECT_TRUE(llama.passed()) << describe(llama);

  for (const Profile profile : {Profile::Strict, Profile::Spec}) {
    SCOPED_TRACE(std::string(to_string(profile)));
    const Report report = check(w.bytes, profile);
    EXPECT_EQ(report.facts.alignment, 32u);
    EXPECT_EQ(report.facts.data_start, (l.infos_end + 31) / 32 * 32);
    const Finding* f = find(report, Code::InvalidKeyBytes);
    ASSERT_NE(f, nullptr) << describe(report);
    EXPECT_EQ(f->severity, Severity::Error);
    EXPECT_EQ(f->offset, l.pairs[1].key_offset + kSizeWidth + 17);
    EXPECT_EQ(f->length, 1u);
    EXPECT_EQ(f->path, kv_path(1, "general.alignment\\x00x", "key"));
    EXPECT_EQ(find(report, Code::AlignmentWrongType), nullptr);
  }
}

// ggml rejects a key only when it equals an earlier one byte for byte (std::string comparison),
// so keys equal up to a NUL are not duplicates in any profile (the conformance case
// i_key_equal_up_to_nul; this was divergence D3). Their bytes are still invalid.
TEST(CodeBehaviour, KeysEqualUpToNulAreNotDuplicates) {
  const Written w = write(document({pair(std::string("my.key\0b", 8), Value::u8(1)),
                                    pair(std::string("my.key\0c", 8), Value::u8(2))}));
  for (const Profile profile : {Profile::Strict, Profile::Spec, Profile::LlamaCpp}) {
    const Report report = check(w.bytes, profile);
    EXPECT_EQ(sorted_codes(report), code_names({Code::InvalidKeyBytes, Code::InvalidKeyBytes}))
        << to_string(profile) << ": " << describe(report);
  }
}

// gguf-format.md section 4: real architecture names contain '-' and chat template names upper
// case; these must not be findings in strict (nor llama.cpp). The spec's lower_snake_case has
// no '-'.
TEST(CodeBehaviour, DashAndTemplateNamesAreConventionalOutsideSpec) {
  const Written w = write(document({pair("command-r.context_length", Value::u32(4096)),
                                    pair("tokenizer.chat_template.ChatML", Value::string("x"))}));
  for (const Profile profile : {Profile::Strict, Profile::LlamaCpp}) {
    const Report report = check(w.bytes, profile);
    EXPECT_TRUE(report.findings.empty()) << to_string(profile) << ": " << describe(report);
  }
  const Report spec = check(w.bytes, Profile::Spec);
  const Finding* f = find(spec, Code::UnconventionalKey);
  ASSERT_NE(f, nullptr) << describe(spec);
  EXPECT_EQ(f->severity, Severity::Error);
  EXPECT_EQ(f->offset, w.layout.pairs[1].key_offset);
  EXPECT_EQ(f->path, kv_path(1, "command-r.context_length", "key"));
}

TEST(CodeBehaviour, BigEndianFileIsFlaggedOnceAndOtherwiseClean) {
  Document doc = model_document();
  doc.endian = Endian::Big;
  const Written w = write(doc);
  for (const Profile profile : kAllProfiles) {
    SCOPED_TRACE(std::string(to_string(profile)));
    const Report report = check(w.bytes, profile);
    EXPECT_EQ(code_list(report), code_names({Code::ByteSwappedFile})) << describe(report);
    EXPECT_EQ(report.facts.endian, Endian::Big);
    EXPECT_EQ(report.facts.version, 3u);
    EXPECT_EQ(report.facts.kv_read, doc.metadata.size());
    EXPECT_EQ(report.facts.tensors_read, doc.tensors.size());
    EXPECT_EQ(report.facts.data_start, w.layout.data_start);
  }
}

TEST(CodeBehaviour, BigEndianFileIsCheckedNormally) {
  Document doc =
      document({pair("general.alignment", Value::u32(64)), pair("general.name", Value::string("a")),
                pair("general.name", Value::string("b"))},
               {with_data(tensor("w", {16}, kF32, 32), 128)});
  doc.endian = Endian::Big;
  const Written w = write(doc);
  const Report report = check(w.bytes, Profile::Strict);
  EXPECT_EQ(report.facts.alignment, 64u);  // read big-endian
  EXPECT_EQ(sorted_codes(report), code_names({Code::ByteSwappedFile, Code::DuplicateKey,
                                              Code::MisalignedOffset, Code::NonContiguousLayout}))
      << describe(report);
  EXPECT_EQ(count_of(report, Code::ByteSwappedFile), 1u);
  const Finding* dup = find(report, Code::DuplicateKey);
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(dup->offset, w.layout.pairs[3].key_offset);
  EXPECT_EQ(dup->path, kv_path(3, "general.name", "key"));
  const Finding* misaligned = find(report, Code::MisalignedOffset);
  ASSERT_NE(misaligned, nullptr);
  EXPECT_EQ(misaligned->offset, w.layout.tensors[0].offset_offset);
  EXPECT_NE(misaligned->message.find("alignment 64"), std::string::npos) << misaligned->message;
}

TEST(CodeBehaviour, Version1ModelIsOnlyObsolete) {
  Document doc = model_document();
  doc.version = 1;
  const Written w = write(doc);
  for (const Profile profile : kAllProfiles) {
    const Report report = check(w.bytes, profile);
    EXPECT_EQ(code_list(report), code_names({Code::ObsoleteVersion}))
        << to_string(profile) << ": " << describe(report);
    EXPECT_EQ(report.facts.version, 1u);
    EXPECT_EQ(report.facts.kv_read, doc.metadata.size());
    EXPECT_EQ(report.facts.data_start, w.layout.data_start);
  }
}

// After GGUF1004 everything is read with 32-bit counts, lengths and dims.
TEST(CodeBehaviour, Version1IsCheckedWith32BitWidths) {
  Document doc = document(
      {pair("general.name", Value::string("x")), pair("general.name", Value::string("y")),
       pair("tokenizer.ggml.tokens", Value::array(ValueType::String, {Value::string("a")})),
       pair("tokenizer.ggml.scores", Value::array(ValueType::Float32, {}))},
      {tensor("a", {4, 0}), tensor("b", {4}, kF32, 8)});
  doc.version = 1;
  const Written w = write(doc);
  const WrittenLayout& l = w.layout;
  const Report report = check(w.bytes, Profile::Strict);
  EXPECT_EQ(sorted_codes(report),
            code_names({Code::ObsoleteVersion, Code::DuplicateKey, Code::TokenizerLengthMismatch,
                        Code::ZeroDim, Code::MisalignedOffset, Code::NonContiguousLayout}))
      << describe(report);
  struct Want {
    Code code;
    std::uint64_t offset, length;
    std::string path;
  };
  for (const Want& want : {
           Want{Code::DuplicateKey, l.pairs[2].key_offset, 4 + 12,
                kv_path(2, "general.name", "key")},
           Want{Code::TokenizerLengthMismatch, l.pairs[4].value_offset + 4, 4,
                kv_path(4, "tokenizer.ggml.scores", "count")},
           Want{Code::ZeroDim, l.tensors[0].dims_offset + 4, 4, tensor_path(0, "a", "dims[1]")},
           Want{Code::MisalignedOffset, l.tensors[1].offset_offset, 8,
                tensor_path(1, "b", "offset")},
       }) {
    const Finding* f = find(report, want.code);
    ASSERT_NE(f, nullptr) << code_string(want.code);
    EXPECT_EQ(f->offset, want.offset) << code_string(want.code);
    EXPECT_EQ(f->length, want.length) << code_string(want.code);
    EXPECT_EQ(f->path, want.path);
  }
}

TEST(CodeBehaviour, Version1HasNo64BitValueTypes) {
  Document doc = document({pair("my.big", Value::u64(1))});
  doc.version = 1;
  const Written w = write(doc);
  const Report report = check(w.bytes, Profile::Strict);
  EXPECT_EQ(sorted_codes(report), code_names({Code::ObsoleteVersion, Code::UnknownValueType}))
      << describe(report);
  const Finding* f = find(report, Code::UnknownValueType);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->offset, w.layout.pairs[1].type_offset);
  EXPECT_EQ(f->path, kv_path(1, "my.big", "type"));
  EXPECT_NE(f->hint.find("version 2"), std::string::npos) << f->hint;
}

TEST(CodeBehaviour, Version2ModelIsOnlyOld) {
  Document doc = model_document();
  doc.version = 2;
  const ByteVector bytes = write_bytes(doc);
  EXPECT_EQ(code_list(check(bytes, Profile::Strict)), code_names({Code::OldVersion}));
  EXPECT_EQ(code_list(check(bytes, Profile::Spec)), code_names({Code::OldVersion}));
  EXPECT_TRUE(check(bytes, Profile::LlamaCpp).findings.empty());
  EXPECT_TRUE(check(bytes, Profile::Strict).passed());
}

// design.md: the reader keeps going, so one run reports every problem.
TEST(CodeBehaviour, KeepsGoingAfterAFinding) {
  const Written w = write(
      document({pair("general.name", Value::string("a")), pair("my.flag", Value::bool_byte(2)),
                pair("general.name", Value::string("b"))},
               {tensor("w", {4}, kF32, 8)}));
  const Report report = check(w.bytes, Profile::Strict);
  EXPECT_EQ(sorted_codes(report), code_names({Code::NonCanonicalBool, Code::DuplicateKey,
                                              Code::MisalignedOffset, Code::NonContiguousLayout}))
      << describe(report);
  const Finding* boolean = find(report, Code::NonCanonicalBool);
  const Finding* dup = find(report, Code::DuplicateKey);
  const Finding* misaligned = find(report, Code::MisalignedOffset);
  ASSERT_TRUE(boolean != nullptr && dup != nullptr && misaligned != nullptr);
  EXPECT_EQ(boolean->offset, w.layout.pairs[2].value_offset);
  EXPECT_EQ(dup->offset, w.layout.pairs[3].key_offset);
  EXPECT_EQ(misaligned->offset, w.layout.tensors[0].offset_offset);
  EXPECT_TRUE(
      std::is_sorted(report.findings.begin(), report.findings.end(),
                     [](const Finding& a, const Finding& b) { return a.offset < b.offset; }));
}

// The metadata's layout does not depend on tensor_count: an impossible tensor_count must not
// hide the metadata's findings (design.md: the reader stops a section only where continuing
// would mean guessing).
TEST(CodeBehaviour, ImpossibleTensorCountDoesNotHideMetadataFindings) {
  WriteOptions options;
  options.tensor_count = 1ULL << 63;
  const Written w = write(
      document({pair("general.name", Value::string("a")), pair("general.name", Value::string("b")),
                pair("my.flag", Value::bool_byte(3))}),
      options);
  const Report report = check(w.bytes, Profile::Strict);
  EXPECT_EQ(sorted_codes(report),
            code_names({Code::ImpossibleCount, Code::DuplicateKey, Code::NonCanonicalBool}))
      << describe(report);
  EXPECT_EQ(report.facts.kv_read, 4u);
  const Finding* dup = find(report, Code::DuplicateKey);
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(dup->offset, w.layout.pairs[2].key_offset);
}

TEST(CodeBehaviour, ValidUtf8TensorNameIsAccepted) {
  const ByteVector bytes = write_bytes(document({}, {tensor("blk.0.\xc3\xa9", {4})}));
  for (const Profile profile : kAllProfiles) {
    EXPECT_TRUE(check(bytes, profile).findings.empty()) << describe(check(bytes, profile));
  }
}

TEST(CodeBehaviour, TensorTypeIdsByCategory) {
  const auto code_for = [](std::uint32_t type) {
    const std::uint64_t ne0 = type < kTensorTypeCount && tensor_type(type)->block_size != 0
                                  ? tensor_type(type)->block_size
                                  : 256;
    const Written w = write(document({quantization_version()}, {tensor("w", {ne0}, type)}));
    const Report report = check(w.bytes, Profile::Strict);
    std::vector<std::string> out = code_list(report);
    if (!out.empty()) {
      EXPECT_EQ(report.findings[0].offset, w.layout.tensors[0].type_offset);
    }
    return out;
  };
  for (std::uint32_t type : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
    EXPECT_EQ(code_for(type), code_names({Code::RemovedTensorType})) << "type " << type;
  }
  for (std::uint32_t type : {39u, 40u, 41u, 42u}) {
    EXPECT_EQ(code_for(type), code_names({Code::NewTensorType})) << "type " << type;
  }
  for (std::uint32_t type : {43u, 0x40000000u, 0xFFFFFFFFu}) {
    EXPECT_EQ(code_for(type), code_names({Code::UnknownTensorType})) << "type " << type;
  }
  for (std::uint32_t type = 0; type < kTensorTypeCount; ++type) {
    if (tensor_type(type)->removed() || tensor_type(type)->recent()) continue;
    EXPECT_TRUE(code_for(type).empty()) << "type " << type;
  }
}

// --- GGUF1002: what the file is, read within its bytes -----------------------------------------

// `content` in a mapping where the byte after it, and everything from `readable` on, is an
// inaccessible page: a read past the bytes there are, or past the first `readable` bytes,
// crashes the test. `size` (>= content) is the size the validator is told.
class GuardedBytes {
 public:
  GuardedBytes(const ByteVector& content, std::size_t size, std::size_t readable)
      : page_(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))) {
    const std::size_t readable_pages = (std::min(readable, size) + page_ - 1) / page_;
    mapped_ = ((size + page_ - 1) / page_ + 1) * page_;  // one guard page at least
    void* region = ::mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) return;
    base_ = static_cast<std::uint8_t*>(region);
    // The content ends exactly at a page boundary when it is the whole span: placed at the end
    // of its pages.
    const std::size_t span_pages = (size + page_ - 1) / page_;
    start_ = base_ + span_pages * page_ - size;
    if (readable_pages > 0 &&
        ::mprotect(base_, readable_pages * page_, PROT_READ | PROT_WRITE) != 0) {
      return;
    }
    if (content.size() > std::min(readable, size)) return;
    if (!content.empty()) std::memcpy(start_, content.data(), content.size());
    size_ = size;
    ok_ = true;
  }
  ~GuardedBytes() {
    if (base_ != nullptr) ::munmap(base_, mapped_);
  }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] Bytes bytes() const { return {start_, size_}; }

 private:
  std::size_t page_;
  std::uint8_t* base_ = nullptr;
  std::uint8_t* start_ = nullptr;
  std::size_t mapped_ = 0;
  std::size_t size_ = 0;
  bool ok_ = false;
};

const Finding* bad_magic_of(const Report& report) {
  return report.findings.size() == 1 && report.findings[0].code == Code::BadMagic
             ? &report.findings[0]
             : nullptr;
}

TEST(BadMagic, EachKindGetsItsExactMessage) {
  for (const NotGguf& sample : not_gguf_samples()) {
    SCOPED_TRACE(sample.label);
    const Report report = check(sample.bytes, Profile::Strict);
    const Finding* f = bad_magic_of(report);
    ASSERT_NE(f, nullptr) << describe(report);
    EXPECT_EQ(f->message, sample.message);
    EXPECT_NE(f->hint.find(sample.hint_has), std::string::npos) << f->hint;
  }
}

TEST(BadMagic, LookalikesGetTheGenericMessage) {
  for (const auto& [what, bytes] : not_quite_samples()) {
    SCOPED_TRACE(what);
    const Report report = check(bytes, Profile::Strict);
    const Finding* f = bad_magic_of(report);
    ASSERT_NE(f, nullptr) << describe(report);
    EXPECT_EQ(f->message.find(": this"), std::string::npos) << f->message;
    EXPECT_EQ(f->hint,
              "a GGUF file starts with the 4 bytes \"GGUF\" (47 47 55 46); this is not a GGUF "
              "file");
  }
}

// Every prefix of every sample, its last byte against an inaccessible page: the identification
// reads only the bytes there are (a cut pointer, a 3-byte gzip, a 300-byte tar header).
TEST(BadMagic, ReadsNoBytePastTheEnd) {
  std::vector<ByteVector> all;
  for (const NotGguf& sample : not_gguf_samples()) all.push_back(sample.bytes);
  for (const auto& [what, bytes] : not_quite_samples()) all.push_back(bytes);
  for (const ByteVector& bytes : all) {
    for (std::size_t n = 1; n <= bytes.size(); ++n) {
      const ByteVector prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
      const GuardedBytes guarded(prefix, n, n);
      ASSERT_TRUE(guarded.ok());
      const Report report = validate(guarded.bytes(), Options{});
      ASSERT_FALSE(report.findings.empty());
      // A prefix of "GGUF" is truncated; everything else here is bad-magic.
      const std::string_view head(reinterpret_cast<const char*>(prefix.data()),
                                  std::min<std::size_t>(n, 4));
      const Code want = std::string_view("GGUF").substr(0, head.size()) == head
                            ? Code::TruncatedHeader
                            : Code::BadMagic;
      EXPECT_EQ(report.findings[0].code, want) << describe(report);
      EXPECT_EQ(report.findings[0].length, std::min<std::uint64_t>(n, 4));
    }
  }
}

// A file of 64 MiB of which only the first 4 KiB can be read: the identification looks at no
// more (an HTML page or a JSON answer that never ends, a tar header's name without a NUL).
TEST(BadMagic, LooksOnlyAtTheFirstFourKibibytes) {
  const std::size_t big = std::size_t{64} << 20;
  struct Case {
    std::string what;
    ByteVector head;
    std::string message_has;
  };
  std::vector<Case> cases = {
      {"html", text_bytes("<html><head><title>" + std::string(5000, 't')),
       "this is an HTML page, not the model"},
      {"json", text_bytes("{\"error\":\"" + std::string(5000, 'e')),
       "this is a JSON document, not the model (error \""},
      {"json of spaces", text_bytes("{" + std::string(5000, ' ')), ""},
      {"lfs",
       text_bytes("version https://git-lfs.github.com/spec/v1\nsize " + std::string(5000, '9')),
       "this is a Git LFS pointer, not the model"},
      {"zip name past the window", zip_local_header(std::string(5000, 'n')),
       "this is a zip archive"},
      {"unknown", ByteVector(5000, 0xAB), ""},
  };
  for (Case& c : cases) {
    SCOPED_TRACE(c.what);
    c.head.resize(kIdentifyWindow);
    const GuardedBytes guarded(c.head, big, kIdentifyWindow);
    ASSERT_TRUE(guarded.ok());
    const Report report = validate(guarded.bytes(), Options{});
    const Finding* f = bad_magic_of(report);
    ASSERT_NE(f, nullptr) << describe(report);
    EXPECT_NE(f->message.find(c.message_has), std::string::npos) << f->message;
  }
}

// A safetensors header may end far beyond the first 4 KiB: its last bytes are the one read
// outside them (8 bytes, at the offset the header length gives, inside the file).
TEST(BadMagic, SafetensorsHeaderEndIsReadWhereTheLengthSaysOnly) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t header_length = 3 * page;  // ends at a page boundary: 8 + N - 8 .. 8 + N
  ByteVector content = le64(header_length);
  const std::string json = "{\"w\":{}";
  content.insert(content.end(), json.begin(), json.end());
  content.resize(8 + header_length, ' ');
  content[8 + header_length - 1] = '}';
  // Readable: the whole header (the test cannot open a hole in the middle of the mapping
  // without more machinery); the bytes after it, 1 MiB of the claimed file, are not.
  const GuardedBytes guarded(content, content.size() + (1u << 20), content.size());
  ASSERT_TRUE(guarded.ok());
  const Report report = validate(guarded.bytes(), Options{});
  const Finding* f = bad_magic_of(report);
  ASSERT_NE(f, nullptr) << describe(report);
  EXPECT_NE(f->message.find("this is a safetensors file"), std::string::npos) << f->message;
}

// The table the identification starts from: every signature matches at its offset, names are
// unique identifiers (for a fuzz dictionary), and no signature runs past the window.
TEST(BadMagic, SignatureTableIsWellFormed) {
  std::set<std::string_view> names;
  for (const FileSignature& s : file_signatures()) {
    EXPECT_TRUE(names.insert(s.name).second) << s.name;
    EXPECT_FALSE(s.bytes.empty()) << s.name;
    EXPECT_LE(s.offset + s.bytes.size(), kIdentifyWindow) << s.name;
    EXPECT_NE(to_string(s.kind), "unknown") << s.name;
    for (const char c : s.name) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << s.name;
    }
  }
  EXPECT_GE(names.size(), 20u);
}

}  // namespace
}  // namespace ggufcheck
