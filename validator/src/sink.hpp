// Collects findings, applying the profile's severity; silent codes are dropped unformatted.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/validate.hpp"

namespace ggufcheck::detail {

// Escapes untrusted bytes for messages: printable ASCII stays, the rest becomes \xNN,
// and long text is shortened so a 1 GiB key cannot flood a report.
std::string escape(std::string_view bytes, std::size_t max_length = 80);
// kv[3] "general.alignment"
std::string kv_path(std::size_t index, std::string_view key);
// tensor[7] "blk.0.attn_q.weight"
std::string tensor_path(std::size_t index, std::string_view name);

class Sink {
 public:
  explicit Sink(const Options& options) : options_(options) {}

  [[nodiscard]] bool enabled(Code code) const { return options_.severity(code) != Severity::Silent; }
  [[nodiscard]] const Options& options() const { return options_; }
  [[nodiscard]] Profile profile() const { return options_.profile; }

  template <typename... Args>
  void report(Code code, std::uint64_t offset, std::uint64_t length, std::string path,
              std::string hint, fmt::format_string<Args...> format, Args&&... args) {
    const Severity severity = options_.severity(code);
    if (severity == Severity::Silent) return;
    if (findings_.size() >= options_.limits.max_findings) {
      ++dropped_;
      return;
    }
    findings_.push_back(Finding{code, severity, offset, length, std::move(path),
                                fmt::format(format, std::forward<Args>(args)...),
                                std::move(hint)});
  }

  [[nodiscard]] std::vector<Finding> take() { return std::move(findings_); }
  [[nodiscard]] std::uint64_t dropped() const { return dropped_; }

 private:
  const Options& options_;
  std::vector<Finding> findings_;
  std::uint64_t dropped_ = 0;
};

}  // namespace ggufcheck::detail
