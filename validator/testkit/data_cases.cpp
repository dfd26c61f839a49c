#include "data_cases.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace ggufcheck::testing::data {
namespace {

using E = Encoding;

constexpr std::uint32_t kTypeIds = 43;

Field raw(std::string_view name, std::uint32_t offset, std::uint32_t size) {
  return {name, offset, size, E::Raw, false};
}
Field f16(std::string_view name, std::uint32_t offset, bool checked = true) {
  return {name, offset, 2, E::F16, checked};
}

// The block tables of ggml-common.h, as ggml_validate_row_data reads them.
std::array<BlockLayout, kTypeIds> make_layouts() {
  std::array<BlockLayout, kTypeIds> t{};
  const auto set = [&t](std::uint32_t id, std::string_view name, std::uint32_t bytes,
                        std::vector<Field> fields) {
    t[id] = BlockLayout{id, name, bytes, std::move(fields)};
  };
  set(0, "f32", 4, {{"element", 0, 4, E::F32, true}});
  set(1, "f16", 2, {{"element", 0, 2, E::F16, true}});
  set(2, "q4_0", 18, {f16("d", 0), raw("qs", 2, 16)});
  set(3, "q4_1", 20, {f16("d", 0), f16("m", 2), raw("qs", 4, 16)});
  set(6, "q5_0", 22, {f16("d", 0), raw("qh", 2, 4), raw("qs", 6, 16)});
  set(7, "q5_1", 24, {f16("d", 0), f16("m", 2), raw("qh", 4, 4), raw("qs", 8, 16)});
  set(8, "q8_0", 34, {f16("d", 0), raw("qs", 2, 32)});
  // ggml refuses the type before looking at a byte: nothing is checked.
  set(9, "q8_1", 36, {f16("d", 0, false), f16("s", 2, false), raw("qs", 4, 32)});
  set(10, "q2_K", 84, {raw("scales", 0, 16), raw("qs", 16, 64), f16("d", 80), f16("dmin", 82)});
  set(11, "q3_K", 110,
      {raw("hmask", 0, 32), raw("qs", 32, 64), raw("scales", 96, 12), f16("d", 108)});
  set(12, "q4_K", 144, {f16("d", 0), f16("dmin", 2), raw("scales", 4, 12), raw("qs", 16, 128)});
  set(13, "q5_K", 176,
      {f16("d", 0), f16("dmin", 2), raw("scales", 4, 12), raw("qh", 16, 32), raw("qs", 48, 128)});
  set(14, "q6_K", 210,
      {raw("ql", 0, 128), raw("qh", 128, 64), raw("scales", 192, 16), f16("d", 208)});
  set(15, "q8_K", 292, {{"d", 0, 4, E::F32, true}, raw("qs", 4, 256), raw("bsums", 260, 32)});
  set(16, "iq2_xxs", 66, {f16("d", 0), raw("qs", 2, 64)});
  set(17, "iq2_xs", 74, {f16("d", 0), raw("qs", 2, 64), raw("scales", 66, 8)});
  set(18, "iq3_xxs", 98, {f16("d", 0), raw("qs", 2, 96)});
  set(19, "iq1_s", 50, {f16("d", 0), raw("qs", 2, 32), raw("qh", 34, 16)});
  set(20, "iq4_nl", 18, {f16("d", 0), raw("qs", 2, 16)});
  set(21, "iq3_s", 110,
      {f16("d", 0), raw("qs", 2, 64), raw("qh", 66, 8), raw("signs", 74, 32),
       raw("scales", 106, 4)});
  set(22, "iq2_s", 82, {f16("d", 0), raw("qs", 2, 64), raw("qh", 66, 8), raw("scales", 74, 8)});
  set(23, "iq4_xs", 136,
      {f16("d", 0), raw("scales_h", 2, 2), raw("scales_l", 4, 4), raw("qs", 8, 128)});
  set(24, "i8", 1, {raw("value", 0, 1)});
  set(25, "i16", 2, {raw("value", 0, 2)});
  set(26, "i32", 4, {raw("value", 0, 4)});
  set(27, "i64", 8, {raw("value", 0, 8)});
  set(28, "f64", 8, {{"element", 0, 8, E::F64, true}});
  set(29, "iq1_m", 56,
      {raw("qs", 0, 32),
       raw("qh", 32, 16),
       raw("scales", 48, 8),
       {"scale", 48, 8, E::Iq1mScale, true}});
  set(30, "bf16", 2, {{"element", 0, 2, E::BF16, true}});
  set(34, "tq1_0", 54, {raw("qs", 0, 48), raw("qh", 48, 4), f16("d", 52)});
  set(35, "tq2_0", 66, {raw("qs", 0, 64), f16("d", 64)});
  set(39, "mxfp4", 17, {{"e", 0, 1, E::E8M0, true}, raw("qs", 1, 16)});
  set(40, "nvfp4", 36,
      {{"d0", 0, 1, E::UE4M3, false},
       {"d1", 1, 1, E::UE4M3, false},
       {"d2", 2, 1, E::UE4M3, false},
       {"d3", 3, 1, E::UE4M3, false},
       raw("qs", 4, 32)});
  set(41, "q1_0", 18, {f16("d", 0), raw("qs", 2, 16)});
  set(42, "q2_0", 18, {f16("d", 0), raw("qs", 2, 16)});
  return t;
}

const std::array<BlockLayout, kTypeIds>& layouts() {
  static const std::array<BlockLayout, kTypeIds> table = make_layouts();
  return table;
}

constexpr std::array<std::uint32_t, 35> kDataTypes = {
    0,  1,  2,  3,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 34, 35, 39, 40, 41, 42};

constexpr std::array<std::uint64_t, 9> kRejectedF16 = {0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01,
                                                       0xFC01, 0x7D00, 0x7FFF, 0xFFFF};
constexpr std::array<std::uint64_t, 9> kRejectedBF16 = {0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81,
                                                        0xFF81, 0x7FA0, 0x7FFF, 0xFFFF};
constexpr std::array<std::uint64_t, 9> kRejectedF32 = {0x7F800000, 0xFF800000, 0x7FC00000,
                                                       0xFFC00000, 0x7F800001, 0xFF800001,
                                                       0x7FA00000, 0x7FFFFFFF, 0xFFFFFFFF};
constexpr std::array<std::uint64_t, 14> kRejectedF64 = {
    0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0xFFF8000000000000,
    0x7FF0000000000001, 0xFFF0000000000001, 0x7FF4000000000000, 0x7FFFFFFFFFFFFFFF,
    0xFFFFFFFFFFFFFFFF,
    // Finite doubles that overflow ggml's conversion to float.
    0x47EFFFFFF0000000, 0xC7EFFFFFF0000000, 0x4800000000000000, 0x7FEFFFFFFFFFFFFF,
    0xFFEFFFFFFFFFFFFF};
constexpr std::array<std::uint64_t, 1> kRejectedE8M0 = {0xFF};
constexpr std::array<std::uint64_t, 7> kRejectedUE4M3 = {0x7F, 0x80, 0xFF, 0xFE, 0x81, 0xBF, 0xC0};

constexpr std::array<std::uint64_t, 9> kEdgeF16 = {0x7BFF, 0xFBFF, 0x0000, 0x8000, 0x0001,
                                                   0x8001, 0x03FF, 0x0400, 0x3C00};
constexpr std::array<std::uint64_t, 7> kEdgeBF16 = {0x7F7F, 0xFF7F, 0x0000, 0x8000,
                                                    0x0001, 0x807F, 0x3F80};
constexpr std::array<std::uint64_t, 7> kEdgeF32 = {0x7F7FFFFF, 0xFF7FFFFF, 0,         0x80000000,
                                                   1,          0x807FFFFF, 0x3F800000};
// The largest doubles ggml's float conversion keeps finite, FLT_MAX, zeros, the smallest.
constexpr std::array<std::uint64_t, 7> kEdgeF64 = {
    0x47EFFFFFEFFFFFFF, 0xC7EFFFFFEFFFFFFF, 0x47EFFFFFE0000000, 0, 0x8000000000000000, 1,
    0x3FF0000000000000};
constexpr std::array<std::uint64_t, 4> kEdgeE8M0 = {0x00, 0xFE, 0x7F, 0x01};
constexpr std::array<std::uint64_t, 5> kEdgeUE4M3 = {0x00, 0x7E, 0x01, 0x08, 0x38};

std::uint64_t read_le(const std::uint8_t* p, std::uint32_t width) {
  std::uint64_t v = 0;
  for (std::uint32_t i = 0; i < width; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

void write_le(std::uint8_t* p, std::uint32_t width, std::uint64_t bits) {
  for (std::uint32_t i = 0; i < width; ++i) p[i] = static_cast<std::uint8_t>(bits >> (8 * i));
}

// iq1_m: scale bits 4k..4k+3 are bits 12..15 of the k-th u16 word of scales[].
std::uint64_t read_iq1m_scale(const std::uint8_t* field) {
  std::uint64_t scale = 0;
  for (std::uint32_t k = 0; k < 4; ++k) scale |= (read_le(field + 2 * k, 2) >> 12) << (4 * k);
  return scale;
}

void write_iq1m_scale(std::uint8_t* field, std::uint64_t scale) {
  for (std::uint32_t k = 0; k < 4; ++k) {
    const std::uint64_t word =
        (read_le(field + 2 * k, 2) & 0x0FFF) | (((scale >> (4 * k)) & 0xF) << 12);
    write_le(field + 2 * k, 2, word);
  }
}

std::uint64_t read_field(const std::uint8_t* block, const Field& f) {
  if (f.encoding == E::Iq1mScale) return read_iq1m_scale(block + f.offset);
  return read_le(block + f.offset, f.size);
}

void write_field(std::uint8_t* block, const Field& f, std::uint64_t bits) {
  if (f.encoding == E::Iq1mScale) return write_iq1m_scale(block + f.offset, bits);
  write_le(block + f.offset, f.size, bits);
}

// The value with the fewest bit changes that ggml and ggufcheck both accept.
std::uint64_t make_good(Encoding encoding, std::uint64_t bits) {
  switch (encoding) {
    case E::F16:
    case E::Iq1mScale:
    case E::BF16:
      // Clearing the top exponent bit makes the exponent not all ones.
      return classify(encoding, bits) == Kind::Finite ? bits : bits & ~std::uint64_t{0x4000};
    case E::F32:
      return classify(encoding, bits) == Kind::Finite ? bits : bits & ~(std::uint64_t{1} << 30);
    case E::F64:
      return classify(encoding, bits) == Kind::Finite ? bits : bits & ~(std::uint64_t{1} << 62);
    case E::E8M0: return bits == 0xFF ? 0xFE : bits;
    case E::UE4M3: return (bits & 0x7F) == 0x7F ? 0x7E : bits & 0x7F;
    case E::Raw: break;
  }
  return bits;
}

// SplitMix64: cheap enough for megabytes of random bytes in a Debug build, unlike mt19937_64.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t operator()() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

bool is_plain_float(std::uint32_t type) {
  return type == 0 || type == 1 || type == 28 || type == 30;
}

}  // namespace

std::uint32_t encoding_width(Encoding encoding) {
  switch (encoding) {
    case E::F16:
    case E::BF16: return 2;
    case E::F32: return 4;
    case E::F64:
    case E::Iq1mScale: return 8;
    case E::E8M0:
    case E::UE4M3:
    case E::Raw: return 1;
  }
  return 1;
}

std::string_view to_string(Encoding encoding) {
  switch (encoding) {
    case E::Raw: return "raw";
    case E::F16: return "f16";
    case E::BF16: return "bf16";
    case E::F32: return "f32";
    case E::F64: return "f64";
    case E::E8M0: return "e8m0";
    case E::UE4M3: return "ue4m3";
    case E::Iq1mScale: return "iq1_m scale";
  }
  return "?";
}

std::string_view to_string(Kind kind) {
  switch (kind) {
    case Kind::Finite: return "finite";
    case Kind::Inf: return "inf";
    case Kind::Nan: return "nan";
  }
  return "?";
}

bool BlockLayout::plain_float() const {
  return is_plain_float(type);
}

std::vector<std::uint32_t> BlockLayout::checked_fields() const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < fields.size(); ++i) {
    if (fields[i].checked) out.push_back(i);
  }
  return out;
}

