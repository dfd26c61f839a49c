#include <algorithm>

#include "checks/checks.hpp"
#include "ggufcheck/validate.hpp"

namespace ggufcheck {

Severity Options::severity(Code code) const {
  Severity severity = catalogue_entry(code).severity(profile);
  if (const auto it = severity_overrides.find(code); it != severity_overrides.end()) {
    severity = it->second;
  }
  if (werror && severity == Severity::Warning) severity = Severity::Error;
  return severity;
}

bool Report::unreadable() const {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.code == Code::UnreadableFile; });
}

int Report::exit_status() const {
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

void run_checks(Model& model, Sink& sink, Checks checks) {
  read_model(model, sink);
  check_keys(model, sink);
  if (checks == Checks::All) check_values(model, sink);
  check_alignment(model, sink);
  check_tensor_infos(model, sink);
  check_layout(model, sink);
  if (checks == Checks::All && model.header_complete) check_standard_keys(model, sink);
  if (checks == Checks::All) diagnose_writer(model.bytes, model.tail, sink);
}

Report validate_input(Bytes kept, const StreamTail* tail, const Options& options,
                      std::string path) {
  Sink sink(options);
  Model model;
  model.bytes = kept;
  model.tail = tail;
  run_checks(model, sink);

  Report report;
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
  facts.alignment = model.alignment;
  if (model.tensors_complete) {
    facts.data_start = model.data_start;
    if (model.data_start <= model.size()) facts.tensor_data_size = model.size() - model.data_start;
  }
  finish_report(report, sink.take(), sink.dropped());
  return report;
}

}  // namespace detail

Report validate(Bytes bytes, const Options& options, std::string path) {
  return detail::validate_input(bytes, nullptr, options, std::move(path));
}

}  // namespace ggufcheck
