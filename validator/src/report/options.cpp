// The options' and the report's own rules: the severity a code gets, the limits by name, the
// exit status.
#include <algorithm>
#include <string>

#include "ggufcheck/validate.hpp"

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

}  // namespace ggufcheck
