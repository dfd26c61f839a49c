// RapidCheck generators for GGUF documents, files and faults (style.md: Nix-style test support).
//
// Everything here is header-only and deterministic given RapidCheck's random source:
//
// - rc::Arbitrary<ggufcheck::Value>: a canonical metadata value of any of the 13 types, arrays of
//   every element type (nested ones too), empty strings and arrays, non-ASCII UTF-8, boundary
//   numbers (0, 1, max, min, NaN, infinities, denormals).
// - rc::Arbitrary<ggufcheck::Tensor>: a tensor info of any non-removed ggml type, 0..4 dims,
//   block-multiple shapes, sometimes a zero dim (zero-size tensor); byte sizes stay small.
// - rc::Arbitrary<Key>: a metadata key, conventional or not, that names no standard key.
// - rc::Arbitrary<Alignment>: a power of two 1..4096.
// - rc::Arbitrary<ValidModel>: a whole file strict passes (v2/v3, little/big-endian) together
//   with implied_findings(), the notes (and the big-endian error) its content implies.
// - rc::Arbitrary<AnyDocument>: any document the writer can write and read_document reads back
//   (v1/v2/v3, both byte orders, any key/string/name bytes, nested arrays, hostile shapes).
// - rc::Arbitrary<Corruption>: one targeted fault (enum Fault, one per catalogue code a single
//   edit can cause) applied to a generated valid file via the writer's Layout; apply() returns
//   the broken bytes with the exact findings each profile must report and the offset of the
//   finding the fault targets.
// - rc::Arbitrary<Mutation>: a blind edit (byte flip, 4- or 8-byte boundary overwrite).
//
// Every type has a showValue overload so a counterexample prints as a readable description.
#pragma once

#include <rapidcheck.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/format.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {

// =================================================================================================
// Small helpers
// =================================================================================================

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kPow63 = std::uint64_t{1} << 63;

inline std::uint64_t round_up(std::uint64_t value, std::uint64_t alignment) {
  const std::uint64_t rem = value % alignment;
  return rem == 0 ? value : value + (alignment - rem);
}

inline bool is_power_of_two(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

// choice % n, for turning a generated number into an index (shrinks towards the first).
inline std::size_t pick(std::uint64_t choice, std::size_t n) {
  return n == 0 ? 0 : static_cast<std::size_t>(choice % n);
}

template <typename T>
const T& pick_of(std::uint64_t choice, const std::vector<T>& options) {
  return options[pick(choice, options.size())];
}

// Writes `width` bytes of `value` at `offset` in the file's byte order.
inline void put_uint(ByteVector& bytes, std::uint64_t offset, std::uint64_t value,
                     std::uint32_t width, Endian endian) {
  for (std::uint32_t i = 0; i < width; ++i) {
    const std::uint32_t shift = 8 * (endian == Endian::Little ? i : width - 1 - i);
    bytes.at(static_cast<std::size_t>(offset + i)) = static_cast<std::uint8_t>(value >> shift);
  }
}

// Deterministic filler for tensor data: shrinking the seed to 0 gives zero bytes.
inline std::vector<std::uint8_t> seeded_bytes(std::uint64_t seed, std::uint64_t count) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(count), 0);
  if (seed == 0) return out;
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::uint8_t>(x >> 24);
  }
  return out;
}

inline std::string encode_utf8(std::uint32_t cp) {
  std::string out;
  const auto byte = [&](std::uint32_t v) { out.push_back(static_cast<char>(v & 0xFF)); };
  if (cp < 0x80) {
    byte(cp);
  } else if (cp < 0x800) {
    byte(0xC0 | (cp >> 6));
    byte(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    byte(0xE0 | (cp >> 12));
    byte(0x80 | ((cp >> 6) & 0x3F));
    byte(0x80 | (cp & 0x3F));
  } else {
    byte(0xF0 | (cp >> 18));
    byte(0x80 | ((cp >> 12) & 0x3F));
    byte(0x80 | ((cp >> 6) & 0x3F));
    byte(0x80 | (cp & 0x3F));
  }
  return out;
}

// Cuts valid UTF-8 to at most max_bytes without splitting a sequence.
inline std::string truncate_utf8(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

// Bytes shown escaped, as the validator shows them.
inline std::string shown(std::string_view bytes, std::size_t max = 48) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == max) {
      out += "...(" + std::to_string(bytes.size()) + " bytes)";
      break;
    }
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (b == '"' || b == '\\') {
      out += '\\';
      out += static_cast<char>(b);
    } else if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
  }
  return out;
}

inline std::string hex(std::uint64_t v) {
  std::ostringstream out;
  out << "0x" << std::hex << v;
  return out.str();
}

inline std::string tensor_type_name(std::uint32_t id) {
  const TensorTypeInfo* info = tensor_type(id);
  return info == nullptr ? "type" + std::to_string(id) : std::string(info->name);
}

// A general.alignment value: a power of two 1..4096.
struct Alignment {
  std::uint32_t value = kDefaultAlignment;
};

// =================================================================================================
// Keys
// =================================================================================================

// The key rules of check_keys as gguf-format.md section 4 and design.md state them: spec wants
// dotted lower_snake_case; strict also accepts '-' and any letter case in the name part of
// tokenizer.chat_template.<name>. Only printable ASCII keys are judged (others are 2005).
inline bool conventional_key(std::string_view key, bool strict) {
  constexpr std::string_view kTemplate = "tokenizer.chat_template.";
  const std::size_t upper_from =
      strict && key.substr(0, kTemplate.size()) == kTemplate ? kTemplate.size() : key.size();
  std::size_t segment = 0;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (c == '.') {
      if (segment == 0) return false;
      segment = 0;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                    (strict && c == '-') || (i >= upper_from && c >= 'A' && c <= 'Z');
    if (!ok) return false;
    ++segment;
  }
  return segment != 0;
}

inline bool printable_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b >= 0x20 && b < 0x7f;
  });
}

enum class KeyStyle : std::uint8_t {
  Conventional,    // dotted lower_snake_case: clean in every profile
  StrictOnly,      // '-' or an upper-case chat template name: unconventional in spec only
  Unconventional,  // printable ASCII but not conventional: GGUF2006 in strict and spec
};

struct Key {
  std::string text;
  KeyStyle style = KeyStyle::Conventional;
};

inline std::string_view to_string(KeyStyle style) {
  switch (style) {
    case KeyStyle::Conventional: return "conventional";
    case KeyStyle::StrictOnly: return "conventional in strict only";
    case KeyStyle::Unconventional: return "unconventional";
  }
  return "?";
}

// First segments that name standard keys: generated free keys never use them.
inline bool reserved_first_segment(std::string_view segment) {
  return segment == "general" || segment == "tokenizer" || segment == "split" ||
         segment == "0fault";
}

namespace gen {

using rc::Gen;

// A lower_snake_case segment: a letter first when `first`, then letters, digits, '_'.
inline Gen<std::string> segment(bool first) {
  const Gen<char> letter = rc::gen::inRange('a', static_cast<char>('z' + 1));
  const Gen<char> any = rc::gen::weightedOneOf<char>({
      {6, rc::gen::inRange('a', static_cast<char>('z' + 1))},
      {2, rc::gen::inRange('0', static_cast<char>('9' + 1))},
      {1, rc::gen::just('_')},
  });
  return rc::gen::exec([=] {
    std::string s(1, first ? *letter : *any);
    const auto more = *rc::gen::weightedElement<std::size_t>({{2, 0}, {3, 3}, {2, 6}, {1, 11}});
    for (std::size_t i = 0; i < more; ++i) s += *any;
    if (first && reserved_first_segment(s)) s += "x";
    return s;
  });
}

inline Gen<std::string> conventional_key_text() {
  return rc::gen::exec([] {
    std::string key = *segment(true);
    const auto segments = *rc::gen::weightedElement<std::size_t>({{1, 0}, {4, 1}, {3, 2}, {1, 3}});
    for (std::size_t i = 0; i < segments; ++i) key += "." + *segment(false);
    return key;
  });
}

// Real architecture names contain '-' ("command-r.context_length").
inline Gen<std::string> dashed_key_text() {
  return rc::gen::exec([] {
    std::string key = *conventional_key_text();
    const std::size_t at = 1 + pick(*rc::gen::arbitrary<std::uint64_t>(), key.size() - 1);
    if (key[at - 1] == '.') return key.insert(at, "x-");
    return key.insert(at, "-");
  });
}

// Chat template names may be upper case ("tokenizer.chat_template.ChatML").
inline Gen<std::string> chat_template_key_text() {
  return rc::gen::exec([] {
    std::string name = *segment(true);
    name[0] = static_cast<char>(name[0] - 'a' + 'A');
    name += *rc::gen::elementOf(std::vector<std::string>{"", "ML", "Tool_Use", "RAG"});
    return "tokenizer.chat_template." + name;
  });
}

inline Gen<std::string> strict_only_key_text() {
  return rc::gen::weightedOneOf<std::string>(
      {{3, dashed_key_text()}, {1, chat_template_key_text()}});
}

// A conventional key broken in one way: an upper-case letter, a punctuation byte or a space,
// or an empty segment (leading, trailing or doubled '.').
inline Gen<std::string> unconventional_key_text() {
  return rc::gen::exec([] {
    std::string key = *conventional_key_text();
    const std::uint64_t where = *rc::gen::arbitrary<std::uint64_t>();
    switch (*rc::gen::inRange(0, 5)) {
      case 0: {
        std::size_t at = pick(where, key.size());
        while (key[at] < 'a' || key[at] > 'z') at = (at + 1) % key.size();  // has a letter
        key[at] = static_cast<char>(key[at] - 'a' + 'A');
        return key;
      }
      case 1: {
        static const std::string kPunct = " !\"#$%&'()*+,/:;<=>?@[\\]^`{|}~";
        const char c = kPunct[pick(*rc::gen::arbitrary<std::uint64_t>(), kPunct.size())];
        return key.insert(pick(where, key.size() + 1), 1, c);
      }
      case 2: return "." + key;
      case 3: return key + ".";
      default: {
        const std::size_t dot = key.find('.');
        return dot == std::string::npos ? key + ".." : key.insert(dot, ".");
      }
    }
  });
}

inline Gen<Key> key(KeyStyle style) {
  switch (style) {
    case KeyStyle::Conventional:
      return rc::gen::map(conventional_key_text(), [](std::string text) {
        return Key{std::move(text), KeyStyle::Conventional};
      });
    case KeyStyle::StrictOnly:
      return rc::gen::map(strict_only_key_text(), [](std::string text) {
        return Key{std::move(text), KeyStyle::StrictOnly};
      });
    case KeyStyle::Unconventional: break;
  }
  return rc::gen::map(unconventional_key_text(), [](std::string text) {
    return Key{std::move(text), KeyStyle::Unconventional};
  });
}

inline Gen<Key> any_key() {
  return rc::gen::weightedOneOf<Key>({{3, key(KeyStyle::Conventional)},
                                      {2, key(KeyStyle::StrictOnly)},
                                      {2, key(KeyStyle::Unconventional)}});
}

// =================================================================================================
// Text and numbers
// =================================================================================================

// A code point for valid UTF-8 text: mostly printable ASCII, then the boundaries of each
// encoding length, the last code points before and after the surrogates, U+FFFD, U+FFFF and
// U+10FFFF, and controls (valid UTF-8 in string values). Never NUL.
inline Gen<std::uint32_t> code_point(bool controls) {
  const Gen<std::uint32_t> text = rc::gen::weightedOneOf<std::uint32_t>({
      {10, rc::gen::inRange<std::uint32_t>(0x20, 0x7f)},
      {2, rc::gen::elementOf(std::vector<std::uint32_t>{0x80, 0xe9, 0x7ff, 0x800, 0x65e5, 0xd7ff,
                                                        0xe000, 0xfffd, 0xffff, 0x10000, 0x1f600,
                                                        0x10ffff})},
      {2, rc::gen::inRange<std::uint32_t>(0x80, 0x800)},
      {1, rc::gen::inRange<std::uint32_t>(0x800, 0xd800)},
      {1, rc::gen::inRange<std::uint32_t>(0x10000, 0x110000)},
  });
  if (!controls) return text;
  return rc::gen::weightedOneOf<std::uint32_t>(
      {{16, text},
       {1,
        rc::gen::elementOf(std::vector<std::uint32_t>{0x09, 0x0a, 0x0d, 0x01, 0x1b, 0x1f, 0x7f})}});
}

// Valid UTF-8 without NUL, often empty. `controls` allows control characters (string values);
// tensor names get none.
inline Gen<std::string> utf8_text(std::size_t max_chars, bool controls = true) {
  return rc::gen::exec([=] {
    const std::size_t n = *rc::gen::weightedOneOf<std::size_t>(
        {{1, rc::gen::just<std::size_t>(0)}, {4, rc::gen::inRange<std::size_t>(1, max_chars + 1)}});
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += encode_utf8(*code_point(controls));
    return out;
  });
}

// Any bytes at all: NUL, controls, invalid UTF-8.
inline Gen<std::string> any_bytes(std::size_t max_bytes) {
  return rc::gen::exec([=] {
    const std::size_t n = *rc::gen::inRange<std::size_t>(0, max_bytes + 1);
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(static_cast<char>(*rc::gen::weightedOneOf<std::uint8_t>(
          {{3, rc::gen::inRange<std::uint8_t>(0x20, 0x7f)},
           {1, rc::gen::elementOf(std::vector<std::uint8_t>{0x00, 0x01, 0x7f, 0x80, 0xbf, 0xc0,
                                                            0xc3, 0xe2, 0xf0, 0xf5, 0xff})},
           {1, rc::gen::arbitrary<std::uint8_t>()}})));
    }
    return out;
  });
}

// The raw bits of a scalar of this type, favouring boundaries: 0, 1, the unsigned and signed
// extremes, and for floats signed zeros, infinities, NaNs, denormals and the extreme finites.
inline Gen<std::uint64_t> scalar_bits(ValueType type, bool canonical) {
  if (type == ValueType::Bool) {
    if (canonical) return rc::gen::elementOf(std::vector<std::uint64_t>{0, 1});
    return rc::gen::weightedOneOf<std::uint64_t>(
        {{4, rc::gen::elementOf(std::vector<std::uint64_t>{0, 1})},
         {1, rc::gen::map(rc::gen::arbitrary<std::uint8_t>(),
                          [](std::uint8_t b) { return std::uint64_t{b}; })}});
  }
  const std::uint32_t width = scalar_size(type);
  const std::uint64_t mask = width == 8 ? kU64Max : (std::uint64_t{1} << (8 * width)) - 1;
  const std::uint64_t sign = std::uint64_t{1} << (8 * width - 1);
  std::vector<std::uint64_t> edges = {0, 1, 2, mask, mask - 1, sign, sign - 1, sign + 1};
  if (type == ValueType::Float32) {
    edges = {0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000,
             0x7f800001, 0xffffffff, 0x00000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff};
  } else if (type == ValueType::Float64) {
    edges = {0x0000000000000000, 0x8000000000000000, 0x3ff0000000000000, 0xbff0000000000000,
             0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff0000000000001,
             0x0000000000000001, 0x0010000000000000, 0x7fefffffffffffff, 0xffffffffffffffff};
  }
  return rc::gen::weightedOneOf<std::uint64_t>(
      {{3, rc::gen::elementOf(edges)},
       {2, rc::gen::map(rc::gen::arbitrary<std::uint64_t>(),
                        [mask](std::uint64_t v) { return v & mask; })}});
}

// =================================================================================================
// Values
// =================================================================================================

struct ValueOptions {
  std::uint32_t version = 3;  // 1: types 0..9 only
  std::uint32_t depth = 2;    // how deep arrays of arrays may nest (0: none)
  bool canonical = true;      // valid UTF-8 without NUL, bools 0 or 1
  std::size_t max_items = 5;
};

inline std::vector<ValueType> value_types(std::uint32_t version, bool arrays) {
  std::vector<ValueType> out;
  const std::uint32_t count = version == 1 ? kValueTypeCountV1 : kValueTypeCount;
  for (std::uint32_t t = 0; t < count; ++t) {
    if (!arrays && t == static_cast<std::uint32_t>(ValueType::Array)) continue;
    out.push_back(static_cast<ValueType>(t));
  }
  return out;
}

inline Gen<Value> value_of_type(ValueType type, ValueOptions options);

inline Gen<Value> any_value(ValueOptions options) {
  return rc::gen::mapcat(rc::gen::elementOf(value_types(options.version, true)),
                         [options](ValueType type) { return value_of_type(type, options); });
}

inline Gen<Value> value_of_type(ValueType type, ValueOptions options) {
  if (type == ValueType::String) {
    return rc::gen::map(options.canonical ? utf8_text(12) : any_bytes(16),
                        [](std::string text) { return Value::string(std::move(text)); });
  }
  if (type != ValueType::Array) {
    return rc::gen::map(scalar_bits(type, options.canonical),
                        [type](std::uint64_t bits) { return Value::integer(type, bits); });
  }
  return rc::gen::exec([options] {
    const ValueType element = *rc::gen::elementOf(value_types(options.version, options.depth > 0));
    ValueOptions inner = options;
    if (element == ValueType::Array) inner.depth = options.depth - 1;
    const std::size_t count = *rc::gen::weightedOneOf<std::size_t>(
        {{2, rc::gen::just<std::size_t>(0)},
         {5, rc::gen::inRange<std::size_t>(1, options.max_items + 1)}});
    std::vector<Value> items;
    for (std::size_t i = 0; i < count; ++i) items.push_back(*value_of_type(element, inner));
    return Value::array(element, std::move(items));
  });
}

