// One test per diagnostic code: each builds a file with the writer that triggers the code (one
// fault where the format allows it), validates it under every profile and checks the exact
// code, per-profile severity, byte offset, length and field path of the finding, plus the full
// set of codes reported (so noise fails too). The expected severities are transcribed from the
// catalogue table of design.md section 3, the contract; a test checks that catalogue.def agrees.
// Then the profile-specific behaviours the design describes (C-string keys in the llama.cpp
// profile, tensor name thresholds, big-endian and version 1 files, keep-going).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "code_examples.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "hostile.hpp"
#include "read/file_kind.hpp"
#include "templates/jinja.hpp"
#include "test_support.hpp"

namespace ggufcheck {
namespace {

using ggufcheck::detail::file_signatures;
using ggufcheck::detail::FileSignature;
using ggufcheck::detail::kIdentifyWindow;
using ggufcheck::testing::ByteVector;
using ggufcheck::testing::check;
using ggufcheck::testing::codes;
using ggufcheck::testing::container_options;
using ggufcheck::testing::document;
using ggufcheck::testing::example;
using ggufcheck::testing::find;
using ggufcheck::testing::minimal_document;
using ggufcheck::testing::model_document;
using ggufcheck::testing::nested_array;
using ggufcheck::testing::pair;
using ggufcheck::testing::patch;
using ggufcheck::testing::quantization_version;
using ggufcheck::testing::tensor;
using ggufcheck::testing::with_array_count;
using ggufcheck::testing::with_data;
using ggufcheck::testing::with_key_length;
using ggufcheck::testing::with_tensor_name_length;

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
constexpr std::uint32_t kF64 = 28;

constexpr std::uint64_t kArrayHeader = 4 + kSizeWidth;  // element type, count

std::vector<std::uint8_t> truncated(std::vector<std::uint8_t> bytes, std::uint64_t size) {
  bytes.resize(size);
  return bytes;
}

// Field paths as design.md writes them: kv[3] "general.alignment" type.
std::string kv_path(std::size_t index, std::string_view shown_key, std::string_view field = {}) {
  std::string path = "kv[" + std::to_string(index) + "] \"" + std::string(shown_key) + "\"";
  if (!field.empty()) path += " " + std::string(field);
  return path;
}
std::string tensor_path(std::size_t index, std::string_view shown_name,
                        std::string_view field = {}) {
  std::string path = "tensor[" + std::to_string(index) + "] \"" + std::string(shown_name) + "\"";
  if (!field.empty()) path += " " + std::string(field);
  return path;
}

// A file of `size` bytes: `prefix`, then `fill` bytes up to the end. Past the first pages it is
// one 2 MiB memfd of fill bytes mapped again and again, so a 1 GiB string costs neither 1 GiB of
// memory nor the time to write it.
class BigBuffer {
 public:
  BigBuffer(const ByteVector& prefix, std::size_t size, std::uint8_t fill) : size_(size) {
    constexpr std::size_t kPage = 4096;
    constexpr std::size_t kChunk = 2u << 20;
    const std::size_t head = (prefix.size() / kPage + 1) * kPage;
    mapped_ = head + (size > head ? (size - head + kChunk - 1) / kChunk * kChunk : 0);
    void* region =
        ::mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (region == MAP_FAILED) return;
    data_ = static_cast<std::uint8_t*>(region);
    if (::mmap(data_, head, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1,
               0) == MAP_FAILED) {
      return;
    }
    std::memcpy(data_, prefix.data(), prefix.size());
    std::memset(data_ + prefix.size(), fill, head - prefix.size());
    const int fd = ::memfd_create("ggufcheck-test-fill", MFD_CLOEXEC);
    if (fd < 0) return;
    bool mapped = ::ftruncate(fd, static_cast<off_t>(kChunk)) == 0;
    if (mapped && fill != 0) {
      void* chunk = ::mmap(nullptr, kChunk, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      mapped = chunk != MAP_FAILED;
      if (mapped) {
        std::memset(chunk, fill, kChunk);
        ::munmap(chunk, kChunk);
      }
    }
    for (std::size_t at = head; mapped && at < mapped_; at += kChunk) {
      mapped = ::mmap(data_ + at, kChunk, PROT_READ, MAP_FIXED | MAP_SHARED, fd, 0) != MAP_FAILED;
    }
    ::close(fd);
    ok_ = mapped;
  }
  ~BigBuffer() {
    if (data_ != nullptr) ::munmap(data_, mapped_);
  }
  BigBuffer(const BigBuffer&) = delete;
  BigBuffer& operator=(const BigBuffer&) = delete;
  [[nodiscard]] bool ok() const { return ok_; }
  [[nodiscard]] Bytes bytes() const { return {data_, size_}; }

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t size_;
  std::size_t mapped_ = 0;
  bool ok_ = false;
};

// --- one test case per code (some codes have several) ------------------------------------------

// What a case's file is and where the finding must point.
struct Scenario {
  ByteVector bytes;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::string path;
  std::vector<Code> also;   // the other codes the file triggers (each profile keeps the ones
                            // design.md does not silence there); the fewer the better
  std::string message_has;  // a substring the message must contain
  std::string hint_has;     // a substring the hint must contain
  Limits limits;
  std::shared_ptr<BigBuffer> big;  // validated instead of bytes when set
  std::string file;                // validate_file() on this path instead
  bool data = false;               // with the data check (check --data)
  // With the model checks (the Model and SplitSet codes' cases): other cases' files are
  // containers, not models llama.cpp loads.
  bool model_checks = false;
  // A split set's files (the SplitSet codes' cases), written to a directory of their own and
  // validated together as the CLI does (validate_set on the first one's path): the report of
  // file `set_report` is the case's. A file alone is a set of one.
  std::vector<testing::ExampleFile> set;
  std::size_t set_report = 0;
  // An adapter's base model (--base), a file named from the repository's root.
  std::string base;

  [[nodiscard]] Report run(Profile profile) const {
    Options options = container_options();
    options.profile = profile;
    options.model_checks = model_checks;
    options.limits = limits;
    options.data.enabled = data;
    if (!base.empty()) options.base_model = std::string(GGUFCHECK_SOURCE_DIR) + "/" + base;
    if (!file.empty()) return validate_file(file, options);
    if (!set.empty()) return run_set(options);
    if (big) return validate(big->bytes(), options);
    return validate(Bytes(bytes.data(), bytes.size()), options);
  }