std::span<const std::uint32_t> data_types() {
  return kDataTypes;
}

const BlockLayout& layout(std::uint32_t type) {
  if (type >= kTypeIds || layouts()[type].block_bytes == 0) {
    throw std::invalid_argument("no data layout for type " + std::to_string(type));
  }
  return layouts()[type];
}

Kind classify(Encoding encoding, std::uint64_t bits) {
  switch (encoding) {
    case E::F16:
    case E::Iq1mScale:
      if ((bits & 0x7C00) != 0x7C00) return Kind::Finite;
      return (bits & 0x03FF) != 0 ? Kind::Nan : Kind::Inf;
    case E::BF16:
      if ((bits & 0x7FFF) > 0x7F80) return Kind::Nan;
      return (bits & 0x7FFF) == 0x7F80 ? Kind::Inf : Kind::Finite;
    case E::F32:
      if ((bits & 0x7F800000) != 0x7F800000) return Kind::Finite;
      return (bits & 0x007FFFFF) != 0 ? Kind::Nan : Kind::Inf;
    case E::F64: {
      const std::uint64_t magnitude = bits & 0x7FFFFFFFFFFFFFFF;
      if (magnitude > 0x7FF0000000000000) return Kind::Nan;
      // From FLT_MAX + half an ulp on, round-to-nearest-even gives a float infinity.
      return magnitude >= 0x47EFFFFFF0000000 ? Kind::Inf : Kind::Finite;
    }
    case E::E8M0: return bits == 0xFF ? Kind::Nan : Kind::Finite;
    case E::UE4M3:
    case E::Raw: break;
  }
  return Kind::Finite;
}

