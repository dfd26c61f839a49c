// The corpus recipes. Each one builds a file with the library's writer (patching bytes at the
// offsets its WrittenLayout reports where the writer has no option for the fault) and declares the
// codes the fault causes according to the format (docs/format.md, docs/threat-model.md) and the
// catalogue (validator/include/ggufcheck/catalogue.def). The declarations are never copied from
// what the validator prints: the corpus tests compare the two.
#include "recipes.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "code_table.hpp"
#include "documents.hpp"
#include "ggufcheck/format.hpp"
#include "ggufcheck/writer.hpp"
#include "hostile.hpp"

namespace ggufcheck::corpus {

std::string Recipe::threat() const {
  if (group() != "threats") return {};
  const std::string n = name();
  return n.substr(0, n.find('-'));
}

std::optional<Severity> severity_of(const std::string& code, Profile profile) {
  if (const std::optional<Code> found = find_code(code)) {
    return catalogue_entry(*found).severity(profile);
  }
  return std::nullopt;
}

Expectation expectation(const Recipe& recipe, Profile profile) {
  const auto over = recipe.per_profile.find(profile);
  const std::vector<std::string>& declared =
      over != recipe.per_profile.end() ? over->second : recipe.codes;
  std::set<std::string> kept;
  Expectation out;
  for (const std::string& code : declared) {
    const std::optional<Severity> severity = severity_of(code, profile);
    if (!severity) throw std::runtime_error(recipe.id + ": " + code + " is not in the catalogue");
    if (*severity == Severity::Silent) continue;
    kept.insert(code);
    if (*severity == Severity::Error) out.pass = false;
  }
  out.codes.assign(kept.begin(), kept.end());
  return out;
}

namespace {

using testing::append_u32;
using testing::append_u64;
using testing::deeply_nested;
using testing::document;
using testing::minimal_document;
using testing::model_document;
using testing::pair;
using testing::patch;
using testing::prefix;
using testing::quantization_version;
using testing::tensor;
using testing::two_tensors_at;
using testing::with_alignment;
using testing::with_array_count;
using testing::with_array_type;
using testing::with_counts;
using testing::with_element_length;
using testing::with_key_length;
using testing::with_magic;
using testing::with_n_dims;
using testing::with_string_length;
using testing::with_tensor_name_length;

constexpr std::uint64_t kMax64 = UINT64_MAX;
constexpr std::uint64_t kPow63 = std::uint64_t{1} << 63;
constexpr std::uint64_t kWidth = 8;  // u64 counts and lengths

constexpr std::uint32_t kF32 = 0;
constexpr std::uint32_t kF16 = 1;
constexpr std::uint32_t kQ4_0 = 2;
constexpr std::uint32_t kQ8_0 = 8;
constexpr std::uint32_t kQ4_K = 12;
constexpr std::uint32_t kQ6_K = 14;
constexpr std::uint32_t kI8 = 24;
constexpr std::uint32_t kI32 = 26;
constexpr std::uint32_t kI64 = 27;
constexpr std::uint32_t kF64 = 28;

// kv[1] "my.text" = "hello" with its length field set to `length` (nothing more written).
ByteVector value_length(std::uint64_t length) {
  return with_string_length(document({pair("my.text", Value::string("hello"))}), 1, length).bytes;
}
ByteVector key_length(std::uint64_t length) {
  return with_key_length(document({pair("my.text", Value::string("hello"))}), 1, length).bytes;
}
ByteVector tensor_name_length(std::uint64_t length) {
  return with_tensor_name_length(document({}, {tensor("first", {8}), tensor("second", {8})}), 0,
                                 length)
      .bytes;
}
// kv[1] "my.list" a string array whose second element's length is set to `length`.
ByteVector element_length(std::uint64_t length) {
  return with_element_length(
             document({pair("my.list", Value::array(ValueType::String,
                                                    {Value::string("a"), Value::string("b")}))}),
             1, 1, length)
      .bytes;
}
// kv[1] "my.list" an array of two `element`s whose count is set to `count`.
ByteVector array_count(ValueType element, Value item, std::uint64_t count) {
  return with_array_count(document({pair("my.list", Value::array(element, {item, item}))}), 1,
                          count)
      .bytes;
}

// A header with these counts and nothing after it but minimal_document()'s one pair.
ByteVector counts(std::optional<std::uint64_t> tensor_count,
                  std::optional<std::uint64_t> kv_count) {
  return with_counts(minimal_document(), tensor_count, kv_count);
}

// general.alignment = value over two tensors, laid out with `layout` (default 32: what readers
// fall back to when the key is unusable).
ByteVector alignment_value(Value value, std::uint32_t layout = 32) {
  WriteOptions options;
  options.alignment = layout;
  return write_bytes(with_alignment(std::move(value)), options);
}

// --- model-shaped documents --------------------------------------------------------------------

// splitmix64: a fixed pseudo-random sequence, the same on every platform and run.
class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }

 private:
  std::uint64_t state_;
};

enum class Vocab { Spm, Bpe };

struct TensorSpec {
  std::string name;
  std::vector<std::uint64_t> dims;
  std::uint32_t type;
};

struct ModelSpec {
  std::string name;
  Vocab vocab = Vocab::Spm;
  std::uint32_t n_vocab = 2000;
  std::uint32_t n_embd = 64;
  std::uint32_t n_ff = 128;
  std::uint32_t file_type = 7;
  std::uint64_t seed = 1;
  std::vector<TensorSpec> tensors;
};

// Unique token texts made of syllables; SentencePiece style (U+2581 word prefix, byte tokens) or
// GPT-2 byte-level BPE style (U+0120 word prefix) with merges for every two-syllable token.
struct Vocabulary {
  std::vector<Value> tokens, scores, types, merges;
};

Vocabulary make_vocabulary(Vocab style, std::uint32_t n_vocab, std::uint64_t seed) {
  static const char* const kSyllables[] = {"a",
                                           "e",
                                           "i",
                                           "o",
                                           "u",
                                           "an",
                                           "en",
                                           "in",
                                           "on",
                                           "er",
                                           "re",
                                           "th",
                                           "st",
                                           "nd",
                                           "ing",
                                           "ion",
                                           "al",
                                           "ou",
                                           "es",
                                           "ed",
                                           "to",
                                           "it",
                                           "is",
                                           "ar",
                                           "ma",
                                           "ko",
                                           "ri",
                                           "su",
                                           "ne",
                                           "la",
                                           "di",
                                           "po",
                                           "\xc3\xa9",
                                           "\xc3\xbc",
                                           "\xd0\xb0",
                                           "\xd0\xbd",
                                           "\xe4\xb8\xad",
                                           "\xe6\x96\x87",
                                           "\xe3\x81\x82",
                                           "\xce\xb1"};
  constexpr std::uint32_t kN = static_cast<std::uint32_t>(std::size(kSyllables));
  const std::string word = style == Vocab::Spm ? "\xe2\x96\x81" : "\xc4\xa0";
  Vocabulary v;
  Random random(seed);
  const auto add = [&](std::string text, float score, std::int32_t type) {
    v.tokens.push_back(Value::string(std::move(text)));
    v.scores.push_back(Value::f32(score));
    v.types.push_back(Value::i32(type));
  };
  std::set<std::string> seen;
  if (style == Vocab::Spm) {
    add("<unk>", 0, 2);
    add("<s>", 0, 3);
    add("</s>", 0, 3);
    for (unsigned b = 0; b < 256; ++b) {
      static const char kHex[] = "0123456789ABCDEF";
      add(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0, 6);
    }
  } else {
    add("<|endoftext|>", 0, 3);
  }
  for (const auto& t : v.tokens) seen.insert(t.text);
  // Single syllables, then pairs in a seeded order, with and without the word prefix.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::uint32_t a = 0; a < kN; ++a) {
    for (std::uint32_t b = 0; b < kN; ++b) pairs.emplace_back(a, b);
  }
  for (std::size_t i = pairs.size(); i > 1; --i) {  // Fisher-Yates with the fixed sequence
    std::swap(pairs[i - 1], pairs[random.below(static_cast<std::uint32_t>(i))]);
  }
  float score = -1;
  for (std::uint32_t s = 0; s < kN && v.tokens.size() < n_vocab; ++s) {
    for (const std::string& text : {std::string(kSyllables[s]), word + kSyllables[s]}) {
      if (v.tokens.size() < n_vocab && seen.insert(text).second) add(text, score--, 1);
    }
  }
  for (const auto& [a, b] : pairs) {
    for (const bool prefixed : {false, true}) {
      if (v.tokens.size() >= n_vocab) break;
      const std::string left = (prefixed ? word : std::string()) + kSyllables[a];
      const std::string text = left + kSyllables[b];
      if (!seen.insert(text).second) continue;
      add(text, score--, 1);
      if (style == Vocab::Bpe) v.merges.push_back(Value::string(left + " " + kSyllables[b]));
    }
  }
  for (std::uint64_t i = 0; v.tokens.size() < n_vocab; ++i) {  // then triples, in order
    const std::string text =
        word + kSyllables[i % kN] + kSyllables[(i / kN) % kN] + kSyllables[(i / kN / kN) % kN];
    if (seen.insert(text).second) add(text, score--, 1);
  }
  return v;
}

