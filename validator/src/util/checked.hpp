// Overflow-checked arithmetic on untrusted numbers (every product and sum of numbers a file
// supplies goes through these): false when the result does not fit.
#pragma once

#include <cstdint>

namespace ggufcheck::detail {

[[nodiscard]] inline bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}
[[nodiscard]] inline bool checked_add(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_add_overflow(a, b, &out);
}
// Round up to a multiple of alignment (alignment > 0).
[[nodiscard]] inline bool checked_round_up(std::uint64_t v, std::uint64_t alignment,
                                           std::uint64_t& out) {
  const std::uint64_t rem = v % alignment;
  if (rem == 0) {
    out = v;
    return true;
  }
  return checked_add(v, alignment - rem, out);
}

}  // namespace ggufcheck::detail