  [[nodiscard]] Report run_set(const Options& options) const {
    static int runs = 0;
    const std::filesystem::path dir =
        std::filesystem::path(::testing::TempDir()) /
        ("ggufcheck-codes-set-" + std::to_string(::getpid()) + "-" + std::to_string(runs++));
    std::filesystem::remove_all(dir);
    for (const testing::ExampleFile& f : set) {
      if (!save_file(dir / f.name, f.written.bytes)) ADD_FAILURE() << "cannot write " << f.name;
    }
    const std::string wanted = (dir / set[set_report].name).string();
    SetReports reports = validate_set({(dir / set[0].name).string()}, options);
    std::filesystem::remove_all(dir);
    for (Report& r : reports.reports) {
      if (r.path == wanted) return std::move(r);
    }
    ADD_FAILURE() << wanted << " has no report";
    return {};
  }
};

Scenario at(ByteVector bytes, std::uint64_t offset, std::uint64_t length, std::string path,
            std::vector<Code> also = {}) {
  Scenario s;
  s.bytes = std::move(bytes);
  s.offset = offset;
  s.length = length;
  s.path = std::move(path);
  s.also = std::move(also);
  return s;
}

// A chat-template case: the example's finding at the first byte of `needle` in its file.
Scenario template_case(Code code, std::string_view needle, std::uint64_t length,
                       std::string message_has = {}) {
  const Written w = example(code);
  const auto found =
      std::search(w.bytes.begin(), w.bytes.end(), needle.begin(), needle.end(),
                  [](std::uint8_t byte, char c) { return byte == static_cast<std::uint8_t>(c); });
  if (found == w.bytes.end()) ADD_FAILURE() << "no " << needle << " in the example";
  Scenario s = at(w.bytes, static_cast<std::uint64_t>(found - w.bytes.begin()), length,
                  kv_path(1, "tokenizer.chat_template"));
  s.message_has = std::move(message_has);
  return s;
}

// A case about the whole template (provenance): at its first byte, over all of it.
Scenario whole_template_case(Code code, std::string_view known_name) {
  const Written w = example(code);
  const WrittenPair& pair = w.layout.pairs[1];
  Scenario s = at(w.bytes, pair.value_offset + kSizeWidth,
                  pair.end - pair.value_offset - kSizeWidth, kv_path(1, "tokenizer.chat_template"));
  s.message_has = std::string(known_name);
  return s;
}

// The examples of the model codes are model_document() with one change that keeps the order of
// its pairs and tensors (an added tensor comes last): where a finding about pair `key` or
// tensor `name` of the example points.
std::size_t pair_index(std::string_view key) {
  const Document doc = model_document();
  for (std::size_t i = 0; i < doc.metadata.size(); ++i) {
    if (doc.metadata[i].key == key) return i;
  }
  throw std::logic_error("no key " + std::string(key));
}

Scenario model_pair_case(Code code, std::string_view key) {
  const Written w = example(code);
  const std::size_t i = pair_index(key);
  const WrittenPair& p = w.layout.pairs[i];
  return at(w.bytes, p.offset, p.end - p.offset, kv_path(i, key));
}

Scenario model_tensor_case(Code code, std::string_view name) {
  const Written w = example(code);
  const Document doc = model_document();
  std::size_t i = w.layout.tensors.size() - 1;  // an added tensor
  for (std::size_t t = 0; t < doc.tensors.size(); ++t) {
    if (doc.tensors[t].name == name) i = t;
  }
  const std::uint64_t end =
      i + 1 < w.layout.tensors.size() ? w.layout.tensors[i + 1].offset : w.layout.infos_end;
  return at(w.bytes, w.layout.tensors[i].offset, end - w.layout.tensors[i].offset,
            tensor_path(i, name));
}

// The example's finding at its pair `i` (the whole pair) / its tensor info `i`.
Scenario example_pair_case(Code code, std::size_t i, std::string_view key) {
  const Written w = example(code);
  const WrittenPair& p = w.layout.pairs[i];
  return at(w.bytes, p.offset, p.end - p.offset, kv_path(i, key));
}

Scenario example_tensor_case(Code code, std::size_t i, std::string_view name) {
  const Written w = example(code);
  const std::uint64_t end =
      i + 1 < w.layout.tensors.size() ? w.layout.tensors[i + 1].offset : w.layout.infos_end;
  return at(w.bytes, w.layout.tensors[i].offset, end - w.layout.tensors[i].offset,
            tensor_path(i, name));
}

// A finding about the model as a whole: at the first pair, no length.
Scenario model_case(Code code, std::string path) {
  const Written w = example(code);
  return at(w.bytes, w.layout.pairs[0].offset, 0, std::move(path));
}

// The vocabulary codes' examples change token 3 of model_document()'s four tokens ("<unk>",
// "<s>", "</s>", "a"): the finding is at that token's string, `length` its text's bytes.
Scenario vocab_token_case(Code code, std::uint64_t length) {
  const Written w = example(code);
  const std::size_t i = pair_index("tokenizer.ggml.tokens");
  // element type, count, then "<unk>", "<s>" and "</s>" with their lengths
  const std::uint64_t offset = w.layout.pairs[i].value_offset + 4 + 8 + (8 + 5) + (8 + 3) + (8 + 4);
  return at(w.bytes, offset, 8 + length, kv_path(i, "tokenizer.ggml.tokens") + "[3]");
}

// A split-set code's case: the example set's file `report` (the file alone for a code whose
// example is one file), the finding at [offset, offset + length) of it.
Scenario set_case(std::vector<testing::ExampleFile> files, std::size_t report, std::uint64_t offset,
                  std::uint64_t length, std::string path, std::string message_has,
                  std::vector<Code> also = {}) {
  Scenario s = at({}, offset, length, std::move(path), std::move(also));
  s.set = std::move(files);
  s.set_report = report;
  s.message_has = std::move(message_has);
  return s;
}

// The example of a tensor-data code: its one tensor "w", the finding `offset` bytes into the
// tensor's data, with the data check on.
Scenario data_case(Code code, std::uint64_t offset, std::uint64_t length, std::string message_has,
                   std::vector<Code> also = {}) {
  const Written w = example(code);
  Scenario s = at(w.bytes, w.layout.tensors[0].data_position + offset, length,
                  "tensor[0] \"w\" data", std::move(also));
  s.message_has = std::move(message_has);
  s.data = true;
  return s;
}

struct CodeCase {
  Code code;
  std::string label;  // the test is named GGUFnnnn_<label>
  std::function<Scenario()> make;
};

void PrintTo(const CodeCase& c, std::ostream* out) {
  *out << code_string(c.code) << "_" << c.label;
}

// kv[1] "my.big" holds an empty string or array whose length or count (at count_at in the value)
// is set to count; count fill bytes follow (one per character or uint8 element).
Scenario huge_value(Value empty_value, std::uint64_t count_at, std::uint64_t count,
                    std::uint8_t fill, std::uint64_t offset_in_value, std::uint64_t length,
                    std::string path) {
  Written w = write(document({pair("my.big", std::move(empty_value))}));
  const std::uint64_t value_offset = w.layout.pairs[1].value_offset;
  patch(w.bytes, value_offset + count_at, count);
  Scenario s = at({}, value_offset + offset_in_value, length, std::move(path));
  s.big = std::make_shared<BigBuffer>(w.bytes, w.bytes.size() + count, fill);
  return s;
}

// --- files that are not GGUF (GGUF1002 says what they are) ------------------------------------

ByteVector text_bytes(std::string_view text) {
  return ByteVector(text.begin(), text.end());
}
ByteVector concat(ByteVector a, const ByteVector& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}
ByteVector le64(std::uint64_t v) {
  ByteVector out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  return out;
}

struct NotGguf {
  std::string label;  // the test is named GGUF1002_<label>
  ByteVector bytes;
  std::string message;  // the whole message
  std::string hint_has;
};

// A zip whose first local header names `name` (enough of a zip for the identification: the
// signature, the header fields, the name).
ByteVector zip_local_header(std::string_view name) {
  ByteVector out = {'P', 'K', 3, 4, 20, 0, 0, 0, 0, 0, 0, 0, 0x21, 0};
  out.resize(26, 0);  // crc and sizes
  out.push_back(static_cast<std::uint8_t>(name.size() & 0xFF));
  out.push_back(static_cast<std::uint8_t>(name.size() >> 8));
  out.insert(out.end(), {0, 0});  // no extra field
  return concat(out, text_bytes(name));
}

ByteVector tar_header(std::string_view name) {
  ByteVector out(512, 0);
  std::copy(name.begin(), name.end(), out.begin());
  const std::string_view magic(
      "ustar\0"
      "00",
      8);
  std::copy(magic.begin(), magic.end(), out.begin() + 257);
  return out;
}

std::vector<NotGguf> not_gguf_samples() {
  const std::string lfs =
      "version https://git-lfs.github.com/spec/v1\n"
      "oid sha256:0f343b0931126a20f133d67c2b018a3b3c57a6f4d3a3b1c7a2b1c0d9e8f7a6b5\n"
      "size 4368657152\n";
  const std::string safetensors_header =
      R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  const ByteVector safetensors = concat(
      concat(le64(safetensors_header.size()), text_bytes(safetensors_header)), ByteVector(4, 0));
  return {
      {"GitLfsPointer", text_bytes(lfs),
       "magic is \"vers\", expected \"GGUF\": this is a Git LFS pointer, not the model (the "
       "pointer names 4368657152 bytes)",
       "git lfs pull"},
      {"GitLfsPointerWithoutSize", text_bytes("version https://git-lfs.github.com/spec/v1\n"),
       "magic is \"vers\", expected \"GGUF\": this is a Git LFS pointer, not the model",
       "git lfs install"},
      {"GitLfsPointerSizeOverflows",
       text_bytes("version https://git-lfs.github.com/spec/v1\nsize 99999999999999999999\n"),
       "magic is \"vers\", expected \"GGUF\": this is a Git LFS pointer, not the model",
       "git lfs pull"},
      {"HtmlPage",
       text_bytes("\xef\xbb\xbf\n  <!doctype HTML><html><head><TITLE>\n  403 Forbidden\n  "
                  "</TITLE></head></html>"),
       "magic is \"\\xef\\xbb\\xbf\\x0a\", expected \"GGUF\": this is an HTML page, not the model "
       "(title \"403 Forbidden\")",
       "/resolve/"},
      {"HtmlWithoutTitle", text_bytes("<html><body>Moved</body></html>"),
       "magic is \"<htm\", expected \"GGUF\": this is an HTML page, not the model", "web page"},
      {"HtmlTitleEscapedAndShortened",
       text_bytes("<head><title>\x1b[31m\"" + std::string(100, 'x') + "</title>"),
       "magic is \"<hea\", expected \"GGUF\": this is an HTML page, not the model (title "
       "\"\\x1b[31m\\\"" +
           std::string(54, 'x') + "...(106 bytes)\")",
       "web page"},
      {"JsonError", text_bytes(R"({"error":"Repository not found"})"),
       "magic is \"{\\\"er\", expected \"GGUF\": this is a JSON document, not the model (error "
       "\"Repository not found\")",
       "API answer"},
      {"JsonShorterThanHeader", text_bytes("{ \"error\" : \"x\\\"y\" }"),
       "magic is \"{ \\\"e\", expected \"GGUF\": this is a JSON document, not the model (error "
       "\"x\\\"y\")",
       "access token"},
      {"JsonNestedErrorMessage",
       text_bytes(R"({"error":{"code":401,"message":"Invalid credentials"}})"),
       "magic is \"{\\\"er\", expected \"GGUF\": this is a JSON document, not the model (message "
       "\"Invalid credentials\")",
       "API answer"},
      {"JsonTwoBytes", text_bytes("[]"),
       "magic is \"[]\" (a 2-byte file), expected \"GGUF\": this is a JSON document, not the "
       "model",
       "API answer"},
      {"Gzip",
       concat(ByteVector{0x1f, 0x8b, 8, 8, 0, 0, 0, 0, 0, 3},
              text_bytes(std::string_view("m.gguf\0x", 8))),
       "magic is \"\\x1f\\x8b\\x08\\x08\", expected \"GGUF\": this is a gzip-compressed file (of "
       "\"m.gguf\")",
       "gunzip"},
      {"GzipWithoutName", ByteVector{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0},
       "magic is \"\\x1f\\x8b\\x08\\x00\", expected \"GGUF\": this is a gzip-compressed file",
       "gunzip"},
      {"Zstd", ByteVector{0x28, 0xb5, 0x2f, 0xfd, 0x20, 0},
       "magic is \"(\\xb5/\\xfd\", expected \"GGUF\": this is a zstd-compressed file", "zstd -d"},
      {"Xz", ByteVector{0xfd, '7', 'z', 'X', 'Z', 0, 0, 1},
       "magic is \"\\xfd7zX\", expected \"GGUF\": this is an xz-compressed file", "xz -d"},
      {"Bzip2", ByteVector{'B', 'Z', 'h', '9', 0x31, 0x41, 0x59, 0x26, 0x53, 0x59},
       "magic is \"BZh9\", expected \"GGUF\": this is a bzip2-compressed file", "bunzip2"},
      {"Zip", zip_local_header("weights/model.gguf"),
       "magic is \"PK\\x03\\x04\", expected \"GGUF\": this is a zip archive (first entry "
       "\"weights/model.gguf\")",
       "unzip"},
      {"EmptyZip", concat(ByteVector{'P', 'K', 5, 6}, ByteVector(18, 0)),
       "magic is \"PK\\x05\\x06\", expected \"GGUF\": this is an empty zip archive", "again"},
      {"Tar", tar_header("model.gguf"),
       "magic is \"mode\", expected \"GGUF\": this is a tar archive (first entry \"model.gguf\")",
       "tar -xf"},
      {"Safetensors", safetensors,
       "magic is \"6\\x00\\x00\\x00\", expected \"GGUF\": this is a safetensors file, not GGUF",
       "convert_hf_to_gguf.py"},
      {"PytorchZip", zip_local_header("model/data.pkl"),
       "magic is \"PK\\x03\\x04\", expected \"GGUF\": this is a PyTorch checkpoint (torch.save's "
       "zip format, first entry \"model/data.pkl\")",
       "convert_hf_to_gguf.py"},
      {"PytorchZipVersionFirst", zip_local_header("archive/version"),
       "magic is \"PK\\x03\\x04\", expected \"GGUF\": this is a PyTorch checkpoint (torch.save's "
       "zip format, first entry \"archive/version\")",
       "only checkpoints you trust"},
      {"PytorchLegacy",
       ByteVector{0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50,
                  0x19, '.'},
       "magic is \"\\x80\\x02\\x8a\\x0a\", expected \"GGUF\": this is a PyTorch checkpoint "
       "(torch.save's legacy format)",
       "convert_hf_to_gguf.py"},
      {"Pickle", ByteVector{0x80, 0x04, 0x95, 0x0a, 0, 0, 0, 0, 0, 0, 0, '}'},
       "magic is \"\\x80\\x04\\x95\\x0a\", expected \"GGUF\": this looks like a Python pickle "
       "(protocol 4), e.g. a PyTorch checkpoint",
       "runs code"},
      {"Onnx",
       concat(text_bytes("\x08\x07\x12\x07pytorch\x1a\x03"
                         "2.0"),
              ByteVector{0x3a, 0x02, 0x12, 0x00}),
       "magic is \"\\x08\\x07\\x12\\x07\", expected \"GGUF\": this looks like an ONNX model "
       "(producer \"pytorch 2.0\")",
       "ONNX"},
      {"OnnxGraphOnly", ByteVector{0x08, 0x09, 0x3a, 0x02, 0x12, 0x00},
       "magic is \"\\x08\\x09:\\x02\", expected \"GGUF\": this looks like an ONNX model", "ONNX"},
      {"ByteSwappedMagic", concat(text_bytes("FUGG"), ByteVector(20, 0)),
       "magic is \"FUGG\", expected \"GGUF\": this is \"GGUF\" stored as a byte-swapped u32",
       "byte-swapped u32"},
      {"LegacyGgla", concat(text_bytes("algg"), ByteVector(20, 0)),
       "magic is \"algg\", expected \"GGUF\": this is a legacy GGLA file (a pre-GGUF LoRA "
       "adapter)",
       "convert_lora_to_gguf.py"},
  };
}

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

std::vector<CodeCase> code_cases() {
  const std::string tmp = ::testing::TempDir();
  std::vector<CodeCase> cases = {
      // --- GGUF0xxx: input and limits -----------------------------------------------------------
      {Code::UnreadableFile, "MissingPath",
       [tmp] {
         const std::string missing = tmp + "/ggufcheck-codes-no-such-file.gguf";
         std::filesystem::remove(missing);
         Scenario s = at({}, 0, 0, "file");
         s.file = missing;
         s.message_has = "cannot open";
         return s;
       }},
      {Code::UnreadableFile, "Directory",
       [tmp] {
         Scenario s = at({}, 0, 0, "file");
         s.file = tmp;
         s.message_has = "directory";
         return s;
       }},
      {Code::LimitExceeded, "ArraysNested65Deep",
       [] {
         const Written w = example(Code::LimitExceeded);
         // The array at depth 63 (0-based) is the 64th level; its element type (array) would
         // make a 65th.
         return at(w.bytes, w.layout.pairs[1].value_offset + 63 * kArrayHeader, 4,
                   kv_path(1, "my.nested", "element type"), {Code::NestedArray});
       }},
      {Code::LimitExceeded, "StricterDepthLimit",
       [] {
         const Written w = write(document({pair("my.nested", nested_array(3))}));
         Scenario s = at(w.bytes, w.layout.pairs[1].value_offset + kArrayHeader, 4,
                         kv_path(1, "my.nested", "element type"), {Code::NestedArray});
         s.limits.max_depth = 2;
         return s;
       }},
      {Code::LimitExceeded, "StricterStringLimit",
       [] {
         const Written w =
             write(document({pair("my.text", Value::string("a value of more than 20 bytes"))}));
         Scenario s =
             at(w.bytes, w.layout.pairs[1].value_offset, kSizeWidth, kv_path(1, "my.text"));
         // Keys count too: "general.architecture" is exactly 20 bytes, allowed.
         s.limits.max_string_length = 20;
         return s;
       }},
      {Code::LimitExceeded, "StricterArrayLimit",
       [] {
         const Written w = write(
             document({pair("my.arr", Value::array(ValueType::Uint8,
                                                   {Value::u8(1), Value::u8(2), Value::u8(3)}))}));
         Scenario s = at(w.bytes, w.layout.pairs[1].value_offset + 4, kSizeWidth,
                         kv_path(1, "my.arr", "count"));
         s.limits.max_array_length = 2;
         return s;
       }},
      {Code::LimitExceeded, "StricterKvCountLimit",
       [] {
         Scenario s = at(write_bytes(document({pair("my.n", Value::u8(1))})), 16, kSizeWidth,
                         "header.kv_count");
         s.limits.max_kv_count = 1;
         return s;
       }},
      {Code::StageNotRun, "BigEndianDataWithTheDataCheck",
       [] {
         Scenario s = at(example(Code::StageNotRun).bytes, 0, 0, "data", {Code::ByteSwappedFile});
         s.data = true;
         s.message_has = "big-endian";
         return s;
       }},
      {Code::LimitExceeded, "StricterTensorCountLimit",
       [] {
         Scenario s = at(write_bytes(document({}, {tensor("w", {4})})), 8, kSizeWidth,
                         "header.tensor_count");
         s.limits.max_tensor_count = 0;
         return s;
       }},

      // --- GGUF1xxx: header ---------------------------------------------------------------------
      {Code::TruncatedHeader, "23Bytes",
       [] { return at(example(Code::TruncatedHeader).bytes, 0, 23, "header"); }},
      {Code::TruncatedHeader, "OnlyMagic",
       [] { return at(truncated(write_bytes(Document{}), 4), 0, 4, "header"); }},
      {Code::TruncatedHeader, "Version1Of15Bytes",
       [] {
         Document doc;
         doc.version = 1;  // a 16-byte header
         return at(truncated(write_bytes(doc), 15), 0, 15, "header", {Code::ObsoleteVersion});
       }},
      {Code::BadMagic, "LegacyGgjt",
       [] {
         Scenario s = at(example(Code::BadMagic).bytes, 0, 4, "header.magic");
         s.message_has = ": this is a legacy GGJT file (pre-GGUF ggml format)";
         s.hint_has = "legacy ggml";
         return s;
       }},
      {Code::BadMagic, "NotGguf",
       [] {
         ByteVector bytes = write_bytes(minimal_document());
         std::memcpy(bytes.data(),
                     "\x7f"
                     "ELF",
                     4);  // no kind the identification knows
         Scenario s = at(bytes, 0, 4, "header.magic");
         s.hint_has = "this is not a GGUF file";
         return s;
       }},
      {Code::BadMagic, "ThreeBytesThatAreNotGguf",
       [] {
         // Shorter than the magic, but its bytes already differ from "GGUF": bad-magic, not
         // truncated-header (a prefix of "GGUF" is truncated: TruncatedHeader cases).
         Scenario s = at(ByteVector{'G', 'G', 'X'}, 0, 3, "header.magic");
         s.message_has = "magic is \"GGX\" (a 3-byte file), expected \"GGUF\"";
         return s;
       }},
      {Code::UnsupportedVersion, "Version4",
       [] { return at(example(Code::UnsupportedVersion).bytes, 4, 4, "header.version"); }},
      {Code::UnsupportedVersion, "Version0",
       [] {
         WriteOptions options;
         options.version_field = 0;
         return at(write_bytes(minimal_document(), options), 4, 4, "header.version");
       }},
      {Code::ObsoleteVersion, "Version1",
       [] { return at(example(Code::ObsoleteVersion).bytes, 4, 4, "header.version"); }},
      {Code::OldVersion, "Version2",
       [] { return at(example(Code::OldVersion).bytes, 4, 4, "header.version"); }},
      {Code::ByteSwappedFile, "BigEndian",
       [] { return at(example(Code::ByteSwappedFile).bytes, 4, 4, "header.version"); }},
      {Code::ImpossibleCount, "TensorCountNegative",
       [] {
         return at(example(Code::ImpossibleCount).bytes, 8, kSizeWidth, "header.tensor_count");
       }},
      {Code::ImpossibleCount, "KvCountNegative",
       [] {
         WriteOptions options;
         options.kv_count = 0xFFFFFFFFFFFFFFFFULL;
         return at(write_bytes(minimal_document(), options), 16, kSizeWidth, "header.kv_count");
       }},
      {Code::ImpossibleCount, "KvCountWraps",
       [] {  // threats.md A5: kv_count x record size wraps 64 bits
         WriteOptions options;
         options.kv_count = 0x055555555555555aULL;
         return at(write_bytes(minimal_document(), options), 16, kSizeWidth, "header.kv_count");
       }},
      {Code::ImpossibleCount, "TensorCountBeyondFile",
       [] {  // passes the header check (45 bytes after it) but nothing is left after the pair
         WriteOptions options;
         options.tensor_count = 1;
         return at(write_bytes(minimal_document(), options), 8, kSizeWidth, "header.tensor_count");
       }},

      // --- GGUF2xxx: metadata -------------------------------------------------------------------
      {Code::TruncatedMetadata, "InsideValue",
       [] {
         const Written w = example(Code::TruncatedMetadata);
         const std::uint64_t start = w.layout.pairs[1].offset;
         return at(w.bytes, start, w.bytes.size() - start, kv_path(1, "my.count"));
       }},
      {Code::TruncatedMetadata, "KvCountBeyondPairs",
       [] {  // threats.md A6: the file ends where kv[1] should start
         WriteOptions options;
         options.kv_count = 2;
         const ByteVector bytes = write_bytes(minimal_document(), options);
         return at(bytes, bytes.size(), 0, "kv[1]");
       }},
      {Code::TruncatedString, "Value",
       [] {
         const Written w = example(Code::TruncatedString);
         const std::uint64_t at_length = w.layout.pairs[1].value_offset;
         return at(w.bytes, at_length, w.bytes.size() - at_length, kv_path(1, "my.text"));
       }},
      {Code::TruncatedString, "Key",
       [] {
         const Written w = with_key_length(document({pair("my.text", Value::string("hello"))}), 1,
                                           0xFFFFFFFFFFFFFFFFULL);  // threats.md B1
         const std::uint64_t key = w.layout.pairs[1].key_offset;
         Scenario s = at(w.bytes, key, w.bytes.size() - key, "kv[1] key");
         s.also = {Code::StringTooLong};  // over ggml's limit too, which ggml checks first
         return s;
       }},
      {Code::TruncatedString, "TensorName",
       [] {
         const Written w = with_tensor_name_length(document({}, {tensor("w", {4})}), 0, 1000);
         const std::uint64_t name = w.layout.tensors[0].name_offset;
         return at(w.bytes, name, w.bytes.size() - name, "tensor[0] name");
       }},
      {Code::EmptyKey, "EmptyKey",
       [] {
         const Written w = example(Code::EmptyKey);
         return at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth, kv_path(1, "", "key"));
       }},
      {Code::DuplicateKey, "SameKeyTwice",
       [] {
         const Written w = example(Code::DuplicateKey);
         return at(w.bytes, w.layout.pairs[2].key_offset, kSizeWidth + 12,
                   kv_path(2, "general.name", "key"));
       }},
      {Code::InvalidKeyBytes, "ControlByte",
       [] {
         const Written w = example(Code::InvalidKeyBytes);
         return at(w.bytes, w.layout.pairs[1].key_offset + kSizeWidth + 2, 1,
                   kv_path(1, "my\\x01key", "key"));
       }},
      {Code::InvalidKeyBytes, "NonAscii",
       [] {
         const Written w = write(document({pair("my.k\xc3\xa9y", Value::u8(1))}));
         return at(w.bytes, w.layout.pairs[1].key_offset + kSizeWidth + 4, 1,
                   kv_path(1, "my.k\\xc3\\xa9y", "key"));
       }},
      {Code::UnconventionalKey, "UpperCase",
       [] {
         const Written w = example(Code::UnconventionalKey);
         return at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth + 6,
                   kv_path(1, "my.Key", "key"));
       }},
      {Code::UnconventionalKey, "EmptySegment",
       [] {
         const Written w = write(document({pair("my..key", Value::u8(1))}));
         return at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth + 7,
                   kv_path(1, "my..key", "key"));
       }},
      {Code::KeyTooLong, "65536Bytes",
       [] {
         const Written w = example(Code::KeyTooLong);
         return at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth + 65536,
                   kv_path(1, std::string(80, 'a') + "...(65536 bytes)", "key"));
       }},
      {Code::UnknownValueType, "Type13",
       [] {
         const Written w = example(Code::UnknownValueType);
         return at(w.bytes, w.layout.pairs[1].type_offset, 4, kv_path(1, "my.key", "type"));
       }},
      {Code::UnknownValueType, "TypeFfffffff",
       [] {  // threats.md C1
         const Written w = write(document({pair("my.key", Value::u8(1), 0xFFFFFFFFu)}));
         return at(w.bytes, w.layout.pairs[1].type_offset, 4, kv_path(1, "my.key", "type"));
       }},
      {Code::UnknownArrayType, "ElementType13",
       [] {
         const Written w = example(Code::UnknownArrayType);
         return at(w.bytes, w.layout.pairs[1].value_offset, 4,
                   kv_path(1, "my.arr", "element type"));
       }},
      {Code::NestedArray, "ArrayOfArrays",
       [] {
         const Written w = example(Code::NestedArray);
         return at(w.bytes, w.layout.pairs[1].value_offset, 4,
                   kv_path(1, "my.nested", "element type"));
       }},
      {Code::ImpossibleArrayCount, "CountBeyondFile",
       [] {
         const Written w = example(Code::ImpossibleArrayCount);
         return at(w.bytes, w.layout.pairs[1].value_offset + 4, kSizeWidth,
                   kv_path(1, "my.list", "count"));
       }},
      {Code::ImpossibleArrayCount, "StringCountWraps",
       [] {  // threats.md C4: count x 16 wraps 64 bits
         const Written w = with_array_count(
             document({pair("my.arr", Value::array(ValueType::String, {Value::string("a")}))}), 1,
             0x1000000000000001ULL);
         const std::uint64_t count = w.layout.pairs[1].value_offset + 4;
         Scenario s = at(w.bytes, count, kSizeWidth, kv_path(1, "my.arr", "count"));
         s.also = {Code::ArrayTooLong};  // over ggml's limit too, which ggml checks first
         return s;
       }},
      {Code::NonCanonicalBool, "Scalar",
       [] {
         const Written w = example(Code::NonCanonicalBool);
         return at(w.bytes, w.layout.pairs[1].value_offset, 1, kv_path(1, "my.flag"));
       }},
      {Code::NonCanonicalBool, "InArray",
       [] {
         const Written w = write(document(
             {pair("my.flags",
                   Value::array(ValueType::Bool, {Value::boolean(false), Value::boolean(true),
                                                  Value::bool_byte(7), Value::bool_byte(9)}))}));
         return at(w.bytes, w.layout.pairs[1].value_offset + kArrayHeader + 2, 1,
                   kv_path(1, "my.flags") + "[2]");
       }},
      {Code::InvalidUtf8, "Value",
       [] {
         const Written w = example(Code::InvalidUtf8);
         return at(w.bytes, w.layout.pairs[1].value_offset, kSizeWidth + 3, kv_path(1, "my.text"));
       }},
      {Code::InvalidUtf8, "InStringArray",
       [] {
         const Written w = write(document(
             {pair("my.list", Value::array(ValueType::String,
                                           {Value::string("ok"), Value::string("b\xc0")}))}));
         return at(w.bytes, w.layout.pairs[1].value_offset + kArrayHeader + kSizeWidth + 2,
                   kSizeWidth + 2, kv_path(1, "my.list") + "[1]");
       }},
      {Code::StringTooLong, "Over1GiB",
       [] {
         const std::uint64_t length = kReferenceStringLimit + 1;
         Scenario s = huge_value(Value::string(""), 0, length, 'a', 0, kSizeWidth + length,
                                 kv_path(1, "my.big"));
         s.message_has = "string of 1073741825 bytes";
         return s;
       }},
      {Code::StringTooLong, "DeclaredPastTheEndOfTheFile",
       [] {  // ggml checks the limit before the bytes left, so a small file triggers it
         const Written w = example(Code::StringTooLong);
         Scenario s =
             at(w.bytes, w.layout.pairs[1].value_offset, kSizeWidth, kv_path(1, "my.text"));
         s.also = {Code::TruncatedString};
         s.message_has = "string length 1073741825 exceeds the reference limit of 1 GiB";
         return s;
       }},
      {Code::ArrayTooLong, "DeclaredPastTheEndOfTheFile",
       [] {
         const Written w = example(Code::ArrayTooLong);
         Scenario s = at(w.bytes, w.layout.pairs[1].value_offset + 4, kSizeWidth,
                         kv_path(1, "my.list", "count"));
         s.also = {Code::ImpossibleArrayCount};
         return s;
       }},
      {Code::ArrayTooLong, "Over2Pow30Elements",
       [] {
         return huge_value(Value::array(ValueType::Uint8, {}), 4, kReferenceArrayLimit + 1, 0, 4,
                           kSizeWidth, kv_path(1, "my.big", "count"));
       }},
      {Code::NulInString, "Value",
       [] {
         const Written w = example(Code::NulInString);
         return at(w.bytes, w.layout.pairs[1].value_offset, kSizeWidth + 4, kv_path(1, "my.text"));
       }},

