// Properties of the validator over generated files (RapidCheck; generators in
// support/generators.hpp). Each property is one RC_GTEST_PROP; a failing one prints its shrunk
// counterexample with the seed: rerun it with RC_PARAMS="seed=<seed>" (or the printed
// "reproduce=" string), run more cases with RC_PARAMS="max_success=10000". CI fixes the seed
// (scripts/test.sh); see docs/development.md.
//
// This program replaces the global operator new/delete with counting versions (as
// test_threats.cpp does) so that the memory property can measure the peak of the bytes that
// validate() allocates for a file whose header claims huge counts and sizes.
//
// Library bugs found by these properties are pinned as plain unit tests at the end, each named
// after the bug.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "code_table.hpp"
#include "counting_allocator.hpp"
#include "generators.hpp"
#include "ggufcheck/document.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "test_support.hpp"

// --- the counting allocator ----------------------------------------------------------------------
//
// support/counting_allocator.hpp (and .cpp, compiled into this program), shared with
// test_threats.cpp: PeakProbe measures the peak of live heap bytes.

namespace ggufcheck::testing {
namespace {

// --- running the validator -----------------------------------------------------------------------

Report run(const ByteVector& bytes, Profile profile, std::string path = "<buffer>") {
  Options options = container_options();
  options.profile = profile;
  return validate(Bytes(bytes.data(), bytes.size()), options, std::move(path));
}

std::string profile_name(Profile profile) {
  return std::string(to_string(profile));
}

// Every finding lies inside the file; the counts agree with the findings.
void assert_well_formed(const Report& report, std::uint64_t size) {
  RC_ASSERT(report.facts.file_size == size);
  std::size_t errors = 0, warnings = 0, notes = 0;
  for (const Finding& f : report.findings) {
    if (f.offset > size || f.length > size - f.offset) {
      RC_FAIL(code_string(f.code) + " " + f.path + " at " + hex(f.offset) + "+" +
              std::to_string(f.length) + " lies outside the " + std::to_string(size) +
              "-byte file: " + f.message);
    }
    RC_ASSERT(f.severity != Severity::Silent);
    errors += f.severity == Severity::Error ? 1 : 0;
    warnings += f.severity == Severity::Warning ? 1 : 0;
    notes += f.severity == Severity::Note ? 1 : 0;
  }
  RC_ASSERT(report.errors == errors);
  RC_ASSERT(report.warnings == warnings);
  RC_ASSERT(report.notes == notes);
  RC_ASSERT(std::is_sorted(report.findings.begin(), report.findings.end(),
                           [](const Finding& a, const Finding& b) { return a.offset < b.offset; }));
}

// The findings are exactly the expected ones, each with the catalogue's severity.
void assert_exactly(const Report& report, const std::vector<FindingKey>& expected, Profile profile,
                    const std::string& what) {
  const std::vector<FindingKey> actual = actual_findings(report);
  if (actual != expected) {
    RC_FAIL(what + ", profile " + profile_name(profile) + ":\n  expected " + describe(expected) +
            "\n  reported " + describe(actual) + describe(report));
  }
  for (const Finding& f : report.findings) {
    RC_ASSERT(f.severity == catalogue_entry(f.code).severity(profile));
  }
}

// --- valid files ---------------------------------------------------------------------------------

// The writer then the validator: a generated valid model has no error and no warning under strict
// and exactly the findings its content implies (notes; big-endian is an error in strict).
RC_GTEST_PROP(ValidModels, WrittenModelHasExactlyTheImpliedFindings, (const ValidModel& model)) {
  const Written written = model.write();
  const std::vector<Expect> implied = implied_findings(model.doc, written.layout);
  for (const Profile profile : kAllProfiles) {
    const Report report = run(written.bytes, profile);
    assert_well_formed(report, written.bytes.size());
    assert_exactly(report, expected_in(implied, profile), profile, "valid model");
    RC_ASSERT(report.facts.version == model.doc.version);
    RC_ASSERT(report.facts.endian == model.doc.endian);
    RC_ASSERT(report.facts.kv_read == model.doc.metadata.size());
    RC_ASSERT(report.facts.tensors_read == model.doc.tensors.size());
    RC_ASSERT(report.facts.alignment == effective_alignment(model.doc));
    // data_start is the end of the infos rounded up (gguf-format.md), also where a file without
    // tensors ends unpadded.
    RC_ASSERT(report.facts.data_start ==
              round_up(written.layout.infos_end, effective_alignment(model.doc)));
  }
  const Report strict = run(written.bytes, Profile::Strict);
  RC_ASSERT(strict.warnings == 0U);
  RC_ASSERT(strict.errors == (model.doc.endian == Endian::Big ? 1U : 0U));
}

// Arbitrary chat-template text (any script, controls, Jinja-looking bytes) changes nothing but
// the chat-template findings: with the template checks off the report is the same as on, less
// the ChatTemplate area. The valid-model generator writes plain words, whose findings
// (none) the expectation model knows; this property covers every other text.
RC_GTEST_PROP(ChatTemplates, AnyTextChangesOnlyTemplateFindings, (ValidModel model)) {
  const std::string key = *rc::gen::elementOf(
      std::vector<std::string>{"tokenizer.chat_template", "tokenizer.chat_template.tool_use"});
  const Value text = Value::string(*gen::any_text(24));
  if (KeyValue* existing = find_pair(model.doc, key)) {
    existing->value = text;
  } else {
    model.doc.metadata.push_back({key, text, {}});
  }
  const Written written = model.write();
  const auto outside_templates = [](const Report& report) {
    std::vector<FindingKey> keys;
    for (const FindingKey& k : actual_findings(report)) {
      if (catalogue_entry(static_cast<Code>(std::get<0>(k))).area != Area::ChatTemplate) {
        keys.push_back(k);
      }
    }
    return keys;
  };
  for (const Profile profile : kAllProfiles) {
    Options on = container_options(profile);
    Options off = on;
    off.template_checks = false;
    const Report with = validate(Bytes(written.bytes.data(), written.bytes.size()), on);
    const Report without = validate(Bytes(written.bytes.data(), written.bytes.size()), off);
    assert_well_formed(with, written.bytes.size());
    RC_ASSERT(outside_templates(with) == outside_templates(without));
    for (const Finding& f : without.findings) {
      RC_ASSERT(catalogue_entry(f.code).area != Area::ChatTemplate);
    }
  }
}

// Any key, conventional or not, gets GGUF2006 exactly as its style says: never when
// conventional, in spec only when it has '-' or an upper-case chat template name, in strict
// (warning) and spec (error) when it is not dotted lower_snake_case at all.
RC_GTEST_PROP(Keys, UnconventionalKeyFollowsTheKeyStyle, (ValidModel model, const Key& key)) {
  Document& doc = model.doc;
  const bool template_key = key.text.rfind("tokenizer.chat_template.", 0) == 0;
  // (Plain bools: RapidCheck cannot print a captured nullptr.)
  const bool free = template_key || is_free_key(key.text, architecture_of(doc));
  const bool fresh = find_pair(doc, key.text) == nullptr;
  // A key that is another's dotted prefix ("e" beside "e.a.a") is GGUF9503, a finding of its own
  // (the code tests cover it): the property is about the key's style.
  const bool unnested =
      std::none_of(doc.metadata.begin(), doc.metadata.end(),
                   [&](const KeyValue& kv) { return dotted_prefixes(kv.key, key.text); });
  RC_PRE(free);
  RC_PRE(fresh);
  RC_PRE(unnested);
  // The oracle's predicate agrees with the generator's style.
  RC_ASSERT(conventional_key(key.text, true) == (key.style != KeyStyle::Unconventional));
  RC_ASSERT(conventional_key(key.text, false) == (key.style == KeyStyle::Conventional));
  const auto at = *rc::gen::inRange<std::size_t>(0, doc.metadata.size() + 1);
  doc.metadata.insert(doc.metadata.begin() + static_cast<std::ptrdiff_t>(at),
                      KeyValue{key.text, Value::string("x"), {}});
  const Written written = model.write();
  const std::uint64_t key_at = written.layout.pairs[at].key_offset;
  std::vector<Expect> expected;
  for (const Expect& e : implied_findings(doc, written.layout)) {
    if (e.offset != key_at) expected.push_back(e);
  }
  const std::uint64_t length = 8 + key.text.size();
  if (key.style == KeyStyle::Unconventional) {
    expected.push_back({Code::UnconventionalKey, key_at, length});
  } else if (key.style == KeyStyle::StrictOnly) {
    expected.push_back({Code::UnconventionalKey, key_at, length, {false, true, false}});
  }
  for (const Profile profile : kAllProfiles) {
    assert_exactly(run(written.bytes, profile), expected_in(expected, profile), profile,
                   "key \"" + shown(key.text) + "\"");
  }
}

// Every power of two from 1 to 4096 lays a file out cleanly; 1, 2 and 4 are only GGUF5004.
RC_GTEST_PROP(Alignments, EveryPowerOfTwoLaysOutCleanly, (ValidModel model, const Alignment& a)) {
  Document& doc = model.doc;
  if (KeyValue* kv = find_pair(doc, "general.alignment")) {
    kv->value = Value::u32(a.value);
  } else {
    const auto at = *rc::gen::inRange<std::size_t>(0, doc.metadata.size() + 1);
    doc.metadata.insert(doc.metadata.begin() + static_cast<std::ptrdiff_t>(at),
                        KeyValue{"general.alignment", Value::u32(a.value), {}});
  }
  const Written written = model.write();
  std::vector<Expect> expected = implied_findings(doc, written.layout);
  const std::size_t k = *pair_index(doc, "general.alignment");
  if (a.value < 8) {
    expected.push_back({Code::AlignmentNotMultipleOf8, written.layout.pairs[k].value_offset, 4});
  }
  for (const Profile profile : kAllProfiles) {
    const Report report = run(written.bytes, profile);
    assert_exactly(report, expected_in(expected, profile), profile,
                   "alignment " + std::to_string(a.value));
    RC_ASSERT(report.facts.alignment == a.value);
    RC_ASSERT(report.facts.data_start == round_up(written.layout.infos_end, a.value));
  }
}

// Tensors of any usable type and shape, zero-size ones included: a zero dim is GGUF3008 (an error
// in strict, a note for llama.cpp), and nothing else changes.
RC_GTEST_PROP(Tensors, AnyShapeIsReportedAsItsDimsImply, (ValidModel model)) {
  Document& doc = model.doc;
  const auto extra = *rc::gen::inRange<std::size_t>(1, 4);
  for (std::size_t i = 0; i < extra; ++i) {
    const auto at = *rc::gen::inRange<std::size_t>(0, doc.tensors.size() + 1);
    doc.tensors.insert(doc.tensors.begin() + static_cast<std::ptrdiff_t>(at),
                       *rc::gen::arbitrary<Tensor>());
  }
  make_names_unique(doc);
  if (has_quantized_tensor(doc)) ensure_quantization_version(doc);
  const Written written = model.write();
  std::vector<Expect> expected = implied_findings(doc, written.layout);
  for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
    for (std::size_t d = 0; d < doc.tensors[i].dims.size(); ++d) {
      if (doc.tensors[i].dims[d] == 0) {
        expected.push_back({Code::ZeroDim, written.layout.tensors[i].dims_offset + 8 * d, 8});
      }
    }
  }
  for (const Profile profile : kAllProfiles) {
    assert_exactly(run(written.bytes, profile), expected_in(expected, profile), profile,
                   "tensors of any shape");
  }
}

// A canonical value of any type under a free key is accepted; an array of arrays is GGUF2010
// (an error where the reference loader rejects it), reported once at the outer element type.
RC_GTEST_PROP(Values, EveryCanonicalValueIsAccepted, (ValidModel model, const Value& value)) {
  Document& doc = model.doc;
  const auto at = *rc::gen::inRange<std::size_t>(0, doc.metadata.size() + 1);
  doc.metadata.insert(doc.metadata.begin() + static_cast<std::ptrdiff_t>(at),
                      KeyValue{"0value.target", value, {}});
  const Written written = model.write();
  std::vector<Expect> expected = implied_findings(doc, written.layout);
  if (value.type == ValueType::Array && value.element_type == ValueType::Array) {
    expected.push_back({Code::NestedArray, written.layout.pairs[at].value_offset, 4});
  }
  for (const Profile profile : kAllProfiles) {
    assert_exactly(run(written.bytes, profile), expected_in(expected, profile), profile,
                   "value " + value_text(value));
  }
}

// --- round trips ---------------------------------------------------------------------------------

// read_document(write(doc)) == doc: values, types, order, tensor infos and data bytes, in v1, v2
// and v3 and in both byte orders (v1 has value types 0..9 only).
RC_GTEST_PROP(RoundTrip, ReadDocumentInvertsWriteForAnyDocument, (const AnyDocument& any)) {
  const ByteVector bytes = write_bytes(any.doc);
  const std::optional<Document> read = read_document(Bytes(bytes.data(), bytes.size()));
  RC_ASSERT(read.has_value());
  if (!(*read == any.doc)) RC_FAIL("read back as:\n" + document_text(*read));
}

// The same for valid models with the writer's default offsets and data.
RC_GTEST_PROP(RoundTrip, ReadDocumentInvertsWriteForValidModels, (const ValidModel& model)) {
  const Written written = model.write();
  Document expected = model.doc;
  for (std::size_t i = 0; i < expected.tensors.size(); ++i) {
    Tensor& t = expected.tensors[i];
    t.offset = written.layout.tensors[i].data_position - written.layout.data_start;
    if (!t.data) t.data = std::vector<std::uint8_t>(written.layout.tensors[i].nbytes, 0);
  }
  const std::optional<Document> read =
      read_document(Bytes(written.bytes.data(), written.bytes.size()));
  RC_ASSERT(read.has_value());
  if (!(*read == expected)) RC_FAIL("read back as:\n" + document_text(*read));
}

// --- truncation ----------------------------------------------------------------------------------

// Every prefix that cuts more than the final padding is rejected with a truncation-class error of
// the section it cuts: the header (1001), the metadata (2001, 2002, 2011 or 1007), the tensor
// infos (3001, 2002 or 1007), the padding before the data (4006), the tensor data (4003). A cut
// inside the final padding is no error.
RC_GTEST_PROP(Prefixes, EveryCutIsATruncationErrorOfItsSection, (const ValidModel& model)) {
  const Written written = model.write();
  const ByteVector& bytes = written.bytes;
  const WrittenLayout& l = written.layout;
  const std::uint64_t infos_start = l.pairs.empty() ? 24 : l.pairs.back().end;
  std::uint64_t content_end = l.infos_end;
  for (const WrittenTensor& t : l.tensors) {
    content_end = std::max(content_end, t.data_position + t.nbytes);
  }
  std::set<std::uint64_t> cuts;
  for (const std::uint64_t at : field_starts(l)) {
    for (const std::uint64_t c : {at - 1, at, at + 1}) {
      if (c < bytes.size()) cuts.insert(c);
    }
  }
  for (int i = 0; i < 16; ++i) cuts.insert(*rc::gen::inRange<std::uint64_t>(0, bytes.size()));
  std::map<Profile, std::size_t> full_errors;
  for (const Profile profile : kAllProfiles) full_errors[profile] = run(bytes, profile).errors;
  for (const std::uint64_t cut : cuts) {
    const Bytes prefix(bytes.data(), cut);
    std::set<Code> allowed;
    if (cut < 24) {
      allowed = {Code::TruncatedHeader};
    } else if (cut < infos_start) {
      allowed = {Code::TruncatedMetadata, Code::TruncatedString, Code::ImpossibleArrayCount,
                 Code::ImpossibleCount};
    } else if (cut < l.infos_end) {
      allowed = {Code::TruncatedTensorInfo, Code::TruncatedString, Code::ImpossibleCount};
    } else if (cut < l.data_start && !l.tensors.empty()) {
      allowed = {Code::TruncatedBeforeData};
    } else if (cut < content_end) {
      allowed = {Code::TensorOutOfBounds};
    }
    for (const Profile profile : kAllProfiles) {
      Options options = container_options();
      options.profile = profile;
      const Report report = validate(prefix, options);
      assert_well_formed(report, cut);
      std::size_t truncation_errors = 0;
      std::size_t other_errors = 0;
      for (const Finding& f : report.findings) {
        if (f.severity != Severity::Error || f.code == Code::ByteSwappedFile) continue;
        ++(allowed.count(f.code) != 0 ? truncation_errors : other_errors);
      }
      const std::string where = "cut at " + hex(cut) + " of " + hex(bytes.size()) + " (infos " +
                                hex(infos_start) + ".." + hex(l.infos_end) + ", data " +
                                hex(l.data_start) + ".." + hex(content_end) + "), profile " +
                                profile_name(profile) + describe(report);
      if (allowed.empty()) {
        if (report.errors != full_errors[profile]) {
          RC_FAIL("a cut inside the final padding adds an error: " + where);
        }
      } else if (truncation_errors == 0) {
        RC_FAIL("no truncation error of the section: " + where);
      }
    }
  }
}

// The same over any document (v1 with its 16-byte header, nested arrays, any bytes, removed and
// unknown types, hostile shapes): every cut before the end of the last tensor's data has a
// truncation-class error.
RC_GTEST_PROP(Prefixes, EveryCutOfAnyDocumentIsATruncationError, (const AnyDocument& any)) {
  const Written written = write(any.doc);
  const ByteVector& bytes = written.bytes;
  const WrittenLayout& l = written.layout;
  std::uint64_t content_end = l.infos_end;
  for (const WrittenTensor& t : l.tensors) {
    if (t.nbytes != 0) content_end = std::max(content_end, t.data_position + t.nbytes);
  }
  const std::set<Code> truncation = {Code::TruncatedHeader,      Code::TruncatedMetadata,
                                     Code::TruncatedString,      Code::TruncatedTensorInfo,
                                     Code::TruncatedBeforeData,  Code::ImpossibleCount,
                                     Code::ImpossibleArrayCount, Code::TensorOutOfBounds};
  std::set<std::uint64_t> cuts;
  for (const std::uint64_t at : field_starts(l)) {
    for (const std::uint64_t c : {at - 1, at, at + 1}) {
      if (c < content_end) cuts.insert(c);
    }
  }
  for (int i = 0; i < 16 && content_end > 0; ++i) {
    cuts.insert(*rc::gen::inRange<std::uint64_t>(0, content_end));
  }
  for (const std::uint64_t cut : cuts) {
    for (const Profile profile : kAllProfiles) {
      Options options = container_options();
      options.profile = profile;
      const Report report = validate(Bytes(bytes.data(), cut), options);
      assert_well_formed(report, cut);
      const bool truncated =
          std::any_of(report.findings.begin(), report.findings.end(), [&](const Finding& f) {
            return f.severity == Severity::Error && truncation.count(f.code) != 0;
          });
      if (!truncated) {
        RC_FAIL("cut at " + hex(cut) + " of " + hex(bytes.size()) + " (content ends at " +
                hex(content_end) + "), profile " + profile_name(profile) + ": no truncation error" +
                describe(report));
      }
    }
  }
}

// --- blind edits ---------------------------------------------------------------------------------

// Validates, renders and reads back the bytes: nothing crashes, every finding lies in the file,
// each rendering says what the report says, and what llama.cpp rejects strict rejects. (A hang is
// caught by ctest's TIMEOUT, not by a clock here.)
void survive(const ByteVector& bytes, const std::string& what) {
  for (const Profile profile : kAllProfiles) {
    const Report report = run(bytes, profile);
    assert_well_formed(report, bytes.size());
    Options options = container_options();
    options.profile = profile;
    const std::vector<Report> reports = {report};
    // Text: one line per finding (and its context lines) and the summary with the counts.
    const std::string text = render_text(report, {});
    const std::string summary = fmt::format("{}: {}: {} error", report.path,
                                            report.passed() ? "pass" : "FAIL", report.errors);
    RC_ASSERT(text.find(summary) != std::string::npos);
    for (const Finding& f : report.findings) {
      RC_ASSERT(text.find(std::string(catalogue_entry(f.code).name)) != std::string::npos);
    }
    // JSON and SARIF: every finding, with its code, in order.
    const auto doc = nlohmann::json::parse(render_json(reports, options, report.exit_status()));
    const auto& findings = doc["files"][0]["findings"];
    RC_ASSERT(findings.size() == report.findings.size());
    for (std::size_t i = 0; i < findings.size(); ++i) {
      RC_ASSERT(findings[i]["code"] == code_string(report.findings[i].code));
    }
    RC_ASSERT(doc["files"][0]["summary"]["errors"] == report.errors);
    const auto sarif = nlohmann::json::parse(render_sarif(reports, options));
    RC_ASSERT(sarif["runs"][0]["results"].size() == report.findings.size());
  }
  (void)what;
  RC_ASSERT(run(bytes, Profile::LlamaCpp).errors == 0 || run(bytes, Profile::Strict).errors > 0);
  (void)read_document(Bytes(bytes.data(), bytes.size()));
}

// Any single byte flip and any 4- or 8-byte overwrite with a boundary value (in either byte
// order, at a field start or anywhere) never crashes or hangs and is reported inside the file.
RC_GTEST_PROP(Mutations, BlindEditsOfValidModelsAreReportedInsideTheFile,
              (const ValidModel& model)) {
  const Written written = model.write();
  const auto edits = *rc::gen::container<std::vector<Mutation>>(8, rc::gen::arbitrary<Mutation>());
  for (const Mutation& m : edits) {
    const Mutated x = mutate(written.bytes, written.layout, m);
    survive(x.bytes, x.edit);
  }
}

// The same over any document: v1, nested arrays, any bytes in keys, strings and names, removed
// and unknown tensor types, hostile dims.
RC_GTEST_PROP(Mutations, BlindEditsOfAnyDocumentAreReportedInsideTheFile,
              (const AnyDocument& any)) {
  const Written written = write(any.doc);
  survive(written.bytes, "unmodified");
  const auto edits = *rc::gen::container<std::vector<Mutation>>(8, rc::gen::arbitrary<Mutation>());
  for (const Mutation& m : edits) {
    const Mutated x = mutate(written.bytes, written.layout, m);
    survive(x.bytes, x.edit);
  }
}

// --- targeted faults -----------------------------------------------------------------------------

// A targeted fault yields exactly the findings it must produce in each profile (its own code or
// codes at the offsets the WrittenLayout gives, plus what the rest of the file implies and the
// validator still reaches), with the catalogue's severities.
RC_GTEST_PROP(Corruptions, TargetedFaultYieldsExactlyItsFindings, (const Corruption& c)) {
  const Corrupted x = apply(c);
  const std::string what = std::string(fault_info(c.fault).name) + ": " + x.edit;
  for (const Profile profile : kAllProfiles) {
    const Report report = run(x.bytes, profile);
    assert_well_formed(report, x.bytes.size());
    const std::vector<FindingKey> expected = x.expected_in(profile);
    if (x.exact) {
      assert_exactly(report, expected, profile, what);
    } else {
      const std::vector<FindingKey> actual = actual_findings(report);
      for (const FindingKey& k : expected) {
        if (std::find(actual.begin(), actual.end(), k) == actual.end()) {
          RC_FAIL(what + ", profile " + profile_name(profile) + ": " + describe({k}) +
                  " not reported" + describe(report));
        }
      }
    }
    if (x.targets(profile)) {
      RC_ASSERT(std::any_of(report.findings.begin(), report.findings.end(), [&](const Finding& f) {
        return f.code == x.target && f.offset == x.finding_offset;
      }));
    }
  }
}

// No finding switches off another stage: the data check runs on a file with any targeted fault
// whenever what it needs is there (every tensor info, the data section, little-endian data) and
// reports, for every tensor the fault left alone, exactly what it reports on the file without
// the fault. A tensor is left alone when its info record and its bytes are unchanged, the data
// section starts where it did, and no other tensor was moved over it (GGUF4002).
RC_GTEST_PROP(Stages, TheDataCheckSurvivesEveryFaultOutsideItsTensors, (const Corruption& c)) {
  const Corrupted x = apply(c);
  const Written clean = x.host.write();
  for (const Profile profile : kAllProfiles) {
    Options options = container_options(profile);
    options.data.enabled = true;
    options.data.threads = 1;
    const Report before = validate(Bytes(clean.bytes.data(), clean.bytes.size()), options);
    const Report after = validate(Bytes(x.bytes.data(), x.bytes.size()), options);
    assert_well_formed(after, x.bytes.size());
    const auto has = [](const Report& r, Code code) {
      return std::any_of(r.findings.begin(), r.findings.end(),
                         [code](const Finding& f) { return f.code == code; });
    };
    // On the valid file the data check runs, but for big-endian data, which it says it skips.
    RC_ASSERT(has(before, Code::StageNotRun) == (x.host.doc.endian == Endian::Big));
    // Where the data check did not run, the report says so (never a silent skip).
    if (has(after, Code::StageNotRun)) continue;
    if (!x.exact || after.facts.data_start != before.facts.data_start ||
        has(after, Code::OverlappingTensors)) {
      continue;
    }
    for (std::size_t i = 0; i < clean.layout.tensors.size(); ++i) {
      const WrittenTensor& t = clean.layout.tensors[i];
      const std::uint64_t info_end = t.offset_offset + 8;
      const std::uint64_t data_end = t.data_position + t.nbytes;
      const bool info_touched = x.field_offset >= t.offset && x.field_offset < info_end;
      if (info_touched || data_end > x.bytes.size() ||
          !std::equal(clean.bytes.begin() + static_cast<std::ptrdiff_t>(t.offset),
                      clean.bytes.begin() + static_cast<std::ptrdiff_t>(info_end),
                      x.bytes.begin() + static_cast<std::ptrdiff_t>(t.offset)) ||
          !std::equal(clean.bytes.begin() + static_cast<std::ptrdiff_t>(t.data_position),
                      clean.bytes.begin() + static_cast<std::ptrdiff_t>(data_end),
                      x.bytes.begin() + static_cast<std::ptrdiff_t>(t.data_position))) {
        continue;
      }
      const auto of_tensor = [&](const Report& r) {
        std::vector<FindingKey> keys;
        for (const Finding& f : r.findings) {
          if (catalogue_entry(f.code).area == Area::TensorData && f.offset >= t.data_position &&
              f.offset < std::max(data_end, t.data_position + 1)) {
            keys.emplace_back(static_cast<std::uint16_t>(f.code), f.offset, f.length);
          }
        }
        return keys;
      };
      if (of_tensor(before) != of_tensor(after)) {
        RC_FAIL(std::string(fault_info(c.fault).name) + ": " + x.edit + ", tensor[" +
                std::to_string(i) + "], profile " + profile_name(profile) +
                ":\n  without the fault " + describe(of_tensor(before)) + "\n  with it " +
                describe(of_tensor(after)) + describe(after));
      }
    }
  }
}

// Profiles are ordered as design.md says: the llama.cpp profile errs exactly where llama.cpp
// fails to load the file, and strict rejects everything a deployed loader rejects; so whatever
// llama.cpp rejects, strict rejects.
RC_GTEST_PROP(Profiles, WhatLlamaCppRejectsStrictRejects,
              (const Corruption& c, const Mutation& m)) {
  const Corrupted x = apply(c);
  const Mutated blind = mutate(x.bytes, x.layout, m);
  for (const ByteVector* bytes : {&x.bytes, &blind.bytes}) {
    const Report llama = run(*bytes, Profile::LlamaCpp);
    const Report strict = run(*bytes, Profile::Strict);
    if (llama.errors > 0 && strict.errors == 0) {
      RC_FAIL("llama.cpp rejects, strict passes (" + x.edit +
              (bytes == &blind.bytes ? "; then " + blind.edit : "") + "):" + describe(llama));
    }
  }
}

// --- determinism and output formats --------------------------------------------------------------

std::vector<std::string> text_codes(const std::string& text) {
  static const std::regex kLine(R"(^[^\n]*:0x[0-9a-f]+: (error|warning|note)\[(GGUF[0-9]{4}) )");
  std::vector<std::string> out;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const std::size_t end = text.find('\n', begin);
    const std::string line = text.substr(begin, end == std::string::npos ? end : end - begin);
    std::smatch match;
    if (std::regex_search(line, match, kLine)) out.push_back(match[2]);
    if (end == std::string::npos) break;
    begin = end + 1;
  }
  return out;
}

