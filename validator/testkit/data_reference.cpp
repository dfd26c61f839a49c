#include "data_reference.hpp"

#include <cmath>
#include <cstddef>
#include <cstring>

namespace ggufcheck::testing {
namespace {

using detail::BlockScan;
using detail::DataField;
using detail::DataTally;
using detail::kNoBlock;

enum class Check : std::uint8_t {
  None,      // nothing (integers, q8_1, removed ids)
  Elements,  // a plain float element per block
  D,         // an f16 d
  DThenM,    // an f16 d, then an f16 m or dmin
  D32,       // an f32 d
  Iq1m,      // the hidden f16 scale of iq1_m
  Mxfp4,     // e == 0xFF
  Nvfp4,     // four UE4M3 bytes
};

struct Type {
  std::uint32_t bytes = 0;
  Check check = Check::None;
  std::uint32_t at = 0;        // offset of d (or e, or the scales[] words, or d[0..3])
  unsigned element_width = 0;  // plain floats: 2, 4 or 8
  DataField second = DataField::None;
  bool bf16 = false;
};

// The block tables (ggml-common.h), type by type.
Type type_of(std::uint32_t id) {
  switch (id) {
    case 0: return {4, Check::Elements, 0, 4};
    case 1: return {2, Check::Elements, 0, 2};
    case 2: return {18, Check::D};
    case 3: return {20, Check::DThenM, 0, 0, DataField::M};
    case 6: return {22, Check::D};
    case 7: return {24, Check::DThenM, 0, 0, DataField::M};
    case 8: return {34, Check::D};
    case 9: return {36};
    case 10: return {84, Check::DThenM, 80, 0, DataField::Dmin};
    case 11: return {110, Check::D, 108};
    case 12: return {144, Check::DThenM, 0, 0, DataField::Dmin};
    case 13: return {176, Check::DThenM, 0, 0, DataField::Dmin};
    case 14: return {210, Check::D, 208};
    case 15: return {292, Check::D32};
    case 16: return {66, Check::D};
    case 17: return {74, Check::D};
    case 18: return {98, Check::D};
    case 19: return {50, Check::D};
    case 20: return {18, Check::D};
    case 21: return {110, Check::D};
    case 22: return {82, Check::D};
    case 23: return {136, Check::D};
    case 24: return {1};
    case 25: return {2};
    case 26: return {4};
    case 27: return {8};
    case 28: return {8, Check::Elements, 0, 8};
    case 29: return {56, Check::Iq1m, 48};
    case 30: return {2, Check::Elements, 0, 2, DataField::None, true};
    case 34: return {54, Check::D, 52};
    case 35: return {66, Check::D, 64};
    case 39: return {17, Check::Mxfp4};
    case 40: return {36, Check::Nvfp4};
    case 41: return {18, Check::D};
    case 42: return {18, Check::D};
    default: return {};  // removed (4, 5, 31-33, 36-38) and unknown ids
  }
}

std::uint64_t little_endian(const std::uint8_t* p, unsigned width) {
  std::uint64_t value = 0;
  for (unsigned i = 0; i < width; ++i) value |= std::uint64_t{p[i]} << (8 * i);
  return value;
}

// What a float's bits are, from its exponent and mantissa fields.
enum class Class { Finite, Inf, NaN };

Class classify(std::uint64_t bits, unsigned exponent_bits, unsigned mantissa_bits) {
  const std::uint64_t exponent =
      (bits >> mantissa_bits) & ((std::uint64_t{1} << exponent_bits) - 1);
  const std::uint64_t mantissa = bits & ((std::uint64_t{1} << mantissa_bits) - 1);
  if (exponent != (std::uint64_t{1} << exponent_bits) - 1) return Class::Finite;
  return mantissa == 0 ? Class::Inf : Class::NaN;
}

Class classify_f16(std::uint64_t bits) {
  return classify(bits, 5, 10);
}

// ggml checks an f64 element after converting it to float: a finite double at or above
// FLT_MAX + half of FLT_MAX's ulp (2^128 - 2^103) rounds to a float infinity.
Class classify_f64_as_ggml(std::uint64_t bits) {
  const Class what = classify(bits, 11, 52);
  if (what != Class::Finite) return what;
  double value;
  std::memcpy(&value, &bits, sizeof value);
  const double overflows = std::ldexp(1.0, 128) - std::ldexp(1.0, 103);
  return std::fabs(value) >= overflows ? Class::Inf : Class::Finite;
}

// Notes a bad value of block `index` (blocks come in order, so the first one noted stays).
void note(DataTally& tally, std::uint64_t index, Class what, DataField field, std::uint64_t bits) {
  tally.count += 1;
  if (what == Class::NaN) tally.nan += 1;
  if (what == Class::Inf) tally.inf += 1;
  if (tally.first == kNoBlock) {
    tally.first = index;
    tally.field = field;
    tally.bits = bits;
  }
}

}  // namespace

std::uint32_t reference_block_bytes(std::uint32_t type) {
  return type_of(type).bytes;
}

BlockScan reference_scan_blocks(std::uint32_t type, const std::uint8_t* data,
                                std::uint64_t blocks) {
  BlockScan scan;
  const Type t = type_of(type);
  for (std::uint64_t index = 0; index < blocks; ++index) {
    const std::uint8_t* block = data + index * t.bytes;
    for (std::uint32_t i = 0; i < t.bytes; ++i) {
      if (block[i] != 0) scan.nonzero = true;
    }
    switch (t.check) {
      case Check::None: break;
      case Check::Elements: {
        const std::uint64_t bits = little_endian(block, t.element_width);
        Class what = Class::Finite;
        if (t.element_width == 2) what = t.bf16 ? classify(bits, 8, 7) : classify(bits, 5, 10);
        if (t.element_width == 4) what = classify(bits, 8, 23);
        if (t.element_width == 8) what = classify_f64_as_ggml(bits);
        if (what != Class::Finite) note(scan.non_finite, index, what, DataField::Element, bits);
        break;
      }
      case Check::D: {
        const std::uint64_t d = little_endian(block + t.at, 2);
        if (classify_f16(d) != Class::Finite) {
          note(scan.non_finite, index, classify_f16(d), DataField::D, d);
        }
        break;
      }
      case Check::DThenM: {
        const std::uint64_t d = little_endian(block + t.at, 2);
        const std::uint64_t m = little_endian(block + t.at + 2, 2);
        if (classify_f16(d) != Class::Finite) {
          note(scan.non_finite, index, classify_f16(d), DataField::D, d);
        } else if (classify_f16(m) != Class::Finite) {
          note(scan.non_finite, index, classify_f16(m), t.second, m);
        }
        break;
      }
      case Check::D32: {
        const std::uint64_t d = little_endian(block + t.at, 4);
        if (classify(d, 8, 23) != Class::Finite) {
          note(scan.non_finite, index, classify(d, 8, 23), DataField::D, d);
        }
        break;
      }
      case Check::Iq1m: {
        // Word w's bits 12..15 are the scale's bits 4w..4w+3.
        std::uint64_t scale = 0;
        for (unsigned word = 0; word < 4; ++word) {
          const std::uint64_t value = little_endian(block + t.at + 2 * word, 2);
          scale |= (value >> 12) << (4 * word);
        }
        if (classify_f16(scale) != Class::Finite) {
          note(scan.non_finite, index, classify_f16(scale), DataField::HiddenScale, scale);
        }
        break;
      }
      case Check::Mxfp4:
        if (block[t.at] == 0xFF) note(scan.non_finite, index, Class::NaN, DataField::E, 0xFF);
        break;
      case Check::Nvfp4:
        for (std::uint8_t sub = 0; sub < 4; ++sub) {
          const std::uint8_t byte = block[t.at + sub];
          if (byte != 0x7F && byte < 0x80) continue;
          note(scan.nvfp4_scale, index, byte == 0x7F ? Class::NaN : Class::Finite,
               DataField::SubScale, byte);
          if (scan.nvfp4_scale.first == index) scan.nvfp4_scale.sub = sub;
          break;
        }
        break;
    }
  }
  return scan;
}

}  // namespace ggufcheck::testing
