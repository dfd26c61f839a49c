// The public entry to remote files, with or without libcurl (remote.cpp or unavailable.cpp).
#include "validate/remote.hpp"

namespace ggufcheck {
namespace detail {

Report remote_failure_report(const std::string& shown, const RemoteOutcome& outcome) {
  Report report = unreadable_report(shown, outcome.why);
  if (!report.findings.empty()) report.findings.front().hint = outcome.hint;
  report.interrupted = outcome.interrupted;
  return report;
}

}  // namespace detail

Report validate_url(const std::string& url, const Options& options) {
  detail::Validated out;
  Report report;
  const detail::RemoteOutcome outcome =
      detail::visit_remote(url, options, url, out, [&] { report = std::move(out.report); });
  if (outcome.state != detail::RemoteOutcome::State::Read) {
    return detail::remote_failure_report(url, outcome);
  }
  return report;
}

}  // namespace ggufcheck
