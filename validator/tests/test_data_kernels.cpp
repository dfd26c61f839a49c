// The tensor data kernels (src/data/kernels.hpp) on every SIMD target this CPU runs, against the
// scalar reference (testkit/data_reference.hpp) and against numbers worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "data/kernels.hpp"
#include "data_reference.hpp"
#include "ggufcheck/format.hpp"

namespace ggufcheck {
namespace {

using detail::BlockScan;
using detail::DataField;
using detail::DataTally;
using detail::kNoBlock;
using detail::scan_blocks;
using testing::reference_scan_blocks;

// Pins a target for the test's scope and restores the automatic choice after it.
class PinnedTarget {
 public:
  explicit PinnedTarget(const std::string& name) {
    EXPECT_TRUE(detail::use_kernel_target(name)) << name;
  }
  PinnedTarget(const PinnedTarget&) = delete;
  PinnedTarget& operator=(const PinnedTarget&) = delete;
  ~PinnedTarget() { detail::use_kernel_target(""); }
};

std::vector<std::uint32_t> known_types() {
  std::vector<std::uint32_t> types;
  for (std::uint32_t id = 0; id < kTensorTypeCount; ++id) {
    if (!tensor_type(id)->removed()) types.push_back(id);
  }
  return types;
}

std::uint32_t block_bytes(std::uint32_t type) {
  return tensor_type(type)->type_size;
}

std::string describe(const DataTally& t) {
  return "{count " + std::to_string(t.count) + " nan " + std::to_string(t.nan) + " inf " +
         std::to_string(t.inf) + " first " +
         (t.first == kNoBlock ? std::string("none") : std::to_string(t.first)) + " field " +
         std::to_string(static_cast<int>(t.field)) + " sub " + std::to_string(t.sub) + " bits 0x" +
         [&] {
           char hex[17];
           std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(t.bits));
           return std::string(hex);
         }() +
         "}";
}

std::string describe(const BlockScan& s) {
  return "non_finite " + describe(s.non_finite) + " nvfp4_scale " + describe(s.nvfp4_scale) +
         " nonzero " + (s.nonzero ? "true" : "false");
}

bool same(const DataTally& a, const DataTally& b) {
  return a.count == b.count && a.nan == b.nan && a.inf == b.inf && a.first == b.first &&
         a.field == b.field && a.sub == b.sub && a.bits == b.bits;
}

bool same(const BlockScan& a, const BlockScan& b) {
  return same(a.non_finite, b.non_finite) && same(a.nvfp4_scale, b.nvfp4_scale) &&
         a.nonzero == b.nonzero;
}

// Where a planted bad value goes in a block: the checked fields of each type (the block tables).
enum class Plant { Element16, BFloat16Element, Element32, Element64, F16At, F32At, Iq1m, E, Nvfp4 };
struct PlantSite {
  Plant kind;
  std::uint32_t offset;
};

std::vector<PlantSite> plant_sites(std::uint32_t type) {
  switch (type) {
    case 0: return {{Plant::Element32, 0}};
    case 1: return {{Plant::Element16, 0}};
    case 30: return {{Plant::BFloat16Element, 0}};
    case 28: return {{Plant::Element64, 0}};
    case 3:
    case 7:
    case 12:
    case 13: return {{Plant::F16At, 0}, {Plant::F16At, 2}};
    case 10: return {{Plant::F16At, 80}, {Plant::F16At, 82}};
    case 11: return {{Plant::F16At, 108}};
    case 14: return {{Plant::F16At, 208}};
    case 34: return {{Plant::F16At, 52}};
    case 35: return {{Plant::F16At, 64}};
    case 15: return {{Plant::F32At, 0}};
    case 29: return {{Plant::Iq1m, 48}};
    case 39: return {{Plant::E, 0}};
    case 40: return {{Plant::Nvfp4, 0}};
    case 9:
    case 24:
    case 25:
    case 26:
    case 27: return {{Plant::F16At, 0}};  // nothing is checked: plant anyway, nothing may count
    default: return {{Plant::F16At, 0}};  // d first
  }
}

void put(std::uint8_t* p, std::uint64_t value, unsigned width) {
  for (unsigned i = 0; i < width; ++i) p[i] = static_cast<std::uint8_t>(value >> (8 * i));
}

// A non-finite value of `exponent_bits`/`mantissa_bits` float: Inf or NaN, either sign.
std::uint64_t bad_float(std::mt19937_64& rng, unsigned exponent_bits, unsigned mantissa_bits) {
  const std::uint64_t exponent = ((std::uint64_t{1} << exponent_bits) - 1) << mantissa_bits;
  const std::uint64_t sign = (rng() & 1) << (exponent_bits + mantissa_bits);
  std::uint64_t mantissa = 0;
  if (rng() % 2 == 0) {  // NaN: any mantissa but zero, often the extremes
    const std::uint64_t mask = (std::uint64_t{1} << mantissa_bits) - 1;
    switch (rng() % 3) {
      case 0: mantissa = 1; break;
      case 1: mantissa = mask; break;
      default: mantissa = std::max<std::uint64_t>(1, rng() & mask);
    }
  }
  return sign | exponent | mantissa;
}

void plant(std::mt19937_64& rng, std::uint8_t* block, const PlantSite& site) {
  std::uint8_t* at = block + site.offset;
  switch (site.kind) {
    case Plant::Element16:
    case Plant::F16At: put(at, bad_float(rng, 5, 10), 2); break;
    case Plant::BFloat16Element: put(at, bad_float(rng, 8, 7), 2); break;
    case Plant::Element32:
    case Plant::F32At: put(at, bad_float(rng, 8, 23), 4); break;
    case Plant::Element64: {
      // Half the time a finite double that ggml's conversion to float overflows: from
      // 2^128 - 2^103 (0x47EFFFFFF0000000) up to DBL_MAX, either sign.
      const std::uint64_t huge =
          0x47EFFFFFF0000000ull + rng() % (0x7FF0000000000000ull - 0x47EFFFFFF0000000ull);
      put(at, rng() % 2 == 0 ? bad_float(rng, 11, 52) : huge | ((rng() & 1) << 63), 8);
      break;
    }
    case Plant::Iq1m: {
      const std::uint64_t scale = bad_float(rng, 5, 10);
      for (unsigned word = 0; word < 4; ++word) {
        const auto nibble = static_cast<std::uint8_t>((scale >> (4 * word)) & 0xF);
        at[2 * word + 1] = static_cast<std::uint8_t>((at[2 * word + 1] & 0x0F) | (nibble << 4));
      }
      break;
    }
    case Plant::E: *at = 0xFF; break;
    case Plant::Nvfp4: {
      const auto byte =
          rng() % 3 == 0 ? std::uint8_t{0x7F} : static_cast<std::uint8_t>(0x80 | rng());
      at[rng() % 4] = byte;
      break;
    }
  }
}

// Mostly good data: random bytes whose checked fields are made finite, then `bad` planted values.
void fill(std::mt19937_64& rng, std::uint32_t type, std::uint8_t* data, std::uint64_t blocks,
          int mode) {
  const std::uint32_t size = block_bytes(type);
  const std::uint64_t bytes = blocks * size;
  switch (mode) {
    case 0:  // random bytes: f16 scales are bad one time in 32 by themselves
      for (std::uint64_t i = 0; i < bytes; ++i) data[i] = static_cast<std::uint8_t>(rng());
      return;
    case 1:  // zeros with a few planted values
      std::memset(data, 0, bytes);
      break;
    default:  // good random data (every checked byte's top bits cleared) with planted values
      for (std::uint64_t i = 0; i < bytes; ++i) data[i] = static_cast<std::uint8_t>(rng() & 0x3F);
      break;
  }
  if (blocks == 0) return;
  const std::vector<PlantSite> sites = plant_sites(type);
  const std::uint64_t plants = rng() % 6;
  for (std::uint64_t i = 0; i < plants; ++i) {
    plant(rng, data + (rng() % blocks) * size, sites[rng() % sites.size()]);
  }
}

std::uint64_t random_blocks(std::mt19937_64& rng, std::uint32_t type) {
  static const std::uint64_t small[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65};
  switch (rng() % 4) {
    case 0: return small[rng() % std::size(small)];
    case 1: return rng() % 200;
    case 2: return rng() % 1500;
    default: {
      // Past a few of the float kernels' groups (128 vectors of up to 64 bytes).
      const std::uint64_t max_bytes = 64 * 1024;
      return rng() % (max_bytes / block_bytes(type) + 1);
    }
  }
}

TEST(DataKernels, ReferenceBlockSizesAreTheTypeTable) {
  for (std::uint32_t id = 0; id < kTensorTypeCount; ++id) {
    EXPECT_EQ(testing::reference_block_bytes(id), tensor_type(id)->type_size) << "type " << id;
  }
}

TEST(DataKernels, TargetsAreListedBestFirstAndCanBePinned) {
  const std::vector<std::string> targets = detail::kernel_targets();
  ASSERT_FALSE(targets.empty());
  EXPECT_EQ(detail::kernel_target(), targets.front());
  // The portable target is compiled everywhere and runs everywhere.
  EXPECT_TRUE(targets.back() == "EMU128" || targets.back() == "SCALAR") << targets.back();
  for (const std::string& name : targets) {
    PinnedTarget pinned(name);
    EXPECT_EQ(detail::kernel_target(), name);
  }
  EXPECT_EQ(detail::kernel_target(), targets.front());
  EXPECT_FALSE(detail::use_kernel_target("NEON_OR_NOTHING"));
  EXPECT_EQ(detail::kernel_target(), targets.front());
  EXPECT_TRUE(detail::use_kernel_target(""));
}

// Every type, every target: random runs, lengths and alignments against the reference.
TEST(DataKernels, EveryTargetAgreesWithTheReference) {
  std::mt19937_64 rng(20261214);
  std::vector<std::uint8_t> buffer;
  for (const std::string& target : detail::kernel_targets()) {
    PinnedTarget pinned(target);
    for (const std::uint32_t type : known_types()) {
      int failures = 0;
      for (int round = 0; round < 60 && failures < 3; ++round) {
        const std::uint64_t blocks = random_blocks(rng, type);
        const std::size_t misalign = rng() % 64;
        buffer.assign(misalign + blocks * block_bytes(type) + 1, 0xA5);
        std::uint8_t* data = buffer.data() + misalign;
        fill(rng, type, data, blocks, round % 3);
        const BlockScan got = scan_blocks(type, data, blocks);
        const BlockScan want = reference_scan_blocks(type, data, blocks);
        if (!same(got, want)) {
          ++failures;
          ADD_FAILURE() << target << " " << tensor_type(type)->name << " blocks " << blocks
                        << " misalign " << misalign << " mode " << round % 3
                        << "\n  kernel:    " << describe(got)
                        << "\n  reference: " << describe(want);
        }
      }
    }
  }
}

// The hand-worked cases below run on every target.
template <class Check>
void on_every_target(Check check) {
  for (const std::string& target : detail::kernel_targets()) {
    SCOPED_TRACE(target);
    PinnedTarget pinned(target);
    check();
  }
}

std::vector<std::uint8_t> f16_run(std::size_t elements, std::uint16_t fill_bits) {
  std::vector<std::uint8_t> bytes(2 * elements);
  for (std::size_t i = 0; i < elements; ++i) put(&bytes[2 * i], fill_bits, 2);
  return bytes;
}

TEST(DataKernels, F16CountsNanAndInfAndFindsTheFirst) {
  on_every_target([] {
    // 1001 elements: neither a multiple of any vector width nor of a group.
    std::vector<std::uint8_t> bytes = f16_run(1001, 0x3C00);  // 1.0
    put(&bytes[2 * 17], 0x7E00, 2);                           // NaN
    put(&bytes[2 * 40], 0x7C00, 2);                           // +Inf
    put(&bytes[2 * 500], 0xFC01, 2);                          // NaN, sign set
    put(&bytes[2 * 999], 0xFC00, 2);                          // -Inf
    put(&bytes[2 * 1000], 0x7FFF, 2);  // NaN, the last element (the zero-padded tail)
    put(&bytes[2 * 41], 0x7BFF, 2);    // 65504: the largest finite
    const BlockScan scan = scan_blocks(1, bytes.data(), 1001);
    EXPECT_EQ(scan.non_finite.count, 5u);
    EXPECT_EQ(scan.non_finite.nan, 3u);
    EXPECT_EQ(scan.non_finite.inf, 2u);
    EXPECT_EQ(scan.non_finite.first, 17u);
    EXPECT_EQ(scan.non_finite.field, DataField::Element);
    EXPECT_EQ(scan.non_finite.bits, 0x7E00u);
    EXPECT_EQ(scan.nvfp4_scale.count, 0u);
    EXPECT_TRUE(scan.nonzero);
    // From element 18 on, the first is the Inf at 40 (22 from there).
    const BlockScan later = scan_blocks(1, bytes.data() + 2 * 18, 1001 - 18);
    EXPECT_EQ(later.non_finite.count, 4u);
    EXPECT_EQ(later.non_finite.first, 22u);
    EXPECT_EQ(later.non_finite.bits, 0x7C00u);
  });
}

TEST(DataKernels, BF16F32F64PlantedValues) {
  on_every_target([] {
    std::vector<std::uint8_t> bf16(2 * 300, 0);
    put(&bf16[2 * 299], 0x7F80, 2);  // +Inf
    put(&bf16[2 * 100], 0xFF81, 2);  // NaN
    put(&bf16[2 * 7], 0x7F7F, 2);    // the largest finite
    const BlockScan b = scan_blocks(30, bf16.data(), 300);
    EXPECT_EQ(b.non_finite.count, 2u);
    EXPECT_EQ(b.non_finite.nan, 1u);
    EXPECT_EQ(b.non_finite.inf, 1u);
    EXPECT_EQ(b.non_finite.first, 100u);
    EXPECT_EQ(b.non_finite.bits, 0xFF81u);

    std::vector<std::uint8_t> f32(4 * 77, 0);
    put(&f32[4 * 76], 0xFF800000u, 4);  // -Inf
    put(&f32[4 * 3], 0x7F800001u, 4);   // NaN
    put(&f32[4 * 4], 0x7F7FFFFFu, 4);   // the largest finite
    const BlockScan s = scan_blocks(0, f32.data(), 77);
    EXPECT_EQ(s.non_finite.count, 2u);
    EXPECT_EQ(s.non_finite.nan, 1u);
    EXPECT_EQ(s.non_finite.first, 3u);
    EXPECT_EQ(s.non_finite.bits, 0x7F800001u);

    // f64 as ggml reads it, through a float: 2^128 - 2^103 and up overflow to "inf".
    std::vector<std::uint8_t> f64(8 * 9, 0);
    put(&f64[8 * 8], 0xFFF0000000000000ull, 8);  // -Inf
    put(&f64[8 * 2], 0x47EFFFFFEFFFFFFFull, 8);  // just below: rounds to FLT_MAX, finite
    put(&f64[8 * 3], 0x47EFFFFFF0000000ull, 8);  // the first that rounds to infinity
    put(&f64[8 * 5], 0xFFEFFFFFFFFFFFFFull, 8);  // -DBL_MAX
    put(&f64[8 * 6], 0x7FF8000000000000ull, 8);  // NaN
    const BlockScan d = scan_blocks(28, f64.data(), 9);
    EXPECT_EQ(d.non_finite.count, 4u);
    EXPECT_EQ(d.non_finite.inf, 3u);
    EXPECT_EQ(d.non_finite.nan, 1u);
    EXPECT_EQ(d.non_finite.first, 3u);
    EXPECT_EQ(d.non_finite.bits, 0x47EFFFFFF0000000ull);
  });
}

TEST(DataKernels, QuantizedScalesInGgmlOrder) {
  on_every_target([] {
    // q4_1 (20 bytes: d, m): block 1 m NaN, block 3 d Inf and m NaN (d counts: Inf).
    std::vector<std::uint8_t> q41(20 * 40, 0x11);
    put(&q41[20 * 1 + 2], 0x7D00, 2);
    put(&q41[20 * 3 + 0], 0xFC00, 2);
    put(&q41[20 * 3 + 2], 0x7E00, 2);
    const BlockScan a = scan_blocks(3, q41.data(), 40);
    EXPECT_EQ(a.non_finite.count, 2u);
    EXPECT_EQ(a.non_finite.nan, 1u);
    EXPECT_EQ(a.non_finite.inf, 1u);
    EXPECT_EQ(a.non_finite.first, 1u);
    EXPECT_EQ(a.non_finite.field, DataField::M);
    EXPECT_EQ(a.non_finite.bits, 0x7D00u);
    const BlockScan a3 = scan_blocks(3, q41.data() + 20 * 2, 38);
    EXPECT_EQ(a3.non_finite.first, 1u);
    EXPECT_EQ(a3.non_finite.field, DataField::D);
    EXPECT_EQ(a3.non_finite.bits, 0xFC00u);

    // q2_K: d at 80, dmin at 82.
    std::vector<std::uint8_t> q2k(84 * 5, 0);
    put(&q2k[84 * 4 + 82], 0x7C00, 2);
    const BlockScan k2 = scan_blocks(10, q2k.data(), 5);
    EXPECT_EQ(k2.non_finite.count, 1u);
    EXPECT_EQ(k2.non_finite.first, 4u);
    EXPECT_EQ(k2.non_finite.field, DataField::Dmin);

    // q6_K: d at the end (208); a bad-looking byte in ql counts for nothing.
    std::vector<std::uint8_t> q6k(210 * 3, 0);
    put(&q6k[0], 0x7C00, 2);
    put(&q6k[210 * 2 + 208], 0x7C01, 2);
    const BlockScan k6 = scan_blocks(14, q6k.data(), 3);
    EXPECT_EQ(k6.non_finite.count, 1u);
    EXPECT_EQ(k6.non_finite.nan, 1u);
    EXPECT_EQ(k6.non_finite.first, 2u);
    EXPECT_EQ(k6.non_finite.field, DataField::D);

    // q8_K: an f32 d; f16-looking 0x7C00 in its low half is a finite f32.
    std::vector<std::uint8_t> q8k(292 * 2, 0);
    put(&q8k[0], 0x00007C00u, 4);
    put(&q8k[292], 0xFF800000u, 4);
    const BlockScan k8 = scan_blocks(15, q8k.data(), 2);
    EXPECT_EQ(k8.non_finite.count, 1u);
    EXPECT_EQ(k8.non_finite.first, 1u);
    EXPECT_EQ(k8.non_finite.bits, 0xFF800000u);

    // iq1_m: the scale 0x7C00 spread as nibbles 0, 0, 0xC, 0x7 over words 0..3 at 48.
    std::vector<std::uint8_t> iq1m(56 * 2, 0);
    put(&iq1m[56 + 48], 0x0123, 2);  // the low 12 bits are payload
    put(&iq1m[56 + 50], 0x0456, 2);
    put(&iq1m[56 + 52], 0xC789, 2);
    put(&iq1m[56 + 54], 0x7ABC, 2);
    const BlockScan m1 = scan_blocks(29, iq1m.data(), 2);
    EXPECT_EQ(m1.non_finite.count, 1u);
    EXPECT_EQ(m1.non_finite.inf, 1u);
    EXPECT_EQ(m1.non_finite.first, 1u);
    EXPECT_EQ(m1.non_finite.field, DataField::HiddenScale);
    EXPECT_EQ(m1.non_finite.bits, 0x7C00u);

    // mxfp4: e == 0xFF is NaN; 0xFE and 0x00 are fine.
    std::vector<std::uint8_t> mx(17 * 9, 0xFF);
    for (std::size_t b = 0; b < 9; ++b) mx[17 * b] = b % 2 == 0 ? 0xFE : 0x00;
    mx[17 * 5] = 0xFF;
    mx[17 * 8] = 0xFF;
    const BlockScan e = scan_blocks(39, mx.data(), 9);
    EXPECT_EQ(e.non_finite.count, 2u);
    EXPECT_EQ(e.non_finite.nan, 2u);
    EXPECT_EQ(e.non_finite.first, 5u);
    EXPECT_EQ(e.non_finite.field, DataField::E);
    EXPECT_EQ(e.non_finite.bits, 0xFFu);

    // nvfp4: bytes 0x7F and >= 0x80 in d[0..3]; nothing is non-finite for ggml.
    std::vector<std::uint8_t> nv(36 * 4, 0x7E);
    nv[36 * 1 + 2] = 0x80;
    nv[36 * 1 + 3] = 0x7F;
    nv[36 * 3 + 0] = 0x7F;
    nv[36 * 3 + 1] = 0xFF;
    const BlockScan n = scan_blocks(40, nv.data(), 4);
    EXPECT_EQ(n.non_finite.count, 0u);
    EXPECT_EQ(n.non_finite.first, kNoBlock);
    EXPECT_EQ(n.nvfp4_scale.count, 2u);
    EXPECT_EQ(n.nvfp4_scale.nan, 1u);  // block 3's first flagged byte is the NaN 0x7F
    EXPECT_EQ(n.nvfp4_scale.first, 1u);
    EXPECT_EQ(n.nvfp4_scale.field, DataField::SubScale);
    EXPECT_EQ(n.nvfp4_scale.sub, 2u);
    EXPECT_EQ(n.nvfp4_scale.bits, 0x80u);

    // q8_1 and the integers: nothing counts, whatever the bytes.
    const std::vector<std::uint8_t> ones(36 * 3, 0xFF);
    for (const std::uint32_t type : {9u, 24u, 25u, 26u, 27u}) {
      const BlockScan none = scan_blocks(type, ones.data(), 36 * 3 / block_bytes(type));
      EXPECT_EQ(none.non_finite.count, 0u) << type;
      EXPECT_EQ(none.non_finite.first, kNoBlock) << type;
      EXPECT_TRUE(none.nonzero) << type;
    }
  });
}

TEST(DataKernels, ZeroRunsAndASingleNonzeroByte) {
  on_every_target([] {
    std::vector<std::uint8_t> buffer;
    for (const std::uint32_t type : known_types()) {
      const std::uint32_t size = block_bytes(type);
      // Up to about 700 bytes: more than the widest step of the OR pass (4 x 64 bytes).
      const std::uint64_t blocks = std::max<std::uint64_t>(1, 700 / size);
      buffer.assign(blocks * size + 3, 0);
      std::uint8_t* data = buffer.data() + 3;  // not aligned
      for (std::uint64_t n = 0; n <= blocks; n += std::max<std::uint64_t>(1, blocks / 7)) {
        const BlockScan zero = scan_blocks(type, data, n);
        EXPECT_FALSE(zero.nonzero) << tensor_type(type)->name << " blocks " << n;
        EXPECT_EQ(zero.non_finite.count, 0u);
        EXPECT_EQ(zero.nvfp4_scale.count, 0u);
      }
      for (std::uint64_t at = 0; at < blocks * size; ++at) {
        data[at] = 0x01;
        const BlockScan one = scan_blocks(type, data, blocks);
        data[at] = 0;
        if (!one.nonzero) {
          ADD_FAILURE() << tensor_type(type)->name << " blocks " << blocks << ": byte " << at;
          break;
        }
      }
    }
  });
}

// Splitting a run at any block and merging the halves gives the whole run's result; so does
// merging three pieces either way round.
TEST(DataKernels, MergeOfPiecesIsTheWhole) {
  std::mt19937_64 rng(77);
  std::vector<std::uint8_t> buffer;
  on_every_target([&] {
    for (const std::uint32_t type : known_types()) {
      const std::uint32_t size = block_bytes(type);
      const std::uint64_t blocks = 1 + rng() % 90;
      buffer.assign(blocks * size, 0);
      fill(rng, type, buffer.data(), blocks, 1 + static_cast<int>(rng() % 2));
      const BlockScan whole = scan_blocks(type, buffer.data(), blocks);
      for (std::uint64_t cut = 0; cut <= blocks; ++cut) {
        BlockScan merged = scan_blocks(type, buffer.data(), cut);
        merged.merge(scan_blocks(type, buffer.data() + cut * size, blocks - cut), cut);
        if (!same(merged, whole)) {
          ADD_FAILURE() << tensor_type(type)->name << " cut " << cut << " of " << blocks
                        << "\n  merged: " << describe(merged) << "\n  whole:  " << describe(whole);
          break;
        }
      }
      const std::uint64_t a = rng() % (blocks + 1);
      const std::uint64_t b = a + rng() % (blocks - a + 1);
      const BlockScan first = scan_blocks(type, buffer.data(), a);
      const BlockScan second = scan_blocks(type, buffer.data() + a * size, b - a);
      const BlockScan third = scan_blocks(type, buffer.data() + b * size, blocks - b);
      BlockScan left = first;
      left.merge(second, a);
      left.merge(third, b);
      BlockScan right_tail = second;
      right_tail.merge(third, b - a);
      BlockScan right = first;
      right.merge(right_tail, a);
      BlockScan from_empty;  // an empty run merged with anything at offset 0 is that thing
      from_empty.merge(whole, 0);
      EXPECT_TRUE(same(left, whole)) << describe(left) << " vs " << describe(whole);
      EXPECT_TRUE(same(right, whole)) << describe(right) << " vs " << describe(whole);
      EXPECT_TRUE(same(from_empty, whole));
    }
  });
}

}  // namespace
}  // namespace ggufcheck