// =================================================================================================
// Tensors
// =================================================================================================

inline std::vector<std::uint32_t> usable_tensor_types() {
  std::vector<std::uint32_t> out;
  for (std::uint32_t id = 0; id < kTensorTypeCount; ++id) {
    if (!tensor_type(id)->removed()) out.push_back(id);
  }
  return out;
}

// A name strict accepts: 1..63 bytes, printable ASCII or valid UTF-8, no controls.
inline Gen<std::string> tensor_name() {
  static const std::vector<std::string> kParts = {"attn_q",   "attn_k",    "attn_v", "ffn_up",
                                                  "ffn_down", "attn_norm", "output"};
  return rc::gen::weightedOneOf<std::string>({
      {3, rc::gen::exec([] {
         const int block = *rc::gen::inRange(0, 40);
         return "blk." + std::to_string(block) + "." + *rc::gen::elementOf(kParts) + ".weight";
       })},
      {1, rc::gen::elementOf(std::vector<std::string>{"token_embd.weight", "output.weight",
                                                      "output_norm.weight", "rope_freqs"})},
      {2, rc::gen::map(utf8_text(20, false),
                       [](std::string text) { return text.empty() ? std::string("t") : text; })},
      {1, rc::gen::map(rc::gen::inRange<std::size_t>(1, 64),
                       [](std::size_t n) { return std::string(n, 'n'); })},
  });
}

struct TensorOptions {
  bool zero_dims = false;  // a dim may be 0 (a zero-size tensor; GGUF3008 in strict)
};

// A tensor of a usable type whose row is a whole number of blocks; small (at most a few
// kilobytes). Its data is unset (the writer writes zeros) or seeded bytes of exactly nbytes.
inline Gen<Tensor> tensor(TensorOptions options = {}) {
  return rc::gen::exec([options] {
    Tensor t;
    t.name = *tensor_name();
    t.type = *rc::gen::elementOf(usable_tensor_types());
    const std::uint32_t block = tensor_type(t.type)->block_size;
    const std::size_t n_dims =
        block == 1
            ? *rc::gen::weightedElement<std::size_t>({{3, 1}, {3, 2}, {1, 0}, {1, 3}, {1, 4}})
            : *rc::gen::weightedElement<std::size_t>({{3, 1}, {3, 2}, {1, 3}, {1, 4}});
    const Gen<std::uint64_t> other =
        options.zero_dims
            ? rc::gen::weightedElement<std::uint64_t>({{6, 1}, {3, 2}, {1, 3}, {2, 0}})
            : rc::gen::weightedElement<std::uint64_t>({{6, 1}, {3, 2}, {1, 3}});
    for (std::size_t d = 0; d < n_dims; ++d) {
      if (d == 0) {
        std::uint64_t rows = block == 1 ? *rc::gen::weightedOneOf<std::uint64_t>(
                                              {{3, rc::gen::elementOf(std::vector<std::uint64_t>{
                                                       1, 2, 3, 4, 7, 8, 16, 31, 32, 33})},
                                               {1, rc::gen::inRange<std::uint64_t>(1, 80)}})
                                        : *rc::gen::weightedElement<std::uint64_t>(
                                              {{4, 1}, {2, 2}, {block >= 128 ? 0u : 1u, 3}});
        if (options.zero_dims && *rc::gen::weightedElement<int>({{6, 0}, {1, 1}}) == 1) rows = 0;
        t.dims.push_back(rows * (block == 1 ? 1 : block));
      } else {
        t.dims.push_back(*other);
      }
    }
    if (*rc::gen::weightedElement<int>({{2, 0}, {1, 1}}) == 1) {
      const auto nbytes = tensor_nbytes(t.type, t.dims);
      const std::uint64_t seed = *rc::gen::arbitrary<std::uint64_t>();
      if (nbytes) t.data = seeded_bytes(seed | 1, *nbytes);
    }
    return t;
  });
}

// =================================================================================================
// Alignments
// =================================================================================================

inline Gen<Alignment> alignment(std::uint32_t min = 1) {
  std::vector<std::uint32_t> all;
  for (std::uint32_t a = min; a <= 4096; a *= 2) all.push_back(a);
  std::vector<std::uint32_t> edges;
  for (std::uint32_t a : {32u, 1u, 8u, 4096u}) {
    if (a >= min) edges.push_back(a);
  }
  return rc::gen::map(rc::gen::weightedOneOf<std::uint32_t>(
                          {{2, rc::gen::elementOf(edges)}, {3, rc::gen::elementOf(all)}}),
                      [](std::uint32_t v) { return Alignment{v}; });
}

}  // namespace gen

// =================================================================================================
// Whole files
// =================================================================================================

// A file strict passes (no error, no warning) apart from what implied_findings() lists: v2 and
// v3, both byte orders, a standard-key set consistent with itself (tokenizer lengths, token ids,
// quantization version when a tensor is quantized, general.alignment a power of two >= 8),
// free pairs of any canonical non-nested value, tensors of every usable type.
struct ValidModel {
  Document doc;
  bool pad_when_no_tensors = false;  // ggml's C writer pads a file without tensors; gguf-py not

  [[nodiscard]] WriteOptions options() const {
    WriteOptions o;
    o.pad_when_no_tensors = pad_when_no_tensors;
    return o;
  }
  [[nodiscard]] Written write() const { return ggufcheck::write(doc, options()); }
};

inline std::string_view architecture_of(const Document& doc) {
  for (const KeyValue& kv : doc.metadata) {
    if (kv.key == "general.architecture" && kv.value.type == ValueType::String) {
      return kv.value.text;
    }
  }
  return {};
}

inline const KeyValue* find_pair(const Document& doc, std::string_view key) {
  for (const KeyValue& kv : doc.metadata) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}
inline KeyValue* find_pair(Document& doc, std::string_view key) {
  for (KeyValue& kv : doc.metadata) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}
inline std::optional<std::size_t> pair_index(const Document& doc, std::string_view key) {
  for (std::size_t i = 0; i < doc.metadata.size(); ++i) {
    if (doc.metadata[i].key == key) return i;
  }
  return std::nullopt;
}

inline bool is_quantized(std::uint32_t type) {
  const TensorTypeInfo* info = tensor_type(type);
  return info != nullptr && info->quantized();
}

inline bool has_quantized_tensor(const Document& doc) {
  return std::any_of(doc.tensors.begin(), doc.tensors.end(),
                     [](const Tensor& t) { return is_quantized(t.type); });
}

// The alignment the writer and the validator use: the first general.alignment pair decides; 32
// unless it is a non-zero uint32 (gguf-format.md section 1).
inline std::uint32_t effective_alignment(const Document& doc) {
  const KeyValue* kv = find_pair(doc, "general.alignment");
  if (kv != nullptr && kv->value.type == ValueType::Uint32 &&
      kv->raw_type.value_or(static_cast<std::uint32_t>(ValueType::Uint32)) ==
          static_cast<std::uint32_t>(ValueType::Uint32) &&
      kv->value.bits != 0) {
    return static_cast<std::uint32_t>(kv->value.bits);
  }
  return kDefaultAlignment;
}

// A key that names no standard key (free to hold any value).
inline bool is_free_key(std::string_view key, std::string_view arch) {
  const std::string_view first = key.substr(0, key.find('.'));
  return !reserved_first_segment(first) && first != arch;
}

inline void ensure_quantization_version(Document& doc) {
  if (find_pair(doc, "general.quantization_version") == nullptr) {
    doc.metadata.push_back({"general.quantization_version", Value::u32(2), {}});
  }
}

// Makes tensor names unique (appending 'x', keeping at most 63 bytes of valid UTF-8).
inline void make_names_unique(Document& doc) {
  std::set<std::string> seen;
  for (Tensor& t : doc.tensors) {
    while (seen.count(t.name) != 0) {
      if (t.name.size() >= 63) t.name = truncate_utf8(t.name, 40);
      t.name += "x";
    }
    seen.insert(t.name);
  }
}

namespace gen {

inline Gen<ValidModel> valid_model() {
  return rc::gen::exec([] {
    ValidModel m;
    Document& doc = m.doc;
    doc.version = *rc::gen::weightedElement<std::uint32_t>({{3, 3}, {1, 2}});
    doc.endian = *rc::gen::weightedElement<Endian>({{3, Endian::Little}, {1, Endian::Big}});
    const std::string arch = *rc::gen::elementOf(std::vector<std::string>{
        "llama", "command-r", "qwen2", "nomic-bert", "gpt2", "jina-bert-v2", "t5"});
    std::vector<KeyValue>& pairs = doc.metadata;
    pairs.push_back({"general.architecture", Value::string(arch), {}});
    const auto maybe = [](int weight_yes) {
      return *rc::gen::weightedElement<bool>(
          {{2, false}, {static_cast<std::size_t>(weight_yes), true}});
    };
    if (maybe(2)) pairs.push_back({"general.name", Value::string(*utf8_text(10)), {}});
    if (maybe(1)) {
      pairs.push_back({"general.alignment", Value::u32((*alignment(8)).value), {}});
    }
    if (maybe(1)) {
      pairs.push_back(
          {"general.file_type", Value::u32(*rc::gen::inRange<std::uint32_t>(0, 40)), {}});
    }
    if (maybe(1)) {
      const bool wide = maybe(1);
      pairs.push_back({arch + ".context_length",
                       wide ? Value::u64(*rc::gen::inRange<std::uint64_t>(1, 1u << 20))
                            : Value::u32(*rc::gen::inRange<std::uint32_t>(1, 1u << 20)),
                       {}});
    }
    if (maybe(1))
      pairs.push_back({arch + ".block_count", Value::u32(*rc::gen::inRange(1u, 100u)), {}});
    if (maybe(1)) {
      const std::size_t n =
          *rc::gen::weightedElement<std::size_t>({{1, 0}, {3, 1}, {3, 4}, {1, 9}});
      std::vector<Value> tokens, scores, types;
      for (std::size_t i = 0; i < n; ++i) {
        tokens.push_back(Value::string(*utf8_text(6)));
        scores.push_back(
            Value::integer(ValueType::Float32, *scalar_bits(ValueType::Float32, true)));
        types.push_back(Value::i32(*rc::gen::inRange(0, 7)));
      }
      pairs.push_back({"tokenizer.ggml.model", Value::string("llama"), {}});
      pairs.push_back({"tokenizer.ggml.tokens", Value::array(ValueType::String, tokens), {}});
      if (maybe(2))
        pairs.push_back({"tokenizer.ggml.scores", Value::array(ValueType::Float32, scores), {}});
      if (maybe(1))
        pairs.push_back({"tokenizer.ggml.token_type", Value::array(ValueType::Int32, types), {}});
      if (n > 0) {
        for (const char* id : {"bos", "eos", "padding"}) {
          if (maybe(1)) {
            pairs.push_back(
                {std::string("tokenizer.ggml.") + id + "_token_id",
                 Value::u32(static_cast<std::uint32_t>(*rc::gen::inRange<std::size_t>(0, n))),
                 {}});
          }
        }
      }
      if (maybe(1)) pairs.push_back({"tokenizer.ggml.add_bos_token", Value::boolean(maybe(1)), {}});
    }
    if (maybe(1)) pairs.push_back({"tokenizer.chat_template", Value::string(*utf8_text(16)), {}});
    if (maybe(1)) pairs.push_back({*chat_template_key_text(), Value::string(*utf8_text(8)), {}});
    if (maybe(1)) {
      std::vector<Value> tags;
      for (std::size_t i = 0, n = *rc::gen::inRange<std::size_t>(0, 3); i < n; ++i) {
        tags.push_back(Value::string(*utf8_text(5)));
      }
      pairs.push_back({"general.tags", Value::array(ValueType::String, tags), {}});
    }
    // Free pairs: conventional (or dashed) keys, canonical values without nesting.
    const std::size_t free_pairs = *rc::gen::weightedElement<std::size_t>({{2, 0}, {3, 2}, {2, 5}});
    ValueOptions values;
    values.depth = 0;
    for (std::size_t i = 0; i < free_pairs; ++i) {
      const std::string k = *rc::gen::weightedOneOf<std::string>(
          {{3, conventional_key_text()}, {1, dashed_key_text()}});
      if (!is_free_key(k, arch) || find_pair(doc, k) != nullptr) continue;
      pairs.push_back({k, *any_value(values), {}});
    }
    // Any order: the validator must not depend on it.
    std::vector<std::size_t> ranks = *rc::gen::container<std::vector<std::size_t>>(
        pairs.size(), rc::gen::inRange<std::size_t>(0, 4));
    std::vector<std::size_t> order(pairs.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return ranks[a] < ranks[b]; });
    std::vector<KeyValue> shuffled;
    for (std::size_t i : order) shuffled.push_back(pairs[i]);
    pairs = std::move(shuffled);

    const std::size_t tensors =
        *rc::gen::weightedElement<std::size_t>({{1, 0}, {3, 1}, {3, 3}, {1, 5}});
    for (std::size_t i = 0; i < tensors; ++i) doc.tensors.push_back(*tensor());
    make_names_unique(doc);
    if (has_quantized_tensor(doc)) ensure_quantization_version(doc);
    if (doc.tensors.empty()) m.pad_when_no_tensors = maybe(1);
    return m;
  });
}

}  // namespace gen

// A document for the round trip: anything the writer writes and read_document reads back. Tensor
// offsets are explicit (the sequential layout), so read_document(write(doc)) == doc exactly.
struct AnyDocument {
  Document doc;
};

namespace gen {

inline Gen<AnyDocument> any_document() {
  return rc::gen::exec([] {
    AnyDocument any;
    Document& doc = any.doc;
    doc.version = *rc::gen::elementOf(std::vector<std::uint32_t>{3, 2, 1});
    doc.endian = *rc::gen::elementOf(std::vector<Endian>{Endian::Little, Endian::Big});
    ValueOptions values;
    values.version = doc.version;
    values.canonical = false;
    const std::size_t pairs = *rc::gen::inRange<std::size_t>(0, 7);
    for (std::size_t i = 0; i < pairs; ++i) {
      std::string k =
          *rc::gen::weightedOneOf<std::string>({{2, conventional_key_text()}, {1, any_bytes(12)}});
      doc.metadata.push_back({std::move(k), *any_value(values), {}});
    }
    // general.alignment: a power of two, any other uint32 (0 and non-powers of two included),
    // another type, or twice (the first decides, for the writer as for the readers).
    const std::size_t alignments = *rc::gen::weightedElement<std::size_t>({{4, 0}, {3, 1}, {1, 2}});
    for (std::size_t i = 0; i < alignments; ++i) {
      const std::size_t at = *rc::gen::inRange<std::size_t>(0, doc.metadata.size() + 1);
      const Value value = *rc::gen::weightedOneOf<Value>(
          {{4, rc::gen::map(alignment(), [](Alignment a) { return Value::u32(a.value); })},
           {1, rc::gen::map(rc::gen::elementOf(std::vector<std::uint32_t>{0, 3, 24, 100}),
                            [](std::uint32_t v) { return Value::u32(v); })},
           {1, rc::gen::elementOf(
                   doc.version == 1
                       ? std::vector<Value>{Value::i32(16), Value::u16(8), Value::string("32")}
                       : std::vector<Value>{Value::u64(64), Value::i32(16), Value::u16(8),
                                            Value::string("32")})}});
      doc.metadata.insert(doc.metadata.begin() + static_cast<std::ptrdiff_t>(at),
                          KeyValue{"general.alignment", value, {}});
    }
    const std::uint32_t align = effective_alignment(doc);
    const std::size_t tensors = *rc::gen::inRange<std::size_t>(0, 5);
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < tensors; ++i) {
      Tensor t;
      t.name = *rc::gen::weightedOneOf<std::string>({{2, tensor_name()}, {1, any_bytes(70)}});
      const int shape = *rc::gen::weightedElement<int>({{6, 0}, {1, 1}, {1, 2}, {1, 3}});
      if (shape == 0) {  // any usable tensor, zero dims included
        TensorOptions options;
        options.zero_dims = true;
        Tensor shaped = *tensor(options);
        t.type = shaped.type;
        t.dims = shaped.dims;
      } else if (shape == 1) {  // removed or unknown type: no size, no data
        t.type = *rc::gen::elementOf(
            std::vector<std::uint32_t>{4, 5, 31, 33, 36, 38, 43, 255, 0xFFFFFFFF});
        t.dims = {32};
      } else if (shape == 2) {  // a row that is not a whole number of blocks
        t.type = *rc::gen::elementOf(std::vector<std::uint32_t>{2, 8, 10, 39, 41});
        t.dims = {tensor_type(t.type)->block_size + 1, 2};
      } else {  // hostile: nbytes beyond any file (the writer writes no data)
        t.type = *rc::gen::elementOf(std::vector<std::uint32_t>{0, 1, 24, 28});
        const std::uint64_t huge = *rc::gen::elementOf(
            doc.version == 1 ? std::vector<std::uint64_t>{0x7FFFFFFF, 0xFFFFFFFF}
                             : std::vector<std::uint64_t>{0x7FFFFFFF, 0xFFFFFFFF, 1ULL << 40,
                                                          1ULL << 62, kPow63, kU64Max});
        t.dims = {4, huge};
      }
      const auto nbytes = tensor_nbytes(t.type, t.dims);
      if (nbytes && *nbytes <= (64ULL << 20)) {
        t.data = seeded_bytes(*rc::gen::arbitrary<std::uint64_t>(), *nbytes);
      }
      t.offset = running;
      running += round_up(t.data ? t.data->size() : 0, align);
      doc.tensors.push_back(std::move(t));
    }
    return any;
  });
}

}  // namespace gen

