// The vocabulary as the pinned llama.cpp's llama_vocab::impl::load (src/llama-vocab.cpp) reads
// it: what makes it refuse the file (a C++ exception, which llama_model_load_from_file turns into
// "error loading model vocabulary") or abort (GGML_ASSERT, GGML_ABORT, a division by zero) while
// loading it. The names it accepts and the keys it reads come from its source
// (generated/llama_vocab.inc, written by validator/tools/llama_tables/vocab.py); the rules below
// follow load() in order, each with the source lines it models.
//
// Where llama.cpp stops at its first throw, this check reports every fault it can still judge:
// the verdict is the same, and a file with two faults shows both.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "index/keys.hpp"
#include "index/values.hpp"
#include "llama_loader/interpreter.hpp"
#include "llama_loader/loader.hpp"
#include "llama_loader/token_index.hpp"

namespace ggufcheck::detail {
namespace {

// --- the tables from llama.cpp's source --------------------------------------------------------

enum class VocabType : std::uint8_t { NONE, SPM, BPE, WPM, UGM, RWKV, PLAMO2, TEST };
enum class Phase : std::uint8_t { All, NoVocab, Vocab };
enum class Subject : std::uint8_t { ModelName, TokenizerPre, Architecture };

struct TokenizerRow {
  std::string_view name;
  VocabType type;
  bool merges;                     // reads tokenizer.ggml.merges: missing, it throws
  std::string_view merges_excuse;  // the tokenizer.ggml.pre under which missing merges are fine
  bool charsmap;                   // reads tokenizer.ggml.precompiled_charsmap
  std::string_view forced_pre;     // the pre-tokenizer it sets, whatever the key says
  bool no_vocab;                   // returns before reading any token
};
constexpr TokenizerRow kTokenizers[] = {
#define GGUFCHECK_LLAMA_TOKENIZER(name, type, merges, excuse, charsmap, forced, returns, line) \
  {name, VocabType::type, merges, excuse, charsmap, forced, returns},
#include "llama_loader/generated/llama_vocab.inc"
};

constexpr VocabType kPreTokenizerTypes[] = {
#define GGUFCHECK_LLAMA_PRE_TOKENIZERS_OF(type, line) VocabType::type,
#include "llama_loader/generated/llama_vocab.inc"
};

struct PreTokenizerRow {
  std::string_view name;
  bool escape_whitespaces;  // tokens keep U+2581 for spaces: they are not byte-decoded
};
constexpr PreTokenizerRow kPreTokenizers[] = {
#define GGUFCHECK_LLAMA_PRE_TOKENIZER(name, pre, escape, line) {name, escape},
#include "llama_loader/generated/llama_vocab.inc"
};

struct KeyRow {
  std::string_view key;  // "%s" is the architecture's name
  ValueType type;
  bool required;
  Phase phase;
};
constexpr KeyRow kKeys[] = {
#define GGUFCHECK_LLAMA_VOCAB_KEY(key, type, required, phase, line) \
  {key, ValueType::type, required, Phase::phase},
#include "llama_loader/generated/llama_vocab.inc"
};

constexpr std::string_view kMarkedTokens[] = {
#define GGUFCHECK_LLAMA_MARKED_TOKEN(text, line) text,
#include "llama_loader/generated/llama_vocab.inc"
};

struct NameRule {
  int rule;
  Subject subject;
  std::string_view substring;
};
constexpr NameRule kNameRules[] = {
#define GGUFCHECK_LLAMA_NAME_RULE(rule, subject, substring, line) \
  {rule, Subject::subject, substring},
#include "llama_loader/generated/llama_vocab.inc"
};

struct RuleToken {
  int rule;
  std::string_view token;
};
constexpr RuleToken kRuleTokens[] = {
#define GGUFCHECK_LLAMA_NAME_RULE_TOKEN(rule, token, line) {rule, token},
#include "llama_loader/generated/llama_vocab.inc"
};

// The arrays load() reads with gguf_find_key and the types it requires of them (its "invalid
// gguf type" throws).
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";         // string[]
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";         // float32[], int32[]
constexpr std::string_view kTokenTypeKey = "tokenizer.ggml.token_type";  // int32[]
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";         // string[]
constexpr std::string_view kCharsmapKey = "tokenizer.ggml.precompiled_charsmap";  // (u)int8[]
constexpr std::string_view kSuppressKey = "tokenizer.ggml.suppress_tokens";       // int32[]
constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kPreKey = "tokenizer.ggml.pre";
constexpr std::string_view kNameKey = "general.name";
constexpr std::string_view kArchitectureKey = "general.architecture";

// llama_token_type (include/llama.h), as load() turns token_type values into attributes: any
// value outside 1..6 is UNDEFINED.
enum class TokenClass : std::uint8_t {
  Undefined,
  Normal,
  Unknown,
  Control,
  UserDefined,
  Unused,
  Byte
};
TokenClass token_class(std::int32_t value) {
  return value >= 1 && value <= 6 ? static_cast<TokenClass>(value) : TokenClass::Undefined;
}

// The special token id llama.cpp falls back to before it reads the keys (load(), the t5 branch):
// t5's unknown token is 2 (its padding token, and bert's, is 0: present in any vocabulary with
// tokens).
constexpr std::uint32_t kUgmUnknownToken = 2;

std::string_view type_name(ValueType type) {
  return to_string(type);
}

std::string describe_type(const FileIndex& index, std::size_t kv) {
  const ValueType type = index.metadata[kv].type();
  if (type == ValueType::Array) return fmt::format("{}[]", to_string(index.array(kv).elements()));
  return std::string(to_string(type));
}

bool is_array_of(const FileIndex& index, std::size_t kv, ValueType element) {
  return index.metadata[kv].type() == ValueType::Array && index.array(kv).elements() == element;
}

bool marked(std::string_view text) {
  return std::find(std::begin(kMarkedTokens), std::end(kMarkedTokens), text) !=
         std::end(kMarkedTokens);
}

// unicode_cpts_from_utf8 then unicode_cpt_to_utf8 (src/unicode.cpp), as llama_decode_text and
// PLaMo-2's tokenizer run them: invalid bytes become U+FFFD, but a well-formed 4-byte sequence
// above U+10FFFF (F4 90.., F5..F7) decodes to a code point that unicode_cpt_to_utf8 throws on.
bool has_codepoint_above_unicode(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto continuation = [&](std::size_t i) { return (byte(i) & 0xC0) == 0x80; };
  std::size_t o = 0;
  while (o < s.size()) {
    const unsigned c = byte(o);
    if ((c & 0x80) == 0 || (c & 0x40) == 0) {
      ++o;
    } else if ((c & 0x20) == 0) {
      o += o + 1 < s.size() && continuation(o + 1) ? 2U : 1U;
    } else if ((c & 0x10) == 0) {
      o += o + 2 < s.size() && continuation(o + 1) && continuation(o + 2) ? 3U : 1U;
    } else if ((c & 0x08) == 0) {
      if (o + 3 < s.size() && continuation(o + 1) && continuation(o + 2) && continuation(o + 3)) {
        const std::uint32_t cpt = ((c & 0x07u) << 18) | ((byte(o + 1) & 0x3Fu) << 12) |
                                  ((byte(o + 2) & 0x3Fu) << 6) | (byte(o + 3) & 0x3Fu);
        if (cpt > 0x10FFFF) return true;
        o += 4;
      } else {
        ++o;
      }
    } else {
      ++o;
    }
  }
  return false;
}

// --- the check ---------------------------------------------------------------------------------

// The keys load() reads, with an architecture's name in them: kKeys' names (names[r] for
// kKeys[r]) and the position of each name among the distinct ones (the arrays' first).
struct KeyNames {
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names;
  std::unordered_map<std::string, std::size_t, Hash, std::equal_to<>> slots;

