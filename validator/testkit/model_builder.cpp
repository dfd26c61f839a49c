#include "model_builder.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <regex>
#include <set>
#include <stdexcept>
#include <utility>

#include "llama_loader/interpreter.hpp"  // detail::modelled_architecture

namespace ggufcheck::testing {

namespace {

constexpr unsigned kMaxRounds = 400;
constexpr std::uint64_t kMaxFilledBytes = 64ULL << 20;
constexpr std::uint32_t kF32 = 0;
constexpr std::uint32_t kF16 = 1;

KeyValue u32(std::string key, std::uint32_t value) {
  return pair(std::move(key), Value::u32(value));
}
KeyValue f32(std::string key, float value) {
  return pair(std::move(key), Value::f32(value));
}

// What every spec has: the sizes, and the norm epsilon most architectures read.
std::vector<KeyValue> common(std::uint32_t layers) {
  return {u32("context_length", 128),     u32("embedding_length", 64),
          u32("block_count", layers),     u32("feed_forward_length", 128),
          u32("attention.head_count", 4), u32("attention.head_count_kv", 2),
          f32("rope.freq_base", 10000.0F)};
}

KeyValue rms_eps() {
  return f32("attention.layer_norm_rms_epsilon", 1e-5F);
}

std::vector<KeyValue> plus(std::vector<KeyValue> keys, std::vector<KeyValue> more) {
  for (KeyValue& kv : more) keys.push_back(std::move(kv));
  return keys;
}

std::vector<KeyValue> experts(std::uint32_t expert_ff) {
  std::vector<KeyValue> keys = {u32("expert_count", 4), u32("expert_used_count", 2)};
  if (expert_ff != 0) keys.push_back(u32("expert_feed_forward_length", expert_ff));
  return keys;
}

BaseSpec spec(std::string name, std::string arch, BaseSpec::Vocab vocab, std::string pre,
              std::vector<KeyValue> hparams, bool moe = false, std::uint32_t layers = 2) {
  BaseSpec s;
  s.name = std::move(name);
  s.arch = std::move(arch);
  s.layers = layers;
  s.moe = moe;
  s.vocab = vocab;
  s.pre = std::move(pre);
  s.hparams = std::move(hparams);
  return s;
}

// The spec's attention.head_count when it is one number, else 4.
std::uint32_t scalar_head_count(const BaseSpec& s) {
  for (const KeyValue& kv : s.hparams) {
    if (kv.key == "attention.head_count" && kv.value.type == ValueType::Uint32) {
      return static_cast<std::uint32_t>(kv.value.bits);
    }
  }
  return 4;
}

Value string_array(const std::vector<std::string>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (const std::string& s : items) values.push_back(Value::string(s));
  return Value::array(ValueType::String, std::move(values));
}

Value i32_array(const std::vector<std::int32_t>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (std::int32_t v : items) values.push_back(Value::i32(v));
  return Value::array(ValueType::Int32, std::move(values));
}

Value f32_array(const std::vector<float>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (float v : items) values.push_back(Value::f32(v));
  return Value::array(ValueType::Float32, std::move(values));
}

std::vector<std::string> letters() {
  std::vector<std::string> out;
  for (char c = 'a'; c <= 'p'; ++c) out.emplace_back(1, c);
  return out;
}

// 32 byte-level BPE tokens (GPT-2's byte alphabet: "Ġ" is a space, "Ċ" a newline), three
// control tokens first, and merges that build the longer ones.
void add_gpt2_vocabulary(Document& doc, const std::string& pre) {
  std::vector<std::string> tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "Ċ", "Ġ"};
  for (std::string& l : letters()) tokens.push_back(std::move(l));
  for (const char* t : {"ab", "cd", "ef", "gh", "Ġa", "Ġb", "Ġab", "abcd", "ĠĠ", "!", "?"}) {
    tokens.emplace_back(t);
  }
  std::vector<std::int32_t> types(tokens.size(), 1);
  for (std::size_t i = 0; i < 3; ++i) types[i] = 3;
  const std::vector<std::string> merges = {"a b", "c d",  "e f",   "g h", "Ġ a",
                                           "Ġ b", "Ġ ab", "ab cd", "Ġ Ġ"};
  doc.metadata.push_back(pair("tokenizer.ggml.model", Value::string("gpt2")));
  doc.metadata.push_back(pair("tokenizer.ggml.pre", Value::string(pre)));
  doc.metadata.push_back(pair("tokenizer.ggml.tokens", string_array(tokens)));
  doc.metadata.push_back(pair("tokenizer.ggml.token_type", i32_array(types)));
  doc.metadata.push_back(pair("tokenizer.ggml.merges", string_array(merges)));
  doc.metadata.push_back(u32("tokenizer.ggml.bos_token_id", 0));
  doc.metadata.push_back(u32("tokenizer.ggml.eos_token_id", 2));
}

// 32 SentencePiece tokens: unknown, the two control tokens, the newline byte token, "▁" pieces,
// and <|endoftext|>.
void add_llama_vocabulary(Document& doc) {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "<0x0A>", "\xE2\x96\x81"};
  for (std::string& l : letters()) tokens.push_back(std::move(l));
  for (const char* t : {"\xE2\x96\x81"
                        "a",
                        "\xE2\x96\x81"
                        "b",
                        "\xE2\x96\x81"
                        "c",
                        "\xE2\x96\x81"
                        "d",
                        "ab", "cd", "ef", "gh",
                        "\xE2\x96\x81"
                        "ab",
                        "abcd", "<|endoftext|>"}) {
    tokens.emplace_back(t);
  }
  std::vector<std::int32_t> types(tokens.size(), 1);
  types[0] = 2;
  types[1] = 3;
  types[2] = 3;
  types[3] = 6;
  types.back() = 3;  // <|endoftext|>, which llama.cpp looks up in a model named phi3
  std::vector<float> scores(tokens.size(), 0.0F);
  for (std::size_t i = 4; i < scores.size(); ++i) scores[i] = -static_cast<float>(i);
  doc.metadata.push_back(pair("tokenizer.ggml.model", Value::string("llama")));
  doc.metadata.push_back(pair("tokenizer.ggml.pre", Value::string("default")));
  doc.metadata.push_back(pair("tokenizer.ggml.tokens", string_array(tokens)));
  doc.metadata.push_back(pair("tokenizer.ggml.scores", f32_array(scores)));
  doc.metadata.push_back(pair("tokenizer.ggml.token_type", i32_array(types)));
  doc.metadata.push_back(u32("tokenizer.ggml.bos_token_id", 1));
  doc.metadata.push_back(u32("tokenizer.ggml.eos_token_id", 2));
  doc.metadata.push_back(u32("tokenizer.ggml.unknown_token_id", 0));
}

