// The conformance cases as data: one Case per file, with the verdict each profile expects
// (conformance/README.md). generate.cpp writes the files, their canonical outputs and
// manifest.json from this list. The verdicts are declared from gguf-format.md (the spec's rules
// and what the reference reader does), never copied from what ggufcheck prints: the runner
// compares the two.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ggufcheck::conformance {

using ByteVector = std::vector<std::uint8_t>;

enum class Verdict : std::uint8_t { Accept, Reject, Either };

struct Case {
  std::string id;    // y_/n_/i_<area>_<what>; the file is cases/<id>.gguf. Never reused.
  std::string rule;  // the spec rule or reader behaviour the case tests, one sentence
  Verdict spec = Verdict::Accept;
  Verdict llama_cpp = Verdict::Accept;
  std::string error_class;        // for a case some profile rejects: conformance.md's vocabulary
  bool recommended = false;       // level: "recommended" instead of "required"
  std::vector<std::string> tags;  // "hostile", "big"
  std::function<ByteVector()> build;

  [[nodiscard]] std::string area() const;
};

// A real file fetched by conformance/setup (not committed): the pinned bundle's bytes and the
// SHA-256 of `ggufcheck dump --level 3 --profile llama.cpp` of them.
struct RealCase {
  std::string id;
  std::string file;  // under .deps/conformance/llama.cpp/models/
  std::string sha256;
  std::uint64_t size = 0;
  std::string canonical_sha256;
  std::string gguf_version;
  Verdict spec = Verdict::Accept;
  Verdict llama_cpp = Verdict::Accept;
  std::string error_class;
  std::string rule;
};

// Every generated case, sorted by id; ids are unique, and the prefix matches the verdicts.
[[nodiscard]] std::vector<Case> cases();
[[nodiscard]] std::vector<RealCase> real_cases();

// The vocabulary of conformance.md ("Cases").
[[nodiscard]] bool is_error_class(const std::string& name);

}  // namespace ggufcheck::conformance
