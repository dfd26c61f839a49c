// Facts of the GGUF format (gguf-format.md): value types, ggml tensor types, fixed sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace ggufcheck {

enum class Endian : std::uint8_t { Little, Big };

enum class ValueType : std::uint32_t {
  Uint8 = 0,
  Int8 = 1,
  Uint16 = 2,
  Int16 = 3,
  Uint32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  Uint64 = 10,
  Int64 = 11,
  Float64 = 12,
};

inline constexpr std::uint32_t kValueTypeCount = 13;
inline constexpr std::uint32_t kValueTypeCountV1 = 10;  // v1 knew types 0..9 only
inline constexpr std::uint32_t kDefaultAlignment = 32;
inline constexpr std::uint32_t kMaxDims = 4;
inline constexpr std::uint64_t kReferenceStringLimit = 1ULL << 30;  // ggml rejects longer
inline constexpr std::uint64_t kReferenceArrayLimit = 1ULL << 30;
inline constexpr std::uint64_t kReferenceTensorNameLimit = 64;  // ggml requires length < 64
inline constexpr std::uint64_t kMaxKeyLength = 65535;
inline constexpr std::uint64_t kInt64Limit = 1ULL << 63;  // counts and dims are int64 in ggml

// The widths and record sizes of the format. Counts, lengths and dims are u32 in version 1
// files and u64 since version 2.
[[nodiscard]] constexpr std::uint32_t size_width(bool narrow) {
  return narrow ? 4 : 8;
}
[[nodiscard]] constexpr std::uint64_t header_size(bool narrow) {
  return 8 + 2 * size_width(narrow);
}
// The smallest metadata pair (an empty key, a u8 value) and tensor info (an empty name, no dims).
[[nodiscard]] constexpr std::uint64_t min_pair_size(bool narrow) {
  return size_width(narrow) + 4 + 1;
}
[[nodiscard]] constexpr std::uint64_t min_tensor_info_size(bool narrow) {
  return size_width(narrow) + 4 + 4 + 8;
}

// Payload size of a scalar type; 0 for string, array and unknown types.
[[nodiscard]] std::uint32_t scalar_size(ValueType type);
[[nodiscard]] bool is_valid_value_type(std::uint32_t raw, std::uint32_t version);
[[nodiscard]] std::string_view to_string(ValueType type);

struct TensorTypeInfo {
  std::uint32_t id;
  std::string_view name;
  std::uint32_t block_size;  // elements per block; 0 for removed ids
  std::uint32_t type_size;   // bytes per block; 0 for removed ids
  [[nodiscard]] bool removed() const { return block_size == 0; }
  // Anything that is not a plain float or integer type.
  [[nodiscard]] bool quantized() const;
  // Ids the reference readers learned late (2025-08 .. 2026-07).
  [[nodiscard]] bool recent() const { return id >= 39; }
};

inline constexpr std::uint32_t kTensorTypeCount = 43;
// nullptr when the id is not in the table (43 and above).
// The standard keys whose types the checks know (gguf-format.md section 4), and the suffixes of
// the "{arch}." count keys. For the fuzz dictionary and mutator, which write what loaders trust.
struct StandardKeyType {
  std::string_view key;
  ValueType type;          // Array for arrays
  ValueType element_type;  // arrays only
};
[[nodiscard]] std::span<const StandardKeyType> standard_keys();
[[nodiscard]] std::span<const std::string_view> architecture_count_key_suffixes();

[[nodiscard]] const TensorTypeInfo* tensor_type(std::uint32_t id);

// The byte size of a tensor (ne[0] first), or nullopt when its type or dims do not define one
// (overflow included; a zero dim makes it 0 whatever the others). The one rule the reader's
// layout, the checks, the writer and dump use.
[[nodiscard]] std::optional<std::uint64_t> tensor_nbytes(std::uint32_t type,
                                                         std::span<const std::uint64_t> dims);
[[nodiscard]] std::optional<std::uint32_t> find_tensor_type(std::string_view name);

}  // namespace ggufcheck