// =================================================================================================
// Expected findings
// =================================================================================================

// A finding a file must produce: code, byte offset and length, in the profiles marked (and then
// only where the catalogue does not silence the code).
struct Expect {
  Code code{};
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::array<bool, 3> profiles{true, true, true};
};

using FindingKey = std::tuple<std::uint16_t, std::uint64_t, std::uint64_t>;  // code, offset, length

inline std::vector<FindingKey> expected_in(const std::vector<Expect>& expected, Profile profile) {
  std::vector<FindingKey> out;
  for (const Expect& e : expected) {
    if (!e.profiles[static_cast<std::size_t>(profile)]) continue;
    if (catalogue_entry(e.code).severity(profile) == Severity::Silent) continue;
    out.emplace_back(static_cast<std::uint16_t>(e.code), e.offset, e.length);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<FindingKey> actual_findings(const Report& report) {
  std::vector<FindingKey> out;
  for (const Finding& f : report.findings) {
    out.emplace_back(static_cast<std::uint16_t>(f.code), f.offset, f.length);
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string describe(const std::vector<FindingKey>& findings) {
  std::string out;
  for (const auto& [code, offset, length] : findings) {
    if (!out.empty()) out += ", ";
    out += code_string(static_cast<Code>(code)) + "@" + hex(offset) + "+" + std::to_string(length);
  }
  return out.empty() ? "(none)" : out;
}

inline std::string describe(const Report& report) {
  std::string out;
  for (const Finding& f : report.findings) {
    out += "\n    " + code_string(f.code) + " " + std::string(to_string(f.severity)) + " @" +
           hex(f.offset) + "+" + std::to_string(f.length) + " " + f.path + ": " + f.message;
  }
  return out.empty() ? "\n    (no findings)" : out;
}

// How far the validator reads a broken file: the header, pairs [0, pairs), tensor infos
// [0, tensors). type_changed: tensors whose type id was overwritten (their GGUF3014 goes).
struct Reach {
  bool header = true;
  std::size_t pairs = std::numeric_limits<std::size_t>::max();
  std::size_t tensors = std::numeric_limits<std::size_t>::max();
  std::set<std::size_t> type_changed;
};

// What a written document's content implies, finding by finding (gguf-format.md, design.md):
// version 2 -> GGUF1005; big-endian -> GGUF1006 (an error in strict); a printable key that is
// not conventional -> GGUF2006 per profile (spec: '-' and upper case are unconventional too);
// a tensor of type 39..42 -> GGUF3014; n_dims 0 -> GGUF3015.
inline std::vector<Expect> implied_findings(const Document& doc, const Layout& layout,
                                            const Reach& reach = {}) {
  std::vector<Expect> out;
  const std::uint64_t width = doc.version == 1 ? 4 : 8;
  if (reach.header) {
    if (doc.version == 2) out.push_back({Code::OldVersion, 4, 4});
    if (doc.endian == Endian::Big) out.push_back({Code::ByteSwappedFile, 4, 4});
  }
  for (std::size_t i = 0; i < doc.metadata.size() && i < reach.pairs; ++i) {
    const std::string& key = doc.metadata[i].key;
    if (key.empty() || !printable_ascii(key)) continue;
    const std::uint64_t at = layout.pairs[i].key_offset;
    const std::uint64_t length = width + key.size();
    if (!conventional_key(key, true)) {
      out.push_back({Code::UnconventionalKey, at, length, {true, false, true}});
    }
    if (!conventional_key(key, false)) {
      out.push_back({Code::UnconventionalKey, at, length, {false, true, false}});
    }
  }
  for (std::size_t i = 0; i < doc.tensors.size() && i < reach.tensors; ++i) {
    const Tensor& t = doc.tensors[i];
    const TensorTypeInfo* type = tensor_type(t.type);
    if (type != nullptr && type->recent() && reach.type_changed.count(i) == 0) {
      out.push_back({Code::NewTensorType, layout.tensors[i].type_offset, 4});
    }
    if (t.dims.empty()) out.push_back({Code::ScalarTensor, layout.tensors[i].n_dims_offset, 4});
  }
  return out;
}

// =================================================================================================
// Targeted faults
// =================================================================================================

enum class Fault : std::uint8_t {
  // header
  TruncatedHeader,
  BadMagic,
  UnsupportedVersion,
  ObsoleteVersion,
  OldVersion,
  ByteSwappedVersion,
  KvCountImpossible,
  TensorCountImpossible,
  // metadata
  TruncatedMetadata,
  StringLength,
  TruncatedInString,
  EmptyKey,
  DuplicateKey,
  KeyByte,
  UnconventionalKeyByte,
  LongKey,
  ValueType,
  ArrayType,
  NestedArray,
  ArrayCount,
  BoolByte,
  InvalidUtf8Byte,
  NulByte,
  // tensor infos
  TruncatedTensorInfo,
  LongTensorName,
  EmptyTensorName,
  DuplicateTensorName,
  TensorNameByte,
  ExtraDims,
  NDimsHuge,
  NegativeDim,
  ZeroDim,
  ElementCountOverflow,
  UnknownTensorType,
  RemovedTensorType,
  RowNotBlockMultiple,
  ByteSizeOverflow,
  OffsetWraps,
  NewTensorType,
  ScalarTensor,
  // data layout
  MisalignedOffset,
  OverlappingOffset,
  OffsetOutOfBounds,
  TruncatedData,
  Gap,
  PaddingByte,
  TruncatedBeforeData,
  TruncatedFinalPadding,
  TrailingBytes,
  // standard keys
  AlignmentType,
  AlignmentZero,
  AlignmentNotPowerOfTwo,
  AlignmentBelow8,
  AlignmentAbove65536,
  ArchitectureKeyByte,
  QuantizationVersionKeyByte,
  StandardKeyType,
  TokenizerArrayLength,
  TokenId,
};

struct FaultInfo {
  Fault fault;
  std::string_view name;
  Code target;  // the code the fault exists for
  bool exact;   // false: the rest of the file is re-read in another layout (see the edit)
  std::string_view edit;
};

inline const std::vector<FaultInfo>& fault_table() {
  static const std::vector<FaultInfo> kTable = {
      {Fault::TruncatedHeader, "truncated-header", Code::TruncatedHeader, true,
       "cut the file inside the 24-byte header"},
      {Fault::BadMagic, "bad-magic", Code::BadMagic, true, "xor a byte of the magic"},
      {Fault::UnsupportedVersion, "unsupported-version", Code::UnsupportedVersion, true,
       "version field := 0, > 3, or byte-swapped > 3"},
      {Fault::ObsoleteVersion, "obsolete-version", Code::ObsoleteVersion, false,
       "version field := 1 (the rest is then read with 32-bit widths: only GGUF1004 is fixed)"},
      {Fault::OldVersion, "old-version", Code::OldVersion, true, "version field 3 := 2"},
      {Fault::ByteSwappedVersion, "byte-swapped-version", Code::ByteSwappedFile, false,
       "version field of a little-endian file byte-swapped (the rest is then read big-endian: "
       "only GGUF1006 is fixed)"},
      {Fault::KvCountImpossible, "kv-count", Code::ImpossibleCount, true,
       "kv_count := more pairs than the bytes after the header can hold"},
      {Fault::TensorCountImpossible, "tensor-count", Code::ImpossibleCount, true,
       "tensor_count := more infos than the bytes after the header can hold"},
      {Fault::TruncatedMetadata, "truncated-metadata", Code::TruncatedMetadata, true,
       "cut the file inside a fixed-size field of a pair (key length, type, scalar, string "
       "length, array header)"},
      {Fault::StringLength, "string-length", Code::TruncatedString, true,
       "a key, string value or tensor name length := more than the bytes left"},
      {Fault::TruncatedInString, "truncated-in-string", Code::TruncatedString, true,
       "cut the file inside the bytes of a key, string value or tensor name"},
      {Fault::EmptyKey, "empty-key", Code::EmptyKey, true, "a pair's key := \"\""},
      {Fault::DuplicateKey, "duplicate-key", Code::DuplicateKey, true,
       "a pair's key := another pair's key"},
      {Fault::KeyByte, "key-byte", Code::InvalidKeyBytes, true,
       "a key byte := NUL, a control byte or a non-ASCII byte"},
      {Fault::UnconventionalKeyByte, "unconventional-key-byte", Code::UnconventionalKey, true,
       "a key byte := upper case, punctuation, space, or a '.' making an empty segment"},
      {Fault::LongKey, "long-key", Code::KeyTooLong, true, "a key := 65536 bytes or more"},
      {Fault::ValueType, "value-type", Code::UnknownValueType, true, "a value type := 13 or more"},
      {Fault::ArrayType, "array-type", Code::UnknownArrayType, true,
       "an array element type := 13 or more"},
      {Fault::NestedArray, "nested-array", Code::NestedArray, true,
       "the element type of an empty array := 9 (array)"},
      {Fault::ArrayCount, "array-count", Code::ImpossibleArrayCount, true,
       "an array count := more elements than the bytes left can hold"},
      {Fault::BoolByte, "bool-byte", Code::NonCanonicalBool, true,
       "a bool byte (scalar or array element) := 2..255"},
      {Fault::InvalidUtf8Byte, "invalid-utf8-byte", Code::InvalidUtf8, true,
       "a string value byte := a byte never valid in UTF-8"},
      {Fault::NulByte, "nul-byte", Code::NulInString, true,
       "an ASCII byte of a string value := NUL"},
      {Fault::TruncatedTensorInfo, "truncated-tensor-info", Code::TruncatedTensorInfo, true,
       "cut the file inside a fixed-size field of a tensor info"},
      {Fault::LongTensorName, "long-tensor-name", Code::TensorNameTooLong, true,
       "a tensor name := 64 bytes or more"},
      {Fault::EmptyTensorName, "empty-tensor-name", Code::EmptyTensorName, true,
       "a tensor name := \"\""},
      {Fault::DuplicateTensorName, "duplicate-tensor-name", Code::DuplicateTensorName, true,
       "a tensor name := another tensor's name"},
      {Fault::TensorNameByte, "tensor-name-byte", Code::InvalidTensorNameBytes, true,
       "an ASCII byte of a tensor name := NUL, a control byte or a byte invalid in UTF-8"},
      {Fault::ExtraDims, "extra-dims", Code::TooManyDims, true,
       "a tensor's dims := its dims, 1s up to 4, then 1..4 more"},
      {Fault::NDimsHuge, "n-dims-huge", Code::TooManyDims, true,
       "n_dims := more dims than the bytes left hold (also GGUF3001)"},
      {Fault::NegativeDim, "negative-dim", Code::NegativeDim, true, "a dim := 2^63 or more"},
      {Fault::ZeroDim, "zero-dim", Code::ZeroDim, true,
       "a dim := 0 (the tensor's data becomes a gap, or trailing bytes when it is the last)"},
      {Fault::ElementCountOverflow, "element-count", Code::ElementCountOverflow, true,
       "a dim := a value below 2^63 whose product with the others is 2^63 or more"},
      {Fault::UnknownTensorType, "unknown-tensor-type", Code::UnknownTensorType, true,
       "a tensor type := 43 or more"},
      {Fault::RemovedTensorType, "removed-tensor-type", Code::RemovedTensorType, true,
       "a tensor type := 4, 5, 31..33 or 36..38"},
      {Fault::RowNotBlockMultiple, "row-not-block-multiple", Code::RowNotBlockMultiple, true,
       "ne[0] of a quantized tensor := not a multiple of its block size"},
      {Fault::ByteSizeOverflow, "byte-size", Code::ByteSizeOverflow, true,
       "a dim of a 4- or 8-byte type := elements < 2^63 but bytes >= 2^64"},
      {Fault::OffsetWraps, "offset-wraps", Code::ByteSizeOverflow, true,
       "an offset := an aligned value whose sum with the padded size wraps (also GGUF4004, "
       "GGUF4003)"},
      {Fault::NewTensorType, "new-tensor-type", Code::NewTensorType, true,
       "type IQ4_XS := MXFP4, or Q4_0/IQ4_NL := NVFP4 (same byte size)"},
      {Fault::ScalarTensor, "scalar-tensor", Code::ScalarTensor, true,
       "a tensor of a block-1 type := a scalar (n_dims 0)"},
      {Fault::MisalignedOffset, "misaligned-offset", Code::MisalignedOffset, true,
       "an offset += k, 0 < k <= the padding after the tensor (also GGUF4004)"},
      {Fault::OverlappingOffset, "overlapping-offset", Code::OverlappingTensors, true,
       "tensor[i] offset := an aligned offset inside tensor[i-1] (also GGUF4004; trailing bytes "
       "when i is the last)"},
      {Fault::OffsetOutOfBounds, "offset-out-of-bounds", Code::TensorOutOfBounds, true,
       "an offset := an aligned value whose data runs past the end (also GGUF4004)"},
      {Fault::TruncatedData, "truncated-data", Code::TensorOutOfBounds, true,
       "cut the file inside the tensor data"},
      {Fault::Gap, "gap", Code::NonContiguousLayout, true,
       "insert a gap of 1..3 alignment units before a tensor's data, offsets shifted"},
      {Fault::PaddingByte, "padding-byte", Code::NonzeroPadding, true,
       "a padding byte (before the data or after a tensor) := non-zero"},
      {Fault::TruncatedBeforeData, "truncated-before-data", Code::TruncatedBeforeData, true,
       "cut the file inside the padding before the data section"},
      {Fault::TruncatedFinalPadding, "truncated-final-padding", Code::MissingFinalPadding, true,
       "cut the file inside the padding after the last tensor"},
      {Fault::TrailingBytes, "trailing-bytes", Code::TrailingBytes, true,
       "append bytes to the file"},
      {Fault::AlignmentType, "alignment-type", Code::AlignmentWrongType, true,
       "type of general.alignment (32) := int32 or float32 (same size)"},
      {Fault::AlignmentZero, "alignment-zero", Code::AlignmentZero, true,
       "general.alignment (32) := 0"},
      {Fault::AlignmentNotPowerOfTwo, "alignment-not-power-of-two", Code::AlignmentNotPowerOfTwo,
       true, "general.alignment of a file without tensors := not a power of two"},
      {Fault::AlignmentBelow8, "alignment-below-8", Code::AlignmentNotMultipleOf8, true,
       "general.alignment of a file without tensors := not a multiple of 8"},
      {Fault::AlignmentAbove65536, "alignment-above-65536", Code::AlignmentTooLarge, true,
       "general.alignment of a file without tensors := above 65536"},
      {Fault::ArchitectureKeyByte, "architecture-key-byte", Code::MissingArchitecture, true,
       "a letter of the key general.architecture := another letter"},
      {Fault::QuantizationVersionKeyByte, "quantization-version-key-byte",
       Code::MissingQuantizationVersion, true,
       "a letter of the key general.quantization_version := another letter"},
      {Fault::StandardKeyType, "standard-key-type", Code::KeyWrongType, true,
       "the type of a numeric standard key := another type of the same size"},
      {Fault::TokenizerArrayLength, "tokenizer-array-length", Code::TokenizerLengthMismatch, true,
       "tokenizer.ggml.scores or token_type := one element more or fewer"},
      {Fault::TokenId, "token-id", Code::TokenIdOutOfRange, true,
       "a tokenizer.ggml.*_token_id := the vocabulary size or more"},
  };
  return kTable;
}

inline const FaultInfo& fault_info(Fault fault) {
  for (const FaultInfo& info : fault_table()) {
    if (info.fault == fault) return info;
  }
  return fault_table().front();
}

inline std::vector<Fault> all_faults() {
  std::vector<Fault> out;
  for (const FaultInfo& info : fault_table()) out.push_back(info.fault);
  return out;
}

// A fault, the valid file it is applied to, and the numbers that choose the target field, the
// position in it and the new value (each taken modulo the number of options, so shrinking them
// towards 0 picks the first, simplest option).
struct Corruption {
  Fault fault = Fault::TruncatedHeader;
  ValidModel host;
  std::array<std::uint64_t, 4> choices{};
};

// The broken file and what validating it must report.
struct Corrupted {
  Fault fault = Fault::TruncatedHeader;
  Code target{};
  bool exact = true;
  ValidModel host;  // after the fault's preparation (what was written before the edit)
  Layout layout;    // of the written host
  ByteVector bytes;
  std::uint64_t field_offset = 0;    // where the edit is (the cut, the patched field)
  std::uint64_t finding_offset = 0;  // where the target finding points
  std::string edit;                  // what was done, with offsets and values
  std::vector<Expect> expected;      // every finding (exact), or those required (not exact)

  [[nodiscard]] std::vector<FindingKey> expected_in(Profile profile) const {
    return testing::expected_in(expected, profile);
  }
  // Whether the target finding is among the expected ones in the profile.
  [[nodiscard]] bool targets(Profile profile) const {
    const std::vector<FindingKey> in = expected_in(profile);
    return std::any_of(in.begin(), in.end(), [&](const FindingKey& k) {
      return std::get<0>(k) == static_cast<std::uint16_t>(target) &&
             std::get<1>(k) == finding_offset;
    });
  }
};

namespace fault_detail {

constexpr std::uint64_t kSizeWidth = 8;
constexpr std::uint64_t kHeaderSize = 24;
constexpr std::uint64_t kMinPair = 8 + 4 + 1;        // empty key, u8 value
constexpr std::uint64_t kMinTensor = 8 + 4 + 4 + 8;  // empty name, no dims

inline std::uint32_t byteswap32(std::uint32_t v) {
  return ((v & 0xFF) << 24) | ((v & 0xFF00) << 8) | ((v >> 8) & 0xFF00) | (v >> 24);
}

inline std::uint64_t nbytes_of(const Tensor& t) {
  return tensor_nbytes(t.type, t.dims).value_or(0);
}

inline std::uint64_t product_except(const std::vector<std::uint64_t>& dims, std::size_t skip) {
  std::uint64_t p = 1;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (d != skip) p *= dims[d];
  }
  return p;
}

// A value from a list of boundary candidates; `choice` picks, `random` fills the last slot.
inline std::uint64_t candidate(std::uint64_t choice, std::vector<std::uint64_t> options) {
  return options[pick(choice, options.size())];
}

inline std::uint64_t in_range(std::uint64_t choice, std::uint64_t lo, std::uint64_t hi) {
  if (hi <= lo) return lo;
  const std::uint64_t span = hi - lo;
  return span == kU64Max ? choice : lo + choice % (span + 1);
}

class Applier {
 public:
  explicit Applier(const Corruption& c) : c_(c), m_(c.host) {
    out_.fault = c.fault;
    const FaultInfo& info = fault_info(c.fault);
    out_.target = info.target;
    out_.exact = info.exact;
  }

  Corrupted run();

 private:
  const Corruption& c_;
  ValidModel m_;
  Corrupted out_;
  Written w_;
  ByteVector bytes_;
  Reach reach_;
  std::vector<Expect> extra_;

  [[nodiscard]] Document& doc() { return m_.doc; }
  [[nodiscard]] std::uint64_t ch(std::size_t i) const { return c_.choices[i]; }
  [[nodiscard]] Endian endian() const { return m_.doc.endian; }
  [[nodiscard]] const Layout& layout() const { return w_.layout; }
  [[nodiscard]] std::uint64_t size() const { return bytes_.size(); }
  [[nodiscard]] std::uint64_t tensor_count() const { return m_.doc.tensors.size(); }
  [[nodiscard]] std::uint64_t kv_count() const { return m_.doc.metadata.size(); }
  [[nodiscard]] std::uint64_t alignment() const { return w_.layout.alignment; }
  [[nodiscard]] std::uint64_t data_start() const { return w_.layout.data_start; }
  [[nodiscard]] std::uint64_t infos_start() const {
    return w_.layout.pairs.empty() ? kHeaderSize : w_.layout.pairs.back().end;
  }
  // Offset of tensor i's data relative to the data section.
  [[nodiscard]] std::uint64_t rel(std::size_t i) const {
    return w_.layout.tensors[i].data_position - w_.layout.data_start;
  }
  [[nodiscard]] std::uint64_t nbytes(std::size_t i) const { return nbytes_of(doc_c().tensors[i]); }
  [[nodiscard]] std::uint64_t padded(std::size_t i) const {
    return round_up(nbytes(i), alignment());
  }
  [[nodiscard]] const Document& doc_c() const { return m_.doc; }

  void write() {
    w_ = m_.write();
    bytes_ = w_.bytes;
  }
  void patch(std::uint64_t offset, std::uint64_t value, std::uint32_t width) {
    put_uint(bytes_, offset, value, width, endian());
    out_.field_offset = offset;
  }
  void patch_byte(std::uint64_t offset, std::uint8_t value) {
    bytes_.at(static_cast<std::size_t>(offset)) = value;
    out_.field_offset = offset;
  }
  void cut(std::uint64_t at) {
    bytes_.resize(static_cast<std::size_t>(at));
    out_.field_offset = at;
  }
  void expect(Code code, std::uint64_t offset, std::uint64_t length,
              std::array<bool, 3> profiles = {true, true, true}) {
    extra_.push_back({code, offset, length, profiles});
  }
  void target_at(std::uint64_t offset) { out_.finding_offset = offset; }
  void say(const std::string& text) { out_.edit = text; }

  std::size_t insert_pair(KeyValue kv, std::uint64_t choice) {
    const std::size_t at = pick(choice, doc().metadata.size() + 1);
    doc().metadata.insert(doc().metadata.begin() + static_cast<std::ptrdiff_t>(at), std::move(kv));
    return at;
  }
  std::size_t insert_tensor(Tensor t, std::uint64_t choice) {
    if (is_quantized(t.type)) ensure_quantization_version(doc());
    const std::size_t at = pick(choice, doc().tensors.size() + 1);
    doc().tensors.insert(doc().tensors.begin() + static_cast<std::ptrdiff_t>(at), std::move(t));
    make_names_unique(doc());
    return at;
  }
  // An existing tensor matching `ok`, or `fallback` inserted at a chosen position.
  template <typename Predicate>
  std::size_t tensor_where(Predicate ok, Tensor fallback, std::uint64_t choice) {
    std::vector<std::size_t> found;
    for (std::size_t i = 0; i < doc().tensors.size(); ++i) {
      if (ok(doc().tensors[i])) found.push_back(i);
    }
    if (!found.empty() && (choice & 3) != 0) return found[pick(choice >> 2, found.size())];
    return insert_tensor(std::move(fallback), choice >> 2);
  }
  static Tensor target_tensor(std::string name, std::vector<std::uint64_t> dims,
                              std::uint32_t type = 0) {
    Tensor t;
    t.name = std::move(name);
    t.dims = std::move(dims);
    t.type = type;
    return t;
  }
  std::string tensor_label(std::size_t i) const {
    return "tensor[" + std::to_string(i) + "] \"" + shown(doc_c().tensors[i].name) + "\"";
  }
  std::string pair_label(std::size_t i) const {
    return "kv[" + std::to_string(i) + "] \"" + shown(doc_c().metadata[i].key) + "\"";
  }

  // Whether a cut at or after `at` in the metadata passes the header's count checks, and one at
  // or after `at` in the tensor infos passes the tensor_count check: the truncation faults prefer
  // such places (3 times in 4), so that they mostly reach the code they target.
  [[nodiscard]] bool header_counts_pass(std::uint64_t at) const {
    const std::uint64_t remaining = at - kHeaderSize;
    return tensor_count() <= remaining / kMinTensor && kv_count() <= remaining / kMinPair;
  }
  [[nodiscard]] bool tensor_count_passes(std::uint64_t at) const {
    return tensor_count() <= (at - infos_start()) / kMinTensor;
  }
  template <typename T, typename Predicate>
  const T& prefer(std::uint64_t choice, const std::vector<T>& all, Predicate ok) const {
    std::vector<const T*> good;
    for (const T& x : all) {
      if (ok(x)) good.push_back(&x);
    }
    if (good.empty() || (choice & 3) == 0) return pick_of(choice >> 2, all);
    return *good[pick(choice >> 2, good.size())];
  }

  // The header's impossible-count checks for a file cut at `at` (bytes after the header);
  // returns false when kv_count fails them (nothing after the header is read).
  bool header_counts_after_cut(std::uint64_t at) {
    const std::uint64_t remaining = at - kHeaderSize;
    if (tensor_count() > remaining / kMinTensor) expect(Code::ImpossibleCount, 8, kSizeWidth);
    if (kv_count() > remaining / kMinPair) {
      expect(Code::ImpossibleCount, 16, kSizeWidth);
      reach_.pairs = 0;
      reach_.tensors = 0;
      target_at(16);
      return false;
    }
    return true;
  }
  // A cut inside pair k: GGUF2001 or GGUF2002 at `offset` unless the header checks fail first.
  void cut_in_pair(std::size_t k, std::uint64_t at, Code code, std::uint64_t offset) {
    cut(at);
    reach_.pairs = k;
    reach_.tensors = 0;
    if (!header_counts_after_cut(at)) return;
    expect(code, offset, at - offset);
    target_at(offset);
  }
  // A cut inside tensor info t: GGUF3001 or GGUF2002 unless tensor_count fails first.
  void cut_in_tensor(std::size_t t, std::uint64_t at, Code code, std::uint64_t offset) {
    cut(at);
    const std::uint64_t remaining = at - infos_start();
    if (tensor_count() > remaining / kMinTensor) {
      expect(Code::ImpossibleCount, 8, kSizeWidth);
      reach_.tensors = 0;
      target_at(8);
      return;
    }
    reach_.tensors = t;
    expect(code, offset, at - offset);
    target_at(offset);
  }

  // --- the faults ---------------------------------------------------------------------------
  void truncated_header();
  void bad_magic();
  void unsupported_version();
  void obsolete_version();
  void old_version();
  void byte_swapped_version();
  void count_impossible(bool kv);
  void truncated_metadata();
  void string_length();
  void truncated_in_string();
  void empty_key();
  void duplicate_key();
  void key_byte(bool conventional_breaking);
  void long_key();
  void value_type();
  void array_type();
  void nested_array();
  void array_count();
  void bool_byte();
  void string_byte(bool nul);
  void truncated_tensor_info();
  void long_tensor_name();
  void empty_tensor_name();
  void duplicate_tensor_name();
  void tensor_name_byte();
  void extra_dims();
  void n_dims_huge();
  void dim_fault(Fault fault);
  void tensor_type_fault(bool unknown);
  void offset_wraps();
  void new_tensor_type();
  void scalar_tensor();
  void misaligned_offset();
  void overlapping_offset();
  void offset_out_of_bounds();
  void truncated_data();
  void gap();
  void padding_byte();
  void truncated_before_data();
  void truncated_final_padding();
  void trailing_bytes();
  void alignment_fault(Fault fault);
  void key_letter(std::string_view key);
  void standard_key_type();
  void tokenizer_array_length();
  void token_id();

  void tensor_name_duplicates(const std::vector<std::string>& names);
  void ensure_vocab(std::size_t at_least);
  void set_alignment_32();
  std::pair<std::size_t, std::string> target_string_pair(bool array);
};

}  // namespace fault_detail

namespace fault_detail {

inline Corrupted Applier::run() {
  switch (c_.fault) {
    case Fault::TruncatedHeader: truncated_header(); break;
    case Fault::BadMagic: bad_magic(); break;
    case Fault::UnsupportedVersion: unsupported_version(); break;
    case Fault::ObsoleteVersion: obsolete_version(); break;
    case Fault::OldVersion: old_version(); break;
    case Fault::ByteSwappedVersion: byte_swapped_version(); break;
    case Fault::KvCountImpossible: count_impossible(true); break;
    case Fault::TensorCountImpossible: count_impossible(false); break;
    case Fault::TruncatedMetadata: truncated_metadata(); break;
    case Fault::StringLength: string_length(); break;
    case Fault::TruncatedInString: truncated_in_string(); break;
    case Fault::EmptyKey: empty_key(); break;
    case Fault::DuplicateKey: duplicate_key(); break;
    case Fault::KeyByte: key_byte(false); break;
    case Fault::UnconventionalKeyByte: key_byte(true); break;
    case Fault::LongKey: long_key(); break;
    case Fault::ValueType: value_type(); break;
    case Fault::ArrayType: array_type(); break;
    case Fault::NestedArray: nested_array(); break;
    case Fault::ArrayCount: array_count(); break;
    case Fault::BoolByte: bool_byte(); break;
    case Fault::InvalidUtf8Byte: string_byte(false); break;
    case Fault::NulByte: string_byte(true); break;
    case Fault::TruncatedTensorInfo: truncated_tensor_info(); break;
    case Fault::LongTensorName: long_tensor_name(); break;
    case Fault::EmptyTensorName: empty_tensor_name(); break;
    case Fault::DuplicateTensorName: duplicate_tensor_name(); break;
    case Fault::TensorNameByte: tensor_name_byte(); break;
    case Fault::ExtraDims: extra_dims(); break;
    case Fault::NDimsHuge: n_dims_huge(); break;
    case Fault::NegativeDim:
    case Fault::ZeroDim:
    case Fault::ElementCountOverflow:
    case Fault::RowNotBlockMultiple:
    case Fault::ByteSizeOverflow: dim_fault(c_.fault); break;
    case Fault::UnknownTensorType: tensor_type_fault(true); break;
    case Fault::RemovedTensorType: tensor_type_fault(false); break;
    case Fault::OffsetWraps: offset_wraps(); break;
    case Fault::NewTensorType: new_tensor_type(); break;
    case Fault::ScalarTensor: scalar_tensor(); break;
    case Fault::MisalignedOffset: misaligned_offset(); break;
    case Fault::OverlappingOffset: overlapping_offset(); break;
    case Fault::OffsetOutOfBounds: offset_out_of_bounds(); break;
    case Fault::TruncatedData: truncated_data(); break;
    case Fault::Gap: gap(); break;
    case Fault::PaddingByte: padding_byte(); break;
    case Fault::TruncatedBeforeData: truncated_before_data(); break;
    case Fault::TruncatedFinalPadding: truncated_final_padding(); break;
    case Fault::TrailingBytes: trailing_bytes(); break;
    case Fault::AlignmentType:
    case Fault::AlignmentZero:
    case Fault::AlignmentNotPowerOfTwo:
    case Fault::AlignmentBelow8:
    case Fault::AlignmentAbove65536: alignment_fault(c_.fault); break;
    case Fault::ArchitectureKeyByte: key_letter("general.architecture"); break;
    case Fault::QuantizationVersionKeyByte: key_letter("general.quantization_version"); break;
    case Fault::StandardKeyType: standard_key_type(); break;
    case Fault::TokenizerArrayLength: tokenizer_array_length(); break;
    case Fault::TokenId: token_id(); break;
  }
  out_.host = m_;
  out_.layout = w_.layout;
  out_.bytes = std::move(bytes_);
  if (out_.exact) {
    out_.expected = implied_findings(m_.doc, w_.layout, reach_);
    out_.expected.insert(out_.expected.end(), extra_.begin(), extra_.end());
  } else {
    out_.expected = extra_;
  }
  return out_;
}

// --- header ------------------------------------------------------------------------------------

inline void Applier::truncated_header() {
  write();
  const std::uint64_t at =
      candidate(ch(0), {0, 1, 3, 4, 5, 7, 8, 12, 15, 16, 20, 23, ch(1) % kHeaderSize});
  cut(at);
  reach_.header = at >= 8;  // the version is read (and noted) before the header size is checked
  reach_.pairs = 0;
  reach_.tensors = 0;
  expect(Code::TruncatedHeader, 0, at);
  target_at(0);
  say("cut the file to " + std::to_string(at) + " bytes");
}

inline void Applier::bad_magic() {
  write();
  const std::size_t i = pick(ch(0), 4);
  const auto mask = static_cast<std::uint8_t>(1 + pick(ch(1), 255));
  patch_byte(i, static_cast<std::uint8_t>(bytes_[i] ^ mask));
  reach_.header = false;
  reach_.pairs = 0;
  reach_.tensors = 0;
  expect(Code::BadMagic, 0, 4);
  target_at(0);
  say("magic byte " + std::to_string(i) + " ^= " + hex(mask));
}

inline void Applier::unsupported_version() {
  write();
  const auto unsupported = [](std::uint32_t raw) {
    const bool big = raw != 0 && (raw & 0xFFFFu) == 0;
    const std::uint32_t v = big ? byteswap32(raw) : raw;
    return v == 0 || v > 3;
  };
  auto raw = static_cast<std::uint32_t>(
      candidate(ch(0), {0, 4, 5, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 0x04000000, 0xFFFF0000, 0x00010000,
                        ch(1) & 0xFFFFFFFFu}));
  if (!unsupported(raw)) raw = 4;
  put_uint(bytes_, 4, raw, 4, Endian::Little);
  out_.field_offset = 4;
  reach_.header = false;
  reach_.pairs = 0;
  reach_.tensors = 0;
  if (raw != 0 && (raw & 0xFFFFu) == 0) expect(Code::ByteSwappedFile, 4, 4);
  expect(Code::UnsupportedVersion, 4, 4);
  target_at(4);
  say("version field := " + hex(raw) + " (as stored, little-endian)");
}

inline void Applier::obsolete_version() {
  write();
  patch(4, 1, 4);
  if (endian() == Endian::Big) expect(Code::ByteSwappedFile, 4, 4);
  expect(Code::ObsoleteVersion, 4, 4);
  target_at(4);
  say("version field := 1");
}

inline void Applier::old_version() {
  doc().version = 3;
  write();
  patch(4, 2, 4);
  expect(Code::OldVersion, 4, 4);
  target_at(4);
  say("version field 3 := 2");
}

inline void Applier::byte_swapped_version() {
  doc().endian = Endian::Little;
  write();
  put_uint(bytes_, 4, doc().version, 4, Endian::Big);
  out_.field_offset = 4;
  expect(Code::ByteSwappedFile, 4, 4);
  target_at(4);
  say("version field of a little-endian file := " + std::to_string(doc().version) +
      " stored big-endian");
}

inline void Applier::count_impossible(bool kv) {
  write();
  const std::uint64_t remaining = size() - kHeaderSize;
  const std::uint64_t min = kv ? kMinPair : kMinTensor;
  const std::uint64_t lo = remaining / min + 1;
  std::uint64_t v =
      candidate(ch(0), {lo, lo + 1, kPow63 - 1, kPow63, kPow63 + 1, kU64Max, kU64Max / min + 1,
                        0x055555555555555aULL, in_range(ch(1), lo, kU64Max)});
  v = std::max(v, lo);
  const std::uint64_t at = kv ? 16 : 8;
  patch(at, v, 8);
  reach_.tensors = 0;
  if (kv) reach_.pairs = 0;
  expect(Code::ImpossibleCount, at, kSizeWidth);
  target_at(at);
  say(std::string(kv ? "kv_count" : "tensor_count") + " := " + hex(v) + " (the " +
      std::to_string(remaining) + " bytes after the header hold at most " + std::to_string(lo - 1) +
      ")");
}

// --- metadata ----------------------------------------------------------------------------------

inline void Applier::truncated_metadata() {
  write();
  std::vector<std::size_t> pairs(kv_count());
  for (std::size_t i = 0; i < pairs.size(); ++i) pairs[i] = i;
  const std::size_t k = prefer(
      ch(0), pairs, [this](std::size_t i) { return header_counts_pass(layout().pairs[i].offset); });
  const WrittenPair& p = layout().pairs[k];
  const Value& value = doc().metadata[k].value;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> fields = {{p.key_offset, kSizeWidth},
                                                                 {p.type_offset, 4}};
  if (value.type == ValueType::String) {
    fields.emplace_back(p.value_offset, kSizeWidth);
  } else if (value.type == ValueType::Array) {
    fields.emplace_back(p.value_offset, 4);
    fields.emplace_back(p.value_offset + 4, kSizeWidth);
  } else {
    fields.emplace_back(p.value_offset, scalar_size(value.type));
  }
  const auto& field = pick_of(ch(1), fields);
  const std::uint64_t at = field.first + pick(ch(2), field.second);
  say("cut the file at " + hex(at) + ", inside " + pair_label(k) + " (field at " +
      hex(field.first) + ")");
  cut_in_pair(k, at, Code::TruncatedMetadata, p.offset);
}

inline void Applier::string_length() {
  write();
  struct Target {
    int kind;  // 0 key, 1 string value, 2 tensor name
    std::size_t index;
    std::uint64_t offset;
  };
  std::vector<Target> targets;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    targets.push_back({0, k, layout().pairs[k].key_offset});
    if (doc().metadata[k].value.type == ValueType::String) {
      targets.push_back({1, k, layout().pairs[k].value_offset});
    }
  }
  for (std::size_t t = 0; t < tensor_count(); ++t) {
    targets.push_back({2, t, layout().tensors[t].name_offset});
  }
  const Target& target = pick_of(ch(0), targets);
  const std::uint64_t remaining = size() - (target.offset + kSizeWidth);
  const std::uint64_t v =
      candidate(ch(1), {remaining + 1, remaining + 2, 1ULL << 32, kPow63 - 1, kPow63, kU64Max,
                        in_range(ch(2), remaining + 1, kU64Max)});
  patch(target.offset, v, 8);
  if (target.kind == 2) {
    reach_.tensors = target.index;
  } else {
    reach_.pairs = target.index;
    reach_.tensors = 0;
  }
  expect(Code::TruncatedString, target.offset, size() - target.offset);
  // ggml checks its 1 GiB limit first: both findings.
  if (v > kReferenceStringLimit) expect(Code::StringTooLong, target.offset, kSizeWidth);
  target_at(target.offset);
  say(std::string(target.kind == 0   ? "key length of " + pair_label(target.index)
                  : target.kind == 1 ? "string length of " + pair_label(target.index)
                                     : "name length of " + tensor_label(target.index)) +
      " := " + hex(v) + " (" + std::to_string(remaining) + " bytes left)");
}

inline void Applier::truncated_in_string() {
  write();
  struct Target {
    int kind;
    std::size_t index;
    std::uint64_t bytes;  // first byte of the string
    std::uint64_t length;
  };
  std::vector<Target> targets;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    const WrittenPair& p = layout().pairs[k];
    const KeyValue& kv = doc().metadata[k];
    if (!kv.key.empty()) targets.push_back({0, k, p.key_offset + kSizeWidth, kv.key.size()});
    if (kv.value.type == ValueType::String && !kv.value.text.empty()) {
      targets.push_back({1, k, p.value_offset + kSizeWidth, kv.value.text.size()});
    }
  }
  for (std::size_t t = 0; t < tensor_count(); ++t) {
    if (!doc().tensors[t].name.empty()) {
      targets.push_back(
          {2, t, layout().tensors[t].name_offset + kSizeWidth, doc().tensors[t].name.size()});
    }
  }
  const Target& target = prefer(ch(0), targets, [this](const Target& x) {
    return x.kind == 2 ? tensor_count_passes(x.bytes)
                       : header_counts_pass(layout().pairs[x.index].offset);
  });
  const std::uint64_t at = target.bytes + pick(ch(1), target.length);
  say("cut the file at " + hex(at) + ", inside the bytes of " +
      (target.kind == 2 ? tensor_label(target.index) + " name"
                        : pair_label(target.index) + (target.kind == 0 ? " key" : " value")));
  if (target.kind == 2) {
    cut_in_tensor(target.index, at, Code::TruncatedString, target.bytes - kSizeWidth);
  } else {
    cut_in_pair(target.index, at, Code::TruncatedString,
                target.kind == 0 ? layout().pairs[target.index].offset : target.bytes - kSizeWidth);
  }
}

inline void Applier::empty_key() {
  const std::size_t k = insert_pair({"", Value::u8(static_cast<std::uint8_t>(ch(1))), {}}, ch(0));
  write();
  const std::uint64_t at = layout().pairs[k].key_offset;
  out_.field_offset = at;
  expect(Code::EmptyKey, at, kSizeWidth);
  target_at(at);
  say("inserted kv[" + std::to_string(k) + "] with an empty key");
}

inline void Applier::duplicate_key() {
  const std::string_view arch = architecture_of(doc());
  std::vector<std::size_t> free;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (is_free_key(doc().metadata[k].key, arch)) free.push_back(k);
  }
  std::string key = "0fault.target";
  if (!free.empty() && (ch(0) & 1) != 0) {
    key = doc().metadata[free[pick(ch(0) >> 1, free.size())]].key;
  } else {
    insert_pair({key, Value::u8(1), {}}, ch(2));
  }
  insert_pair({key, Value::u8(2), {}}, ch(1));
  write();
  std::vector<std::size_t> at;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (doc().metadata[k].key == key) at.push_back(k);
  }
  const WrittenPair& later = layout().pairs[at.at(1)];
  out_.field_offset = later.key_offset;
  expect(Code::DuplicateKey, later.key_offset, kSizeWidth + key.size());
  target_at(later.key_offset);
  say("kv[" + std::to_string(at[0]) + "] and kv[" + std::to_string(at[1]) + "] both have key \"" +
      shown(key) + "\"");
}

