#include "fixtures.hpp"

#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>

#include "documents.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "hostile.hpp"
#include "templates/known_templates.hpp"

namespace ggufcheck::bench {

namespace fs = std::filesystem;

TempDir::TempDir() {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec)
    throw BenchError(fmt::format("cannot use the temporary directory (TMPDIR): {}", ec.message()));
  std::string pattern = (base / "ggufcheck-bench-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw BenchError(
        fmt::format("cannot create a directory like {}: {}", pattern, std::strerror(errno)));
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;  // nothing useful to do about a leftover temporary file
  fs::remove_all(path_, ignored);
}

void write_file(const fs::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    throw BenchError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
}

void read_through(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chunk(1U << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()))) {
  }
  if (in.bad() || !in.eof())
    throw BenchError(fmt::format("cannot read {}: {}", path.string(), std::strerror(errno)));
}

namespace {

// splitmix64: the same file on every platform, unlike <random>'s distributions.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  bool percent(unsigned p) { return below(100) < p; }
  template <typename T, std::size_t N>
  const T& pick(const std::array<T, N>& items) {
    return items[below(N)];
  }

 private:
  std::uint64_t state_;
};

// Pieces of real vocabularies: English sub-words, and other scripts (2- to 3-byte UTF-8).
constexpr std::array<std::string_view, 40> kLatinPieces = {
    "th",  "e",     "in",  "an",  "er",   "on",  "re",   "at",   "en",   "ing",
    "st",  "al",    "ou",  "ly",  "tion", "ed",  "es",   "or",   "ar",   "ic",
    "ent", "ation", "pro", "con", "com",  "ver", "ment", "able", "ight", "ers",
    "ous", "ive",   "un",  "der", "man",  "ist", "ity",  "ph",   "qu",   "x"};
constexpr std::array<std::string_view, 24> kOtherPieces = {
    "при", "ние", "ств", "ого", "日本", "語", "の", "中文", "学", "して", "é",  "ç",
    "ü",   "ß",   "ő",   "ñ",   "και",  "λη", "ال", "ية",   "में",  "한국", "어", "ţi"};
constexpr std::string_view kWordStart = "\xE2\x96\x81";  // U+2581, SentencePiece's word mark

// One ordinary token: an optional word-start mark, one to six pieces (a fifth of the tokens in
// a script other than Latin), sometimes a stray letter. The lengths are tuned so that 250k
// tokens and merges make the ~16 MB of design.md.
std::string ordinary_token(Rng& rng) {
  std::string text;
  if (rng.percent(50)) text += kWordStart;
  const bool other_script = rng.percent(20);
  const std::size_t pieces = 1 + rng.below(6);
  for (std::size_t i = 0; i < pieces; ++i) {
    text += other_script ? rng.pick(kOtherPieces) : rng.pick(kLatinPieces);
  }
  if (rng.percent(15)) text += static_cast<char>('a' + rng.below(26));
  return text;
}

void add(Document& doc, std::string key, Value value) {
  doc.metadata.push_back({std::move(key), std::move(value), {}});
}

// llama.cpp's token types.
constexpr std::int32_t kNormal = 1, kUnknown = 2, kControl = 3, kByte = 6;

}  // namespace

namespace {

std::vector<std::uint8_t> template_document(const std::string& text) {
  Document doc;
  doc.metadata.push_back({"general.architecture", Value::string("llama"), {}});
  doc.metadata.push_back({"tokenizer.chat_template", Value::string(text), {}});
  return write_bytes(doc);
}

}  // namespace

std::vector<std::uint8_t> template_file(std::size_t bytes) {
  // The known templates one after another, each kept only where the whole still has no error:
  // two templates' macros of one name can bring a name from one's text to the other's subscript
  // (GGUF9003), which no real template does. The checks are the container's (no model).
  Options container;
  container.model_checks = false;
  const auto clean = [&](const std::string& text) {
    const std::vector<std::uint8_t> file = template_document(text);
    return validate({file.data(), file.size()}, container).errors == 0;
  };
  std::string text;
  std::size_t added = 1;
  while (text.size() < bytes && added > 0) {
    added = 0;
    for (const detail::KnownTemplate& known : detail::known_templates()) {
      std::string longer = text + std::string(known.text);
      if (!clean(longer)) continue;
      text = std::move(longer);
      ++added;
      if (text.size() >= bytes) break;
    }
  }
  return template_document(text);
}

