// One small file per catalogue code a file can show (every code but GGUF0001, which is about
// the input, not its bytes): one fault where the format allows it, on minimal_document(). The
// corpus's codes/ group is this table, the code tests start from it, and the output tests
// (ggufcheck_testkit_files) validate its files.
#pragma once

#include <string_view>
#include <vector>

#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

struct CodeExample {
  Code code;
  std::string_view description;  // one sentence: what the file contains or breaks
  Written (*build)();
  // The other codes its bytes contain, as the format says the fault causes them (never copied
  // from what the validator prints: the corpus tests compare the two).
  std::vector<Code> also = {};
};

// Sorted by code, one per code.
[[nodiscard]] const std::vector<CodeExample>& code_examples();

// The example of `code`; std::out_of_range for GGUF0001.
[[nodiscard]] const CodeExample& code_example(Code code);

// code_example(code).build().
[[nodiscard]] Written example(Code code);

}  // namespace ggufcheck::testing
