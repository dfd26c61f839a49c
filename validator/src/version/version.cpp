#include "ggufcheck/version.hpp"

#include <fmt/format.h>

#include "llama_loader/interpreter.hpp"

namespace ggufcheck {
namespace detail {
extern const std::string_view kGitCommit;  // commit.cpp, written at build time
}  // namespace detail

std::string_view tool_version() {
  return GGUFCHECK_VERSION;
}

std::string_view tool_commit() {
  return detail::kGitCommit;
}

std::string_view llama_cpp_version() {
  return detail::llama_cpp_tables_version();
}

std::string version_text() {
  return fmt::format("ggufcheck {} (git {})\nllama.cpp profile: {}", tool_version(), tool_commit(),
                     llama_cpp_version());
}

}  // namespace ggufcheck
