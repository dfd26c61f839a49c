// The one bounds-checked cursor: the only code that reads input bytes.
// Every check is "requested > available"; no end pointer is ever formed.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "ggufcheck/model.hpp"

namespace ggufcheck::detail {

class Cursor {
 public:
  Cursor(Bytes bytes, Endian endian, std::uint64_t pos = 0)
      : bytes_(bytes), pos_(pos), swap_(endian == Endian::Big) {}

  [[nodiscard]] std::uint64_t pos() const { return pos_; }
  [[nodiscard]] std::uint64_t size() const { return bytes_.size(); }
  [[nodiscard]] std::uint64_t remaining() const { return bytes_.size() - pos_; }
  [[nodiscard]] bool has(std::uint64_t n) const { return n <= remaining(); }

  // A hint to fetch the bytes `ahead` of the cursor: walking a string array is a chain of
  // dependent loads (each length says where the next is), which prefetchers alone serve badly.
  void prefetch(std::uint64_t ahead) const {
    if (ahead < remaining()) __builtin_prefetch(bytes_.data() + pos_ + ahead);
  }

  // Back to a position already passed (to re-read a field and report it).
  void rewind(std::uint64_t pos) {
    if (pos <= pos_) pos_ = pos;
  }

  [[nodiscard]] [[gnu::always_inline]] bool skip(std::uint64_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }

  template <typename T>
  [[nodiscard]] [[gnu::always_inline]] bool read(T& out) {
    if (sizeof(T) > remaining()) return false;
    std::memcpy(&out, bytes_.data() + pos_, sizeof(T));
    if constexpr (sizeof(T) > 1) {
      if (swap_) out = byteswap(out);
    }
    pos_ += sizeof(T);
    return true;
  }

  // A count or length: u32 in version 1 files, u64 otherwise.
  [[nodiscard]] [[gnu::always_inline]] bool read_size(std::uint64_t& out, bool narrow) {
    if (narrow) {
      std::uint32_t v = 0;
      if (!read(v)) return false;
      out = v;
      return true;
    }
    return read(out);
  }

  [[nodiscard]] bool read_bytes(std::uint64_t n, std::string_view& out) {
    if (n > remaining()) return false;
    out = std::string_view(reinterpret_cast<const char*>(bytes_.data() + pos_),
                           static_cast<std::size_t>(n));
    pos_ += n;
    return true;
  }

  template <typename T>
  static T byteswap(T v) {
    if constexpr (sizeof(T) == 2)
      return static_cast<T>(__builtin_bswap16(static_cast<std::uint16_t>(v)));
    if constexpr (sizeof(T) == 4)
      return static_cast<T>(__builtin_bswap32(static_cast<std::uint32_t>(v)));
    if constexpr (sizeof(T) == 8)
      return static_cast<T>(__builtin_bswap64(static_cast<std::uint64_t>(v)));
    return v;
  }

 private:
  Bytes bytes_;
  std::uint64_t pos_;
  bool swap_;
};

// Overflow-checked arithmetic on untrusted numbers: false when the result does not fit.
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
