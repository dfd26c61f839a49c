// The tensor data kernels (kernels.hpp). Highway is used header-only: foreach_target.h compiles
// the HWY_NAMESPACE part below once per target (AVX3, AVX2, SSE4 and the portable baseline on
// x86; the static target alone elsewhere), and the HWY_ONCE part at the end picks one of them
// from the CPU itself. Highway's own dispatch (HWY_DYNAMIC_DISPATCH, hwy::SupportedTargets) lives
// in libhwy, which the static CLI and the libc++ fuzz build cannot link.
//
// The common case is data without a bad value, so every kernel first accumulates, branch-free
// over a group of elements or blocks, a word whose top bit says "something in the group is
// bad", and only a group with a bad value is scanned again precisely (counts, first index).

#ifndef GGUFCHECK_DATA_KERNELS_COMMON
#define GGUFCHECK_DATA_KERNELS_COMMON

#include "data/kernels.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/format.hpp"

// Highway's configuration, before its first inclusion. The x86 targets worth their compile
// time: AVX3 (AVX-512 F/BW/DQ/VL), AVX2, SSE4 and the baseline (EMU128, or SCALAR where
// Highway considers EMU128 broken: g++ < 12.3). Not SSSE3 (SSE4 covers every x86-64 CPU
// that has it but the oldest Atoms) nor AVX3_DL (no op here needs it).
#if defined(__x86_64__) || defined(__i386__)
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_AVX3_DL)
#else
#define HWY_COMPILE_ONLY_STATIC 1
#endif
// Debug and sanitizer builds would turn Highway's HWY_DASSERTs on, and those call hwy::Abort,
// which only libhwy defines.
#define HWY_IS_DEBUG_BUILD 0

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ggufcheck::detail::kernels {

// What a type's blocks hold that is checked.
enum class Kind : std::uint8_t {
  Nothing,   // integer types, q8_1: only `nonzero`
  Float16,   // f16 elements
  BFloat16,  // bf16 elements
  Float32,   // f32 elements
  Float64,   // f64 elements
  F16,       // one f16 scale at `offset`
  F16Pair,   // d at `offset`, then m or dmin (`second`) right after it
  F32,       // q8_K: an f32 d at `offset`
  Iq1m,      // iq1_m: the f16 rebuilt from the top nibbles of the u16 words at `offset`
  Mxfp4,     // the E8M0 byte e at `offset`
  Nvfp4,     // four UE4M3 bytes at `offset`
};

struct FieldLayout {
  Kind kind = Kind::Nothing;
  std::uint32_t offset = 0;
  DataField second = DataField::None;
};

inline FieldLayout layout_of(std::uint32_t type) {
  switch (type) {
    case 0: return {Kind::Float32, 0, DataField::None};
    case 1: return {Kind::Float16, 0, DataField::None};
    case 30: return {Kind::BFloat16, 0, DataField::None};
    case 28: return {Kind::Float64, 0, DataField::None};
    // d first in the block.
    case 2:   // q4_0
    case 6:   // q5_0
    case 8:   // q8_0
    case 20:  // iq4_nl
    case 41:  // q1_0
    case 42:  // q2_0
    case 16:  // iq2_xxs
    case 17:  // iq2_xs
    case 22:  // iq2_s
    case 18:  // iq3_xxs
    case 21:  // iq3_s
    case 19:  // iq1_s
    case 23:  // iq4_xs
      return {Kind::F16, 0, DataField::None};
    // d at the end of the block.
    case 11: return {Kind::F16, 108, DataField::None};  // q3_K
    case 14: return {Kind::F16, 208, DataField::None};  // q6_K
    case 34: return {Kind::F16, 52, DataField::None};   // tq1_0
    case 35: return {Kind::F16, 64, DataField::None};   // tq2_0
    case 3:                                             // q4_1
    case 7:                                             // q5_1
      return {Kind::F16Pair, 0, DataField::M};
    case 10: return {Kind::F16Pair, 80, DataField::Dmin};  // q2_K
    case 12:                                               // q4_K
    case 13:                                               // q5_K
      return {Kind::F16Pair, 0, DataField::Dmin};
    case 15: return {Kind::F32, 0, DataField::None};    // q8_K
    case 29: return {Kind::Iq1m, 48, DataField::None};  // iq1_m
    case 39: return {Kind::Mxfp4, 0, DataField::None};
    case 40: return {Kind::Nvfp4, 0, DataField::None};
    default: return {};  // i8..i64, q8_1
  }
}

template <class T>
inline T load_le(const std::uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof value);  // x86/ARM little-endian hosts: GGUF's byte order
  return value;
}