      // --- GGUF3xxx: tensor infos ---------------------------------------------------------------
      {Code::TruncatedTensorInfo, "InsideOffset",
       [] {
         const Written w = example(Code::TruncatedTensorInfo);
         const std::uint64_t start = w.layout.tensors[0].name_offset;
         return at(w.bytes, start, w.bytes.size() - start, tensor_path(0, "w"));
       }},
      {Code::TensorNameTooLong, "65Bytes",
       [] {
         const Written w = example(Code::TensorNameTooLong);
         return at(w.bytes, w.layout.tensors[0].name_offset, kSizeWidth + 65,
                   tensor_path(0, std::string(65, 'a'), "name"));
       }},
      {Code::EmptyTensorName, "Empty",
       [] {
         const Written w = example(Code::EmptyTensorName);
         return at(w.bytes, w.layout.tensors[0].name_offset, kSizeWidth,
                   tensor_path(0, "", "name"));
       }},
      {Code::DuplicateTensorName, "SameNameTwice",
       [] {
         const Written w = example(Code::DuplicateTensorName);
         return at(w.bytes, w.layout.tensors[1].name_offset, kSizeWidth + 1,
                   tensor_path(1, "w", "name"));
       }},
      {Code::DuplicateTensorName, "EqualUpToNul",
       [] {  // ggml stores names as C strings: a\0b and a\0c are one tensor there
         const Written w = write(document(
             {}, {tensor(std::string("a\0b", 3), {4}), tensor(std::string("a\0c", 3), {4})}));
         return at(w.bytes, w.layout.tensors[1].name_offset, kSizeWidth + 3,
                   tensor_path(1, "a\\x00c", "name"),
                   {Code::InvalidTensorNameBytes, Code::InvalidTensorNameBytes});
       }},
      {Code::InvalidTensorNameBytes, "ControlByte",
       [] {
         const Written w = example(Code::InvalidTensorNameBytes);
         return at(w.bytes, w.layout.tensors[0].name_offset + kSizeWidth + 1, 1,
                   tensor_path(0, "w\\x01", "name"));
       }},
      {Code::InvalidTensorNameBytes, "InvalidUtf8",
       [] {
         const Written w = write(document({}, {tensor("w\xff", {4})}));
         return at(w.bytes, w.layout.tensors[0].name_offset + kSizeWidth + 1, 1,
                   tensor_path(0, "w\\xff", "name"));
       }},
      {Code::TooManyDims, "FiveDims",
       [] {
         const Written w = example(Code::TooManyDims);
         return at(w.bytes, w.layout.tensors[0].n_dims_offset, 4, tensor_path(0, "w", "n_dims"));
       }},
      {Code::NegativeDim, "Dim1Is2Pow63",
       [] {
         const Written w = example(Code::NegativeDim);
         return at(w.bytes, w.layout.tensors[0].dims_offset + kSizeWidth, kSizeWidth,
                   tensor_path(0, "w", "dims[1]"));
       }},
      {Code::ZeroDim, "Dim1IsZero",
       [] {
         const Written w = example(Code::ZeroDim);
         return at(w.bytes, w.layout.tensors[0].dims_offset + kSizeWidth, kSizeWidth,
                   tensor_path(0, "w", "dims[1]"));
       }},
      {Code::ZeroDim, "Dim0IsZero",
       [] {
         const Written w = write(document({}, {tensor("w", {0})}));
         return at(w.bytes, w.layout.tensors[0].dims_offset, kSizeWidth,
                   tensor_path(0, "w", "dims[0]"));
       }},
      {Code::ElementCountOverflow, "ProductWrapsToZero",
       [] {  // gguf-format.md: the newest reference reader takes [2^32, 2^32] as empty
         const Written w = example(Code::ElementCountOverflow);
         return at(w.bytes, w.layout.tensors[0].dims_offset, 2 * kSizeWidth,
                   tensor_path(0, "w", "dims"));
       }},
      {Code::UnknownTensorType, "Type43",
       [] {
         const Written w = example(Code::UnknownTensorType);
         return at(w.bytes, w.layout.tensors[0].type_offset, 4, tensor_path(0, "w", "type"));
       }},
      {Code::RemovedTensorType, "Type4",
       [] {
         const Written w = example(Code::RemovedTensorType);
         return at(w.bytes, w.layout.tensors[0].type_offset, 4, tensor_path(0, "w", "type"));
       }},
      {Code::RowNotBlockMultiple, "Q8_0RowOf16",
       [] {
         const Written w = example(Code::RowNotBlockMultiple);
         return at(w.bytes, w.layout.tensors[0].dims_offset, kSizeWidth,
                   tensor_path(0, "w", "dims[0]"));
       }},
      {Code::ByteSizeOverflow, "ByteSize",
       [] {  // 2^62 elements fit in 63 bits; 2^62 x 4 bytes does not fit in 64
         const Written w = example(Code::ByteSizeOverflow);
         return at(w.bytes, w.layout.tensors[0].dims_offset, kSizeWidth,
                   tensor_path(0, "w", "dims"));
       }},
      {Code::ByteSizeOverflow, "PaddedSize",
       [] {  // 8 x (2^61 - 1) = 2^64 - 8 bytes fits; padded to 32 it does not
         const Written w = write(document({}, {tensor("w", {(1ULL << 61) - 1}, kF64)}));
         return at(w.bytes, w.layout.tensors[0].dims_offset, kSizeWidth,
                   tensor_path(0, "w", "dims"));
       }},
      {Code::ByteSizeOverflow, "OffsetPlusSize",
       [] {  // CVE-2025-53630: offset + padded size wraps
         const Written w = write(document({}, {tensor("w", {8}, kF32, 0ULL - 32)}));
         return at(w.bytes, w.layout.tensors[0].offset_offset, 8, tensor_path(0, "w", "offset"),
                   {Code::NonContiguousLayout, Code::TensorOutOfBounds});
       }},
      {Code::NewTensorType, "Mxfp4",
       [] {
         const Written w = example(Code::NewTensorType);
         return at(w.bytes, w.layout.tensors[0].type_offset, 4, tensor_path(0, "w", "type"));
       }},
      {Code::ScalarTensor, "NDims0",
       [] {
         const Written w = example(Code::ScalarTensor);
         return at(w.bytes, w.layout.tensors[0].n_dims_offset, 4, tensor_path(0, "w", "n_dims"));
       }},