float float_of(const Value& v) {
  float f = 0;
  const auto bits = static_cast<std::uint32_t>(v.bits);
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

double double_of(const Value& v) {
  double d = 0;
  std::memcpy(&d, &v.bits, sizeof d);
  return d;
}

// --- the loop's guesses -------------------------------------------------------------------------

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

bool ends_with(std::string_view text, std::string_view end) {
  return text.size() >= end.size() && text.substr(text.size() - end.size()) == end;
}

// A key llama.cpp asked for: its type and a small value that fits the spec's sizes, guessed
// from the name (a wrong type is corrected by the next refusal).
KeyValue guess_key(const std::string& key);

// A key of sliding-window layers ("..._swa") is guessed as the file's key for the other layers
// (its type and value), so that the two kinds of layer have the same geometry.
KeyValue guess_key(const Document& doc, const std::string& key) {
  if (ends_with(key, "_swa")) {
    if (const KeyValue* full = find_pair(doc, key.substr(0, key.size() - 4))) {
      return pair(key, full->value);
    }
  }
  return guess_key(key);
}

KeyValue guess_key(const std::string& key) {
  if (contains(key, "lower_bound")) return f32(key, -5.0F);  // kda.gate_lower_bound: below 0
  for (const char* part : {"eps", "scale", "factor", "freq_base", "softcapping", "temperature",
                           "alpha", "beta", "log_mul", "clamp"}) {
    if (contains(key, part)) return f32(key, contains(key, "eps") ? 1e-5F : 1.0F);
  }
  if (ends_with(key, "_norm") || ends_with(key, "norm_topk_prob")) {
    return pair(key, Value::boolean(false));
  }
  std::uint32_t value = 1;
  if (ends_with(key, "sliding_window")) {
    value = 32;
  } else if (ends_with(key, "_rank")) {
    value = 16;
  } else if (ends_with(key, "key_length") || ends_with(key, "value_length") ||
             ends_with(key, "key_length_mla") || ends_with(key, "value_length_mla") ||
             ends_with(key, "dimension_count") || ends_with(key, "head_dim") ||
             ends_with(key, "head_size") || ends_with(key, "state_size")) {
    value = 16;
  } else if (ends_with(key, "expert_count")) {
    value = 4;
  } else if (ends_with(key, "expert_used_count")) {
    value = 2;
  } else if (ends_with(key, "feed_forward_length")) {
    value = 32;
  } else if (ends_with(key, "context_length")) {
    value = 128;
  } else if (ends_with(key, "ssm.inner_size")) {
    value = 128;  // Mamba-like loaders support an expansion factor of 2 only (2 * n_embd)
  } else if (ends_with(key, "conv_kernel")) {
    value = 4;
  } else if (ends_with(key, "time_step_rank")) {
    value = 4;
  } else if (ends_with(key, "embedding_length") || ends_with(key, "features_length") ||
             ends_with(key, "hidden_size")) {
    value = 64;
  } else if (ends_with(key, "vocab_size") || ends_with(key, "relative_buckets_count")) {
    value = 32;
  }
  return u32(key, value);
}

// The shape of the same tensor in another layer ("blk.1.attn_q.weight" for "blk.0.attn_q.weight"),
// else [1]: the next refusal gives the right one.
std::vector<std::uint64_t> guess_shape(const Document& doc, const std::string& name) {
  static const std::regex layer(R"(^blk\.([0-9]+)\.(.*)$)");
  std::smatch m;
  if (std::regex_match(name, m, layer)) {
    const std::string rest = m[2].str();
    for (const Tensor& t : doc.tensors) {
      std::smatch other;
      if (std::regex_match(t.name, other, layer) && other[2].str() == rest) return t.dims;
    }
  }
  return {1};
}

std::uint32_t layer_count(const Document& doc, const BaseSpec& spec) {
  const KeyValue* kv = find_pair(doc, spec.arch + ".block_count");
  const std::optional<std::int64_t> n = kv != nullptr ? scalar_number(kv->value) : std::nullopt;
  return n && *n > 0 && *n <= 512 ? static_cast<std::uint32_t>(*n) : spec.layers;
}

// The element type an array is tried with after `type` was refused (llama.cpp names the type it
// found, not the one it wants).
std::optional<ValueType> next_element_type(ValueType type) {
  switch (type) {
    case ValueType::Uint32:
    case ValueType::Int32: return ValueType::Float32;
    case ValueType::Float32: return ValueType::Uint64;
    case ValueType::Uint64: return ValueType::String;
    default: return std::nullopt;
  }
}

std::optional<Value> array_of(const Value& item, ValueType type, std::size_t n) {
  std::optional<Value> v = convert_scalar(item, type);
  if (!v) return std::nullopt;
  return Value::array(type, std::vector<Value>(n, *v));
}

// The experts a mixture-of-experts loader asked for ("n_expert must be > 0", "cannot have zero
// experts", or the same as a failed GGML_ASSERT): "" when the file has them already.
std::string learn_experts(Document& doc, const BaseSpec& spec) {
  std::string change;
  for (const auto& [suffix, value] :
       {std::pair<const char*, std::uint32_t>{"expert_count", 4}, {"expert_used_count", 2}}) {
    const std::string key = spec.arch + "." + suffix;
    if (find_pair(doc, key) != nullptr) continue;
    doc.metadata.push_back(u32(key, value));
    change += (change.empty() ? "key " : ", key ") + key + " u32";
  }
  return change;
}

// One refusal read and acted on: the change made, or "" when the message is not one the loop
// knows.
std::string learn(Document& doc, const BaseSpec& spec, const std::string& message) {
  static const std::regex key_missing(R"(key not found in model: (\S+))");
  static const std::regex array_missing(R"(array key not found in model: (\S+))");
  static const std::regex wrong_type(R"(key (\S+) has wrong type (\S+) but expected type (\S+))");
  static const std::regex wrong_length(R"(key (\S+) has wrong array length; expected ([0-9]+))");
  static const std::regex wrong_element(R"((\S+) has wrong array element type (\S+))");
  static const std::regex not_scalar(R"(expected scalar, found array for key: (\S+))");
  static const std::regex tensor_missing(R"(tensor '([^']+)' not found|missing tensor '([^']+)')");
  static const std::regex wrong_shape(
      R"(tensor '([^']+)' has wrong shape; expected ([-0-9, ]+), got)");
  std::smatch m;
  if (std::regex_search(message, m, array_missing)) {
    const std::string key = m[1].str();
    const std::uint32_t n = layer_count(doc, spec);
    KeyValue* kv = find_pair(doc, key);
    if (kv != nullptr && kv->value.type == ValueType::Array) return "";
    const Value item = kv != nullptr ? kv->value : guess_key(key).value;
    std::optional<Value> array = array_of(item, item.type, n);
    if (!array) return "";
    const std::string change =
        "array " + key + " " + gguf_type_name(item.type) + "[" + std::to_string(n) + "]";
    if (kv != nullptr) {
      kv->value = std::move(*array);
    } else {
      doc.metadata.push_back(pair(key, std::move(*array)));
    }
    return change;
  }
  if (std::regex_search(message, m, key_missing)) {
    const std::string key = m[1].str();
    if (find_pair(doc, key) != nullptr) return "";
    KeyValue kv = guess_key(doc, key);
    std::string change = std::string("key ") + key + " " + gguf_type_name(kv.value.type);
    doc.metadata.push_back(std::move(kv));
    return change;
  }
  if (std::regex_search(message, m, wrong_type)) {
    KeyValue* kv = find_pair(doc, m[1].str());
    const std::optional<ValueType> type = gguf_type_from_name(m[3].str());
    if (kv == nullptr || !type) return "";
    std::optional<Value> value = convert_scalar(kv->value, *type);
    if (!value) return "";
    kv->value = std::move(*value);
    return "type " + kv->key + " " + m[3].str();
  }
  if (std::regex_search(message, m, wrong_length)) {
    KeyValue* kv = find_pair(doc, m[1].str());
    const unsigned long long n = std::stoull(m[2].str());
    if (kv == nullptr || kv->value.type != ValueType::Array || kv->value.items.empty() || n == 0 ||
        n > 512) {
      return "";
    }
    const Value first = kv->value.items.front();
    kv->value.items.resize(static_cast<std::size_t>(n), first);
    return "length " + kv->key + " " + std::to_string(n);
  }
  if (std::regex_search(message, m, wrong_element)) {
    KeyValue* kv = find_pair(doc, m[1].str());
    if (kv == nullptr || kv->value.type != ValueType::Array || kv->value.items.empty()) return "";
    const std::optional<ValueType> type = next_element_type(kv->value.element_type);
    if (!type) return "";
    std::optional<Value> array = array_of(kv->value.items.front(), *type, kv->value.items.size());
    if (!array) return "";
    kv->value = std::move(*array);
    return "elements " + kv->key + " " + gguf_type_name(*type);
  }
  if (std::regex_search(message, m, not_scalar)) {
    KeyValue* kv = find_pair(doc, m[1].str());
    if (kv == nullptr || kv->value.type != ValueType::Array || kv->value.items.empty()) return "";
    kv->value = Value(kv->value.items.front());
    return "scalar " + kv->key;
  }
  if (std::regex_search(message, m, wrong_shape)) {
    Tensor* t = find_tensor(doc, m[1].str());
    if (t == nullptr) return "";
    std::vector<std::uint64_t> dims;
    const std::string list = m[2].str();
    static const std::regex number(R"(-?[0-9]+)");
    for (auto it = std::sregex_iterator(list.begin(), list.end(), number);
         it != std::sregex_iterator(); ++it) {
      const long long n = std::stoll(it->str());
      if (n < 0) return "";
      dims.push_back(static_cast<std::uint64_t>(n));
    }
    if (dims.empty() || dims.size() > kMaxDims) return "";
    // BERT's token-type embeddings are as many as tokenizer.ggml.token_type_count says (0 when
    // absent, a width llama.cpp accepts but no model has).
    if (t->name == "token_types.weight" && std::find(dims.begin(), dims.end(), 0) != dims.end() &&
        find_pair(doc, "tokenizer.ggml.token_type_count") == nullptr) {
      doc.metadata.push_back(u32("tokenizer.ggml.token_type_count", 2));
      return "key tokenizer.ggml.token_type_count u32";
    }
    t->dims = dims;
    return "shape " + t->name + " " + shape_text(dims);
  }
  if (std::regex_search(message, m, tensor_missing)) {
    const std::string name = m[1].matched ? m[1].str() : m[2].str();
    if (find_tensor(doc, name) != nullptr) return "";
    doc.tensors.push_back(tensor(name, guess_shape(doc, name), kF32));
    return "tensor " + name + " " + shape_text(doc.tensors.back().dims);
  }
  if (contains(message, "needs to define token type count")) {
    if (find_pair(doc, "tokenizer.ggml.token_type_count") != nullptr) return "";
    doc.metadata.push_back(u32("tokenizer.ggml.token_type_count", 2));
    return "key tokenizer.ggml.token_type_count u32";
  }
  if (contains(message, "n_expert") || contains(message, "zero experts")) {
    return learn_experts(doc, spec);
  }
  return "";
}

// Tensors the loop writes ahead: when a layer lacks a tensor, the later layers get the same one
// (most loaders build every layer alike), so that each costs no load of its own. A shape
// refusal that names one confirms it; "wrong number of tensors" at the end (a layer that does
// not take it) withdraws every unconfirmed one, and the loop goes on one tensor at a time.
class WrittenAhead {
 public:
  // After the loop's own change: a tensor of layer N added is added to the layers after N; a
  // shape learnt for layer N's is given to the unconfirmed ones after it. Returns what it did.
  std::string follow(Document& doc, const BaseSpec& spec, const std::string& change) {
    static const std::regex added(R"(^tensor blk\.([0-9]+)\.(\S+) )");
    static const std::regex reshaped(R"(^shape blk\.([0-9]+)\.(\S+) )");
    std::smatch m;
    const bool add = std::regex_search(change, m, added);
    if (!add && !std::regex_search(change, m, reshaped)) return "";
    const std::uint32_t layer = static_cast<std::uint32_t>(std::stoul(m[1].str()));
    const std::string rest = m[2].str();
    const std::string name = "blk." + m[1].str() + "." + rest;
    names_.erase(name);
    const Tensor* source = find_tensor(doc, name);
    if (source == nullptr) return "";
    const std::vector<std::uint64_t> dims = source->dims;
    std::size_t n = 0;
    for (std::uint32_t l = layer + 1; l < layer_count(doc, spec); ++l) {
      const std::string other = "blk." + std::to_string(l) + "." + rest;
      Tensor* t = find_tensor(doc, other);
      if (add && on_ && t == nullptr) {
        doc.tensors.push_back(tensor(other, dims, kF32));
        names_.insert(other);
        ++n;
      } else if (!add && t != nullptr && names_.count(other) != 0) {
        t->dims = dims;
        ++n;
      }
    }
    if (n == 0) return "";
    return " (" + std::to_string(n) + (add ? " more written ahead)" : " written ahead reshaped)");
  }

  // "wrong number of tensors": the unconfirmed ones out, and no more writing ahead.
  std::string withdraw(Document& doc) {
    if (names_.empty()) return "";
    std::erase_if(doc.tensors, [&](const Tensor& t) { return names_.count(t.name) != 0; });
    std::string change = "withdraw " + std::to_string(names_.size()) + " tensors written ahead";
    names_.clear();
    on_ = false;
    return change;
  }

 private:
  std::set<std::string> names_;
  bool on_ = true;
};

std::uint16_t half_bits(std::uint32_t k) {
  return static_cast<std::uint16_t>(0x2000U + ((k % 15U) << 6U));  // 2^-7 * (1 + k/16)
}

}  // namespace

