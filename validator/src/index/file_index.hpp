// The index of a GGUF file as the reader recorded it: where each element is and what the
// checks need to know of it, compactly (16 bytes per metadata pair and per tensor info, 16 more
// per array), and no bytes: keys, strings, dims and offsets are read back through the input's
// cursor from the positions recorded here. Records are contiguous in a file, so each one ends
// where the next begins and its lengths follow from its neighbour's position.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "ggufcheck/bytes.hpp"
#include "ggufcheck/format.hpp"
#include "input/cursor.hpp"
#include "util/blocks.hpp"

namespace ggufcheck::detail {

// Offsets inside an input always fit in 60 bits (no file system or mapping reaches 2^60 bytes;
// the reader refuses an input that does), which leaves 4 bits for a value type beside them.
inline constexpr std::uint64_t kOffsetLimit = std::uint64_t{1} << 60;

// A metadata pair: where its key's length field is, its value type and one payload word.
class MetadataEntry {
 public:
  MetadataEntry() = default;
  MetadataEntry(std::uint64_t key_offset, ValueType type, std::uint64_t payload)
      : offset_and_type_(key_offset | (static_cast<std::uint64_t>(type) << 60)),
        payload_(payload) {}
  [[nodiscard]] std::uint64_t key_offset() const { return offset_and_type_ & (kOffsetLimit - 1); }
  [[nodiscard]] ValueType type() const { return static_cast<ValueType>(offset_and_type_ >> 60); }
  // Numbers and bools: the raw bits in host order. Strings: the length. Arrays: the index of
  // their record in FileIndex::arrays.
  [[nodiscard]] std::uint64_t payload() const { return payload_; }

 private:
  std::uint64_t offset_and_type_ = 0;
  std::uint64_t payload_ = 0;
};

// What the reader learnt of an array value (top-level arrays only; nested ones are walked).
struct ArrayRecord {
  std::uint64_t count = 0;
  std::uint64_t key_length : 48 = 0;  // the pair's key (the value's length does not tell it)
  std::uint64_t element_type : 4 = 0;
  // String arrays: the reader's scan of the element bytes (made while they were in cache)
  // found every element valid UTF-8, without a NUL and within ggml's string limit.
  std::uint64_t strings_clean : 1 = 0;
  [[nodiscard]] ValueType elements() const { return static_cast<ValueType>(element_type); }
};

struct TensorInfo {
  std::uint64_t name_offset = 0;  // the name's length field; the info ends where the next begins
  std::uint32_t type = 0;         // the ggml type id as stored
  std::uint32_t n_dims = 0;  // as stored (may exceed kMaxDims: reported, and read all the same)
};

// How the bytes are read: as the format says (the default), or under one of the wrong-writer
// hypotheses of writer diagnosis (the course chapter's mistakes, gguf-format.md section 7).
struct Dialect {
  bool nul_terminated_strings = false;  // a NUL byte after every string
  bool header_alignment_field = false;  // u32 alignment + 4 padding bytes after the counts
  bool offset_before_type = false;      // tensor info: ..., dims, offset, type
  bool narrow_widths = false;           // 32-bit counts and lengths whatever the version
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

// Where the reader stopped for want of bytes that the file has but the input does not: the
// input is a prefix of a file whose size the tail gives (a remote file read by growing ranges,
// remote/). needed: an input size that takes the reader past the field it stopped in (at least
// one byte more than it has); 0 when it did not stop so. In a string array it also says how far
// the walk got, from which the array's end can be extrapolated.
struct Shortfall {
  std::uint64_t needed = 0;
  std::uint64_t elements_offset = 0;  // the array's first element
  std::uint64_t walked = 0;           // elements walked
  std::uint64_t count = 0;            // elements in all
  std::uint64_t at = 0;               // where the walk stopped
};

struct FileIndex {
  Input input;                       // the input's bytes (a stream's: those kept)
  const StreamTail* tail = nullptr;  // a stream's bytes past the input, or null
  Shortfall shortfall;               // set by the reader on a prefix (tail != null) only
  Dialect dialect;
  std::uint32_t version = 0;
  Endian endian = Endian::Little;
  std::uint64_t tensor_count = 0;
  std::uint64_t kv_count = 0;
  // Blocks, not one buffer: growing never copies (a copy would double the peak), and memory
  // follows the records actually read, never a count in the file.
  Blocks<MetadataEntry> metadata;
  Blocks<ArrayRecord> arrays;
  Blocks<TensorInfo> tensors;
  bool header_complete = false;
  bool metadata_complete = false;      // every declared pair was read
  bool tensors_complete = false;       // every declared tensor info was read
  std::uint64_t metadata_end = 0;      // end of the last pair read
  std::uint64_t infos_end = 0;         // end of the last tensor info read
  std::uint32_t header_alignment = 0;  // the header's alignment field (Dialect) or 0

