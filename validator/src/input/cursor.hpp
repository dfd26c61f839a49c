// The input and its one bounds-checked cursor: the only code that reads input bytes. Every
// check is "requested > available"; no end pointer is ever formed. Everything else in the
// library asks these two classes for values, checked views of byte ranges, or bounded chunks.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "ggufcheck/bytes.hpp"
#include "ggufcheck/format.hpp"
#include "util/checked.hpp"

namespace ggufcheck::detail {

// The one decoder of numbers from input bytes: an unsigned T stored at `at`, in the byte order
// `swap` says (the host's, or swapped). Cursor and StringArrayWalk read with it.
template <typename T>
[[nodiscard]] [[gnu::always_inline]] inline T load_number(const void* at, bool swap) {
  T v = 0;
  std::memcpy(&v, at, sizeof(T));
  if constexpr (sizeof(T) == 2) {
    if (swap) v = static_cast<T>(__builtin_bswap16(static_cast<std::uint16_t>(v)));
  } else if constexpr (sizeof(T) == 4) {
    if (swap) v = static_cast<T>(__builtin_bswap32(static_cast<std::uint32_t>(v)));
  } else if constexpr (sizeof(T) == 8) {
    if (swap) v = static_cast<T>(__builtin_bswap64(static_cast<std::uint64_t>(v)));
  }
  return v;
}
// A count or length of `width` bytes (4 or 8) in the file's byte order.
[[nodiscard]] [[gnu::always_inline]] inline std::uint64_t load_size(const void* at,
                                                                    std::uint32_t width,
                                                                    Endian endian) {
  const bool swap = endian == Endian::Big;
  return width == 8 ? load_number<std::uint64_t>(at, swap) : load_number<std::uint32_t>(at, swap);
}

// The strings of a string array, walked in bytes the input handed over as a view, with the
// cursor's checks (length field, then text, each "requested > available") but the width and
// byte order fixed at compile time: the token index walks a vocabulary on its own thread, and a
// cursor per string cost it a third of its time.
template <std::uint32_t Width, bool Swap>
class StringArrayWalk {
  static_assert(Width == 4 || Width == 8);

 public:
  StringArrayWalk(std::string_view bytes, std::uint64_t first)
      : bytes_(bytes), at_(std::min<std::uint64_t>(first, bytes.size())) {}

  // Where the next string's length field is.
  [[nodiscard]] std::uint64_t offset() const { return at_; }

  // A hint to fetch the bytes `ahead` of the walk: each length says where the next string is,
  // so the processor cannot run ahead by itself.
  void prefetch(std::uint64_t ahead) const {
    if (ahead < bytes_.size() - at_) __builtin_prefetch(bytes_.data() + at_ + ahead);
  }

  // The next string's text; false (and the walk stays) when its length or text is cut.
  [[nodiscard]] [[gnu::always_inline]] bool next(std::string_view& text) {
    const std::uint64_t left = bytes_.size() - at_;
    if (Width > left) return false;
    std::uint64_t length = 0;
    if constexpr (Width == 8) {
      length = load_number<std::uint64_t>(bytes_.data() + at_, Swap);
    } else {
      length = load_number<std::uint32_t>(bytes_.data() + at_, Swap);
    }
    if (length > left - Width) return false;
    text = bytes_.substr(static_cast<std::size_t>(at_ + Width), static_cast<std::size_t>(length));
    at_ += Width + length;
    return true;
  }

 private:
  std::string_view bytes_;
  std::uint64_t at_;
};

class Cursor {
 public:
  Cursor(Bytes bytes, Endian endian, std::uint64_t pos = 0)
      : bytes_(bytes),
        pos_(std::min<std::uint64_t>(pos, bytes.size())),
        swap_(endian == Endian::Big) {}

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
    out = load_number<T>(bytes_.data() + pos_, swap_);
    pos_ += sizeof(T);
    return true;
  }

  // An unsigned number of `width` bytes (1, 2, 4 or 8), widened: a scalar value, or a count or
  // length whose width the version fixes (u32 in version 1 files, u64 otherwise).
  [[nodiscard]] [[gnu::always_inline]] bool read_width(std::uint64_t& out, std::uint32_t width) {
    switch (width) {
      case 1: return read_widened<std::uint8_t>(out);
      case 2: return read_widened<std::uint16_t>(out);
      case 4: return read_widened<std::uint32_t>(out);
      case 8: return read(out);
      default: return false;
    }
  }
  // A branch, not read_width's switch: this runs once per string of a vocabulary.
  [[nodiscard]] [[gnu::always_inline]] bool read_size(std::uint64_t& out, bool narrow) {
    return narrow ? read_widened<std::uint32_t>(out) : read(out);
  }

  // A checked view of the next n bytes.
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
  template <typename T>
  [[gnu::always_inline]] bool read_widened(std::uint64_t& out) {
    T v = 0;
    if (!read(v)) return false;
    out = v;
    return true;
  }

  Bytes bytes_;
  std::uint64_t pos_;
  bool swap_;
};