std::vector<std::uint8_t> tokenizer_file(std::size_t vocab_size) {
  Rng rng(0x67677566);
  std::vector<Value> tokens, scores, types, merges;
  tokens.reserve(vocab_size);
  scores.reserve(vocab_size);
  types.reserve(vocab_size);
  merges.reserve(vocab_size);

  // The layout of a SentencePiece vocabulary: specials, the 256 byte tokens, then the rest, unique.
  std::unordered_set<std::string> seen;
  auto add_token = [&](std::string text, std::int32_t type) {
    seen.insert(text);
    scores.push_back(Value::f32(-static_cast<float>(tokens.size())));
    types.push_back(Value::i32(type));
    tokens.push_back(Value::string(std::move(text)));
  };
  add_token("<unk>", kUnknown);
  add_token("<s>", kControl);
  add_token("</s>", kControl);
  for (unsigned byte = 0; byte < 256 && tokens.size() < vocab_size; ++byte) {
    add_token(fmt::format("<0x{:02X}>", byte), kByte);
  }
  while (tokens.size() < vocab_size) {
    std::string text = ordinary_token(rng);
    if (!seen.contains(text)) add_token(std::move(text), kNormal);
  }
  // BPE merges are "left right" pairs of tokens.
  while (merges.size() < vocab_size) {
    const std::string& left = tokens[rng.below(vocab_size)].text;
    const std::string& right = tokens[rng.below(vocab_size)].text;
    merges.push_back(Value::string(left + " " + right));
  }

  Document doc;
  add(doc, "general.architecture", Value::string("llama"));
  add(doc, "general.name", Value::string("ggufcheck benchmark tokenizer"));
  add(doc, "general.type", Value::string("vocab"));
  add(doc, "tokenizer.ggml.model", Value::string("llama"));
  add(doc, "tokenizer.ggml.tokens", Value::array(ValueType::String, std::move(tokens)));
  add(doc, "tokenizer.ggml.scores", Value::array(ValueType::Float32, std::move(scores)));
  add(doc, "tokenizer.ggml.token_type", Value::array(ValueType::Int32, std::move(types)));
  add(doc, "tokenizer.ggml.merges", Value::array(ValueType::String, std::move(merges)));
  add(doc, "tokenizer.ggml.unknown_token_id", Value::u32(0));
  add(doc, "tokenizer.ggml.bos_token_id", Value::u32(1));
  add(doc, "tokenizer.ggml.eos_token_id", Value::u32(2));
  add(doc, "tokenizer.ggml.add_bos_token", Value::boolean(true));
  add(doc, "tokenizer.chat_template",
      Value::string("{% for message in messages %}<s>{{ message['role'] }}\n"
                    "{{ message['content'] }}</s>\n{% endfor %}"));
  return write_bytes(doc);
}

namespace {

// The capacity of the old table for `entries` names.
std::size_t unseeded_table_capacity(std::size_t entries) {
  std::size_t capacity = 16;
  while (capacity < entries * 2) capacity *= 2;
  return capacity;
}

// "key." and six base-36 digits of n, the same length as the ordinary "key.000001".
std::string base36_key(std::uint64_t n) {
  constexpr std::string_view kDigits = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string key = "key.000000";
  for (std::size_t i = key.size(); i-- > 4; n /= 36) key[i] = kDigits[n % 36];
  return key;
}

// `count` distinct keys whose std::hash, masked to the old table's capacity for the file's
// entries (these keys and general.architecture), falls in its lowest 1/256: a brute-force
// search through about 256 * count candidates (a fraction of a second for 10^5).
std::vector<std::string> colliding_keys(std::size_t count) {
  const std::size_t capacity = unseeded_table_capacity(count + 1);
  const std::size_t slots = capacity / 256;
  std::vector<std::string> keys;
  keys.reserve(count);
  for (std::uint64_t n = 0; keys.size() < count; ++n) {
    std::string key = base36_key(n);
    if ((std::hash<std::string_view>{}(key) & (capacity - 1)) < slots) keys.push_back(key);
  }
  return keys;
}

}  // namespace