      // --- GGUF4xxx: data layout ----------------------------------------------------------------
      {Code::MisalignedOffset, "Offset8",
       [] {  // a misaligned offset cannot be the running sum of padded sizes: 4004 comes along
         const Written w = example(Code::MisalignedOffset);
         return at(w.bytes, w.layout.tensors[0].offset_offset, 8, tensor_path(0, "w", "offset"),
                   {Code::NonContiguousLayout});
       }},
      {Code::OverlappingTensors, "SecondStartsInsideFirst",
       [] {  // a: [0, 64), b: [32, 96); the file holds 96 data bytes
         const Written w = example(Code::OverlappingTensors);
         return at(w.bytes, w.layout.tensors[1].offset_offset, 8, tensor_path(1, "b", "offset"),
                   {Code::NonContiguousLayout});
       }},
      {Code::TensorOutOfBounds, "DataShort",
       [] {  // 64 bytes claimed, 32 present
         const Written w = example(Code::TensorOutOfBounds);
         return at(w.bytes, w.layout.tensors[0].offset_offset, 8, tensor_path(0, "w", "offset"));
       }},
      {Code::NonContiguousLayout, "Gap",
       [] {  // a: [0, 32), b: [64, 96): a gap of one alignment unit
         const Written w = example(Code::NonContiguousLayout);
         return at(w.bytes, w.layout.tensors[1].offset_offset, 8, tensor_path(1, "b", "offset"));
       }},
      {Code::NonContiguousLayout, "Reordered",
       [] {  // b's data before a's: both offsets are wrong for ggml
         const Written w =
             write(document({}, {tensor("a", {8}, kF32, 32), tensor("b", {8}, kF32, 0)}));
         return at(w.bytes, w.layout.tensors[0].offset_offset, 8, tensor_path(0, "a", "offset"),
                   {Code::NonContiguousLayout});
       }},
      {Code::NonzeroPadding, "BeforeData",
       [] {
         const Written w = example(Code::NonzeroPadding);
         const WrittenLayout& l = w.layout;
         return at(w.bytes, l.infos_end + 1, l.data_start - l.infos_end - 1, "padding");
       }},
      {Code::NonzeroPadding, "AfterTensor",
       [] {
         Written w = write(document({}, {tensor("w", {4})}));
         const std::uint64_t pad = w.layout.data_start + 16;
         w.bytes.at(pad + 3) = 0x01;
         return at(w.bytes, pad + 3, 32 - 16 - 3, tensor_path(0, "w", "padding"));
       }},
      {Code::TruncatedBeforeData, "EndsInPadding",
       [] {
         const Written w = example(Code::TruncatedBeforeData);
         return at(w.bytes, w.layout.infos_end, 1, "padding");
       }},
      {Code::MissingFinalPadding, "LastTensorUnpadded",
       [] {
         const Written w = example(Code::MissingFinalPadding);
         return at(w.bytes, w.layout.data_start + 16, 0, "padding");
       }},
      {Code::TrailingBytes, "AfterTensorData",
       [] {
         const Written w = example(Code::TrailingBytes);
         return at(w.bytes, w.layout.data_start + 32, 3, "trailing");
       }},
      {Code::TrailingBytes, "NoTensors",
       [] {  // padded like ggml's C writer, then 3 more bytes
         WriteOptions options;
         options.pad_when_no_tensors = true;
         options.trailing = {1, 2, 3};
         const Written w = write(minimal_document(), options);
         return at(w.bytes, w.layout.data_start, 3, "trailing");
       }},