bool bad_ue4m3(std::uint64_t bits) {
  return bits == 0x7F || (bits & 0x80) != 0;
}

std::span<const std::uint64_t> rejected_values(Encoding encoding) {
  switch (encoding) {
    case E::F16:
    case E::Iq1mScale: return kRejectedF16;
    case E::BF16: return kRejectedBF16;
    case E::F32: return kRejectedF32;
    case E::F64: return kRejectedF64;
    case E::E8M0: return kRejectedE8M0;
    case E::UE4M3: return kRejectedUE4M3;
    case E::Raw: break;
  }
  return {};
}

std::span<const std::uint64_t> edge_values(Encoding encoding) {
  switch (encoding) {
    case E::F16:
    case E::Iq1mScale: return kEdgeF16;
    case E::BF16: return kEdgeBF16;
    case E::F32: return kEdgeF32;
    case E::F64: return kEdgeF64;
    case E::E8M0: return kEdgeE8M0;
    case E::UE4M3: return kEdgeUE4M3;
    case E::Raw: break;
  }
  return {};
}

std::vector<std::uint8_t> tensor_bytes(const TensorSpec& spec, std::uint64_t seed) {
  const BlockLayout& l = layout(spec.type);
  if (spec.blocks > (std::uint64_t{1} << 32)) throw std::invalid_argument("too many blocks");
  const std::uint64_t whole = spec.blocks * l.block_bytes;
  std::vector<std::uint8_t> bytes(whole + spec.extra_bytes, 0);
  Random rng(seed);
  if (spec.fill != Fill::Zero) {
    std::size_t i = 0;
    for (; i + 8 <= bytes.size(); i += 8) {
      const std::uint64_t r = rng();  // random bits: their byte order does not matter
      std::memcpy(bytes.data() + i, &r, sizeof r);
    }
    if (i < bytes.size())
      write_le(bytes.data() + i, static_cast<std::uint32_t>(bytes.size() - i), rng());
    for (std::uint64_t b = 0; b < spec.blocks; ++b) {
      std::uint8_t* block = bytes.data() + b * l.block_bytes;
      for (const Field& f : l.fields) {
        if (f.encoding == E::Raw) continue;
        const std::span<const std::uint64_t> edges = edge_values(f.encoding);
        write_field(block, f,
                    spec.fill == Fill::Edges ? edges[rng() % edges.size()]
                                             : make_good(f.encoding, read_field(block, f)));
      }
    }
  }
  for (const Plant& p : spec.plants) {
    if (p.block >= spec.blocks || p.field >= l.fields.size()) {
      throw std::invalid_argument("plant outside the tensor: " + describe(spec));
    }
    std::uint8_t* block = bytes.data() + p.block * l.block_bytes;
    const Field& f = l.fields[p.field];
    if (f.encoding != E::Raw) {
      write_field(block, f, p.bits);
      continue;
    }
    if (p.width == 0 || p.width > 8 || p.at + p.width > f.size) {
      throw std::invalid_argument("raw plant outside its field: " + describe(spec));
    }
    // A raw plant into iq1_m's scales[] leaves the checked scale as it was.
    const Field* hidden = l.type == 29 ? &l.fields.back() : nullptr;
    const std::uint64_t kept = hidden != nullptr ? read_field(block, *hidden) : 0;
    write_le(block + f.offset + p.at, p.width, p.bits);
    if (hidden != nullptr) write_field(block, *hidden, kept);
  }
  return bytes;
}

