#include "pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <span>

#include "ggufcheck/document.hpp"
#include "ggufcheck/dump.hpp"
#include "ggufcheck/info.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::fuzz {

// A libFuzzer binary replays this way too when GGUFCHECK_FUZZ_EVERY_RUN is set (the
// ClusterFuzzLite smoke test's replay of the seeds under ASan + UBSan, .clusterfuzzlite/).
bool every_run = std::getenv("GGUFCHECK_FUZZ_EVERY_RUN") != nullptr;

namespace {

constexpr std::uint64_t kMaxRoundTripAlignment = 1 << 16;
constexpr std::size_t kMaxDumpedInput = 16 << 10;

// A printable, valid UTF-8 text: what the renderers may pass to a terminal or a log.
bool printable_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if (byte < 0x20 || byte == 0x7f) return false;
      ++i;
      continue;
    }
    std::size_t length = 0;
    if ((byte & 0xE0) == 0xC0 && byte >= 0xC2) {
      length = 2;
    } else if ((byte & 0xF0) == 0xE0) {
      length = 3;
    } else if ((byte & 0xF8) == 0xF0 && byte <= 0xF4) {
      length = 4;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    i += length;
  }
  return true;
}

void disable_writer_diagnosis(Options& options) {
  for (const Code code : {Code::WriterNulTerminatedStrings, Code::WriterHeaderAlignmentField,
                          Code::WriterOffsetBeforeType, Code::WriterV1FieldWidths}) {
    options.severity_overrides[code] = Severity::Silent;
  }
}

}  // namespace

std::string check_report(const Report& report, const Options& options, std::uint64_t size) {
  std::size_t errors = 0, warnings = 0, notes = 0;
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < report.findings.size(); ++i) {
    const Finding& f = report.findings[i];
    const std::string where =
        fmt::format("finding {} ({} at {})", i, code_string(f.code), f.offset);
    if (f.offset < previous) return where + ": findings are not sorted by offset";
    previous = f.offset;
    if (f.offset > size) return where + ": offset past the end of the file";
    if (f.code == Code::UnreadableFile) return where + ": an unreadable buffer";
    if (f.severity == Severity::Silent) return where + ": a silent finding is reported";
    if (f.severity != options.severity(f.code)) return where + ": not at its profile's severity";
    if (f.message.empty()) return where + ": no message";
    if (!printable_utf8(f.message) || !printable_utf8(f.path) || !printable_utf8(f.hint)) {
      return where + ": raw bytes in the message, path or hint";
    }
    errors += f.severity == Severity::Error;
    warnings += f.severity == Severity::Warning;
    notes += f.severity == Severity::Note;
  }
  if (report.findings.size() > options.limits.max_findings) return "more findings than the limit";
  if (report.findings_dropped > 0 && report.findings.size() != options.limits.max_findings) {
    return "findings dropped below the limit";
  }
  if (errors > report.errors || warnings > report.warnings || notes > report.notes) {
    return "the counts are below the findings kept";
  }
  if (report.errors + report.warnings + report.notes !=
      report.findings.size() + report.findings_dropped) {
    return "the counts do not add up to the findings, kept and dropped";
  }
  if (report.exit_status() != (report.errors != 0 ? 1 : 0)) return "exit status against errors";
  if (report.passed() != (report.errors == 0)) return "passed() against errors";
  const Facts& facts = report.facts;
  if (facts.file_size != size) return "facts: wrong file size";
  if (facts.kv_count && facts.kv_read > *facts.kv_count)
    return "facts: more pairs read than declared";
  if (facts.tensor_count && facts.tensors_read > *facts.tensor_count) {
    return "facts: more tensor infos read than declared";
  }
  // The data section may start past the end of a file without tensors (gguf-py does not pad).
  const bool data_inside = facts.data_start && *facts.data_start <= size;
  if (data_inside != facts.tensor_data_size.has_value() ||
      (data_inside && *facts.tensor_data_size != size - *facts.data_start)) {
    return "facts: tensor data size against data start";
  }
  return {};
}