inline void Applier::key_byte(bool unconventional) {
  const std::string key = "0fault.target";
  const std::size_t k = insert_pair({key, Value::u8(7), {}}, ch(0));
  write();
  const std::uint64_t base = layout().pairs[k].key_offset;
  if (!unconventional) {
    const std::size_t i = pick(ch(1), key.size());
    const auto b = static_cast<std::uint8_t>(
        candidate(ch(2), {0x00, 0x01, 0x09, 0x0A, 0x1F, 0x7F, 0x80, 0xC3, 0xE9, 0xFF,
                          (ch(3) & 1) != 0 ? (ch(3) >> 1) % 0x20 : 0x80 + (ch(3) >> 1) % 0x80}));
    patch_byte(base + kSizeWidth + i, b);
    expect(Code::InvalidKeyBytes, base + kSizeWidth + i, 1);
    target_at(base + kSizeWidth + i);
    say("byte " + std::to_string(i) + " of the key of inserted kv[" + std::to_string(k) +
        "] \"0fault.target\" := " + hex(b));
    return;
  }
  static const std::string kBreaking = "AZM !\"#$%&'()*+,/:;<=>?@[\\]^`{|}~.";
  const char c = kBreaking[pick(ch(1), kBreaking.size())];
  // '.' breaks the key only where it makes an empty segment.
  const std::size_t i = c == '.' ? static_cast<std::size_t>(candidate(ch(2), {0, 5, 7, 12}))
                                 : pick(ch(2), key.size());
  patch_byte(base + kSizeWidth + i, static_cast<std::uint8_t>(c));
  expect(Code::UnconventionalKey, base, kSizeWidth + key.size());
  target_at(base);
  say("byte " + std::to_string(i) + " of the key of inserted kv[" + std::to_string(k) +
      "] \"0fault.target\" := '" + std::string(1, c) + "'");
}