Document model(const ModelSpec& spec) {
  const Vocabulary v = make_vocabulary(spec.vocab, spec.n_vocab, spec.seed);
  const std::uint32_t n_tokens = static_cast<std::uint32_t>(v.tokens.size());
  Document d;
  d.metadata = {
      pair("general.architecture", Value::string("llama")),
      pair("general.type", Value::string("model")),
      pair("general.name", Value::string(spec.name)),
      pair("general.basename", Value::string("corpus-llama")),
      pair("general.size_label", Value::string("tiny")),
      pair("general.license", Value::string("mit")),
      pair("general.tags", Value::array(ValueType::String, {Value::string("corpus"),
                                                            Value::string("text-generation")})),
      pair("general.languages", Value::array(ValueType::String, {Value::string("en")})),
      pair("general.file_type", Value::u32(spec.file_type)),
      pair("general.quantization_version", Value::u32(2)),
      pair("llama.vocab_size", Value::u32(n_tokens)),
      pair("llama.context_length", Value::u32(2048)),
      pair("llama.embedding_length", Value::u32(spec.n_embd)),
      pair("llama.block_count", Value::u32(1)),
      pair("llama.feed_forward_length", Value::u32(spec.n_ff)),
      pair("llama.rope.dimension_count", Value::u32(spec.n_embd / 4)),
      pair("llama.rope.freq_base", Value::f32(10000.0f)),
      pair("llama.attention.head_count", Value::u32(4)),
      pair("llama.attention.head_count_kv", Value::u32(4)),
      pair("llama.attention.layer_norm_rms_epsilon", Value::f32(1e-5f)),
      pair("tokenizer.ggml.model", Value::string(spec.vocab == Vocab::Spm ? "llama" : "gpt2")),
  };
  if (spec.vocab == Vocab::Bpe) {
    d.metadata.push_back(pair("tokenizer.ggml.pre", Value::string("gpt-2")));
  }
  d.metadata.push_back(pair("tokenizer.ggml.tokens", Value::array(ValueType::String, v.tokens)));
  d.metadata.push_back(pair("tokenizer.ggml.scores", Value::array(ValueType::Float32, v.scores)));
  d.metadata.push_back(pair("tokenizer.ggml.token_type", Value::array(ValueType::Int32, v.types)));
  if (spec.vocab == Vocab::Bpe) {
    d.metadata.push_back(pair("tokenizer.ggml.merges", Value::array(ValueType::String, v.merges)));
    d.metadata.push_back(pair("tokenizer.ggml.bos_token_id", Value::u32(0)));
    d.metadata.push_back(pair("tokenizer.ggml.eos_token_id", Value::u32(0)));
  } else {
    d.metadata.push_back(pair("tokenizer.ggml.bos_token_id", Value::u32(1)));
    d.metadata.push_back(pair("tokenizer.ggml.eos_token_id", Value::u32(2)));
    d.metadata.push_back(pair("tokenizer.ggml.unknown_token_id", Value::u32(0)));
    d.metadata.push_back(pair("tokenizer.ggml.padding_token_id", Value::u32(0)));
  }
  d.metadata.push_back(pair("tokenizer.ggml.add_bos_token", Value::boolean(true)));
  d.metadata.push_back(pair("tokenizer.ggml.add_eos_token", Value::boolean(false)));
  d.metadata.push_back(
      pair("tokenizer.chat_template",
           Value::string("{% for message in messages %}<|{{ message['role'] }}|>\n"
                         "{{ message['content'] }}</s>\n{% endfor %}"
                         "{% if add_generation_prompt %}<|assistant|>\n{% endif %}")));
  const std::uint64_t vocab = n_tokens;
  for (const TensorSpec& t : spec.tensors) {
    std::vector<std::uint64_t> dims = t.dims;
    for (std::uint64_t& dim : dims) {
      if (dim == 0) dim = vocab;  // 0 stands for the vocabulary size
    }
    Tensor out = tensor(t.name, dims, t.type);
    if (t.type == kF32) {  // norms: ones, written little-endian
      const std::optional<std::uint64_t> n = tensor_nbytes(t.type, dims);
      std::vector<std::uint8_t> data(n.value_or(0), 0);
      for (std::size_t i = 0; i + 3 < data.size(); i += 4) {
        data[i + 2] = 0x80;
        data[i + 3] = 0x3f;
      }
      out.data = std::move(data);
    }
    d.tensors.push_back(std::move(out));
  }
  return d;
}

// One transformer block with the attention and feed-forward weights in `quant`.
std::vector<TensorSpec> block_tensors(std::uint64_t e, std::uint64_t ff, std::uint32_t quant,
                                      std::uint32_t ffn_down_type) {
  return {
      {"blk.0.attn_norm.weight", {e}, kF32},
      {"blk.0.attn_q.weight", {e, e}, quant},
      {"blk.0.attn_k.weight", {e, e}, quant},
      {"blk.0.attn_v.weight", {e, e}, quant},
      {"blk.0.attn_output.weight", {e, e}, quant},
      {"blk.0.ffn_norm.weight", {e}, kF32},
      {"blk.0.ffn_gate.weight", {e, ff}, quant},
      {"blk.0.ffn_up.weight", {e, ff}, quant},
      {"blk.0.ffn_down.weight", {ff, e}, ffn_down_type},
  };
}

ModelSpec spm_q8_0() {
  ModelSpec s;
  s.name = "corpus llama spm q8_0";
  s.vocab = Vocab::Spm;
  s.n_vocab = 3000;
  s.n_embd = 64;
  s.file_type = 7;  // MOSTLY_Q8_0
  s.seed = 20261201;
  s.tensors = {{"token_embd.weight", {64, 0}, kQ8_0}};
  for (TensorSpec& t : block_tensors(64, 128, kQ8_0, kQ8_0)) s.tensors.push_back(t);
  s.tensors.push_back({"output_norm.weight", {64}, kF32});
  return s;
}

// The model-shaped file the writers/ group writes wrong: 1000 tokens, small Q8_0 weights.
ModelSpec writer_model() {
  ModelSpec s = spm_q8_0();
  s.name = "corpus llama for the writer mistakes";
  s.n_vocab = 1000;
  s.n_embd = 32;
  s.n_ff = 64;
  s.seed = 20261204;
  s.tensors = {{"token_embd.weight", {32, 0}, kQ8_0}};
  for (TensorSpec& t : block_tensors(32, 64, kQ8_0, kQ8_0)) s.tensors.push_back(t);
  s.tensors.push_back({"output_norm.weight", {32}, kF32});
  return s;
}

ModelSpec bpe_q4_k() {
  ModelSpec s;
  s.name = "corpus llama bpe q4_k";
  s.vocab = Vocab::Bpe;
  s.n_vocab = 1500;
  s.n_embd = 256;
  s.n_ff = 256;
  s.file_type = 15;  // MOSTLY_Q4_K_M
  s.seed = 20261202;
  s.tensors = {{"token_embd.weight", {256, 0}, 10}};  // Q2_K keeps the embedding small
  for (TensorSpec& t : block_tensors(256, 256, kQ4_K, kQ6_K)) s.tensors.push_back(t);
  s.tensors.push_back({"output_norm.weight", {256}, kF32});
  return s;
}

ModelSpec spm_mixed() {
  ModelSpec s;
  s.name = "corpus llama spm mixed";
  s.vocab = Vocab::Spm;
  s.n_vocab = 4000;
  s.n_embd = 32;
  s.n_ff = 64;
  s.file_type = 2;  // MOSTLY_Q4_0
  s.seed = 20261203;
  s.tensors = {
      {"token_embd.weight", {32, 0}, kQ4_0},     {"blk.0.attn_norm.weight", {32}, kF32},
      {"blk.0.attn_q.weight", {32, 32}, kQ4_0},  {"blk.0.attn_k.weight", {32, 32}, 3},     // Q4_1
      {"blk.0.attn_v.weight", {32, 32}, 6},                                                // Q5_0
      {"blk.0.attn_output.weight", {32, 32}, 7},                                           // Q5_1
      {"blk.0.ffn_norm.weight", {32}, kF32},     {"blk.0.ffn_gate.weight", {32, 64}, 20},  // IQ4_NL
      {"blk.0.ffn_up.weight", {32, 64}, kF16},   {"blk.0.ffn_down.weight", {64, 32}, 30},  // BF16
      {"output_norm.weight", {32}, kF32},        {"output.weight", {32, 0}, kQ8_0},
  };
  return s;
}

// --- the registry --------------------------------------------------------------------------------

class Registry {
 public:
  Recipe& add(std::string id, std::string description, std::vector<std::string> codes,
              std::function<ByteVector()> build) {
    Recipe r;
    r.id = std::move(id);
    r.description = std::move(description);
    r.codes = std::move(codes);
    r.build = std::move(build);
    list_.push_back(std::move(r));
    return list_.back();
  }
  std::vector<Recipe> take() { return std::move(list_); }

 private:
  std::vector<Recipe> list_;
};

std::string hex_id(std::uint32_t v) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (int shift = 28; shift >= 0; shift -= 4) out += kHex[(v >> shift) & 15];
  return out;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// --- codes/: one clean example per catalogue code (the testkit's code table, code_table.hpp) ---