// iq1_m's hidden f16 scale: the top nibble of each of the four u16 words, word 0 lowest.
inline std::uint16_t iq1m_scale(const std::uint8_t* words) {
  const auto packed = load_le<std::uint64_t>(words);
  return static_cast<std::uint16_t>(((packed >> 12) & 0x000F) | ((packed >> 24) & 0x00F0) |
                                    ((packed >> 36) & 0x0F00) | ((packed >> 48) & 0xF000));
}

inline void note_non_finite(DataTally& tally, std::uint64_t index, bool is_nan, DataField field,
                            std::uint64_t bits) {
  ++tally.count;
  ++(is_nan ? tally.nan : tally.inf);
  if (tally.first == kNoBlock) {  // blocks are noted in order: the first one stays
    tally.first = index;
    tally.field = field;
    tally.bits = bits;
  }
}

// An f16 scale: true (and noted) if it is not finite. ggml tests Inf before NaN.
inline bool check_f16(DataTally& tally, std::uint64_t index, std::uint16_t bits, DataField field) {
  const unsigned magnitude = bits & 0x7FFFu;
  if (magnitude < 0x7C00u) return false;
  note_non_finite(tally, index, magnitude != 0x7C00u, field, bits);
  return true;
}

// One quantized block, precisely: the slow path of a group with a bad block in it.
inline void scan_block_precisely(const FieldLayout& layout, const std::uint8_t* block,
                                 std::uint64_t index, BlockScan& scan) {
  const std::uint8_t* at = block + layout.offset;
  switch (layout.kind) {
    case Kind::F16:
      check_f16(scan.non_finite, index, load_le<std::uint16_t>(at), DataField::D);
      break;
    case Kind::F16Pair:
      if (!check_f16(scan.non_finite, index, load_le<std::uint16_t>(at), DataField::D)) {
        check_f16(scan.non_finite, index, load_le<std::uint16_t>(at + 2), layout.second);
      }
      break;
    case Kind::F32: {
      const auto bits = load_le<std::uint32_t>(at);
      const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
      if (magnitude >= 0x7F800000u) {
        note_non_finite(scan.non_finite, index, magnitude != 0x7F800000u, DataField::D, bits);
      }
      break;
    }
    case Kind::Iq1m:
      check_f16(scan.non_finite, index, iq1m_scale(at), DataField::HiddenScale);
      break;
    case Kind::Mxfp4:
      if (*at == 0xFF) note_non_finite(scan.non_finite, index, true, DataField::E, 0xFF);
      break;
    case Kind::Nvfp4:
      for (std::uint8_t sub = 0; sub < 4; ++sub) {
        // 0x7F is UE4M3's NaN; bytes from 0x80 have the sign bit the unsigned format lacks.
        const std::uint8_t byte = at[sub];
        if (byte < 0x7F) continue;
        DataTally& tally = scan.nvfp4_scale;
        ++tally.count;
        if (byte == 0x7F) ++tally.nan;
        if (tally.first == kNoBlock) {
          tally.first = index;
          tally.field = DataField::SubScale;
          tally.sub = sub;
          tally.bits = byte;
        }
        break;
      }
      break;
    default: break;
  }
}

}  // namespace ggufcheck::detail::kernels

#endif  // GGUFCHECK_DATA_KERNELS_COMMON

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "data/kernels.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

HWY_BEFORE_NAMESPACE();
namespace ggufcheck::detail::kernels::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Vectors per group of the plain float scan: the precise pass counts in lanes of the element's
// width, so a group must stay below 2^15 vectors (u16 lanes); 128 keeps a group in L1.
constexpr std::size_t kGroupVectors = 128;

