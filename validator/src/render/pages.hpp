// The per-diagnostic pages docs/diagnostics/GGUFnnnn.md, embedded at build time: the build
// generates diagnostic_pages.cpp from them (validator/embed_diagnostic_pages.cmake), and fails
// when a code of the catalogue has no page.
#pragma once

#include <span>
#include <string_view>

namespace ggufcheck::detail {

struct DiagnosticPage {
  unsigned number;          // 4001 for GGUF4001
  std::string_view name;    // the catalogue name, from the page's title
  std::string_view source;  // docs/diagnostics/GGUF4001.md
  std::string_view text;    // the whole page, byte for byte
};

// Every page, in code order (pages of codes not in the catalogue included).
[[nodiscard]] std::span<const DiagnosticPage> diagnostic_pages();

}  // namespace ggufcheck::detail
