// The model checks (GGUF7xxx) on models, not on random bytes: the input is a program of
// structured mutations of a model that llama.cpp loads. Its first choice is the starting model:
// the test kit's llama model (model_document(): one block, a four-token vocabulary) or the base
// model of one of ~150 architectures (model_bases.inc: the test kit's base models, which the
// pinned llama.cpp loads, written by validator/tests/make_model_bases.cpp), then its vocabulary:
// its own (SPM or BPE) or a small valid one of another tokenizer kind (SPM, BPE, WPM, UGM, RWKV,
// PLaMo-2, none), the embedding and output resized to it. Then each byte chooses a move and its
// operands: drop, add, rename or move to another layer a tensor, change a dim or the number of
// dims, retype or drop a key, set a number key to a boundary, borrow a key of another
// architecture, a per-layer array of another length, block_count, and on the vocabulary: the
// tokenizer model and pre-tokenizer names, the merges, the types and lengths of scores and token
// types, duplicate tokens (exact, up to a NUL, an empty token beside "[EMPTY_n]"), token texts
// llama.cpp's tokenizers cannot take, the keys llama.cpp reads with other types, a t5 charsmap
// from the input's bytes. The model is written with the library's writer and validated in every
// profile with the model checks: each report's own invariants hold, strict rejects whatever the
// llama.cpp profile rejects in the Model area, and a second run reports the same (fuzzing: the
// spec profile and the second run on one input in four each; a replay: every input). (Not
// fuzz::check_pipeline: its dump check compares the dump, which is the container's, with a report
// that has the model checks, so it fails on every model the model checks refuse.)
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "model_builder.hpp"
#include "models.hpp"
#include "pipeline.hpp"