  explicit KeyNames(std::string_view arch) {
    for (const std::string_view key :
         {kTokensKey, kScoresKey, kTokenTypeKey, kMergesKey, kCharsmapKey, kSuppressKey}) {
      slots.emplace(std::string(key), slots.size());
    }
    for (const KeyRow& row : kKeys) {
      std::string key(row.key);
      if (const std::size_t at = key.find("%s"); at != std::string::npos) key.replace(at, 2, arch);
      slots.emplace(key, slots.size());
      names.push_back(std::move(key));
    }
  }
};

// The key names of an architecture llama.cpp knows, made once and kept: every file's check
// made them anew (twice, for index_keys and check_keys). Another name, which the file chooses,
// is not kept: nullptr.
const KeyNames* known_key_names(std::string_view arch) {
  if (!known_architecture(arch)) return nullptr;
  static std::mutex mutex;
  static std::map<std::string, KeyNames, std::less<>> made;
  const std::lock_guard lock(mutex);
  if (const auto it = made.find(arch); it != made.end()) return &it->second;
  return &made.try_emplace(std::string(arch), arch).first->second;
}

class VocabularyCheck {
 public:
  VocabularyCheck(const FileIndex& index, Sink& sink, TokenIndexObserver* tokens)
      : m_(index), sink_(sink), token_index_(tokens) {}

  void run() {
    index_keys();
    check_keys(Phase::All);
    if (!kv(kModelKey)) {
      missing_model();  // load() reads nothing before it, and nothing without it
      return;
    }
    const TokenizerRow* tokenizer = tokenizer_model();
    if (tokenizer != nullptr && tokenizer->no_vocab) {
      check_keys(Phase::NoVocab);  // then load() returns: nothing else is read
      return;
    }
    if (tokenizer != nullptr) {
      check_merges(*tokenizer);
      check_charsmap(*tokenizer);
      check_pre_tokenizer(*tokenizer);
    }
    check_keys(Phase::Vocab);
    check_suppress_tokens();
    if (!check_arrays()) return;
    check_tokens(tokenizer);
  }

 private:
  // --- keys --------------------------------------------------------------------------------------

  // Every key load() reads, found in one pass over the pairs (the first of each, by C string:
  // gguf_find_key compares keys with strcmp).
  void index_keys() {
    if (const auto arch = find_key(m_, kArchitectureKey, Profile::LlamaCpp);
        arch && m_.metadata[*arch].type() == ValueType::String) {
      arch_ = c_string_prefix(m_.string_value(*arch));
    }
    names_ = known_key_names(arch_);
    if (names_ == nullptr) names_ = &own_names_.emplace(arch_);
    keys_.assign(names_->slots.size(), kNotFound);
    std::size_t missing = keys_.size();
    for (std::size_t i = 0; i < m_.metadata.size() && missing > 0; ++i) {
      const auto it = names_->slots.find(c_string_prefix(m_.key(i)));
      if (it != names_->slots.end() && keys_[it->second] == kNotFound) {
        keys_[it->second] = i;
        --missing;
      }
    }
  }

  // Where a finding about pair i points: the whole pair. A missing key's: the first pair, no
  // bytes (as the model checks point).
  [[nodiscard]] std::uint64_t pair_offset(std::size_t i) const {
    return m_.metadata[i].key_offset();
  }
  [[nodiscard]] std::uint64_t pair_length(std::size_t i) const {
    return m_.pair_end(i) - m_.metadata[i].key_offset();
  }
  [[nodiscard]] std::uint64_t missing_offset() const {
    return m_.metadata.size() > 0 ? m_.metadata[0].key_offset() : 0;
  }

  [[nodiscard]] const std::string& key_name(const KeyRow& row) const {
    return names_->names[static_cast<std::size_t>(&row - kKeys)];
  }

  [[nodiscard]] std::optional<std::size_t> kv(std::string_view key) const {
    const auto it = names_->slots.find(key);
    if (it == names_->slots.end() || keys_[it->second] == kNotFound) return std::nullopt;
    return keys_[it->second];
  }

  // A string key as ml.get_key reads it (a C string), when it is a string.
  [[nodiscard]] std::optional<std::string_view> string_key(std::string_view key) const {
    const auto i = kv(key);
    if (!i || m_.metadata[*i].type() != ValueType::String) return std::nullopt;
    return c_string_prefix(m_.string_value(*i));
  }