std::vector<std::uint8_t> keys_file(std::size_t count, KeyShape shape) {
  std::vector<std::string> keys;
  if (shape == KeyShape::Colliding) {
    keys = colliding_keys(count);
  } else {
    keys.reserve(count);
    for (std::size_t i = 1; i <= count; ++i) keys.push_back(fmt::format("key.{:06}", i));
  }
  Document doc = testing::minimal_document();
  for (std::string& key : keys) add(doc, std::move(key), Value::u8(1));
  return write_bytes(doc);
}

namespace {

constexpr std::uint32_t kGgmlF32 = 0;  // ggml's type id

void write_or_throw(std::ofstream& out, const fs::path& path, const void* data, std::size_t size) {
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out)
    throw BenchError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
}

}  // namespace

std::vector<std::uint8_t> tensors_file(std::size_t count) {
  constexpr std::uint64_t kElements = 32 / sizeof(float);
  Document doc = testing::minimal_document();
  doc.tensors.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    doc.tensors.push_back({fmt::format("t{:06}", i), {kElements}, kGgmlF32, {}, {}});
  }
  return write_bytes(doc);
}

void write_sparse_alignment_file(const fs::path& path, std::uint32_t alignment) {
  Document doc = testing::minimal_document();
  add(doc, "general.alignment", Value::u32(alignment));
  doc.tensors.push_back(
      {"sparse", {alignment / sizeof(float)}, kGgmlF32, {}, std::vector<std::uint8_t>{}});
  // The writer pads in memory: told a small alignment, it writes the same header and infos, of
  // which the file keeps those alone; the rest up to the data's end is a hole, zeros as padding
  // and this tensor's data may be.
  WriteOptions small_padding;
  small_padding.alignment = kDefaultAlignment;
  Written written = write(doc, small_padding);
  written.bytes.resize(written.layout.infos_end);
  write_file(path, written.bytes);
  fs::resize_file(path, 2 * static_cast<std::uint64_t>(alignment));
}

void write_long_string_file(const fs::path& path, std::uint64_t length) {
  // The file ends with the empty string's length, set to `length`; the string's bytes follow.
  const Written written = testing::with_string_length(
      testing::document({testing::pair("bench.long_string", Value::string(""))}), 1, length);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  write_or_throw(out, path, written.bytes.data(), written.bytes.size());
  constexpr std::string_view kText = "a benchmark string that goes on and on; ";
  std::string chunk;
  while (chunk.size() < (1U << 20)) chunk += kText;
  for (std::uint64_t left = length; left > 0;) {
    const auto size = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
    write_or_throw(out, path, chunk.data(), size);
    left -= size;
  }
  out.close();
  if (!out)
    throw BenchError(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
}

std::uint64_t allocated_bytes(const fs::path& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) != 0)
    throw BenchError(fmt::format("cannot stat {}: {}", path.string(), std::strerror(errno)));
  return static_cast<std::uint64_t>(status.st_blocks) * 512;  // st_blocks counts 512-byte units
}

std::vector<HostileFile> hostile_files() {
  constexpr std::uint64_t kTwo63 = 1ULL << 63;
  constexpr std::uint64_t kTwo62 = 1ULL << 62;
  using testing::minimal_document;
  using testing::with_counts;
  // A valid file with one small array, whose element count is then patched to claim `count`.
  const auto huge_array = [](std::string name, ValueType element_type, Value element,
                             std::uint64_t count) {
    const Document doc = testing::document({testing::pair(
        "bench.huge_array", Value::array(element_type, std::vector<Value>(4, element)))});
    return HostileFile{std::move(name), testing::with_array_count(doc, 1, count).bytes};
  };
  // A header claiming `count` in one of its two count fields; the file holds one pair and no
  // tensor.
  return {
      {"kv_count 2^63-1", with_counts(minimal_document(), std::nullopt, kTwo63 - 1)},
      {"kv_count 2^63", with_counts(minimal_document(), std::nullopt, kTwo63)},
      {"tensor_count 2^63-1", with_counts(minimal_document(), kTwo63 - 1, std::nullopt)},
      {"tensor_count 2^63", with_counts(minimal_document(), kTwo63, std::nullopt)},
      huge_array("uint8 array of 2^62", ValueType::Uint8, Value::u8(7), kTwo62),
      huge_array("string array of 2^62", ValueType::String, Value::string("tok"), kTwo62),
  };
}

}  // namespace ggufcheck::bench