// Validation is deterministic and independent of the output format and of the order of the
// files: validating twice gives identical reports; text, JSON and SARIF list the same findings in
// the same order; a file's JSON entry does not depend on the files around it.
RC_GTEST_PROP(Determinism, SameFindingsEveryTimeInEveryFormatAndOrder, (const Corruption& c)) {
  const Corrupted x = apply(c);
  const ByteVector other = x.host.write().bytes;
  for (const Profile profile : kAllProfiles) {
    Options options = container_options();
    options.profile = profile;
    const Report a = validate(Bytes(x.bytes.data(), x.bytes.size()), options, "a.gguf");
    const Report again = validate(Bytes(x.bytes.data(), x.bytes.size()), options, "a.gguf");
    RC_ASSERT(a.findings.size() == again.findings.size());
    for (std::size_t i = 0; i < a.findings.size(); ++i) {
      const Finding& f = a.findings[i];
      const Finding& g = again.findings[i];
      RC_ASSERT(f.code == g.code);
      RC_ASSERT(f.severity == g.severity);
      RC_ASSERT(f.offset == g.offset);
      RC_ASSERT(f.length == g.length);
      RC_ASSERT(f.path == g.path);
      RC_ASSERT(f.message == g.message);
      RC_ASSERT(f.hint == g.hint);
    }
    RC_ASSERT(a.errors == again.errors);
    std::vector<std::string> codes_in_order;
    for (const Finding& f : a.findings) codes_in_order.push_back(code_string(f.code));

    RC_ASSERT(text_codes(render_text(a, {})) == codes_in_order);

    const Report b = validate(Bytes(other.data(), other.size()), options, "b.gguf");
    const std::vector<Report> ab = {a, b};
    const std::vector<Report> ba = {b, a};
    const auto json_ab = nlohmann::json::parse(render_json(ab, options, 1));
    const auto json_ba = nlohmann::json::parse(render_json(ba, options, 1));
    RC_ASSERT(json_ab["files"][0] == json_ba["files"][1]);
    RC_ASSERT(json_ab["files"][1] == json_ba["files"][0]);
    std::vector<std::string> json_codes;
    const auto& findings = json_ab["files"][0]["findings"];
    for (std::size_t i = 0; i < findings.size(); ++i) {
      json_codes.push_back(findings[i]["code"].get<std::string>());
      RC_ASSERT(findings[i]["offset"].get<std::uint64_t>() == a.findings[i].offset);
      RC_ASSERT(findings[i]["length"].get<std::uint64_t>() == a.findings[i].length);
    }
    RC_ASSERT(json_codes == codes_in_order);

    const std::vector<Report> only_a = {a};
    const auto sarif = nlohmann::json::parse(render_sarif(only_a, options));
    std::vector<std::string> sarif_codes;
    const auto& results = sarif["runs"][0]["results"];
    for (std::size_t i = 0; i < results.size(); ++i) {
      sarif_codes.push_back(results[i]["ruleId"].get<std::string>());
      const auto& region = results[i]["locations"][0]["physicalLocation"]["region"];
      RC_ASSERT(region["byteOffset"].get<std::uint64_t>() == a.findings[i].offset);
      RC_ASSERT(region["byteLength"].get<std::uint64_t>() == a.findings[i].length);
    }
    RC_ASSERT(sarif_codes == codes_in_order);
  }
}

