// The model of a GGUF file as read: views into the input bytes, each element with its byte range.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ggufcheck/format.hpp"

namespace ggufcheck {

using Bytes = std::span<const std::uint8_t>;

struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  [[nodiscard]] std::uint64_t end() const { return offset + length; }
};

// What the reader learns about a string array while it walks it, so the checks need not walk
// a vocabulary of megabytes a second time: the length fields, and a scan of the element bytes
// (length fields included) made chunk by chunk while they are still in cache.
struct StringLengths {
  std::uint64_t any_bits = 0;  // OR of every length
  std::uint64_t longest = 0;
  std::uint64_t zero_bytes = 0;   // 0x00 bytes inside the length fields
  bool region_valid_utf8 = true;  // the element bytes, as one text
  std::uint64_t region_zero_bytes = 0;
};

// An array is recorded, not materialised: its elements are iterated in place.
struct ArrayView {
  ValueType element_type = ValueType::Uint8;
  std::uint64_t count = 0;
  std::uint64_t count_offset = 0;  // where the element count is stored
  ByteRange elements;              // the element bytes, back to back
  StringLengths lengths;           // string arrays only
};

struct MetadataEntry {
  ByteRange range;               // the whole pair
  std::uint64_t key_offset = 0;  // the key's length field
  std::string_view key;          // the key bytes (may hold any byte)
  std::uint64_t type_offset = 0;
  ValueType type = ValueType::Uint8;
  ByteRange value;           // the value bytes
  std::uint64_t scalar = 0;  // numbers and bools, raw bits in host order
  std::string_view string;   // String values
  ArrayView array;           // Array values

  // The scalar as the requested integer (valid for integer types only).
  [[nodiscard]] std::uint64_t as_unsigned() const { return scalar; }
};

struct TensorInfo {
  ByteRange range;  // the whole tensor info
  std::uint64_t name_offset = 0;
  std::string_view name;
  std::uint64_t n_dims_offset = 0;
  std::uint32_t n_dims = 0;
  std::uint64_t dims_offset = 0;  // first dim; dim i is at dims_offset + i * dim width
  std::uint32_t dim_width = 8;    // 4 in version 1 files
  std::array<std::uint64_t, kMaxDims> dims{1, 1, 1, 1};  // unused dims count as 1
  std::uint64_t type_offset = 0;
  std::uint32_t type = 0;
  std::uint64_t data_offset_offset = 0;
  std::uint64_t data_offset = 0;  // relative to data_start

  [[nodiscard]] std::uint64_t dim_offset(std::uint32_t i) const {
    return dims_offset + static_cast<std::uint64_t>(i) * dim_width;
  }
};

// How the bytes are read: as the format says (the default), or under one of the wrong-writer
// hypotheses of writer diagnosis (the course chapter's mistakes, gguf-format.md section 7).
struct Dialect {
  bool nul_terminated_strings = false;  // a NUL byte after every string
  bool header_alignment_field = false;  // u32 alignment + 4 padding bytes after the counts
  bool offset_before_type = false;      // tensor info: ..., dims, offset, type
  bool narrow_widths = false;           // 32-bit counts and lengths whatever the version
  [[nodiscard]] bool any() const {
    return nul_terminated_strings || header_alignment_field || offset_before_type || narrow_widths;
  }
  bool operator==(const Dialect&) const = default;
};

// What is known of the bytes of a stream past those kept in memory (its tensor data beyond a
// window): how many there are and, for each place where the layout check looks for padding, the
// first non-zero byte at or after it. Filled while the stream passes (input.cpp).
struct StreamTail {
  struct Probe {
    std::uint64_t begin = 0;    // a file offset the layout check may ask about
    std::uint64_t end = 0;      // how far it may ask
    std::uint64_t nonzero = 0;  // the first non-zero byte in [begin, end), when found
    std::uint8_t value = 0;
    bool found = false;
  };
  std::uint64_t size = 0;     // bytes after the kept ones
  std::vector<Probe> probes;  // sorted by begin, one per begin
  // The first non-zero byte in [begin, end) past the kept bytes, or nullptr when there is none or
  // nobody asked for `begin` while the stream passed.
  [[nodiscard]] const Probe* first_nonzero(std::uint64_t begin, std::uint64_t end) const;
};

struct Model {
  Bytes bytes;                       // the input's bytes (a stream's: those kept)
  const StreamTail* tail = nullptr;  // a stream's bytes past `bytes`, or null
  Dialect dialect;
  std::uint32_t version = 0;
  Endian endian = Endian::Little;
  std::uint64_t tensor_count = 0;
  std::uint64_t kv_count = 0;
  std::vector<MetadataEntry> metadata;
  std::vector<TensorInfo> tensors;
  bool header_complete = false;
  bool metadata_complete = false;      // every declared pair was read
  bool tensors_complete = false;       // every declared tensor info was read
  std::uint64_t infos_end = 0;         // end of the tensor infos (valid when tensors_complete)
  std::uint32_t header_alignment = 0;  // the header's alignment field (Dialect) or 0
  std::uint32_t alignment = kDefaultAlignment;  // the one in force
  std::uint64_t data_start = 0;                 // valid when tensors_complete

  // The input's size (a stream's: kept and passed bytes).
  [[nodiscard]] std::uint64_t size() const {
    return bytes.size() + (tail != nullptr ? tail->size : 0);
  }
  // 32-bit counts and lengths
  [[nodiscard]] bool narrow() const { return version == 1 || dialect.narrow_widths; }
};

}  // namespace ggufcheck