namespace {

// `sarif_roots`: which SARIF renderings (bit 0 absolute URIs, bit 1 relative to a root); a
// SARIF document with its rules' help costs five validations of a small file to write and
// parse back, so a fuzzing run writes at most one of the two.
std::string check_renderings(const Report& report, const Options& options, unsigned sarif_roots) {
  const std::span<const Report> reports(&report, 1);
  for (const bool color : {false, true}) {
    const std::string text = render_text(report, TextStyle{color, false});
    if (text.empty()) return "empty text output";
    if (color) continue;  // escape sequences
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      if (!printable_utf8(std::string_view(text).substr(start, end - start))) {
        return "raw bytes in the text output";
      }
      start = end + 1;
    }
  }
  const auto json =
      nlohmann::json::parse(render_json(reports, options, report.exit_status()), nullptr, false);
  if (json.is_discarded()) return "the JSON output does not parse";
  const auto& file = json["files"][0];
  if (file["findings"].size() != report.findings.size()) return "JSON: findings lost";
  if (json["summary"]["exit_status"] != report.exit_status()) return "JSON: exit status";
  if (file["summary"]["errors"] != report.errors) return "JSON: error count";
  // SARIF with absolute file URIs, and relative to a root (--sarif-root) the report's path may
  // or may not be under.
  for (const bool rooted : {false, true}) {
    if ((sarif_roots & (rooted ? 2U : 1U)) == 0) continue;
    SarifOptions sarif_options;
    if (rooted) sarif_options.root = "/tmp";
    const auto sarif =
        nlohmann::json::parse(render_sarif(reports, options, sarif_options), nullptr, false);
    if (sarif.is_discarded()) return "the SARIF output does not parse";
    if (sarif["runs"][0]["results"].size() != report.findings.size()) return "SARIF: results lost";
  }
  // GitHub's workflow commands: a line per finding, then the summary line; each on one line.
  const std::string github = render_github(reports);
  if (static_cast<std::size_t>(std::count(github.begin(), github.end(), '\n')) <
      report.findings.size() + 1) {
    return "GitHub output: a finding or the summary lost";
  }
  // Errors only, and the total line of a run of two files.
  const std::string quiet = render_text(report, TextStyle{false, true});
  if (report.errors == 0 && report.findings_dropped == 0 &&
      quiet.find("error[") != std::string::npos) {
    return "quiet text: an error where the report has none";
  }
  const Report two[] = {report, report};
  const std::string total = render_text_total(two, TextStyle{false, false});
  if (total.rfind("2 files: ", 0) != 0) return "the total line: " + total;
  return {};
}

// `ggufcheck dump` against the report: the verdict of the report, JSON that parses, the counts
// of an accepted file equal to its lists.
std::string check_dump(Bytes bytes, const Report& report, const Options& options, DumpLevel level) {
  const Dump d = dump(bytes, options, level);
  if (d.exit_status != (report.passed() ? 0 : 1)) return "dump: exit status against the report";
  const auto json = nlohmann::json::parse(d.json, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return "dump: the output does not parse";
  if (json.value("ok", !report.passed()) != report.passed()) return "dump: ok against the report";
  if (!report.passed() || level < DumpLevel::Structure) return {};
  if (json["metadata"].size() != std::stoull(json["kv_count"].get<std::string>()) ||
      json["tensors"].size() != std::stoull(json["tensor_count"].get<std::string>())) {
    return "dump: counts against the lists";
  }
  for (const auto& tensor : json["tensors"]) {
    if (level == DumpLevel::Data && tensor["data_sha256"].get<std::string>().size() != 64) {
      return "dump: a tensor without its data hash";
    }
  }
  return {};
}

// `ggufcheck info` of the same bytes: the report's verdict, every pair read listed, text and
// JSON that render (JSON that parses).
std::string check_info(Bytes bytes, const Report& report, const Options& options, bool full) {
  InfoOptions info_options;
  info_options.full = full;
  const Info info = info_bytes(bytes, options, info_options);
  if (info.report.exit_status() != report.exit_status()) return "info: verdict against the report";
  if (info.metadata.size() != report.facts.kv_read) return "info: pairs lost";
  if (render_info_text(info, false).empty()) return "info: no text";
  const auto json = nlohmann::json::parse(render_info_json({info}), nullptr, false);
  if (json.is_discarded() || json["files"].size() != 1) return "info: the JSON does not parse";
  // The streaming writer (the command's) on the same Info, in JSON and in colour.
  for (const bool as_json : {true, false}) {
    std::string streamed;
    InfoWriter writer(as_json, !as_json, [&](std::string_view part) {
      streamed += part;
      return true;
    });
    writer.write(info);
    if (!writer.finish() || streamed.empty()) return "info: the streaming writer wrote nothing";
    if (as_json && nlohmann::json::parse(streamed, nullptr, false).is_discarded()) {
      return "info: the streamed JSON does not parse";
    }
  }
  return {};
}

}  // namespace