ExpectedScan expected_scan(std::uint32_t type, std::span<const std::uint8_t> bytes) {
  const BlockLayout& l = layout(type);
  if (bytes.size() % l.block_bytes != 0) throw std::invalid_argument("a partial block");
  ExpectedScan out;
  for (std::size_t i = 0; i < bytes.size() && !out.nonzero; ++i) out.nonzero = bytes[i] != 0;
  if (type == 9) {
    out.ggml_passes = false;
    return out;
  }
  const std::vector<std::uint32_t> checked = l.checked_fields();
  const std::uint64_t blocks = bytes.size() / l.block_bytes;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint8_t* block = bytes.data() + b * l.block_bytes;
    for (const std::uint32_t i : checked) {
      const Kind kind = classify(l.fields[i].encoding, read_field(block, l.fields[i]));
      if (kind == Kind::Finite) continue;
      ++out.bad_blocks;
      ++(kind == Kind::Nan ? out.nan_blocks : out.inf_blocks);
      if (out.first_bad == kNoBlock) {
        out.first_bad = b;
        out.first_field = i;
        out.first_kind = kind;
      }
      break;  // a block counts once, by its first bad field
    }
    if (type == 40) {
      bool bad = false;
      for (std::uint32_t s = 0; s < 4; ++s) bad = bad || bad_ue4m3(block[s]);
      if (bad) {
        ++out.bad_scale_blocks;
        if (out.first_bad_scale == kNoBlock) out.first_bad_scale = b;
      }
    }
  }
  out.ggml_passes = out.bad_blocks == 0;
  return out;
}