inline void Applier::long_key() {
  const std::uint64_t length = candidate(ch(1), {65536, 65537, 65536 + ch(2) % 1000});
  const std::size_t k = insert_pair(
      {"0fault." + std::string(static_cast<std::size_t>(length - 7), 'a'), Value::u8(1), {}},
      ch(0));
  write();
  const std::uint64_t at = layout().pairs[k].key_offset;
  out_.field_offset = at;
  expect(Code::KeyTooLong, at, kSizeWidth + length);
  target_at(at);
  say("inserted kv[" + std::to_string(k) + "] with a key of " + std::to_string(length) + " bytes");
}

inline void Applier::value_type() {
  write();
  const std::size_t k = pick(ch(0), kv_count());
  const std::uint64_t v = candidate(
      ch(1), {13, 14, 0xFF, 0x100, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 13 + ch(2) % 0xFFFFFFF2u});
  const std::uint64_t at = layout().pairs[k].type_offset;
  patch(at, v, 4);
  reach_.pairs = k;
  reach_.tensors = 0;
  expect(Code::UnknownValueType, at, 4);
  target_at(at);
  say("value type of " + pair_label(k) + " := " + hex(v));
}

inline Value target_array(std::uint64_t choice) {
  switch (pick(choice, 7)) {
    case 0: return Value::array(ValueType::Uint8, {Value::u8(1), Value::u8(2)});
    case 1: return Value::array(ValueType::Int32, {});
    case 2: return Value::array(ValueType::Float32, {Value::f32(1.0F)});
    case 3: return Value::array(ValueType::String, {Value::string("a"), Value::string("bc")});
    case 4:
      return Value::array(ValueType::Bool,
                          {Value::boolean(false), Value::boolean(true), Value::boolean(true)});
    case 5: return Value::array(ValueType::Uint64, {Value::u64(kU64Max)});
    default: return Value::array(ValueType::String, {});
  }
}

inline void Applier::array_type() {
  std::vector<std::size_t> arrays;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (doc().metadata[k].value.type == ValueType::Array) arrays.push_back(k);
  }
  std::size_t k = 0;
  if (!arrays.empty() && (ch(0) & 1) != 0) {
    k = arrays[pick(ch(0) >> 1, arrays.size())];
  } else {
    k = insert_pair({"0fault.target", target_array(ch(3)), {}}, ch(0) >> 1);
  }
  write();
  const std::uint64_t v =
      candidate(ch(1), {13, 14, 0xFF, 0x7FFFFFFF, 0xFFFFFFFF, 13 + ch(2) % 0xFFFFFFF2u});
  const std::uint64_t at = layout().pairs[k].value_offset;
  patch(at, v, 4);
  reach_.pairs = k;
  reach_.tensors = 0;
  expect(Code::UnknownArrayType, at, 4);
  target_at(at);
  say("element type of " + pair_label(k) + " := " + hex(v));
}

inline void Applier::nested_array() {
  const auto element = static_cast<ValueType>(candidate(ch(1), {0, 8, 6, 7, 10, 5}));
  const std::size_t k = insert_pair({"0fault.target", Value::array(element, {}), {}}, ch(0));
  write();
  const std::uint64_t at = layout().pairs[k].value_offset;
  patch(at, 9, 4);
  expect(Code::NestedArray, at, 4);
  target_at(at);
  say("element type of the empty " + std::string(to_string(element)) + " array in inserted kv[" +
      std::to_string(k) + "] := 9 (array)");
}

inline void Applier::array_count() {
  std::vector<std::size_t> arrays;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (doc().metadata[k].value.type == ValueType::Array) arrays.push_back(k);
  }
  std::size_t k = 0;
  if (!arrays.empty() && (ch(0) & 1) != 0) {
    k = arrays[pick(ch(0) >> 1, arrays.size())];
  } else {
    k = insert_pair({"0fault.target", target_array(ch(3)), {}}, ch(0) >> 1);
  }
  write();
  const ValueType element = doc().metadata[k].value.element_type;
  const std::uint64_t min = element == ValueType::String ? kSizeWidth : scalar_size(element);
  const std::uint64_t at = layout().pairs[k].value_offset + 4;
  const std::uint64_t remaining = size() - (at + kSizeWidth);
  const std::uint64_t lo = remaining / min + 1;
  std::uint64_t v = candidate(ch(1), {lo, lo + 1, (1ULL << 30) + 1, 1ULL << 32, kPow63, kU64Max,
                                      kU64Max / min + 1, in_range(ch(2), lo, kU64Max)});
  v = std::max(v, lo);
  patch(at, v, 8);
  reach_.pairs = k;
  reach_.tensors = 0;
  expect(Code::ImpossibleArrayCount, at, kSizeWidth);
  if (v > kReferenceArrayLimit) expect(Code::ArrayTooLong, at, kSizeWidth);  // ggml checks it first
  target_at(at);
  say("count of " + pair_label(k) + " (" + std::string(to_string(element)) + "[]) := " + hex(v) +
      " (" + std::to_string(remaining) + " bytes left)");
}

inline void Applier::bool_byte() {
  std::vector<std::size_t> scalars;
  for (std::size_t k = 0; k < kv_count(); ++k) {
    if (doc().metadata[k].value.type == ValueType::Bool) scalars.push_back(k);
  }
  const std::size_t mode = pick(ch(0), 3);
  std::size_t k = 0;
  std::size_t count = 0;  // 0: a scalar
  if (mode == 0 && !scalars.empty()) {
    k = scalars[pick(ch(0) >> 2, scalars.size())];
  } else if (mode != 2) {
    k = insert_pair({"0fault.target", Value::boolean((ch(3) & 1) != 0), {}}, ch(0) >> 2);
  } else {
    count = 1 + pick(ch(3), 4);
    std::vector<Value> items;
    for (std::size_t i = 0; i < count; ++i)
      items.push_back(Value::boolean(((ch(3) >> i) & 2) != 0));
    k = insert_pair({"0fault.target", Value::array(ValueType::Bool, items), {}}, ch(0) >> 2);
  }
  write();
  const auto b =
      static_cast<std::uint8_t>(candidate(ch(2), {2, 3, 0x7F, 0x80, 0xFF, 2 + ch(3) % 254}));
  std::uint64_t at = layout().pairs[k].value_offset;
  std::string where = pair_label(k);
  if (count != 0) {
    const std::size_t e = pick(ch(1), count);
    at += 4 + kSizeWidth + e;
    where += "[" + std::to_string(e) + "]";
  }
  patch_byte(at, b);
  expect(Code::NonCanonicalBool, at, 1);
  target_at(at);
  say("bool byte of " + where + " := " + hex(b));
}

inline void Applier::string_byte(bool nul) {
  static const std::vector<std::string> kPieces = {
      "", "a", "\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80", "abc def", "\x7f\t"};
  const std::string& before = pick_of(ch(1), kPieces);
  const std::string& after = pick_of(ch(1) >> 8, kPieces);
  const std::string text = before + "x" + after;
  const bool array = (ch(0) & 1) != 0;
  std::size_t k = 0;
  std::uint64_t start = 0;
  std::string where;
  if (!array) {
    k = insert_pair({"0fault.target", Value::string(text), {}}, ch(0) >> 1);
    write();
    start = layout().pairs[k].value_offset;
    where = pair_label(k);
  } else {
    const std::size_t count = 1 + pick(ch(2), 3);
    const std::size_t e = pick(ch(2) >> 4, count);
    std::vector<Value> items;
    for (std::size_t i = 0; i < count; ++i) {
      items.push_back(Value::string(i == e ? text : pick_of(ch(2) >> (8 + i), kPieces)));
    }
    k = insert_pair({"0fault.target", Value::array(ValueType::String, items), {}}, ch(0) >> 1);
    write();
    start = layout().pairs[k].value_offset + 4 + kSizeWidth;
    for (std::size_t i = 0; i < e; ++i) start += kSizeWidth + items[i].text.size();
    where = pair_label(k) + "[" + std::to_string(e) + "]";
  }
  const auto b =
      nul ? std::uint8_t{0}
          : static_cast<std::uint8_t>(candidate(ch(3), {0xC0, 0xC1, 0xF5, 0xF8, 0xFE, 0xFF}));
  patch_byte(start + kSizeWidth + before.size(), b);
  expect(nul ? Code::NulInString : Code::InvalidUtf8, start, kSizeWidth + text.size());
  target_at(start);
  say("byte " + std::to_string(before.size()) + " of the string \"" + shown(text) + "\" in " +
      where + " := " + hex(b));
}

