// One small file per catalogue code a file can show (every code but GGUF0001, which is about
// the input, not its bytes): one fault where the format allows it, on minimal_document(). The
// corpus's codes/ group is this table, the code tests start from it, and the output tests
// (ggufcheck_testkit_files) validate its files.
//
// The tensor-data codes (6xxx) exist only with the data check (check --data): their files are
// valid containers whose tensor bytes hold the fault, and every other example's tensors are
// zero bytes, which the data check would report as GGUF6005. So an example marked `data` is
// validated with the data check on, and the others without it.
//
// The split-set codes (8xxx) whose fault needs several files have a set as their example: its
// files (`build_set`, no `build`), written to a folder corpus/codes/GGUFnnnn-<name>/ and
// validated together (validate_set), each with the codes the set's checks report on it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

// One file of an example that is a split set: its name in the set's folder, its bytes, and the
// codes the set's checks report on it (declared, as `also` is).
struct ExampleFile {
  std::string name;
  Written written;
  std::vector<Code> codes;
};

struct CodeExample {
  Code code;
  std::string_view description;  // one sentence: what the file contains or breaks
  Written (*build)();            // null for a set (build_set)
  // The other codes its bytes contain, as the format says the fault causes them (never copied
  // from what the validator prints: the corpus tests compare the two).
  std::vector<Code> also = {};
  // The example needs the data check (check --data, Options::data.enabled) to show its code.
  bool data = false;
  // The example is a split set: its files, in the set's order (the code is on one of them).
  std::vector<ExampleFile> (*build_set)() = nullptr;
  // The example is a LoRA adapter checked against this base model (--base), a corpus file named
  // from the repository's root ("corpus/valid/test-model.gguf"); empty: none.
  std::string_view base = {};
};

// Sorted by code, one per code.
[[nodiscard]] const std::vector<CodeExample>& code_examples();

// The example of `code`; std::out_of_range for GGUF0001.
[[nodiscard]] const CodeExample& code_example(Code code);

// code_example(code).build(); std::out_of_range for an example that is a set.
[[nodiscard]] Written example(Code code);
// code_example(code).build_set(); std::out_of_range for an example that is one file.
[[nodiscard]] std::vector<ExampleFile> example_set(Code code);

}  // namespace ggufcheck::testing
