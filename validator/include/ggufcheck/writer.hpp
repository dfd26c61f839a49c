// The writer: a document (owned values) -> GGUF bytes. Used by the tests, the samples, the
// corpus and the fuzzers. Besides correct files it writes deliberately broken ones: every
// field can be overridden, and the layout it returns says where each field landed so a test
// can patch bytes precisely.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ggufcheck/format.hpp"

namespace ggufcheck {

struct Value {
  ValueType type = ValueType::Uint8;
  std::uint64_t bits = 0;  // integers (two's complement), floats (IEEE bits), bool byte
  std::string text;        // String
  ValueType element_type = ValueType::Uint8;  // Array
  std::vector<Value> items;                   // Array

  static Value u8(std::uint8_t v) { return integer(ValueType::Uint8, v); }
  static Value i8(std::int8_t v) { return integer(ValueType::Int8, static_cast<std::uint8_t>(v)); }
  static Value u16(std::uint16_t v) { return integer(ValueType::Uint16, v); }
  static Value i16(std::int16_t v) {
    return integer(ValueType::Int16, static_cast<std::uint16_t>(v));
  }
  static Value u32(std::uint32_t v) { return integer(ValueType::Uint32, v); }
  static Value i32(std::int32_t v) {
    return integer(ValueType::Int32, static_cast<std::uint32_t>(v));
  }
  static Value u64(std::uint64_t v) { return integer(ValueType::Uint64, v); }
  static Value i64(std::int64_t v) {
    return integer(ValueType::Int64, static_cast<std::uint64_t>(v));
  }
  static Value f32(float v);
  static Value f64(double v);
  // Any byte may be written, to produce non-canonical bools.
  static Value boolean(bool v) { return integer(ValueType::Bool, v ? 1 : 0); }
  static Value bool_byte(std::uint8_t byte) { return integer(ValueType::Bool, byte); }
  static Value string(std::string v);
  static Value array(ValueType element_type, std::vector<Value> items);
  static Value integer(ValueType type, std::uint64_t bits) {
    Value v;
    v.type = type;
    v.bits = bits;
    return v;
  }
  bool operator==(const Value&) const = default;
};

struct KeyValue {
  std::string key;
  Value value;
  std::optional<std::uint32_t> raw_type;  // written instead of value.type (payload unchanged)
  bool operator==(const KeyValue&) const = default;
};

struct Tensor {
  std::string name;
  std::vector<std::uint64_t> dims;      // ne[0] first; n_dims = dims.size()
  std::uint32_t type = 0;               // ggml type id
  std::optional<std::uint64_t> offset;  // default: the running sum of padded sizes
  // The bytes written for this tensor. Default: nbytes zero bytes when nbytes is computable and
  // at most 64 MiB, else none (hostile shapes are written without their claimed data).
  std::optional<std::vector<std::uint8_t>> data;
  bool operator==(const Tensor&) const = default;
};

struct Document {
  std::uint32_t version = 3;
  Endian endian = Endian::Little;
  std::vector<KeyValue> metadata;
  std::vector<Tensor> tensors;
  bool operator==(const Document&) const = default;
};

// Ways to write a file wrong on purpose. The defaults write a correct file.
struct WriteOptions {
  std::optional<std::uint64_t> tensor_count;  // header overrides
  std::optional<std::uint64_t> kv_count;
  std::optional<std::uint32_t> version_field;  // written instead of document.version
  std::optional<std::uint32_t> alignment;      // default: general.alignment if a u32, else 32
  std::uint8_t padding_byte = 0;
  bool pad_after_last_tensor = true;
  bool pad_when_no_tensors = false;    // ggml's C writer pads; gguf-py does not
  std::vector<std::uint8_t> trailing;  // appended after everything
  // The mistakes of the course chapter (gguf-format.md section 7):
  bool nul_terminated_strings = false;  // a NUL after every string
  bool header_alignment_field = false;  // u32 alignment + 4 padding bytes after the counts
  bool offset_before_type = false;      // tensor info: offset, then type
  bool narrow_widths = false;           // 32-bit counts and lengths (implied by version 1)
};

// Where each field of the written file landed.
struct WrittenPair {
  std::uint64_t offset = 0, key_offset = 0, type_offset = 0, value_offset = 0, end = 0;
};
struct WrittenTensor {
  std::uint64_t offset = 0, name_offset = 0, n_dims_offset = 0, dims_offset = 0, type_offset = 0,
                offset_offset = 0, data_position = 0, nbytes = 0;
};
struct WrittenLayout {
  std::vector<WrittenPair> pairs;
  std::vector<WrittenTensor> tensors;
  std::uint64_t infos_end = 0;
  std::uint64_t data_start = 0;
  std::uint32_t alignment = kDefaultAlignment;
};

struct Written {
  std::vector<std::uint8_t> bytes;
  WrittenLayout layout;
};

[[nodiscard]] Written write(const Document& document, const WriteOptions& options = {});
[[nodiscard]] inline std::vector<std::uint8_t> write_bytes(const Document& document,
                                                           const WriteOptions& options = {}) {
  return write(document, options).bytes;
}

// Writes the bytes to path (its directories created as needed); false when that fails. For the
// programs that write sample files and the corpus.
[[nodiscard]] bool save_file(const std::filesystem::path& path,
                             const std::vector<std::uint8_t>& bytes);

// tensor_nbytes (format.hpp) for the writer's dims.
[[nodiscard]] inline std::optional<std::uint64_t> tensor_nbytes(
    std::uint32_t type, const std::vector<std::uint64_t>& dims) {
  return tensor_nbytes(type, std::span<const std::uint64_t>(dims));
}

}  // namespace ggufcheck