namespace {

// The first architectures' specs, chosen by hand (the mutants of these run in full in CI).
std::vector<BaseSpec> hand_picked_specs() {
  using V = BaseSpec::Vocab;
  std::vector<BaseSpec> specs;
  specs.push_back(spec("llama", "llama", V::Llama, "",
                       plus(common(2), {rms_eps(), u32("rope.dimension_count", 16)})));
  specs.push_back(
      spec("llama-moe", "llama", V::Llama, "",
           plus(plus(common(2), {rms_eps(), u32("rope.dimension_count", 16)}), experts(0)), true));
  specs.push_back(spec("qwen2", "qwen2", V::Gpt2, "qwen2", plus(common(2), {rms_eps()})));
  specs.push_back(spec("qwen3", "qwen3", V::Gpt2, "qwen2", plus(common(2), {rms_eps()})));
  specs.push_back(spec("qwen3moe", "qwen3moe", V::Gpt2, "qwen2",
                       plus(plus(common(2), {rms_eps()}), experts(32)), true));
  specs.push_back(spec(
      "gemma2", "gemma2", V::Llama, "",
      plus(common(2), {rms_eps(), u32("attention.sliding_window", 32),
                       f32("attn_logit_softcapping", 50.0F), f32("final_logit_softcapping", 30.0F),
                       u32("attention.key_length", 16), u32("attention.value_length", 16)})));
  specs.push_back(
      spec("gemma3", "gemma3", V::Llama, "",
           plus(common(2), {rms_eps(), u32("attention.sliding_window", 32),
                            u32("attention.key_length", 16), u32("attention.value_length", 16)})));
  specs.push_back(spec("phi3", "phi3", V::Llama, "",
                       plus(common(2), {rms_eps(), u32("rope.dimension_count", 16)})));
  specs.back().optional_tensors = {"blk.{i}.attn_qkv.weight"};  // phi3 needs no attention input
  specs.front().optional_tensors = {"output.weight"};           // llama: a separate output
  specs.push_back(spec(
      "gpt-oss", "gpt-oss", V::Gpt2, "gpt-4o",
      plus(plus(common(2), {rms_eps(), u32("attention.sliding_window", 32)}), experts(32)), true));
  specs.push_back(spec("mistral3", "mistral3", V::Gpt2, "tekken", plus(common(2), {rms_eps()})));
  specs.push_back(spec(
      "deepseek2", "deepseek2", V::Gpt2, "deepseek-v3",
      plus(plus(common(3),
                {rms_eps(), u32("leading_dense_block_count", 1), u32("attention.q_lora_rank", 32),
                 u32("attention.kv_lora_rank", 16), u32("attention.key_length", 24),
                 u32("attention.value_length", 16), u32("rope.dimension_count", 8),
                 u32("expert_shared_count", 1), f32("expert_weights_scale", 1.0F)}),
           experts(32)),
      true, 3));
  specs.push_back(spec(
      "command-r", "command-r", V::Gpt2, "command-r",
      plus(common(2), {f32("attention.layer_norm_epsilon", 1e-5F), f32("logit_scale", 0.0625F)})));
  specs.push_back(
      spec("cohere2", "cohere2", V::Gpt2, "command-r",
           plus(common(2), {f32("attention.layer_norm_epsilon", 1e-5F), f32("logit_scale", 0.0625F),
                            u32("attention.sliding_window", 32)})));
  specs.push_back(spec("glm4", "glm4", V::Gpt2, "glm4", plus(common(2), {rms_eps()})));
  for (BaseSpec& s : specs) s.hand_picked = true;
  return specs;
}

bool one_of(const std::string& arch, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return arch == n; });
}

