// What a disagreement between `--profile llama.cpp` and llama.cpp's own reader means, shared by
// the differential test (validator/tests/test_differential.cpp) and the differential fuzzer
// (fuzz/fuzz_differential.cpp): one comparison of a file in both, the documented divergences of
// docs/llama-cpp-divergences.md with a predicate that recognises each shape and a witness file
// that shows it, the documented crashes of the reference, and the verdict on a comparison.
// No test framework: the fuzzer links it too.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ggml_reference.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

using ByteVector = std::vector<std::uint8_t>;

// --- one comparison ---------------------------------------------------------------------------

struct Comparison {
  Report report;
  ReferenceResult reference;
  [[nodiscard]] bool ours() const { return report.passed(); }
  [[nodiscard]] bool theirs() const { return reference.loads(); }
  [[nodiscard]] bool agree() const { return ours() == theirs(); }
};

[[nodiscard]] Options llama_cpp_options();

// Validates the bytes with the llama.cpp profile and loads them in the reference.
[[nodiscard]] Comparison compare(GgmlReference& reference, const ByteVector& bytes);

[[nodiscard]] std::vector<Code> error_codes(const Report& report);

// Both verdicts, ggufcheck's errors and what the reference printed.
[[nodiscard]] std::string describe(const Comparison& c);

// ggml_nbytes as ggml computes it, in wrapping size_t arithmetic (ggml.c). For block types the
// row term is ne[0] * type_size / block_size: the product comes first and can wrap.
[[nodiscard]] std::uint64_t ggml_nbytes(const Tensor& t);

// --- the documented divergences ---------------------------------------------------------------
//
// Exactly the list of docs/llama-cpp-divergences.md, in its order. Each has a predicate that
// recognises the shape (used on every disagreement) and a witness file that shows it.

struct Divergence {
  std::string_view id;
  bool reference_loads;  // the direction: llama.cpp loads and ggufcheck fails, or the reverse
  bool (*explains)(const ByteVector& bytes, const Report& report);
  ByteVector (*witness)();
};

extern const std::array<Divergence, 2> kDivergences;

// The documented divergence that explains a disagreement, or nullptr.
[[nodiscard]] const Divergence* explain(const ByteVector& bytes, const Comparison& c);

// The reference's crashes, which count as failures to load, are findings about the reference
// and documented too. None is known for the pinned reader.
struct ReferenceCrash {
  std::string_view id;
  bool (*matches)(const ByteVector& bytes, const Comparison& c);
};

extern const std::array<ReferenceCrash, 0> kReferenceCrashes;

[[nodiscard]] const ReferenceCrash* known_crash(const ByteVector& bytes, const Comparison& c);

// --- the verdict ------------------------------------------------------------------------------

// What a comparison means: fine, or a failure with the reason.
struct Verdict {
  bool ok = true;
  const Divergence* divergence = nullptr;  // a documented disagreement
  const ReferenceCrash* crash = nullptr;   // a documented crash of the reference
  std::string problem;
};

[[nodiscard]] Verdict judge(const ByteVector& bytes, const Comparison& c);

}  // namespace ggufcheck::testing