namespace {

using namespace ggufcheck;
using fuzz::Choices;
using testing::erase_pair;
using testing::find_pair;
using testing::set_pair;

Value strings(const std::vector<std::string>& texts) {
  std::vector<Value> items;
  for (const std::string& t : texts) items.push_back(Value::string(t));
  return Value::array(ValueType::String, std::move(items));
}

// The same value as another type (or a plain value of another kind).
Value retyped(const Value& v, Choices& in) {
  switch (in.below(7)) {
    case 0: return Value::u64(v.bits);
    case 1: return Value::i32(static_cast<std::int32_t>(v.bits));
    case 2: return Value::f32(static_cast<float>(v.bits & 0xFFFF));
    case 3: return Value::u8(static_cast<std::uint8_t>(v.bits));
    case 4: return Value::string(v.text.empty() ? "1" : v.text);
    case 5: return Value::u32(static_cast<std::uint32_t>(v.bits));
    default:
      return v.type == ValueType::Array ? Value::array(ValueType::Uint32, {Value::u32(1)})
                                        : Value::array(v.type, {v});
  }
}

std::vector<Value>* tokens_of(Document& doc) {
  KeyValue* kv = find_pair(doc, "tokenizer.ggml.tokens");
  if (kv == nullptr || kv->value.type != ValueType::Array) return nullptr;
  return &kv->value.items;
}

void move_vocabulary(Document& doc, const std::string& arch, Choices& in) {
  static const char* const kModels[] = {"llama",     "gpt2",       "bert",   "t5",   "rwkv",
                                        "test",      "plamo2",     "gemma4", "none", "no_vocab",
                                        "hybriddna", "whitespace", "llamax", ""};
  static const char* const kPres[] = {"default", "gpt-2", "llama-bpe", "qwen2",      "kimi-k2",
                                      "gemma4",  "",      "nonsense",  "sarvam-moe", "tekken"};
  static const char* const kTexts[] = {"\xF4\x90\x80\x80", "\xFF", "a",          "",
                                       "<0x41>",           "\n",   "<|im_end|>", "</s>",
                                       "[EMPTY_1]",        "ab",   "<s>",        "<unk>"};
  static const char* const kKeys[] = {"tokenizer.ggml.add_bos_token",
                                      "tokenizer.ggml.add_sep_token",
                                      "tokenizer.ggml.add_space_prefix",
                                      "tokenizer.ggml.remove_extra_whitespaces",
                                      "tokenizer.ggml.token_type_count",
                                      "tokenizer.ggml.eos_token_id",
                                      "tokenizer.ggml.seperator_token_id",
                                      "tokenizer.ggml.cls_token_id",
                                      "tokenizer.ggml.normalizer.lowercase",
                                      "tokenizer.ggml.suppress_tokens",
                                      "general.name",
                                      "<arch>.vocab_size"};
  std::vector<Value>* tokens = tokens_of(doc);
  switch (in.below(12)) {
    case 0: {  // the tokenizer model, maybe with a NUL and more after it
      std::string model = in.one_of(kModels);
      if (in.below(8) == 0) model += std::string(1, '\0') + in.bytes(3);
      set_pair(doc, "tokenizer.ggml.model", Value::string(model));
      break;
    }
    case 1:
      if (in.below(4) == 0) {
        erase_pair(doc, "tokenizer.ggml.pre");
      } else {
        set_pair(doc, "tokenizer.ggml.pre", Value::string(in.one_of(kPres)));
      }
      break;
    case 2:
      switch (in.below(4)) {
        case 0: erase_pair(doc, "tokenizer.ggml.merges"); break;
        case 1: set_pair(doc, "tokenizer.ggml.merges", strings({"a a", "<s> a"})); break;
        case 2: set_pair(doc, "tokenizer.ggml.merges", strings({})); break;
        default:
          set_pair(doc, "tokenizer.ggml.merges",
                   Value::array(ValueType::Uint32, {Value::u32(in.byte())}));
      }
      break;
    case 3: {  // scores: other element types, other lengths
      const std::size_t n = tokens != nullptr ? tokens->size() : 0;
      const std::size_t length = n + in.below(3) - (n > 0 ? 1 : 0);
      const ValueType types[] = {ValueType::Float32, ValueType::Int32, ValueType::Float64,
                                 ValueType::Uint32};
      const ValueType type = in.one_of(types);
      std::vector<Value> items;
      for (std::size_t i = 0; i < length; ++i) {
        Value v = Value::integer(type, in.byte());
        if (type == ValueType::Float32) v = Value::f32(-static_cast<float>(in.byte()));
        items.push_back(v);
      }
      if (in.below(6) == 0) {
        erase_pair(doc, "tokenizer.ggml.scores");
      } else {
        set_pair(doc, "tokenizer.ggml.scores", Value::array(type, std::move(items)));
      }
      break;
    }
    case 4: {  // token types: values (6 is a byte token), lengths, element type
      KeyValue* kv = find_pair(doc, "tokenizer.ggml.token_type");
      if (kv == nullptr || kv->value.type != ValueType::Array) {
        set_pair(doc, "tokenizer.ggml.token_type",
                 Value::array(ValueType::Int32, {Value::i32(1), Value::i32(1)}));
        break;
      }
      std::vector<Value>& items = kv->value.items;
      switch (in.below(5)) {
        case 0:
          if (!items.empty()) items.pop_back();
          break;
        case 1: items.push_back(Value::i32(1)); break;
        case 2: kv->value.element_type = ValueType::Uint32; break;
        case 3: erase_pair(doc, "tokenizer.ggml.token_type"); break;
        default:
          if (!items.empty()) {
            items[in.below(items.size())] =
                Value::i32(static_cast<std::int32_t>(in.byte() % 9) - 1);
          }
      }
      break;
    }
    case 5:  // duplicate tokens: exact, up to a NUL, an empty one beside its name
      if (tokens != nullptr && tokens->size() >= 2) {
        const std::size_t i = in.below(tokens->size());
        const std::size_t j = in.below(tokens->size());
        switch (in.below(3)) {
          case 0: (*tokens)[i] = (*tokens)[j]; break;
          case 1:
            (*tokens)[i] = Value::string((*tokens)[j].text + std::string(1, '\0') + in.bytes(2));
            break;
          default:
            (*tokens)[i] = Value::string("");
            (*tokens)[j] = Value::string("[EMPTY_" + std::to_string(i) + "]");
        }
      }
      break;
    case 6:  // a token text a tokenizer may not take
      if (tokens != nullptr && !tokens->empty()) {
        (*tokens)[in.below(tokens->size())] = Value::string(in.one_of(kTexts));
      }
      break;
    case 7:  // one token more or less (the embedding's shape no longer matches)
      if (tokens != nullptr) {
        if (in.below(2) == 0 && !tokens->empty()) {
          tokens->pop_back();
        } else {
          tokens->push_back(Value::string("t" + std::to_string(tokens->size())));
        }
      }
      break;
    case 8: {  // a key load() reads, of its type or another
      std::string key = in.one_of(kKeys);
      if (key.starts_with("<arch>")) key.replace(0, 6, arch);
      const Value plain[] = {
          Value::boolean(true),  Value::u32(in.byte()),
          Value::u64(1),         Value::u8(1),
          Value::string("phi3"), Value::array(ValueType::Int32, {Value::i32(1)})};
      set_pair(doc, key, in.one_of(plain));
      break;
    }
    case 9: {  // a t5 charsmap from the input's bytes
      std::vector<Value> items;
      for (const char c : in.bytes(24)) items.push_back(Value::u8(static_cast<std::uint8_t>(c)));
      set_pair(
          doc, "tokenizer.ggml.precompiled_charsmap",
          Value::array(in.below(4) == 0 ? ValueType::Int8 : ValueType::Uint8, std::move(items)));
      break;
    }
    case 10:  // a name the attribute rules look at
      set_pair(doc, "general.name", Value::string(in.below(2) == 0 ? "Phi-3 mini" : "phi3"));
      break;
    default:
      if (tokens != nullptr && !tokens->empty()) {  // arbitrary bytes in a token
        (*tokens)[in.below(tokens->size())] = Value::string(in.bytes(6));
      }
  }
}

// "blk.N.REST" -> N (nullopt: not a layer's tensor); rest is REST.
std::optional<std::uint64_t> layer_of(std::string_view name, std::string_view& rest) {
  if (!name.starts_with("blk.")) return std::nullopt;
  const std::size_t dot = name.find('.', 4);
  if (dot == std::string_view::npos || dot == 4 || dot > 8) return std::nullopt;
  std::uint64_t layer = 0;
  for (const char c : name.substr(4, dot - 4)) {
    if (c < '0' || c > '9') return std::nullopt;
    layer = layer * 10 + static_cast<std::uint64_t>(c - '0');
  }
  rest = name.substr(dot + 1);
  return layer;
}

const std::vector<Document>& base_documents();

void move_model(Document& doc, const std::string& arch, Choices& in) {
  static const char* const kNames[] = {
      "output.weight",       "blk.0.attn_q.bias",   "junk",
      "blk.1.attn_q.weight", "blk.0.attn_q.weight", "rope_freqs.weight"};
  const std::uint64_t kDims[] = {0, 1, 3, 4, 5, 63, 64, 65, 128};
  switch (in.below(10)) {
    case 0:
      if (!doc.tensors.empty()) {
        doc.tensors.erase(doc.tensors.begin() +
                          static_cast<std::ptrdiff_t>(in.below(doc.tensors.size())));
      }
      break;
    case 1: {
      Tensor t;
      t.name = in.one_of(kNames);
      t.dims = {64, in.below(2) == 0 ? 64U : 4U};
      doc.tensors.push_back(std::move(t));
      break;
    }
    case 2:
      if (!doc.tensors.empty()) doc.tensors[in.below(doc.tensors.size())].name = in.one_of(kNames);
      break;
    case 3:
      if (!doc.tensors.empty()) {
        Tensor& t = doc.tensors[in.below(doc.tensors.size())];
        switch (in.below(4)) {
          case 0:
            if (t.dims.size() < 4) t.dims.push_back(in.below(2) + 1);
            break;
          case 1:
            if (t.dims.size() > 1) t.dims.pop_back();
            break;
          default:
            if (!t.dims.empty()) t.dims[in.below(t.dims.size())] = in.one_of(kDims);
        }
      }
      break;
    case 4:
      if (!doc.metadata.empty()) {
        KeyValue& kv = doc.metadata[in.below(doc.metadata.size())];
        kv.value = retyped(kv.value, in);
      }
      break;
    case 5: {  // a per-layer array of the wrong length
      static const char* const kLayerKeys[] = {".attention.head_count", ".attention.head_count_kv",
                                               ".feed_forward_length",
                                               ".attention.sliding_window_pattern"};
      std::vector<Value> items(in.below(4), Value::u32(4));
      set_pair(doc, arch + in.one_of(kLayerKeys),
               Value::array(ValueType::Uint32, std::move(items)));
      break;
    }
    case 6: {  // a number key at a boundary (experts, heads, layers, dimensions, rope types)
      std::vector<KeyValue*> numbers;
      for (KeyValue& kv : doc.metadata) {
        if (kv.value.type != ValueType::String && kv.value.type != ValueType::Array) {
          numbers.push_back(&kv);
        }
      }
      if (numbers.empty()) break;
      const std::uint64_t kNumbers[] = {0, 1, 2, 3, 7, 64, 513, 0xFFFFFFFF};
      Value& v = numbers[in.below(numbers.size())]->value;
      const std::uint64_t n = in.one_of(kNumbers);
      if (v.type == ValueType::Float32) {
        v = Value::f32(static_cast<float>(n));
      } else if (v.type == ValueType::Float64) {
        v = Value::f64(static_cast<double>(n));
      } else {
        v.bits = n;
      }
      break;
    }
    case 7: {  // a key of another architecture's base under this one's name
      const std::vector<Document>& bases = base_documents();
      if (bases.empty()) break;
      const Document& other = bases[in.below(bases.size())];
      if (other.metadata.size() < 3) break;
      KeyValue kv = other.metadata[2 + in.below(other.metadata.size() - 2)];
      const std::size_t dot = kv.key.find('.');
      if (dot != std::string::npos && !kv.key.starts_with("general.")) {
        kv.key = arch + kv.key.substr(dot);
      }
      set_pair(doc, kv.key, std::move(kv.value));
      break;
    }
    case 8: {  // a layer's tensor in another layer (one past the last, or a duplicate)
      if (doc.tensors.empty()) break;
      Tensor t = doc.tensors[in.below(doc.tensors.size())];
      std::string_view rest;
      const std::optional<std::uint64_t> layer = layer_of(t.name, rest);
      if (!layer) break;
      t.name = "blk." + std::to_string(*layer + 1 + in.below(2)) + "." + std::string(rest);
      if (in.below(2) == 0) {
        doc.tensors.push_back(std::move(t));
      } else {
        doc.tensors[in.below(doc.tensors.size())] = std::move(t);
      }
      break;
    }
    default:
      if (in.below(2) == 0 && !doc.metadata.empty()) {
        doc.metadata.erase(doc.metadata.begin() +
                           static_cast<std::ptrdiff_t>(in.below(doc.metadata.size())));
      } else {
        const std::uint32_t counts[] = {0, 1, 2, 3, 513};
        set_pair(doc, arch + ".block_count", Value::u32(in.one_of(counts)));
      }
  }
}

// --- the starting models -------------------------------------------------------------------

// The base model of every architecture (model_bases.inc, written by
// validator/tests/make_model_bases.cpp: the test kit's base models, which the pinned llama.cpp
// loads), without their vocabularies.
const char* const kBaseTexts[] = {
#include "model_bases.inc"
};

std::string percent_decoded(std::string_view text) {
  if (text == "%") return "";
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::vector<std::string_view> words_of(std::string_view line) {
  std::vector<std::string_view> words;
  while (!line.empty()) {
    const std::size_t space = line.find(' ');
    words.push_back(line.substr(0, space));
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  return words;
}

std::uint64_t number(std::string_view word) {
  return std::stoull(std::string(word));
}

Value item_of(ValueType type, std::string_view word) {
  return type == ValueType::String ? Value::string(percent_decoded(word))
                                   : Value::integer(type, number(word));
}

struct Base {
  std::string arch;
  bool gpt2 = false;  // its own vocabulary: gpt2 (with `pre`) or llama
  std::string pre;
  Document doc;
};

Base parse_base(std::string_view text) {
  Base base;
  std::uint64_t layers = 0;
  bool header = true;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::vector<std::string_view> w = words_of(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (header) {
      header = false;
      base.arch = std::string(w.at(1));
      layers = number(w.at(2));
      base.gpt2 = w.at(3) == "gpt2";
      base.pre = w.at(4) == "-" ? "" : percent_decoded(w.at(4));
      base.doc.metadata.push_back({"general.architecture", Value::string(base.arch), {}});
      base.doc.metadata.push_back(
          {"general.name", Value::string("tiny " + std::string(w.at(0))), {}});
    } else if (w.at(0) == "k") {
      Value value;
      if (w.at(2) == "str") {
        value = Value::string(percent_decoded(w.at(3)));
      } else if (w.at(2) == "arr") {
        const ValueType element = testing::gguf_type_from_name(w.at(3)).value();
        std::vector<Value> items;
        for (std::size_t i = 4; i < w.size(); ++i) items.push_back(item_of(element, w[i]));
        value = Value::array(element, std::move(items));
      } else {
        value = item_of(testing::gguf_type_from_name(w.at(2)).value(), w.at(3));
      }
      base.doc.metadata.push_back({std::string(w.at(1)), std::move(value), {}});
    } else {
      Tensor t;
      t.type = static_cast<std::uint32_t>(number(w.at(2)));
      for (std::size_t i = 3; i < w.size(); ++i) t.dims.push_back(number(w[i]));
      const std::string name(w.at(1));
      const std::size_t at = name.find("{i}");
      for (std::uint64_t i = 0; i < (at == std::string::npos ? 1 : layers); ++i) {
        t.name = name;
        if (at != std::string::npos) t.name.replace(at, 3, std::to_string(i));
        base.doc.tensors.push_back(t);
      }
    }
  }
  return base;
}

const std::vector<Base>& bases() {
  static const std::vector<Base> all = [] {
    std::vector<Base> out;
    for (const char* text : kBaseTexts) out.push_back(parse_base(text));
    return out;
  }();
  return all;
}

const std::vector<Document>& base_documents() {
  static const std::vector<Document> all = [] {
    std::vector<Document> out;
    for (const Base& b : bases()) out.push_back(b.doc);
    return out;
  }();
  return all;
}

// The tokenizer kinds of llama.cpp's llama_vocab, each a small vocabulary it loads.
enum class VocabKind : std::uint8_t { Spm, Bpe, Wpm, Ugm, Rwkv, Plamo2, None };

Value int32s(const std::vector<std::int32_t>& values) {
  std::vector<Value> items;
  for (const std::int32_t v : values) items.push_back(Value::i32(v));
  return Value::array(ValueType::Int32, std::move(items));
}

std::vector<KeyValue> tokenizer_pairs(const Document& doc) {
  std::vector<KeyValue> out;
  for (const KeyValue& kv : doc.metadata) {
    if (kv.key.starts_with("tokenizer.")) out.push_back(kv);
  }
  return out;
}

// The test kit's vocabularies (model_builder.hpp's starting documents): SPM and BPE.
std::vector<KeyValue> kit_vocabulary(bool gpt2, const std::string& pre) {
  testing::BaseSpec spec;
  spec.arch = "llama";
  spec.vocab = gpt2 ? testing::BaseSpec::Vocab::Gpt2 : testing::BaseSpec::Vocab::Llama;
  spec.pre = pre;
  return tokenizer_pairs(testing::starting_document(spec));
}

std::vector<KeyValue> make_vocabulary(VocabKind kind, const std::string& pre) {
  const auto p = [](const char* key, Value v) { return KeyValue{key, std::move(v), {}}; };
  std::vector<std::string> tokens;
  std::vector<std::int32_t> types;
  std::vector<KeyValue> out;
  const std::string letters = "abcdefghijklmnop";
  switch (kind) {
    case VocabKind::Spm: return kit_vocabulary(false, pre);
    case VocabKind::Bpe: return kit_vocabulary(true, pre.empty() ? "gpt-2" : pre);
    case VocabKind::Wpm:  // bert: the special tokens, words and "##" continuations
      tokens = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
      types = {3, 2, 3, 3, 3};
      for (const char c : letters) tokens.emplace_back(1, c);
      for (const char* t :
           {"##a", "##b", "##c", "ab", "cd", "##ab", "abcd", "ef", "gh", ".", ","}) {
        tokens.emplace_back(t);
      }
      out = {p("tokenizer.ggml.model", Value::string("bert")),
             p("tokenizer.ggml.unknown_token_id", Value::u32(1)),
             p("tokenizer.ggml.seperator_token_id", Value::u32(3)),
             p("tokenizer.ggml.padding_token_id", Value::u32(0)),
             p("tokenizer.ggml.cls_token_id", Value::u32(2)),
             p("tokenizer.ggml.mask_token_id", Value::u32(4))};
      break;
    case VocabKind::Ugm:  // t5: scores, the unknown token 2, an empty charsmap
      tokens = {"<pad>", "</s>", "<unk>", "\xE2\x96\x81"};
      types = {3, 3, 2, 1};
      for (const char c : letters) tokens.emplace_back(1, c);
      for (const char* t : {"\xE2\x96\x81"
                            "a",
                            "\xE2\x96\x81"
                            "b",
                            "ab", "cd", "ef", "gh", "abcd", "\n", "<extra_id_0>", "!", "?", "."}) {
        tokens.emplace_back(t);
      }
      out = {p("tokenizer.ggml.model", Value::string("t5")),
             p("tokenizer.ggml.unknown_token_id", Value::u32(2)),
             p("tokenizer.ggml.eos_token_id", Value::u32(1)),
             p("tokenizer.ggml.padding_token_id", Value::u32(0)),
             p("tokenizer.ggml.precompiled_charsmap",
               Value::array(ValueType::Uint8, std::vector<Value>(5, Value::u8(0))))};
      break;
    case VocabKind::Rwkv:  // rwkv: tokens in its escaped form
      for (const char c : letters) tokens.emplace_back(1, c);
      for (const char* t : {"\\n", "\\t", "\\\\", "\\x41", "ab", "cd", "ef", "gh", " a", " b",
                            "abcd", "'s", "!", "?", ".", ","}) {
        tokens.emplace_back(t);
      }
      out = {p("tokenizer.ggml.model", Value::string("rwkv"))};
      break;
    case VocabKind::Plamo2:  // plamo2: every byte token
      tokens = {"<unk>", "<|plamo:bos|>", "<|plamo:eos|>"};
      types = {2, 3, 3};
      for (int b = 0; b < 256; ++b) {
        tokens.push_back(fmt::format("<0x{:02X}>", b));
        types.push_back(6);
      }
      for (const char* t : {"a", "b", "ab",
                            "\xE2\x96\x81"
                            "a"})
        tokens.emplace_back(t);
      out = {p("tokenizer.ggml.model", Value::string("plamo2")),
             p("tokenizer.ggml.unknown_token_id", Value::u32(0)),
             p("tokenizer.ggml.bos_token_id", Value::u32(1)),
             p("tokenizer.ggml.eos_token_id", Value::u32(2))};
      break;
    case VocabKind::None: return {p("tokenizer.ggml.model", Value::string("none"))};
  }
  types.resize(tokens.size(), 1);
  out.push_back(p("tokenizer.ggml.tokens", strings(tokens)));
  out.push_back(p("tokenizer.ggml.token_type", int32s(types)));
  std::vector<Value> scores;
  for (std::size_t i = 0; i < tokens.size(); ++i)
    scores.push_back(Value::f32(-static_cast<float>(i)));
  out.push_back(p("tokenizer.ggml.scores", Value::array(ValueType::Float32, std::move(scores))));
  return out;
}

// Made once for each kind and pre-tokenizer.
const std::vector<KeyValue>& vocabulary(VocabKind kind, const std::string& pre) {
  static std::map<std::pair<VocabKind, std::string>, std::vector<KeyValue>> made;
  const auto key = std::make_pair(kind, pre);
  auto it = made.find(key);
  if (it == made.end()) it = made.emplace(key, make_vocabulary(kind, pre)).first;
  return it->second;
}

std::size_t token_count(Document& doc) {
  const std::vector<Value>* tokens = tokens_of(doc);
  return tokens != nullptr ? tokens->size() : 0;
}

// The vocabulary replaced by one of `kind` (pre-tokenizer `pre` for BPE), the embedding and the
// output resized to its tokens, so the model still loads.
void replace_vocabulary(Document& doc, VocabKind kind, const std::string& pre) {
  const std::uint64_t before = token_count(doc);
  std::erase_if(doc.metadata, [](const KeyValue& kv) {
    return kv.key.starts_with("tokenizer.ggml.") && kv.key != "tokenizer.ggml.token_type_count";
  });
  for (const KeyValue& kv : vocabulary(kind, pre)) doc.metadata.push_back(kv);
  const std::uint64_t after = token_count(doc);  // "none": llama.cpp expects 0 rows
  if (after == before) return;
  for (Tensor& t : doc.tensors) {
    if (t.dims.size() >= 2 && t.dims[1] == before && !t.name.starts_with("blk.") &&
        (t.name.starts_with("token_embd") || t.name.starts_with("output"))) {
      t.dims[1] = after;
    }
  }
}

// The starting model: the test kit's llama model (one block, four tokens) or an architecture's
// base model, each with its own vocabulary or one of another tokenizer kind.
Document starting_model(Choices& in, std::string& arch) {
  const std::size_t which = in.below(bases().size() + 1);
  Document doc;
  std::string pre = "gpt-2";
  bool gpt2 = false;
  if (which == 0) {
    doc = testing::model_document();
    arch = "llama";
  } else {
    const Base& base = bases()[which - 1];
    doc = base.doc;
    arch = base.arch;
    pre = base.pre.empty() ? pre : base.pre;
    gpt2 = base.gpt2;
    for (const KeyValue& kv : vocabulary(gpt2 ? VocabKind::Bpe : VocabKind::Spm, pre)) {
      doc.metadata.push_back(kv);
    }
  }
  static const char* const kPres[] = {"gpt-2",  "llama-bpe", "qwen2",  "deepseek-llm",
                                      "falcon", "tekken",    "default"};
  switch (in.below(12)) {
    case 0:
      replace_vocabulary(doc, gpt2 ? VocabKind::Spm : VocabKind::Bpe, in.one_of(kPres));
      break;
    case 1: replace_vocabulary(doc, VocabKind::Wpm, ""); break;
    case 2: replace_vocabulary(doc, VocabKind::Ugm, ""); break;
    case 3: replace_vocabulary(doc, VocabKind::Rwkv, ""); break;
    case 4: replace_vocabulary(doc, VocabKind::Plamo2, ""); break;
    case 5: replace_vocabulary(doc, VocabKind::None, ""); break;
    default: break;  // its own
  }
  return doc;
}

bool model_error(const Report& report) {
  for (const Finding& f : report.findings) {
    if (f.severity == Severity::Error && catalogue_entry(f.code).area == Area::Model) return true;
  }
  return false;
}

// A report's own invariants: findings sorted by offset and inside the file, each at its
// profile's severity (so no Model code in spec, where they are silent), counts that add up.
std::string check_report(const Report& report, const Options& options, std::size_t size) {
  std::uint64_t errors = 0;
  std::uint64_t previous = 0;
  for (const Finding& f : report.findings) {
    if (f.offset < previous) return "findings not sorted by offset";
    previous = f.offset;
    if (f.offset > size || f.length > size - f.offset) return "a finding outside the file";
    if (f.severity != options.severity(f.code)) return "a finding not at its profile's severity";
    if (f.message.empty() || f.path.empty()) return "a finding without message or path";
    errors += f.severity == Severity::Error;
  }
  if (errors > report.errors) return "errors not counted";
  if (report.passed() != (report.errors == 0)) return "the verdict against the errors";
  return "";
}

// Every profile's report, then: strict rejects whatever the llama.cpp profile rejects in the
// Model area, and a second run gives the same findings.
// Fuzzing, the spec profile and the second run are checked on one input in four each, chosen by
// its bytes (four validations an input held the target to a couple of hundred executions a
// second); a replay checks every input fully.
std::string check_model_verdicts(Bytes bytes, std::size_t choice) {
  const bool every = fuzz::every_run;
  Report reports[3];
  std::size_t r = 0;
  for (const Profile profile : {Profile::Strict, Profile::Spec, Profile::LlamaCpp}) {
    if (profile == Profile::Spec && !every && choice % 4 != 0) {
      ++r;
      continue;
    }
    Options options;
    options.profile = profile;
    reports[r] = validate(bytes, options);
    if (std::string problem = check_report(reports[r], options, bytes.size()); !problem.empty()) {
      return problem + " (profile " + std::string(to_string(profile)) + ")";
    }
    ++r;
  }
  const Report& strict = reports[0];
  const Report& llama = reports[2];
  if (model_error(llama) && strict.errors == 0) {
    return "the llama.cpp profile refuses the model, strict passes it";
  }
  if (!every && choice / 4 % 4 != 0) return "";
  Options again;
  again.profile = Profile::LlamaCpp;
  const Report second = validate(bytes, again);
  if (second.findings.size() != llama.findings.size() || second.errors != llama.errors) {
    return "two runs disagree";
  }
  for (std::size_t i = 0; i < second.findings.size(); ++i) {
    if (second.findings[i].code != llama.findings[i].code ||
        second.findings[i].offset != llama.findings[i].offset ||
        second.findings[i].message != llama.findings[i].message) {
      return "two runs disagree";
    }
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 256) return 0;  // a few dozen moves are plenty; longer programs only cost time
  Choices in(data, size);
  std::string arch;
  Document doc = starting_model(in, arch);
  for (int moves = 0; moves < 16 && !in.empty(); ++moves) {
    if (in.below(3) == 0) {
      move_model(doc, arch, in);
    } else {
      move_vocabulary(doc, arch, in);
    }
  }
  const std::vector<std::uint8_t> bytes = write_bytes(doc);
  const Bytes view(bytes.data(), bytes.size());
  const std::size_t choice = fuzz::choice_hash(Bytes(data, size), size);
  fuzz::fail_if(check_model_verdicts(view, choice), view);
  return 0;
}