  // ml.get_key throws on a key of another type than the one it reads into, required or not
  // (llama-model-loader.cpp, GGUFMeta::GKV::get_kv). load() reads general.name and
  // general.architecture too, at its end.
  void check_keys(Phase phase) {
    for (const KeyRow& row : kKeys) {
      if (row.phase != phase) continue;
      if (row.key.find("%s") != std::string_view::npos && arch_.empty()) continue;
      const std::string& key = key_name(row);
      const auto i = kv(key);
      if (!i || m_.metadata[*i].type() == row.type) continue;  // a missing model: run()
      if (std::find(checked_.begin(), checked_.end(), *i) != checked_.end()) continue;
      checked_.push_back(*i);
      sink_.report(Code::VocabularyUnreadable, pair_offset(*i), pair_length(*i),
                   kv_path(*i, m_.key(*i)), fmt::format("store it as {}", type_name(row.type)),
                   "{} is {}, but llama.cpp reads it as {} and refuses any other type", key,
                   describe_type(m_, *i), type_name(row.type));
    }
  }

  void missing_model() {
    sink_.report(Code::UnknownTokenizerModel, missing_offset(), 0, Field("metadata"),
                 "write tokenizer.ggml.model (\"llama\", \"gpt2\", ...; \"none\" for a model "
                 "without a vocabulary)",
                 "no tokenizer.ggml.model: llama.cpp requires it to load the vocabulary");
  }

  // load(): the if-chain on tokenizer_model; any other name throws "unknown tokenizer".
  const TokenizerRow* tokenizer_model() {
    const auto i = kv(kModelKey);
    if (!i || m_.metadata[*i].type() != ValueType::String) return nullptr;  // reported above
    const std::string_view name = c_string_prefix(m_.string_value(*i));
    for (const TokenizerRow& row : kTokenizers) {
      if (row.name == name) return &row;
    }
    std::string known;
    for (const TokenizerRow& row : kTokenizers) {
      if (!known.empty()) known += ", ";
      known += row.name;
    }
    sink_.report(Code::UnknownTokenizerModel, pair_offset(*i), pair_length(*i),
                 kv_path(*i, m_.key(*i)), fmt::format("llama.cpp knows {}", known),
                 "tokenizer \"{}\" is not one llama.cpp knows ({}): it refuses the file",
                 escape(name), llama_cpp_tables_version());
    return nullptr;
  }

  // load(): gpt2, hybriddna, whitespace and gemma4 read tokenizer.ggml.merges; without it they
  // throw "cannot find tokenizer merges" (gpt2 & co. not under the pre-tokenizer kimi-k2), and a
  // value that is not a string array throws "invalid gguf type".
  void check_merges(const TokenizerRow& tokenizer) {
    if (!tokenizer.merges) return;
    const auto i = kv(kMergesKey);
    if (!i) {
      if (!tokenizer.merges_excuse.empty() &&
          string_key(kPreKey).value_or(std::string_view()) == tokenizer.merges_excuse) {
        return;
      }
      sink_.report(Code::MissingMerges, missing_offset(), 0, Field("metadata"),
                   "write the BPE merges (tokenizer.ggml.merges, string[]) the converter read "
                   "from merges.txt or tokenizer.json",
                   "no tokenizer.ggml.merges: llama.cpp requires them for a {} vocabulary",
                   tokenizer.name);
      return;
    }
    if (is_array_of(m_, *i, ValueType::String)) return;
    sink_.report(Code::MissingMerges, pair_offset(*i), pair_length(*i), kv_path(*i, m_.key(*i)),
                 "store the merges as string[]",
                 "tokenizer.ggml.merges is {}, but llama.cpp reads a string[] and refuses any "
                 "other type",
                 describe_type(m_, *i));
  }

  // load(), the t5 branch: tokenizer.ggml.precompiled_charsmap, when present, must be an int8 or
  // uint8 array of at least 4 bytes whose first 4 (the XCDA blob size) leave room after the blob.
  void check_charsmap(const TokenizerRow& tokenizer) {
    if (!tokenizer.charsmap) return;
    const auto i = kv(kCharsmapKey);
    if (!i) return;
    if (!is_array_of(m_, *i, ValueType::Uint8) && !is_array_of(m_, *i, ValueType::Int8)) {
      sink_.report(Code::VocabularyUnreadable, pair_offset(*i), pair_length(*i),
                   kv_path(*i, m_.key(*i)), "store the charsmap as uint8[]",
                   "tokenizer.ggml.precompiled_charsmap is {}, but llama.cpp reads an int8[] or "
                   "uint8[] and refuses any other type",
                   describe_type(m_, *i));
      return;
    }
    const std::uint64_t count = m_.array(*i).count;
    std::string_view bytes;
    if (!m_.input.view(m_.elements_offset(*i), count, bytes)) return;
    if (count < 4) {
      charsmap_fault(*i, fmt::format("has {}, fewer than its 4-byte blob size", byte_count(count)));
      return;
    }
    const std::uint64_t blob = load_u32(bytes, 0);
    if (blob + 4 >= count) {
      charsmap_fault(*i, fmt::format("says its blob has {} but the array has {}", byte_count(blob),
                                     byte_count(count)));
      return;
    }
    charsmap_ = bytes;
  }

  void charsmap_fault(std::size_t i, const std::string& what) {
    sink_.report(Code::VocabularyUnreadable, m_.count_offset(i), m_.size_width(),
                 kv_path(i, m_.key(i)) + " count",
                 "write the charsmap the converter read from the model",
                 "tokenizer.ggml.precompiled_charsmap {}: llama.cpp refuses it", what);
  }