void set_key(BaseSpec& s, KeyValue kv) {
  for (KeyValue& k : s.hparams) {
    if (k.key == kv.key) {
      k = std::move(kv);
      return;
    }
  }
  s.hparams.push_back(std::move(kv));
}

Value u32_array(const std::vector<std::uint32_t>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (std::uint32_t v : items) values.push_back(Value::u32(v));
  return Value::array(ValueType::Uint32, std::move(values));
}

// One value a layer: `value`, but `other` in the layers where pick(i) holds.
template <typename Pick>
Value per_layer(std::uint32_t layers, std::uint32_t value, std::uint32_t other, Pick pick) {
  std::vector<std::uint32_t> items;
  for (std::uint32_t i = 0; i < layers; ++i) items.push_back(pick(i) ? other : value);
  return u32_array(items);
}

// Where llama.cpp asserts (aborts, so the loop cannot learn it) or requires a relation between
// values that the loop's guesses do not meet. Read from the loaders in src/models/ of the pinned
// llama.cpp; each line names the reason.
void apply_overrides(BaseSpec& s) {
  const std::string& a = s.arch;
  // The loaders that need experts (they throw, or assert, without them).
  if (one_of(a, {"llama4",       "cohere2moe",     "grok",        "qwen2moe",      "qwen3next",
                 "qwen3vlmoe",   "qwen35moe",      "qwen4exp",    "phimoe",        "dbrx",
                 "olmoe",        "arctic",         "deepseek",    "deepseek2-ocr", "deepseek32",
                 "dots3note",    "deepseek4",      "glm4moe",     "glm-dsa",       "exaone-moe",
                 "bailingmoe",   "bailingmoe2",    "bailingmoe3", "dots1",         "afmoe",
                 "ernie4_5-moe", "hunyuan-moe",    "hy_v3",       "hy_v4",         "lfm2moe",
                 "smallthinker", "llada-moe",      "grovemoe",    "minimax-01",    "minimax-m2",
                 "minimax-m3",   "rnd1",           "paddleocr",   "mimo2",         "kimi-linear",
                 "kimi-k3",      "step35",         "mistral4",    "mellum",        "laguna",
                 "maple",        "nomic-bert-moe", "granitemoe",  "olmoe",         "spark2_5"})) {
    s.moe = true;
    for (KeyValue& kv : experts(32)) set_key(s, std::move(kv));
  }
  // Multi-head latent attention: key_length = kv_lora_rank + rope dims, the *_mla lengths the
  // per-head sizes (deepseek2's qk_nope = key_length_mla - rope dims must be at least 1).
  if (one_of(a, {"deepseek32", "glm-dsa", "dots3note", "kimi-linear", "bailingmoe3", "kimi-k3",
                 "mistral4", "hy_v4", "deepseek2-ocr"})) {
    set_key(s, u32("attention.head_count", 1));
    set_key(s, u32("attention.head_count_kv", 1));
    set_key(s, u32("attention.q_lora_rank", 32));
    set_key(s, u32("attention.kv_lora_rank", 16));
    set_key(s, u32("attention.key_length", 24));
    set_key(s, u32("attention.value_length", 16));
    set_key(s, u32("rope.dimension_count", 8));
    set_key(s, u32("attention.key_length_mla", 24));
    set_key(s, u32("attention.value_length_mla", 16));
  }
  // Jamba-like hybrids: a layer with no KV heads is a recurrent one.
  if (one_of(a, {"jamba", "plamo2", "nemotron_h", "nemotron_h_moe", "granitehybrid", "lfm2",
                 "lfm2moe", "kimi-linear", "bailingmoe3", "kimi-k3"})) {
    const auto recurrent = [](std::uint32_t i) { return i == 1; };
    set_key(s,
            pair("attention.head_count", per_layer(s.layers, scalar_head_count(s), 0, recurrent)));
    set_key(s, pair("attention.head_count_kv",
                    per_layer(s.layers, scalar_head_count(s), 0, recurrent)));
  }
  // llama4: every 4th layer has no RoPE (n_no_rope_layer_step is 4).
  if (a == "llama4") {
    s.layers = 4;
    set_key(s, u32("block_count", 4));
  }
  // gemma3n: the KV cache is shared from layer 20 on (hard-coded).
  if (a == "gemma3n") {
    s.layers = 22;
    set_key(s, u32("block_count", 22));
    set_key(s, u32("attention.head_count", 1));
    set_key(s, u32("attention.head_count_kv", 1));
  }
  // gemma4: every 5th layer is a full-attention one.
  if (a == "gemma4" || a == "gemma4-assistant") {
    s.layers = 5;
    set_key(s, u32("block_count", 5));
    set_key(s, u32("attention.sliding_window_pattern", 5));
    set_key(s, u32("attention.shared_kv_layers", 0));
    set_key(s, u32("attention.key_length_swa", 16));
    set_key(s, u32("attention.value_length_swa", 16));
    set_key(s, u32("attention.key_length", 16));
    set_key(s, u32("attention.value_length", 16));
  }
  // hrm_text: block_count = layers_per_stack * h_cycles * (l_cycles + 1).
  if (a == "hrm_text") {
    set_key(s, u32("hrm.layers_per_stack", 1));
    set_key(s, u32("hrm.h_cycles", 1));
    set_key(s, u32("hrm.l_cycles", 1));
  }
  // eagle3, dflash: drafts that name the target's layers (eagle3: exactly 3).
  if (a == "eagle3" || a == "dflash") {
    set_key(s, pair("target_layers", u32_array({0, 1, 1})));
    set_key(s, u32("target_hidden_size", 64));
  }
  // deepseek4: one compression ratio a layer (0, 4 or 128), sqrtsoftplus routing (4).
  if (a == "deepseek4") {
    s.layers = 4;
    set_key(s, u32("block_count", 4));
    set_key(s, u32("attention.head_count_kv", 1));
    set_key(s, pair("attention.compress_ratios", u32_array({0, 0, 4, 128})));
    set_key(s, u32("expert_gating_func", 4));
    set_key(s, u32("hyper_connection.count", 4));
    set_key(s, u32("attention.output_group_count", 4));
    set_key(s, u32("attention.output_lora_rank", 16));
  }
  // wavtokenizer-dec: posnet and convnext as wide as each other, posnet's layers named 0-5.
  if (a == "wavtokenizer-dec") {
    set_key(s, u32("features_length", 64));
    set_key(s, u32("posnet.embedding_length", 64));
    set_key(s, u32("posnet.block_count", 2));
    set_key(s, u32("convnext.embedding_length", 64));
    set_key(s, u32("convnext.block_count", 2));
  }
  // Optional keys (0 when absent) that size a required tensor: a dim of 0 makes llama.cpp abort
  // in its tensor checks rather than refuse, so the loop cannot learn them.
  if (one_of(a, {"deepseek", "deepseek2-ocr", "deepseek32", "deepseek4"})) {
    set_key(s, u32("expert_shared_count", 1));  // the shared experts' width
  }
  if (a == "deepseek4") set_key(s, u32("attention.q_lora_rank", 32));
  // The sparse-attention indexer's widths: llama.cpp accepts 0 (tensors with a dim of 0, which
  // strict refuses: GGUF3008), so the loop would keep its first guess.
  if (a == "deepseek32" || a == "deepseek4") {
    set_key(s, u32("attention.indexer.head_count", 2));
    set_key(s, u32("attention.indexer.key_length", 16));
    set_key(s, u32("attention.indexer.top_k", 4));
  }
  if (a == "rwkv7") set_key(s, u32("attention.gate_lora_rank", 16));
  // cohere2moe reads either norm epsilon and refuses a file with neither (no key is named).
  if (a == "cohere2moe") set_key(s, rms_eps());
  // gemma4-assistant: a draft whose output width is the target's, unlike its own n_embd.
  if (a == "gemma4-assistant") set_key(s, u32("embedding_length_out", 128));
  // laguna reads its attention gate's width from the tensor and aborts unless it is per head
  // (n_head) or per element (n_embd).
  if (a == "laguna") {
    s.optional_tensors.emplace_back("blk.{i}.attn_gate.weight", std::vector<std::uint64_t>{64, 4});
  }
  // qwen4exp: hyper-connections mix at least two streams (a count of 1 is refused, and the
  // loop's guess is 1).
  if (a == "qwen4exp") set_key(s, u32("hyper_connection.count", 4));
  // graniteswitch: one token id of each kind per adapter (arrays the loop would size by layers).
  if (a == "graniteswitch") {
    set_key(s, u32("adapters.count", 1));
    set_key(s, u32("adapters.lora_rank", 4));
    set_key(s, pair("adapters.token_ids_activate", i32_array({5})));
    set_key(s, pair("adapters.token_ids_substitute", i32_array({6})));
  }
  // jina-bert-v2 asserts that ffn_up is n_ff or 2 * n_ff wide (the first guess, [1], aborts).
  if (a == "jina-bert-v2")
    s.optional_tensors.emplace_back("blk.{i}.ffn_up.weight", std::vector<std::uint64_t>{64, 128});
  // rwkv6 needs one of its two token-shift forms (it asserts that one is there).
  if (a == "rwkv6" || a == "rwkv6qwen2") {
    s.optional_tensors.emplace_back("blk.{i}.time_mix_lerp_fused.weight");
  }
}

}  // namespace

