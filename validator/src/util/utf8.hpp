// UTF-8 validation (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace ggufcheck::detail {

// A shift-based DFA (one table load and one shift per byte, no branches): the fast yes/no
// answer for the millions of short strings of a vocabulary. find_invalid_utf8 below locates
// the error once this says there is one.
namespace utf8_dfa {

// States, numbered; a state is stored as its bit offset (state * 6) in the packed rows.
enum State : std::uint8_t {
  kAccept,
  kError,
  kNeed1,    // one continuation byte 80..BF
  kNeed2,    // two continuation bytes
  kAfterE0,  // A0..BF, then one more (no overlong 3-byte forms)
  kAfterED,  // 80..9F, then one more (no surrogates)
  kAfterF0,  // 90..BF, then two more (no overlong 4-byte forms)
  kNeed3,    // three continuation bytes (after F1..F3)
  kAfterF4,  // 80..8F, then two more (nothing above U+10FFFF)
  kStateCount,
};

constexpr State next(State s, unsigned b) {
  const bool cont = b >= 0x80 && b <= 0xBF;
  switch (s) {
    case kAccept:
      if (b < 0x80) return kAccept;
      if (b >= 0xC2 && b <= 0xDF) return kNeed1;
      if (b == 0xE0) return kAfterE0;
      if (b == 0xED) return kAfterED;
      if (b >= 0xE1 && b <= 0xEF) return kNeed2;
      if (b == 0xF0) return kAfterF0;
      if (b >= 0xF1 && b <= 0xF3) return kNeed3;
      if (b == 0xF4) return kAfterF4;
      return kError;
    case kNeed1: return cont ? kAccept : kError;
    case kNeed2: return cont ? kNeed1 : kError;
    case kAfterE0: return b >= 0xA0 && b <= 0xBF ? kNeed1 : kError;
    case kAfterED: return b >= 0x80 && b <= 0x9F ? kNeed1 : kError;
    case kAfterF0: return b >= 0x90 && b <= 0xBF ? kNeed2 : kError;
    case kNeed3: return cont ? kNeed2 : kError;
    case kAfterF4: return b >= 0x80 && b <= 0x8F ? kNeed2 : kError;
    default: return kError;
  }
}

// rows[b] holds, at bit offset 6*s, the bit offset of next(s, b).
constexpr std::array<std::uint64_t, 256> make_rows() {
  std::array<std::uint64_t, 256> rows{};
  for (unsigned b = 0; b < 256; ++b) {
    for (unsigned s = 0; s < kStateCount; ++s) {
      rows[b] |= static_cast<std::uint64_t>(next(static_cast<State>(s), b) * 6) << (s * 6);
    }
  }
  return rows;
}
inline constexpr std::array<std::uint64_t, 256> kRows = make_rows();

}  // namespace utf8_dfa

[[nodiscard]] inline bool is_valid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::uint64_t state = 0;
  std::size_t i = 0;
  while (i < n) {
    // Whole ASCII words while between characters: most of most vocabularies.
    if (state == 0 && n - i >= 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, s + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    state = utf8_dfa::kRows[s[i]] >> (state & 63);
    ++i;
  }
  return (state & 63) == utf8_dfa::kAccept;
}

// The same answer for a large region, with SIMD where the processor has it (utf8.cpp), and
// the number of 0x00 bytes in it, in the same pass.
struct RegionScan {
  bool valid_utf8 = true;
  std::uint64_t zero_bytes = 0;
};
[[nodiscard]] RegionScan scan_region(std::string_view text);
[[nodiscard]] inline bool is_valid_utf8_region(std::string_view text) {
  return scan_region(text).valid_utf8;
}

// Whether the text holds a 0x00 byte: a word at a time, without a call per short string.
[[nodiscard]] inline bool has_nul(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  for (; n - i >= 8; i += 8) {
    std::uint64_t v = 0;
    std::memcpy(&v, s + i, 8);
    if (((v - 0x0101010101010101ULL) & ~v & 0x8080808080808080ULL) != 0) return true;
  }
  for (; i < n; ++i) {
    if (s[i] == 0) return true;
  }
  return false;
}

// Index of the first byte of the first invalid sequence, or npos when the text is valid.
[[nodiscard]] inline std::size_t find_invalid_utf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time: most of a vocabulary is ASCII.
    if (n - i >= 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, s + i, 8);
      if ((word & 0x8080808080808080ULL) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t len = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (len > n - i) return i;
    if (s[i + 1] < lo || s[i + 1] > hi) return i;
    for (std::size_t k = 2; k < len; ++k) {
      if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
    }
    i += len;
  }
  return std::string_view::npos;
}

}  // namespace ggufcheck::detail