// The plain float bits of one type: |x| = bits & kMagnitude; |x| > kExponent (all ones) is a
// NaN, kFirstBad <= |x| <= kExponent counts as an infinity.
template <class T, T kMagnitudeMask, T kAllOnesExponent, T kFirstBadMagnitude = kAllOnesExponent>
struct FloatBits {
  using Bits = T;
  static constexpr T kMagnitude = kMagnitudeMask;
  static constexpr T kExponent = kAllOnesExponent;
  static constexpr T kFirstBad = kFirstBadMagnitude;
  // |x| + kBias has the top bit set exactly when |x| >= kFirstBad (|x| < 2^(bits-1): no carry).
  static constexpr T kBias = static_cast<T>((T{1} << (sizeof(T) * 8 - 1)) - kFirstBadMagnitude);
};
using F16Bits = FloatBits<std::uint16_t, 0x7FFF, 0x7C00>;
using BF16Bits = FloatBits<std::uint16_t, 0x7FFF, 0x7F80>;
using F32Bits = FloatBits<std::uint32_t, 0x7FFFFFFFu, 0x7F800000u>;
// ggml checks f64 elements after a conversion to float: from FLT_MAX + half an ulp on
// (2^128 - 2^103), round-to-nearest-even gives a float infinity, so ggml reports "inf" for
// those finite doubles too.
using F64Bits =
    FloatBits<std::uint64_t, 0x7FFFFFFFFFFFFFFFull, 0x7FF0000000000000ull, 0x47EFFFFFF0000000ull>;

// A group with a bad element, precisely: NaN and Inf counted in SIMD over `vectors` whole
// vectors at `p`, the first bad one of the first such group found by a scalar look at its
// `elements` real elements (a zero-padded tail has fewer than its vectors hold).
template <class Bits, class D>
HWY_NOINLINE void CountFloatGroup(D d, const typename Bits::Bits* p, std::size_t vectors,
                                  std::size_t elements, std::uint64_t base, DataTally& tally) {
  using T = typename Bits::Bits;
  const std::size_t lanes = hn::Lanes(d);
  const auto magnitude_mask = hn::Set(d, Bits::kMagnitude);
  const auto exponent = hn::Set(d, Bits::kExponent);
  const auto largest_good = hn::Set(d, static_cast<T>(Bits::kFirstBad - 1));
  auto bads = hn::Zero(d);
  auto nans = hn::Zero(d);
  for (std::size_t v = 0; v < vectors; ++v) {
    const auto magnitude = hn::And(hn::LoadU(d, p + v * lanes), magnitude_mask);
    // A true mask lane is all ones: subtracting it adds one.
    bads = hn::Sub(bads, hn::VecFromMask(d, hn::Gt(magnitude, largest_good)));
    nans = hn::Sub(nans, hn::VecFromMask(d, hn::Gt(magnitude, exponent)));
  }
  HWY_ALIGN T bad_lanes[hn::MaxLanes(d)];
  HWY_ALIGN T nan_lanes[hn::MaxLanes(d)];
  hn::Store(bads, d, bad_lanes);
  hn::Store(nans, d, nan_lanes);
  std::uint64_t bad_count = 0;
  std::uint64_t nan_count = 0;
  for (std::size_t lane = 0; lane < lanes; ++lane) {
    bad_count += bad_lanes[lane];
    nan_count += nan_lanes[lane];
  }
  tally.count += bad_count;
  tally.inf += bad_count - nan_count;
  tally.nan += nan_count;
  if (tally.first != kNoBlock) return;
  for (std::size_t i = 0; i < elements; ++i) {
    T bits;
    std::memcpy(&bits, p + i, sizeof bits);
    if (static_cast<T>(bits & Bits::kMagnitude) >= Bits::kFirstBad) {
      tally.first = base + i;
      tally.field = DataField::Element;
      tally.bits = bits;
      return;
    }
  }
}