void add_codes(Registry& r) {
  // "codes/GGUFnnnn-<catalogue name>", the code first in the declared list.
  for (const testing::CodeEntry& entry : testing::code_table()) {
    if (!entry.has_example()) continue;
    const testing::CodeExample& example = entry.example;
    std::string id =
        "codes/" + code_string(entry.code) + "-" + std::string(catalogue_entry(entry.code).name);
    if (example.build_set != nullptr) {
      // A split set: its files in the folder codes/GGUFnnnn-<name>/, each with its own codes.
      const std::vector<testing::ExampleFile> files = example.build_set();
      for (std::size_t k = 0; k < files.size(); ++k) {
        const std::string& name = files[k].name;
        std::vector<std::string> codes;
        for (const Code code : files[k].codes) codes.push_back(code_string(code));
        Recipe& recipe = r.add(id + "/" + name.substr(0, name.size() - 5),
                               std::string(example.description) + ": " + name, std::move(codes),
                               [build = example.build_set, k] { return build()[k].written.bytes; });
        recipe.model = true;
      }
      continue;
    }
    std::vector<std::string> codes = {code_string(entry.code)};
    for (const Code also : example.also) codes.push_back(code_string(also));
    Recipe& recipe = r.add(std::move(id), std::string(example.description), std::move(codes),
                           [build = example.build] { return build().bytes; });
    recipe.data = example.data;
    // The example names its base from the repository's root; the manifest from the corpus's.
    if (constexpr std::string_view kCorpus = "corpus/"; example.base.starts_with(kCorpus)) {
      recipe.base = std::string(example.base.substr(kCorpus.size()));
    }
    const Area area = catalogue_entry(entry.code).area;
    recipe.model = area == Area::Model || area == Area::SplitSet;
  }
}

// --- codes/GGUF1002-bad-magic-<kind>: files that are not GGUF ------------------------------
//
// What a CI gate is handed instead of a model: a Git LFS pointer, a web page or API answer, an
// archive, another model format. Each is small and synthetic (no model data) but well-formed as
// its own kind: the archives pass `gzip -t`, `zstd -t`, `xz -t`, `bzip2 -t`, `unzip -t` and
// `tar -t`, and hold the minimal GGUF file where they hold anything.

ByteVector text_bytes(std::string_view text) {
  return ByteVector(text.begin(), text.end());
}

void append_u16(ByteVector& out, std::uint16_t v) {
  out.push_back(static_cast<std::uint8_t>(v & 0xFF));
  out.push_back(static_cast<std::uint8_t>(v >> 8));
}
void append_text(ByteVector& out, std::string_view text) {
  out.insert(out.end(), text.begin(), text.end());
}