// --- options -------------------------------------------------------------------------------------

using SeverityKey = std::tuple<std::uint16_t, std::uint64_t, std::uint64_t, Severity>;

std::vector<SeverityKey> with_severities(const std::vector<Finding>& findings) {
  std::vector<SeverityKey> out;
  for (const Finding& f : findings) {
    out.emplace_back(static_cast<std::uint16_t>(f.code), f.offset, f.length, f.severity);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// --werror, --disable/--enable/--severity and --limit findings=N change what a report shows, never
// what the validator finds: with every code enabled the file has a set of findings; any overrides
// keep exactly those whose code they leave enabled, at the severity they give; a findings limit
// keeps the verdict and the counts.
RC_GTEST_PROP(Options, OverridesAndLimitsOnlyChangeWhatIsShown, (const Corruption& c)) {
  const Corrupted x = apply(c);
  const Bytes bytes(x.bytes.data(), x.bytes.size());
  const Profile profile =
      *rc::gen::elementOf(std::vector<Profile>(kAllProfiles.begin(), kAllProfiles.end()));
  Options all = container_options(profile);
  for (const CatalogueEntry& e : catalogue()) all.severity_overrides[e.code] = Severity::Error;
  const Report every = validate(bytes, all);

  Options options = container_options();
  options.profile = profile;
  options.werror = *rc::gen::arbitrary<bool>();
  const auto overridden = *rc::gen::container<std::vector<std::size_t>>(
      *rc::gen::inRange<std::size_t>(0, 6), rc::gen::inRange<std::size_t>(0, catalogue().size()));
  for (const std::size_t i : overridden) {
    options.severity_overrides[catalogue()[i].code] = *rc::gen::elementOf(std::vector<Severity>{
        Severity::Silent, Severity::Note, Severity::Warning, Severity::Error});
  }
  for (const Finding& f : every.findings) {  // also override codes the file has
    if (*rc::gen::weightedElement<int>({{3, 0}, {1, 1}}) == 1) {
      options.severity_overrides[f.code] = *rc::gen::elementOf(std::vector<Severity>{
          Severity::Silent, Severity::Note, Severity::Warning, Severity::Error});
    }
  }
  std::vector<Finding> expected;
  for (Finding f : every.findings) {
    f.severity = options.severity(f.code);
    if (f.severity != Severity::Silent) expected.push_back(f);
  }
  const Report report = validate(bytes, options);
  assert_well_formed(report, x.bytes.size());
  RC_ASSERT(with_severities(report.findings) == with_severities(expected));

  const auto limit = *rc::gen::inRange<std::size_t>(0, report.findings.size() + 2);
  Options limited = options;
  limited.limits.max_findings = limit;
  const Report cut = validate(bytes, limited);
  RC_ASSERT(cut.findings.size() == std::min(limit, report.findings.size()));
  RC_ASSERT(cut.findings_dropped == report.findings.size() - cut.findings.size());
  RC_ASSERT(cut.errors == report.errors);
  RC_ASSERT(cut.warnings == report.warnings);
  RC_ASSERT(cut.notes == report.notes);
  RC_ASSERT(cut.exit_status() == report.exit_status());
}

// --- memory --------------------------------------------------------------------------------------

// What validate() may allocate for one of these small files, whatever its header claims.
constexpr std::size_t kMemoryBound = 64 * 1024;

std::atomic<std::size_t> g_largest_peak{0};

// Prints the largest peak the memory property measured.
class PeakSummary : public ::testing::Environment {
 public:
  void TearDown() override {
    if (g_largest_peak.load() != 0) {
      std::printf("[ peaks    ] largest validate() allocation peak under huge claims: %zu bytes\n",
                  g_largest_peak.load());
    }
  }
};

[[maybe_unused]] ::testing::Environment* const g_peak_summary =
    ::testing::AddGlobalTestEnvironment(new PeakSummary);

// A header, length, count, dim or offset that claims a huge size never makes validate() allocate
// in proportion to the claim: the peak stays below a fixed bound.
// The chat-template checks' table of llama.cpp's known templates is split into lines once per
// process, on first use (about 240 KB, whatever the file): made here before any peak is taken.
void warm_up_static_tables() {
  static const bool warm = [] {
    Document doc = minimal_document();
    doc.metadata.push_back({"tokenizer.chat_template", Value::string("{{ x }}"), {}});
    const ByteVector bytes = write_bytes(doc);
    (void)validate(Bytes(bytes.data(), bytes.size()), container_options());
    return true;
  }();
  (void)warm;
}

RC_GTEST_PROP(Memory, HugeClaimsStayWithinASmallBound,
              (const ValidModel& model, const HugeClaim& c)) {
  warm_up_static_tables();
  const Mutated x = claim(model, c);
  for (const Profile profile : kAllProfiles) {
    Options options = container_options();
    options.profile = profile;
    std::size_t peak = 0;
    {
      const PeakProbe probe;
      const Report report = validate(Bytes(x.bytes.data(), x.bytes.size()), options);
      peak = probe.peak();
      assert_well_formed(report, x.bytes.size());
    }
    std::size_t largest = g_largest_peak.load();
    while (peak > largest && !g_largest_peak.compare_exchange_weak(largest, peak)) {
    }
    if (peak > kMemoryBound) {
      RC_FAIL(x.edit + ": validate() allocated " + std::to_string(peak) + " bytes for a " +
              std::to_string(x.bytes.size()) + "-byte file, profile " + profile_name(profile));
    }
  }
}

// The file this property once failed on (tensor_count 2^40 in a big-endian v2 file of 16 KB):
// the correct reading stops at the impossible count, but writer diagnosis tries other dialects,
// one of which reads hundreds of tensors out of the padding. Each trial kept a finding per
// tensor (382 KB); it keeps each code once now.
TEST(Memory, WriterDiagnosisTrialsStayWithinTheBound) {
  warm_up_static_tables();
  const ByteVector bytes =
      read_file(std::filesystem::path(GGUFCHECK_SOURCE_DIR) / "validator/tests/data/regressions" /
                "huge-tensor-count-big-endian.gguf");
  ASSERT_EQ(bytes.size(), 16384U);
  const PeakProbe probe;
  const Report report = validate(Bytes(bytes.data(), bytes.size()), container_options());
  const std::size_t peak = probe.peak();
  EXPECT_LT(peak, kMemoryBound);
  EXPECT_EQ(report.exit_status(), 1);
  EXPECT_TRUE(std::any_of(report.findings.begin(), report.findings.end(),
                          [](const Finding& f) { return f.code == Code::ImpossibleCount; }));
}

TEST(Memory, AllocatorCountsValidation) {
  const ByteVector bytes = write_bytes(model_document());
  const PeakProbe probe;
  const Report report = check(bytes);
  EXPECT_GT(probe.peak(), 0U);  // the counting operator new is the one in use
  EXPECT_LT(probe.peak(), kMemoryBound);
  EXPECT_TRUE(report.passed());
}

// --- the catalogue and the faults ----------------------------------------------------------------

// Every catalogue code (GGUF19xx, the writer diagnosis, does not exist yet) is the target of a
// fault, or its entry in the code table (code_table.cpp) says why no single edit of a generated
// (small, valid) file reaches it (`no_fault`). A new code without either fails here.
TEST(Faults, EveryReachableCatalogueCodeHasAFault) {
  std::set<Code> targeted;
  for (const FaultInfo& info : fault_table()) targeted.insert(info.target);
  for (const CatalogueEntry& entry : catalogue()) {
    const auto number = static_cast<std::uint16_t>(entry.code);
    if (number >= 1900 && number < 2000) continue;
    // The faults corrupt what default validation reads; tensor-data codes need the data check
    // (test_data_scan.cpp, the data differential test and fuzz_data_kernels cover them). The
    // faults corrupt containers, validated without the model checks: the model and split-set
    // codes have the model differential test (structured mutants of real models) and fuzz_model.
    // The chat-template codes have their judges (Jinja2's sandbox, llama.cpp's engine on
    // thousands of mutants: test_template_judge.py, test_jinja.cpp) and fuzz_template. The
    // portability codes are about valid files that other parsers read otherwise, not
    // corruptions: the code tests, the corpus and the conformance cases cover them.
    if (entry.area == Area::TensorData || entry.area == Area::Model ||
        entry.area == Area::SplitSet || entry.area == Area::ChatTemplate ||
        entry.area == Area::Portability) {
      continue;
    }
    const CodeEntry* code = code_entry(entry.code);
    const bool unreachable = code != nullptr && !code->no_fault.empty();
    EXPECT_NE(targeted.count(entry.code) != 0, unreachable)
        << code_string(entry.code) << " " << entry.name
        << (unreachable ? ": its entry says no single edit reaches it, but a fault targets it"
                        : ": no fault targets it and its entry does not say why (no_fault)");
  }
}

// Every fault reaches its target code on some generated host: applied to hosts drawn from fixed
// seeds, at least one application must report the target at the fault's finding offset, with
// exactly the expected findings. This runs every fault on every CI run, whatever RC_PARAMS says.
TEST(Faults, EveryFaultReachesItsTarget) {
  for (const FaultInfo& info : fault_table()) {
    SCOPED_TRACE(std::string(info.name));
    std::size_t reached = 0;
    for (std::uint64_t seed = 1; seed <= 24; ++seed) {
      Corruption c;
      c.fault = info.name;
      c.host = gen::valid_model()(rc::Random(seed), 40).value();
      c.choices = {seed * 0x9E3779B97F4A7C15ULL, seed * 7, seed * 13 + 1, seed};
      const Corrupted x = apply(c);
      for (const Profile profile : kAllProfiles) {
        const Report report = run(x.bytes, profile);
        const std::vector<FindingKey> expected = x.expected_in(profile);
        const std::vector<FindingKey> actual = actual_findings(report);
        if (x.exact) {
          EXPECT_EQ(describe(actual), describe(expected))
              << x.edit << " (seed " << seed << ", " << to_string(profile) << ")";
        }
        if (x.targets(profile)) {
          reached += static_cast<std::size_t>(
              std::count_if(report.findings.begin(), report.findings.end(), [&](const Finding& f) {
                return f.code == x.target && f.offset == x.finding_offset;
              }));
        }
      }
    }
    EXPECT_GT(reached, 0U) << info.name << " never produced " << code_string(info.target);
  }
}

// --- the CLI: -j and file order ------------------------------------------------------------------

struct CliRun {
  int status = -1;
  std::string out;
};

CliRun run_cli(const std::vector<std::string>& args) {
  std::string command = GGUFCHECK_CLI_PATH;
  for (const std::string& a : args) command += " '" + a + "'";
  CliRun result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// The CLI's JSON report of each file does not depend on -j or on the order of the files.
TEST(Cli, ReportsDoNotDependOnJobsOrFileOrder) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / "ggufcheck-property-cli";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::string> files;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const Corruption c = gen::corruption()(rc::Random(seed), 40).value();
    const Corrupted x = apply(c);
    const fs::path path = dir / ("f" + std::to_string(seed) + ".gguf");
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(x.bytes.data()),
               static_cast<std::streamsize>(x.bytes.size()));
    files.push_back(path.string());
  }
  const auto by_path = [](const CliRun& r) {
    std::map<std::string, nlohmann::json> out;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& file : doc["files"]) out[file["path"].get<std::string>()] = file;
    return out;
  };
  std::vector<std::string> args = {"--format", "json", "-j", "1"};
  args.insert(args.end(), files.begin(), files.end());
  const CliRun one = run_cli(args);
  ASSERT_TRUE(one.status == 0 || one.status == 1) << one.out;
  args[3] = "2";
  const CliRun two = run_cli(args);
  std::vector<std::string> reversed = {"--format", "json", "-j", "2"};
  reversed.insert(reversed.end(), files.rbegin(), files.rend());
  const CliRun two_reversed = run_cli(reversed);
  EXPECT_EQ(two.status, one.status);
  EXPECT_EQ(two_reversed.status, one.status);
  EXPECT_EQ(two.out, one.out);
  EXPECT_EQ(by_path(two_reversed), by_path(one));
  fs::remove_all(dir);
}