template <class Bits>
HWY_NOINLINE void ScanFloats(const std::uint8_t* data, std::uint64_t count, BlockScan& scan) {
  using T = typename Bits::Bits;
  const hn::ScalableTag<T> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto* elements = reinterpret_cast<const T*>(data);  // loaded with LoadU/memcpy only
  const auto magnitude_mask = hn::Set(d, Bits::kMagnitude);
  const auto bias = hn::Set(d, Bits::kBias);
  const auto unflagged_max = hn::Set(d, static_cast<T>((T{1} << (sizeof(T) * 8 - 1)) - 1));
  auto any_bits = hn::Zero(d);
  const std::uint64_t whole_vectors = count / lanes;
  std::uint64_t done = 0;  // vectors
  while (done < whole_vectors) {
    const auto vectors =
        static_cast<std::size_t>(std::min<std::uint64_t>(kGroupVectors, whole_vectors - done));
    const T* group = elements + done * lanes;
    auto flagged = hn::Zero(d);
    for (std::size_t v = 0; v < vectors; ++v) {
      const auto bits = hn::LoadU(d, group + v * lanes);
      any_bits = hn::Or(any_bits, bits);
      flagged = hn::Or(flagged, hn::Add(hn::And(bits, magnitude_mask), bias));
    }
    if (!hn::AllFalse(d, hn::Gt(flagged, unflagged_max))) {
      CountFloatGroup<Bits>(d, group, vectors, vectors * lanes, done * lanes, scan.non_finite);
    }
    done += vectors;
  }
  // The last partial vector, zero-padded: zeros are finite and add no bits.
  const auto tail = static_cast<std::size_t>(count - whole_vectors * lanes);
  if (tail != 0) {
    HWY_ALIGN T padded[hn::MaxLanes(d)] = {};
    std::memcpy(padded, elements + whole_vectors * lanes, tail * sizeof(T));
    const auto bits = hn::Load(d, padded);
    any_bits = hn::Or(any_bits, bits);
    const auto flagged = hn::Add(hn::And(bits, magnitude_mask), bias);
    if (!hn::AllFalse(d, hn::Gt(flagged, unflagged_max))) {
      CountFloatGroup<Bits>(d, padded, 1, tail, whole_vectors * lanes, scan.non_finite);
    }
  }
  scan.nonzero = !hn::AllTrue(d, hn::Eq(any_bits, hn::Zero(d)));
}

// Some byte is not zero; stops at the first vector group that has one.
HWY_NOINLINE bool AnyNonzero(const std::uint8_t* data, std::uint64_t bytes) {
  const hn::ScalableTag<std::uint8_t> d;
  const std::size_t lanes = hn::Lanes(d);
  const std::uint64_t step = 4 * lanes;
  std::uint64_t at = 0;
  for (; bytes - at >= step; at += step) {
    const auto any =
        hn::Or(hn::Or(hn::LoadU(d, data + at), hn::LoadU(d, data + at + lanes)),
               hn::Or(hn::LoadU(d, data + at + 2 * lanes), hn::LoadU(d, data + at + 3 * lanes)));
    if (!hn::AllTrue(d, hn::Eq(any, hn::Zero(d)))) return true;
  }
  for (; at < bytes; ++at) {
    if (data[at] != 0) return true;
  }
  return false;
}

// Blocks per group of the quantized scan. Its scale loads are scalar in every target: an
// AVX2/AVX3 gather of a vector's worth of scales (GatherOffset, u32 lanes) was faster on
// L2-resident pieces (q8_0 59 -> 98 GB/s on an AVX-512 Zen core) but 4 to 5 times slower
// from memory (q8_0 ~25 -> ~5.5 GB/s), where tensor data comes from: the hardware prefetcher
// follows the strided scalar loads, not the gathers.
constexpr std::uint64_t kGroupBlocks = 16;

// A word whose flag bits (kFlags) are set when the block's checked fields hold a bad value.
template <Kind kKind>
HWY_INLINE std::uint32_t Flags(const std::uint8_t* field) {
  if constexpr (kKind == Kind::F16) {
    return (load_le<std::uint16_t>(field) & 0x7FFFu) + 0x0400u;
  } else if constexpr (kKind == Kind::F16Pair) {
    // Both halves at once: each magnitude + 0x400 stays below 0x10000, so no carry crosses.
    return (load_le<std::uint32_t>(field) & 0x7FFF7FFFu) + 0x04000400u;
  } else if constexpr (kKind == Kind::F32) {
    return (load_le<std::uint32_t>(field) & 0x7FFFFFFFu) + 0x00800000u;
  } else if constexpr (kKind == Kind::Iq1m) {
    return (iq1m_scale(field) & 0x7FFFu) + 0x0400u;
  } else if constexpr (kKind == Kind::Mxfp4) {
    return *field + 1u;  // 0x100 for 0xFF alone
  } else {  // Nvfp4: per byte, b >= 0x7F sets its top bit ((b & 0x7F) + 1 <= 0x80: no carry)
    const auto bytes = load_le<std::uint32_t>(field);
    return ((bytes & 0x7F7F7F7Fu) + 0x01010101u) | bytes;
  }
}

