#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "artifacts/artifacts.hpp"
#include "checks/checks.hpp"
#include "data/scan.hpp"
#include "diagnose/diagnose.hpp"
#include "ggufcheck/validate.hpp"
#include "llama_loader/token_index.hpp"
#include "portability/portability.hpp"
#include "read/reader.hpp"
#include "templates/template_checks.hpp"
#include "validate/validate.hpp"

namespace ggufcheck {

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

// What a check needs of the index before it can run.
enum class Needs : std::uint8_t {
  Nothing,  // runs on whatever was read, even a cut file
  Header,   // a complete header (the version and counts are known)
};

// An adapter's base model (--base), read as a file by this pipeline.
Status validate_base(const std::string& path, const Options& options,
                     const std::function<void(const Report&, const FileIndex&)>& use) {
  Validated validated;
  return with_input(path, [&](const Input& input) {
    validate_input(input, nullptr, options, path, validated);
    use(validated.report, validated.index);
  });
}

// What a stage is given: the index, its layout, and what was built beside the reading.
struct StageInputs {
  const FileIndex& index;
  const DataLayout& layout;
  TokenIndexObserver* tokens;  // null when no token index was started
};

// Each stage's function, called with what it needs of the inputs.
template <void (*check)(const FileIndex&, const DataLayout&, Sink&)>
void run_stage(const StageInputs& in, Sink& sink) {
  check(in.index, in.layout, sink);
}
void run_model_stage(const StageInputs& in, Sink& sink) {
  check_model_stage(in.index, in.layout, sink, validate_base, in.tokens);
}

// The check registry: every check, in the order the pipeline runs it (findings at one offset
// keep this order), with the catalogue area its codes belong to. `structural` checks decide
// whether the bytes lay out as GGUF: writer diagnosis re-reads a file under each hypothesis
// with only those.
struct CheckStage {
  std::string_view name;
  Area area;
  bool structural;
  Needs needs;
  void (*run)(const StageInputs&, Sink&);
};

constexpr CheckStage kCheckStages[] = {
    {"keys", Area::Metadata, true, Needs::Nothing, run_stage<check_keys>},
    {"values", Area::Metadata, false, Needs::Nothing, run_stage<check_values>},
    {"tensor-infos", Area::TensorInfo, true, Needs::Nothing, run_stage<check_tensor_infos>},
    {"layout", Area::DataLayout, true, Needs::Nothing, run_stage<check_layout>},
    {"standard-keys", Area::StandardKeys, false, Needs::Header, run_stage<check_standard_keys>},
    {"portability", Area::Portability, false, Needs::Header, run_stage<check_portability>},
    {"chat-templates", Area::ChatTemplate, false, Needs::Header, run_stage<check_templates>},
    {"model", Area::Model, false, Needs::Header, run_model_stage},
};

bool satisfied(Needs needs, const FileIndex& index) {
  switch (needs) {
    case Needs::Nothing: return true;
    case Needs::Header: return index.header_complete;
  }
  return false;
}

}  // namespace

DataLayout run_checks(FileIndex& file_index, Sink& sink, Checks checks,
                      TokenIndexObserver* tokens) {
  read_model(file_index, sink, tokens);
  const FileIndex& read = file_index;  // from here on, nothing changes the index
  const DataLayout layout = resolve_layout(read, sink);
  const StageInputs inputs{read, layout, tokens};
  for (const CheckStage& stage : kCheckStages) {
    if (checks == Checks::Structure && !stage.structural) continue;
    if (satisfied(stage.needs, read)) stage.run(inputs, sink);
  }
  if (checks == Checks::All) {
    diagnose_writer(read.input, read.tail, sink, [](FileIndex& index, Sink& structure_sink) {
      (void)run_checks(index, structure_sink, Checks::Structure);
    });
  }
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
  FileIndex& index = out.index;
  index = FileIndex{};
  index.input = input;
  index.tail = tail;
  // The vocabulary's tokens are indexed on a second thread while the reader reads on
  // (llama_loader/token_index.hpp), when the model checks will want them and a thread is free.
  {
    std::optional<TokenIndexObserver> tokens;
    if (options.model_checks && options.helper_thread && std::thread::hardware_concurrency() > 1) {
      tokens.emplace();
    }
    out.layout = run_checks(index, sink, Checks::All, tokens ? &*tokens : nullptr);
  }  // the token index's thread is joined: nothing reads the input on another thread past here
  const DataLayout& layout = out.layout;

  Report& report = out.report;
  report = Report{};
  // The data check, last: whenever the tensor layout is known, whatever else the file has, and
  // only its findings of tensors whose bytes were all seen. Where it cannot run, the report says
  // so (GGUF0003): asked for, it is never silently skipped.
  const auto data_cannot_run =
      options.data.enabled ? DataScan::cannot_run(index, layout) : std::nullopt;
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
      DataScan scan(index, layout, options, index.input.size());
      scan.scan_input(index.input);
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
  facts.file_size = index.size();
  if (index.version != 0 || index.header_complete) facts.version = index.version;
  facts.endian = index.endian;
  if (index.header_complete) {
    facts.tensor_count = index.tensor_count;
    facts.kv_count = index.kv_count;
  }
  facts.kv_read = index.metadata.size();
  facts.tensors_read = index.tensors.size();
  facts.alignment = layout.alignment;
  if (layout.data_start) {
    facts.data_start = *layout.data_start;
    if (*layout.data_start <= index.size()) {
      facts.tensor_data_size = index.size() - *layout.data_start;
    }
  }
  finish_report(report, sink.take(), sink.dropped());
}

}  // namespace detail

Report validate(Bytes bytes, const Options& options, std::string path) {
  return detail::validate_input(detail::Input(bytes), nullptr, options, std::move(path));
}

}  // namespace ggufcheck