      // --- GGUF5xxx: standard keys --------------------------------------------------------------
      {Code::AlignmentWrongType, "Uint64",
       [] {
         const Written w = example(Code::AlignmentWrongType);
         return at(w.bytes, w.layout.pairs[1].type_offset, 4,
                   kv_path(1, "general.alignment", "type"));
       }},
      {Code::AlignmentZero, "Zero",
       [] {
         const Written w = example(Code::AlignmentZero);
         return at(w.bytes, w.layout.pairs[1].value_offset, 4, kv_path(1, "general.alignment"));
       }},
      {Code::AlignmentNotPowerOfTwo, "24",
       [] {
         const Written w = example(Code::AlignmentNotPowerOfTwo);
         return at(w.bytes, w.layout.pairs[1].value_offset, 4, kv_path(1, "general.alignment"));
       }},
      {Code::AlignmentNotMultipleOf8, "4",
       [] {
         const Written w = example(Code::AlignmentNotMultipleOf8);
         return at(w.bytes, w.layout.pairs[1].value_offset, 4, kv_path(1, "general.alignment"));
       }},
      {Code::AlignmentTooLarge, "131072",
       [] {
         const Written w = example(Code::AlignmentTooLarge);
         return at(w.bytes, w.layout.pairs[1].value_offset, 4, kv_path(1, "general.alignment"));
       }},
      {Code::MissingArchitecture, "NoMetadata",
       [] { return at(example(Code::MissingArchitecture).bytes, 0, 24, "metadata"); }},
      {Code::MissingQuantizationVersion, "Q8_0",
       [] {
         const Written w = example(Code::MissingQuantizationVersion);
         return at(w.bytes, w.layout.tensors[0].type_offset, 4, tensor_path(0, "w", "type"));
       }},
      {Code::KeyWrongType, "GeneralNameUint32",
       [] {
         const Written w = example(Code::KeyWrongType);
         return at(w.bytes, w.layout.pairs[1].type_offset, 4, kv_path(1, "general.name", "type"));
       }},
      {Code::KeyWrongType, "ScoresInt32",
       [] {
         const Written w = write(document(
             {pair("tokenizer.ggml.scores", Value::array(ValueType::Int32, {Value::i32(0)}))}));
         return at(w.bytes, w.layout.pairs[1].type_offset, 4,
                   kv_path(1, "tokenizer.ggml.scores", "type"));
       }},
      {Code::KeyWrongType, "ContextLengthString",
       [] {  // {arch}.context_length with general.architecture = "llama"
         const Written w = write(document({pair("llama.context_length", Value::string("4096"))}));
         return at(w.bytes, w.layout.pairs[1].type_offset, 4,
                   kv_path(1, "llama.context_length", "type"));
       }},
      {Code::TokenizerLengthMismatch, "ScoresShorter",
       [] {
         const Written w = example(Code::TokenizerLengthMismatch);
         return at(w.bytes, w.layout.pairs[2].value_offset + 4, kSizeWidth,
                   kv_path(2, "tokenizer.ggml.scores", "count"));
       }},
      {Code::TokenizerLengthMismatch, "TokenTypeLonger",
       [] {
         const Written w = write(document(
             {pair("tokenizer.ggml.tokens", Value::array(ValueType::String, {Value::string("a")})),
              pair("tokenizer.ggml.token_type",
                   Value::array(ValueType::Int32, {Value::i32(1), Value::i32(1)}))}));
         return at(w.bytes, w.layout.pairs[2].value_offset + 4, kSizeWidth,
                   kv_path(2, "tokenizer.ggml.token_type", "count"));
       }},
      {Code::TokenIdOutOfRange, "BosIdEqualsVocabSize",
       [] {
         const Written w = example(Code::TokenIdOutOfRange);
         return at(w.bytes, w.layout.pairs[2].value_offset, 4,
                   kv_path(2, "tokenizer.ggml.bos_token_id"));
       }},
      // Tensor data: the first bad value's bytes (element 1 of 8; block 1's dmin; d[2]), or the
      // whole tensor (q8_1, all zeros).
      {Code::NonFiniteElement, "F16NanAndInf",
       [] { return data_case(Code::NonFiniteElement, 2, 2, "2 NaN, 1 infinite"); }},
      {Code::NonFiniteScale, "Q4KNanDmin",
       [] { return data_case(Code::NonFiniteScale, 144 + 2, 2, "block 1, dmin"); }},
      {Code::UncheckableTensorType, "Q8_1",
       [] { return data_case(Code::UncheckableTensorType, 0, 36, "type Q8_1"); }},
      {Code::AmbiguousNvfp4Scale, "Nvfp4Scale7F",
       [] { return data_case(Code::AmbiguousNvfp4Scale, 2, 1, "d[2]", {Code::NewTensorType}); }},
      {Code::AllZeroTensor, "F32Zeros",
       [] { return data_case(Code::AllZeroTensor, 0, 16, "16 bytes"); }},
      {Code::UnknownArchitecture, "Lama",
       [] { return model_pair_case(Code::UnknownArchitecture, "general.architecture"); }},
      {Code::MissingModelKey, "ContextLength",
       [] { return model_case(Code::MissingModelKey, "metadata"); }},
      {Code::ModelKeyWrongType, "BlockCountU64",
       [] { return model_pair_case(Code::ModelKeyWrongType, "llama.block_count"); }},
      {Code::LayerArrayLength, "HeadCountOfTwoForOneBlock",
       [] { return model_pair_case(Code::LayerArrayLength, "llama.attention.head_count"); }},
      {Code::ModelValueOutOfRange, "UnknownRopeScaling",
       [] { return model_case(Code::ModelValueOutOfRange, "metadata"); }},
      {Code::UnknownTokenizerModel, "Sentencepiece",
       [] { return model_pair_case(Code::UnknownTokenizerModel, "tokenizer.ggml.model"); }},
      {Code::UnknownPreTokenizer, "Qwen25ForGpt2",
       [] {
         const Written w = example(Code::UnknownPreTokenizer);
         const std::size_t i = w.layout.pairs.size() - 1;  // tokenizer.ggml.pre, added last
         const WrittenPair& p = w.layout.pairs[i];
         return at(w.bytes, p.offset, p.end - p.offset, kv_path(i, "tokenizer.ggml.pre"));
       }},
      {Code::MissingMerges, "Gpt2WithoutMerges",
       [] { return model_case(Code::MissingMerges, "metadata"); }},
      {Code::VocabularyUnreadable, "ByteTokenA",
       [] { return vocab_token_case(Code::VocabularyUnreadable, 1); }},
      {Code::DuplicateToken, "SecondS", [] { return vocab_token_case(Code::DuplicateToken, 3); }},
      {Code::MissingTensor, "AttnK",
       [] {
         const Written w = example(Code::MissingTensor);
         return at(w.bytes, w.layout.tensors[0].offset, 0, "tensors");
       }},
      {Code::TensorWrongShape, "AttnK64x32",
       [] { return model_tensor_case(Code::TensorWrongShape, "blk.0.attn_k.weight"); }},
      {Code::UnexpectedTensor, "SecondBlock",
       [] { return model_tensor_case(Code::UnexpectedTensor, "blk.1.attn_q.weight"); }},
      {Code::SlowReferenceLoad, "ThirtyOneThousandKeys",
       [] {
         const Written w = example(Code::SlowReferenceLoad);
         return at(w.bytes, 0, 24, "header");
       }},
      {Code::LoaderNotPredicted, "Gemma4vProjector",
       [] {
         Scenario s = model_case(Code::LoaderNotPredicted, "model");
         s.message_has = "projector type gemma4v";
         return s;
       }},
      {Code::AdapterKeyInvalid, "AlphaU32",
       [] { return example_pair_case(Code::AdapterKeyInvalid, 3, "adapter.lora.alpha"); }},
      {Code::AdapterTensorInvalid, "AttnQWithoutLoraB",
       [] {
         Scenario s =
             example_tensor_case(Code::AdapterTensorInvalid, 2, "blk.0.attn_q.weight.lora_a");
         s.message_has = "no lora_b";
         return s;
       }},
      {Code::AdapterBaseMismatch, "FfnUpLoraB",
       [] {
         Scenario s =
             example_tensor_case(Code::AdapterBaseMismatch, 12, "blk.0.ffn_up.weight.lora_a");
         s.base = testing::code_example(Code::AdapterBaseMismatch).base;
         s.message_has = "[64, 128]";
         return s;
       }},
      {Code::AdapterBaseNotGiven, "Alone",
       [] { return model_case(Code::AdapterBaseNotGiven, "model"); }},
      {Code::AdapterBaseUnusable, "BaseWithoutAttnK",
       [] {
         Scenario s = model_case(Code::AdapterBaseUnusable, "model");
         s.base = testing::code_example(Code::AdapterBaseUnusable).base;
         s.message_has = "GGUF7011";
         return s;
       }},
      {Code::MmprojKeyInvalid, "ProjectorMlp2",
       [] { return example_pair_case(Code::MmprojKeyInvalid, 3, "clip.projector_type"); }},
      {Code::ImatrixInvalid, "AttnQWithoutCounts",
       [] {
         Scenario s = example_tensor_case(Code::ImatrixInvalid, 0, "blk.0.attn_q.weight.in_sum2");
         s.also = {Code::MissingArchitecture};
         return s;
       }},
      {Code::UnknownFileKind, "Checkpoint",
       [] {
         const Written w = example(Code::UnknownFileKind);
         const std::size_t i = w.layout.pairs.size() - 1;  // general.type, added last
         const WrittenPair& p = w.layout.pairs[i];
         return at(w.bytes, p.offset, p.end - p.offset, kv_path(i, "general.type"));
       }},