// --- library bugs found by the properties --------------------------------------------------------
//
// Each test states the behaviour the library must have, named after the bug it pins.

// Found by RoundTrip.ReadDocumentInvertsWriteForAnyDocument, shrunk to: general.alignment = uint32
// 0, then general.alignment = uint32 512, one tensor. write() laid the file out with the first
// general.alignment that was a non-zero uint32 (512), while validate() and read_document() - like
// ggml's gguf_find_key - take the first general.alignment pair (0, so alignment 32): they looked
// for the data at 0xc0 while the writer had put it at 0x200, and read_document() returned padding
// as the tensor's data. (With 0 then 64 the data start agreed but the writer's final padding was
// reported as GGUF4008 trailing bytes.) Fixed in 023e4c4: the first pair decides in the writer too.
TEST(LibraryBugs, WriterTakesALaterGeneralAlignmentThanReaders) {
  Document doc = minimal_document();
  doc.metadata.push_back({"general.alignment", Value::u32(0), {}});
  doc.metadata.push_back({"general.alignment", Value::u32(512), {}});
  Tensor t;
  t.name = "w";
  t.dims = {8};
  t.type = 0;  // F32: 32 bytes
  t.data = seeded_bytes(1, 32);
  doc.tensors.push_back(t);
  const Written written = write(doc);
  const Report report = check(written.bytes);
  EXPECT_EQ(written.layout.alignment, report.facts.alignment);
  EXPECT_EQ(written.layout.data_start, report.facts.data_start);
  const std::optional<Document> read =
      read_document(Bytes(written.bytes.data(), written.bytes.size()));
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->tensors[0].data, doc.tensors[0].data);
}

}  // namespace
}  // namespace ggufcheck::testing
