// The test data of the diagnostic codes: one entry per code (code_table.cpp), holding all that
// the tests know of it.
// - `example`: one small file that shows the code (every code but GGUF0001, which is about the
//   input, not its bytes, and the retired ones): one fault where the format allows it, on
//   minimal_document() or on the llama model of model_document(). The corpus's codes/ group is
//   these files, the code tests start from them, and the output tests (ggufcheck_testkit_files)
//   validate them.
// - `scenarios`: the named cases of the code tests (test_codes.cpp, Codes/CodeTest), each a file
//   and where the code's finding must be in it (scenario.hpp).
// - `faults`: the targeted faults of the property tests (faults.hpp) that produce the code, or
//   `no_fault`, why no single edit of a small valid file reaches it.
// - `writer_mistake`: for GGUF1901 .. GGUF1904, the writer's mistake the note diagnoses
//   (Codes/CodeWriterDiagnosis).
// validator/testkit/README.md says what a new code's entry needs.
//
// The tensor-data codes (6xxx) exist only with the data check (check --data): their examples are
// valid containers whose tensor bytes hold the fault, and every other example's tensors are zero
// bytes, which the data check would report as GGUF6005. So an example marked `data` is validated
// with the data check on, and the others without it.
//
// The split-set codes (8xxx) whose fault needs several files have a set as their example: its
// files (`build_set`, no `build`), written to a folder corpus/codes/GGUFnnnn-<name>/ and
// validated together (validate_set), each with the codes the set's checks report on it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "documents.hpp"
#include "faults.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/writer.hpp"
#include "scenario.hpp"

namespace ggufcheck::testing {

struct CodeExample {
  std::string_view description;  // one sentence: what the file contains or breaks
  Written (*build)() = nullptr;  // null for a set (build_set)
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

// A case of the code tests, named GGUFnnnn_<label>.
struct CodeScenario {
  std::string label;
  std::function<Scenario()> make;
};

// A targeted fault (faults.hpp) of the code its entry is about.
struct TargetedFault {
  std::string_view name;
  // false: the rest of the file is re-read in another layout, and only the fault's own findings
  // are required (see the edit).
  bool exact = true;
  void (*apply)(Applier&) = nullptr;  // the edit, as calls on faults.cpp's Applier
  std::string_view edit;              // what the edit is
};

// A mistake of a hand-written GGUF writer (the course chapter's, docs/format.md): the
// WriteOptions flag that makes the writer commit it.
struct WriterMistake {
  std::string_view label;  // the test is named GGUFnnnn_<label>
  bool WriteOptions::*flag = nullptr;
};

struct CodeEntry {
  Code code;
  CodeExample example = {};  // none: no build and no build_set
  std::vector<CodeScenario> scenarios = {};
  std::vector<TargetedFault> faults = {};
  std::string_view no_fault = {};  // no faults: why no single edit reaches the code
  std::optional<WriterMistake> writer_mistake = {};

  [[nodiscard]] bool has_example() const {
    return example.build != nullptr || example.build_set != nullptr;
  }
};

// Every entry, sorted by code, at most one per code (checked when the table is built).
[[nodiscard]] const std::vector<CodeEntry>& code_table();

// The entry of `code`; nullptr when the table has none.
[[nodiscard]] const CodeEntry* code_entry(Code code);

// The example of `code`; std::out_of_range for a code without one (GGUF0001).
[[nodiscard]] const CodeExample& code_example(Code code);
// code_example(code).build(); std::out_of_range for an example that is a set.
[[nodiscard]] Written example(Code code);
// code_example(code).build_set(); std::out_of_range for an example that is one file.
[[nodiscard]] std::vector<ExampleFile> example_set(Code code);

// --- GGUF1002's files that are not GGUF ---------------------------------------------------------
// One per kind that bad-magic's message names: each is a scenario of GGUF1002, and the BadMagic
// tests of test_codes.cpp compare the whole message.

struct NotGguf {
  std::string label;  // the scenario is named GGUF1002_<label>
  ByteVector bytes;
  std::string message;  // the whole message
  std::string hint_has;
};

[[nodiscard]] std::vector<NotGguf> not_gguf_samples();

// What those files are built from.
[[nodiscard]] ByteVector text_bytes(std::string_view text);
[[nodiscard]] ByteVector concat(ByteVector a, const ByteVector& b);
[[nodiscard]] ByteVector le64(std::uint64_t v);
// A zip whose first local header names `name` (enough of a zip for the identification: the
// signature, the header fields, the name).
[[nodiscard]] ByteVector zip_local_header(std::string_view name);

}  // namespace ggufcheck::testing
