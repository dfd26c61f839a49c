// Renderers of reports: compiler-style text, JSON (docs/json-output.md) and SARIF 2.1.0.
#pragma once

#include <span>
#include <string>

#include "ggufcheck/validate.hpp"

namespace ggufcheck {

inline constexpr int kJsonSchemaVersion = 1;
[[nodiscard]] std::string_view tool_version();

struct TextStyle {
  bool color = false;
  bool quiet = false;  // errors only, no summaries
};

[[nodiscard]] std::string render_text(const Report& report, const TextStyle& style);
[[nodiscard]] std::string render_json(std::span<const Report> reports, const Options& options,
                                      int exit_status);
[[nodiscard]] std::string render_sarif(std::span<const Report> reports, const Options& options);

// The catalogue, for `ggufcheck list` and `explain`.
[[nodiscard]] std::string render_catalogue_text();
[[nodiscard]] std::string render_catalogue_json();
[[nodiscard]] std::string render_explanation(Code code);

}  // namespace ggufcheck