BaseSpec generic_spec(const std::string& arch) {
  BaseSpec s = spec(arch, arch, BaseSpec::Vocab::Llama, "", common(2));
  apply_overrides(s);
  return s;
}

std::vector<BaseSpec> base_specs(const std::vector<std::string>& architectures) {
  std::vector<BaseSpec> hand = hand_picked_specs();
  std::vector<BaseSpec> specs;
  for (const std::string& arch : architectures) {
    bool picked = false;
    for (const BaseSpec& h : hand) {
      if (h.arch != arch) continue;
      specs.push_back(h);
      picked = true;
    }
    if (!picked) specs.push_back(generic_spec(arch));
  }
  return specs;
}

bool ggufcheck_models_tensors_of(std::string_view arch) {
  return detail::modelled_architecture(arch);
}

std::vector<std::string> architecture_names(const std::filesystem::path& table) {
  std::ifstream in(table);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  static const std::regex row(R"re(GGUFCHECK_LLAMA_ARCH\("[A-Z0-9_]+", "([^"]+)", [0-9]+\))re");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), row); it != std::sregex_iterator();
       ++it) {
    const std::string name = (*it)[1].str();
    if (name != "(unknown)") names.push_back(name);
  }
  return names;
}

Document starting_document(const BaseSpec& spec) {
  Document doc;
  doc.metadata.push_back(pair("general.architecture", Value::string(spec.arch)));
  doc.metadata.push_back(pair("general.name", Value::string("tiny " + spec.name)));
  for (const KeyValue& kv : spec.hparams) {
    KeyValue prefixed = kv;
    prefixed.key = spec.arch + "." + kv.key;
    doc.metadata.push_back(std::move(prefixed));
  }
  if (spec.vocab == BaseSpec::Vocab::Gpt2) {
    add_gpt2_vocabulary(doc, spec.pre);
  } else {
    add_llama_vocabulary(doc);
  }
  return doc;
}

