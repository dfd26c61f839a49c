// What the property tests' generated files are made of (generators.hpp generates them): the
// choices that pick options, text and keys, the valid models and the round-trip documents, and
// the facts about a document that the generators, the faults and the properties share.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/format.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

constexpr std::uint64_t kU64Max = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kPow63 = std::uint64_t{1} << 63;

[[nodiscard]] std::uint64_t round_up(std::uint64_t value, std::uint64_t alignment);
[[nodiscard]] bool is_power_of_two(std::uint64_t v);

// choice % n, for turning a generated number into an index (shrinks towards the first).
[[nodiscard]] std::size_t pick(std::uint64_t choice, std::size_t n);

template <typename T>
const T& pick_of(std::uint64_t choice, const std::vector<T>& options) {
  return options[pick(choice, options.size())];
}

// Deterministic filler for tensor data: shrinking the seed to 0 gives zero bytes.
[[nodiscard]] ByteVector seeded_bytes(std::uint64_t seed, std::uint64_t count);

[[nodiscard]] std::string encode_utf8(std::uint32_t cp);

// Cuts valid UTF-8 to at most max_bytes without splitting a sequence.
[[nodiscard]] std::string truncate_utf8(std::string text, std::size_t max_bytes);

// A general.alignment value: a power of two 1..4096.
struct Alignment {
  std::uint32_t value = kDefaultAlignment;
};

// --- keys ----------------------------------------------------------------------------------------

// The key rules of check_keys as docs/format.md section 7 states them: spec wants dotted
// lower_snake_case; strict also accepts '-' and any letter case in the name part of
// tokenizer.chat_template.<name>. Only printable ASCII keys are judged (others are 2005).
[[nodiscard]] bool conventional_key(std::string_view key, bool strict);

[[nodiscard]] bool printable_ascii(std::string_view text);

enum class KeyStyle : std::uint8_t {
  Conventional,    // dotted lower_snake_case: clean in every profile
  StrictOnly,      // '-' or an upper-case chat template name: unconventional in spec only
  Unconventional,  // printable ASCII but not conventional: GGUF2006 in strict and spec
};

struct Key {
  std::string text;
  KeyStyle style = KeyStyle::Conventional;
};

[[nodiscard]] std::string_view to_string(KeyStyle style);

// First segments that name standard keys: generated free keys never use them.
[[nodiscard]] bool reserved_first_segment(std::string_view segment);

// --- whole files ---------------------------------------------------------------------------------

// A file strict passes (no error, no warning) apart from what implied_findings() lists: v2 and
// v3, both byte orders, a standard-key set consistent with itself (tokenizer lengths, token ids,
// quantization version when a tensor is quantized, general.alignment a power of two >= 8),
// free pairs of any canonical non-nested value, tensors of every usable type.
struct ValidModel {
  Document doc;
  bool pad_when_no_tensors = false;  // ggml's C writer pads a file without tensors; gguf-py not

  [[nodiscard]] WriteOptions options() const;
  [[nodiscard]] Written write() const;
};

// A document for the round trip: anything the writer writes and read_document reads back. Tensor
// offsets are explicit (the sequential layout), so read_document(write(doc)) == doc exactly.
struct AnyDocument {
  Document doc;
};

[[nodiscard]] std::string_view architecture_of(const Document& doc);

[[nodiscard]] const KeyValue* find_pair(const Document& doc, std::string_view key);
[[nodiscard]] KeyValue* find_pair(Document& doc, std::string_view key);
// The first pair named `key` gets `value`, or a pair is appended; every pair named `key` goes.
void set_pair(Document& doc, std::string_view key, Value value);
void erase_pair(Document& doc, std::string_view key);
[[nodiscard]] std::optional<std::size_t> pair_index(const Document& doc, std::string_view key);

[[nodiscard]] bool is_quantized(std::uint32_t type);
[[nodiscard]] bool has_quantized_tensor(const Document& doc);

// The alignment the writer and the validator use: the first general.alignment pair decides; 32
// unless it is a non-zero uint32 (docs/format.md section 8).
[[nodiscard]] std::uint32_t effective_alignment(const Document& doc);

// A key that names no standard key (free to hold any value).
[[nodiscard]] bool is_free_key(std::string_view key, std::string_view arch);

// One key is the other's dotted prefix ("a" and "a.b"), which ggufcheck reports (GGUF9503),
// except under tokenizer.chat_template and general.license, which node-llama-cpp keeps flat.
[[nodiscard]] bool dotted_prefixes(std::string_view a, std::string_view b);

void ensure_quantization_version(Document& doc);

// Makes tensor names unique (appending 'x', keeping at most 63 bytes of valid UTF-8).
void make_names_unique(Document& doc);

}  // namespace ggufcheck::testing