template <Kind kKind>
constexpr std::uint32_t kFlags = kKind == Kind::F16 || kKind == Kind::Iq1m ? 0x8000u
                                 : kKind == Kind::F16Pair                  ? 0x80008000u
                                 : kKind == Kind::F32                      ? 0x80000000u
                                 : kKind == Kind::Mxfp4                    ? 0x100u
                                                                           : 0x80808080u;

template <Kind kKind>
HWY_NOINLINE void ScanQuantized(const FieldLayout& layout, const std::uint8_t* data,
                                std::uint64_t blocks, std::uint64_t stride, BlockScan& scan) {
  const std::uint8_t* fields = data + layout.offset;
  for (std::uint64_t group = 0; group < blocks; group += kGroupBlocks) {
    const std::uint64_t end = std::min(blocks, group + kGroupBlocks);
    std::uint32_t flags = 0;
    for (std::uint64_t b = group; b < end; ++b) flags |= Flags<kKind>(fields + b * stride);
    if ((flags & kFlags<kKind>) == 0) continue;
    for (std::uint64_t b = group; b < end; ++b) {
      scan_block_precisely(layout, data + b * stride, b, scan);
    }
  }
}

BlockScan ScanBlocks(std::uint32_t type, const std::uint8_t* data, std::uint64_t blocks) {
  BlockScan scan;
  const TensorTypeInfo* info = tensor_type(type);
  if (info == nullptr || info->removed() || blocks == 0) return scan;
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(blocks, std::uint64_t{info->type_size}, &bytes)) return scan;
  const FieldLayout layout = layout_of(type);
  const std::uint32_t stride = info->type_size;
  switch (layout.kind) {
    case Kind::Float16: ScanFloats<F16Bits>(data, blocks, scan); return scan;
    case Kind::BFloat16: ScanFloats<BF16Bits>(data, blocks, scan); return scan;
    case Kind::Float32: ScanFloats<F32Bits>(data, blocks, scan); return scan;
    case Kind::Float64: ScanFloats<F64Bits>(data, blocks, scan); return scan;
    case Kind::F16: ScanQuantized<Kind::F16>(layout, data, blocks, stride, scan); break;
    case Kind::F16Pair: ScanQuantized<Kind::F16Pair>(layout, data, blocks, stride, scan); break;
    case Kind::F32: ScanQuantized<Kind::F32>(layout, data, blocks, stride, scan); break;
    case Kind::Iq1m: ScanQuantized<Kind::Iq1m>(layout, data, blocks, stride, scan); break;
    case Kind::Mxfp4: ScanQuantized<Kind::Mxfp4>(layout, data, blocks, stride, scan); break;
    case Kind::Nvfp4: ScanQuantized<Kind::Nvfp4>(layout, data, blocks, stride, scan); break;
    case Kind::Nothing: break;
  }
  scan.nonzero = AnyNonzero(data, bytes);
  return scan;
}

}  // namespace ggufcheck::detail::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ggufcheck::detail {

void DataTally::merge(const DataTally& other, std::uint64_t offset) {
  count += other.count;
  nan += other.nan;
  inf += other.inf;
  if (other.first == kNoBlock) return;
  const std::uint64_t other_first = other.first + offset;
  if (first == kNoBlock || other_first < first) {
    first = other_first;
    field = other.field;
    sub = other.sub;
    bits = other.bits;
  }
}

void BlockScan::merge(const BlockScan& other, std::uint64_t offset) {
  non_finite.merge(other.non_finite, offset);
  nvfp4_scale.merge(other.nvfp4_scale, offset);
  nonzero = nonzero || other.nonzero;
}