  static std::uint32_t load_u32(std::string_view bytes, std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t b = 0; b < 4; ++b) {
      v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + b])) << (8 * b);
    }
    return v;
  }

  // load(): the pre-tokenizer is read for BPE vocabularies only; a missing or empty one is
  // "default", any name not in the chain throws "unknown pre-tokenizer type".
  void check_pre_tokenizer(const TokenizerRow& tokenizer) {
    if (std::find(std::begin(kPreTokenizerTypes), std::end(kPreTokenizerTypes), tokenizer.type) ==
        std::end(kPreTokenizerTypes)) {
      return;
    }
    const auto i = kv(kPreKey);
    if (i && m_.metadata[*i].type() != ValueType::String) return;  // reported as a key type
    const std::string_view pre = !tokenizer.forced_pre.empty() ? tokenizer.forced_pre
                                 : i ? c_string_prefix(m_.string_value(*i))
                                     : std::string_view();
    for (const PreTokenizerRow& row : kPreTokenizers) {
      if (row.name == pre) {
        escape_whitespaces_ = row.escape_whitespaces;
        return;
      }
    }
    sink_.report(Code::UnknownPreTokenizer, pair_offset(*i), pair_length(*i),
                 kv_path(*i, m_.key(*i)),
                 "use the name llama.cpp's converter writes for this tokenizer, or leave the key "
                 "out for the default pre-tokenizer",
                 "pre-tokenizer \"{}\" is not one llama.cpp knows for a {} vocabulary ({}): it "
                 "refuses the file",
                 escape(pre), tokenizer.name, llama_cpp_tables_version());
  }

  // load(): tokenizer.ggml.suppress_tokens, when present, must be an int32 array.
  void check_suppress_tokens() {
    const auto i = kv(kSuppressKey);
    if (!i || is_array_of(m_, *i, ValueType::Int32)) return;
    sink_.report(Code::VocabularyUnreadable, pair_offset(*i), pair_length(*i),
                 kv_path(*i, m_.key(*i)), "store the ids as int32[]",
                 "tokenizer.ggml.suppress_tokens is {}, but llama.cpp reads an int32[] and "
                 "refuses any other type",
                 describe_type(m_, *i));
  }

  // --- the token arrays --------------------------------------------------------------------------

  // load(): the tokens must be a string array; the scores, when present, a float32 or int32
  // array, the token types an int32 array, each with at least as many entries as tokens (counts
  // read as uint32). Longer arrays are fine (GGUF5009 warns of them). False when the tokens
  // cannot be read.
  bool check_arrays() {
    const auto tokens = kv(kTokensKey);
    if (!tokens) {
      sink_.report(Code::VocabularyUnreadable, missing_offset(), 0, Field("metadata"),
                   "write the vocabulary (tokenizer.ggml.tokens, string[])",
                   "no tokenizer.ggml.tokens: llama.cpp requires the vocabulary");
      return false;
    }
    if (!is_array_of(m_, *tokens, ValueType::String)) {
      sink_.report(Code::VocabularyUnreadable, pair_offset(*tokens), pair_length(*tokens),
                   kv_path(*tokens, m_.key(*tokens)), "store the tokens as string[]",
                   "tokenizer.ggml.tokens is {}, but llama.cpp reads a string[] and refuses any "
                   "other type",
                   describe_type(m_, *tokens));
      return false;
    }
    tokens_ = *tokens;
    n_tokens_ = static_cast<std::uint32_t>(m_.array(*tokens).count);  // as load() reads it
    scores_ = parallel_array(kScoresKey, ValueType::Float32, ValueType::Int32,
                             "a float32[] or int32[]", "store the scores as float32[]");
    token_types_ = parallel_array(kTokenTypeKey, ValueType::Int32, ValueType::Int32, "an int32[]",
                                  "store the token types as int32[]");
    return true;
  }

  // The scores or the token types: absent (nullopt), or read as load() reads them (the pair),
  // else reported (nullopt, and the per-token checks are off: llama.cpp stopped before them).
  std::optional<std::size_t> parallel_array(std::string_view key, ValueType element,
                                            ValueType alternative, std::string_view expected,
                                            std::string_view hint) {
    const auto i = kv(key);
    if (!i) return std::nullopt;
    if (!is_array_of(m_, *i, element) && !is_array_of(m_, *i, alternative)) {
      sink_.report(Code::VocabularyUnreadable, pair_offset(*i), pair_length(*i),
                   kv_path(*i, m_.key(*i)), hint,
                   "{} is {}, but llama.cpp reads {} and refuses any other type", key,
                   describe_type(m_, *i), expected);
      arrays_ok_ = false;
      return std::nullopt;
    }
    if (short_array(*i, key)) {
      arrays_ok_ = false;
      return std::nullopt;
    }
    return i;
  }

  bool short_array(std::size_t i, std::string_view what) {
    const std::uint32_t count = static_cast<std::uint32_t>(m_.array(i).count);
    if (count >= n_tokens_) return false;
    sink_.report(Code::VocabularyUnreadable, m_.count_offset(i), m_.size_width(),
                 kv_path(i, m_.key(i)) + " count",
                 "write one entry per token (llama.cpp indexes this array by token id)",
                 "{} has {} entries, fewer than the {} tokens: llama.cpp refuses the file", what,
                 count, n_tokens_);
    return true;
  }

  // The 4-byte elements of an int32 or float32 array, viewed once (the reader checked that they
  // are in the input).
  [[nodiscard]] std::string_view elements(std::size_t kv) const {
    std::string_view out;
    (void)m_.input.view(m_.elements_offset(kv), 4 * m_.array(kv).count, out);
    return out;
  }
  [[nodiscard]] std::uint32_t element(std::string_view array, std::uint64_t index) const {
    if (4 * index + 4 > array.size()) return 0;
    return static_cast<std::uint32_t>(load_word(array.data() + 4 * index, 4));
  }
  [[nodiscard]] TokenClass class_of(std::uint64_t token) const {
    if (!token_types_) return TokenClass::Normal;
    return token_class(static_cast<std::int32_t>(element(type_bytes_, token)));
  }
  [[nodiscard]] float score_of(std::uint64_t token) const {
    if (!scores_) return 0.0f;
    const std::uint32_t bits = element(score_bytes_, token);
    if (m_.array(*scores_).elements() == ValueType::Int32) {
      return static_cast<float>(static_cast<std::int32_t>(bits));
    }
    float f = 0;
    static_assert(sizeof f == sizeof bits);
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  // A count or length of `width` bytes (8, or 4: a 4-byte element or a v1 count) in the file's
  // byte order.
  [[nodiscard]] std::uint64_t load_word(const char* at, std::uint32_t width) const {
    return load_size(at, width, m_.endian);
  }

  // --- the tokens, one pass ------------------------------------------------------------------

  // A fault of some tokens: the first one and how many.
  struct Tally {
    std::uint64_t count = 0;
    std::uint64_t first = 0;
    void add(std::uint64_t token) {
      if (count++ == 0) first = token;
    }
  };

  // The text of the token whose string starts at `offset` (its length field) as llama.cpp keys
  // token_to_id with it: a C string (gguf_get_arr_str). Empty ones are named "[EMPTY_j]" by
  // load(); they are not in the finder: their names are matched with the tokens that look like
  // them.
  [[nodiscard]] std::string_view raw_at(std::uint64_t offset) const {
    const std::uint64_t length = m_.input.number_at(offset, m_.size_width(), m_.endian).value_or(0);
    std::string_view bytes;
    if (!m_.input.view(offset + m_.size_width(), length, bytes)) return {};
    return bytes;
  }
  [[nodiscard]] std::string_view text_at(std::uint64_t offset) const {
    const std::string_view bytes = raw_at(offset);
    return clean_ ? bytes : c_string_prefix(bytes);
  }

  void check_tokens(const TokenizerRow* tokenizer) {
    type_ = tokenizer != nullptr ? std::optional(tokenizer->type) : std::nullopt;
    tokenizer_ = tokenizer;
    clean_ = m_.array(tokens_).strings_clean;
    if (token_types_) type_bytes_ = elements(*token_types_);
    if (scores_) score_bytes_ = elements(*scores_);
    prepare_name_rule();
    walk_tokens();
    report_empty_collisions();
    report_tallies();
    if (!type_ || !arrays_ok_) return;
    check_plamo2_bytes();
    check_empty_vocabulary();
    check_ugm_newline();
    check_name_rule();
  }

  // The token texts, indexed (token_index.hpp): by the reader's second thread when it started
  // one on this array and the array is clean (the thread takes every text as stored), else
  // here. Then the rules that look at single tokens.
  void walk_tokens() {
    const ByteRange range = m_.value_range(tokens_);
    const std::uint64_t elements = m_.elements_offset(tokens_);
    // With clean texts only byte and user-defined tokens have a rule of their own but for
    // PLAMO2's, which reads every token: the others are passed by their type alone. Those are
    // found first, from the types alone, while the index's thread may still be at work.
    const bool rules = type_ && arrays_ok_;
    const bool every = rules && (*type_ == VocabType::PLAMO2 || !clean_);
    const std::vector<std::uint64_t> special =
        rules && !every && token_types_ ? special_tokens() : std::vector<std::uint64_t>();
    const TokenIndex* index = nullptr;
    if (token_index_ != nullptr && clean_) index = token_index_->get(range.offset);
    if (index == nullptr || index->elements_offset != elements || !index->complete) {
      inline_index_.emplace(m_.input, elements, n_tokens_, m_.size_width(), m_.endian, !clean_);
      index = &*inline_index_;
    }
    index_ = index;
    for (const auto& [j, first] : index->duplicates) duplicate(j, first, text_at(offset(j)));
    for (const auto& r : rule_tokens_) rule_found_.push_back(index->find(r.second).has_value());
    if (!rules) return;
    const std::uint64_t walked = index_->walked();
    if (every) {
      for (std::uint64_t j = 0; j < walked; ++j) per_token(j, text_at(offset(j)));
      return;
    }
    for (const std::uint64_t j : special) {
      if (j < walked) per_token(j, text_at(offset(j)));
    }
  }

  // The byte and user-defined tokens, straight from the types' bytes (a token without a type is
  // Normal). Blocks of 16 types compared at once (the compiler's vector compares), a few
  // kilobytes fetched ahead: the reader skipped these bytes, and a scan type by type waited on
  // memory for most of its time (a tenth of the reader's on a 250,000-token vocabulary).
  [[nodiscard]] std::vector<std::uint64_t> special_tokens() const {
    std::vector<std::uint64_t> out;
    const auto scan = [&](auto order) {
      const std::uint64_t typed = std::min<std::uint64_t>(n_tokens_, type_bytes_.size() / 4);
      const char* const types = type_bytes_.data();
      const auto special = [&](std::uint64_t j) {
        const std::uint32_t raw = order(load_number<std::uint32_t>(types + 4 * j, false));
        return raw == static_cast<std::uint32_t>(TokenClass::Byte) ||
               raw == static_cast<std::uint32_t>(TokenClass::UserDefined);
      };
      constexpr std::uint64_t kBlock = 16;
      constexpr std::uint64_t kAhead = 4096;  // bytes
      std::uint64_t j = 0;
      for (; j + kBlock <= typed; j += kBlock) {
        if (4 * j + kAhead < type_bytes_.size()) __builtin_prefetch(types + 4 * j + kAhead);
        bool any = false;
        for (std::uint64_t k = 0; k < kBlock; ++k) any |= special(j + k);
        if (!any) continue;
        for (std::uint64_t k = 0; k < kBlock; ++k) {
          if (special(j + k)) out.push_back(j + k);
        }
      }
      for (; j < typed; ++j) {
        if (special(j)) out.push_back(j);
      }
    };
    if (m_.endian == Endian::Little) {
      scan([](std::uint32_t v) { return v; });
    } else {
      scan([](std::uint32_t v) { return __builtin_bswap32(v); });
    }
    return out;
  }

  [[nodiscard]] std::uint64_t offset(std::uint64_t j) const { return index_->offset(j); }

  // token_to_piece_for_cache (load(), "build token to piece cache") on every token, and the
  // tokenizers' constructors (init_tokenizer) that read every token. An empty text stands for
  // "[EMPTY_j]", which no rule below singles out but by its length.
  void per_token(std::uint64_t j, std::string_view text) {
    const TokenClass cls = class_of(j);
    const VocabType type = *type_;
    if (cls == TokenClass::Byte && !marked(text)) {
      // token_to_byte: text.substr(3, 2) throws below 3 bytes; WPM aborts whatever the text.
      if (type == VocabType::WPM) {
        wpm_byte_.add(j);
      } else if ((type == VocabType::SPM || type == VocabType::UGM || type == VocabType::BPE) &&
                 !text.empty() && text.size() < 3) {
        short_byte_.add(j);
      }
    }
    if (type == VocabType::PLAMO2) {
      if (cls == TokenClass::Byte) {
        plamo2_byte(j, text);
      } else if (!clean_ && has_codepoint_above_unicode(text)) {
        bad_codepoint_.add(j);
      }
    }
    if (type == VocabType::BPE && !escape_whitespaces_ && cls == TokenClass::Normal && !clean_ &&
        has_codepoint_above_unicode(text)) {
      bad_codepoint_.add(j);  // llama_decode_text
    }
    if (type == VocabType::UGM && cls == TokenClass::UserDefined && text == "\n") {
      ugm_newline_token_ = true;
    }
  }

  [[nodiscard]] Field token_field(std::uint64_t j) const {
    return kv_path(tokens_, m_.key(tokens_)) + fmt::format("[{}]", j);
  }
  [[nodiscard]] std::uint64_t token_length(std::uint64_t j) const {
    return m_.size_width() + m_.input.number_at(offset(j), m_.size_width(), m_.endian).value_or(0);
  }

  // load(): token_to_id[word] = i for every token, then GGML_ASSERT(id_to_token.size() ==
  // token_to_id.size()): two equal texts abort.
  void duplicate(std::uint64_t j, std::uint64_t first, std::string_view text) {
    const std::string_view hint =
        "give every token its own text: llama.cpp keys its vocabulary by text, up to a NUL";
    const std::string_view bytes = raw_at(offset(j));
    if (bytes == raw_at(offset(first))) {
      sink_.report(Code::DuplicateToken, offset(j), token_length(j), token_field(j), hint,
                   "token {} \"{}\" repeats token {}: llama.cpp aborts loading the vocabulary", j,
                   escape(text), first);
    } else {
      sink_.report(Code::DuplicateToken, offset(j), token_length(j), token_field(j), hint,
                   "token {} \"{}\" is \"{}\" up to its NUL as llama.cpp reads it, the text of "
                   "token {}: llama.cpp aborts loading the vocabulary",
                   j, escape(bytes), escape(text), first);
    }
  }

  // An empty token k is named "[EMPTY_k]": a token j with that text collides with it. The later
  // of the two is the duplicate.
  void report_empty_collisions() {
    const std::string_view hint =
        "llama.cpp names an empty token \"[EMPTY_<id>]\": give the empty token a text, or "
        "rename the other";
    for (const auto& [j, k] : index_->lookalikes) {
      if (!index_->empty(k)) continue;
      if (k < j) {
        sink_.report(Code::DuplicateToken, offset(j), token_length(j), token_field(j), hint,
                     "token {} \"{}\" is the name llama.cpp gives the empty token {}: it aborts "
                     "loading the vocabulary",
                     j, empty_token_name(k), k);
      } else {
        sink_.report(Code::DuplicateToken, offset(k), token_length(k), token_field(k), hint,
                     "token {} is empty, which llama.cpp reads as \"{}\", the text of token {}: it "
                     "aborts loading the vocabulary",
                     k, empty_token_name(k), j);
      }
    }
  }

  void report_tally(const Tally& t, Code code, std::string_view hint, std::string_view what) {
    if (t.count == 0) return;
    const std::string more =
        t.count > 1 ? fmt::format(" (and {} more token{})", t.count - 1, t.count > 2 ? "s" : "")
                    : std::string();
    std::string text(text_at(offset(t.first)));
    if (text.empty()) text = empty_token_name(t.first);
    sink_.report(code, offset(t.first), token_length(t.first), token_field(t.first), hint,
                 "token {} \"{}\"{} {}", t.first, escape(text), more, what);
  }

  void report_tallies() {
    report_tally(short_byte_, Code::VocabularyUnreadable,
                 "a byte token's text is <0xNN>: llama.cpp reads the byte from its characters 3-4",
                 "is a byte token (token_type 6) shorter than 3 bytes: llama.cpp cannot read its "
                 "byte and refuses the file");
    report_tally(wpm_byte_, Code::VocabularyUnreadable,
                 "a bert (WPM) vocabulary has no byte tokens: give the token another type",
                 "is a byte token (token_type 6) in a bert (WPM) vocabulary: llama.cpp aborts "
                 "(GGML_ABORT in token_to_byte)");
    report_tally(bad_codepoint_, Code::VocabularyUnreadable,
                 "token texts are UTF-8: nothing above U+10FFFF",
                 "has a 4-byte sequence above U+10FFFF: llama.cpp's UTF-8 decoding throws "
                 "\"invalid codepoint\" and it refuses the file");
  }

  // llm_tokenizer_plamo2::build: every byte 0..255 needs a byte token "<0xNN>" at an id above 0.
  void plamo2_byte(std::uint64_t j, std::string_view text) {
    if (j == 0 || text.size() != 6 || !text.starts_with("<0x") || text.back() != '>') return;
    const auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    const int hi = hex(text[3]);
    const int lo = hex(text[4]);
    if (hi >= 0 && lo >= 0) plamo2_bytes_[static_cast<std::size_t>(hi * 16 + lo)] = true;
  }

  void check_plamo2_bytes() {
    if (*type_ != VocabType::PLAMO2) return;
    const auto missing = std::find(plamo2_bytes_.begin(), plamo2_bytes_.end(), false);
    if (missing == plamo2_bytes_.end()) return;
    const auto count = std::count(plamo2_bytes_.begin(), plamo2_bytes_.end(), false);
    sink_.report(Code::VocabularyUnreadable, pair_offset(tokens_), pair_length(tokens_),
                 kv_path(tokens_, m_.key(tokens_)),
                 "a plamo2 vocabulary has the 256 byte tokens <0x00> .. <0xFF> (token_type 6)",
                 "no byte token <0x{:02X}> at an id above 0 ({} byte{} missing): llama.cpp's "
                 "plamo2 tokenizer refuses the vocabulary",
                 missing - plamo2_bytes_.begin(), count, count == 1 ? "" : "s");
  }

  // Without tokens: "test" divides by the vocabulary size (tokenize("\n"): SIGFPE); bert's
  // newline token is its padding token 0 and t5's its unknown token 2, which print_info reads
  // with id_to_token.at (std::out_of_range).
  void check_empty_vocabulary() {
    if (n_tokens_ != 0) return;
    const VocabType type = *type_;
    const char* what = type == VocabType::TEST ? "llama.cpp divides by the vocabulary size (SIGFPE)"
                       : type == VocabType::WPM || type == VocabType::UGM
                           ? "llama.cpp reads its newline token from the empty vocabulary and "
                             "refuses the file"
                           : nullptr;
    if (what == nullptr) return;
    sink_.report(Code::VocabularyUnreadable, m_.count_offset(tokens_), m_.size_width(),
                 kv_path(tokens_, m_.key(tokens_)) + " count",
                 "a vocabulary needs tokens; a model without one has tokenizer.ggml.model \"none\"",
                 "a {} vocabulary without tokens: {}", tokenizer_->name, what);
  }

  // --- t5 (UGM): tokenize("\n") after the tokenizer is built (load(), the newline token) ---------

  // llm_tokenizer_ugm_session::normalize_prefix on "\n": a user-defined token "\n" is kept; else
  // the charsmap's XCDA is walked for the byte 0x0A (get_node throws past its end) and a leaf's
  // replacement read (throws past the replacements or without a NUL). Returns the normalized
  // piece, or nullopt after reporting a throw.
  std::optional<std::string> ugm_normalize_newline() {
    const std::string newline = "\n";
    if (ugm_newline_token_ || charsmap_.empty()) return newline;
    const std::uint32_t blob = load_u32(charsmap_, 0);
    const std::uint64_t entries = blob / 4;
    if (entries == 0) return newline;
    const auto node = [&](std::uint64_t index) -> std::optional<std::uint32_t> {
      if (index >= entries) return std::nullopt;
      return load_u32(charsmap_, static_cast<std::size_t>(4 + 4 * index));
    };
    const auto base = [](std::uint32_t packed) {
      return (packed >> 10) << ((packed & (1U << 9)) >> 6);
    };
    const unsigned char c = '\n';
    std::uint64_t index = base(*node(0)) ^ c;
    const auto checked = node(index);
    if (!checked) return charsmap_throw("an XCDA index past its entries");
    if ((*checked & ((1U << 31) | 0xFF)) != c) return newline;
    const bool leaf = ((*checked >> 8) & 1) != 0;
    index ^= base(*checked);
    if (!leaf) return newline;
    const auto value = node(index);
    if (!value) return charsmap_throw("an XCDA index past its entries");
    const std::uint64_t offset = *value & ((1U << 31) - 1);
    const std::string_view replacements = charsmap_.substr(4 + blob);
    if (offset >= replacements.size()) return charsmap_throw("a replacement past its end");
    const std::size_t nul = replacements.find('\0', static_cast<std::size_t>(offset));
    if (nul == std::string_view::npos) return charsmap_throw("a replacement without its NUL");
    return std::string(replacements.substr(static_cast<std::size_t>(offset), nul - offset));
  }

  std::nullopt_t charsmap_throw(std::string_view what) {
    const std::size_t i = *kv(kCharsmapKey);
    sink_.report(Code::VocabularyUnreadable, pair_offset(i), pair_length(i), kv_path(i, m_.key(i)),
                 "write the charsmap the converter read from the model",
                 "tokenizer.ggml.precompiled_charsmap maps the newline through {}: llama.cpp's "
                 "t5 tokenizer throws when it tokenizes \"\\n\" and refuses the file",
                 what);
    return std::nullopt;
  }

  bool bool_key(std::string_view key, bool fallback) const {
    const auto i = kv(key);
    if (!i || m_.metadata[*i].type() != ValueType::Bool) return fallback;
    return (m_.metadata[*i].payload() & 0xFF) != 0;
  }

  void check_ugm_newline() {
    if (*type_ != VocabType::UGM) return;
    const auto piece = ugm_normalize_newline();
    if (!piece || n_tokens_ == 0 || n_tokens_ > kUgmUnknownToken) return;
    // A vocabulary of 1 or 2 tokens: the newline token is the first token of the best
    // tokenization of "\n", the unknown token 2 unless a token starts it; print_info reads it
    // with id_to_token.at.
    const std::string normalized = ugm_normalize(*piece);
    if (normalized.empty()) return;  // no tokens: the padding token 0 exists
    if (ugm_first_token(normalized) < n_tokens_) return;
    sink_.report(Code::VocabularyUnreadable, m_.count_offset(tokens_), m_.size_width(),
                 kv_path(tokens_, m_.key(tokens_)) + " count",
                 "a t5 vocabulary has its unknown token at id 2",
                 "a t5 vocabulary of {} token{} tokenizes \"\\n\" to the unknown token {}, which "
                 "llama.cpp then reads from the vocabulary and refuses the file",
                 n_tokens_, n_tokens_ == 1 ? "" : "s", kUgmUnknownToken);
  }

  // llm_tokenizer_ugm_session::normalize for the piece of one input character: spaces are
  // escaped (U+2581, escape_whitespaces stays true for t5), a space prepended with
  // tokenizer.ggml.add_space_prefix, runs merged with remove_extra_whitespaces.
  std::string ugm_normalize(std::string_view piece) const {
    const std::string space = "\xE2\x96\x81";
    const bool prepend = bool_key("tokenizer.ggml.add_space_prefix", false);
    const bool merge = bool_key("tokenizer.ggml.remove_extra_whitespaces", false);
    std::string out;
    bool prepended = false;
    bool non_ws = false;
    for (const char c : piece) {
      if (c != ' ') {
        if (!non_ws) {
          non_ws = true;
          if ((prepend && !prepended) || merge) {
            out += space;
            prepended = true;
          }
        }
        out += c;
      } else {
        non_ws = false;
        if (!merge) out += space;
      }
    }
    return out;
  }

  // llm_tokenizer_ugm_session::tokenize's Viterbi search on a short text over a vocabulary of at
  // most two tokens: the id of the first token of the best tokenization.
  std::uint32_t ugm_first_token(const std::string& text) const {
    struct Best {
      std::uint32_t token;
      std::size_t from;
      double score;
    };
    struct Candidate {
      std::uint32_t id;
      std::string text;
      bool user_defined;
      float score;
    };
    std::vector<Candidate> candidates;
    float min_score = FLT_MAX;
    for (std::uint32_t id = 0; id < n_tokens_; ++id) {
      const TokenClass cls = class_of(id);
      std::string t(text_at(offset(id)));
      if (t.empty()) t = empty_token_name(id);
      if (cls == TokenClass::Normal) min_score = std::min(min_score, score_of(id));
      if (cls == TokenClass::Normal || cls == TokenClass::UserDefined ||
          cls == TokenClass::Unused) {
        candidates.push_back({id, std::move(t), cls == TokenClass::UserDefined, score_of(id)});
      }
    }
    const float unknown_score = min_score - 10.0f;
    const std::size_t n = text.size();
    // Built by push_back, not by indexing a sized vector: g++ -O3 cannot see that n + 1 > 0
    // and warns of a null dereference (-Wnull-dereference) on best[0].
    std::vector<Best> best;
    best.reserve(n + 1);
    best.push_back({kUgmUnknownToken, 0, 0});
    best.resize(n + 1, Best{kUgmUnknownToken, 0, -DBL_MAX});
    static constexpr std::array<std::size_t, 16> kUtf8Length = {1, 1, 1, 1, 1, 1, 1, 1,
                                                                1, 1, 1, 1, 2, 2, 3, 4};
    for (std::size_t at = 0; at < n;) {
      const std::size_t units =
          std::min(kUtf8Length[static_cast<unsigned char>(text[at]) >> 4], n - at);
      const Best current = best[at];
      bool whole = false;
      for (const Candidate& c : candidates) {
        if (text.compare(at, c.text.size(), c.text) != 0 || c.text.size() > n - at) continue;
        if (c.text.size() == units) whole = true;
        const double challenger = current.score + (c.user_defined ? 0.0 : double{c.score});
        Best& champ = best[at + c.text.size()];
        if (challenger > champ.score) champ = {c.id, at, challenger};
      }
      if (!whole) {
        const double challenger = current.score + double{unknown_score};
        Best& champ = best[at + units];
        if (challenger > champ.score) champ = {kUgmUnknownToken, at, challenger};
      }
      at += units;
    }
    Best t = best[n];
    while (t.from != 0) t = best[t.from];
    return t.token;
  }

  // --- attributes by name (load()'s end) ---------------------------------------------------------

  // The first rule whose substring the subject contains applies (general.name lower-cased as
  // std::tolower does in the C locale); the tokens it looks up with token_to_id.at must exist.
  void prepare_name_rule() {
    std::string name(string_key(kNameKey).value_or(std::string_view()));
    for (char& c : name) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    }
    const std::string_view pre = string_key(kPreKey).value_or(std::string_view());
    const std::string_view arch = string_key(kArchitectureKey).value_or(std::string_view());
    for (const NameRule& rule : kNameRules) {
      const std::string_view subject = rule.subject == Subject::ModelName      ? name
                                       : rule.subject == Subject::TokenizerPre ? pre
                                                                               : arch;
      if (subject.find(rule.substring) == std::string_view::npos) continue;
      rule_ = rule;
      for (const RuleToken& t : kRuleTokens) {
        if (t.rule == rule.rule) rule_tokens_.emplace_back(t.rule, t.token);
      }
      break;
    }
  }

  void check_name_rule() {
    for (std::size_t r = 0; r < rule_tokens_.size(); ++r) {
      if (rule_found_[r]) continue;
      if (const auto k = empty_token_index(rule_tokens_[r].second); k && index_->empty(*k)) {
        continue;
      }
      const Subject s = rule_->subject;
      const std::string_view key = s == Subject::ModelName      ? kNameKey
                                   : s == Subject::TokenizerPre ? kPreKey
                                                                : kArchitectureKey;
      const std::size_t i = *kv(key);
      sink_.report(Code::VocabularyUnreadable, pair_offset(i), pair_length(i),
                   kv_path(i, m_.key(i)),
                   "give the vocabulary that token, or the model another name",
                   "{} contains \"{}\", so llama.cpp looks up the token \"{}\", which the "
                   "vocabulary lacks: it refuses the file (std::out_of_range)",
                   key, rule_->substring, escape(rule_tokens_[r].second));
    }
  }

  static constexpr std::size_t kNotFound = static_cast<std::size_t>(-1);

  const FileIndex& m_;
  Sink& sink_;
  TokenIndexObserver* token_index_;  // the reader's token index, or null
  std::string arch_;
  const KeyNames* names_ = nullptr;
  std::optional<KeyNames> own_names_;  // an unknown architecture's
  std::vector<std::size_t> keys_;      // the pair of each of names_->slots, or kNotFound
  std::vector<std::size_t> checked_;   // pairs whose type was reported
  std::string_view charsmap_;          // a charsmap load() accepted
  bool escape_whitespaces_ = false;

  std::size_t tokens_ = 0;
  std::uint32_t n_tokens_ = 0;
  std::optional<std::size_t> scores_;
  std::optional<std::size_t> token_types_;
  std::string_view score_bytes_, type_bytes_;
  bool arrays_ok_ = true;  // scores and token types as load() reads them (or absent)

  std::optional<VocabType> type_;
  const TokenizerRow* tokenizer_ = nullptr;
  bool clean_ = false;
  std::optional<TokenIndex> inline_index_;
  const TokenIndex* index_ = nullptr;  // the reader's thread's or inline_index_
  Tally short_byte_, wpm_byte_, bad_codepoint_;
  std::array<bool, 256> plamo2_bytes_{};
  bool ugm_newline_token_ = false;
  std::optional<NameRule> rule_;
  std::vector<std::pair<int, std::string_view>> rule_tokens_;
  std::vector<bool> rule_found_;
};

}  // namespace

void check_vocabulary(const FileIndex& index, Sink& sink, TokenIndexObserver* tokens) {
  VocabularyCheck(index, sink, tokens).run();
}

}  // namespace ggufcheck::detail