std::string check_pipeline(Bytes bytes) {
  // Writer diagnosis reads a structurally broken file up to 16 more times, with fixed rules
  // whatever the options: it runs in the first run only, and is disabled in the others.
  std::vector<Options> runs;
  for (const Profile profile : kAllProfiles) {
    Options options;
    options.profile = profile;
    if (!runs.empty()) disable_writer_diagnosis(options);
    runs.push_back(options);
  }
  // --werror with limits a hostile file reaches: the dropped-findings and depth paths.
  Options tight;
  tight.werror = true;
  tight.limits.max_findings = 2;
  tight.limits.max_depth = 2;
  tight.limits.max_string_length = 64;
  tight.limits.max_array_length = 16;
  tight.limits.max_kv_count = 8;
  tight.limits.max_tensor_count = 4;
  tight.severity_overrides[Code::TrailingBytes] = Severity::Silent;
  disable_writer_diagnosis(tight);
  runs.push_back(tight);

  // The choices a fuzzed input gets, from its bytes: a campaign runs every option set, renders
  // every format and dumps at every level, while each execution validates once (four
  // validations an input, and renderings that cost twice that, held the targets to a few hundred
  // executions a second). A replay (every_run) checks each input under every run.
  const std::size_t hash = choice_hash(bytes);
  const std::size_t chosen = hash % runs.size();
  const std::size_t rest = hash / runs.size();
  const bool every = every_run;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!every && i != chosen) continue;
    const Options& options = runs[i];
    const Report report = validate(bytes, options);
    std::string problem = check_report(report, options, bytes.size());
    // Rendering in three formats and parsing JSON and SARIF back, and info: one input in four,
    // under its chosen run.
    const bool rendered = i == chosen && rest % 4 == 0;
    if (problem.empty() && rendered) {
      // SARIF on one rendered input in two, with absolute or rooted URIs by turns.
      const std::size_t sarif = (rest / 128) % 4;
      problem = check_renderings(report, options, every ? 3U : sarif < 2 ? 1U << sarif : 0U);
    }
    if (problem.empty() && rendered && bytes.size() <= kMaxDumpedInput) {
      problem = check_info(bytes, report, options, (rest / 4) % 2 == 0);
    }
    // A dump validates again and renders every value: one input of up to 16 KiB in four (a
    // replay: every one), under its chosen run, at a level chosen by its bytes. On the 64 KiB
    // inputs of fuzz_validate it would cost more than the validation, for code small files
    // cover as well.
    const bool dumped = i == chosen && (every || (rest / 8) % 4 == 0);
    if (problem.empty() && bytes.size() <= kMaxDumpedInput && dumped) {
      // The dump is the container's: it is compared with the report without the model checks.
      Options container = options;
      container.model_checks = false;
      const Report container_report = validate(bytes, container);
      problem =
          check_dump(bytes, container_report, container, static_cast<DumpLevel>((rest / 32) % 4));
    }
    if (!problem.empty()) {
      return fmt::format("{} (profile {}{})", problem, to_string(options.profile),
                         options.werror ? ", werror and tight limits" : "");
    }
  }
  return {};
}

std::string check_roundtrip(Bytes bytes) {
  Options strict;
  const bool valid = validate(bytes, strict).passed();
  auto document = read_document(bytes);
  if (!document) return valid ? "a valid file that read_document does not accept" : "";
  // The writer pads to the alignment the file declares; a valid file may declare 2^31, whose
  // padding a fuzzer cannot afford to write.
  for (const KeyValue& kv : document->metadata) {
    if (kv.key != "general.alignment") continue;
    if (kv.value.type == ValueType::Uint32 && kv.value.bits > kMaxRoundTripAlignment) return {};
    break;
  }
  // The writer lays tensor data out back to back whatever the offsets say, so only a valid
  // layout reads back with the same data; without a valid layout, the infos must.
  for (Tensor& tensor : document->tensors) {
    if (!tensor.data) tensor.data.emplace();  // not in the file: write none (never a default)
  }
  const std::vector<std::uint8_t> written = write_bytes(*document);
  const Bytes written_bytes(written.data(), written.size());
  auto reread = read_document(written_bytes);
  if (!reread) return "the writer's output of an accepted document is not readable";
  if (reread->version != document->version || reread->endian != document->endian ||
      reread->metadata != document->metadata) {
    return "the metadata read back differs from the one written";
  }
  if (reread->tensors.size() != document->tensors.size()) return "tensors lost in the round trip";
  for (std::size_t i = 0; i < reread->tensors.size(); ++i) {
    const Tensor& a = document->tensors[i];
    const Tensor& b = reread->tensors[i];
    if (a.name != b.name || a.dims != b.dims || a.type != b.type || a.offset != b.offset) {
      return fmt::format("tensor info {} read back differs from the one written", i);
    }
  }
  if (valid) {
    if (*reread != *document) return "a valid file's tensor data differs after the round trip";
    if (!validate(written_bytes, strict).passed()) return "a valid document written invalid";
    if (write_bytes(*reread) != written) return "writing the document again gives other bytes";
  }
  return {};
}

void fail_if(const std::string& problem, Bytes bytes) {
  if (problem.empty()) return;
  std::fprintf(stderr, "ggufcheck fuzz: invariant broken on a %zu-byte input: %s\n", bytes.size(),
               problem.c_str());
  std::abort();
}

}  // namespace ggufcheck::fuzz