      // --- GGUF8xxx: split sets (several files: validate_set) ---------------------------------
      {Code::SplitShardMissing, "MiddleShardNotThere",
       [] {
         return set_case(testing::example_set(Code::SplitShardMissing), 0, 0, 0, "split set",
                         "shard 2 of 3 is not there");
       }},
      {Code::SplitKeyMissing, "SecondShardWithoutSplitNo",
       [] {
         return set_case(testing::example_set(Code::SplitKeyMissing), 1, 0, 0, "metadata",
                         "no split.no");
       }},
      {Code::SplitKeyWrongType, "U32SplitCountAlone",
       [] {
         const Written w = example(Code::SplitKeyWrongType);
         const std::size_t kv = w.layout.pairs.size() - 1;
         return set_case({{"model.gguf", w, {}}}, 0, w.layout.pairs[kv].type_offset, 4,
                         kv_path(kv, "split.count", "type"), "llama.cpp refuses the file",
                         {Code::KeyWrongType});
       }},
      {Code::SplitKeyWrongType, "U32SplitNoInShardTwo",
       [] {
         std::vector<Document> shards = testing::model_shards(3);
         for (KeyValue& kv : shards[1].metadata) {
           if (kv.key == "split.no") kv.value = Value::u32(1);
         }
         std::vector<testing::ExampleFile> files;
         for (std::size_t k = 0; k < shards.size(); ++k) {
           files.push_back(
               {"model-0000" + std::to_string(k + 1) + "-of-00003.gguf", write(shards[k]), {}});
         }
         const std::uint64_t offset = files[1].written.layout.pairs[0].type_offset;
         return set_case(std::move(files), 1, offset, 4, kv_path(0, "split.no", "type"),
                         "llama.cpp aborts", {Code::KeyWrongType});
       }},
      {Code::SplitShardMisnumbered, "SecondShardSaysTwo",
       [] {
         std::vector<testing::ExampleFile> files =
             testing::example_set(Code::SplitShardMisnumbered);
         const std::uint64_t offset = files[1].written.layout.pairs[0].value_offset;
         return set_case(std::move(files), 1, offset, 2, kv_path(0, "split.no"),
                         "split.no is 2 but this is shard 2 of 2");
       }},
      {Code::SplitDuplicateTensor, "OutputNormInBothShards",
       [] {
         std::vector<testing::ExampleFile> files = testing::example_set(Code::SplitDuplicateTensor);
         const WrittenLayout& layout = files[1].written.layout;
         const std::size_t i = layout.tensors.size() - 1;
         const std::uint64_t offset = layout.tensors[i].offset;
         return set_case(std::move(files), 1, offset, layout.infos_end - offset,
                         tensor_path(i, "output_norm.weight"), "also in");
       }},
      {Code::SplitTensorCountMismatch, "OneMoreThanTheShardsHold",
       [] {
         const std::size_t tensors = model_document().tensors.size();
         std::vector<testing::ExampleFile> files =
             testing::example_set(Code::SplitTensorCountMismatch);
         const std::size_t kv = files[0].written.layout.pairs.size() - 1;
         const std::uint64_t offset = files[0].written.layout.pairs[kv].value_offset;
         return set_case(std::move(files), 0, offset, 4, kv_path(kv, "split.tensors.count"),
                         "split.tensors.count is " + std::to_string(tensors + 1) +
                             " but the 2 shards hold " + std::to_string(tensors) + " tensors");
       }},
      {Code::SplitFileName, "FirstShardNamedOutsideThePattern",
       [] {
         return set_case({{"model.gguf", example(Code::SplitFileName), {}}}, 0, 0, 0, "file name",
                         "-00001-of-00002.gguf");
       }},

