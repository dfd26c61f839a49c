// The one walker over recorded values: the reader checked their grammar once; everything that
// needs the elements of an array or the value of a pair afterwards (the value checks, dump,
// read_document) iterates them here, with every read still checked. A failed read (which the
// reader's checks make unreachable) ends the walk with false, never with a guess.
#pragma once

#include <cstdint>
#include <string_view>

#include "ggufcheck/format.hpp"
#include "ggufcheck/validate.hpp"
#include "index/file_index.hpp"

namespace ggufcheck::detail {

// A signed integer value from its raw bits (host order, zero-extended from `width` bytes): two's
// complement at the stored width, as the file holds it.
[[nodiscard]] inline std::int64_t sign_extended(std::uint64_t bits, std::uint32_t width) {
  const std::uint32_t shift = 64 - 8 * width;
  return static_cast<std::int64_t>(bits << shift) >> shift;
}

// What a visitor sees. Each call returns false to stop the walk.
//   bool scalar(ValueType type, std::uint64_t bits, std::uint64_t offset)
//   bool string(std::string_view text, std::uint64_t offset, std::uint64_t length)
//       offset/length: the whole string, its length field included
//   bool begin_array(ValueType element_type, std::uint64_t count, std::uint64_t count_offset)
//   bool end_array()
class ValueWalker {
 public:
  ValueWalker(const FileIndex& index, std::uint64_t offset)
      : cursor_(index.input.cursor(offset, index.endian)),
        width_(index.size_width()),
        terminator_(index.terminator()) {}

  // One value of `type` at the walker's position.
  template <typename Visitor>
  bool value(ValueType type, Visitor& visit, std::uint32_t depth = 0) {
    if (type == ValueType::String) return string(visit);
    if (type == ValueType::Array) {
      std::uint32_t element_type = 0;
      if (!cursor_.read(element_type) || element_type >= kValueTypeCount) return false;
      return array(static_cast<ValueType>(element_type), visit, depth);
    }
    const std::uint64_t at = cursor_.pos();
    std::uint64_t bits = 0;
    if (!cursor_.read_width(bits, scalar_size(type))) return false;
    return visit.scalar(type, bits, at);
  }

  // The elements of an array whose element type was read: the count, then each element.
  template <typename Visitor>
  bool array(ValueType element_type, Visitor& visit, std::uint32_t depth = 0) {
    const std::uint64_t count_offset = cursor_.pos();
    std::uint64_t count = 0;
    if (!cursor_.read_width(count, width_) || depth >= kMaxDepthLimit) return false;
    if (!visit.begin_array(element_type, count, count_offset)) return false;
    for (std::uint64_t i = 0; i < count; ++i) {
      if (!value(element_type, visit, depth + 1)) return false;
    }
    return visit.end_array();
  }

  [[nodiscard]] std::uint64_t pos() const { return cursor_.pos(); }

 private:
  template <typename Visitor>
  bool string(Visitor& visit) {
    const std::uint64_t at = cursor_.pos();
    std::uint64_t length = 0;
    std::string_view text;
    if (!cursor_.read_width(length, width_) || !cursor_.read_bytes(length, text) ||
        !cursor_.skip(terminator_)) {
      return false;
    }
    return visit.string(text, at, cursor_.pos() - at);
  }

  Cursor cursor_;
  std::uint32_t width_;
  std::uint64_t terminator_;
};

// Walks pair i's value.
template <typename Visitor>
bool walk_value(const FileIndex& index, std::size_t i, Visitor& visit) {
  ValueWalker walker(index, index.value_range(i).offset);
  return walker.value(index.metadata[i].type(), visit);
}

}  // namespace ggufcheck::detail