// The input's bytes, readable only through cursors, checked views and bounded chunks. A file
// the library mapped itself also gives its descriptor: bulk reads then skip holes (which read
// as zeros) and hand the pages they passed back to the kernel, so a scan of gigabytes of
// padding or tensor data costs neither the time to fault them in nor resident memory.
class Input {
 public:
  // The largest piece a bulk read hands over at a time.
  static constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;

  Input() = default;
  explicit Input(Bytes bytes, int mapped_fd = -1) : bytes_(bytes), mapped_fd_(mapped_fd) {}

  [[nodiscard]] std::uint64_t size() const { return bytes_.size(); }
  [[nodiscard]] Cursor cursor(std::uint64_t pos, Endian endian) const {
    return Cursor(bytes_, endian, pos);
  }

  // The bytes [offset, offset + length), when they are all inside the input.
  [[nodiscard]] bool view(std::uint64_t offset, std::uint64_t length, std::string_view& out) const {
    if (offset > size() || length > size() - offset) return false;
    out = std::string_view(reinterpret_cast<const char*>(bytes_.data() + offset),
                           static_cast<std::size_t>(length));
    return true;
  }
  // The same bytes as unsigned bytes (tensor data, for the kernels).
  [[nodiscard]] bool view(std::uint64_t offset, std::uint64_t length, Bytes& out) const {
    if (offset > size() || length > size() - offset) return false;
    out = bytes_.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(length));
    return true;
  }
  // The first bytes, at most n (what identifies a file).
  [[nodiscard]] std::string_view prefix(std::uint64_t n) const {
    std::string_view out;
    (void)view(0, std::min(n, size()), out);
    return out;
  }

  // A number of `width` bytes at offset, when it is inside the input.
  [[nodiscard]] std::optional<std::uint64_t> number_at(std::uint64_t offset, std::uint32_t width,
                                                       Endian endian) const {
    Cursor c = cursor(offset, endian);
    std::uint64_t v = 0;
    if (offset > size() || !c.read_width(v, width)) return std::nullopt;
    return v;
  }

  // What a bulk read does with the holes of a mapped file: hand them over as zeros (without
  // reading them), or skip them (a search for non-zero bytes).
  enum class Holes : std::uint8_t { AsZeros, Skipped };

  // Calls visit(offset, chunk) for the bytes [begin, end) clipped to the input, in order, at
  // most kChunk at a time. Stops when visit returns false; returns whether every chunk was
  // visited.
  template <typename Visit>
  bool chunks(std::uint64_t begin, std::uint64_t end, Visit&& visit,
              Holes holes = Holes::AsZeros) const {
    end = std::min(end, size());
    std::uint64_t at = begin;
    while (at < end) {
      const std::uint64_t data = next_data(at, end);
      if (holes == Holes::Skipped) at = data;
      while (at < data) {  // a hole: zeros
        const std::uint64_t n = std::min(data - at, kChunk);
        if (!visit(at, zeros(n))) return false;
        at += n;
      }
      if (at >= end) break;
      const std::uint64_t n = std::min(end - at, kChunk);
      std::string_view chunk;
      (void)view(at, n, chunk);  // at < end <= size()
      const bool go_on = visit(at, chunk);
      release(at, n);
      if (!go_on) return false;
      at += n;
    }
    return true;
  }

  // The first non-zero byte in [begin, end) (clipped to the input) and its value.
  [[nodiscard]] std::optional<std::pair<std::uint64_t, std::uint8_t>> first_nonzero(
      std::uint64_t begin, std::uint64_t end) const;

  // The descriptor of a file this input maps (it reads holes and gives pages back), or -1.
  [[nodiscard]] int mapped_fd() const { return mapped_fd_; }
  // Where the next byte that is not in a hole is, at or after `at` (end when none before it);
  // `at` itself without a descriptor. Not for concurrent use: it moves the descriptor's offset
  // (and puts it back).
  [[nodiscard]] std::uint64_t next_data(std::uint64_t at, std::uint64_t end) const;
  // Gives back the pages wholly inside [offset, offset + length) of a mapping of our own.
  void release(std::uint64_t offset, std::uint64_t length) const;
  // Tells the kernel that [offset, offset + length) of a mapping of our own will be read front
  // to back once (read-ahead on a file not in the page cache).
  void advise_sequential(std::uint64_t offset, std::uint64_t length) const;

  // Where and why a read_into stopped: the file offset, and the system's words or "the file is
  // shorter than it was".
  struct ReadFailure {
    std::uint64_t at = 0;
    std::string why;
  };
  // Copies [offset, offset + out.size()) into `out`: from the file with pread when this input
  // maps a file of ours (its pages are not faulted in; the reads that fill buffers of their own,
  // the data scan's and the hash engine's), else from the bytes. False, saying where and why,
  // when the file fails or ends first (it shrank while it was read).
  [[nodiscard]] bool read_into(std::uint64_t offset, std::span<std::uint8_t> out,
                               ReadFailure& failure) const;
  // Tells the kernel that [offset, offset + length) of the file will be read with read_into
  // front to back once.
  void advise_sequential_reads(std::uint64_t offset, std::uint64_t length) const;

 private:
  [[nodiscard]] static std::string_view zeros(std::uint64_t n);

  Bytes bytes_;
  int mapped_fd_ = -1;
};

}  // namespace ggufcheck::detail