      // --- GGUF9001-9016: chat templates (kv[1] tokenizer.chat_template) ------------------------
      {Code::TemplateSyntaxError, "PowerOperator",
       [] { return template_case(Code::TemplateSyntaxError, "** 8", 1, "operator '**'"); }},
      {Code::TemplatePrivateAttribute, "DunderLen",
       [] { return template_case(Code::TemplatePrivateAttribute, "__len__", 7); }},
      {Code::TemplateBuiltAttributeName, "ConcatenatedKey",
       [] { return template_case(Code::TemplateBuiltAttributeName, "['con'", 1, "('content')"); }},
      {Code::TemplateCodeExecution, "JoinerToPopen",
       [] { return template_case(Code::TemplateCodeExecution, "joiner", 6, "'joiner'"); }},
      {Code::TemplateInclude, "IncludeStatement",
       [] { return template_case(Code::TemplateInclude, "{% include", 2, "'include'"); }},
      {Code::TemplateUnboundedRange, "BillionIterations",
       [] { return template_case(Code::TemplateUnboundedRange, "range(", 5); }},
      {Code::TemplateRecursiveMacro, "CountsForever",
       [] { return template_case(Code::TemplateRecursiveMacro, "count(n + 1)", 5, "'count'"); }},
      {Code::TemplateTooDeep, "ThreeHundredParentheses",
       [] {
         // Where the reader passed its bound: the first parenthesis past 256 levels.
         const Written w = example(Code::TemplateTooDeep);
         const std::string text(
             reinterpret_cast<const char*>(w.bytes.data()) + w.layout.pairs[1].value_offset +
                 kSizeWidth,
             w.layout.pairs[1].end - w.layout.pairs[1].value_offset - kSizeWidth);
         const auto deep = detail::jinja::parse(text).too_deep;
         if (!deep) ADD_FAILURE() << "the example is not too deep for the reader";
         return at(w.bytes, w.layout.pairs[1].value_offset + kSizeWidth + deep.value_or(0), 1,
                   kv_path(1, "tokenizer.chat_template"));
       }},
      {Code::TemplateHiddenText, "RecommendsACompany",
       [] {
         return template_case(Code::TemplateHiddenText, "Always recommend", 1, "words of prose");
       }},
      {Code::TemplateContentBranch, "BitcoinTrigger",
       [] {
         return template_case(Code::TemplateContentBranch, "{% if 'bitcoin'", 2, "\"bitcoin\"");
       }},
      {Code::TemplateUrl, "UrlInComment",
       [] { return template_case(Code::TemplateUrl, "https://", 1, "example.org/collect"); }},
      {Code::TemplateBase64Blob, "EightyCharacters",
       [] { return template_case(Code::TemplateBase64Blob, "SWdub3", 80, "80 characters"); }},
      {Code::InvisibleCharacters, "ZeroWidthSpace",
       [] { return template_case(Code::InvisibleCharacters, "\u200b", 1, "U+200B"); }},
      {Code::TemplateConfusableToken, "CyrillicA",
       [] { return template_case(Code::TemplateConfusableToken, "\u0430ssistant", 10); }},
      {Code::KnownTemplate, "Gemma2",
       [] { return whole_template_case(Code::KnownTemplate, "google-gemma-2-2b-it"); }},
      {Code::NearKnownTemplate, "EditedQwen25",
       [] { return whole_template_case(Code::NearKnownTemplate, "Qwen-Qwen2.5-7B-Instruct"); }},
      // --- GGUF95xx: what other parsers read differently ----------------------------------------
      {Code::HeaderFieldKey, "Version",
       [] {
         const Written w = example(Code::HeaderFieldKey);
         Scenario s = at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth + 7,
                         kv_path(1, "version", "key"));
         s.message_has = "@huggingface/gguf reads its value as the file's version";
         return s;
       }},
      {Code::PrototypeKey, "Proto",
       [] {
         const Written w = example(Code::PrototypeKey);
         return at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth + 9,
                   kv_path(1, "__proto__", "key"));
       }},
      {Code::PrototypeKey, "DottedSegment",
       [] {
         const Written w = write(document({pair("a.__proto__.b", Value::string("x"))}));
         Scenario s = at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth + 13,
                         kv_path(1, "a.__proto__.b", "key"));
         s.message_has = "node-llama-cpp";
         return s;
       }},
      {Code::KeyPrefixConflict, "GeneralBesideGeneralArchitecture",
       [] {
         const Written w = example(Code::KeyPrefixConflict);
         Scenario s = at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth + 7,
                         kv_path(1, "general", "key"));
         s.message_has = "is the dotted prefix of kv[0] \"general.architecture\"";
         return s;
       }},
      {Code::KeyPrefixConflict, "PrefixBeforeTheLongerKey",
       [] {
         const Written w = write(document(
             {pair("a.b", Value::u8(1)), pair("a.b.c", Value::u8(2)), pair("a.bc", Value::u8(3))}));
         // "a.b" is the prefix of "a.b.c" (reported once), not of "a.bc"; "a" is no key.
         return at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth + 3, kv_path(1, "a.b", "key"));
       }},
      {Code::ReservedGgufKey, "GgufVersion",
       [] {
         const Written w = example(Code::ReservedGgufKey);
         return at(w.bytes, w.layout.pairs[1].key_offset, kSizeWidth + 12,
                   kv_path(1, "GGUF.version", "key"), {Code::UnconventionalKey});
       }},
      {Code::LeadingByteOrderMark, "TensorName",
       [] {
         const Written w = example(Code::LeadingByteOrderMark);
         Scenario s = at(w.bytes, w.layout.tensors[0].name_offset, kSizeWidth + 4,
                         tensor_path(0, "\\xef\\xbb\\xbfw", "name"));
         s.message_has = "@huggingface/gguf reads \"w\"";
         return s;
       }},
      {Code::LeadingByteOrderMark, "StringValue",
       [] {
         const Written w = write(document({pair("general.name", Value::string("\xef\xbb\xbfm"))}));
         return at(w.bytes, w.layout.pairs[1].value_offset, kSizeWidth + 4,
                   kv_path(1, "general.name"));
       }},
      {Code::NulInArchitecture, "LlamaNulEvil",
       [] {
         const Written w = example(Code::NulInArchitecture);
         Scenario s = at(w.bytes, w.layout.pairs[0].value_offset, kSizeWidth + 10,
                         kv_path(0, "general.architecture"), {Code::NulInString});
         s.message_has = "llama.cpp reads \"llama\"";
         return s;
       }},
      {Code::AlignmentBeyondInt32, "2Pow31",
       [] {
         const Written w = example(Code::AlignmentBeyondInt32);
         Scenario s =
             at(w.bytes, w.layout.pairs[1].value_offset, 4, kv_path(1, "general.alignment"),
                {Code::AlignmentTooLarge, Code::TruncatedBeforeData});
         s.message_has = "computes the tensor data offset as -2147483648, not 2147483648";
         return s;
       }},
      {Code::StringTruncatedByParsers, "TemplateOf2500000Bytes",
       [] {
         // Over 2 MB: no corpus file (docs/diagnostics/GGUF9508.md); built here.
         const Written w = write(document(
             {pair("tokenizer.chat_template", Value::string(std::string(2'500'000, 'x')))}));
         const std::uint64_t value = w.layout.pairs[1].value_offset;
         Scenario s =
             at(w.bytes, value, kSizeWidth + 2'500'000, kv_path(1, "tokenizer.chat_template"));
         s.message_has = "reads the first " + std::to_string(2'000'000 - value - kSizeWidth) +
                         " of the string's 2500000 bytes";
         return s;
       }},
      {Code::BeyondParserLimits, "ArrayOf1000001Elements",
       [] {
         Scenario s = huge_value(Value::array(ValueType::Uint8, {}), 4, 1'000'001, 0, 4, kSizeWidth,
                                 kv_path(1, "my.big"));
         s.message_has = "an array of 1000001 elements";
         return s;
       }},
  };
  // One case per kind of file that is not GGUF (not_gguf_samples() below).
  for (const NotGguf& sample : not_gguf_samples()) {
    cases.push_back({Code::BadMagic, sample.label, [sample] {
                       Scenario s =
                           at(sample.bytes, 0, std::min<std::uint64_t>(4, sample.bytes.size()),
                              "header.magic");
                       s.message_has = sample.message;
                       s.hint_has = sample.hint_has;
                       return s;
                     }});
  }
  return cases;
}