// CRC-32 (IEEE 802.3, reflected 0xEDB88320) as gzip, zip and xz use it.
std::uint32_t crc32(const ByteVector& bytes, std::size_t from = 0, std::size_t to = SIZE_MAX) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (std::size_t i = from; i < std::min(to, bytes.size()); ++i) {
    crc ^= bytes[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// gzip of `data` as one stored deflate block, with the original name in FNAME.
ByteVector gzip_of(const ByteVector& data, std::string_view name) {
  ByteVector out = {0x1f, 0x8b, 0x08, 0x08, 0, 0, 0, 0, 0x00, 0x03};  // FNAME, mtime 0, Unix
  append_text(out, name);
  out.push_back(0);
  out.push_back(0x01);  // BFINAL, stored
  append_u16(out, static_cast<std::uint16_t>(data.size()));
  append_u16(out, static_cast<std::uint16_t>(~data.size()));
  out.insert(out.end(), data.begin(), data.end());
  append_u32(out, crc32(data));
  append_u32(out, static_cast<std::uint32_t>(data.size()));
  return out;
}

// A zstd frame of `data` as one raw block: single segment, a 1-byte content size, no checksum.
ByteVector zstd_of(const ByteVector& data) {
  ByteVector out = {0x28, 0xb5, 0x2f, 0xfd, 0x20, static_cast<std::uint8_t>(data.size())};
  const std::uint32_t block = (static_cast<std::uint32_t>(data.size()) << 3) | 1;  // last, raw
  for (int i = 0; i < 3; ++i) out.push_back(static_cast<std::uint8_t>(block >> (8 * i)));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// An xz stream with no block (what `xz` writes for empty input): header, empty index, footer.
ByteVector empty_xz() {
  ByteVector out = {0xfd, '7', 'z', 'X', 'Z', 0x00, 0x00, 0x01};  // stream flags: CRC32
  append_u32(out, crc32(ByteVector{0x00, 0x01}));
  const std::size_t index = out.size();
  out.insert(out.end(), {0x00, 0x00, 0x00, 0x00});  // indicator, 0 records, padding
  append_u32(out, crc32(out, index));
  ByteVector footer = {0x01, 0x00, 0x00, 0x00, 0x00, 0x01};  // backward size (8 / 4 - 1), flags
  append_u32(out, crc32(footer));
  out.insert(out.end(), footer.begin(), footer.end());
  append_text(out, "YZ");
  return out;
}

// A zip of stored entries: local headers and data, the central directory, its end record.
ByteVector zip_of(const std::vector<std::pair<std::string, ByteVector>>& entries) {
  ByteVector out, central;
  for (const auto& [name, data] : entries) {
    const auto offset = static_cast<std::uint32_t>(out.size());
    const std::uint32_t crc = crc32(data);
    const auto size = static_cast<std::uint32_t>(data.size());
    const auto name_length = static_cast<std::uint16_t>(name.size());
    append_u32(out, 0x04034b50);
    for (const int v : {20, 0, 0, 0, 0x21})
      append_u16(out, static_cast<std::uint16_t>(v));  // stored, 1980-01-01
    for (const std::uint32_t v : {crc, size, size}) append_u32(out, v);
    append_u16(out, name_length);
    append_u16(out, 0);
    append_text(out, name);
    out.insert(out.end(), data.begin(), data.end());
    append_u32(central, 0x02014b50);
    for (const int v : {20, 20, 0, 0, 0, 0x21}) append_u16(central, static_cast<std::uint16_t>(v));
    for (const std::uint32_t v : {crc, size, size}) append_u32(central, v);
    for (const std::uint16_t v :
         {name_length, std::uint16_t{0}, std::uint16_t{0}, std::uint16_t{0}, std::uint16_t{0}}) {
      append_u16(central, v);
    }
    append_u32(central, 0);  // external attributes
    append_u32(central, offset);
    append_text(central, name);
  }
  const auto central_offset = static_cast<std::uint32_t>(out.size());
  out.insert(out.end(), central.begin(), central.end());
  append_u32(out, 0x06054b50);
  const auto count = static_cast<std::uint16_t>(entries.size());
  for (const std::uint16_t v : {std::uint16_t{0}, std::uint16_t{0}, count, count}) {
    append_u16(out, v);
  }
  append_u32(out, static_cast<std::uint32_t>(central.size()));
  append_u32(out, central_offset);
  append_u16(out, 0);
  return out;
}

// A POSIX ustar archive of one file: its 512-byte header, the data padded to 512, two zero
// blocks.
ByteVector tar_of(std::string_view name, const ByteVector& data) {
  ByteVector header(512, 0);
  const auto field = [&header](std::size_t at, std::string_view text) {
    std::copy(text.begin(), text.end(), header.begin() + static_cast<std::ptrdiff_t>(at));
  };
  char size[13];
  std::snprintf(size, sizeof size, "%011o", static_cast<unsigned>(data.size()));
  field(0, name);
  field(100, "0000644");
  field(108, "0000000");
  field(116, "0000000");
  field(124, size);
  field(136, "00000000000");
  field(148, "        ");  // the checksum counts its own field as spaces
  field(156, "0");
  field(257, std::string_view("ustar\0"
                              "00",
                              8));
  unsigned sum = 0;
  for (const std::uint8_t b : header) sum += b;
  char checksum[8];
  std::snprintf(checksum, sizeof checksum, "%06o", sum);
  field(148, std::string_view(checksum, 7));  // six digits, NUL, and the space stays
  // The header, the data padded to a 512-byte record, and two zero records; written into a
  // buffer of the final size (g++ 12 -O3 warned falsely about growing a copy of the header).
  ByteVector out((header.size() + data.size() + 511) / 512 * 512 + 1024, 0);
  std::copy(header.begin(), header.end(), out.begin());
  std::copy(data.begin(), data.end(), out.begin() + static_cast<std::ptrdiff_t>(header.size()));
  return out;
}

// A safetensors file: the u64 header length, the JSON header padded with spaces to a multiple
// of 8, then the data (two F32 zeros).
ByteVector safetensors_file() {
  std::string header = R"({"weight":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  header.resize((header.size() + 7) / 8 * 8, ' ');
  ByteVector out;
  append_u64(out, header.size());
  append_text(out, header);
  out.resize(out.size() + 8, 0);
  return out;
}

// pickle.dumps({}, protocol=2): PROTO 2, EMPTY_DICT, BINPUT 0, STOP.
const ByteVector kEmptyDictPickle = {0x80, 0x02, '}', 'q', 0x00, '.'};

// A protobuf length-delimited field with a one-byte tag and a one-byte length.
void append_field(ByteVector& out, std::uint8_t tag, const ByteVector& value) {
  out.push_back(tag);
  out.push_back(static_cast<std::uint8_t>(value.size()));
  out.insert(out.end(), value.begin(), value.end());
}

// An ONNX ModelProto: ir_version 8, producer "pytorch" "2.1.0", a graph named "main" with no
// node, opset_import version 17.
ByteVector onnx_model() {
  ByteVector out = {0x08, 0x08};
  append_field(out, 0x12, text_bytes("pytorch"));
  append_field(out, 0x1a, text_bytes("2.1.0"));
  ByteVector graph;
  append_field(graph, 0x12, text_bytes("main"));  // GraphProto.name
  append_field(out, 0x3a, graph);
  append_field(out, 0x42, ByteVector{0x10, 0x11});  // OperatorSetIdProto.version 17
  return out;
}

void add_not_gguf(Registry& r) {
  const auto kind = [&r](const std::string& name, std::string description,
                         std::function<ByteVector()> build) {
    r.add("codes/GGUF1002-bad-magic-" + name, std::move(description), {"GGUF1002"},
          std::move(build));
  };
  kind("git-lfs-pointer", "a Git LFS pointer (version, oid, size) instead of a 4 GiB model", [] {
    return text_bytes(
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4a7f0c1b5e2d93866c0d2e1f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b\n"
        "size 4368657152\n");
  });
  kind("html-page", "the 404 page of a web server instead of the model", [] {
    return text_bytes(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<title>404 Not Found</title>\n</head>\n<body>\n<h1>Not Found</h1>\n"
        "<p>The requested URL was not found on this server.</p>\n</body>\n</html>\n");
  });
  kind("json-error", "a 21-byte JSON error of an API, shorter than a GGUF header",
       [] { return text_bytes(R"({"error":"Not Found"})"); });
  kind("json-2-bytes", "the 2-byte JSON answer {}, shorter than the magic",
       [] { return text_bytes("{}"); });
  kind("gzip", "the minimal GGUF file compressed with gzip (named model.gguf inside)",
       [] { return gzip_of(write_bytes(minimal_document()), "model.gguf"); });
  kind("zstd", "the minimal GGUF file in a zstd frame",
       [] { return zstd_of(write_bytes(minimal_document())); });
  kind("xz", "an empty xz stream", [] { return empty_xz(); });
  kind("bzip2", "an empty bzip2 stream", [] {
    return ByteVector{'B', 'Z', 'h', '9', 0x17, 0x72, 0x45, 0x38, 0x50, 0x90, 0, 0, 0, 0};
  });
  kind("zip", "a zip archive holding the minimal GGUF file as model.gguf", [] {
    return zip_of({{"model.gguf", write_bytes(minimal_document())}});
  });
  kind("tar", "a tar archive holding the minimal GGUF file as model.gguf",
       [] { return tar_of("model.gguf", write_bytes(minimal_document())); });
  kind("safetensors", "a safetensors file with one F32 [2] tensor",
       [] { return safetensors_file(); });
  kind("pytorch-zip", "a PyTorch checkpoint in torch.save's zip format (archive/data.pkl first)",
       [] {
         return zip_of(
             {{"archive/data.pkl", kEmptyDictPickle}, {"archive/version", text_bytes("3\n")}});
       });
  kind("pytorch-legacy",
       "the first records of torch.save's legacy format: its pickled magic number and protocol "
       "version 1001",
       [] {
         return ByteVector{0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a,
                           0xa8, 0x50, 0x19, '.',  0x80, 0x02, 'M',  0xe9, 0x03, '.'};
       });
  kind("pickle", "a Python pickle of an empty dict (protocol 2)", [] { return kEmptyDictPickle; });
  kind("onnx", "an ONNX model with an empty graph (producer pytorch 2.1.0)",
       [] { return onnx_model(); });
}

// --- threats/: one or more files per row of threats.md -----------------------------------------

void add_threats(Registry& r) {
  const auto t = [&r](std::string name, std::string description, std::vector<std::string> codes,
                      std::function<ByteVector()> build) -> Recipe& {
    return r.add("threats/" + std::move(name), std::move(description), std::move(codes),
                 std::move(build));
  };

  // A: header and counts
  t("A1-empty-file", "a file of 0 bytes", {"GGUF1001"}, [] { return ByteVector{}; });
  t("A1-four-byte-file", "only the magic \"GGUF\" (Ollama CVE-2024-39720)", {"GGUF1001"}, [] {
    return ByteVector{'G', 'G', 'U', 'F'};
  });
  t("A1-23-byte-file", "a model's first 23 bytes, one short of the header", {"GGUF1001"},
    [] { return prefix(write_bytes(model_document()), 23); });
  t("A2-legacy-ggml-magic", "a model with the legacy GGML magic as stored (\"lmgg\")", {"GGUF1002"},
    [] { return with_magic(write_bytes(model_document()), "lmgg"); });
  t("A2-legacy-ggjt-magic", "a model with the legacy GGJT magic spelled out (\"GGJT\")",
    {"GGUF1002"}, [] { return with_magic(write_bytes(model_document()), "GGJT"); });
  t("A2-wrong-magic-escape-bytes", "a model whose magic is an escape sequence (\\xff\\x1b[2)",
    {"GGUF1002"}, [] { return with_magic(write_bytes(model_document()), "\xff\x1b[2"); });
  for (const std::uint32_t version : {0u, 4u, 0xFFFFFFFFu}) {
    t("A3-version-" + (version == 0xFFFFFFFFu ? std::string("ffffffff") : std::to_string(version)),
      "a model whose version field is " + std::to_string(version), {"GGUF1003"}, [version] {
        WriteOptions options;
        options.version_field = version;
        return write_bytes(model_document(), options);
      });
  }
  t("A3-version-1", "a genuine version 1 model (32-bit counts and lengths)", {"GGUF1004"}, [] {
    Document d = model_document();
    d.version = 1;
    return write_bytes(d);
  });
  // The counts then read byte-swapped: tensor_count 3 -> 0x0300000000000000, more than the file.
  t("A3-byte-swapped-version-3",
    "a little-endian model whose version alone reads byte-swapped (0x03000000)",
    {"GGUF1006", "GGUF1007"}, [] {
      WriteOptions options;
      options.version_field = 0x03000000u;
      return write_bytes(model_document(), options);
    });
  t("A4-tensor-count-wraps", "a model with tensor_count 0x1D1D1D1D1D1D1D1D (Talos)", {"GGUF1007"},
    [] { return with_counts(model_document(), 0x1D1D1D1D1D1D1D1DULL, std::nullopt); });
  t("A5-kv-count-wraps", "a model with kv_count 0x055555555555555a (x48 wraps 64 bits)",
    {"GGUF1007"},
    [] { return with_counts(model_document(), std::nullopt, 0x055555555555555AULL); });
  t("A6-kv-count-above-pairs", "kv_count 6 for 4 pairs, the file ending inside the last value",
    {"GGUF2001"}, [] {
      const Written w = write(document({pair("general.name", Value::string("x")),
                                        pair("llama.block_count", Value::u32(2)),
                                        pair("llama.context_length", Value::u64(4096))}));
      ByteVector bytes = prefix(w.bytes, w.layout.pairs.back().value_offset + 4);
      patch<std::uint64_t>(bytes, 16, 6);
      return bytes;
    });
  t("A7-tensor-count-2-63", "tensor_count of 2^63", {"GGUF1007"},
    [] { return counts(kPow63, std::nullopt); });
  t("A7-kv-count-all-ones", "kv_count of 2^64 - 1", {"GGUF1007"},
    [] { return counts(std::nullopt, kMax64); });

  // B: strings and keys. Lengths above 2^30 are over llama.cpp's string limit too (GGUF2014).
  t("B1-key-length-all-ones", "a key length of 2^64 - 1 (length + 1 wraps to 0)",
    {"GGUF2002", "GGUF2014"}, [] { return key_length(kMax64); });
  t("B1-value-length-all-ones", "a string value length of 2^64 - 1", {"GGUF2002", "GGUF2014"},
    [] { return value_length(kMax64); });
  t("B1-tensor-name-length-all-ones", "the first of two tensor names with a length of 2^64 - 1",
    {"GGUF2002", "GGUF2014"}, [] { return tensor_name_length(kMax64); });
  t("B1-array-element-length-all-ones", "a string array element of length 2^64 - 1",
    {"GGUF2002", "GGUF2014"}, [] { return element_length(kMax64); });
  t("B2-value-length-2-63", "a string value length of 2^63 (negative as int64)",
    {"GGUF2002", "GGUF2014"}, [] { return value_length(kPow63); });
  t("B2-value-length-just-past-end", "a string value one byte longer than the file holds",
    {"GGUF2002"}, [] {
      const Written w = write(document({pair("my.text", Value::string("hello"))}));
      return value_length(w.bytes.size() - w.layout.pairs[1].value_offset - kWidth + 1);
    });
  t("B3-empty-key", "a metadata key of length 0 (llama.cpp 2025 aborted)", {"GGUF2003"},
    [] { return write_bytes(document({pair("", Value::u32(1))})); });
  t("B4-duplicate-key", "general.name twice with different values", {"GGUF2004"}, [] {
    return write_bytes(document({pair("general.name", Value::string("first")),
                                 pair("general.name", Value::string("last"))}));
  });
  t("B4-duplicate-alignment-key", "general.alignment twice, 32 then 64", {"GGUF2004"}, [] {
    return write_bytes(document(
        {pair("general.alignment", Value::u32(32)), pair("general.alignment", Value::u32(64))}));
  });
  {
    // general.alignment\0x = 64 over tensors a (32 bytes) and b (96 bytes), laid out for 32.
    // ggml reads the key as general.alignment: the llama.cpp profile takes 64, so b's offset
    // 32 is misaligned and not the running sum (64); the data section then starts where the
    // infos end rounded up to 64, which may push b past the end of the file.
    const auto build = [] {
      return write(document({pair(std::string("general.alignment\0x", 19), Value::u32(64))},
                            {tensor("a", {8}), tensor("b", {24})}));
    };
    const Written w = build();
    std::vector<std::string> llama = {"GGUF2005", "GGUF4001", "GGUF4004"};
    const std::uint64_t start64 = (w.layout.infos_end + 63) / 64 * 64;
    if (start64 + 32 + 96 > w.bytes.size()) llama.push_back("GGUF4003");
    t("B5-nul-shadowed-alignment-key",
      "a key general.alignment\\0x = 64 that only C-string readers take as the alignment",
      {"GGUF2005"}, [build] {
        return build().bytes;
      }).per_profile[Profile::LlamaCpp] = llama;
  }
  t("B5-keys-equal-up-to-nul", "keys my.key\\0b and my.key\\0c, one key for C-string readers",
    {"GGUF2005", "GGUF2005"}, [] {
      return write_bytes(document({pair(std::string("my.key\0b", 8), Value::u8(1)),
                                   pair(std::string("my.key\0c", 8), Value::u8(2))}));
    });
  t("B5-control-byte-key", "a key with an ANSI escape sequence (general.\\x1b[31mname)",
    {"GGUF2005"},
    [] { return write_bytes(document({pair("general.\x1b[31mname", Value::u32(1))})); });
  t("B5-non-ascii-key", "a key with UTF-8 letters (g\\xc3\\xa9n\\xc3\\xa9ral.name)", {"GGUF2005"},
    [] { return write_bytes(document({pair("g\xc3\xa9n\xc3\xa9ral.name", Value::u32(1))})); });
  t("B5-key-over-65535-bytes", "a key of 65536 bytes", {"GGUF2007"},
    [] { return write_bytes(document({pair(std::string(65536, 'k'), Value::u8(1))})); });
  t("B6-invalid-utf8-key", "a key with the bytes 0xff 0xfe", {"GGUF2005"},
    [] { return write_bytes(document({pair("general.\xff\xfe", Value::u8(1))})); });
  t("B6-invalid-utf8-value", "general.name with an overlong encoding (0xc0 0xaf)", {"GGUF2013"},
    [] { return write_bytes(document({pair("general.name", Value::string("\xc0\xaf"))})); });
  t("B6-invalid-utf8-array-element", "a general.tags element with a UTF-16 surrogate", {"GGUF2013"},
    [] {
      return write_bytes(document({pair(
          "general.tags", Value::array(ValueType::String, {Value::string("fine"),
                                                           Value::string("ok\xed\xa0\x80")}))}));
    });
  t("B6-invalid-utf8-tensor-name", "a tensor name cut inside a UTF-8 sequence", {"GGUF3005"},
    [] { return write_bytes(document({}, {tensor("blk.cut\xe2\x82", {8})})); });

  // C: value types and arrays
  for (const std::uint32_t type : {13u, 0x7FFFFFFFu, 0xFFFFFFFFu}) {
    t("C1-value-type-" + (type == 13 ? std::string("13") : hex_id(type)),
      "value type " + std::to_string(type) + " followed by a valid pair", {"GGUF2008"}, [type] {
        return write_bytes(document({pair("general.bad", Value::u32(1), type),
                                     pair("general.name", Value::string("after"))}));
      });
  }
  for (const std::uint32_t type : {13u, 0xFFFFFFFFu}) {
    t("C2-array-type-" + (type == 13 ? std::string("13") : hex_id(type)),
      "an array of element type " + std::to_string(type), {"GGUF2009"}, [type] {
        return with_array_type(
                   document({pair("general.list",
                                  Value::array(ValueType::Uint8, {Value::u8(1), Value::u8(2)}))}),
                   1, type)
            .bytes;
      });
  }
  t("C3-nested-array", "an array of two uint8 arrays", {"GGUF2010"}, [] {
    return write_bytes(document(
        {pair("general.nested",
              Value::array(ValueType::Array, {Value::array(ValueType::Uint8, {Value::u8(1)}),
                                              Value::array(ValueType::Uint8, {})}))}));
  });
  t("C3-nested-array-64-deep", "arrays nested 64 deep, the default depth limit", {"GGUF2010"},
    [] { return deeply_nested(63); });
  t("C3-nested-array-1000-deep", "arrays nested 1001 deep (gguf-py RecursionError)",
    {"GGUF0002", "GGUF2010"}, [] { return deeply_nested(1000); });
  t("C4-uint32-count-wraps", "a uint32 array count 0x4000000000000001 (x4 wraps to 4)",
    {"GGUF2011", "GGUF2015"},
    [] { return array_count(ValueType::Uint32, Value::u32(1), 0x4000000000000001ULL); });
  t("C4-string-count-wraps", "a string array count 0x1000000000000001 (x16 wraps)",
    {"GGUF2011", "GGUF2015"},
    [] { return array_count(ValueType::String, Value::string("a"), 0x1000000000000001ULL); });
  t("C4-count-just-above-bytes-left", "a uint8 array of 3 elements whose count says 1000",
    {"GGUF2011"}, [] { return array_count(ValueType::Uint8, Value::u8(1), 1000); });
  t("C5-gibibyte-string-declared", "a string value declaring 2^30 + 1 bytes that are not there",
    {"GGUF2002", "GGUF2014"}, [] { return value_length(kReferenceStringLimit + 1); });
  t("C5-2000-pairs", "2001 small metadata pairs, all present and valid", {}, [] {
    Document d = minimal_document();
    for (int i = 0; i < 2000; ++i) {
      d.metadata.push_back(
          pair("my.key_" + std::to_string(i), Value::u8(static_cast<std::uint8_t>(i))));
    }
    return write_bytes(d);
  });
  t("C5-100000-element-array", "a uint8 array of 100000 elements, all present", {}, [] {
    ByteVector bytes =
        with_array_count(document({pair("my.blob", Value::array(ValueType::Uint8, {}))}), 1, 100000)
            .bytes;
    bytes.resize(bytes.size() + 100000, 0x5A);
    return bytes;
  });
  t("C6-bool-byte-2", "tokenizer.ggml.add_bos_token stored as the byte 2", {"GGUF2012"}, [] {
    return write_bytes(document({pair("tokenizer.ggml.add_bos_token", Value::bool_byte(2))}));
  });
  t("C6-bool-byte-ff-in-array", "a bool array holding 1, 0, 2, 255", {"GGUF2012"}, [] {
    return write_bytes(document(
        {pair("general.flags",
              Value::array(ValueType::Bool, {Value::bool_byte(1), Value::bool_byte(0),
                                             Value::bool_byte(2), Value::bool_byte(255)}))}));
  });

  // D: tensor infos
  t("D1-bad-name-length-then-more-tensors",
    "the second of three tensor names with a length past the end of the file", {"GGUF2002"}, [] {
      const Document d =
          document({}, {tensor("first", {8}), tensor("second", {16}), tensor("third", {8, 2})});
      const Written w = write(d);
      const std::uint64_t site = w.layout.tensors[1].name_offset;
      return with_tensor_name_length(d, 1, w.bytes.size() - site - kWidth + 1).bytes;
    });
  t("D2-tensor-name-64-bytes", "a tensor name of 64 bytes (fine for the spec, not for ggml)",
    {"GGUF3002"}, [] {
      return write_bytes(document({}, {tensor(std::string(64, 'n'), {4})}));
    }).per_profile[Profile::Spec] = {};
  t("D2-tensor-name-65-bytes", "a tensor name of 65 bytes", {"GGUF3002"},
    [] { return write_bytes(document({}, {tensor(std::string(65, 'n'), {4})})); });
  t("D3-duplicate-tensor-name", "two tensors named w", {"GGUF3004"}, [] {
    return write_bytes(document({}, {tensor("w", {4}), tensor("w", {4})}));
  });
  t("D3-empty-tensor-name", "a tensor name of length 0", {"GGUF3003"},
    [] { return write_bytes(document({}, {tensor("", {4})})); });
  t("D3-names-equal-up-to-nul", "tensors a\\0b and a\\0c, one name for C-string readers",
    {"GGUF3004", "GGUF3005", "GGUF3005"}, [] {
      return write_bytes(
          document({}, {tensor(std::string("a\0b", 3), {4}), tensor(std::string("a\0c", 3), {4})}));
    });
  t("D4-n-dims-5", "a tensor of 5 dims", {"GGUF3006"}, [] {
    return write_bytes(document({}, {tensor("w", {1, 1, 1, 1, 1})}));
  });
  // The 2^32 - 1 dims the record declares also run past the end of the file (3001).
  t("D4-n-dims-ffffffff", "a tensor whose n_dims is 0xFFFFFFFF", {"GGUF3006", "GGUF3001"},
    [] { return with_n_dims(document({}, {tensor("w", {4})}), 0, 0xFFFFFFFFu).bytes; });
  t("D5-dim-all-ones", "a tensor whose ne[1] is 2^64 - 1 (-1 as int64)", {"GGUF3007"}, [] {
    return write_bytes(document({}, {tensor("w", {4, kMax64})}));
  });
  t("D6-zero-dim", "a tensor whose ne[2] is 0 (older loaders divide by zero)", {"GGUF3008"}, [] {
    return write_bytes(document({}, {tensor("w", {4, 2, 0})}));
  });
  t("D7-dims-product-wraps-to-zero", "dims [2^62, 4]: the element count wraps to 0", {"GGUF3009"},
    [] {
      return write_bytes(document({}, {tensor("w", {1ULL << 62, 4})}));
    });
  t("D7-dims-product-wraps-small",
    "dims [4194305, 4194305, 211106198978564]: the element count wraps to a tiny number",
    {"GGUF3009"}, [] {
      return write_bytes(document({}, {tensor("w", {4194305, 4194305, 211106198978564ULL})}));
    });
  for (const std::uint32_t type : {43u, 0x40000000u, 0xFFFFFFFFu}) {
    t("D8-tensor-type-" + (type == 43 ? std::string("43") : hex_id(type)),
      "tensor type " + std::to_string(type), {"GGUF3010"},
      [type] { return write_bytes(document({}, {tensor("w", {256}, type)})); });
  }
  for (const std::uint32_t type : {5u, 31u, 36u}) {
    t("D8-removed-tensor-type-" + std::to_string(type),
      "the removed tensor type " + std::to_string(type), {"GGUF3011"},
      [type] { return write_bytes(document({}, {tensor("w", {256}, type)})); });
  }
  t("D9-q4_0-row-of-33", "a Q4_0 tensor whose rows are 33 elements (the block is 32)", {"GGUF3012"},
    [] {
      return write_bytes(document({quantization_version()}, {tensor("w", {33, 2}, kQ4_0)}));
    });
  t("D10-byte-size-wraps-to-4-mib",
    "an I64 tensor of 2^61 + 2^19 elements: 2^64 + 4 MiB bytes (CVE-2026-33298)", {"GGUF3013"}, [] {
      return write_bytes(
          document({}, {tensor("t", {0x2000000000080000ULL}, kI64), tensor("u", {8})}));
    });

  // E: layout and data
  // Three I8 tensors of 0x6000000000000000 bytes at their running offsets: c's end wraps
  // (3013); a and b each run far past the end of the file (4003).
  t("E1-padded-sizes-sum-overflows",
    "three I8 tensors of 0x6000000000000000 bytes (CVE-2025-53630)",
    {"GGUF3013", "GGUF4003", "GGUF4003"}, [] {
      return write_bytes(document(
          {}, {tensor("a", {0x6000000000000000ULL}, kI8), tensor("b", {0x6000000000000000ULL}, kI8),
               tensor("c", {0x6000000000000000ULL}, kI8)}));
    });
  t("E2-padding-wraps-to-zero",
    "an I64 tensor of 0xFFFFFFFFFFFFFFE8 bytes, which padded to 32 wraps to 0", {"GGUF3013"}, [] {
      return write_bytes(
          document({}, {tensor("t", {0x1FFFFFFFFFFFFFFDULL}, kI64), tensor("u", {8})}));
    });
  t("E3-two-huge-tensors-32-bytes",
    "two I8 tensors of 0x7FFFFFFFFFFFFFC0 elements backed by 32 bytes (CVE-2026-27940)",
    {"GGUF4003", "GGUF4003"}, [] {
      Tensor a = tensor("a", {0x7FFFFFFFFFFFFFC0ULL}, kI8);
      a.data = std::vector<std::uint8_t>(32, 0);
      Tensor b = tensor("b", {0x7FFFFFFFFFFFFFC0ULL}, kI8);
      b.data = std::vector<std::uint8_t>();
      return write_bytes(document({}, {a, b}));
    });
  t("E4-data-past-end", "a model cut in the middle of its last tensor's data", {"GGUF4003"}, [] {
    const Written w = write(model_document());
    const WrittenTensor& last = w.layout.tensors.back();
    return prefix(w.bytes, last.data_position + last.nbytes / 2);
  });
  t("E5-misaligned-offset", "tensor b at offset 48 with alignment 32, after a 32-byte tensor",
    {"GGUF4001", "GGUF4004"}, [] { return two_tensors_at(0, 48, 96); });
  t("E5-gap", "tensor b at offset 64 after a 32-byte tensor at 0", {"GGUF4004"},
    [] { return two_tensors_at(0, 64, 96); });
  t("E5-overlapping", "tensors a and b both at offset 0", {"GGUF4002", "GGUF4004"},
    [] { return two_tensors_at(0, 0, 32); });
  t("E5-out-of-order", "tensor a at offset 32, b at 0", {"GGUF4004", "GGUF4004"},
    [] { return two_tensors_at(32, 0, 64); });
  // 2^64 - 1 is misaligned, not the running sum (32), and offset + 32 wraps: past the end.
  t("E5-offset-all-ones", "tensor b at offset 2^64 - 1",
    {"GGUF4001", "GGUF4003", "GGUF4004", "GGUF3013"}, [] { return two_tensors_at(0, kMax64, 64); });
  t("E6-nonzero-padding", "every padding byte is 0xAA", {"GGUF4005"}, [] {
    WriteOptions options;
    options.padding_byte = 0xAA;
    return write_bytes(document({}, {tensor("a", {3}), tensor("b", {5})}), options);
  });
  t("E6-byte-hidden-in-padding", "one byte 0x41 hidden in the padding after the first tensor",
    {"GGUF4005"}, [] {
      Written w = write(document({}, {tensor("a", {3}), tensor("b", {5})}));
      w.bytes.at(w.layout.tensors[0].data_position + 12 + 5) = 0x41;
      return w.bytes;
    });
  t("E6-missing-final-padding", "the last of two tensors is not padded", {"GGUF4007"}, [] {
    WriteOptions options;
    options.pad_after_last_tensor = false;
    return write_bytes(document({}, {tensor("a", {8}), tensor("b", {3})}), options);
  });
  t("E6-trailing-bytes", "1000 bytes 0x42 after a model's data", {"GGUF4008"}, [] {
    WriteOptions options;
    options.trailing = ByteVector(1000, 0x42);
    return write_bytes(model_document(), options);
  });

  // F: general.alignment (laid out with 32, what a reader falls back to after the error)
  const std::vector<std::pair<std::string, Value>> wrong_types = {
      {"int32", Value::i32(32)},
      {"uint16", Value::u16(32)},
      {"uint64", Value::u64(32)},
      {"string", Value::string("32")},
      {"array", Value::array(ValueType::Uint32, {Value::u32(32)})},
  };
  for (const auto& [what, value] : wrong_types) {
    t("F1-alignment-" + what, "general.alignment stored as " + what + " (32)", {"GGUF5001"},
      [value = value] { return alignment_value(value); });
  }
  t("F2-alignment-0", "general.alignment = 0 (Ollama CVE-2025-0317: divide by zero)", {"GGUF5002"},
    [] { return alignment_value(Value::u32(0)); });
  // A non-zero uint32 is the alignment, power of two or not: laid out with it.
  t("F2-alignment-13", "general.alignment = 13, tensors laid out with it", {"GGUF5003", "GGUF5004"},
    [] { return alignment_value(Value::u32(13), 13); });
  t("F2-alignment-48", "general.alignment = 48, tensors laid out with it", {"GGUF5003"},
    [] { return alignment_value(Value::u32(48), 48); });
  // The data section the alignment demands starts past the end of the file (the writer pads
  // to 32): 4006.
  // @huggingface/gguf pads the data offset to 2^31 in 32 bits: -2^31 (9507).
  t("F3-alignment-2-31", "general.alignment = 2^31 with two tensors",
    {"GGUF5005", "GGUF4006", "GGUF9507"}, [] { return alignment_value(Value::u32(0x80000000u)); });
  t("F3-alignment-2-30", "general.alignment = 2^30 with two tensors", {"GGUF5005", "GGUF4006"},
    [] { return alignment_value(Value::u32(0x40000000u)); });

  // G: metadata loaders trust
  const auto tokens = [](std::vector<std::string> texts) {
    std::vector<Value> out;
    for (std::string& s : texts) out.push_back(Value::string(std::move(s)));
    return pair("tokenizer.ggml.tokens", Value::array(ValueType::String, std::move(out)));
  };
  t("G1-scores-int8", "tokenizer.ggml.scores stored as int8[]", {"GGUF5008"}, [tokens] {
    return write_bytes(document(
        {tokens({"a", "b"}), pair("tokenizer.ggml.scores",
                                  Value::array(ValueType::Int8, {Value::i8(0), Value::i8(-1)}))}));
  });
  t("G1-token-type-int8", "tokenizer.ggml.token_type stored as int8[]", {"GGUF5008"}, [tokens] {
    return write_bytes(document(
        {tokens({"a", "b"}), pair("tokenizer.ggml.token_type",
                                  Value::array(ValueType::Int8, {Value::i8(1), Value::i8(1)}))}));
  });
  t("G2-token-type-shorter", "one token_type entry for three tokens", {"GGUF5009"}, [tokens] {
    return write_bytes(
        document({tokens({"a", "b", "c"}), pair("tokenizer.ggml.token_type",
                                                Value::array(ValueType::Int32, {Value::i32(1)}))}));
  });
  t("G3-eos-token-id-ffffffff", "tokenizer.ggml.eos_token_id = 0xFFFFFFFF with two tokens",
    {"GGUF5010"}, [tokens] {
      return write_bytes(document(
          {tokens({"a", "b"}), pair("tokenizer.ggml.eos_token_id", Value::u32(0xFFFFFFFFu))}));
    });
  t("G4-duplicate-token-texts", "tokenizer.ggml.tokens holds \"a\" twice", {}, [tokens] {
    return write_bytes(document({tokens({"<s>", "a", "b", "a"})}));
  }).pending = "a check of tokenizer.ggml.tokens for duplicate token texts";
  t("G5-byte-token-minus-one", "a byte token written <0x-1>", {}, [tokens] {
    return write_bytes(document(
        {pair("tokenizer.ggml.model", Value::string("llama")), tokens({"<unk>", "<0x-1>", "a"}),
         pair("tokenizer.ggml.token_type",
              Value::array(ValueType::Int32, {Value::i32(2), Value::i32(6), Value::i32(1)}))}));
  }).pending = "a check that byte tokens (token_type 6) are <0xHH> with two hex digits";
  t("G6-precompiled-charsmap-short", "tokenizer.ggml.precompiled_charsmap of 2 bytes", {}, [] {
    return write_bytes(
        document({pair("tokenizer.ggml.model", Value::string("t5")),
                  pair("tokenizer.ggml.precompiled_charsmap",
                       Value::array(ValueType::Uint8, {Value::u8(1), Value::u8(2)}))}));
  }).pending = "a check that tokenizer.ggml.precompiled_charsmap holds at least its 4-byte header";
  t("G7-head-count-zero", "llama.attention.head_count = 0 (a divisor)", {}, [] {
    return write_bytes(document({pair("llama.embedding_length", Value::u32(64)),
                                 pair("llama.attention.head_count", Value::u32(0))}));
  }).pending = "a check that {arch}.attention.head_count is non-zero";
  t("G7-block-count-above-tensors", "llama.block_count = 1000 with one block of tensors", {}, [] {
    return write_bytes(document({pair("llama.block_count", Value::u32(1000))},
                                {tensor("blk.0.attn_norm.weight", {8})}));
  }).pending = "a check that {arch}.block_count matches the blk.N tensors";
  t("G7-tiny-image-mean", "clip.vision.image_mean with one float instead of three", {}, [] {
    return write_bytes(document(
        {pair("clip.vision.image_mean", Value::array(ValueType::Float32, {Value::f32(0.5f)}))}));
  }).pending = "a check that clip.vision.image_mean / image_std hold 3 floats";

  // H: content that parses but is hostile
  t("H1-template-sandbox-escape", "a chat template reaching __globals__ and __import__",
    {"GGUF9002", "GGUF9004"}, [] {
      return write_bytes(document({pair(
          "tokenizer.chat_template", Value::string("{{ self.__init__.__globals__.__builtins__"
                                                   ".__import__('os').popen('id').read() }}"))}));
    });
  t("H2-template-huge-range", "a chat template looping over range(1000000000) in a recursive macro",
    {"GGUF9006", "GGUF9007"}, [] {
      return write_bytes(document(
          {pair("tokenizer.chat_template",
                Value::string("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}"
                              "{% for i in range(1000000000) %}{{ f(i) }}{% endfor %}"))}));
    });
  t("H3-bidi-override", "general.name and the chat template hiding text with U+202E and U+200B",
    {"GGUF9013"}, [] {
      return write_bytes(
          document({pair("general.name", Value::string("model\xe2\x80\xae"
                                                       "txt.exe")),
                    pair("tokenizer.chat_template",
                         Value::string("{{ messages }}\xe2\x80\x8b\xe2\x80\xaeignore previous"))}));
    });
}

// --- hostile/: sizes that must be rejected at once ---------------------------------------------

void add_hostile(Registry& r) {
  const auto h = [&r](std::string name, std::string description, std::vector<std::string> codes,
                      std::function<ByteVector()> build) -> Recipe& {
    return r.add("hostile/" + std::move(name), std::move(description), std::move(codes),
                 std::move(build));
  };
  h("kv-count-2-63", "kv_count 2^63", {"GGUF1007"}, [] { return counts(std::nullopt, kPow63); });
  h("kv-count-all-ones", "kv_count 2^64 - 1", {"GGUF1007"},
    [] { return counts(std::nullopt, kMax64); });
  h("tensor-count-2-63", "tensor_count 2^63", {"GGUF1007"},
    [] { return counts(kPow63, std::nullopt); });
  h("tensor-count-all-ones", "tensor_count 2^64 - 1", {"GGUF1007"},
    [] { return counts(kMax64, std::nullopt); });
  h("both-counts-all-ones", "tensor_count and kv_count 2^64 - 1", {"GGUF1007", "GGUF1007"},
    [] { return counts(kMax64, kMax64); });
  h("kv-count-million", "kv_count 10^6 with one pair present", {"GGUF1007"},
    [] { return counts(std::nullopt, 1000000); });
  h("array-2-62-elements", "a uint8 array claiming 2^62 elements", {"GGUF2011", "GGUF2015"},
    [] { return array_count(ValueType::Uint8, Value::u8(1), 1ULL << 62); });
  h("string-array-2-62-elements", "a string array claiming 2^62 elements", {"GGUF2011", "GGUF2015"},
    [] { return array_count(ValueType::String, Value::string("a"), 1ULL << 62); });
  h("float64-array-2-63-elements", "a float64 array claiming 2^63 elements",
    {"GGUF2011", "GGUF2015"},
    [] { return array_count(ValueType::Float64, Value::f64(1), kPow63); });
  h("nested-array-1000-deep", "arrays nested 1001 deep", {"GGUF0002", "GGUF2010"},
    [] { return deeply_nested(1000); });
  h("n-dims-ffffffff", "a tensor info with n_dims 0xFFFFFFFF", {"GGUF3006", "GGUF3001"},
    [] { return with_n_dims(document({}, {tensor("w", {4})}), 0, 0xFFFFFFFFu).bytes; });
  // CVE-2025-53630: offset + padded size wraps; the offset is not the running sum (0) and the
  // data is far past the end.
  h("offset-near-2-64", "a tensor at offset 2^64 - 32", {"GGUF3013", "GGUF4003", "GGUF4004"},
    [] { return write_bytes(document({}, {tensor("w", {8}, kF32, 0ULL - 32)})); });
  h("key-length-all-ones", "a key of length 2^64 - 1", {"GGUF2002", "GGUF2014"},
    [] { return key_length(kMax64); });
  h("value-length-all-ones", "a string value of length 2^64 - 1", {"GGUF2002", "GGUF2014"},
    [] { return value_length(kMax64); });
  h("tensor-name-length-all-ones", "a tensor name of length 2^64 - 1", {"GGUF2002", "GGUF2014"},
    [] { return tensor_name_length(kMax64); });
  h("dims-product-wraps-to-zero", "dims [2^32, 2^32]", {"GGUF3009"}, [] {
    return write_bytes(document({}, {tensor("w", {1ULL << 32, 1ULL << 32})}));
  });
  h("dims-4-x-2-16", "dims [2^16, 2^16, 2^16, 2^16]: 2^64 elements", {"GGUF3009"}, [] {
    return write_bytes(
        document({}, {tensor("w", {1ULL << 16, 1ULL << 16, 1ULL << 16, 1ULL << 16})}));
  });
  h("byte-size-2-64", "an I32 tensor of [2^31, 2^31]: 2^62 elements, 2^64 bytes", {"GGUF3013"}, [] {
    return write_bytes(document({}, {tensor("w", {1ULL << 31, 1ULL << 31}, kI32)}));
  });
  h("f64-padded-size-wraps", "an F64 tensor of 2^61 - 1 elements: padding to 32 wraps",
    {"GGUF3013"},
    [] { return write_bytes(document({}, {tensor("w", {(1ULL << 61) - 1}, kF64)})); });
  h("alignment-2-31", "general.alignment 2^31 with tensors", {"GGUF5005", "GGUF4006", "GGUF9507"},
    [] { return alignment_value(Value::u32(0x80000000u)); });
}

// --- writers/: the course chapter's mistakes (gguf-format.md section 7) ------------------------

void add_writers(Registry& r) {
  const auto w = [&r](std::string name, std::string description, std::vector<std::string> codes,
                      std::function<ByteVector()> build) -> Recipe& {
    return r.add("writers/" + std::move(name), std::move(description), std::move(codes),
                 std::move(build));
  };
  struct Mistake {
    std::string slug, code, what;
    void (*apply)(WriteOptions&);
  };
  const std::vector<Mistake> mistakes = {
      {"nul-terminated-strings", "GGUF1901", "a NUL after every string",
       [](WriteOptions& o) { o.nul_terminated_strings = true; }},
      {"header-alignment-field", "GGUF1902", "a u32 alignment and 4 padding bytes after the counts",
       [](WriteOptions& o) { o.header_alignment_field = true; }},
      {"offset-before-type", "GGUF1903", "each tensor info's offset before its type",
       [](WriteOptions& o) { o.offset_before_type = true; }},
      {"v1-field-widths", "GGUF1904", "32-bit counts and lengths under version 3",
       [](WriteOptions& o) { o.narrow_widths = true; }},
  };
  // The structural errors each misread produces (checked by hand against the bytes; see
  // corpus/README.md): what the correct reader hits first.
  const std::map<std::string, std::vector<std::string>> model_errors = {
      // kv[0]'s value type reads the NUL after the key and 3 bytes of the type: 2048.
      {"nul-terminated-strings", {"GGUF2008"}},
      // As codes/GGUF1902: kv[0]'s key swallows the real length, kv[1]'s key length is "llama".
      {"header-alignment-field", {"GGUF2002", "GGUF2005", "GGUF2014"}},
      // The first tensor (offset 0) reads as F32 at offset type << 32, past the end and not the
      // running sum; the others' types read their offsets' low halves: unknown type ids.
      {"offset-before-type", {"GGUF3010", "GGUF4003", "GGUF4004"}},
      // tensor_count reads both u32 counts as one u64, kv_count the key length and "gene".
      {"v1-field-widths", {"GGUF1007"}},
  };
  for (const Mistake& m : mistakes) {
    std::vector<std::string> codes = model_errors.at(m.slug);
    codes.push_back(m.code);
    w(m.slug + "-model", "the test model written with " + m.what, codes, [m] {
      WriteOptions options;
      m.apply(options);
      return write_bytes(model_document(), options);
    });
    w(m.slug + "-realistic-model", "a 1000-token llama-shaped model written with " + m.what, codes,
      [m] {
        WriteOptions options;
        m.apply(options);
        return write_bytes(model(writer_model()), options);
      });
  }
  w("all-four-mistakes-model", "the test model written with all four of the chapter's mistakes",
    // tensor_count reads both u32 counts (impossible; the metadata is still read), kv_count the
    // alignment and padding (32), kv[0]'s key length the u32 length 20 and "gene": 2002, 2014.
    {"GGUF1007", "GGUF2002", "GGUF2014", "GGUF1901", "GGUF1902", "GGUF1903", "GGUF1904"}, [] {
      WriteOptions options;
      options.nul_terminated_strings = true;
      options.header_alignment_field = true;
      options.offset_before_type = true;
      options.narrow_widths = true;
      return write_bytes(model_document(), options);
    });
}

// --- valid/ ------------------------------------------------------------------------------------

void add_valid(Registry& r) {
  const auto v = [&r](std::string name, std::string description, std::vector<std::string> codes,
                      std::function<ByteVector()> build) -> Recipe& {
    return r.add("valid/" + std::move(name), std::move(description), std::move(codes),
                 std::move(build));
  };
  v("minimal", "the smallest file strict passes: the header and general.architecture", {},
    [] { return write_bytes(minimal_document()); });
  v("no-metadata", "the 24-byte header alone (no general.architecture)", {"GGUF5006"},
    [] { return write_bytes(Document{}); });
  v("no-tensors-padded", "no tensors, padded to 32 like ggml's C writer", {}, [] {
    WriteOptions options;
    options.pad_when_no_tensors = true;
    return write_bytes(minimal_document(), options);
  });
  v("test-model", "the unit tests' small model: a tokenizer and F16, Q8_0, F32 tensors", {},
    [] { return write_bytes(model_document()); });
  v("version-2", "the test model as version 2", {"GGUF1005"}, [] {
    Document d = model_document();
    d.version = 2;
    return write_bytes(d);
  });
  v("version-3", "the test model as version 3", {}, [] { return write_bytes(model_document()); });
  v("big-endian-minimal", "the minimal file written big-endian", {"GGUF1006"}, [] {
    Document d = minimal_document();
    d.endian = Endian::Big;
    return write_bytes(d);
  });
  v("big-endian-model", "the test model written big-endian", {"GGUF1006"}, [] {
    Document d = model_document();
    d.endian = Endian::Big;
    return write_bytes(d);
  });

  // Every value type, as a scalar and as an array.
  struct Scalar {
    std::string name;
    Value value, other;
  };
  const std::vector<Scalar> scalars = {
      {"uint8", Value::u8(200), Value::u8(0)},
      {"int8", Value::i8(-100), Value::i8(127)},
      {"uint16", Value::u16(60000), Value::u16(1)},
      {"int16", Value::i16(-30000), Value::i16(2)},
      {"uint32", Value::u32(4000000000u), Value::u32(3)},
      {"int32", Value::i32(-2000000000), Value::i32(4)},
      {"float32", Value::f32(3.25f), Value::f32(-0.0f)},
      {"bool", Value::boolean(true), Value::boolean(false)},
      {"string", Value::string("a string value"), Value::string("another")},
      {"uint64", Value::u64(18000000000000000000ULL), Value::u64(5)},
      {"int64", Value::i64(-9000000000000000000LL), Value::i64(6)},
      {"float64", Value::f64(2.718281828459045), Value::f64(1e300)},
  };
  for (const Scalar& s : scalars) {
    v("value-" + s.name, "one " + s.name + " value", {},
      [s] { return write_bytes(document({pair("my.value", s.value)})); });
    v("array-" + s.name, "an array of three " + s.name + " values", {}, [s] {
      return write_bytes(
          document({pair("my.values", Value::array(s.value.type, {s.value, s.other, s.value}))}));
    });
  }
  v("empty-string", "a string value of length 0", {},
    [] { return write_bytes(document({pair("my.text", Value::string(""))})); });
  v("empty-array", "a uint32 array of 0 elements", {},
    [] { return write_bytes(document({pair("my.values", Value::array(ValueType::Uint32, {}))})); });
  v("empty-string-array", "a string array of 0 elements, then one of two empty strings", {}, [] {
    return write_bytes(
        document({pair("my.none", Value::array(ValueType::String, {})),
                  pair("my.empties",
                       Value::array(ValueType::String, {Value::string(""), Value::string("")}))}));
  });
  v("non-ascii-utf8", "strings in Latin, Cyrillic, CJK and emoji, as values and array elements", {},
    [] {
      return write_bytes(document(
          {pair("general.name",
                Value::string("mod\xc3\xa8le \xd0\xbc\xd0\xbe\xd0\xb4\xd0\xb5\xd0\xbb\xd1\x8c")),
           pair("general.description", Value::string("\xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\xa6\x99")),
           pair("general.tags",
                Value::array(ValueType::String, {Value::string("\xc3\xa9t\xc3\xa9"),
                                                 Value::string("\xf0\x9f\x98\x80\xf0\x9f\x8e\x89"),
                                                 Value::string("\xe0\xa4\xb9\xe0\xa4\xbf")}))},
          {tensor("blk.0.\xc3\xa9", {4})}));
    });

  // Every tensor type id that is not removed, each with one row of one block.
  for (std::uint32_t id = 0; id < kTensorTypeCount; ++id) {
    const TensorTypeInfo* info = tensor_type(id);
    if (info == nullptr || info->removed()) continue;
    std::vector<std::string> codes;
    if (info->recent()) codes.push_back("GGUF3014");
    const std::string name = (id < 10 ? "0" : "") + std::to_string(id) + "-" + lower(info->name);
    v("tensor-type-" + name,
      "one tensor of type " + std::string(info->name) + " (id " + std::to_string(id) +
          "), two rows of one block",
      codes, [id, info] {
        std::vector<KeyValue> pairs;
        if (info->quantized()) pairs.push_back(quantization_version());
        return write_bytes(document(pairs, {tensor("w", {info->block_size, 2}, id)}));
      });
  }

  // Alignments 1 .. 4096 over two tensors of 12 and 20 bytes (padding between and after).
  for (std::uint32_t a = 1; a <= 4096; a *= 2) {
    std::vector<std::string> codes;
    if (a < 8) codes.push_back("GGUF5004");
    v("alignment-" + std::to_string(a),
      "general.alignment = " + std::to_string(a) + " over two tensors of 12 and 20 bytes", codes,
      [a] {
        return write_bytes(document({pair("general.alignment", Value::u32(a))},
                                    {tensor("a", {3}), tensor("b", {5})}));
      });
  }

  v("zero-size-tensor", "a tensor of dims [0] (empty; a zero dim)", {"GGUF3008"}, [] {
    return write_bytes(document({}, {tensor("empty", {0}), tensor("w", {4})}));
  });
  v("scalar-tensor", "a tensor of n_dims 0", {"GGUF3015"},
    [] { return write_bytes(document({}, {tensor("scale", {})})); });
  v("tensor-name-63-bytes", "a tensor name of 63 bytes, the longest ggml accepts", {},
    [] { return write_bytes(document({}, {tensor(std::string(63, 'n'), {4})})); });
  v("four-dims", "a tensor of 4 dims", {}, [] {
    return write_bytes(document({}, {tensor("w", {2, 3, 4, 5})}));
  });
  v("vocab-only", "a tokenizer-only file of 3000 tokens without tensors, like real vocab files", {},
    [] {
      Document d = model(spm_q8_0());
      d.tensors.clear();
      return write_bytes(d);
    });
  v("model-llama-spm-q8_0",
    "a llama-shaped model: SentencePiece vocabulary of 3000 tokens, Q8_0 weights", {},
    [] { return write_bytes(model(spm_q8_0())); });
  v("model-llama-bpe-q4_k",
    "a llama-shaped model: GPT-2 BPE vocabulary of 1500 tokens with merges, Q2_K/Q4_K/Q6_K "
    "weights",
    {}, [] { return write_bytes(model(bpe_q4_k())); });
  v("model-llama-spm-mixed",
    "a llama-shaped model: 4000 tokens, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, F16, BF16, Q8_0 weights",
    {}, [] { return write_bytes(model(spm_mixed())); });
}

}  // namespace

std::vector<Recipe> recipes() {
  Registry registry;
  add_valid(registry);
  add_codes(registry);
  add_not_gguf(registry);
  add_threats(registry);
  add_hostile(registry);
  add_writers(registry);
  std::vector<Recipe> list = registry.take();
  std::sort(list.begin(), list.end(), [](const Recipe& a, const Recipe& b) { return a.id < b.id; });
  for (std::size_t i = 1; i < list.size(); ++i) {
    if (list[i].id == list[i - 1].id) throw std::runtime_error("duplicate corpus id " + list[i].id);
  }
  return list;
}

}  // namespace ggufcheck::corpus