namespace {

using ScanFunction = BlockScan (*)(std::uint32_t, const std::uint8_t*, std::uint64_t);

struct Target {
  std::int64_t bit;
  ScanFunction scan;
};

// The CPU features each Highway 1.0.3 x86 target is compiled for (its targets.cc groups; the
// OS's saving of the YMM/ZMM registers is part of what __builtin_cpu_supports checks for AVX).
#if defined(__x86_64__) || defined(__i386__)
bool cpuid_bit(unsigned leaf, unsigned reg, unsigned bit) {
  unsigned regs[4] = {};
  if (__get_cpuid(leaf, &regs[0], &regs[1], &regs[2], &regs[3]) == 0) return false;
  return ((regs[reg] >> bit) & 1u) != 0;
}

bool cpu_runs(std::int64_t target) {
  __builtin_cpu_init();
  const bool sse4 = __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1") &&
                    __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("pclmul") &&
                    __builtin_cpu_supports("aes");
  // clang 14's __builtin_cpu_supports knows neither f16c nor lzcnt: CPUID leaf 1 ECX bit 29,
  // leaf 0x80000001 ECX bit 5.
  const bool avx2 = sse4 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
                    __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                    __builtin_cpu_supports("fma") && cpuid_bit(1, 2, 29) &&
                    cpuid_bit(0x80000001u, 2, 5);
  const bool avx3 = avx2 && __builtin_cpu_supports("avx512f") &&
                    __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                    __builtin_cpu_supports("avx512vl");
  if (target == HWY_AVX3) return avx3;
  if (target == HWY_AVX2) return avx2;
  if (target == HWY_SSE4) return sse4;
  return false;
}
#else
bool cpu_runs(std::int64_t) {
  return false;
}
#endif

// The compiled targets this CPU runs, best first (a lower bit is a better target). The static
// target, and any worse one, is what the whole program was compiled for.
std::vector<Target> runnable_targets() {
  const Target compiled[] = {
#if HWY_TARGETS & HWY_AVX3
    {HWY_AVX3, &kernels::N_AVX3::ScanBlocks},
#endif
#if HWY_TARGETS & HWY_AVX2
    {HWY_AVX2, &kernels::N_AVX2::ScanBlocks},
#endif
#if HWY_TARGETS & HWY_SSE4
    {HWY_SSE4, &kernels::N_SSE4::ScanBlocks},
#endif
#if HWY_TARGETS & HWY_EMU128
    {HWY_EMU128, &kernels::N_EMU128::ScanBlocks},
#endif
#if HWY_TARGETS & HWY_SCALAR
    {HWY_SCALAR, &kernels::N_SCALAR::ScanBlocks},
#endif
  };
  std::vector<Target> runnable;
  for (const Target& target : compiled) {
    if (target.bit >= HWY_STATIC_TARGET || cpu_runs(target.bit)) runnable.push_back(target);
  }
  return runnable;
}

const std::vector<Target>& targets() {
  static const std::vector<Target> runnable = runnable_targets();  // thread-safe, once
  return runnable;
}

// The pinned target's index in targets(); -1: the best (automatic).
std::atomic<int> pinned{-1};

const Target& current() {
  const int index = pinned.load(std::memory_order_relaxed);
  return targets()[index < 0 ? 0 : static_cast<std::size_t>(index)];
}

}  // namespace

BlockScan scan_blocks(std::uint32_t type, const std::uint8_t* data, std::uint64_t blocks) {
  return current().scan(type, data, blocks);
}

std::string_view kernel_target() {
  return hwy::TargetName(current().bit);
}

std::vector<std::string> kernel_targets() {
  std::vector<std::string> names;
  for (const Target& target : targets()) names.emplace_back(hwy::TargetName(target.bit));
  return names;
}

bool use_kernel_target(std::string_view name) {
  if (name.empty()) {
    pinned.store(-1, std::memory_order_relaxed);
    return true;
  }
  const std::vector<Target>& runnable = targets();
  for (std::size_t i = 0; i < runnable.size(); ++i) {
    if (name == hwy::TargetName(runnable[i].bit)) {
      pinned.store(static_cast<int>(i), std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

}  // namespace ggufcheck::detail
#endif  // HWY_ONCE