// --- tensor infos ------------------------------------------------------------------------------

inline void Applier::truncated_tensor_info() {
  if (tensor_count() == 0) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  write();
  std::vector<std::size_t> tensors(tensor_count());
  for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i] = i;
  const std::size_t t = prefer(ch(0), tensors, [this](std::size_t i) {
    return tensor_count_passes(layout().tensors[i].name_offset);
  });
  const WrittenTensor& wt = layout().tensors[t];
  const std::uint64_t n_dims = doc().tensors[t].dims.size();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> fields = {{wt.name_offset, kSizeWidth},
                                                                 {wt.n_dims_offset, 4}};
  if (n_dims > 0) fields.emplace_back(wt.dims_offset, kSizeWidth * n_dims);
  fields.emplace_back(wt.type_offset, 4);
  fields.emplace_back(wt.offset_offset, kSizeWidth);
  const auto& field = pick_of(ch(1), fields);
  const std::uint64_t at = field.first + pick(ch(2), field.second);
  say("cut the file at " + hex(at) + ", inside " + tensor_label(t) + " (field at " +
      hex(field.first) + ")");
  cut_in_tensor(t, at, Code::TruncatedTensorInfo, wt.name_offset);
}

inline void Applier::long_tensor_name() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  const std::uint64_t length = candidate(ch(1), {64, 65, 66, 100, 64 + ch(2) % 200});
  doc().tensors[t].name = "0fault." + std::string(static_cast<std::size_t>(length - 7), 'n');
  write();
  const std::uint64_t at = layout().tensors[t].name_offset;
  out_.field_offset = at;
  expect(Code::TensorNameTooLong, at, kSizeWidth + length, {true, length > 64, true});
  target_at(at);
  say("name of tensor[" + std::to_string(t) + "] := " + std::to_string(length) + " bytes");
}

inline void Applier::empty_tensor_name() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  doc().tensors[t].name.clear();
  write();
  const std::uint64_t at = layout().tensors[t].name_offset;
  out_.field_offset = at;
  expect(Code::EmptyTensorName, at, kSizeWidth);
  target_at(at);
  say("name of tensor[" + std::to_string(t) + "] := \"\"");
}

inline void Applier::duplicate_tensor_name() {
  while (tensor_count() < 2) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  const std::size_t i = pick(ch(0), tensor_count());
  std::size_t j = pick(ch(1), tensor_count() - 1);
  if (j >= i) ++j;
  doc().tensors[i].name = doc().tensors[j].name;
  write();
  const std::size_t later = std::max(i, j);
  const std::uint64_t at = layout().tensors[later].name_offset;
  out_.field_offset = layout().tensors[i].name_offset;
  expect(Code::DuplicateTensorName, at, kSizeWidth + doc().tensors[i].name.size());
  target_at(at);
  say("name of tensor[" + std::to_string(i) + "] := the name of tensor[" + std::to_string(j) +
      "] \"" + shown(doc().tensors[j].name) + "\"");
}

inline void Applier::tensor_name_duplicates(const std::vector<std::string>& names) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string identity = names[i].substr(0, names[i].find('\0'));
    if (!seen.insert(identity).second) {
      expect(Code::DuplicateTensorName, layout().tensors[i].name_offset,
             kSizeWidth + names[i].size());
    }
  }
}

inline void Applier::tensor_name_byte() {
  const auto has_ascii = [](const Tensor& t) {
    return std::any_of(t.name.begin(), t.name.end(),
                       [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  };
  const std::size_t t = tensor_where(has_ascii, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  std::vector<std::size_t> positions;
  const std::string& name = doc().tensors[t].name;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (static_cast<unsigned char>(name[i]) < 0x80) positions.push_back(i);
  }
  const std::size_t i = pick_of(ch(1), positions);
  const auto b = static_cast<std::uint8_t>(
      candidate(ch(2), {0x00, 0x01, 0x09, 0x1F, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xF5, 0xFF}));
  const std::uint64_t at = layout().tensors[t].name_offset + kSizeWidth + i;
  patch_byte(at, b);
  expect(Code::InvalidTensorNameBytes, at, 1);
  target_at(at);
  std::vector<std::string> names;
  for (const Tensor& x : doc().tensors) names.push_back(x.name);
  names[t][i] = static_cast<char>(b);
  tensor_name_duplicates(names);
  say("byte " + std::to_string(i) + " of the name of " + tensor_label(t) + " := " + hex(b));
}

inline void Applier::extra_dims() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  Tensor& x = doc().tensors[t];
  while (x.dims.size() < kMaxDims) x.dims.push_back(1);
  const std::size_t extra = 1 + pick(ch(1), 4);
  for (std::size_t e = 0; e < extra; ++e) x.dims.push_back(1 + pick(ch(2) >> (2 * e), 3));
  write();
  const std::uint64_t at = layout().tensors[t].n_dims_offset;
  out_.field_offset = at;
  expect(Code::TooManyDims, at, 4);
  target_at(at);
  say("dims of tensor[" + std::to_string(t) + "] := " + std::to_string(x.dims.size()) + " dims");
}

inline void Applier::n_dims_huge() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  const WrittenTensor& wt = layout().tensors[t];
  const std::uint64_t remaining = size() - (wt.n_dims_offset + 4);
  const std::uint64_t lo = std::max<std::uint64_t>(5, remaining / kSizeWidth + 1);
  const std::uint64_t v = candidate(
      ch(1), {lo, lo + 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, in_range(ch(2), lo, 0xFFFFFFFF)});
  patch(wt.n_dims_offset, v, 4);
  reach_.tensors = t;
  expect(Code::TooManyDims, wt.n_dims_offset, 4);
  expect(Code::TruncatedTensorInfo, wt.name_offset, size() - wt.name_offset);
  target_at(wt.n_dims_offset);
  say("n_dims of " + tensor_label(t) + " := " + hex(v) + " (" + std::to_string(remaining) +
      " bytes left)");
}

inline void Applier::dim_fault(Fault fault) {
  const auto any_dims = [](const Tensor& x) { return !x.dims.empty(); };
  std::size_t t = 0;
  switch (fault) {
    case Fault::ElementCountOverflow:
      t = tensor_where(
          [](const Tensor& x) {
            for (std::size_t d = 0; d < x.dims.size(); ++d) {
              if (product_except(x.dims, d) >= 2) return true;
            }
            return false;
          },
          target_tensor("0fault.tensor", {4, 2}), ch(0));
      break;
    case Fault::RowNotBlockMultiple:
      t = tensor_where(
          [](const Tensor& x) { return !x.dims.empty() && tensor_type(x.type)->block_size > 1; },
          target_tensor("0fault.tensor", {32}, 8), ch(0));
      break;
    case Fault::ByteSizeOverflow:
      t = tensor_where(
          [](const Tensor& x) {
            return !x.dims.empty() && (x.type == 0 || x.type == 26 || x.type == 27 || x.type == 28);
          },
          target_tensor("0fault.tensor", {4}), ch(0));
      break;
    default: t = tensor_where(any_dims, target_tensor("0fault.tensor", {4}), ch(0)); break;
  }
  write();
  const Tensor& x = doc().tensors[t];
  const WrittenTensor& wt = layout().tensors[t];
  const std::uint64_t all_dims = kSizeWidth * x.dims.size();
  std::size_t d = pick(ch(1), x.dims.size());
  std::uint64_t v = 0;
  switch (fault) {
    case Fault::NegativeDim: {
      v = candidate(ch(2), {kPow63, kPow63 + 1, kU64Max, kPow63 | ch(3)});
      expect(Code::NegativeDim, wt.dims_offset + kSizeWidth * d, kSizeWidth);
      target_at(wt.dims_offset + kSizeWidth * d);
      break;
    }
    case Fault::ZeroDim: {
      v = 0;
      expect(Code::ZeroDim, wt.dims_offset + kSizeWidth * d, kSizeWidth);
      target_at(wt.dims_offset + kSizeWidth * d);
      // The tensor is now empty: its bytes are a gap before the next tensor, or trailing bytes.
      if (t + 1 < tensor_count()) {
        expect(Code::NonContiguousLayout, layout().tensors[t + 1].offset_offset, kSizeWidth);
      } else {
        const std::uint64_t from = data_start() + rel(t);
        expect(Code::TrailingBytes, from, size() - from);
      }
      break;
    }
    case Fault::ElementCountOverflow: {
      std::vector<std::size_t> ds;
      for (std::size_t k = 0; k < x.dims.size(); ++k) {
        if (product_except(x.dims, k) >= 2) ds.push_back(k);
      }
      d = pick_of(ch(1), ds);
      const std::uint64_t p = product_except(x.dims, d);
      const std::uint64_t lo = (kPow63 + p - 1) / p;
      v = candidate(ch(2), {lo, kPow63 - 1, in_range(ch(3), lo, kPow63 - 1)});
      expect(Code::ElementCountOverflow, wt.dims_offset, all_dims);
      target_at(wt.dims_offset);
      break;
    }
    case Fault::RowNotBlockMultiple: {
      d = 0;
      const std::uint64_t block = tensor_type(x.type)->block_size;
      v = block * pick(ch(2), 4) + 1 + pick(ch(3), block - 1);
      expect(Code::RowNotBlockMultiple, wt.dims_offset, kSizeWidth);
      target_at(wt.dims_offset);
      break;
    }
    default: {  // ByteSizeOverflow: elements < 2^63, elements x bytes per element >= 2^64
      const std::uint64_t p = product_except(x.dims, d);
      const std::uint64_t per = tensor_type(x.type)->type_size;
      const std::uint64_t q = per == 4 ? 1ULL << 62 : 1ULL << 61;
      const std::uint64_t lo = (q + p - 1) / p;
      const std::uint64_t hi = (kPow63 - 1) / p;
      v = candidate(ch(2), {lo, hi, in_range(ch(3), lo, hi)});
      expect(Code::ByteSizeOverflow, wt.dims_offset, all_dims);
      target_at(wt.dims_offset);
      break;
    }
  }
  patch(wt.dims_offset + kSizeWidth * d, v, 8);
  say("dims[" + std::to_string(d) + "] of " + tensor_label(t) + " (" + tensor_type_name(x.type) +
      ", " + std::to_string(x.dims.size()) + " dims) := " + hex(v));
}

inline void Applier::tensor_type_fault(bool unknown) {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  const std::uint64_t v =
      unknown ? candidate(ch(1), {43, 44, 0xFF, 0x7FFFFFFF, 0xFFFFFFFF, 43 + ch(2) % 0xFFFFFFD4u})
              : candidate(ch(1), {4, 5, 31, 32, 33, 36, 37, 38});
  const std::uint64_t at = layout().tensors[t].type_offset;
  patch(at, v, 4);
  reach_.type_changed.insert(t);
  expect(unknown ? Code::UnknownTensorType : Code::RemovedTensorType, at, 4);
  target_at(at);
  say("type of " + tensor_label(t) + " (" + tensor_type_name(doc().tensors[t].type) +
      ") := " + std::to_string(v));
}

inline void Applier::offset_wraps() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  const std::uint64_t units = padded(t) / alignment();
  const std::uint64_t j = candidate(ch(1), {1, units, 1 + ch(2) % units});
  const std::uint64_t v = 0 - alignment() * j;
  const std::uint64_t at = layout().tensors[t].offset_offset;
  patch(at, v, 8);
  expect(Code::ByteSizeOverflow, at, kSizeWidth);
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  expect(Code::TensorOutOfBounds, at, kSizeWidth);
  target_at(at);
  say("offset of " + tensor_label(t) + " := " + hex(v) + " (padded size " + hex(padded(t)) + ")");
}

inline void Applier::new_tensor_type() {
  const auto swappable = [](const Tensor& x) {
    if (x.dims.empty()) return false;
    return (x.type == 23 && x.dims[0] % 256 == 0) ||
           ((x.type == 2 || x.type == 20) && x.dims[0] % 64 == 0);
  };
  const std::size_t t = tensor_where(swappable,
                                     (ch(3) & 1) != 0 ? target_tensor("0fault.tensor", {256}, 23)
                                                      : target_tensor("0fault.tensor", {64}, 2),
                                     ch(0));
  write();
  const std::uint32_t from = doc().tensors[t].type;
  const std::uint32_t to = from == 23 ? 39 : 40;
  const std::uint64_t at = layout().tensors[t].type_offset;
  patch(at, to, 4);
  reach_.type_changed.insert(t);
  expect(Code::NewTensorType, at, 4);
  target_at(at);
  say("type of " + tensor_label(t) + " " + tensor_type_name(from) + " := " + tensor_type_name(to) +
      " (same byte size)");
}

inline void Applier::scalar_tensor() {
  const std::size_t t = tensor_where(
      [](const Tensor& x) { return !x.dims.empty() && tensor_type(x.type)->block_size == 1; },
      target_tensor("0fault.tensor", {4}), ch(0));
  doc().tensors[t].dims.clear();
  doc().tensors[t].data.reset();
  write();
  out_.field_offset = layout().tensors[t].n_dims_offset;
  target_at(layout().tensors[t].n_dims_offset);  // implied by the content: GGUF3015
  say("dims of " + tensor_label(t) + " := none (a scalar)");
}

// --- data layout -------------------------------------------------------------------------------

inline void Applier::misaligned_offset() {
  const std::uint64_t a = effective_alignment(doc());
  const std::size_t t = tensor_where(
      [a](const Tensor& x) { return nbytes_of(x) % a != 0; },
      target_tensor("0fault.tensor", {1 + pick(ch(3), static_cast<std::size_t>(a - 1))}, 24),
      ch(0));
  write();
  const std::uint64_t slack = padded(t) - nbytes(t);
  const std::uint64_t k = 1 + pick(ch(1), slack);
  const std::uint64_t at = layout().tensors[t].offset_offset;
  patch(at, rel(t) + k, 8);
  expect(Code::MisalignedOffset, at, kSizeWidth);
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  target_at(at);
  say("offset of " + tensor_label(t) + " += " + std::to_string(k) +
      " (padding after it: " + std::to_string(slack) + ")");
}

inline void Applier::overlapping_offset() {
  while (tensor_count() < 2) insert_tensor(target_tensor("0fault.tensor", {8}), ch(3));
  for (Tensor& x : doc().tensors) x.data.reset();  // moved data must not read as padding
  const std::size_t t = 1 + pick(ch(0), tensor_count() - 1);
  write();
  const std::uint64_t a = alignment();
  const std::uint64_t units = (nbytes(t - 1) + a - 1) / a;
  const std::uint64_t p = rel(t - 1) + a * pick(ch(1), units);
  const std::uint64_t at = layout().tensors[t].offset_offset;
  patch(at, p, 8);
  expect(Code::OverlappingTensors, at, kSizeWidth);
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  target_at(at);
  if (t + 1 == tensor_count()) {  // the last tensor's old place becomes trailing bytes
    std::uint64_t max_end = p + nbytes(t);
    for (std::size_t i = 0; i < t; ++i) max_end = std::max(max_end, rel(i) + nbytes(i));
    const std::uint64_t padded_end = round_up(max_end, a);
    const std::uint64_t data_size = size() - data_start();
    if (data_size > padded_end) {
      expect(Code::TrailingBytes, data_start() + padded_end, data_size - padded_end);
    }
  }
  say("offset of " + tensor_label(t) + " := " + hex(p) + ", inside tensor[" +
      std::to_string(t - 1) + "] at " + hex(rel(t - 1)) + "+" + hex(nbytes(t - 1)));
}

inline void Applier::offset_out_of_bounds() {
  const std::size_t t =
      tensor_where([](const Tensor&) { return true; }, target_tensor("0fault.tensor", {4}), ch(0));
  write();
  const std::uint64_t a = alignment();
  const std::uint64_t data_size = size() - data_start();
  const std::uint64_t lo = round_up(data_size - nbytes(t) + 1, a);
  const std::uint64_t hi = (kU64Max - padded(t)) / a * a;  // offset + padded size still fits
  const std::uint64_t v = candidate(
      ch(1), {lo, data_size, data_size + a, kPow63, hi, lo + a * (ch(2) % ((hi - lo) / a + 1))});
  const std::uint64_t at = layout().tensors[t].offset_offset;
  patch(at, v, 8);
  expect(Code::TensorOutOfBounds, at, kSizeWidth);
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  target_at(at);
  say("offset of " + tensor_label(t) + " := " + hex(v) + " (data section " + hex(data_size) +
      " bytes, tensor " + hex(nbytes(t)) + ")");
}