std::string BaseModel::describe() const {
  return spec.name + ": arch " + spec.arch + ", " + std::to_string(spec.layers) + " layers, " +
         std::to_string(document.tensors.size()) + " tensors, " +
         std::to_string(document.metadata.size()) + " keys (" + std::to_string(learned.size()) +
         " changes learned in " + std::to_string(loads) + " loads)";
}

ByteVector model_bytes(const Document& document) {
  Document doc = document;
  for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
    Tensor& t = doc.tensors[i];
    if (t.data || (t.type != kF32 && t.type != kF16)) continue;
    const std::optional<std::uint64_t> nbytes = tensor_nbytes(t.type, t.dims);
    if (!nbytes || *nbytes > kMaxFilledBytes) continue;
    std::vector<std::uint8_t> data(static_cast<std::size_t>(*nbytes));
    const std::size_t width = t.type == kF32 ? 4 : 2;
    // Element e holds the value of k = 7e + 3i: k mod 30 repeats every 30 elements, so the
    // first 30 are computed and the rest copied, doubling.
    const std::size_t period = std::min<std::size_t>(30 * width, data.size());
    for (std::size_t e = 0; e * width < period; ++e) {
      const auto k = static_cast<std::uint32_t>(e * 7 + i * 3);
      if (t.type == kF32) {
        const float v = static_cast<float>(1 + k % 15) / (k % 2 == 0 ? 256.0F : -256.0F);
        std::memcpy(&data[e * 4], &v, 4);
      } else {
        const std::uint16_t h = half_bits(k);
        std::memcpy(&data[e * 2], &h, 2);
      }
    }
    for (std::size_t filled = period; filled < data.size();) {
      const std::size_t n = std::min(filled, data.size() - filled);
      std::memcpy(&data[filled], data.data(), n);
      filled += n;
    }
    t.data = std::move(data);
  }
  return write_bytes(doc);
}