  // The input's size (a stream's: kept and passed bytes).
  [[nodiscard]] std::uint64_t size() const {
    return input.size() + (tail != nullptr ? tail->size : 0);
  }
  // 32-bit counts and lengths
  [[nodiscard]] bool narrow() const { return version == 1 || dialect.narrow_widths; }
  // The width of counts, lengths and dims.
  [[nodiscard]] std::uint32_t size_width() const { return narrow() ? 4 : 8; }
  // The NUL after each string under the NUL-terminated dialect.
  [[nodiscard]] std::uint64_t terminator() const { return dialect.nul_terminated_strings ? 1 : 0; }

  // --- metadata pairs: positions follow from the record and the next one's -------------------
  [[nodiscard]] std::uint64_t pair_end(std::size_t i) const {
    return i + 1 < metadata.size() ? metadata[i + 1].key_offset() : metadata_end;
  }
  [[nodiscard]] std::uint64_t key_length(std::size_t i) const;
  [[nodiscard]] std::uint64_t key_bytes_offset(std::size_t i) const {
    return metadata[i].key_offset() + size_width();
  }
  [[nodiscard]] std::string_view key(std::size_t i) const {
    return text(key_bytes_offset(i), key_length(i));
  }
  [[nodiscard]] std::uint64_t type_offset(std::size_t i) const {
    return key_bytes_offset(i) + key_length(i) + terminator();
  }
  [[nodiscard]] ByteRange value_range(std::size_t i) const {
    const std::uint64_t begin = type_offset(i) + 4;
    return {begin, pair_end(i) - begin};
  }
  // String values: where the bytes are, and the bytes.
  [[nodiscard]] std::uint64_t string_offset(std::size_t i) const {
    return value_range(i).offset + size_width();
  }
  [[nodiscard]] std::string_view string_value(std::size_t i) const {
    return text(string_offset(i), metadata[i].payload());
  }
  // Array values: the record and where the count is.
  [[nodiscard]] const ArrayRecord& array(std::size_t i) const {
    return arrays[static_cast<std::size_t>(metadata[i].payload())];
  }
  [[nodiscard]] std::uint64_t count_offset(std::size_t i) const {
    return value_range(i).offset + 4;
  }
  // Array values: where the first element is (past the element type and the count).
  [[nodiscard]] std::uint64_t elements_offset(std::size_t i) const {
    return count_offset(i) + size_width();
  }

  // --- tensor infos ---------------------------------------------------------------------------
  [[nodiscard]] std::uint64_t info_end(std::size_t i) const {
    return i + 1 < tensors.size() ? tensors[i + 1].name_offset : infos_end;
  }
  [[nodiscard]] std::uint64_t name_length(std::size_t i) const {
    const TensorInfo& t = tensors[i];
    return info_end(i) - t.name_offset - size_width() - terminator() - 4 -
           std::uint64_t{t.n_dims} * size_width() - 12;
  }
  [[nodiscard]] std::string_view name(std::size_t i) const {
    return text(tensors[i].name_offset + size_width(), name_length(i));
  }
  [[nodiscard]] std::uint64_t n_dims_offset(std::size_t i) const {
    return tensors[i].name_offset + size_width() + name_length(i) + terminator();
  }
  [[nodiscard]] std::uint64_t dims_offset(std::size_t i) const { return n_dims_offset(i) + 4; }
  [[nodiscard]] std::uint64_t dim_offset(std::size_t i, std::uint32_t d) const {
    return dims_offset(i) + std::uint64_t{d} * size_width();
  }
  // The first kMaxDims dims; unused ones are 1.
  [[nodiscard]] std::array<std::uint64_t, kMaxDims> dims(std::size_t i) const;
  // Dim d of tensor i as stored (any d below its n_dims, past kMaxDims too), when it is inside
  // the input.
  [[nodiscard]] std::optional<std::uint64_t> dim(std::size_t i, std::uint32_t d) const {
    return input.number_at(dim_offset(i, d), size_width(), endian);
  }
  [[nodiscard]] std::uint64_t type_offset_of_tensor(std::size_t i) const {
    return dialect.offset_before_type ? info_end(i) - 4 : info_end(i) - 12;
  }
  [[nodiscard]] std::uint64_t data_offset_offset(std::size_t i) const {
    return dialect.offset_before_type ? info_end(i) - 12 : info_end(i) - 8;
  }
  // The tensor's offset, relative to the data section.
  [[nodiscard]] std::uint64_t data_offset(std::size_t i) const {
    return input.number_at(data_offset_offset(i), 8, endian).value_or(0);
  }

 private:
  // The reader recorded only ranges inside the input: the view exists.
  [[nodiscard]] std::string_view text(std::uint64_t offset, std::uint64_t length) const {
    std::string_view out;
    (void)input.view(offset, length, out);
    return out;
  }
};

}  // namespace ggufcheck::detail