inline void Applier::truncated_data() {
  if (tensor_count() == 0) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  write();
  std::uint64_t max_end = 0;
  for (std::size_t i = 0; i < tensor_count(); ++i) max_end = std::max(max_end, rel(i) + nbytes(i));
  const std::size_t i = pick(ch(1), tensor_count());
  const std::uint64_t at =
      candidate(ch(0), {data_start(), data_start() + max_end - 1, data_start() + rel(i),
                        data_start() + rel(i) + nbytes(i) - 1, data_start() + ch(2) % max_end});
  cut(at);
  const std::uint64_t data_size = at - data_start();
  bool first = true;
  for (std::size_t j = 0; j < tensor_count(); ++j) {
    if (rel(j) > data_size || nbytes(j) > data_size - rel(j)) {
      expect(Code::TensorOutOfBounds, layout().tensors[j].offset_offset, kSizeWidth);
      if (first) target_at(layout().tensors[j].offset_offset);
      first = false;
    }
  }
  say("cut the file at " + hex(at) + ", inside the tensor data (" + hex(data_start()) + ".." +
      hex(data_start() + max_end) + ")");
}

inline void Applier::gap() {
  if (tensor_count() == 0) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  write();
  const std::size_t t = pick(ch(0), tensor_count());
  const std::uint64_t units = 1 + pick(ch(1), 3);
  const std::uint64_t gap_bytes = units * alignment();
  std::vector<std::uint64_t> offsets;
  for (std::size_t i = 0; i < tensor_count(); ++i) offsets.push_back(rel(i));
  for (std::size_t i = 0; i < tensor_count(); ++i) {
    doc().tensors[i].offset = offsets[i] + (i >= t ? gap_bytes : 0);
  }
  Tensor& x = doc().tensors[t];
  std::vector<std::uint8_t> blob(static_cast<std::size_t>(gap_bytes), 0);
  const std::vector<std::uint8_t> data =
      x.data.value_or(std::vector<std::uint8_t>(static_cast<std::size_t>(nbytes(t)), 0));
  blob.insert(blob.end(), data.begin(), data.end());
  x.data = std::move(blob);
  write();
  const std::uint64_t at = layout().tensors[t].offset_offset;
  out_.field_offset = at;
  expect(Code::NonContiguousLayout, at, kSizeWidth);
  target_at(at);
  say("a gap of " + std::to_string(gap_bytes) + " bytes before the data of " + tensor_label(t) +
      " (offsets from it on shifted)");
}

inline void Applier::padding_byte() {
  const auto regions = [this] {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    const Layout& l = layout();
    if ((tensor_count() > 0 || m_.pad_when_no_tensors) && l.infos_end < l.data_start) {
      out.emplace_back(l.infos_end, l.data_start);
    }
    for (std::size_t i = 0; i < tensor_count(); ++i) {
      const std::uint64_t end = l.tensors[i].data_position + nbytes(i);
      const std::uint64_t pad_end = l.tensors[i].data_position + padded(i);
      if (end < pad_end) out.emplace_back(end, pad_end);
    }
    return out;
  };
  write();
  auto found = regions();
  if (found.empty()) {
    insert_tensor(target_tensor("0fault.tensor", {1}, 24), ch(3));
    write();
    found = regions();
  }
  const auto& region = pick_of(ch(0), found);
  const std::uint64_t at = region.first + pick(ch(1), region.second - region.first);
  const auto b = static_cast<std::uint8_t>(1 + pick(ch(2), 255));
  patch_byte(at, b);
  expect(Code::NonzeroPadding, at, region.second - at);
  target_at(at);
  say("padding byte at " + hex(at) + " (padding " + hex(region.first) + ".." + hex(region.second) +
      ") := " + hex(b));
}

inline void Applier::truncated_before_data() {
  if (tensor_count() == 0) insert_tensor(target_tensor("0fault.tensor", {4}), ch(3));
  write();
  if (layout().infos_end == layout().data_start) {
    // A 41-byte tensor info (odd) moves the end of the infos off the alignment.
    insert_tensor(target_tensor("0fault.pad", {4}), ch(3) >> 8);
    write();
  }
  const std::uint64_t begin = layout().infos_end;
  const std::uint64_t at = begin + pick(ch(0), layout().data_start - begin);
  cut(at);
  expect(Code::TruncatedBeforeData, begin, at - begin);
  target_at(begin);
  say("cut the file at " + hex(at) + ", inside the padding " + hex(begin) + ".." +
      hex(layout().data_start));
}

inline void Applier::truncated_final_padding() {
  const std::uint64_t a = effective_alignment(doc());
  if (tensor_count() == 0 || nbytes_of(doc().tensors.back()) % a == 0) {
    doc().tensors.push_back(
        target_tensor("0fault.tensor", {1 + pick(ch(2), static_cast<std::size_t>(a - 1))}, 24));
    make_names_unique(doc());
  }
  write();
  const std::size_t last = tensor_count() - 1;
  const std::uint64_t end = data_start() + rel(last) + nbytes(last);
  const std::uint64_t at = end + pick(ch(1), size() - end);
  cut(at);
  expect(Code::MissingFinalPadding, end, at - end);
  target_at(end);
  say("cut the file at " + hex(at) + ", inside the padding after the last tensor (" + hex(end) +
      ".." + hex(size()) + ")");
}

inline void Applier::trailing_bytes() {
  if (tensor_count() == 0) m_.pad_when_no_tensors = true;
  write();
  const std::uint64_t a = alignment();
  const std::uint64_t k = candidate(ch(0), {1, 2, a - 1, a, a + 1, 1 + ch(1) % 100});
  const std::uint64_t old = size();
  const std::vector<std::uint8_t> extra =
      (ch(2) & 1) != 0 ? seeded_bytes(ch(3) | 1, k) : std::vector<std::uint8_t>(k, std::uint8_t{0});
  bytes_.insert(bytes_.end(), extra.begin(), extra.end());
  out_.field_offset = old;
  expect(Code::TrailingBytes, old, k);
  target_at(old);
  say("appended " + std::to_string(k) + " bytes at " + hex(old));
}

// --- standard keys -----------------------------------------------------------------------------

inline void Applier::set_alignment_32() {
  if (KeyValue* kv = find_pair(doc(), "general.alignment")) {
    kv->value = Value::u32(32);
  } else {
    insert_pair({"general.alignment", Value::u32(32), {}}, ch(3));
  }
}

inline void Applier::alignment_fault(Fault fault) {
  if (fault == Fault::AlignmentType || fault == Fault::AlignmentZero) {
    set_alignment_32();  // the alignment then used is the one the file was written with
  } else {
    doc().tensors.clear();  // nothing depends on the alignment
    m_.pad_when_no_tensors = false;
    if (find_pair(doc(), "general.alignment") == nullptr) {
      insert_pair({"general.alignment", Value::u32(32), {}}, ch(3));
    }
  }
  write();
  const std::size_t k = *pair_index(doc(), "general.alignment");
  const WrittenPair& p = layout().pairs[k];
  if (fault == Fault::AlignmentType) {
    const std::uint64_t v = candidate(ch(1), {5, 6});
    patch(p.type_offset, v, 4);
    expect(Code::AlignmentWrongType, p.type_offset, 4);
    target_at(p.type_offset);
    say("type of general.alignment (32) := " + std::string(to_string(static_cast<ValueType>(v))));
    return;
  }
  std::uint64_t v = 0;
  if (fault == Fault::AlignmentNotPowerOfTwo) {
    v = candidate(ch(1), {3, 5, 6, 7, 9, 12, 24, 33, 48, 65537, 0x7FFFFFFF, 0xFFFFFFFF,
                          3 + ch(2) % 0xFFFFFFFD});
    if (is_power_of_two(v)) ++v;
  } else if (fault == Fault::AlignmentBelow8) {
    v = candidate(ch(1), {1, 2, 4, 3, 5, 6, 7, 12, 20, 100, 1 + ch(2) % 0xFFFFFFFE});
    if (v % 8 == 0) ++v;
  } else if (fault == Fault::AlignmentAbove65536) {
    v = candidate(ch(1), {65537, 131072, 1 << 20, 1ULL << 31, 0xFFFFFFFF,
                          65537 + ch(2) % (0xFFFFFFFF - 65537)});
  }
  patch(p.value_offset, v, 4);
  target_at(p.value_offset);
  if (v == 0) expect(Code::AlignmentZero, p.value_offset, 4);
  if (v != 0 && !is_power_of_two(v)) expect(Code::AlignmentNotPowerOfTwo, p.value_offset, 4);
  if (v != 0 && v % 8 != 0) expect(Code::AlignmentNotMultipleOf8, p.value_offset, 4);
  if (v > 65536) expect(Code::AlignmentTooLarge, p.value_offset, 4);
  say("general.alignment := " + std::to_string(v) +
      (fault == Fault::AlignmentZero ? "" : " (in a file without tensors)"));
}

inline void Applier::key_letter(std::string_view key) {
  std::size_t quantized = 0;
  const bool quantization = key == "general.quantization_version";
  if (quantization) {
    tensor_where([](const Tensor& x) { return is_quantized(x.type); },
                 target_tensor("0fault.tensor", {32}, 8), ch(3));
    ensure_quantization_version(doc());
  }
  write();
  const std::size_t k = *pair_index(doc(), key);
  std::vector<std::size_t> letters;
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (key[i] >= 'a' && key[i] <= 'z') letters.push_back(i);
  }
  const std::size_t i = pick_of(ch(0), letters);
  const char c =
      static_cast<char>('a' + (key[i] - 'a' + 1 + static_cast<int>(pick(ch(1), 25))) % 26);
  const std::uint64_t at = layout().pairs[k].key_offset + kSizeWidth + i;
  patch_byte(at, static_cast<std::uint8_t>(c));
  if (quantization) {
    while (!is_quantized(doc().tensors[quantized].type)) ++quantized;
    const std::uint64_t type_at = layout().tensors[quantized].type_offset;
    expect(Code::MissingQuantizationVersion, type_at, 4);
    target_at(type_at);
  } else {
    expect(Code::MissingArchitecture, 0, kHeaderSize);
    target_at(0);
  }
  std::string renamed(key);
  renamed[i] = c;
  say("key " + std::string(key) + " := " + renamed);
}

inline bool is_token_id_key(std::string_view key) {
  constexpr std::string_view kPrefix = "tokenizer.ggml.";
  constexpr std::string_view kSuffix = "_token_id";
  return key.size() > kPrefix.size() + kSuffix.size() && key.substr(0, kPrefix.size()) == kPrefix &&
         key.substr(key.size() - kSuffix.size()) == kSuffix;
}

inline void Applier::standard_key_type() {
  struct Target {
    std::size_t index;
    bool element;  // patch the array element type instead of the value type
    std::vector<std::uint64_t> types;
  };
  const auto targets = [this] {
    std::vector<Target> out;
    const std::string arch(architecture_of(doc()));
    for (std::size_t k = 0; k < kv_count(); ++k) {
      const KeyValue& kv = doc().metadata[k];
      const ValueType type = kv.value.type;
      const bool count_key =
          !arch.empty() &&
          (kv.key == arch + ".context_length" || kv.key == arch + ".embedding_length" ||
           kv.key == arch + ".block_count" || kv.key == arch + ".vocab_size");
      if ((kv.key == "general.quantization_version" || kv.key == "general.file_type" ||
           is_token_id_key(kv.key) || count_key) &&
          type == ValueType::Uint32) {
        out.push_back({k, false, {5, 6}});
      } else if (count_key && type == ValueType::Uint64) {
        out.push_back({k, false, {11, 12}});
      } else if (kv.key.rfind("tokenizer.ggml.add_", 0) == 0 && type == ValueType::Bool) {
        out.push_back({k, false, {0, 1}});
      } else if (kv.key == "tokenizer.ggml.scores" && type == ValueType::Array &&
                 kv.value.element_type == ValueType::Float32) {
        out.push_back({k, true, {4, 5}});
      } else if (kv.key == "tokenizer.ggml.token_type" && type == ValueType::Array &&
                 kv.value.element_type == ValueType::Int32) {
        out.push_back({k, true, {4, 6}});
      }
    }
    return out;
  };
  if (targets().empty() || (ch(0) & 3) == 0) {
    if (find_pair(doc(), "general.file_type") == nullptr) {
      insert_pair({"general.file_type", Value::u32(1), {}}, ch(3));
    }
  }
  write();
  const std::vector<Target> found = targets();
  const Target& target = pick_of(ch(0) >> 2, found);
  const WrittenPair& p = layout().pairs[target.index];
  const std::uint64_t v = pick_of(ch(1), target.types);
  patch(target.element ? p.value_offset : p.type_offset, v, 4);
  expect(Code::KeyWrongType, p.type_offset, 4);
  target_at(p.type_offset);
  say(std::string(target.element ? "element type" : "type") + " of " + pair_label(target.index) +
      " := " + std::string(to_string(static_cast<ValueType>(v))));
}

inline void Applier::ensure_vocab(std::size_t at_least) {
  KeyValue* tokens = find_pair(doc(), "tokenizer.ggml.tokens");
  if (tokens == nullptr) {
    std::vector<Value> items;
    for (std::size_t i = 0; i < std::max<std::size_t>(at_least, 2); ++i) {
      items.push_back(Value::string(std::string(1, static_cast<char>('a' + i))));
    }
    doc().metadata.push_back(
        {"tokenizer.ggml.tokens", Value::array(ValueType::String, std::move(items)), {}});
    return;
  }
  while (tokens->value.items.size() < at_least) {
    tokens->value.items.push_back(Value::string("t"));
    if (KeyValue* scores = find_pair(doc(), "tokenizer.ggml.scores")) {
      scores->value.items.push_back(Value::f32(0));
    }
    if (KeyValue* types = find_pair(doc(), "tokenizer.ggml.token_type")) {
      types->value.items.push_back(Value::i32(1));
    }
    tokens = find_pair(doc(), "tokenizer.ggml.tokens");
  }
}

inline void Applier::tokenizer_array_length() {
  ensure_vocab(1);
  const std::size_t vocab = find_pair(doc(), "tokenizer.ggml.tokens")->value.items.size();
  std::vector<std::string> present;
  for (const char* name : {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
    if (find_pair(doc(), name) != nullptr) present.emplace_back(name);
  }
  if (present.empty()) {
    doc().metadata.push_back(
        {"tokenizer.ggml.scores",
         Value::array(ValueType::Float32, std::vector<Value>(vocab, Value::f32(0))),
         {}});
    present.emplace_back("tokenizer.ggml.scores");
  }
  const std::string name = pick_of(ch(0), present);
  std::vector<Value>& items = find_pair(doc(), name)->value.items;
  const bool shorter = !items.empty() && (ch(1) & 1) != 0;
  if (shorter) {
    items.pop_back();
  } else {
    items.push_back(name == "tokenizer.ggml.scores" ? Value::f32(0) : Value::i32(1));
  }
  write();
  const std::size_t k = *pair_index(doc(), name);
  const std::uint64_t at = layout().pairs[k].value_offset + 4;
  out_.field_offset = at;
  expect(Code::TokenizerLengthMismatch, at, kSizeWidth);
  target_at(at);
  say(name + " := one element " + (shorter ? "fewer" : "more") + " than the " +
      std::to_string(vocab) + " tokens");
}

inline void Applier::token_id() {
  ensure_vocab(1);
  const auto ids = [this] {
    std::vector<std::size_t> out;
    for (std::size_t k = 0; k < kv_count(); ++k) {
      if (is_token_id_key(doc().metadata[k].key) &&
          doc().metadata[k].value.type == ValueType::Uint32) {
        out.push_back(k);
      }
    }
    return out;
  };
  if (ids().empty()) insert_pair({"tokenizer.ggml.bos_token_id", Value::u32(0), {}}, ch(3));
  write();
  const std::size_t k = pick_of(ch(0), ids());
  const std::uint64_t vocab = find_pair(doc(), "tokenizer.ggml.tokens")->value.items.size();
  const std::uint64_t v = candidate(ch(1), {vocab, vocab + 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
                                            vocab + ch(2) % (0x100000000ULL - vocab)});
  const std::uint64_t at = layout().pairs[k].value_offset;
  patch(at, v, 4);
  expect(Code::TokenIdOutOfRange, at, 4);
  target_at(at);
  say(pair_label(k) + " := " + std::to_string(v) + " (vocabulary of " + std::to_string(vocab) +
      ")");
}

}  // namespace fault_detail

inline Corrupted apply(const Corruption& corruption) {
  return fault_detail::Applier(corruption).run();
}

// =================================================================================================
// Blind edits: byte flips and boundary overwrites
// =================================================================================================

struct Mutation {
  enum class Kind : std::uint8_t { Flip, Overwrite4, Overwrite8 };
  enum class Relative : std::uint8_t { Absolute, FileSize, BytesLeft };
  Kind kind = Kind::Flip;
  std::uint64_t where = 0;  // odd: the n-th field start of the layout; even: any byte
  std::uint8_t mask = 1;    // Flip: the xor mask, never 0
  Relative relative = Relative::Absolute;
  std::uint64_t value = 0;  // Overwrite: the value (plus the file size or the bytes left)
  Endian order = Endian::Little;
};