namespace {

// The loop's last few changes, for a refusal it cannot act on.
std::string last_changes(const std::vector<std::string>& learned) {
  constexpr std::size_t kShown = 8;
  std::string out;
  for (std::size_t i = learned.size() > kShown ? learned.size() - kShown : 0; i < learned.size();
       ++i) {
    out += (out.empty() ? " [last changes: " : "; ") + learned[i];
  }
  return out.empty() ? out : out + "]";
}

}  // namespace

BaseModel build_base(LlamaLoaderReference& reference, const BaseSpec& spec,
                     const std::filesystem::path& file) {
  BaseModel model;
  model.spec = spec;
  model.document = starting_document(spec);
  model.file = file;
  for (const SeedTensor& seed : spec.optional_tensors) {
    const std::size_t at = seed.name.find("{i}");
    for (std::uint32_t i = 0; i < (at == std::string::npos ? 1 : spec.layers); ++i) {
      std::string n = seed.name;
      if (at != std::string::npos) n.replace(at, 3, std::to_string(i));
      model.document.tensors.push_back(tensor(n, seed.dims, kF32));
    }
  }
  std::set<std::string> changes;
  WrittenAhead ahead;
  for (unsigned round = 0; round < kMaxRounds; ++round) {
    if (!save_file(file, model_bytes(model.document))) {
      throw std::runtime_error("base " + spec.name + ": cannot write " + file.string());
    }
    const LoaderResult result = reference.load(file);
    ++model.loads;
    if (result.loads()) return model;
    const std::string where = "base " + spec.name + " after " + std::to_string(model.loads) +
                              " loads: llama.cpp " + to_string(result.outcome) + ": " +
                              result.message + last_changes(model.learned);
    // An abort teaches only what its assertion names (the experts a MoE loader needs).
    const bool aborted =
        result.outcome == LoaderOutcome::Crashes &&
        (contains(result.message, "n_expert") || contains(result.message, "zero experts"));
    if (result.outcome != LoaderOutcome::Refuses && !aborted) throw std::runtime_error(where);
    std::string change;
    if (aborted) {
      change = learn_experts(model.document, spec);
    } else if (contains(result.message, "wrong number of tensors")) {
      change = ahead.withdraw(model.document);
    } else {
      change = learn(model.document, spec, result.message);
      if (!change.empty()) change += ahead.follow(model.document, spec, change);
    }
    if (change.empty()) throw std::runtime_error(where + " (a refusal the builder cannot act on)");
    if (!changes.insert(change).second) {
      throw std::runtime_error(where + " (the same change again: " + change + ")");
    }
    model.learned.push_back(std::move(change));
  }
  throw std::runtime_error("base " + spec.name + ": no model after " + std::to_string(kMaxRounds) +
                           " loads");
}

