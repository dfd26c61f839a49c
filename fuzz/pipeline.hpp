// What the fuzz targets check, as plain functions that a test can call too: each returns the
// broken invariant, or an empty string, and never touches anything outside the bytes given.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ggufcheck/bytes.hpp"
#include "ggufcheck/validate.hpp"

namespace ggufcheck::fuzz {

// The input as a stream of choices for a structured target; past its end every choice is 0.
class Choices {
 public:
  Choices(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  [[nodiscard]] bool empty() const { return at_ >= size_; }
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  // A number in [0, n) (n >= 1).
  std::size_t below(std::size_t n) { return n <= 1 ? 0 : byte() % n; }
  std::uint32_t u16() {
    const std::uint32_t low = byte();
    return low | static_cast<std::uint32_t>(byte()) << 8U;
  }
  template <typename T, std::size_t N>
  const T& one_of(const T (&options)[N]) {
    return options[below(N)];
  }
  // Up to `max` bytes, as many as the next choice says.
  std::string bytes(std::size_t max) {
    std::string out;
    const std::size_t n = below(max + 1);
    for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(byte()));
    return out;
  }
  // The rest of the input.
  std::vector<std::uint8_t> rest() {
    std::vector<std::uint8_t> out(data_ + std::min(at_, size_), data_ + size_);
    at_ = size_;
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// What a target samples under a fuzzing engine is chosen by this hash of the input's size and
// first `prefix` bytes: mutants that keep them keep their choices.
[[nodiscard]] inline std::size_t choice_hash(Bytes bytes, std::size_t prefix = 64) {
  std::size_t hash = bytes.size();
  for (const std::uint8_t byte : bytes.first(std::min(bytes.size(), prefix)))
    hash = hash * 31 + byte;
  return hash;
}

// Set by the replaying main (replay_main.cpp: ctest, fuzz/coverage), and under a fuzzing engine
// by GGUFCHECK_FUZZ_EVERY_RUN in the environment: check_pipeline checks each input under every
// option set. Otherwise, fuzzing, it is false: each input gets one option set, and one input in
// four is rendered and dumped, chosen by its bytes.
extern bool every_run;

// The whole pipeline, as the CLI runs it, under every profile (and once more with --werror and
// tiny limits), rendered as text, JSON and SARIF. The invariants of every report: findings
// sorted by offset and inside the file, each at the severity its options give it, counts and
// exit status consistent with the findings, messages free of raw untrusted bytes, JSON and
// SARIF that parse and say the same as the report, `dump` at every level consistent with it.
[[nodiscard]] std::string check_pipeline(Bytes bytes);

// The invariants of one report of a file of `size` bytes (check_pipeline checks them on every
// report): findings sorted by offset and inside the file, at the severity the options give them,
// never silent or "unreadable", with printable messages; no more than the limit, the dropped
// ones counted; counts, exit status and facts consistent. Also for a report of validate_file or
// validate_set, whose file was readable.
[[nodiscard]] std::string check_report(const Report& report, const Options& options,
                                       std::uint64_t size);

// Whatever read_document accepts, the writer writes back, the reader reads to an equal
// document, and writing that again gives the same bytes.
[[nodiscard]] std::string check_roundtrip(Bytes bytes);

// Prints the broken invariant and aborts (so that the fuzzing engine records the input).
void fail_if(const std::string& problem, Bytes bytes);

}  // namespace ggufcheck::fuzz
