#include <algorithm>
#include <string>
#include <thread>

#include "checks/checks.hpp"
#include "data/scan.hpp"
#include "ggufcheck/validate.hpp"
#include "loader/loader.hpp"
#include "loader/token_index.hpp"

namespace ggufcheck {

Severity Options::severity(Code code) const {
  Severity severity = catalogue_entry(code).severity(profile);
  // An override the interfaces refuse (refuse_override) is ignored here too, so that no caller
  // of the library can silence a finding that ends the reading.
  if (const auto it = severity_overrides.find(code);
      it != severity_overrides.end() && !refuse_override(code, it->second)) {
    severity = it->second;
  }
  if (werror && severity == Severity::Warning) severity = Severity::Error;
  return severity;
}

std::optional<std::string> set_limit(Limits& limits, std::string_view name, std::uint64_t value) {
  if (name == "depth") {
    if (value < 1 || value > kMaxDepthLimit) {
      return "depth must be between 1 and " + std::to_string(kMaxDepthLimit);
    }
    limits.max_depth = static_cast<std::uint32_t>(value);
  } else if (name == "kv-count") {
    limits.max_kv_count = value;
  } else if (name == "tensor-count") {
    limits.max_tensor_count = value;
  } else if (name == "string-length") {
    limits.max_string_length = value;
  } else if (name == "array-length") {
    limits.max_array_length = value;
  } else if (name == "findings") {
    limits.max_findings = value;
  } else if (name == "template-bytes") {
    limits.max_template_bytes = value;
  } else {
    return "unknown limit '" + std::string(name) +
           "' (depth, kv-count, tensor-count, string-length, array-length, findings, "
           "template-bytes)";
  }
  return std::nullopt;
}

bool Report::unreadable() const {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.code == Code::UnreadableFile; });
}

int Report::exit_status() const {
  if (interrupted) return 130;
  if (unreadable()) return 2;
  return errors != 0 ? 1 : 0;
}

