// Tensor data for the data check (`check --data`): the block layout of every ggml type as the
// data check sees it, the bytes of a tensor of any type with values planted in chosen fields of
// chosen blocks, and what llama.cpp's ggml_validate_row_data must say about such bytes.
//
// Independent of the library's kernels on purpose: the layout is written from the block tables
// (ggml-common.h), so the differential test compares three readings of the same bytes (ggml's,
// the kernels', this one). Used by the data differential test; meant for the conformance
// suite's data cases too.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ggufcheck::testing::data {

inline constexpr std::uint64_t kNoBlock = UINT64_MAX;

// How a field of a block is encoded.
enum class Encoding : std::uint8_t {
  Raw,        // payload bytes (qs, qh, scales, signs, bsums, integers): every bit pattern decodes
  F16,        // IEEE binary16
  BF16,       // bfloat16
  F32,        // IEEE binary32
  F64,        // IEEE binary64
  E8M0,       // mxfp4's scale byte: 0xFF is its NaN
  UE4M3,      // nvfp4's scale bytes: 0x7F is NaN, bit 7 is not allowed (ggml accepts every byte)
  Iq1mScale,  // iq1_m's f16 scale, kept in the top nibbles of the four u16 words of scales[]
};

[[nodiscard]] std::uint32_t encoding_width(Encoding encoding);  // bytes; 8 for Iq1mScale's span
[[nodiscard]] std::string_view to_string(Encoding encoding);

struct Field {
  std::string_view name;
  std::uint32_t offset = 0;  // in the block
  std::uint32_t size = 0;    // bytes
  Encoding encoding = Encoding::Raw;
  bool checked = false;  // ggml_validate_row_data looks at it
};

struct BlockLayout {
  std::uint32_t type = 0;
  std::string_view name;  // ggml's name, lower case ("q4_0")
  std::uint32_t block_bytes = 0;
  // Every byte of the block once, in offset order, except iq1_m's scale, which overlaps its
  // scales[] and comes last. The checked fields are in the order ggml tests them.
  std::vector<Field> fields;

  [[nodiscard]] bool plain_float() const;  // f32, f16, bf16, f64: a block is one element
  [[nodiscard]] std::vector<std::uint32_t> checked_fields() const;  // indexes into fields
};

// Type ids that are not removed (0..42 without 4, 5, 31..33, 36..38, whose type size is 0:
// ggml_validate_row_data divides by it). q8_1 (9) is in: ggml refuses it, whatever its bytes.
[[nodiscard]] std::span<const std::uint32_t> data_types();
// Throws std::invalid_argument for a removed or unknown id.
[[nodiscard]] const BlockLayout& layout(std::uint32_t type);

// What ggml's check makes of one value of a checked encoding.
enum class Kind : std::uint8_t { Finite, Inf, Nan };
[[nodiscard]] std::string_view to_string(Kind kind);
// F64 is judged as ggml judges it, after a conversion to float: a finite double whose float
// rounding overflows (|x| >= 0x47EFFFFFF0000000, FLT_MAX plus half an ulp) is an infinity.
// E8M0 0xFF is a NaN. UE4M3 and Raw are always Finite (ggml checks neither).
[[nodiscard]] Kind classify(Encoding encoding, std::uint64_t bits);
// An nvfp4 scale byte ggufcheck reports (0x7F, or bit 7 set) and ggml accepts.
[[nodiscard]] bool bad_ue4m3(std::uint64_t bits);

// Raw values worth planting. rejected_values: every encoding of NaN and Inf (both signs, quiet
// and signalling, smallest and largest payloads; f64 also the finite doubles ggml takes for
// infinities; E8M0 0xFF; UE4M3 the bytes ggufcheck flags). edge_values: the finite values at
// the edges (largest, smallest subnormal, zeros of both signs).
[[nodiscard]] std::span<const std::uint64_t> rejected_values(Encoding encoding);
[[nodiscard]] std::span<const std::uint64_t> edge_values(Encoding encoding);

// A value written into block `block`: into field `field` of the layout, at byte `at` of the
// field and `width` bytes wide for a Raw field, or the whole field otherwise (at and width
// ignored). Iq1mScale writes only the scale's nibbles. Little-endian.
struct Plant {
  std::uint64_t block = 0;
  std::uint32_t field = 0;
  std::uint64_t bits = 0;
  std::uint32_t at = 0;
  std::uint32_t width = 0;
};

enum class Fill : std::uint8_t {
  Random,  // random bytes; every typed field then made good (finite, E8M0 != 0xFF, UE4M3 <= 0x7E)
  Edges,   // as Random, and every typed field an edge value
  Zero,    // all 0x00
};

struct TensorSpec {
  std::uint32_t type = 0;
  std::uint64_t blocks = 1;
  Fill fill = Fill::Random;
  std::vector<Plant> plants;      // applied in order after the fill
  std::uint32_t extra_bytes = 0;  // random bytes after the last block (a partial block)
};

// The tensor's bytes: blocks * block_bytes + extra_bytes. Depends only on the spec and the seed.
// Throws std::invalid_argument for a plant outside the tensor or its field.
[[nodiscard]] std::vector<std::uint8_t> tensor_bytes(const TensorSpec& spec, std::uint64_t seed);

// What the data check must find in whole blocks, read through the layout, one block and one field
// at a time. For the plain float types a block is an element.
struct ExpectedScan {
  bool ggml_passes = true;       // ggml_validate_row_data's verdict (false for q8_1, always)
  std::uint64_t bad_blocks = 0;  // blocks with a checked value ggml rejects
  std::uint64_t nan_blocks = 0;  // of them, those whose first such value is a NaN
  std::uint64_t inf_blocks = 0;  // ... an infinity
  std::uint64_t first_bad = kNoBlock;
  std::uint32_t first_field = 0;  // that block's first bad field (index into fields)
  Kind first_kind = Kind::Finite;
  std::uint64_t bad_scale_blocks = 0;  // nvfp4: blocks with a UE4M3 byte bad_ue4m3() flags
  std::uint64_t first_bad_scale = kNoBlock;
  bool nonzero = false;  // some byte is not 0x00
};
[[nodiscard]] ExpectedScan expected_scan(std::uint32_t type, std::span<const std::uint8_t> bytes);

// One line for a failure message: type, block count, fill and plants.
[[nodiscard]] std::string describe(const TensorSpec& spec);

}  // namespace ggufcheck::testing::data