// Where fields start: the places an edit hurts most.
inline std::vector<std::uint64_t> field_starts(const Layout& layout) {
  std::vector<std::uint64_t> out = {0, 4, 8, 16};
  for (const WrittenPair& p : layout.pairs) {
    out.insert(out.end(), {p.key_offset, p.type_offset, p.value_offset, p.value_offset + 4});
  }
  for (const WrittenTensor& t : layout.tensors) {
    out.insert(out.end(), {t.name_offset, t.n_dims_offset, t.dims_offset, t.dims_offset + 8,
                           t.type_offset, t.offset_offset, t.data_position});
  }
  out.insert(out.end(), {layout.infos_end, layout.data_start});
  return out;
}

struct Mutated {
  ByteVector bytes;
  std::string edit;
};

inline Mutated mutate(const ByteVector& original, const Layout& layout, const Mutation& m) {
  Mutated out{original, "no change (empty file)"};
  if (original.empty()) return out;
  const std::uint32_t width = m.kind == Mutation::Kind::Flip         ? 1
                              : m.kind == Mutation::Kind::Overwrite4 ? 4
                                                                     : 8;
  if (original.size() < width) return out;
  std::uint64_t at = 0;
  if ((m.where & 1) != 0) {
    at = pick_of(m.where >> 1, field_starts(layout));
  } else {
    at = (m.where >> 1) % original.size();
  }
  at = std::min<std::uint64_t>(at, original.size() - width);
  if (m.kind == Mutation::Kind::Flip) {
    const auto mask = static_cast<std::uint8_t>(m.mask == 0 ? 1 : m.mask);
    out.bytes[static_cast<std::size_t>(at)] ^= mask;
    out.edit = "byte at " + hex(at) + " ^= " + hex(mask);
    return out;
  }
  std::uint64_t value = m.value;
  if (m.relative == Mutation::Relative::FileSize) value += original.size();
  if (m.relative == Mutation::Relative::BytesLeft) value += original.size() - (at + width);
  put_uint(out.bytes, at, value, width, m.order);
  out.edit = std::to_string(width) + " bytes at " + hex(at) +
             " := " + hex(width == 4 ? value & 0xFFFFFFFFu : value) +
             (m.order == Endian::Big ? " big-endian" : " little-endian");
  return out;
}

// A claimed count or size far beyond the file, for the allocation bound.
struct HugeClaim {
  enum class Field : std::uint8_t {
    KvCount,
    TensorCount,
    KeyLength,
    StringLength,
    ArrayCount,
    NameLength,
    NDims,
    Dim,
    Offset
  };
  Field field = Field::KvCount;
  std::uint64_t which = 0;  // which pair or tensor
  std::uint64_t value = 0;
};

inline std::string_view to_string(HugeClaim::Field field) {
  switch (field) {
    case HugeClaim::Field::KvCount: return "kv_count";
    case HugeClaim::Field::TensorCount: return "tensor_count";
    case HugeClaim::Field::KeyLength: return "key length";
    case HugeClaim::Field::StringLength: return "string length";
    case HugeClaim::Field::ArrayCount: return "array count";
    case HugeClaim::Field::NameLength: return "tensor name length";
    case HugeClaim::Field::NDims: return "n_dims";
    case HugeClaim::Field::Dim: return "a dim";
    case HugeClaim::Field::Offset: return "a tensor offset";
  }
  return "?";
}

// Writes the claim into a written model; falls back to kv_count when the file has no such field.
inline Mutated claim(const ValidModel& model, const HugeClaim& c) {
  const Written w = model.write();
  Mutated out{w.bytes, ""};
  const Endian e = model.doc.endian;
  const Layout& l = w.layout;
  std::vector<std::uint64_t> at;
  std::uint32_t width = 8;
  switch (c.field) {
    case HugeClaim::Field::KvCount: at = {16}; break;
    case HugeClaim::Field::TensorCount: at = {8}; break;
    case HugeClaim::Field::KeyLength:
      for (const WrittenPair& p : l.pairs) at.push_back(p.key_offset);
      break;
    case HugeClaim::Field::StringLength:
      for (std::size_t i = 0; i < l.pairs.size(); ++i) {
        if (model.doc.metadata[i].value.type == ValueType::String) {
          at.push_back(l.pairs[i].value_offset);
        }
      }
      break;
    case HugeClaim::Field::ArrayCount:
      for (std::size_t i = 0; i < l.pairs.size(); ++i) {
        if (model.doc.metadata[i].value.type == ValueType::Array) {
          at.push_back(l.pairs[i].value_offset + 4);
        }
      }
      break;
    case HugeClaim::Field::NameLength:
      for (const WrittenTensor& t : l.tensors) at.push_back(t.name_offset);
      break;
    case HugeClaim::Field::NDims:
      width = 4;
      for (const WrittenTensor& t : l.tensors) at.push_back(t.n_dims_offset);
      break;
    case HugeClaim::Field::Dim:
      for (std::size_t i = 0; i < l.tensors.size(); ++i) {
        for (std::size_t d = 0; d < model.doc.tensors[i].dims.size(); ++d) {
          at.push_back(l.tensors[i].dims_offset + 8 * d);
        }
      }
      break;
    case HugeClaim::Field::Offset:
      for (const WrittenTensor& t : l.tensors) at.push_back(t.offset_offset);
      break;
  }
  std::string what(to_string(c.field));
  if (at.empty()) {
    at = {16};
    width = 8;
    what = "kv_count (the file has no " + what + ")";
  }
  const std::uint64_t offset = pick_of(c.which, at);
  put_uint(out.bytes, offset, c.value, width, e);
  out.edit =
      what + " at " + hex(offset) + " := " + hex(width == 4 ? c.value & 0xFFFFFFFFu : c.value);
  return out;
}

namespace gen {

inline Gen<Corruption> corruption() {
  return rc::gen::exec([] {
    Corruption c;
    c.fault = *rc::gen::elementOf(all_faults());
    c.host = *valid_model();
    for (std::uint64_t& x : c.choices) x = *rc::gen::arbitrary<std::uint64_t>();
    return c;
  });
}

inline std::vector<std::uint64_t> boundary_values() {
  return {0,
          1,
          2,
          4,
          9,
          12,
          13,
          24,
          32,
          43,
          0x7F,
          0xFF,
          0xFFFF,
          1ULL << 30,
          (1ULL << 30) + 1,
          0x7FFFFFFF,
          0x80000000,
          0xFFFFFFFF,
          1ULL << 32,
          1ULL << 62,
          kPow63 - 1,
          kPow63,
          kU64Max,
          kU64Max - 31,
          kU64Max / 4 + 1,
          kU64Max / 8 + 1,
          kU64Max / 12 + 1,
          kU64Max / 13 + 1,
          kU64Max / 16 + 1,
          kU64Max / 24 + 1};
}

inline Gen<Mutation> mutation() {
  return rc::gen::exec([] {
    Mutation m;
    m.kind = *rc::gen::elementOf(std::vector<Mutation::Kind>{
        Mutation::Kind::Flip, Mutation::Kind::Overwrite4, Mutation::Kind::Overwrite8});
    m.where = *rc::gen::arbitrary<std::uint64_t>();
    m.mask = *rc::gen::weightedOneOf<std::uint8_t>(
        {{2, rc::gen::elementOf(std::vector<std::uint8_t>{0x01, 0x80, 0xFF, 0x40, 0x10})},
         {1, rc::gen::inRange<std::uint8_t>(1, 255)}});
    m.relative =
        *rc::gen::weightedElement<Mutation::Relative>({{6, Mutation::Relative::Absolute},
                                                       {1, Mutation::Relative::FileSize},
                                                       {1, Mutation::Relative::BytesLeft}});
    m.value =
        m.relative == Mutation::Relative::Absolute
            ? *rc::gen::weightedOneOf<std::uint64_t>({{4, rc::gen::elementOf(boundary_values())},
                                                      {1, rc::gen::arbitrary<std::uint64_t>()}})
            : *rc::gen::elementOf(std::vector<std::uint64_t>{0, 1, kU64Max, 2, kU64Max - 1});
    m.order = *rc::gen::elementOf(std::vector<Endian>{Endian::Little, Endian::Big});
    return m;
  });
}

inline Gen<HugeClaim> huge_claim() {
  return rc::gen::exec([] {
    HugeClaim c;
    c.field = static_cast<HugeClaim::Field>(*rc::gen::inRange(0, 9));
    c.which = *rc::gen::arbitrary<std::uint64_t>();
    c.value = *rc::gen::elementOf(std::vector<std::uint64_t>{
        kPow63 - 1, kPow63, kU64Max, 1ULL << 62, 0xFFFFFFFF, 1ULL << 32, 0x80000000,
        kU64Max / 4 + 1, kU64Max / 8 + 1, kU64Max / 13 + 1, kU64Max / 16 + 1, kU64Max / 24 + 1,
        0x055555555555555aULL, 1ULL << 40});
    return c;
  });
}

}  // namespace gen

// =================================================================================================
// Printing counterexamples
// =================================================================================================

inline std::string value_text(const Value& v, std::size_t max_items = 6) {
  switch (v.type) {
    case ValueType::String: return "string \"" + shown(v.text) + "\"";
    case ValueType::Array: {
      std::string out = "array<" + std::string(to_string(v.element_type)) + ">[" +
                        std::to_string(v.items.size()) + "]{";
      for (std::size_t i = 0; i < v.items.size() && i < max_items; ++i) {
        if (i != 0) out += ", ";
        out += value_text(v.items[i], 3);
      }
      if (v.items.size() > max_items) out += ", ...";
      return out + "}";
    }
    case ValueType::Bool:
      return v.bits == 0 ? "bool false" : v.bits == 1 ? "bool true" : "bool byte " + hex(v.bits);
    case ValueType::Float32: {
      const auto f = std::bit_cast<float>(static_cast<std::uint32_t>(v.bits));
      std::ostringstream out;
      out << "float32 " << f << " (" << hex(v.bits) << ")";
      return out.str();
    }
    case ValueType::Float64: {
      std::ostringstream out;
      out << "float64 " << std::bit_cast<double>(v.bits) << " (" << hex(v.bits) << ")";
      return out.str();
    }
    default: break;
  }
  const bool is_signed = v.type == ValueType::Int8 || v.type == ValueType::Int16 ||
                         v.type == ValueType::Int32 || v.type == ValueType::Int64;
  std::string out = std::string(to_string(v.type)) + " ";
  if (is_signed) {
    const std::uint32_t bits = 8 * scalar_size(v.type);
    const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
    const auto value = (v.bits & sign) != 0 && bits < 64 ? static_cast<std::int64_t>(v.bits) -
                                                               static_cast<std::int64_t>(sign << 1)
                                                         : static_cast<std::int64_t>(v.bits);
    return out + std::to_string(value);
  }
  return out + std::to_string(v.bits);
}

inline std::string tensor_text(const Tensor& t) {
  std::string out = "\"" + shown(t.name) + "\" " + tensor_type_name(t.type) + " [";
  for (std::size_t d = 0; d < t.dims.size(); ++d) {
    out += (d == 0 ? "" : ", ") + std::to_string(t.dims[d]);
  }
  out += "]";
  if (t.offset) out += " offset " + hex(*t.offset);
  if (t.data) {
    const bool zero =
        std::all_of(t.data->begin(), t.data->end(), [](std::uint8_t b) { return b == 0; });
    std::uint64_t fnv = 0xcbf29ce484222325ULL;
    for (const std::uint8_t b : *t.data) fnv = (fnv ^ b) * 0x100000001b3ULL;
    out += " data " + std::to_string(t.data->size()) +
           (zero ? " zero bytes" : " bytes (fnv-1a " + hex(fnv) + ")");
  }
  return out;
}

inline std::string document_text(const Document& doc) {
  std::string out = "GGUF v" + std::to_string(doc.version) +
                    (doc.endian == Endian::Big ? " big-endian" : " little-endian") + ", " +
                    std::to_string(doc.metadata.size()) + " kv, " +
                    std::to_string(doc.tensors.size()) + " tensors";
  for (std::size_t i = 0; i < doc.metadata.size(); ++i) {
    const KeyValue& kv = doc.metadata[i];
    out += "\n  kv[" + std::to_string(i) + "] \"" + shown(kv.key) + "\" = " + value_text(kv.value);
    if (kv.raw_type) out += " (type written as " + std::to_string(*kv.raw_type) + ")";
  }
  for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
    out += "\n  tensor[" + std::to_string(i) + "] " + tensor_text(doc.tensors[i]);
  }
  return out;
}

}  // namespace ggufcheck::testing

namespace ggufcheck {

inline void showValue(const Value& value, std::ostream& os) {
  os << testing::value_text(value);
}
inline void showValue(const Tensor& tensor, std::ostream& os) {
  os << testing::tensor_text(tensor);
}
inline void showValue(const Document& doc, std::ostream& os) {
  os << testing::document_text(doc);
}

namespace testing {

inline void showValue(const Key& key, std::ostream& os) {
  os << "key \"" << shown(key.text) << "\" (" << to_string(key.style) << ")";
}
inline void showValue(const Alignment& a, std::ostream& os) {
  os << "alignment " << a.value;
}
inline void showValue(const ValidModel& m, std::ostream& os) {
  os << document_text(m.doc);
  if (m.doc.tensors.empty()) os << "\n  " << (m.pad_when_no_tensors ? "padded" : "unpadded");
}
inline void showValue(const AnyDocument& d, std::ostream& os) {
  os << document_text(d.doc);
}
inline void showValue(const Corruption& c, std::ostream& os) {
  const Corrupted x = apply(c);
  const FaultInfo& info = fault_info(c.fault);
  os << "fault " << info.name << " (" << code_string(info.target) << "): " << x.edit
     << "\n  file of " << x.bytes.size() << " bytes; edit at " << hex(x.field_offset)
     << ", target finding at " << hex(x.finding_offset);
  for (const Profile p : kAllProfiles) {
    os << "\n  expected in " << to_string(p) << ": " << describe(x.expected_in(p));
  }
  os << "\n  host (as written before the edit): " << document_text(x.host.doc);
  os << "\n  choices:";
  for (std::uint64_t ch : c.choices) os << " " << hex(ch);
}
inline void showValue(const Mutation& m, std::ostream& os) {
  switch (m.kind) {
    case Mutation::Kind::Flip: os << "flip (mask " << hex(m.mask) << ")"; break;
    case Mutation::Kind::Overwrite4: os << "overwrite 4 bytes"; break;
    case Mutation::Kind::Overwrite8: os << "overwrite 8 bytes"; break;
  }
  if (m.kind != Mutation::Kind::Flip) {
    os << " with "
       << (m.relative == Mutation::Relative::FileSize    ? "file size + "
           : m.relative == Mutation::Relative::BytesLeft ? "bytes left + "
                                                         : "")
       << hex(m.value) << (m.order == Endian::Big ? " big-endian" : " little-endian");
  }
  os << ((m.where & 1) != 0 ? " at a field start (" : " at any byte (") << hex(m.where >> 1) << ")";
}
inline void showValue(const HugeClaim& c, std::ostream& os) {
  os << to_string(c.field) << " := " << hex(c.value) << " (which " << c.which << ")";
}

}  // namespace testing
}  // namespace ggufcheck

namespace rc {

template <>
struct Arbitrary<ggufcheck::Value> {
  static Gen<ggufcheck::Value> arbitrary() { return ggufcheck::testing::gen::any_value({}); }
};

template <>
struct Arbitrary<ggufcheck::Tensor> {
  static Gen<ggufcheck::Tensor> arbitrary() {
    ggufcheck::testing::gen::TensorOptions options;
    options.zero_dims = true;
    return ggufcheck::testing::gen::tensor(options);
  }
};

template <>
struct Arbitrary<ggufcheck::testing::Key> {
  static Gen<ggufcheck::testing::Key> arbitrary() { return ggufcheck::testing::gen::any_key(); }
};

template <>
struct Arbitrary<ggufcheck::testing::Alignment> {
  static Gen<ggufcheck::testing::Alignment> arbitrary() {
    return ggufcheck::testing::gen::alignment();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::ValidModel> {
  static Gen<ggufcheck::testing::ValidModel> arbitrary() {
    return ggufcheck::testing::gen::valid_model();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::AnyDocument> {
  static Gen<ggufcheck::testing::AnyDocument> arbitrary() {
    return ggufcheck::testing::gen::any_document();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::Corruption> {
  static Gen<ggufcheck::testing::Corruption> arbitrary() {
    return ggufcheck::testing::gen::corruption();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::Mutation> {
  static Gen<ggufcheck::testing::Mutation> arbitrary() {
    return ggufcheck::testing::gen::mutation();
  }
};

template <>
struct Arbitrary<ggufcheck::testing::HugeClaim> {
  static Gen<ggufcheck::testing::HugeClaim> arbitrary() {
    return ggufcheck::testing::gen::huge_claim();
  }
};

}  // namespace rc