// --- running a case ----------------------------------------------------------------------------

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
    const Report report = run.run(profile);
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
struct WriterMistake {
  std::string_view code;
  std::string_view label;
  void (*apply)(WriteOptions&);
};

constexpr WriterMistake kWriterMistakes[] = {
    {"GGUF1901", "NulTerminatedStrings", [](WriteOptions& o) { o.nul_terminated_strings = true; }},
    {"GGUF1902", "HeaderAlignmentField", [](WriteOptions& o) { o.header_alignment_field = true; }},
    {"GGUF1903", "OffsetBeforeType", [](WriteOptions& o) { o.offset_before_type = true; }},
    {"GGUF1904", "V1FieldWidths", [](WriteOptions& o) { o.narrow_widths = true; }},
};

void PrintTo(const WriterMistake& m, std::ostream* out) {
  *out << m.code << "_" << m.label;
}

class CodeWriterDiagnosis : public ::testing::TestWithParam<WriterMistake> {};

TEST_P(CodeWriterDiagnosis, NotesTheWritersMistake) {
  const WriterMistake& mistake = GetParam();
  const std::optional<Code> code = find_code(mistake.code);
  ASSERT_TRUE(code.has_value()) << mistake.code << " " << mistake.label
                                << " is in design.md section 3 but not in catalogue.def";
  WriteOptions options;
  mistake.apply(options);
  const ByteVector bytes = write_bytes(model_document(), options);
  for (const Profile profile : kAllProfiles) {
    SCOPED_TRACE(std::string("profile ") + std::string(to_string(profile)));
    const Report report = check(bytes, profile);
    EXPECT_FALSE(report.passed()) << describe(report);  // it fails structurally
    const Finding* f = find(report, *code);
    ASSERT_NE(f, nullptr) << describe(report);
    EXPECT_EQ(to_string(f->severity), to_string(Severity::Note));
    expect_message_style(*f);
    for (const WriterMistake& other : kWriterMistakes) {  // only the right hypothesis parses
      const std::optional<Code> other_code = find_code(other.code);
      if (other.code != mistake.code && other_code) {
        EXPECT_EQ(find(report, *other_code), nullptr) << other.code << "\n" << describe(report);
      }
    }
  }
}

// The note is attached to the first error: at its offset and field, after it and the other
// findings at that offset, before anything further on; its hint is the fix.
TEST_P(CodeWriterDiagnosis, TheNoteFollowsTheFirstErrorAndSaysHowToFixTheWriter) {
  const WriterMistake& mistake = GetParam();
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
  EXPECT_EQ(code_string(note.code), mistake.code) << describe(report);
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
  for (const WriterMistake& m : kWriterMistakes) m.apply(options);
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

INSTANTIATE_TEST_SUITE_P(Codes, CodeWriterDiagnosis, ::testing::ValuesIn(kWriterMistakes),
                         [](const ::testing::TestParamInfo<WriterMistake>& param) {
                           return std::string(param.param.code) + "_" +
                                  std::string(param.param.label);
                         });

// --- the catalogue -----------------------------------------------------------------------------

TEST(CodeCatalogue, EveryCodeHasATestCase) {
  const std::vector<CodeCase> cases = code_cases();
  for (const CatalogueEntry& entry : catalogue()) {
    if (entry.retired()) continue;  // no file shows it
    const bool tested =
        std::any_of(cases.begin(), cases.end(),
                    [&](const CodeCase& c) { return c.code == entry.code; }) ||
        std::any_of(std::begin(kWriterMistakes), std::end(kWriterMistakes),
                    [&](const WriterMistake& m) { return m.code == code_string(entry.code); });
    EXPECT_TRUE(tested) << code_string(entry.code) << " " << entry.name
                        << " has no case in code_cases() (or kWriterMistakes) of test_codes.cpp";
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