std::string describe(const TensorSpec& spec) {
  const BlockLayout* l = nullptr;
  try {
    l = &layout(spec.type);
  } catch (const std::invalid_argument&) {
    return "type " + std::to_string(spec.type) + " (no layout)";
  }
  static constexpr std::array<std::string_view, 3> kFills = {"random", "edges", "zero"};
  std::string out = std::string(l->name) + " (" + std::to_string(spec.type) + "), " +
                    std::to_string(spec.blocks) + " blocks, " +
                    std::string(kFills.at(static_cast<std::size_t>(spec.fill)));
  if (spec.extra_bytes != 0) out += ", +" + std::to_string(spec.extra_bytes) + " bytes";
  if (!spec.plants.empty()) out += ", plants:";
  for (const Plant& p : spec.plants) {
    char bits[24];
    std::snprintf(bits, sizeof bits, "0x%llx", static_cast<unsigned long long>(p.bits));
    const std::string field =
        p.field < l->fields.size() ? std::string(l->fields[p.field].name) : "?";
    out += " block " + std::to_string(p.block) + " " + field;
    if (p.field < l->fields.size() && l->fields[p.field].encoding == E::Raw) {
      out += "+" + std::to_string(p.at) + "[" + std::to_string(p.width) + "]";
    }
    out += "=" + std::string(bits) + ";";
  }
  return out;
}

}  // namespace ggufcheck::testing::data
