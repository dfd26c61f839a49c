// The conformance cases. Each one builds a file with the library's writer (patching bytes at the
// offsets its WrittenLayout reports where the writer has no option for the fault) and declares the
// verdict of each profile from the format's rules (docs/format.md): `spec` is what the GGUF
// document requires, `llama.cpp` what the pinned reference reader does (its reference-reader
// section). One fault per n_ case; the rest of each file is valid in both profiles.
#include "cases.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data_cases.hpp"
#include "documents.hpp"
#include "ggufcheck/format.hpp"
#include "ggufcheck/writer.hpp"
#include "hostile.hpp"

namespace ggufcheck::conformance {

std::string Case::area() const {
  const std::size_t first = id.find('_');
  return id.substr(first + 1, id.find('_', first + 1) - first - 1);
}

bool is_data_error_class(const std::string& name) {
  return name == "non_finite" || name == "refused_type";
}

bool is_model_error_class(const std::string& name) {
  static const std::set<std::string> kClasses = {
      "unknown_arch", "missing_key",    "key_type",     "bad_value",    "bad_vocab",
      "dup_token",    "missing_tensor", "tensor_shape", "extra_tensor", "split_set"};
  return kClasses.contains(name);
}

std::string Case::file_name() const {
  return split_count == 0 ? id + ".gguf" : shard_name(1);
}

std::string Case::shard_name(std::uint32_t number) const {
  // llama_split_path: "%s-%05d-of-%05d.gguf"
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "-%05u-of-%05u.gguf", number, split_count);
  return id + suffix;
}

bool is_error_class(const std::string& name) {
  static const std::set<std::string> kClasses = {
      "truncated",       "bad_magic",  "bad_version", "bad_count", "bad_key",
      "dup_key",         "bad_type",   "bad_string",  "bad_array", "bad_alignment",
      "bad_tensor_info", "bad_layout", "limit"};
  return kClasses.contains(name);
}

namespace {

using testing::deeply_nested;
using testing::document;
using testing::minimal_document;
using testing::nested_array;
using testing::pair;
using testing::patch;
using testing::prefix;
using testing::quantization_version;
using testing::tensor;
using testing::with_array_count;
using testing::with_array_type;
using testing::with_counts;
using testing::with_element_length;
using testing::with_key_length;
using testing::with_magic;
using testing::with_n_dims;
using testing::with_string_length;
using testing::with_tensor_name_length;

constexpr Verdict A = Verdict::Accept;
constexpr Verdict R = Verdict::Reject;
constexpr Verdict E = Verdict::Either;

constexpr std::uint64_t kMax64 = UINT64_MAX;
constexpr std::uint64_t kPow62 = std::uint64_t{1} << 62;
constexpr std::uint64_t kPow63 = std::uint64_t{1} << 63;

// The builder keeps the file names honest: the prefix is derived from the two verdicts.
class Cases {
 public:
  Case& add(const std::string& area_what, Verdict spec, Verdict llama_cpp, std::string error_class,
            std::string rule, std::function<ByteVector()> build,
            std::vector<std::string> tags = {}) {
    const char* prefix = spec == A && llama_cpp == A   ? "y_"
                         : spec == R && llama_cpp == R ? "n_"
                                                       : "i_";
    Case c;
    c.id = prefix + area_what;
    c.rule = std::move(rule);
    c.spec = spec;
    c.llama_cpp = llama_cpp;
    c.error_class = std::move(error_class);
    c.tags = std::move(tags);
    c.build = std::move(build);
    const bool rejects = spec == R || llama_cpp == R;
    if (rejects != !c.error_class.empty()) {
      throw std::logic_error(c.id + ": an error class is given exactly when a profile rejects");
    }
    if (rejects && !is_error_class(c.error_class)) {
      throw std::logic_error(c.id + ": unknown error class " + c.error_class);
    }
    list_.push_back(std::move(c));
    return list_.back();
  }
  Case& y(const std::string& what, std::string rule, std::function<ByteVector()> build,
          std::vector<std::string> tags = {}) {
    return add(what, A, A, "", std::move(rule), std::move(build), std::move(tags));
  }
  Case& n(const std::string& what, std::string error_class, std::string rule,
          std::function<ByteVector()> build, std::vector<std::string> tags = {}) {
    return add(what, R, R, std::move(error_class), std::move(rule), std::move(build),
               std::move(tags));
  }
  std::vector<Case> take() { return std::move(list_); }

