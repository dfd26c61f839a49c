// Renderers of reports: compiler-style text, JSON (docs/json-output.md) and SARIF 2.1.0.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "ggufcheck/validate.hpp"
#include "ggufcheck/version.hpp"

namespace ggufcheck {

inline constexpr int kJsonSchemaVersion = 1;

struct TextStyle {
  bool color = false;
  bool quiet = false;  // errors only, no summaries
};

[[nodiscard]] std::string render_text(const Report& report, const TextStyle& style);
// The last line of render_text: "PATH: pass: 0 errors, 1 warning, 0 notes (v3, ...)".
[[nodiscard]] std::string render_summary_line(const Report& report, const TextStyle& style);
// "160 bytes", "14.2 KiB", "1.2 GiB" (exact below 1 KiB).
[[nodiscard]] std::string human_size(std::uint64_t bytes);
[[nodiscard]] std::string render_json(std::span<const Report> reports, const Options& options,
                                      int exit_status);

// GitHub Actions workflow commands: one "::error file=PATH,title=CODE name::message" line per
// finding (warning, notice for the other severities), which the runner shows as annotations on
// the file, then each file's summary line and, with several files, the total line.
[[nodiscard]] std::string render_github(std::span<const Report> reports);

struct SarifOptions {
  // The base of each rule's helpUri (the page GGUFnnnn.md is appended); empty: the build's
  // default, GGUFCHECK_HELP_BASE_URL (the repository's docs/diagnostics/).
  std::string help_base;
  // --sarif-root DIR: artifact URIs relative to DIR with uriBaseId "SRCROOT"; unset: absolute
  // file:// URIs.
  std::optional<std::string> root;
};
[[nodiscard]] std::string render_sarif(std::span<const Report> reports, const Options& options,
                                       const SarifOptions& sarif = {});
// The one total line of a text run over several files:
// "N files: P passed, F failed, U unreadable\n" (coloured like the per-file summary when
// style.color); P counts exit_status 0, F exit_status 1, U exit_status 2.
[[nodiscard]] std::string render_text_total(std::span<const Report> reports,
                                            const TextStyle& style);

// A file name (or a message that holds one) as text output shows it: escaped as keys are when it
// holds control bytes (C0, DEL, C1), bidi overrides (U+202A..U+202E, U+2066..U+2069), invalid
// UTF-8 or a backslash, as it is otherwise.
[[nodiscard]] std::string shown_name(std::string_view name);

// The catalogue, for `ggufcheck list` and `explain`.
[[nodiscard]] std::string render_catalogue_text();
[[nodiscard]] std::string render_catalogue_json();
[[nodiscard]] std::string render_explanation(Code code);

}  // namespace ggufcheck
