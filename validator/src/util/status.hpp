// Success, or why not: what a step returns when it can fail for a reason a user reads (a file
// that cannot be opened, a base model that cannot be read). Not an exception: the caller reports
// the reason as a finding and goes on with the other inputs.
#pragma once

#include <string>
#include <utility>

namespace ggufcheck::detail {

class [[nodiscard]] Status {
 public:
  static Status success() { return Status(); }
  static Status failure(std::string why) { return Status(std::move(why)); }

  [[nodiscard]] bool ok() const { return !failed_; }
  // Why it failed (empty when it did not).
  [[nodiscard]] const std::string& why() const { return why_; }

 private:
  Status() = default;
  explicit Status(std::string why) : why_(std::move(why)), failed_(true) {}
  std::string why_;
  bool failed_ = false;
};

}  // namespace ggufcheck::detail
