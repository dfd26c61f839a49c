#include "validate/growing.hpp"

#include <algorithm>

#include "data/scan.hpp"
#include "read/reader.hpp"
#include "validate/validate.hpp"

namespace ggufcheck::detail {

Probe probe_input(Bytes bytes, const Options& options, const StreamTail* tail) {
  Options quiet = options;
  quiet.limits.max_findings = 0;
  Sink sink(quiet);
  Probe probe;
  probe.index.input = Input(bytes);
  probe.index.tail = tail;
  read_model(probe.index, sink);
  const FileIndex& m = probe.index;
  probe.layout = resolve_layout(m, sink);
  probe.tensors_complete = m.tensors_complete;
  probe.stop = std::max(m.metadata_end, m.infos_end);
  return probe;
}

std::vector<StreamTail::Probe> tail_probes(const Probe& probe, std::uint64_t from) {
  std::vector<StreamTail::Probe> probes;
  for (const auto& [begin, end] : probe.layout.padding_ranges(probe.index, from)) {
    probes.push_back({begin, end, 0, 0, false});
  }
  std::sort(probes.begin(), probes.end(),
            [](const StreamTail::Probe& a, const StreamTail::Probe& b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
            });
  probes.erase(std::unique(probes.begin(), probes.end(),
                           [](const StreamTail::Probe& a, const StreamTail::Probe& b) {
                             return a.begin == b.begin;
                           }),
               probes.end());
  return probes;
}

bool TailPass::feed(std::uint64_t at, Bytes bytes) {
  const std::uint64_t chunk_end = at + bytes.size();
  if (scan_ != nullptr && !scan_->feed(at, bytes)) return false;
  std::vector<StreamTail::Probe>& probes = tail_.probes;
  std::uint64_t pos = at;
  while (pos < chunk_end) {
    while (next_ < probes.size() && probes[next_].begin <= pos) pending_.push_back(next_++);
    const std::uint64_t limit =
        next_ < probes.size() ? std::min(chunk_end, probes[next_].begin) : chunk_end;
    if (pending_.empty()) {
      pos = limit;
      if (next_ >= probes.size()) break;
      continue;
    }
    const Input passing(bytes);
    const auto hit = passing.first_nonzero(pos - at, limit - at);
    if (!hit) {
      pos = limit;
      continue;
    }
    const std::uint64_t where = at + hit->first;
    for (const std::size_t i : pending_) {
      StreamTail::Probe& probe = probes[i];
      if (where < probe.end) {
        probe.found = true;
        probe.nonzero = where;
        probe.value = hit->second;
      }
    }
    pending_.clear();
    pos = where + 1;
  }
  return true;
}

Report with_limit_finding(Report report, std::uint64_t max_findings, std::uint64_t offset,
                          std::string message, std::string hint) {
  ++report.errors;
  if (max_findings == 0) {
    ++report.findings_dropped;
    return report;
  }
  // What was not read is why the file fails, so it is kept: at the limit, the finding kept last
  // (by offset) makes room for it and is counted as dropped instead.
  if (report.findings.size() >= max_findings) {
    report.findings.resize(max_findings - 1);
    ++report.findings_dropped;
  }
  const Finding finding{Code::LimitExceeded, Severity::Error, offset, 0, "file",
                        std::move(message),  std::move(hint)};
  const auto at = std::upper_bound(report.findings.begin(), report.findings.end(), offset,
                                   [](std::uint64_t o, const Finding& f) { return o < f.offset; });
  report.findings.insert(at, finding);
  return report;
}

}  // namespace ggufcheck::detail