std::string shape_text(const std::vector<std::uint64_t>& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

Tensor* find_tensor(Document& document, std::string_view name) {
  for (Tensor& t : document.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

constexpr std::array<std::pair<ValueType, const char*>, 13> kTypeNames = {{
    {ValueType::Uint8, "u8"},
    {ValueType::Int8, "i8"},
    {ValueType::Uint16, "u16"},
    {ValueType::Int16, "i16"},
    {ValueType::Uint32, "u32"},
    {ValueType::Int32, "i32"},
    {ValueType::Float32, "f32"},
    {ValueType::Bool, "bool"},
    {ValueType::String, "str"},
    {ValueType::Array, "arr"},
    {ValueType::Uint64, "u64"},
    {ValueType::Int64, "i64"},
    {ValueType::Float64, "f64"},
}};

}  // namespace

const char* gguf_type_name(ValueType type) {
  for (const auto& [t, name] : kTypeNames) {
    if (t == type) return name;
  }
  return "?";
}

std::optional<ValueType> gguf_type_from_name(std::string_view name) {
  for (const auto& [t, n] : kTypeNames) {
    if (name == n) return t;
  }
  return std::nullopt;
}

std::optional<std::int64_t> scalar_number(const Value& value) {
  switch (value.type) {
    case ValueType::Uint8:
    case ValueType::Uint16:
    case ValueType::Uint32:
    case ValueType::Bool: return static_cast<std::int64_t>(value.bits);
    case ValueType::Uint64:
      return value.bits > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                 ? std::nullopt
                 : std::optional<std::int64_t>(static_cast<std::int64_t>(value.bits));
    case ValueType::Int8: return static_cast<std::int8_t>(value.bits);
    case ValueType::Int16: return static_cast<std::int16_t>(value.bits);
    case ValueType::Int32: return static_cast<std::int32_t>(value.bits);
    case ValueType::Int64: return static_cast<std::int64_t>(value.bits);
    case ValueType::Float32: {
      const float f = float_of(value);
      if (!std::isfinite(f) || std::fabs(f) > 9e18F) return std::nullopt;
      return static_cast<std::int64_t>(f);
    }
    case ValueType::Float64: {
      const double d = double_of(value);
      if (!std::isfinite(d) || std::fabs(d) > 9e18) return std::nullopt;
      return static_cast<std::int64_t>(d);
    }
    case ValueType::String:
    case ValueType::Array: return std::nullopt;
  }
  return std::nullopt;
}

std::optional<Value> convert_scalar(const Value& value, ValueType type) {
  const bool is_float = value.type == ValueType::Float32 || value.type == ValueType::Float64;
  double real = 0;
  if (value.type == ValueType::Float32) real = float_of(value);
  if (value.type == ValueType::Float64) real = double_of(value);
  const std::optional<std::int64_t> number = scalar_number(value);
  if (!is_float && !number) return std::nullopt;
  if (!is_float) real = static_cast<double>(*number);
  const std::int64_t n = number.value_or(0);
  const auto bits = static_cast<std::uint64_t>(n);
  switch (type) {
    case ValueType::Uint8: return Value::integer(type, bits & 0xFFU);
    case ValueType::Int8: return Value::integer(type, bits & 0xFFU);
    case ValueType::Uint16: return Value::integer(type, bits & 0xFFFFU);
    case ValueType::Int16: return Value::integer(type, bits & 0xFFFFU);
    case ValueType::Uint32: return Value::integer(type, bits & 0xFFFFFFFFU);
    case ValueType::Int32: return Value::integer(type, bits & 0xFFFFFFFFU);
    case ValueType::Uint64:
    case ValueType::Int64: return Value::integer(type, bits);
    case ValueType::Float32: return Value::f32(static_cast<float>(real));
    case ValueType::Float64: return Value::f64(real);
    case ValueType::Bool: return Value::boolean(real != 0);
    case ValueType::String: return Value::string(std::to_string(n));
    case ValueType::Array: return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace ggufcheck::testing