namespace detail {

void finish_report(Report& report, std::vector<Finding> findings,
                   const std::array<std::uint64_t, 4>& dropped) {
  std::stable_sort(findings.begin(), findings.end(),
                   [](const Finding& a, const Finding& b) { return a.offset < b.offset; });
  report.findings = std::move(findings);
  const auto dropped_of = [&](Severity s) { return dropped[static_cast<std::size_t>(s)]; };
  report.findings_dropped =
      dropped_of(Severity::Error) + dropped_of(Severity::Warning) + dropped_of(Severity::Note);
  report.errors = dropped_of(Severity::Error);
  report.warnings = dropped_of(Severity::Warning);
  report.notes = dropped_of(Severity::Note);
  for (const Finding& f : report.findings) {
    if (f.severity == Severity::Error) ++report.errors;
    if (f.severity == Severity::Warning) ++report.warnings;
    if (f.severity == Severity::Note) ++report.notes;
  }
}

namespace {

// What a check needs of the model before it can run.
enum class Needs : std::uint8_t {
  Nothing,  // runs on whatever was read, even a cut file
  Header,   // a complete header (the version and counts are known)
};

// The check registry: every check, in the order the pipeline runs it (findings at one offset
// keep this order), with the catalogue area its codes belong to. `structural` checks decide
// whether the bytes lay out as GGUF: writer diagnosis re-reads a file under each hypothesis
// with only those.
struct CheckStage {
  std::string_view name;
  Area area;
  bool structural;
  Needs needs;
  void (*run)(const Model&, const Layout&, Sink&);
};

constexpr CheckStage kCheckStages[] = {
    {"keys", Area::Metadata, true, Needs::Nothing, check_keys},
    {"values", Area::Metadata, false, Needs::Nothing, check_values},
    {"tensor-infos", Area::TensorInfo, true, Needs::Nothing, check_tensor_infos},
    {"layout", Area::DataLayout, true, Needs::Nothing, check_layout},
    {"standard-keys", Area::StandardKeys, false, Needs::Header, check_standard_keys},
    {"portability", Area::Portability, false, Needs::Header, check_portability},
    {"chat-templates", Area::ChatTemplate, false, Needs::Header, check_templates},
    {"model", Area::Model, false, Needs::Header, check_model},
};

bool satisfied(Needs needs, const Model& model) {
  switch (needs) {
    case Needs::Nothing: return true;
    case Needs::Header: return model.header_complete;
  }
  return false;
}

}  // namespace

Layout run_checks(Model& model, Sink& sink, Checks checks) {
  read_model(model, sink);
  const Model& read = model;  // from here on, nothing changes the model
  const Layout layout = resolve_layout(read, sink);
  for (const CheckStage& stage : kCheckStages) {
    if (checks == Checks::Structure && !stage.structural) continue;
    if (satisfied(stage.needs, read)) stage.run(read, layout, sink);
  }
  if (checks == Checks::All) diagnose_writer(read.input, read.tail, sink);
  return layout;
}

Report validate_input(const Input& input, const StreamTail* tail, const Options& options,
                      std::string path, const DataScan* streamed) {
  Validated validated;
  validate_input(input, tail, options, std::move(path), validated, streamed);
  return std::move(validated.report);
}

void validate_input(const Input& input, const StreamTail* tail, const Options& options,
                    std::string path, Validated& out, const DataScan* streamed) {
  Sink sink(options);
  Model& model = out.model;
  model = Model{};
  model.input = input;
  model.tail = tail;
  // The vocabulary's tokens are indexed on a second thread while the reader reads on
  // (loader/token_index.hpp), when the model checks will want them and a thread is free.
  if (options.model_checks && options.helper_thread && std::thread::hardware_concurrency() > 1) {
    model.on_string_array = start_token_index;
  }
  out.layout = run_checks(model, sink);
  model.token_index.reset();  // joined: nothing reads the input on another thread past here
  model.on_string_array = nullptr;
  const Layout& layout = out.layout;

  Report& report = out.report;
  report = Report{};
  // The data check, last: whenever the tensor layout is known, whatever else the file has, and
  // only its findings of tensors whose bytes were all seen. Where it cannot run, the report says
  // so (GGUF0003): asked for, it is never silently skipped.
  const auto data_cannot_run =
      options.data.enabled ? DataScan::cannot_run(model, layout) : std::nullopt;
  if (data_cannot_run) {
    sink.report(Code::StageNotRun, 0, 0, Field("data"),
                "fix what stops the reading first; the data check needs every tensor info and "
                "little-endian data",
                "the data check (--data) did not run: {}", *data_cannot_run);
  } else if (options.data.enabled) {
    const auto finish = [&](const DataScan& scan) {
      report.interrupted = scan.cancelled();
      if (report.interrupted) return;
      scan.report(sink);
      report.facts.data_checked = scan.completed();
    };
    if (tail == nullptr) {
      DataScan scan(model, layout, options, model.input.size());
      scan.scan_input(model.input);
      finish(scan);
    } else if (streamed != nullptr) {
      finish(*streamed);
    } else {
      sink.report(Code::StageNotRun, 0, 0, Field("data"), "",
                  "the data check (--data) did not run: the stream's tensor data passed before "
                  "its layout was known");
    }
  }
  report.path = std::move(path);
  Facts& facts = report.facts;
  facts.file_size = model.size();
  if (model.version != 0 || model.header_complete) facts.version = model.version;
  facts.endian = model.endian;
  if (model.header_complete) {
    facts.tensor_count = model.tensor_count;
    facts.kv_count = model.kv_count;
  }
  facts.kv_read = model.metadata.size();
  facts.tensors_read = model.tensors.size();
  facts.alignment = layout.alignment;
  if (layout.data_start) {
    facts.data_start = *layout.data_start;
    if (*layout.data_start <= model.size()) {
      facts.tensor_data_size = model.size() - *layout.data_start;
    }
  }
  finish_report(report, sink.take(), sink.dropped());
}

}  // namespace detail

Report validate(Bytes bytes, const Options& options, std::string path) {
  return detail::validate_input(detail::Input(bytes), nullptr, options, std::move(path));
}

}  // namespace ggufcheck
