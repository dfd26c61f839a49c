// What build this is: the version, the git commit it was built from, and the llama.cpp whose
// loader the llama.cpp profile and the model checks follow.
#pragma once

#include <string>
#include <string_view>

namespace ggufcheck {

// "0.1.0" (the project's version).
[[nodiscard]] std::string_view tool_version();
// The git commit of the build, 12 hex digits ("-modified" when tracked files had been edited),
// or "unknown" (a tree without git history, unless the packager named one: GGUFCHECK_GIT_COMMIT).
[[nodiscard]] std::string_view tool_commit();
// The pinned llama.cpp the generated tables come from: "llama.cpp de3ff815ea7d (node-llama-cpp
// 3.22.1)".
[[nodiscard]] std::string_view llama_cpp_version();
// `ggufcheck --version`: "ggufcheck 0.1.0 (git 80b97e1abcd1)\nllama.cpp profile: <llama.cpp>"
// (no final line break).
[[nodiscard]] std::string version_text();

}  // namespace ggufcheck