 private:
  std::vector<Case> list_;
};

ByteVector bytes_of(const Document& doc, const WriteOptions& options = {}) {
  return write_bytes(doc, options);
}

// minimal_document() plus kv[1] "test.value" = value.
Document with_value(Value value, std::optional<std::uint32_t> raw_type = std::nullopt) {
  return document({pair("test.value", std::move(value), raw_type)});
}
ByteVector value_file(Value value) {
  return bytes_of(with_value(std::move(value)));
}

Value f32_bits(std::uint32_t bits) {
  return Value::integer(ValueType::Float32, bits);
}
Value f64_bits(std::uint64_t bits) {
  return Value::integer(ValueType::Float64, bits);
}
Value str(std::string text) {
  return Value::string(std::move(text));
}

// A file whose kv[1] "test.value" is a string with the given length field (nothing more written
// than the 5 bytes of "hello").
ByteVector string_length(std::uint64_t length) {
  return with_string_length(with_value(str("hello")), 1, length).bytes;
}
ByteVector key_length(std::uint64_t length) {
  return with_key_length(with_value(str("hello")), 1, length).bytes;
}
// kv[1] "test.value" an array of two `item`s whose count field is set to `count`.
ByteVector array_count(ValueType element, const Value& item, std::uint64_t count) {
  return with_array_count(with_value(Value::array(element, {item, item})), 1, count).bytes;
}
// kv[1] "test.value" a string array ["a", "b"] whose second element's length is `length`.
ByteVector element_length(std::uint64_t length) {
  return with_element_length(with_value(Value::array(ValueType::String, {str("a"), str("b")})), 1,
                             1, length)
      .bytes;
}

// One F32 tensor "t" of dims, after the architecture (and more pairs).
Document one_tensor(std::vector<std::uint64_t> dims, std::uint32_t type = 0,
                    std::vector<KeyValue> pairs = {}) {
  return document(std::move(pairs), {tensor("t", std::move(dims), type)});
}
// Two F32 tensors "a" and "b" of 8 elements (32 bytes each).
Document two_tensors(std::optional<std::uint64_t> a_offset = std::nullopt,
                     std::optional<std::uint64_t> b_offset = std::nullopt,
                     std::vector<KeyValue> pairs = {}) {
  return document(std::move(pairs), {tensor("a", {8}, 0, a_offset), tensor("b", {8}, 0, b_offset)});
}
// A tensor "t" of a hostile shape with 32 bytes of data (the writer writes none for it).
ByteVector hostile_dims(std::vector<std::uint64_t> dims, std::uint32_t type = 0) {
  Tensor t = tensor("t", std::move(dims), type);
  t.data = std::vector<std::uint8_t>(32, 0);
  return bytes_of(document({}, {t}));
}

std::string lower(std::string_view name) {
  std::string out(name);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// ---------------------------------------------------------------------------------------------

void header_cases(Cases& c) {
  const ByteVector minimal = bytes_of(minimal_document());
  c.y("header_minimal",
      "a v3 header with one pair, general.architecture, and no tensors is the smallest file both "
      "the spec (which requires general.architecture) and the reader accept",
      [=] { return minimal; });
  c.add("header_counts_zero", R, A, "bad_key",
        "the bare 24-byte header with both counts 0: the reader accepts it; the spec requires "
        "general.architecture",
        [] {
          Document doc;
          return bytes_of(doc);
        });
  for (std::uint64_t n = 0; n < 24; ++n) {
    c.n(n == 0 ? "header_empty_file" : "header_truncated_at_" + std::to_string(n), "truncated",
        "a file shorter than the 24-byte header (" + std::to_string(n) + " bytes of a valid one)",
        [=] { return prefix(minimal, n); });
  }
  const std::vector<std::pair<std::string, std::string>> magics = {
      {"ggml", "lmgg"},       // legacy GGML magic as written on disk
      {"ggmf", "fmgg"},       // legacy GGMF
      {"ggjt", "tjgg"},       // legacy GGJT
      {"lowercase", "gguf"},  // case matters
      {"reversed", "FUGG"},   // the magic read as a little-endian u32 and written big-endian
      {"zeros", std::string(4, '\0')},
      {"bit_flip", "GGUG"},
      {"shifted", std::string("\0GGU", 4)},
  };
  for (const auto& [name, magic] : magics) {
    c.n("header_magic_" + name, "bad_magic",
        "the first 4 bytes must be \"GGUF\" (47 47 55 46); here they are a " + name + " variant",
        [=, magic = magic] { return with_magic(minimal, magic); });
  }
  const auto version_field = [&](std::uint32_t v) {
    return [=] {
      ByteVector b = minimal;
      patch(b, 4, v);
      return b;
    };
  };
  c.n("header_version_0", "bad_version",
      "version 0 is rejected (the newest reader; the spec has "
      "no version 0)",
      version_field(0));
  c.n("header_version_1", "bad_version",
      "version 1 (32-bit counts and lengths) is obsolete and rejected by every current reader", [] {
        Document doc = minimal_document();
        doc.version = 1;
        return bytes_of(doc);
      });
  c.y("header_version_2", "version 2 has the same layout as 3 and is accepted", [] {
    Document doc = minimal_document();
    doc.version = 2;
    return bytes_of(doc);
  });
  c.y("header_version_3", "version 3, the current one, with a value of each 64-bit type", [] {
    return bytes_of(document({pair("test.u64", Value::u64(1)), pair("test.i64", Value::i64(-1)),
                              pair("test.f64", Value::f64(1.5))}));
  });
  c.n("header_version_4", "bad_version", "versions above 3 are rejected", version_field(4));
  c.n("header_version_huge", "bad_version", "version 0xFFFFFFFF", version_field(0xFFFFFFFFu),
      {"hostile"});
  c.n("header_version_2p31", "bad_version", "version 2^31 (low 16 bits zero)",
      version_field(0x80000000u), {"hostile"});
  c.n("header_version_65536", "bad_version",
      "version 0x00010000, whose low 16 bits are zero as in a byte-swapped file",
      version_field(0x00010000u));
  c.n("header_version_byte_swapped_little_body", "bad_version",
      "the version written big-endian (00 00 00 03) while the rest of the file is little-endian",
      [=] {
        ByteVector b = minimal;
        patch(b, 4, std::uint32_t{3}, Endian::Big);
        return b;
      });
  c.add("header_course_40_byte_header", R, A, "bad_key",
        "the course chapter's 40-byte header (a u32 alignment and 4 padding bytes after the "
        "counts): the header is 24 bytes and the alignment is a key. The reader happens to parse "
        "the shifted bytes as a pair with the key \"\\x14\", which the spec rejects",
        [] {
          WriteOptions o;
          o.header_alignment_field = true;
          return bytes_of(minimal_document(), o);
        });
  c.n("header_course_v1_widths", "truncated",
      "a v3 header followed by 32-bit counts and lengths (a v1 writer that bumped the version)",
      [] {
        WriteOptions o;
        o.narrow_widths = true;
        return bytes_of(minimal_document(), o);
      });
}

void count_cases(Cases& c) {
  const auto counts = [](std::uint64_t tensor_count, std::uint64_t kv_count) {
    return [=] { return with_counts(minimal_document(), tensor_count, kv_count); };
  };
  c.n("count_tensor_2p63", "bad_count", "tensor_count >= 2^63 (the reader reads it as int64)",
      counts(kPow63, 1), {"hostile"});
  c.n("count_tensor_max", "bad_count", "tensor_count 2^64-1", counts(kMax64, 1), {"hostile"});
  c.n("count_tensor_2p62", "bad_count",
      "tensor_count 2^62 in a 69-byte file: a parser must not allocate for it", counts(kPow62, 1),
      {"hostile"});
  c.n("count_tensor_1e9", "bad_count",
      "tensor_count 10^9 in a 69-byte file: a parser must not allocate for it",
      counts(1000000000, 1), {"hostile"});
  c.n("count_kv_2p63", "bad_count", "kv_count >= 2^63", counts(0, kPow63), {"hostile"});
  c.n("count_kv_max", "bad_count", "kv_count 2^64-1", counts(0, kMax64), {"hostile"});
  c.n("count_kv_2p62", "bad_count", "kv_count 2^62 in a 69-byte file", counts(0, kPow62),
      {"hostile"});
  c.n("count_kv_1e9", "bad_count", "kv_count 10^9 in a 69-byte file", counts(0, 1000000000),
      {"hostile"});
  c.n("count_kv_one_more", "truncated", "kv_count says 2 pairs; the file ends after 1",
      counts(0, 2));
  c.n("count_tensor_one_more", "truncated",
      "tensor_count says 1 tensor; the file ends after the metadata", counts(1, 1));
  c.y("limits_10000_pairs", "10000 metadata pairs", [] {
    std::vector<KeyValue> pairs;
    for (int i = 0; i < 10000; ++i) {
      pairs.push_back(
          pair("test.key_" + std::to_string(i), Value::u32(static_cast<std::uint32_t>(i))));
    }
    return bytes_of(document(std::move(pairs)));
  });
  c.y("limits_1000_tensors", "1000 tensors of one F32 element each", [] {
    std::vector<Tensor> tensors;
    for (int i = 0; i < 1000; ++i) tensors.push_back(tensor("t." + std::to_string(i), {1}));
    return bytes_of(document({}, std::move(tensors)));
  });
}

void kv_cases(Cases& c) {
  const std::vector<std::pair<std::string, Value>> scalars = {
      {"uint8", Value::u8(255)},
      {"int8", Value::i8(-128)},
      {"uint16", Value::u16(65535)},
      {"int16", Value::i16(-32768)},
      {"uint32", Value::u32(0xFFFFFFFFu)},
      {"int32", Value::i32(std::numeric_limits<std::int32_t>::min())},
      {"float32", Value::f32(0.1F)},
      {"bool_true", Value::boolean(true)},
      {"bool_false", Value::boolean(false)},
      {"string", str("hello")},
      {"array", Value::array(ValueType::Uint32, {Value::u32(1), Value::u32(2), Value::u32(3)})},
      {"uint64", Value::u64(kMax64)},
      {"int64", Value::i64(std::numeric_limits<std::int64_t>::min())},
      {"float64", Value::f64(0.1)},
      {"float32_nan", f32_bits(0x7FC00000u)},
      {"float32_nan_payload", f32_bits(0x7F800001u)},
      {"float32_negative_nan", f32_bits(0xFFC00000u)},
      {"float32_inf", f32_bits(0x7F800000u)},
      {"float32_negative_inf", f32_bits(0xFF800000u)},
      {"float32_negative_zero", f32_bits(0x80000000u)},
      {"float32_smallest_denormal", f32_bits(0x00000001u)},
      {"float32_max", f32_bits(0x7F7FFFFFu)},
      {"float32_min_normal", f32_bits(0x00800000u)},
      {"float32_third", Value::f32(1.0F / 3.0F)},
      {"float64_nan", f64_bits(0x7FF8000000000000ull)},
      {"float64_inf", f64_bits(0x7FF0000000000000ull)},
      {"float64_negative_zero", f64_bits(0x8000000000000000ull)},
      {"float64_smallest_denormal", f64_bits(1)},
      {"float64_max", f64_bits(0x7FEFFFFFFFFFFFFFull)},
      {"float64_third", Value::f64(1.0 / 3.0)},
      {"int64_max", Value::i64(std::numeric_limits<std::int64_t>::max())},
      {"uint64_2p53_plus_1", Value::u64((std::uint64_t{1} << 53) + 1)},
  };
  for (const auto& [name, value] : scalars) {
    c.y("kv_" + name,
        "a metadata value of type " + std::string(to_string(value.type)) + " (" + name +
            ") is read exactly",
        [value = value] { return value_file(value); });
  }
  c.y("kv_all_types", "one pair of each of the 13 value types in one file", [scalars] {
    std::vector<KeyValue> pairs;
    for (std::size_t i = 0; i < 14; ++i) {
      const auto& [name, value] = scalars[i];
      pairs.push_back(pair("test." + name, value));
    }
    return bytes_of(document(std::move(pairs)));
  });
  for (const std::uint32_t type : {13u, 255u, 0x80000000u, 0xFFFFFFFFu}) {
    c.n("kv_type_" + std::string(type == 13            ? "13"
                                 : type == 255         ? "255"
                                 : type == 0x80000000u ? "2p31"
                                                       : "max"),
        "bad_type", "a value type id outside 0..12 (" + std::to_string(type) + ")",
        [=] { return bytes_of(with_value(Value::u8(1), type)); });
  }
  c.n("kv_type_uint64_in_v1", "bad_version",
      "version 1 knew value types 0..9 only; version 1 itself is rejected", [] {
        Document doc = with_value(Value::u8(1), 10);
        doc.version = 1;
        return bytes_of(doc);
      });
  for (const std::uint8_t byte : {std::uint8_t{2}, std::uint8_t{255}}) {
    c.add("kv_bool_" + std::to_string(byte), R, A, "bad_type",
          "a bool byte of " + std::to_string(byte) +
              ": the spec allows only 0 and 1; the reader does not check",
          [=] { return value_file(Value::bool_byte(byte)); })
        .recommended = true;
  }
  const Written w = write(with_value(Value::u64(7)));
  const WrittenPair p = w.layout.pairs[1];
  const std::vector<std::pair<std::string, std::uint64_t>> cuts = {
      {"key_length", p.key_offset + 4}, {"key", p.key_offset + 8 + 3},
      {"before_type", p.type_offset},   {"type", p.type_offset + 2},
      {"before_value", p.value_offset}, {"value", p.value_offset + 5},
  };
  for (const auto& [where, at] : cuts) {
    c.n("kv_truncated_in_" + where, "truncated",
        "the file ends inside a metadata pair (" + where + ")",
        [bytes = w.bytes, at = at] { return prefix(bytes, at); });
  }
  // Standard keys: the spec's requirements, which the reader leaves to the model loader.
  c.add("kv_missing_architecture", R, A, "bad_key",
        "general.architecture is required by the spec; the reader does not look at keys", [] {
          Document doc;
          doc.metadata.push_back({"general.name", str("no architecture"), {}});
          return bytes_of(doc);
        });
  c.add("kv_architecture_not_string", R, A, "bad_type", "general.architecture must be a string",
        [] {
          Document doc;
          doc.metadata.push_back({"general.architecture", Value::u32(1), {}});
          return bytes_of(doc);
        });
  c.y("kv_architecture_nul_inside",
      "general.architecture = llama\\0evil: a string with a NUL, read whole (the reader's C API "
      "returns llama)",
      [] {
        Document doc;
        doc.metadata.push_back({"general.architecture", str(std::string("llama\0evil", 10)), {}});
        return bytes_of(doc);
      });
  c.add("kv_missing_quantization_version", R, A, "bad_key",
        "general.quantization_version is required when a tensor is quantized",
        [] { return bytes_of(one_tensor({32}, 8)); });
  c.add("kv_tokenizer_scores_length_mismatch", R, A, "bad_array",
        "tokenizer.ggml.scores must have one entry per token",
        [] {
          return bytes_of(
              document({pair("tokenizer.ggml.model", str("llama")),
                        pair("tokenizer.ggml.tokens",
                             Value::array(ValueType::String, {str("a"), str("b"), str("c")})),
                        pair("tokenizer.ggml.scores",
                             Value::array(ValueType::Float32, {Value::f32(0), Value::f32(0)}))}));
        })
      .recommended = true;
  c.add("kv_standard_key_wrong_type", R, A, "bad_type",
        "general.file_type is a uint32; here it is a string",
        [] { return bytes_of(document({pair("general.file_type", str("mostly q4_0"))})); })
      .recommended = true;
}

void key_cases(Cases& c) {
  const auto key_file = [](std::string key) {
    return [key = std::move(key)] { return bytes_of(document({pair(key, Value::u8(1))})); };
  };
  c.n("key_empty", "bad_key", "a key of length 0", key_file(""));
  c.n("key_duplicate", "dup_key", "the same key twice", [] {
    return bytes_of(document({pair("test.value", Value::u8(1)), pair("test.value", Value::u8(2))}));
  });
  c.n("key_duplicate_different_types", "dup_key", "the same key twice, with different types", [] {
    return bytes_of(document({pair("test.value", Value::u8(1)), pair("test.value", str("x"))}));
  });
  c.n("key_duplicate_architecture", "dup_key", "general.architecture twice",
      [] { return bytes_of(document({pair("general.architecture", str("llama"))})); });
  c.y("key_single_segment", "a key of one lower_snake_case segment", key_file("value"));
  c.y("key_digits_and_underscores", "digits and underscores in segments",
      key_file("test.block_2.value_10"));
  c.y("key_65535_bytes", "a key of 65535 bytes, the longest the spec allows",
      key_file("test." + std::string(65535 - 5, 'a')));
  const std::vector<std::tuple<std::string, std::string, std::string>> unconventional = {
      {"uppercase", "test.Value", "upper case"},
      {"hyphen", "test-arch.value", "a '-' (which real architecture names use)"},
      {"space", "test.my value", "a space"},
      {"empty_segment", "test..value", "an empty segment"},
      {"trailing_dot", "test.value.", "a trailing '.'"},
      {"leading_dot", ".test.value", "a leading '.'"},
  };
  for (const auto& [name, key, what] : unconventional) {
    c.add("key_" + name, R, A, "bad_key",
          "keys are '.'-separated lower_snake_case segments (spec); this one has " + what +
              ", which the reader does not check",
          key_file(key))
        .recommended = true;
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> bad_bytes = {
      {"nul_inside", std::string("test.val\0ue", 11), "a NUL byte"},
      {"control_char", "test.val\x01ue", "a control byte"},
      {"non_ascii", "test.v\xC3\xA0lue", "a non-ASCII (valid UTF-8) character"},
      {"invalid_utf8", "test.\xFF", "a byte that is not UTF-8"},
  };
  for (const auto& [name, key, what] : bad_bytes) {
    c.add("key_" + name, R, A, "bad_key",
          "keys are ASCII (spec); this one has " + what + ", which the reader does not check",
          key_file(key));
  }
  c.add("key_65536_bytes", R, A, "bad_key",
        "a key of 65536 bytes: the spec allows at most 65535; the reader has no such limit",
        key_file("test." + std::string(65536 - 5, 'a')));
  c.add("key_equal_up_to_nul", R, A, "bad_key",
        "two keys equal up to a NUL byte: invalid bytes for the spec; distinct byte strings for "
        "the reader, which accepts them",
        [] {
          return bytes_of(document({pair(std::string("test.key\0a", 10), Value::u8(1)),
                                    pair(std::string("test.key\0b", 10), Value::u8(2))}));
        });
  c.n("key_length_past_eof", "truncated", "a key length larger than the bytes left",
      [] { return key_length(1000); });
  c.n("key_length_one_past_eof", "truncated", "a key length one more than the bytes left", [] {
    const Written w = write(with_value(str("hello")));
    return key_length(w.bytes.size() - w.layout.pairs[1].key_offset - 8 + 1);
  });
  c.n("key_length_2p63", "truncated", "a key length of 2^63", [] { return key_length(kPow63); },
      {"hostile"});
  c.n("key_length_max", "truncated", "a key length of 2^64-1", [] { return key_length(kMax64); },
      {"hostile"});
  // Keys other parsers read differently (ggufcheck's portability checks, GGUF9501..GGUF9504).
  c.y("key_header_field_version",
      "a key version = 7 in a version 3 file: the header still says 3 (@huggingface/gguf and "
      "hyllama read 7)",
      [] { return bytes_of(document({pair("version", Value::u32(7))})); });
  c.y("key_proto", "a key __proto__ (JavaScript parsers assign it as the object's prototype)",
      [] { return bytes_of(document({pair("__proto__", str("x"))})); });
  c.y("key_proto_segment", "a key a.__proto__.b (a parser that nests keys by their dots loses it)",
      [] { return bytes_of(document({pair("a.__proto__.b", str("x"))})); });
  c.y("key_prefix_of_another",
      "a key general (a string) beside general.architecture: both are keys of their own",
      [] { return bytes_of(document({pair("general", str("x"))})); });
  c.add("key_gguf_version", R, A, "bad_key",
        "a key GGUF.version: not lower_snake_case (spec); the reader reads it (gguf-py keeps its "
        "header fields under that name and refuses the file)",
        [] { return bytes_of(document({pair("GGUF.version", Value::u32(3))})); })
      .recommended = true;
}

void string_cases(Cases& c) {
  const std::vector<std::tuple<std::string, std::string, std::string>> valid = {
      {"empty", "", "an empty string"},
      {"nul_inside", std::string("a\0b", 3), "a NUL byte inside (strings are not C strings)"},
      {"nul_only", std::string(1, '\0'), "a single NUL byte"},
      {"bom", "\xEF\xBB\xBFhello", "a leading byte-order mark, which must not be stripped"},
      {"u2028",
       "a\xE2\x80\xA8"
       "b",
       "U+2028 LINE SEPARATOR"},
      {"u0085",
       "a\xC2\x85"
       "b",
       "U+0085 NEXT LINE"},
      {"control_chars", "\x01\x02\x09\x0A\x0D\x1B\x1F\x7F", "control characters"},
      {"multibyte", "\xE4\xB8\xAD \xF0\x9F\x98\x80 \xC3\xA9", "2-, 3- and 4-byte characters"},
      {"max_code_point", "\xF4\x8F\xBF\xBF", "U+10FFFF, the last code point"},
      {"json_specials", "\"\\/\b\f", "characters JSON escapes"},
      {"long_64k", std::string(65536, 'x'), "a 64 KiB string"},
  };
  for (const auto& [name, text, what] : valid) {
    c.y("str_" + name, "a string value with " + what + " is read byte for byte",
        [text = text] { return value_file(str(text)); });
  }
  const std::vector<std::tuple<std::string, std::string, std::string>> invalid = {
      {"byte_ff",
       "a\xFF"
       "b",
       "the byte 0xFF"},
      {"lone_continuation",
       "a\x80"
       "b",
       "a continuation byte without a lead"},
      {"overlong_2_bytes",
       "a\xC0\x80"
       "b",
       "an overlong 2-byte NUL"},
      {"overlong_3_bytes",
       "a\xE0\x80\xAF"
       "b",
       "an overlong 3-byte '/'"},
      {"surrogate",
       "a\xED\xA0\x80"
       "b",
       "an encoded UTF-16 surrogate"},
      {"above_max",
       "a\xF4\x90\x80\x80"
       "b",
       "a code point above U+10FFFF"},
      {"truncated_sequence", "a\xE2\x82", "a 3-byte sequence cut at the end"},
      {"latin1", "caf\xE9", "Latin-1 text"},
  };
  for (const auto& [name, text, what] : invalid) {
    c.add("str_invalid_utf8_" + name, R, A, "bad_string",
          "strings are UTF-8 (spec); this one has " + what + ", which the reader does not check",
          [text = text] { return value_file(str(text)); });
  }
  c.n("str_length_past_eof", "truncated", "a string length larger than the bytes left",
      [] { return string_length(1000); });
  c.n("str_length_one_past_eof", "truncated", "a string length one more than the bytes left",
      [] { return string_length(6); });
  c.n("str_length_2p63", "truncated", "a string length of 2^63",
      [] { return string_length(kPow63); }, {"hostile"});
  c.n("str_length_max", "truncated", "a string length of 2^64-1",
      [] { return string_length(kMax64); }, {"hostile"});
  c.n("str_length_2p62", "truncated", "a string length of 2^62: a parser must not allocate it",
      [] { return string_length(kPow62); }, {"hostile"});
  c.n("limits_string_1gib_plus_1", "truncated",
      "a string length of 2^30+1 (over the reader's 1 GiB limit) in a small file",
      [] { return string_length((std::uint64_t{1} << 30) + 1); }, {"hostile"});
  c.n("str_course_nul_terminated", "truncated",
      "the course chapter's strings (length, bytes, then a NUL): the length covers every byte and "
      "there is no terminator",
      [] {
        WriteOptions o;
        o.nul_terminated_strings = true;
        return bytes_of(with_value(str("hello")), o);
      });
}

void array_cases(Cases& c) {
  const std::vector<std::pair<ValueType, std::vector<Value>>> typed = {
      {ValueType::Uint8, {Value::u8(0), Value::u8(1), Value::u8(255)}},
      {ValueType::Int8, {Value::i8(-128), Value::i8(0), Value::i8(127)}},
      {ValueType::Uint16, {Value::u16(0), Value::u16(65535)}},
      {ValueType::Int16, {Value::i16(-32768), Value::i16(32767)}},
      {ValueType::Uint32, {Value::u32(0), Value::u32(0xFFFFFFFFu)}},
      {ValueType::Int32, {Value::i32(-1), Value::i32(std::numeric_limits<std::int32_t>::max())}},
      {ValueType::Float32,
       {Value::f32(0), Value::f32(-1000), Value::f32(-1.5F), f32_bits(0x7FC00000u),
        f32_bits(0x80000000u), f32_bits(0x7F800000u)}},
      {ValueType::Bool, {Value::boolean(true), Value::boolean(false)}},
      {ValueType::String, {str("a"), str(""), str(std::string("x\0y", 3)), str("\xEF\xBB\xBF")}},
      {ValueType::Uint64, {Value::u64(0), Value::u64(kMax64)}},
      {ValueType::Int64, {Value::i64(std::numeric_limits<std::int64_t>::min()), Value::i64(1)}},
      {ValueType::Float64, {Value::f64(0.1), f64_bits(0x8000000000000000ull), f64_bits(1)}},
  };
  for (const auto& [type, items] : typed) {
    const std::string name(to_string(type));
    c.y("arr_empty_" + name, "an empty array of " + name,
        [type = type] { return value_file(Value::array(type, {})); });
    c.y("arr_of_" + name, "an array of " + name + " values, each read exactly",
        [type = type, items = items] { return value_file(Value::array(type, items)); });
  }
  c.add("arr_empty_array", A, R, "bad_array",
        "an empty array whose element type is array: the spec allows nested arrays; the reader "
        "rejects the element type",
        [] { return value_file(Value::array(ValueType::Array, {})); })
      .recommended = true;
  c.add("arr_nested_1", A, R, "bad_array",
        "an array of arrays of uint8 (nested one level): the spec allows it; the reader rejects "
        "nested arrays",
        [] {
          return value_file(Value::array(
              ValueType::Array, {Value::array(ValueType::Uint8, {Value::u8(1), Value::u8(2)}),
                                 Value::array(ValueType::Uint8, {})}));
        })
      .recommended = true;
  c.add("arr_nested_2", A, R, "bad_array", "arrays nested two levels deep, of strings", [] {
     return value_file(Value::array(
         ValueType::Array,
         {Value::array(ValueType::Array, {Value::array(ValueType::String, {str("deep")})})}));
   }).recommended = true;
  c.add("arr_nested_1000", E, R, "bad_array",
        "arrays nested 1000 deep: a parser may refuse the depth but must not overflow its stack",
        [] { return deeply_nested(1000); }, {"hostile"});
  for (const std::uint32_t type : {13u, 255u, 0xFFFFFFFFu}) {
    c.n("arr_element_type_" + std::string(type == 13    ? "13"
                                          : type == 255 ? "255"
                                                        : "max"),
        "bad_array", "an array element type outside 0..12 (" + std::to_string(type) + ")", [=] {
          return with_array_type(with_value(Value::array(ValueType::Uint8, {Value::u8(1)})), 1,
                                 type)
              .bytes;
        });
  }
  c.n("arr_count_past_eof", "truncated", "an array count larger than the elements present",
      [] { return array_count(ValueType::Uint8, Value::u8(1), 100); });
  c.n("arr_count_one_past_eof", "truncated", "an array count one more than the bytes left hold",
      [] { return array_count(ValueType::Uint8, Value::u8(1), 3); });
  c.n("arr_count_2p62", "truncated", "an array of 2^62 uint32 in a small file: do not allocate",
      [] { return array_count(ValueType::Uint32, Value::u32(1), kPow62); }, {"hostile"});
  c.n("arr_count_2p63", "truncated", "an array count of 2^63",
      [] { return array_count(ValueType::Uint8, Value::u8(1), kPow63); }, {"hostile"});
  c.n("arr_count_max", "truncated", "an array count of 2^64-1",
      [] { return array_count(ValueType::Uint8, Value::u8(1), kMax64); }, {"hostile"});
  c.n("limits_array_1gib_plus_1", "truncated",
      "an array count of 2^30+1 (over the reader's limit) in a small file",
      [] { return array_count(ValueType::Uint8, Value::u8(1), (std::uint64_t{1} << 30) + 1); },
      {"hostile"});
  c.y("limits_array_100000_uint8", "an array of 100000 uint8 elements", [] {
    return value_file(Value::array(ValueType::Uint8, std::vector<Value>(100000, Value::u8(7))));
  });
  // Past what @huggingface/gguf reads (ggufcheck's portability checks GGUF9508, GGUF9509).
  c.y("limits_array_1000001_uint8",
      "an array of 1000001 uint8 elements: valid (@huggingface/gguf refuses arrays over 10^6)",
      [] {
        return value_file(
            Value::array(ValueType::Uint8, std::vector<Value>(1'000'001, Value::u8(7))));
      },
      {"big"});
  c.y("limits_string_2500000_bytes",
      "a string value of 2500000 bytes, read whole (@huggingface/gguf cuts it at the end of its "
      "2000000-byte chunks)",
      [] { return value_file(str(std::string(2'500'000, 's'))); }, {"big"});
  c.n("arr_string_count_2p62", "truncated",
      "an array of 2^62 strings in a small file: do not allocate per element",
      [] { return array_count(ValueType::String, str("a"), kPow62); }, {"hostile"});
  c.n("arr_string_element_past_eof", "truncated",
      "a string element whose length runs past the end of the file",
      [] { return element_length(1000); });
  c.n("arr_string_element_length_2p63", "truncated", "a string element of length 2^63",
      [] { return element_length(kPow63); }, {"hostile"});
  c.n("arr_truncated_in_element_type", "truncated", "the file ends inside an array's element type",
      [] {
        const Written w = write(with_value(Value::array(ValueType::Uint8, {Value::u8(1)})));
        return prefix(w.bytes, w.layout.pairs[1].value_offset + 2);
      });
  c.n("arr_truncated_in_count", "truncated", "the file ends inside an array's count", [] {
    const Written w = write(with_value(Value::array(ValueType::Uint8, {Value::u8(1)})));
    return prefix(w.bytes, w.layout.pairs[1].value_offset + 4 + 3);
  });
  c.add("arr_bool_element_2", R, A, "bad_array",
        "a bool element byte of 2: the spec allows 0 and 1; the reader does not check",
        [] {
          return value_file(
              Value::array(ValueType::Bool, {Value::boolean(true), Value::bool_byte(2)}));
        })
      .recommended = true;
  c.add("arr_string_element_invalid_utf8", R, A, "bad_string",
        "a string element that is not UTF-8 (spec); the reader does not check", [] {
          return value_file(Value::array(ValueType::String, {str("ok"), str("\xC3\x28")}));
        });
}

void alignment_cases(Cases& c) {
  const auto aligned = [](std::optional<Value> alignment) {
    return [alignment = std::move(alignment)] {
      std::vector<KeyValue> pairs;
      if (alignment) pairs.push_back(pair("general.alignment", *alignment));
      WriteOptions o;
      if (alignment && alignment->type == ValueType::Uint32 && alignment->bits != 0) {
        o.alignment = static_cast<std::uint32_t>(alignment->bits);
      }
      Document doc = two_tensors(std::nullopt, std::nullopt, std::move(pairs));
      doc.tensors[0].dims = {5};  // 20 bytes, so padding shows
      return bytes_of(doc, o);
    };
  };
  c.y("align_absent", "no general.alignment: the alignment is 32", aligned(std::nullopt));
  for (const std::uint32_t a : {8u, 16u, 32u, 64u, 128u, 65536u}) {
    c.y("align_" + std::to_string(a),
        "general.alignment " + std::to_string(a) + ": a power of two and a multiple of 8",
        aligned(Value::u32(a)),
        a == 65536 ? std::vector<std::string>{"big"} : std::vector<std::string>{});
  }
  for (const std::uint32_t a : {24u, 40u, 48u}) {
    c.add("align_" + std::to_string(a), A, R, "bad_alignment",
          "general.alignment " + std::to_string(a) +
              ": a multiple of 8 as the spec requires, not a power of two as the reader requires",
          aligned(Value::u32(a)));
  }
  for (const std::uint32_t a : {1u, 2u, 4u}) {
    c.add("align_" + std::to_string(a), R, A, "bad_alignment",
          "general.alignment " + std::to_string(a) +
              ": a power of two as the reader requires, not a multiple of 8 as the spec requires",
          aligned(Value::u32(a)));
  }
  c.n("align_0", "bad_alignment", "general.alignment 0", aligned(Value::u32(0)));
  c.n("align_3", "bad_alignment", "general.alignment 3: neither a power of two nor a multiple of 8",
      aligned(Value::u32(3)));
  c.n("align_12", "bad_alignment", "general.alignment 12", aligned(Value::u32(12)));
  c.y("align_2p31_no_tensors",
      "general.alignment 2^31 in a file without tensors: valid, and no padding is needed",
      [] { return bytes_of(document({pair("general.alignment", Value::u32(0x80000000u))})); });
  c.n("align_2p31_with_tensor", "bad_layout",
      "general.alignment 2^31 with a tensor: the data section would start at 2^31, past the end",
      [] {
        Written w = write(one_tensor({8}, 0, {pair("general.alignment", Value::u32(64))}));
        patch(w.bytes, w.layout.pairs[1].value_offset, std::uint32_t{0x80000000u});
        return w.bytes;
      },
      {"hostile"});
  c.add("align_key_nul_suffix", R, A, "bad_key",
        "a key \"general.alignment\\0x\" = 64, the data 64-aligned: ggml compares keys as C "
        "strings and takes it for general.alignment; the spec reads another key (with a NUL, "
        "which it forbids) and alignment 32",
        [] {
          WriteOptions o;
          o.alignment = 64;
          Document doc =
              two_tensors(std::nullopt, std::nullopt,
                          {pair(std::string("general.alignment\0x", 19), Value::u32(64))});
          doc.tensors[0].dims = {5};  // 20 bytes, so padding shows
          return bytes_of(doc, o);
        });
  const std::vector<std::pair<std::string, Value>> wrong_types = {
      {"uint8", Value::u8(32)},    {"int8", Value::i8(32)},
      {"uint16", Value::u16(32)},  {"int16", Value::i16(32)},
      {"int32", Value::i32(32)},   {"uint64", Value::u64(32)},
      {"int64", Value::i64(32)},   {"float32", Value::f32(32)},
      {"float64", Value::f64(32)}, {"bool", Value::boolean(true)},
      {"string", str("32")},       {"array", Value::array(ValueType::Uint32, {Value::u32(32)})},
  };
  for (const auto& [name, value] : wrong_types) {
    c.n("align_type_" + name, "bad_alignment",
        "general.alignment must be a uint32; here it is " + name, aligned(value));
  }
}

void tensor_info_cases(Cases& c) {
  const auto named = [](std::string name) {
    return [name = std::move(name)] { return bytes_of(document({}, {tensor(name, {8})})); };
  };
  c.y("tinfo_name_0", "an empty tensor name (the spec is silent; the reader accepts it)",
      named(""));
  c.y("tinfo_name_63", "a 63-byte tensor name, the longest the reader accepts",
      named(std::string(63, 'n')));
  c.add("tinfo_name_64", A, R, "bad_tensor_info",
        "a 64-byte tensor name: the spec allows at most 64; the reader requires fewer than 64",
        named(std::string(64, 'n')));
  c.n("tinfo_name_65", "bad_tensor_info", "a 65-byte tensor name", named(std::string(65, 'n')));
  c.y("tinfo_name_utf8", "a tensor name with non-ASCII UTF-8", named("t\xC3\xA9nsor"));
  c.y("tinfo_name_bom_beside_plain",
      "tensors \\xef\\xbb\\xbfw (U+FEFF, w) and w: two names (a reader that strips the BOM "
      "sees w twice)",
      [] {
        return bytes_of(document({}, {tensor("\xEF\xBB\xBFw", {8}), tensor("w", {8})}));
      });
  c.n("tinfo_name_duplicate", "bad_tensor_info", "two tensors with the same name", [] {
    return bytes_of(document({}, {tensor("t", {8}), tensor("t", {8})}));
  });
  c.n("tinfo_name_duplicate_up_to_nul", "bad_tensor_info",
      "two tensor names equal up to a NUL byte, which collide as C strings in the reader", [] {
        return bytes_of(document(
            {}, {tensor(std::string("t\0a", 3), {8}), tensor(std::string("t\0b", 3), {8})}));
      });
  const std::vector<std::tuple<std::string, std::string, std::string>> bad_names = {
      {"nul_inside", std::string("to\0k", 4), "a NUL byte"},
      {"control_char", "to\x01k", "a control byte"},
      {"invalid_utf8", "to\xFFk", "a byte that is not UTF-8"},
  };
  for (const auto& [name, text, what] : bad_names) {
    c.add("tinfo_name_" + name, R, A, "bad_tensor_info",
          "a tensor name with " + what + ": invalid for the spec; the reader does not check",
          named(text));
  }
  c.n("tinfo_name_past_eof", "truncated", "a tensor name length larger than the bytes left",
      [] { return with_tensor_name_length(one_tensor({8}), 0, 100000).bytes; });
  c.n("tinfo_name_length_2p63", "truncated", "a tensor name length of 2^63",
      [] { return with_tensor_name_length(one_tensor({8}), 0, kPow63).bytes; }, {"hostile"});
  const std::vector<std::vector<std::uint64_t>> shapes = {{}, {8}, {4, 2}, {2, 2, 2}, {2, 2, 1, 2}};
  for (std::size_t n = 0; n < shapes.size(); ++n) {
    c.y("tinfo_ndims_" + std::to_string(n),
        std::to_string(n) + " dims" + (n == 0 ? " (a scalar: one element)" : ""),
        [dims = shapes[n]] { return bytes_of(one_tensor(dims)); });
  }
  for (std::uint32_t n = 5; n <= 9; ++n) {
    c.n("tinfo_ndims_" + std::to_string(n), "bad_tensor_info",
        std::to_string(n) + " dims: at most 4 are allowed",
        [=] { return bytes_of(one_tensor(std::vector<std::uint64_t>(n, 1))); });
  }
  c.n("tinfo_ndims_max", "bad_tensor_info", "n_dims 2^32-1 in a small file",
      [] { return with_n_dims(one_tensor({8}), 0, 0xFFFFFFFFu).bytes; }, {"hostile"});
  c.y("tinfo_dims_trailing_ones", "dims [8, 1, 1, 1]: exactly n_dims dims, trailing ones kept", [] {
    return bytes_of(one_tensor({8, 1, 1, 1}));
  });
  c.y("tinfo_dim_zero", "a dim of 0: an empty tensor (spec silent; the reader accepts it)",
      [] { return bytes_of(one_tensor({0})); });
  c.y("tinfo_dim_zero_in_ne1", "dims [4, 0]: an empty tensor", [] {
    return bytes_of(one_tensor({4, 0}));
  });
  c.n("tinfo_dim_2p63", "bad_tensor_info", "a dim of 2^63 (negative as the reader's int64)",
      [] { return hostile_dims({kPow63}); }, {"hostile"});
  c.n("tinfo_dim_max", "bad_tensor_info", "a dim of 2^64-1", [] { return hostile_dims({kMax64}); },
      {"hostile"});
  c.n("tinfo_elements_2p63", "bad_tensor_info", "dims [2^62, 2]: 2^63 elements",
      [] {
        return hostile_dims({kPow62, 2});
      },
      {"hostile"});
  c.n("tinfo_elements_wrap_to_zero", "bad_tensor_info",
      "dims [2^32, 2^32]: 2^64 elements, which wrap to 0 in 64 bits (the reference reader's known "
      "bug accepts it as empty)",
      [] {
        return hostile_dims({std::uint64_t{1} << 32, std::uint64_t{1} << 32});
      },
      {"hostile"});
  c.n("tinfo_elements_wrap_to_zero_4d", "bad_tensor_info",
      "dims [2^16, 2^16, 2^16, 2^16]: 2^64 elements, which wrap to 0",
      [] {
        return hostile_dims({65536, 65536, 65536, 65536});
      },
      {"hostile"});
  c.n("tinfo_byte_size_overflow", "bad_tensor_info",
      "an F32 tensor of 2^62 elements: 2^64 bytes overflow", [] { return hostile_dims({kPow62}); },
      {"hostile"});
  c.n("tinfo_quantized_byte_size_wraps", "bad_tensor_info",
      "a Q5_1 tensor of 2^62 + 256 elements with 192 bytes of data: ne[0] * type_size wraps "
      "(the reference reader's known bug accepts it)",
      [] {
        Tensor t = tensor("t", {kPow62 + 256}, 7);
        t.data = std::vector<std::uint8_t>(192, 0);
        return bytes_of(document({quantization_version()}, {t}));
      },
      {"hostile"});
  const Written w = write(one_tensor({8, 2}));
  const WrittenTensor t = w.layout.tensors[0];
  const std::vector<std::pair<std::string, std::uint64_t>> cuts = {
      {"name_length", t.name_offset + 3}, {"name", t.name_offset + 8},
      {"n_dims", t.n_dims_offset + 1},    {"dims", t.dims_offset + 12},
      {"type", t.type_offset + 2},        {"offset", t.offset_offset + 7},
  };
  for (const auto& [where, at] : cuts) {
    c.n("tinfo_truncated_in_" + where, "truncated",
        "the file ends inside a tensor info (" + where + ")",
        [bytes = w.bytes, at = at] { return prefix(bytes, at); });
  }
  c.n("tinfo_course_offset_before_type", "bad_layout",
      "the course chapter's tensor info order (offset before type): the order is type, then "
      "offset",
      [] {
        WriteOptions o;
        o.offset_before_type = true;
        return bytes_of(
            document({quantization_version()}, {tensor("a", {32}, 8), tensor("b", {32}, 8)}), o);
      });
}

void tensor_type_cases(Cases& c) {
  for (std::uint32_t id = 0; id < kTensorTypeCount; ++id) {
    const TensorTypeInfo* info = tensor_type(id);
    if (info == nullptr) continue;
    const std::string name = lower(info->name);
    if (info->removed()) {
      c.n("ttype_removed_" + std::to_string(id), "bad_tensor_info",
          "tensor type id " + std::to_string(id) + " was removed from ggml", [=] {
            Tensor t = tensor("t", {32}, id);
            t.data = std::vector<std::uint8_t>(32, 0);
            return bytes_of(document({quantization_version()}, {t}));
          });
      continue;
    }
    const std::uint64_t block = info->block_size;
    c.y("ttype_" + name,
        "a tensor of type " + std::string(info->name) + " (id " + std::to_string(id) + "), [" +
            std::to_string(block) + ", 2]: " + std::to_string(2 * info->type_size) + " bytes",
        [=] {
          std::vector<KeyValue> pairs;
          if (info->quantized()) pairs.push_back(quantization_version());
          return bytes_of(one_tensor({block, 2}, id, std::move(pairs)));
        });
    if (block > 1) {
      c.n("ttype_" + name + "_row_not_block_multiple", "bad_tensor_info",
          "ne[0] = " + std::to_string(block / 2) + " is not a multiple of " +
              std::string(info->name) + "'s block of " + std::to_string(block),
          [=] {
            Tensor t = tensor("t", {block / 2, 2}, id);
            t.data = std::vector<std::uint8_t>(info->type_size, 0);
            return bytes_of(document({quantization_version()}, {t}));
          });
    }
  }
  for (const std::uint32_t id : {kTensorTypeCount, 255u, 0x80000000u, 0xFFFFFFFFu}) {
    const std::string label = id == kTensorTypeCount ? std::to_string(id)
                              : id == 255            ? "255"
                              : id == 0x80000000u    ? "2p31"
                                                     : "max";
    c.n("ttype_unknown_" + label, "bad_tensor_info",
        "tensor type id " + std::to_string(id) + " is not a ggml type", [=] {
          Tensor t = tensor("t", {8}, id);
          t.data = std::vector<std::uint8_t>(32, 0);
          return bytes_of(document({}, {t}));
        });
  }
  c.y("ttype_mixed", "tensors of six types back to back, each padded", [] {
    return bytes_of(
        document({quantization_version()},
                 {tensor("f32", {3}, 0), tensor("f16", {5}, 1), tensor("q4_0", {64}, 2),
                  tensor("q6_k", {256}, 14), tensor("i8", {7}, 24), tensor("bf16", {9}, 30)}));
  });
}

void layout_cases(Cases& c) {
  const auto with_trailing = [](Document doc, std::size_t extra) {
    WriteOptions o;
    o.trailing.assign(extra, 0);
    return bytes_of(doc, o);
  };
  c.y("layout_contiguous", "two tensors back to back at offsets 0 and 32",
      [] { return bytes_of(two_tensors()); });
  c.y("layout_padded_between", "a 20-byte tensor padded to 32 before the next one", [] {
    Document doc = two_tensors();
    doc.tensors[0].dims = {5};
    return bytes_of(doc);
  });
  c.y("layout_empty_tensor_between", "an empty tensor between two others takes no space", [] {
    return bytes_of(document({}, {tensor("a", {8}), tensor("z", {0}), tensor("b", {8})}));
  });
  c.n("layout_offset_misaligned", "bad_layout",
      "tensor b at offset 40: not a multiple of the alignment (32)",
      [=] { return with_trailing(two_tensors(std::nullopt, 40), 32); });
  c.add("layout_gap", A, R, "bad_layout",
        "tensor b at offset 64, leaving an aligned gap: valid for the spec; the reader requires "
        "each offset to be the running sum of padded sizes",
        [=] { return with_trailing(two_tensors(std::nullopt, 64), 32); });
  c.add("layout_out_of_order", A, R, "bad_layout",
        "tensor a at offset 32 and b at 0: valid for the spec; the reader requires file order",
        [] { return bytes_of(two_tensors(32, 0)); });
  c.n("layout_overlap", "bad_layout", "tensors a and b both at offset 0",
      [] { return bytes_of(two_tensors(0, 0)); });
  c.n("layout_overlap_partial", "bad_layout", "tensor a of 64 bytes at 0 and b at 32, inside it",
      [] {
        Document doc = two_tensors(0, 32);
        doc.tensors[0].dims = {16};
        return bytes_of(doc);
      });
  c.n("layout_past_eof", "bad_layout", "tensor b at offset 1024, past the end of the file",
      [] { return bytes_of(two_tensors(std::nullopt, 1024)); });
  c.n("layout_data_short_by_one", "bad_layout",
      "the file ends one byte before the end of the last tensor's data", [] {
        WriteOptions o;
        o.pad_after_last_tensor = false;
        ByteVector b = bytes_of(two_tensors(), o);
        b.pop_back();
        return b;
      });
  c.y("layout_no_final_padding",
      "the last tensor (20 bytes) is not padded: the file ends where its data ends", [] {
        WriteOptions o;
        o.pad_after_last_tensor = false;
        return bytes_of(one_tensor({5}), o);
      });
  c.add("layout_padding_nonzero", R, A, "bad_layout",
        "the padding before the data section is 0xAA, not 0x00 as the spec says; no reader "
        "checks it",
        [] {
          WriteOptions o;
          o.padding_byte = 0xAA;
          o.pad_after_last_tensor = false;
          Document doc = one_tensor({8});
          return bytes_of(doc, o);
        })
      .recommended = true;
  c.add("layout_padding_nonzero_between_tensors", R, A, "bad_layout",
        "the padding after a 20-byte tensor is 0xAA",
        [] {
          Document doc = two_tensors();
          doc.tensors[0].dims = {5};
          Written w = write(doc);
          for (std::uint64_t i = w.layout.tensors[0].data_position + 20;
               i < w.layout.tensors[1].data_position; ++i) {
            w.bytes[i] = 0xAA;
          }
          return w.bytes;
        })
      .recommended = true;
  c.y("layout_trailing_bytes", "16 bytes after the end of the data section (no rule forbids them)",
      [=] { return with_trailing(two_tensors(), 16); });
  c.y("layout_trailing_bytes_no_tensors", "bytes after the metadata of a file without tensors",
      [=] { return with_trailing(minimal_document(), 16); });
  c.n("layout_truncated_before_data", "truncated",
      "the file ends inside the padding before the data section", [] {
        const Written w = write(one_tensor({8}));
        return prefix(w.bytes, w.layout.data_start - 1);
      });
  c.y("layout_no_tensors_unpadded", "no tensors and no padding after the metadata (gguf-py)",
      [] { return bytes_of(document({pair("general.name", str("x"))})); });
  c.y("layout_no_tensors_padded", "no tensors, padded to the alignment (ggml's C writer)", [] {
    WriteOptions o;
    o.pad_when_no_tensors = true;
    return bytes_of(document({pair("general.name", str("x"))}), o);
  });
  c.n("layout_offset_2p63", "bad_layout", "a tensor offset of 2^63",
      [] { return bytes_of(two_tensors(std::nullopt, kPow63)); }, {"hostile"});
  c.n("layout_offset_wraps", "bad_layout",
      "a tensor offset of 2^64-32: offset + size wraps around 64 bits",
      [] { return bytes_of(two_tensors(std::nullopt, kMax64 - 31)); }, {"hostile"});
}

void tensor_data_cases(Cases& c) {
  const auto data = [](std::string name, std::vector<std::uint64_t> dims, std::uint32_t type,
                       std::size_t size, std::uint8_t seed) {
    Tensor t = tensor(std::move(name), std::move(dims), type);
    t.data = std::vector<std::uint8_t>(size);
    for (std::size_t i = 0; i < size; ++i) {
      t.data->at(i) = static_cast<std::uint8_t>(seed + i * 37);
    }
    return t;
  };
  c.y("tdata_f32", "an F32 tensor with non-zero data (level 3 hashes it)",
      [=] { return bytes_of(document({}, {data("t", {16}, 0, 64, 1)})); });
  c.y("tdata_f16_2d", "a [4, 3] F16 tensor with data", [=] {
    return bytes_of(document({}, {data("t", {4, 3}, 1, 24, 2)}));
  });
  c.y("tdata_q8_0", "two Q8_0 blocks with data",
      [=] { return bytes_of(document({quantization_version()}, {data("t", {64}, 8, 68, 3)})); });
  c.y("tdata_many", "five tensors of different types and sizes, each with its own data", [=] {
    return bytes_of(
        document({quantization_version()},
                 {data("a", {3}, 0, 12, 4), data("b", {32}, 2, 18, 5), data("c", {1}, 27, 8, 6),
                  data("d", {256}, 12, 144, 7), data("e", {5, 2}, 30, 20, 8)}));
  });
  c.y("tdata_alignment_64", "data placed at a 64-byte alignment", [=] {
    WriteOptions o;
    o.alignment = 64;
    return bytes_of(document({pair("general.alignment", Value::u32(64))},
                             {data("a", {5}, 0, 20, 9), data("b", {5}, 0, 20, 10)}),
                    o);
  });
}

// Data cases: files that both profiles accept as containers, each with a third verdict, that of
// llama.cpp's tensor data check (ggml_validate_row_data on each tensor's bytes, what
// --check-tensors runs). Every type id that is not removed gets a valid case; every type with a
// checked field gets a case with a NaN or an infinity in that field (both fields of the two-scale
// types), written through the test kit's block tables (testkit/data_cases.hpp). Each file holds
// two tensors of the type, 3 blocks each (16 elements for the plain types); the value goes into
// the second tensor, in a block after the first, so that a checker must scan past the start and
// name the right tensor.
void data_cases(Cases& c) {
  namespace data = testing::data;
  constexpr const char* kFirst = "blk.0.attn_q.weight";
  constexpr const char* kSecond = "blk.0.attn_k.weight";
  struct Bad {
    std::string what;   // the id's suffix
    std::string field;  // the layout's field name
    std::uint64_t bits;
    std::string value;  // for the rule
  };
  constexpr std::uint64_t kF16Nan = 0x7E00, kF16Inf = 0x7C00;
  const auto bad_values = [&](std::uint32_t type) -> std::vector<Bad> {
    switch (type) {
      case 0: return {{"nan", "element", 0x7FC00000, "an f32 NaN (0x7fc00000)"}};
      case 1: return {{"nan", "element", kF16Nan, "an f16 NaN (0x7e00)"}};
      case 28:
        return {{"inf", "element", 0x7FF0000000000000, "an f64 infinity"},
                {"beyond_float", "element", 0x7E37E43C8800759C,
                 "a finite f64 1e300 (0x7e37e43c8800759c), beyond float's range: ggml checks f64 "
                 "through a float, where it is an infinity"}};
      case 30: return {{"inf", "element", 0x7F80, "a bf16 infinity (0x7f80)"}};
      case 3:
      case 7:
        return {{"inf_d", "d", kF16Inf, "d = f16 infinity (0x7c00), m finite"},
                {"nan_m", "m", kF16Nan, "m = f16 NaN (0x7e00), d finite"}};
      case 10:
      case 12:
      case 13:
        return {{"inf_d", "d", kF16Inf, "d = f16 infinity (0x7c00), dmin finite"},
                {"nan_dmin", "dmin", kF16Nan, "dmin = f16 NaN (0x7e00), d finite"}};
      case 11:
      case 14:
      case 34:
      case 35: return {{"inf_d", "d", kF16Inf, "d, at the end of the block, = f16 infinity"}};
      case 15: return {{"nan_d", "d", 0x7FC00000, "the f32 d = NaN (0x7fc00000)"}};
      case 29:
        return {{"nan_scale", "scale", kF16Nan,
                 "the f16 scale kept in the top nibbles of scales[] = NaN (0x7e00)"}};
      case 39: return {{"e_0xff", "e", 0xFF, "e = 0xFF, E8M0's NaN code"}};
      case 24:  // integers: nothing is checked
      case 25:
      case 26:
      case 27:
      case 9:   // q8_1: refused whatever the bytes
      case 40:  // nvfp4: nothing is checked (its 0x7F case is below)
        return {};
      default: return {{"nan_d", "d", kF16Nan, "d = f16 NaN (0x7e00)"}};
    }
  };
  const auto field_index = [](const data::BlockLayout& layout, std::string_view name) {
    for (std::uint32_t i = 0; i < layout.fields.size(); ++i) {
      if (layout.fields[i].name == name) return i;
    }
    throw std::logic_error("no field " + std::string(name) + " in " + std::string(layout.name));
  };
  for (const std::uint32_t type : data::data_types()) {
    const data::BlockLayout& layout = data::layout(type);
    const TensorTypeInfo* info = tensor_type(type);
    const std::string name = lower(layout.name);
    const std::string type_name(info->name);
    const bool integer = type >= 24 && type <= 27;
    const std::uint64_t blocks = layout.plain_float() || integer ? 16 : 3;
    const std::uint64_t bad_block = layout.plain_float() || integer ? 9 : 1;
    const std::uint64_t elements = blocks * info->block_size;
    const std::string shape =
        std::to_string(blocks) + (info->block_size == 1
                                      ? " elements"
                                      : " blocks (" + std::to_string(elements) + " elements)");
    // Both tensors' bytes from fixed seeds: the files are the same on every run.
    const auto file = [=](std::vector<data::Plant> second_plants, std::vector<data::Plant> both) {
      std::vector<Tensor> tensors;
      for (const auto& [tensor_name, index] :
           {std::pair{kFirst, std::uint64_t{0}}, std::pair{kSecond, std::uint64_t{1}}}) {
        data::TensorSpec spec;
        spec.type = type;
        spec.blocks = blocks;
        spec.plants = both;
        if (index == 1)
          spec.plants.insert(spec.plants.end(), second_plants.begin(), second_plants.end());
        Tensor t = tensor(tensor_name, {elements}, type);
        t.data = data::tensor_bytes(spec, 0xDA7A0000u + type * 2 + index);
        tensors.push_back(std::move(t));
      }
      std::vector<KeyValue> pairs;
      if (info->quantized()) pairs.push_back(quantization_version());
      return bytes_of(document(std::move(pairs), std::move(tensors)));
    };
    const std::string container = "two " + type_name + " tensors of " + shape +
                                  " each, a valid file in both profiles; the data verdict is "
                                  "llama.cpp's tensor data check's";
    const auto add = [&](const std::string& what, std::function<ByteVector()> build,
                         DataExpectation expectation) {
      Case& added = c.y("data_" + name + "_" + what, container, std::move(build));
      if ((expectation.verdict == R) != !expectation.error_class.empty() ||
          (expectation.verdict == R) == expectation.tensor.empty() || expectation.verdict == E) {
        throw std::logic_error(added.id + ": a data reject names its tensor and error class");
      }
      if (expectation.verdict == R && !is_data_error_class(expectation.error_class)) {
        throw std::logic_error(added.id + ": unknown data error class " + expectation.error_class);
      }
      added.data = std::move(expectation);
    };

    if (type == 9) {
      add("refused", [=] { return file({}, {}); },
          {R, kFirst,
           "ggml_validate_row_data has no case for q8_1 and fails with \"invalid type 9\" "
           "whatever the bytes: the first tensor fails, with finite d and s",
           "refused_type"});
      continue;
    }
    if (integer) {
      // A float NaN's bit pattern in an integer element is just a number.
      const std::uint64_t nan_bits = type == 24   ? 0xFF
                                     : type == 25 ? kF16Nan
                                     : type == 26 ? 0x7FC00000
                                                  : 0x7FF8000000000000;
      add("valid",
          [=] {
            return file({}, {{bad_block, 0, nan_bits, 0, layout.block_bytes}});
          },
          {A, "",
           type_name + " elements are not checked: random values, element " +
               std::to_string(bad_block) +
               " of each tensor holding a float NaN's bit pattern, pass",
           ""});
      continue;
    }
    std::string checked;  // what the check inspects in a block, in its order
    if (type == 40) {
      checked = "nothing (every UE4M3 scale byte passes)";
    } else if (layout.plain_float()) {
      checked = "every element";
    } else {
      for (const std::uint32_t f : layout.checked_fields()) {
        if (!checked.empty()) checked += ", then ";
        checked += std::string(layout.fields[f].name);
      }
    }
    add("valid", [=] { return file({}, {}); },
        {A, "",
         "the check inspects " + checked + " of " + type_name +
             " blocks: random data with every checked value finite passes",
         ""});
    if (type == 40) {
      const std::uint32_t d1 = field_index(layout, "d1");
      add("scale_0x7f",
          [=] {
            return file({{bad_block, d1, 0x7F, 0, 0}}, {});
          },
          {A, "",
           "nvfp4 scale d1 of block " + std::to_string(bad_block) + " of " + kSecond +
               " is 0x7F, UE4M3's NaN code: ggml_validate_row_data checks no nvfp4 byte and "
               "passes it",
           ""});
      continue;
    }
    for (const Bad& bad : bad_values(type)) {
      const std::uint32_t field = field_index(layout, bad.field);
      const std::string where = layout.plain_float() ? "element " + std::to_string(bad_block)
                                                     : "block " + std::to_string(bad_block);
      add(bad.what,
          [=] {
            return file({{bad_block, field, bad.bits, 0, 0}}, {});
          },
          {R, kSecond,
           where + " of " + kSecond + " has " + bad.value + ": the check requires " + checked +
               " to be finite" + (type == 39 ? " (e not 0xFF)" : "") + " and fails there",
           "non_finite"});
    }
  }
}

void endian_cases(Cases& c) {
  const auto big = [](Document doc) {
    doc.endian = Endian::Big;
    return bytes_of(doc);
  };
  const std::string rule =
      ": a big-endian file (every number after the magic big-endian) is valid for the spec since "
      "v3; the reader refuses byte-swapped files";
  c.add("endian_big_minimal", A, R, "bad_version", "the minimal file" + rule,
        [=] { return big(minimal_document()); });
  c.add("endian_big_values", A, R, "bad_version", "a value of every scalar type" + rule, [=] {
    return big(document({pair("test.u16", Value::u16(0x0102)), pair("test.i32", Value::i32(-2)),
                         pair("test.f32", Value::f32(1.5F)), pair("test.u64", Value::u64(258)),
                         pair("test.f64", Value::f64(-0.25)), pair("test.s", str("big")),
                         pair("test.a", Value::array(ValueType::Uint32,
                                                     {Value::u32(1), Value::u32(0x01020304u)}))}));
  });
  c.add("endian_big_tensors", A, R, "bad_version", "two tensors" + rule,
        [=] { return big(two_tensors()); });
  c.add("endian_big_version_2", A, R, "bad_version", "a version 2 file" + rule, [=] {
    Document doc = minimal_document();
    doc.version = 2;
    return big(doc);
  });
  c.n("endian_big_truncated", "truncated", "a big-endian file cut inside its metadata", [=] {
    const ByteVector b = big(minimal_document());
    return prefix(b, b.size() - 2);
  });
}

// ---------------------------------------------------------------------------------------------
// Model cases (areas "model" and "split"): valid containers in both profiles, each with a fourth
// verdict, that of llama.cpp's model loader (llama_model_load_from_file with no_alloc, vocab_only
// for a file without tensors), declared from the loader's source: src/llama-model-loader.cpp
// (keys, tensors, split sets), src/llama-model.cpp and src/models/ (the hyperparameters and
// tensors of each architecture), src/llama-vocab.cpp (the vocabulary). The documents are written
// here by hand, not learned from libllama: the cases are the same on a machine without it.

KeyValue u32_pair(std::string key, std::uint32_t value) {
  return pair(std::move(key), Value::u32(value));
}

Value string_list(const std::vector<std::string>& items) {
  std::vector<Value> values;
  for (const std::string& s : items) values.push_back(str(s));
  return Value::array(ValueType::String, std::move(values));
}

KeyValue* find_key(Document& doc, std::string_view key) {
  for (KeyValue& kv : doc.metadata) {
    if (kv.key == key) return &kv;
  }
  throw std::logic_error("no key " + std::string(key) + " in the model document");
}

Tensor* find_tensor_named(Document& doc, std::string_view name) {
  for (Tensor& t : doc.tensors) {
    if (t.name == name) return &t;
  }
  throw std::logic_error("no tensor " + std::string(name) + " in the model document");
}

void drop_key(Document& doc, std::string_view key) {
  std::erase_if(doc.metadata, [&](const KeyValue& kv) { return kv.key == key; });
}

void drop_tensor(Document& doc, std::string_view name) {
  std::erase_if(doc.tensors, [&](const Tensor& t) { return t.name == name; });
}

// The sizes of the tiny models: n_embd 8, 2 heads (head size 4), 1 KV head, n_ff 16, F16 matrices
// and F32 norms, so that a model is a few KB.
constexpr std::uint64_t kEmbd = 8;
constexpr std::uint64_t kFf = 16;
constexpr std::uint64_t kKv = 4;  // n_embd_k_gqa = head size * head_count_kv
constexpr std::uint32_t kTF32 = 0;
constexpr std::uint32_t kTF16 = 1;

// A SentencePiece vocabulary (tokenizer.ggml.model "llama"), as model_document() has it.
struct SpmVocab {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "a"};
  std::vector<float> scores = {0, 0, 0, -1};
  std::vector<std::int32_t> types = {2, 3, 3, 1};
};

void add_spm_vocab(Document& doc, const SpmVocab& vocab) {
  std::vector<Value> scores;
  for (const float f : vocab.scores) scores.push_back(Value::f32(f));
  std::vector<Value> types;
  for (const std::int32_t t : vocab.types) types.push_back(Value::i32(t));
  doc.metadata.push_back(pair("tokenizer.ggml.model", str("llama")));
  doc.metadata.push_back(pair("tokenizer.ggml.tokens", string_list(vocab.tokens)));
  doc.metadata.push_back(
      pair("tokenizer.ggml.scores", Value::array(ValueType::Float32, std::move(scores))));
  doc.metadata.push_back(
      pair("tokenizer.ggml.token_type", Value::array(ValueType::Int32, std::move(types))));
  doc.metadata.push_back(u32_pair("tokenizer.ggml.bos_token_id", 1));
  doc.metadata.push_back(u32_pair("tokenizer.ggml.eos_token_id", 2));
}

// A byte-level BPE vocabulary (tokenizer.ggml.model "gpt2": GPT-2's byte alphabet, "Ġ" a space,
// "Ċ" a newline) with its merges, and the pre-tokenizer named `pre`.
void add_gpt2_vocab(Document& doc, const std::string& pre) {
  const std::vector<std::string> tokens = {"<|endoftext|>", "\xC4\x8A", "\xC4\xA0", "a", "b", "ab"};
  std::vector<Value> types;
  for (std::size_t i = 0; i < tokens.size(); ++i) types.push_back(Value::i32(i == 0 ? 3 : 1));
  doc.metadata.push_back(pair("tokenizer.ggml.model", str("gpt2")));
  doc.metadata.push_back(pair("tokenizer.ggml.pre", str(pre)));
  doc.metadata.push_back(pair("tokenizer.ggml.tokens", string_list(tokens)));
  doc.metadata.push_back(
      pair("tokenizer.ggml.token_type", Value::array(ValueType::Int32, std::move(types))));
  doc.metadata.push_back(pair("tokenizer.ggml.merges", string_list({"a b"})));
  doc.metadata.push_back(u32_pair("tokenizer.ggml.bos_token_id", 0));
  doc.metadata.push_back(u32_pair("tokenizer.ggml.eos_token_id", 0));
}

std::uint64_t vocab_size(const Document& doc) {
  for (const KeyValue& kv : doc.metadata) {
    if (kv.key == "tokenizer.ggml.tokens") return kv.value.items.size();
  }
  throw std::logic_error("no tokenizer.ggml.tokens");
}

// The hyperparameters every tiny model has, under "<arch>.".
void add_hparams(Document& doc, const std::string& arch, std::uint32_t layers) {
  doc.metadata.push_back(pair("general.architecture", str(arch)));
  doc.metadata.push_back(pair("general.name", str("tiny " + arch)));
  doc.metadata.push_back(u32_pair(arch + ".context_length", 128));
  doc.metadata.push_back(u32_pair(arch + ".embedding_length", kEmbd));
  doc.metadata.push_back(u32_pair(arch + ".block_count", layers));
  doc.metadata.push_back(u32_pair(arch + ".feed_forward_length", kFf));
  doc.metadata.push_back(u32_pair(arch + ".attention.head_count", 2));
  doc.metadata.push_back(u32_pair(arch + ".attention.head_count_kv", 1));
  doc.metadata.push_back(pair(arch + ".attention.layer_norm_rms_epsilon", Value::f32(1e-5F)));
}

// The tensors llama.cpp's llama and qwen2 loaders ask for (src/models/llama.cpp, qwen2.cpp):
// token_embd [n_embd, n_vocab], output_norm [n_embd] (no output.weight: token_embd is reused),
// and per block attn_norm, attn_q [n_embd, n_embd], attn_k and attn_v [n_embd, n_embd_gqa],
// attn_output, ffn_norm and the feed-forward: ffn_gate, ffn_up [n_embd, n_ff], ffn_down [n_ff,
// n_embd], or for a mixture of experts ffn_gate_inp [n_embd, n_expert] and ffn_gate_exps,
// ffn_up_exps [n_embd, n_ff, n_expert], ffn_down_exps [n_ff, n_embd, n_expert].
void add_tensors(Document& doc, std::uint32_t layers, std::uint64_t experts = 0) {
  doc.tensors.push_back(tensor("token_embd.weight", {kEmbd, vocab_size(doc)}, kTF16));
  doc.tensors.push_back(tensor("output_norm.weight", {kEmbd}, kTF32));
  for (std::uint32_t i = 0; i < layers; ++i) {
    const std::string blk = "blk." + std::to_string(i) + ".";
    doc.tensors.push_back(tensor(blk + "attn_norm.weight", {kEmbd}, kTF32));
    doc.tensors.push_back(tensor(blk + "attn_q.weight", {kEmbd, kEmbd}, kTF16));
    doc.tensors.push_back(tensor(blk + "attn_k.weight", {kEmbd, kKv}, kTF16));
    doc.tensors.push_back(tensor(blk + "attn_v.weight", {kEmbd, kKv}, kTF16));
    doc.tensors.push_back(tensor(blk + "attn_output.weight", {kEmbd, kEmbd}, kTF16));
    doc.tensors.push_back(tensor(blk + "ffn_norm.weight", {kEmbd}, kTF32));
    if (experts == 0) {
      doc.tensors.push_back(tensor(blk + "ffn_gate.weight", {kEmbd, kFf}, kTF16));
      doc.tensors.push_back(tensor(blk + "ffn_up.weight", {kEmbd, kFf}, kTF16));
      doc.tensors.push_back(tensor(blk + "ffn_down.weight", {kFf, kEmbd}, kTF16));
    } else {
      doc.tensors.push_back(tensor(blk + "ffn_gate_inp.weight", {kEmbd, experts}, kTF32));
      doc.tensors.push_back(tensor(blk + "ffn_gate_exps.weight", {kEmbd, kFf, experts}, kTF16));
      doc.tensors.push_back(tensor(blk + "ffn_up_exps.weight", {kEmbd, kFf, experts}, kTF16));
      doc.tensors.push_back(tensor(blk + "ffn_down_exps.weight", {kFf, kEmbd, experts}, kTF16));
    }
  }
}

// A tiny llama of 2 blocks with the SentencePiece vocabulary: the base of the fault cases.
Document tiny_llama(const SpmVocab& vocab = {}, bool tensors = true) {
  Document doc;
  add_hparams(doc, "llama", 2);
  add_spm_vocab(doc, vocab);
  if (tensors) add_tensors(doc, 2);
  return doc;
}

// The same with 4 experts, 2 used per token (llama.expert_count, llama.expert_used_count).
Document tiny_llama_moe() {
  Document doc;
  add_hparams(doc, "llama", 2);
  doc.metadata.push_back(u32_pair("llama.expert_count", 4));
  doc.metadata.push_back(u32_pair("llama.expert_used_count", 2));
  add_spm_vocab(doc, {});
  add_tensors(doc, 2, 4);
  return doc;
}

// A tiny qwen2 (the llama tensors; its attention biases are optional) with the BPE vocabulary
// and the pre-tokenizer `pre`.
Document tiny_qwen2(const std::string& pre = "qwen2") {
  Document doc;
  add_hparams(doc, "qwen2", 2);
  add_gpt2_vocab(doc, pre);
  add_tensors(doc, 2);
  return doc;
}

const std::string kContainer =
    ": a valid container in both profiles; the model verdict is llama.cpp's model loader's";

// A spec-profile fault of a model case (a standard key's type or length that the spec
// profile rejects, docs/format.md section 7): the case is i_, the llama.cpp profile accepts it.
struct SpecFault {
  std::string error_class;
  std::string rule;
};

Case& model_case(Cases& c, const std::string& area_what, const std::string& what,
                 std::function<ByteVector()> build, ModelExpectation expectation,
                 const std::optional<SpecFault>& spec = std::nullopt) {
  Case& added =
      spec ? c.add(area_what, R, A, spec->error_class,
                   what + ": " + spec->rule +
                       "; the llama.cpp profile accepts the container; the model verdict is "
                       "llama.cpp's model loader's",
                   std::move(build))
           : c.y(area_what, what + kContainer, std::move(build));
  if (spec) added.recommended = true;
  if (expectation.verdict == E || (expectation.verdict == R) == expectation.error_class.empty()) {
    throw std::logic_error(added.id + ": a model verdict is accept, or reject with a class");
  }
  if (expectation.verdict == R && !is_model_error_class(expectation.error_class)) {
    throw std::logic_error(added.id + ": unknown model error class " + expectation.error_class);
  }
  added.model = std::move(expectation);
  return added;
}

void model_cases(Cases& c) {
  const auto file = [](std::function<Document()> make) { return [=] { return bytes_of(make()); }; };
  // Valid models.
  model_case(c, "model_llama",
             "a tiny llama: 2 blocks, n_embd 8, a 4-token SentencePiece vocabulary",
             file([] { return tiny_llama(); }),
             {A,
              "every key the llama loader reads is there with its type, and every tensor it "
              "asks for with its shape; nothing more",
              ""});
  model_case(c, "model_llama_testkit",
             "the test kit's model_document(): a llama of 1 block, n_embd 64, Q8_0 matrices",
             file([] { return testing::model_document(); }),
             {A, "the loader finds every key and tensor it asks for", ""});
  model_case(c, "model_llama_moe",
             "a tiny llama with 4 experts, 2 used per token: ffn_gate_inp and the *_exps tensors "
             "instead of the feed-forward",
             file([] { return tiny_llama_moe(); }),
             {A,
              "with llama.expert_count > 0 the llama loader asks for ffn_gate_inp [n_embd, "
              "n_expert] and ffn_{gate,up}_exps [n_embd, n_ff, n_expert], ffn_down_exps [n_ff, "
              "n_embd, n_expert]",
              ""});
  model_case(
      c, "model_qwen2",
      "a tiny qwen2 with a 6-token byte-level BPE vocabulary (pre-tokenizer qwen2) and its "
      "merges",
      file([] { return tiny_qwen2(); }),
      {A, "the qwen2 loader asks for the llama tensors (its q/k/v biases are optional)", ""});
  model_case(c, "model_vocab_only",
             "the tiny llama's keys and vocabulary without a tensor, as llama.cpp's "
             "ggml-vocab-*.gguf files are",
             file([] { return tiny_llama({}, false); }),
             {A,
              "a file without tensors is loaded with vocab_only: the loader reads the "
              "architecture and the vocabulary, and no tensor",
              ""});
  model_case(c, "model_vocab_only_duplicate_token",
             "the vocabulary-only file with token 3 \"a\" repeated as token 4", file([] {
               return tiny_llama(
                   {{"<unk>", "<s>", "</s>", "a", "a"}, {0, 0, 0, -1, -2}, {2, 3, 3, 1, 1}}, false);
             }),
             {R,
              "llama_vocab maps each token's text to its id: two tokens of one text leave the "
              "map smaller than the list, and GGML_ASSERT(id_to_token.size() == "
              "token_to_id.size()) aborts",
              "dup_token"});

  // One fault each in the tiny llama (or qwen2, for the BPE vocabulary).
  const auto faulty = [&](const std::string& what, const std::string& description,
                          std::function<void(Document&)> edit, ModelExpectation expectation,
                          bool qwen2 = false, std::optional<SpecFault> spec = std::nullopt) {
    model_case(
        c, "model_" + what, description,
        [=] {
          Document doc = qwen2 ? tiny_qwen2() : tiny_llama();
          edit(doc);
          return bytes_of(doc);
        },
        std::move(expectation), spec);
  };
  const SpecFault scores_type{"bad_type", "tokenizer.ggml.scores is a FLOAT32 array for the spec"};
  const auto length = [](const char* key) {
    return SpecFault{"bad_array", std::string(key) + " must have one entry per token for the spec"};
  };
  faulty("arch_unknown", "the tiny llama with general.architecture \"tinyllama\"",
         [](Document& d) { find_key(d, "general.architecture")->value = str("tinyllama"); },
         {R, "llm_arch_from_string knows no \"tinyllama\": \"unknown model architecture\"",
          "unknown_arch"});
  faulty("hparam_missing", "the tiny llama without llama.embedding_length",
         [](Document& d) { drop_key(d, "llama.embedding_length"); },
         {R, "load_hparams reads llama.embedding_length as required: \"key not found in model\"",
          "missing_key"});
  faulty("block_count_u64", "the tiny llama with llama.block_count stored as a u64 (2)",
         [](Document& d) { find_key(d, "llama.block_count")->value = Value::u64(2); },
         {R,
          "get_key into a uint32_t checks the stored type: \"key llama.block_count has wrong "
          "type u64 but expected type u32\"",
          "key_type"});
  faulty("block_count_zero", "the tiny llama with llama.block_count 0",
         [](Document& d) { find_key(d, "llama.block_count")->value = Value::u32(0); },
         {R, "GGML_ASSERT(hparams.n_layer_all > 0 && ...) in load_hparams aborts the load",
          "bad_value"});
  faulty("layer_array_short",
         "the tiny llama (2 blocks) with llama.feed_forward_length an array of one u32 [16]",
         [](Document& d) {
           find_key(d, "llama.feed_forward_length")->value =
               Value::array(ValueType::Uint32, {Value::u32(kFf)});
         },
         {R,
          "get_key_or_arr takes a per-layer array only of block_count elements: \"key "
          "llama.feed_forward_length has wrong array length; expected 2, got 1\"",
          "bad_value"});
  faulty("layer_array_full",
         "the tiny llama (2 blocks) with llama.feed_forward_length an array of two u32 [16, 16]",
         [](Document& d) {
           find_key(d, "llama.feed_forward_length")->value =
               Value::array(ValueType::Uint32, {Value::u32(kFf), Value::u32(kFf)});
         },
         {A, "get_key_or_arr takes a per-layer array of block_count elements", ""});
  faulty("tensor_missing", "the tiny llama without blk.0.attn_q.weight",
         [](Document& d) { drop_tensor(d, "blk.0.attn_q.weight"); },
         {R,
          "create_tensor of a required tensor that is not in the file: \"check_tensor_dims: "
          "tensor 'blk.0.attn_q.weight' not found\"",
          "missing_tensor"});
  faulty("tensor_shape", "the tiny llama with blk.0.ffn_down.weight [8, 16], transposed",
         [](Document& d) {
           find_tensor_named(d, "blk.0.ffn_down.weight")->dims = {kEmbd, kFf};
         },
         {R,
          "check_tensor_dims: \"tensor 'blk.0.ffn_down.weight' has wrong shape; expected 16, "
          "8, got 8, 16\"",
          "tensor_shape"});
  faulty("tensor_extra", "the tiny llama with one more tensor, blk.0.extra.weight [8]",
         [](Document& d) { d.tensors.push_back(tensor("blk.0.extra.weight", {kEmbd}, kTF32)); },
         {R,
          "done_getting_tensors: every tensor of the file must have been asked for: \"wrong "
          "number of tensors; expected 21, got 20\"",
          "extra_tensor"});
  faulty(
      "vocab_model_unknown", "the tiny llama with tokenizer.ggml.model \"wordpiece2\"",
      [](Document& d) { find_key(d, "tokenizer.ggml.model")->value = str("wordpiece2"); },
      {R, "load_vocab knows no such tokenizer: \"unknown tokenizer: 'wordpiece2'\"", "bad_vocab"});
  faulty(
      "vocab_pre_unknown", "the tiny qwen2 with tokenizer.ggml.pre \"qwen9\"",
      [](Document& d) { find_key(d, "tokenizer.ggml.pre")->value = str("qwen9"); },
      {R,
       "a BPE vocabulary's pre-tokenizer must be one load_vocab knows: \"unknown "
       "pre-tokenizer type: 'qwen9'\"",
       "bad_vocab"},
      true);
  faulty(
      "vocab_merges_missing", "the tiny qwen2 (a gpt2 vocabulary) without tokenizer.ggml.merges",
      [](Document& d) { drop_key(d, "tokenizer.ggml.merges"); },
      {R, "a gpt2 vocabulary needs its merges: \"cannot find tokenizer merges in model file\"",
       "bad_vocab"},
      true);
  const auto scores_of = [](ValueType type, std::size_t n) {
    std::vector<Value> items;
    for (std::size_t i = 0; i < n; ++i) {
      items.push_back(type == ValueType::Int32    ? Value::i32(-static_cast<std::int32_t>(i))
                      : type == ValueType::Uint32 ? Value::u32(static_cast<std::uint32_t>(i))
                                                  : Value::f32(-static_cast<float>(i)));
    }
    return Value::array(type, std::move(items));
  };
  faulty(
      "vocab_scores_int32", "the tiny llama with tokenizer.ggml.scores an INT32 array",
      [=](Document& d) {
        find_key(d, "tokenizer.ggml.scores")->value = scores_of(ValueType::Int32, 4);
      },
      {A, "load_vocab takes scores of FLOAT32 or INT32 (each converted to a float)", ""}, false,
      scores_type);
  faulty(
      "vocab_scores_uint32", "the tiny llama with tokenizer.ggml.scores a UINT32 array",
      [=](Document& d) {
        find_key(d, "tokenizer.ggml.scores")->value = scores_of(ValueType::Uint32, 4);
      },
      {R,
       "scores of another type than FLOAT32 or INT32: \"invalid gguf type for "
       "tokenizer.ggml.scores\"",
       "bad_vocab"},
      false, scores_type);
  faulty(
      "vocab_scores_short", "the tiny llama with 3 scores for 4 tokens",
      [=](Document& d) {
        find_key(d, "tokenizer.ggml.scores")->value = scores_of(ValueType::Float32, 3);
      },
      {R, "\"Index out of array bounds for scores (3 < 4)\"", "bad_vocab"}, false,
      length("tokenizer.ggml.scores"));
  faulty(
      "vocab_token_type_short", "the tiny llama with 3 token types for 4 tokens",
      [](Document& d) {
        find_key(d, "tokenizer.ggml.token_type")->value =
            Value::array(ValueType::Int32, {Value::i32(2), Value::i32(3), Value::i32(3)});
      },
      {R, "\"Index out of array bounds for toktypes (3 < 4)\"", "bad_vocab"}, false,
      length("tokenizer.ggml.token_type"));
  faulty("vocab_bos_out_of_range", "the tiny llama with tokenizer.ggml.bos_token_id 99 (4 tokens)",
         [](Document& d) { find_key(d, "tokenizer.ggml.bos_token_id")->value = Value::u32(99); },
         {A,
          "a special token id past the vocabulary is a warning (\"bad special token\") and "
          "the default id is kept",
          ""});
  // Vocabularies of 5 tokens (token_embd [8, 5]).
  const auto vocab5 = [&](const std::string& what, const std::string& description,
                          std::vector<std::string> tokens, ModelExpectation expectation) {
    model_case(c, "model_" + what, description, file([=] {
                 return tiny_llama({tokens, {0, 0, 0, -1, -2}, {2, 3, 3, 1, 1}});
               }),
               std::move(expectation));
  };
  const std::string dup_rule =
      ": llama_vocab maps each token's text to its id, the map ends up smaller than the list, "
      "and GGML_ASSERT(id_to_token.size() == token_to_id.size()) aborts";
  vocab5("vocab_duplicate_token", "the tiny llama with the token \"a\" twice (ids 3 and 4)",
         {"<unk>", "<s>", "</s>", "a", "a"}, {R, "two tokens \"a\"" + dup_rule, "dup_token"});
  vocab5("vocab_tokens_equal_up_to_nul", "the tiny llama with tokens \"a\" and \"a\\0b\"",
         {"<unk>", "<s>", "</s>", "a", std::string("a\0b", 3)},
         {R, "gguf_get_arr_str returns a C string, so \"a\\0b\" is read as \"a\"" + dup_rule,
          "dup_token"});
  vocab5("vocab_empty_token", "the tiny llama with token 3 empty",
         {"<unk>", "<s>", "</s>", "", "b"},
         {A, "an empty token is a warning and is renamed \"[EMPTY_3]\"", ""});
  vocab5("vocab_empty_token_beside_placeholder",
         "the tiny llama with token 3 empty and token 4 \"[EMPTY_3]\"",
         {"<unk>", "<s>", "</s>", "", "[EMPTY_3]"},
         {R, "the empty token 3 is renamed \"[EMPTY_3]\", the text of token 4" + dup_rule,
          "dup_token"});
}

void split_cases(Cases& c) {
  struct Fault {
    std::string what;
    std::string description;
    std::size_t n;
    std::function<void(std::vector<Document>&)> edit;
    std::function<void(std::vector<ByteVector>&)> drop;  // shards not written
    ModelExpectation expectation;
  };
  const auto none = [](std::vector<Document>&) {};
  const std::string intro = "the tiny llama as a split set of ";
  std::vector<Fault> faults = {
      {"two_shards",
       "2 shards, as gguf-split writes them",
       2,
       none,
       nullptr,
       {A,
        "the first shard's split.count 2 makes the loader open <prefix>-00002-of-00002.gguf; "
        "its split.no is 1 and the 20 tensors are all there once",
        ""}},
      {"three_shards",
       "3 shards, as gguf-split writes them",
       3,
       none,
       nullptr,
       {A,
        "the loader opens the shards named <prefix>-0000<i>-of-00003.gguf, each with split.no "
        "i - 1",
        ""}},
      {"shard_missing",
       "3 shards, the second one not there",
       3,
       none,
       [](std::vector<ByteVector>& s) { s[1].clear(); },
       {R,
        "the loader opens every shard by its name: \"failed to load GGUF split from "
        "<prefix>-00002-of-00003.gguf\"",
        "split_set"}},
      {"no_wrong",
       "3 shards, the second with split.no 2",
       3,
       [](std::vector<Document>& s) { find_key(s[1], "split.no")->value = Value::u16(2); },
       nullptr,
       {R,
        "shard i must hold split.no i - 1: \"invalid split file idx: 2 (file: ...), expected "
        "1\"",
        "split_set"}},
      {"no_u32",
       "2 shards, the second with split.no stored as a u32 (1)",
       2,
       [](std::vector<Document>& s) { find_key(s[1], "split.no")->value = Value::u32(1); },
       nullptr,
       {R,
        "a later shard's split.no is read with gguf_get_val_u16, whose GGML_ASSERT on the "
        "type aborts the load",
        "split_set"}},
      {"count_disagrees",
       "2 shards, the second with split.count 3",
       2,
       [](std::vector<Document>& s) { find_key(s[1], "split.count")->value = Value::u16(3); },
       nullptr,
       {A,
        "the loader reads split.count from the first shard only; a later shard's is not "
        "looked at",
        ""}},
      {"tensors_count_wrong",
       "2 shards whose split.tensors.count says 21 (they hold 20)",
       2,
       [](std::vector<Document>& s) {
         for (Document& d : s) find_key(d, "split.tensors.count")->value = Value::i32(21);
       },
       nullptr,
       {R,
        "the shards must hold split.tensors.count tensors in all: \"corrupted model: 21 "
        "tensors expected but 20 found\"",
        "split_set"}},
      {"tensor_in_two_shards",
       "2 shards, the first one's output_norm.weight in the second too",
       2,
       [](std::vector<Document>& s) { s[1].tensors.push_back(s[0].tensors[1]); },
       nullptr,
       {R,
        "a tensor name may appear once in a set: \"invalid model: tensor 'output_norm.weight' "
        "is duplicated\"",
        "split_set"}},
  };
  for (Fault& f : faults) {
    const std::size_t n = f.n;
    const auto edit = f.edit;
    const auto drop = f.drop;
    const auto shards = [=] {
      std::vector<Document> docs = testing::shards_of(tiny_llama(), n);
      edit(docs);
      std::vector<ByteVector> out;
      for (const Document& d : docs) out.push_back(bytes_of(d));
      if (drop) drop(out);
      return out;
    };
    Case& added = model_case(
        c, "split_" + f.what, intro + f.description + " (this file is the first)",
        [=] { return shards().front(); }, std::move(f.expectation));
    added.split_count = static_cast<std::uint32_t>(n);
    added.build_shards = [=] {
      std::vector<ByteVector> all = shards();
      return std::vector<ByteVector>(all.begin() + 1, all.end());
    };
  }
}

}  // namespace

std::vector<Case> cases() {
  Cases c;
  header_cases(c);
  count_cases(c);
  kv_cases(c);
  key_cases(c);
  string_cases(c);
  array_cases(c);
  alignment_cases(c);
  tensor_info_cases(c);
  tensor_type_cases(c);
  layout_cases(c);
  tensor_data_cases(c);
  data_cases(c);
  endian_cases(c);
  model_cases(c);
  split_cases(c);
  std::vector<Case> all = c.take();
  std::sort(all.begin(), all.end(), [](const Case& a, const Case& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (all[i].id == all[i - 1].id) throw std::logic_error("two cases named " + all[i].id);
  }
  return all;
}

std::vector<RealCase> real_cases() {
  struct Row {
    const char* name;
    const char* sha256;
    std::uint64_t size;
    const char* canonical_sha256;
    const char* version = "3";
  };
  // ggml-vocab-*.gguf of the llama.cpp source in node-llama-cpp@3.22.1's git bundle.
  static const Row kRows[] = {
      {"aquila", "7c53c3c516ac67c7ca12977b9690fdea3d2ef13bbaed6378f98191a13ef5ca00", 4825676,
       "dd98feb6d4804658e81488eb3a719a27ad6be653bf44cb473a911ef2870a57fd", "2"},
      {"baichuan", "4f5b955697f3bd3108070b1d5936c7eb9fc542b81c6932e59abddec75bca1963", 1340998,
       "7b7b365ddb8e2e8d513d6daf54dcbb126efa5efe614bf0a087a67ac070c28ca5"},
      {"bert-bge", "fbcbe22278fb302694d5f4a41bfe48c5f90e8e3554eab1c0435387dff654a854", 627549,
       "3192fdf0c7771654e237e8f8d2b5fd3a13dcb69b56247cef54414cf42f423c6e"},
      {"command-r", "a2f8cfea952ef7c391a6d92a1c309d0bd32e36384d9b9230569a7425732f27d9", 10874545,
       "7efe334740d4f90c693088c5bbabb80660df0674e4d1f005440c1842a1a727ad"},
      {"deepseek-coder", "91cb1379f2e33af1c4866b194622b7a0e12e8f0c9dba7ba2f10d55978730bec1",
       1156067, "3e25787a49b70f699caa2721a1788efb1694628c18ad0b714e2a1115c339f901"},
      {"deepseek-llm", "867f77537b54565f0d81d508c04edc41aa1d4ffc1a92745f225b4c1b02755f76", 3970167,
       "c03750e94042bfb739e13f4d0295278834f8711b11af24e6e22cd89eb63fe880"},
      {"falcon", "9f0bf8b0733680398b72e652e90f260f43782f326e75545fc0e49611a5ba35ad", 2287728,
       "cedaa8e7bee99f4ad546062d8ba52635163d12688368c91e1c1bc319584f9ada"},
      {"gemma-4", "58b1ba0b57f3b4d7c468ba4ffd91ad85190346a3d7ad7e71d1cabaae8a14bb65", 15776467,
       "5e858b87519e07aa8e813316de22795b55be3e31ccef9f359e023bb264c673ef"},
      {"gpt-2", "cedc56ca6e2e89f63e781696d1fd76b4b1d49e6720dee86463e915f6e90016ac", 1766807,
       "9af03483379be60e90df04e30eb15d08c99359dcf8977055235ea6f898ed8710"},
      {"gpt-neox", "ae593a7f9b8bb174ed4f5019e41530463e4dac7aa06e42dee8aa650d2bdac53d", 1771431,
       "6d2cb359d87a61f452a2182e1f7983aa9d3b9c9758d9c262ef04004da0831083"},
      {"llama-bpe", "97272e430d53bc7688f52d5e0ad8ea8f163ede9f1bbd1694feaa504797d5d96e", 7818140,
       "5affc1e0c6bcd07d6453e1757c9fc20f3fa01bea570fedbe3c7f6e8f9e58901b"},
      {"llama-spm", "16c3724582d59aa8bf84711894e833f916ee46a31d80e21312759c48bf8d0e69", 723869,
       "10f15d554d5689df66bceeefda9afa0f9e3fa8e57d9d3f77e22f9840586f6f76"},
      {"mpt", "59dc382612866d1fc6c11ea531318d327598f3412d9c8f8600607cdf3030898f", 1771393,
       "272731198504ff8cd3c23d069a1b412425cc553983d3cf9a584b2bc7da99129b"},
      {"nomic-bert-moe", "90a6746926454784a98389ad36a36d89bc9cfc81db9cb0f33c941bcc959fe5f9",
       6821877, "b2a72d69cec332a7824698e469c043cd64076d98d6179659d883288ff1e533f1"},
      {"phi-3", "967d7190d11c4842eab697079d98d56c2116e10eb617be355a2733bfc132e326", 726019,
       "3b737993df837696e7413f79f332cf220aa55ed769a61e3443db41b4cedf37ec"},
      {"qwen2", "44c2f46b715f585c6ab513970e8a006bfa5badd6108560054921cf598d154d8c", 5928681,
       "b8c74756777ddc242d690a9d03db83f0f8dacc777f03f79914270a0f51122428"},
      {"qwen35", "63ed952ff338996cf0bdf24a7b10015124273f75c6dc9bb427356aa3f67ec62c", 5928682,
       "ed69e97f489cd68e132182fed314c0d8970660735df0e9b09e9f3a90e0465f72"},
      {"refact", "ac3ceda902fed91ccf74312b305d9b86c37e4f8e35fa9cc6ef3ce34fca7d4678", 1720710,
       "8fa2fdd1882799dc2f3029569049bc4f1e1fde3931a030dc4975fab03c1a2181"},
      {"starcoder", "fedb892b4e1bd3c1f2fcdae356440b14fb458f4264d586e5c987ed93df4e174d", 1719346,
       "024ca8bc8dab2bbb4431a3356f1c80afd2577eda7924fdc24edbf47692a89be3"},
  };
  std::vector<RealCase> out;
  for (const Row& row : kRows) {
    RealCase r;
    std::string id_part = row.name;
    std::replace(id_part.begin(), id_part.end(), '-', '_');
    r.file = std::string("ggml-vocab-") + row.name + ".gguf";
    r.sha256 = row.sha256;
    r.size = row.size;
    r.canonical_sha256 = row.canonical_sha256;
    r.gguf_version = row.version;
    // Architecture names with '-' make keys that are not lower_snake_case: the spec profile
    // rejects them (gguf-format.md section 4, conformance/README.md).
    const bool hyphenated_keys = id_part == "command_r" || id_part == "nomic_bert_moe";
    r.spec = hyphenated_keys ? Verdict::Reject : Verdict::Accept;
    r.id = (hyphenated_keys ? "i_real_vocab_" : "y_real_vocab_") + id_part;
    r.error_class = hyphenated_keys ? "bad_key" : "";
    r.rule = std::string("a vocabulary-only file written by llama.cpp's converter (") + r.file +
             ")" +
             (hyphenated_keys ? ": its architecture name has a '-', so its keys are not "
                                "lower_snake_case as the spec requires; every reader loads it"
                              : "");
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<SparseCase> sparse_cases() {
  // general.alignment 2^31 and one F32 tensor of 8 elements: the data section starts at 2^31, so
  // the file is 2^31 + 32 bytes. Valid for the spec and the reader; @huggingface/gguf computes
  // the data offset in 32-bit arithmetic and gets a negative one (ggufcheck's GGUF9507).
  constexpr std::uint64_t kAlignment = std::uint64_t{1} << 31;
  Document doc = one_tensor({8}, 0, {pair("general.alignment", Value::u32(64))});
  doc.tensors[0].data = std::vector<std::uint8_t>(32);
  for (std::size_t i = 0; i < 8; ++i) {
    const float value = static_cast<float>(i) + 0.5f;
    std::memcpy(doc.tensors[0].data->data() + 4 * i, &value, 4);
  }
  Written w = write(doc);
  patch(w.bytes, w.layout.pairs[1].value_offset, static_cast<std::uint32_t>(kAlignment));
  const WrittenTensor& t = w.layout.tensors[0];
  SparseCase s;
  s.id = "y_align_2p31_with_tensor_data";
  s.rule =
      "general.alignment 2^31 with a tensor and its data: the data section starts at 2^31 and the "
      "file is 2^31 + 32 bytes (a parser must not compute offsets in 32 bits)";
  s.tags = {"big"};
  s.size = kAlignment + t.nbytes;
  const auto at = [&](std::uint64_t offset) {
    return w.bytes.begin() + static_cast<std::ptrdiff_t>(offset);
  };
  s.extents.push_back({0, ByteVector(at(0), at(w.layout.infos_end))});
  s.extents.push_back(
      {kAlignment, ByteVector(at(t.data_position), at(t.data_position + t.nbytes))});
  return {s};
}

}  // namespace ggufcheck::conformance
