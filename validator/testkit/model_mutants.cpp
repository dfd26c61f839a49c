#include "model_mutants.hpp"

#include <algorithm>
#include <cstdio>
#include <random>
#include <utility>

namespace ggufcheck::testing {

namespace {

constexpr std::uint32_t kF32 = 0;
constexpr std::uint64_t kMaxLayers = 512;  // LLAMA_MAX_LAYERS

// What the mutants of one base need to know about it.
struct Base {
  const BaseModel& model;
  std::string arch;
  std::uint32_t layers = 0;
  std::uint64_t n_embd = 0;
  std::uint64_t n_vocab = 0;
  bool moe = false;
  bool gpt2 = false;

  explicit Base(const BaseModel& m) : model(m), arch(m.spec.arch), layers(m.spec.layers) {
    moe = m.spec.moe;
    gpt2 = m.spec.vocab == BaseSpec::Vocab::Gpt2;
    if (const KeyValue* kv = find_pair(m.document, key("embedding_length"))) {
      n_embd = scalar_number(kv->value).value_or(0) > 0
                   ? static_cast<std::uint64_t>(*scalar_number(kv->value))
                   : 0;
    }
    if (const KeyValue* kv = find_pair(m.document, "tokenizer.ggml.tokens")) {
      n_vocab = kv->value.items.size();
    }
  }
  [[nodiscard]] std::string key(const std::string& suffix) const { return arch + "." + suffix; }
  [[nodiscard]] const Document& doc() const { return model.document; }
};

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

// "blk.<n>." of a layer tensor, or -1.
long layer_of(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  std::size_t end = 4;
  while (end < name.size() && name[end] >= '0' && name[end] <= '9') ++end;
  if (end == 4 || end >= name.size() || name[end] != '.') return -1;
  return std::stol(name.substr(4, end - 4));
}

std::string with_layer(const std::string& name, std::uint64_t layer) {
  const std::size_t dot = name.find('.', 4);
  return "blk." + std::to_string(layer) + name.substr(dot);
}

void set_value(Document& doc, const std::string& key, Value value) {
  if (KeyValue* kv = find_pair(doc, key)) {
    kv->value = std::move(value);
  } else {
    doc.metadata.push_back(pair(key, std::move(value)));
  }
}

void erase_key(Document& doc, const std::string& key) {
  std::erase_if(doc.metadata, [&](const KeyValue& kv) { return kv.key == key; });
}

Value string_array(const std::vector<std::string>& items) {
  std::vector<Value> values;
  values.reserve(items.size());
  for (const std::string& s : items) values.push_back(Value::string(s));
  return Value::array(ValueType::String, std::move(values));
}

Value number_array(ValueType type, std::vector<std::uint64_t> numbers) {
  std::vector<Value> values;
  values.reserve(numbers.size());
  for (std::uint64_t n : numbers) {
    values.push_back(type == ValueType::Float32 ? Value::f32(static_cast<float>(n))
                                                : Value::integer(type, n));
  }
  return Value::array(type, std::move(values));
}

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  std::vector<ModelMutant> take() { return std::move(out_); }

  void all(const BaseModel& model) {
    const Base b(model);
    tensors(b);
    keys(b);
    layer_arrays(b);
    out_of_range(b);
    vocabulary(b, b.doc(), false);
    vocab_only(b);
    metadata_only(b);
    artifact_kinds(b);
    splits(b);
  }

 private:
  std::mt19937_64 rng_;
  std::vector<ModelMutant> out_;

  std::size_t pick(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng_() % n); }

  void single(const Base& b, std::string kind, std::string what, Document doc,
              bool vocab_only = false) {
    ModelMutant m;
    m.kind = std::move(kind);
    m.base = b.model.spec.name;
    m.what = std::move(what);
    m.vocab_only = vocab_only;
    m.files.push_back({b.model.spec.name + ".gguf", std::move(doc)});
    m.load_names = {m.files.front().name};
    m.check_names = m.load_names;
    out_.push_back(std::move(m));
  }

  // --- tensors --------------------------------------------------------------------------------

  void tensors(const Base& b) {
    const Document& base = b.doc();
    for (std::size_t i = 0; i < base.tensors.size(); ++i) {
      Document doc = base;
      doc.tensors.erase(doc.tensors.begin() + static_cast<std::ptrdiff_t>(i));
      single(b, "drop-tensor", "drop " + base.tensors[i].name, std::move(doc));
    }
    if (std::none_of(base.tensors.begin(), base.tensors.end(),
                     [](const Tensor& t) { return t.name == "output.weight"; })) {
      Document doc = base;
      doc.tensors.push_back(tensor("output.weight", {b.n_embd, b.n_vocab}, kF32));
      single(b, "add-output", "add output.weight " + shape_text({b.n_embd, b.n_vocab}),
             std::move(doc));
    }
    for (const Tensor& t : base.tensors) {
      if (!ends_with(t.name, ".weight")) continue;
      const std::string bias = t.name.substr(0, t.name.size() - 7) + ".bias";
      if (std::any_of(base.tensors.begin(), base.tensors.end(),
                      [&](const Tensor& u) { return u.name == bias; })) {
        continue;
      }
      std::vector<std::uint64_t> dims =
          t.dims.size() == 1 ? t.dims
                             : std::vector<std::uint64_t>(t.dims.begin() + 1, t.dims.end());
      Document doc = base;
      doc.tensors.push_back(tensor(bias, dims, kF32));
      single(b, "add-bias", "add " + bias + " " + shape_text(dims), std::move(doc));
    }
    const std::vector<std::pair<std::string, std::vector<std::uint64_t>>> junk = {
        {"junk.weight", {4}},
        {"blk.0.junk.weight", {b.n_embd}},
        {"blk." + std::to_string(b.layers) + ".attn_norm.weight", {b.n_embd}},
    };
    for (const auto& [name, dims] : junk) {
      Document doc = base;
      doc.tensors.push_back(tensor(name, dims, kF32));
      single(b, "add-junk-tensor", "add " + name + " " + shape_text(dims), std::move(doc));
    }
    for (std::size_t i = 0; i < base.tensors.size(); ++i) rename(b, i);
    for (std::size_t i = 0; i < base.tensors.size(); ++i) change_dims(b, i);
  }

  void rename_to(const Base& b, const std::string& name, Document doc, std::size_t i) {
    std::string what = "rename " + name + " to " + doc.tensors[i].name;
    single(b, "rename-tensor", std::move(what), std::move(doc));
  }

  void rename(const Base& b, std::size_t i) {
    const Document& base = b.doc();
    const std::string& name = base.tensors[i].name;
    {
      Document doc = base;
      doc.tensors[i].name = name + "s";  // ".weights", ".biass": a name no loader asks for
      rename_to(b, name, std::move(doc), i);
    }
    const long layer = layer_of(name);
    if (layer < 0) {
      Document doc = base;
      doc.tensors[i].name = "model." + name;
      rename_to(b, name, std::move(doc), i);
      return;
    }
    Document doc = base;
    if (pick(2) == 0) {
      doc.tensors[i].name = with_layer(name, b.layers);
      rename_to(b, name, std::move(doc), i);
      return;
    }
    // Exchange the names of this tensor and the same one of another layer.
    const std::string other = with_layer(name, (static_cast<std::uint64_t>(layer) + 1) % b.layers);
    for (Tensor& t : doc.tensors) {
      if (t.name == other) {
        t.name = name;
        doc.tensors[i].name = other;
        single(b, "rename-tensor", "exchange the names of " + name + " and " + other,
               std::move(doc));
        return;
      }
    }
  }

  void change_dims(const Base& b, std::size_t i) {
    const Tensor& t = b.doc().tensors[i];
    auto emit = [&](std::vector<std::uint64_t> dims, const std::string& how) {
      Document doc = b.doc();
      doc.tensors[i].dims = dims;
      single(b, "change-dim",
             t.name + " " + shape_text(t.dims) + " -> " + shape_text(dims) + " (" + how + ")",
             std::move(doc));
    };
    for (std::size_t d = 0; d < t.dims.size(); ++d) {
      std::vector<std::uint64_t> dims = t.dims;
      ++dims[d];
      emit(dims, "ne[" + std::to_string(d) + "] + 1");
    }
    // Two of the other changes, chosen by the seed.
    std::vector<std::pair<std::vector<std::uint64_t>, std::string>> options;
    for (std::size_t d = 0; d < t.dims.size(); ++d) {
      if (t.dims[d] > 1) {
        std::vector<std::uint64_t> dims = t.dims;
        --dims[d];
        options.emplace_back(dims, "ne[" + std::to_string(d) + "] - 1");
        break;
      }
    }
    {
      std::vector<std::uint64_t> dims = t.dims;
      dims[0] *= 2;
      options.emplace_back(dims, "ne[0] * 2");
    }
    if (t.dims.size() == 2 && t.dims[0] != t.dims[1]) {
      options.emplace_back(std::vector<std::uint64_t>{t.dims[1], t.dims[0]}, "transposed");
    }
    if (t.dims.size() < kMaxDims) {
      std::vector<std::uint64_t> dims = t.dims;
      dims.push_back(1);
      options.emplace_back(dims, "a trailing dim of 1");
    }
    if (t.dims.size() >= 2) {
      std::vector<std::uint64_t> dims = t.dims;
      dims.pop_back();
      options.emplace_back(dims, "the last dim dropped");
    }
    for (int n = 0; n < 2 && !options.empty(); ++n) {
      const std::size_t k = pick(options.size());
      emit(options[k].first, options[k].second);
      options.erase(options.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }

  // --- keys -----------------------------------------------------------------------------------

  void keys(const Base& b) {
    const Document& base = b.doc();
    for (std::size_t i = 0; i < base.metadata.size(); ++i) {
      Document doc = base;
      doc.metadata.erase(doc.metadata.begin() + static_cast<std::ptrdiff_t>(i));
      single(b, "drop-key", "drop " + base.metadata[i].key, std::move(doc));
    }
    for (std::size_t i = 0; i < base.metadata.size(); ++i) {
      const KeyValue& kv = base.metadata[i];
      std::vector<ValueType> to;
      switch (kv.value.type) {
        case ValueType::Uint32:
          to = {ValueType::Uint64, ValueType::Int32, ValueType::Float32, ValueType::Uint16};
          break;
        case ValueType::Float32: to = {ValueType::Float64, ValueType::Uint32}; break;
        case ValueType::Bool: to = {ValueType::Uint8}; break;
        case ValueType::String: to = {ValueType::Uint32}; break;
        default: break;
      }
      for (ValueType type : to) {
        Document doc = base;
        std::optional<Value> value = convert_scalar(kv.value, type);
        if (!value) continue;
        doc.metadata[i].value = std::move(*value);
        single(b, "retype-key",
               kv.key + " " + gguf_type_name(kv.value.type) + " -> " + gguf_type_name(type),
               std::move(doc));
      }
    }
  }

  // Keys llama.cpp reads with get_key_or_arr: a scalar, or an array of one value per layer.
  void layer_arrays(const Base& b) {
    std::vector<std::string> names = {"attention.head_count_kv", "attention.head_count",
                                      "feed_forward_length"};
    if (b.moe) names.emplace_back("expert_used_count");
    for (const std::string& suffix : names) {
      const std::string key = b.key(suffix);
      const KeyValue* kv = find_pair(b.doc(), key);
      if (kv == nullptr || !scalar_number(kv->value)) continue;
      const auto v = static_cast<std::uint64_t>(*scalar_number(kv->value));
      const std::uint64_t l = b.layers;
      auto emit = [&](Value value, const std::string& how) {
        Document doc = b.doc();
        set_value(doc, key, std::move(value));
        single(b, "layer-array", key + " as " + how, std::move(doc));
      };
      emit(number_array(ValueType::Uint32, std::vector<std::uint64_t>(l, v)),
           "u32[" + std::to_string(l) + "] of " + std::to_string(v));
      emit(number_array(ValueType::Uint32, std::vector<std::uint64_t>(l - 1, v)),
           "u32[" + std::to_string(l - 1) + "] (one short)");
      emit(number_array(ValueType::Uint32, std::vector<std::uint64_t>(l + 1, v)),
           "u32[" + std::to_string(l + 1) + "] (one long)");
      emit(number_array(ValueType::Uint32, {}), "an empty u32 array");
      emit(number_array(ValueType::Int32, std::vector<std::uint64_t>(l, v)),
           "i32[" + std::to_string(l) + "]");
      emit(number_array(ValueType::Float32, std::vector<std::uint64_t>(l, v)),
           "f32[" + std::to_string(l) + "]");
      std::vector<std::uint64_t> varied(l, v);
      varied.back() = v == 1 ? 2 : v / 2;
      emit(number_array(ValueType::Uint32, varied), "u32 with another value in the last layer");
      emit(number_array(ValueType::Uint32, std::vector<std::uint64_t>(kMaxLayers + 1, v)),
           "u32[513] (over LLAMA_MAX_LAYERS)");
    }
  }

  void out_of_range(const Base& b) {
    auto emit = [&](const std::string& suffix, Value value, const std::string& text) {
      Document doc = b.doc();
      set_value(doc, b.key(suffix), std::move(value));
      single(b, "out-of-range", b.key(suffix) + " = " + text, std::move(doc));
    };
    auto u32 = [&](const std::string& suffix, std::uint64_t v) {
      emit(suffix, Value::u32(static_cast<std::uint32_t>(v)), std::to_string(v));
    };
    const std::uint64_t l = b.layers;
    for (std::uint64_t v : {std::uint64_t{0}, l - 1, l + 1, kMaxLayers, kMaxLayers + 1}) {
      u32("block_count", v);
    }
    u32("nextn_predict_layers", l + 1);
    u32("nextn_predict_layers", 1);
    if (b.moe) {
      u32("expert_used_count", 5);
      u32("expert_used_count", 0);
      u32("expert_count", 0);
      u32("expert_count", 2);
      u32("expert_count", 513);
      u32("expert_group_count", 2);
    } else {
      u32("expert_count", 4);
    }
    emit("rope.scaling.type", Value::string("bogus"), "\"bogus\"");
    emit("rope.scaling.type", Value::string("yarn"), "\"yarn\"");
    emit("rope.scaling.type", Value::string("none"), "\"none\"");
    const KeyValue* heads = find_pair(b.doc(), b.key("attention.head_count"));
    const auto n_head = static_cast<std::uint64_t>(
        heads != nullptr ? std::max<std::int64_t>(scalar_number(heads->value).value_or(4), 0) : 4);
    const std::uint64_t head_size = n_head > 0 ? b.n_embd / n_head : 16;
    u32("rope.dimension_count", head_size / 2);
    u32("rope.dimension_count", head_size * 2);
    u32("attention.head_count", 0);
    u32("attention.head_count", 3);
    u32("attention.head_count_kv", 0);
    u32("attention.head_count_kv", 3);
    u32("attention.head_count_kv", n_head * 2);
    u32("embedding_length", 0);
    u32("embedding_length", b.n_embd + 1);
    u32("context_length", 0);
    u32("feed_forward_length", 0);
    if (find_pair(b.doc(), b.key("attention.sliding_window")) != nullptr) {
      u32("attention.sliding_window", 0);
    }
    if (find_pair(b.doc(), b.key("leading_dense_block_count")) != nullptr) {
      u32("leading_dense_block_count", l + 1);
    }
  }

  // --- the vocabulary ----------------------------------------------------------------------------

  void vocabulary(const Base& b, const Document& base, bool vocab_only) {
    const std::string suffix = vocab_only ? " (vocabulary only)" : "";
    auto emit = [&](const std::string& kind, const std::string& what, Document doc) {
      single(b, kind, what + suffix, std::move(doc), vocab_only);
    };
    auto with = [&](const std::string& key, Value value) {
      Document doc = base;
      set_value(doc, key, std::move(value));
      return doc;
    };
    auto without = [&](const std::string& key) {
      Document doc = base;
      erase_key(doc, key);
      return doc;
    };
    for (const char* model : {"bogus", "none", "no_vocab", "bert", "rwkv", ""}) {
      emit("tokenizer-model", std::string("tokenizer.ggml.model = \"") + model + "\"",
           with("tokenizer.ggml.model", Value::string(model)));
    }
    for (const char* pre : {"bogus", "", "llama3", "default", "deepseek-v3"}) {
      emit("pre-tokenizer", std::string("tokenizer.ggml.pre = \"") + pre + "\"",
           with("tokenizer.ggml.pre", Value::string(pre)));
    }
    emit("pre-tokenizer", "no tokenizer.ggml.pre", without("tokenizer.ggml.pre"));

    const KeyValue* tokens_kv = find_pair(base, "tokenizer.ggml.tokens");
    if (tokens_kv == nullptr) return;
    std::vector<std::string> tokens;
    for (const Value& v : tokens_kv->value.items) tokens.push_back(v.text);
    const std::uint64_t n = tokens.size();

    if (b.gpt2) {
      emit("merges", "no tokenizer.ggml.merges", without("tokenizer.ggml.merges"));
      emit("merges", "tokenizer.ggml.merges as i32[2]",
           with("tokenizer.ggml.merges", number_array(ValueType::Int32, {1, 2})));
      emit("merges", "tokenizer.ggml.merges empty",
           with("tokenizer.ggml.merges", Value::array(ValueType::String, {})));
      emit("merges", "a merge without a space (\"ab\")",
           with("tokenizer.ggml.merges", string_array({"a b", "ab"})));
    }
    std::vector<std::uint64_t> scores(n, 0);
    emit("scores", "tokenizer.ggml.scores as i32[" + std::to_string(n) + "]",
         with("tokenizer.ggml.scores", number_array(ValueType::Int32, scores)));
    emit("scores", "tokenizer.ggml.scores as u32[" + std::to_string(n) + "]",
         with("tokenizer.ggml.scores", number_array(ValueType::Uint32, scores)));
    emit("scores", "tokenizer.ggml.scores as f32[" + std::to_string(n - 1) + "] (one short)",
         with("tokenizer.ggml.scores",
              number_array(ValueType::Float32, std::vector<std::uint64_t>(n - 1, 0))));
    if (find_pair(base, "tokenizer.ggml.scores") != nullptr) {
      emit("scores", "no tokenizer.ggml.scores", without("tokenizer.ggml.scores"));
    }
    std::vector<std::uint64_t> types(n, 1);
    emit("token-type", "no tokenizer.ggml.token_type", without("tokenizer.ggml.token_type"));
    emit("token-type", "tokenizer.ggml.token_type as u32[" + std::to_string(n) + "]",
         with("tokenizer.ggml.token_type", number_array(ValueType::Uint32, types)));
    emit("token-type",
         "tokenizer.ggml.token_type as i32[" + std::to_string(n - 1) + "] (one short)",
         with("tokenizer.ggml.token_type",
              number_array(ValueType::Int32, std::vector<std::uint64_t>(n - 1, 1))));
    {
      Document doc = base;
      find_pair(doc, "tokenizer.ggml.token_type")->value.items.back() = Value::i32(99);
      emit("token-type", "a token type of 99", std::move(doc));
    }
    emit("tokens", "no tokenizer.ggml.tokens", without("tokenizer.ggml.tokens"));
    emit("tokens", "tokenizer.ggml.tokens empty",
         with("tokenizer.ggml.tokens", Value::array(ValueType::String, {})));
    emit("tokens", "tokenizer.ggml.tokens as i32[" + std::to_string(n) + "]",
         with("tokenizer.ggml.tokens", number_array(ValueType::Int32, types)));
    {
      std::vector<std::string> fewer(tokens.begin(), tokens.end() - 1);
      emit("tokens", "one token fewer (" + std::to_string(n - 1) + ")",
           with("tokenizer.ggml.tokens", string_array(fewer)));
    }
    const std::size_t j = 5 + pick(n - 8);  // a normal token, not the last
    auto duplicate = [&](std::size_t at, std::string text, std::size_t at2, std::string text2,
                         const std::string& what) {
      std::vector<std::string> t = tokens;
      t[at] = std::move(text);
      t[at2] = std::move(text2);
      emit("duplicate-token", what, with("tokenizer.ggml.tokens", string_array(t)));
    };
    duplicate(n - 1, tokens[j], j, tokens[j],
              "token " + std::to_string(n - 1) + " = token " + std::to_string(j));
    duplicate(n - 1, tokens[j] + std::string(1, '\0') + "z", j, tokens[j],
              "token " + std::to_string(n - 1) + " = token " + std::to_string(j) + " up to a NUL");
    duplicate(j, "", n - 1, "[EMPTY_" + std::to_string(j) + "]",
              "token " + std::to_string(j) + " empty, token " + std::to_string(n - 1) +
                  " \"[EMPTY_" + std::to_string(j) + "]\"");
    duplicate(j, "", j, "", "token " + std::to_string(j) + " empty");
    emit("special-token", "tokenizer.ggml.bos_token_id = 1000",
         with("tokenizer.ggml.bos_token_id", Value::u32(1000)));
    emit("special-token", "tokenizer.ggml.eos_token_id as i32",
         with("tokenizer.ggml.eos_token_id", Value::i32(2)));
    emit("name-phi3", "general.name = \"phi3 tiny\"",
         with("general.name", Value::string("phi3 tiny")));
  }

  void vocab_only(const Base& b) {
    Document doc = b.doc();
    doc.tensors.clear();
    single(b, "vocab-only", "every tensor dropped", doc, true);
    {
      Document d = doc;
      set_value(d, b.key("block_count"), Value::u32(0));
      single(b, "vocab-only", b.key("block_count") + " = 0, no tensor", std::move(d), true);
    }
    {
      Document d = doc;
      erase_key(d, b.key("embedding_length"));
      single(b, "vocab-only", "no " + b.key("embedding_length") + ", no tensor", std::move(d),
             true);
    }
    // The vocabulary mutants of a few bases, again without tensors.
    if (b.model.spec.name == "llama" || b.model.spec.name == "qwen2" ||
        b.model.spec.name == "deepseek2") {
      vocabulary(b, doc, true);
    }
  }

  // Files with no tensors and no vocabulary, which llama.cpp is given as it is given a
  // vocabulary-only file (vocab_only): it refuses them ("key not found in model:
  // tokenizer.ggml.model", or "unknown model architecture").
  void metadata_only(const Base& b) {
    Document doc = b.doc();
    doc.tensors.clear();
    std::erase_if(doc.metadata,
                  [](const KeyValue& kv) { return kv.key.rfind("tokenizer.", 0) == 0; });
    single(b, "metadata-only", "no tensor, no tokenizer.* key", doc, true);
    {
      Document d = doc;
      std::erase_if(d.metadata,
                    [&](const KeyValue& kv) { return kv.key.rfind(b.arch + ".", 0) == 0; });
      single(b, "metadata-only", "no tensor, no tokenizer.* or " + b.arch + ".* key", std::move(d),
             true);
    }
    {
      Document d;
      d.metadata.push_back(pair("general.architecture", Value::string(b.arch)));
      single(b, "metadata-only", "general.architecture alone", std::move(d), true);
    }
    {
      Document d = doc;
      set_value(d, b.key("vocab_size"), Value::i32(static_cast<std::int32_t>(b.n_vocab)));
      single(b, "metadata-only", b.key("vocab_size") + " as i32, no tensor, no tokenizer",
             std::move(d), true);
    }
    if (b.model.spec.name == "llama") {
      single(b, "metadata-only", "no key at all", Document{}, true);
      Document d = doc;
      erase_key(d, "general.architecture");
      single(b, "metadata-only", "no general.architecture, no tensor, no tokenizer", std::move(d),
             true);
    }
  }

  // general.type: the kinds of GGUF file that other loaders of llama.cpp's read (the test
  // compares an "adapter" with llama_adapter_lora_init on its base, as ggufcheck judges it; the
  // loaders of "mmproj" and "imatrix" are not in the prebuilt libraries: those are not compared),
  // and values read as a model.
  void artifact_kinds(const Base& b) {
    for (const char* kind : {"adapter", "mmproj", "imatrix", "model", "vocab", ""}) {
      Document doc = b.doc();
      set_value(doc, "general.type", Value::string(kind));
      single(b, "general-type", std::string("general.type = \"") + kind + "\"", std::move(doc));
    }
    Document doc = b.doc();
    doc.tensors.clear();
    set_value(doc, "general.type", Value::string("adapter"));
    single(b, "general-type", "general.type = \"adapter\", no tensor", std::move(doc), true);
  }

  // --- split sets ------------------------------------------------------------------------------

  static KeyValue& split_key(Document& doc, const char* key) {
    for (KeyValue& kv : doc.metadata) {
      if (kv.key == key) return kv;
    }
    doc.metadata.push_back(pair(key, Value::u16(0)));
    return doc.metadata.back();
  }

  // A set by name: <base>-0000k-of-0000n.gguf; `written`: which shards are there (all: empty).
  void by_name(const Base& b, const std::string& kind, const std::string& what,
               const std::vector<Document>& docs, std::vector<std::size_t> written = {}) {
    const auto n = static_cast<std::uint32_t>(docs.size());
    if (written.empty()) {
      for (std::size_t i = 0; i < docs.size(); ++i) written.push_back(i);
    }
    ModelMutant m;
    m.kind = kind;
    m.base = b.model.spec.name;
    m.what = what;
    m.set = true;
    for (std::size_t i : written) {
      const std::string name =
          split_file_name(b.model.spec.name, static_cast<std::uint32_t>(i) + 1, n);
      m.files.push_back({name, docs[i]});
      m.check_names.push_back(name);
    }
    m.load = ModelMutant::Load::File;
    m.load_names = {split_file_name(b.model.spec.name, 1, n)};
    out_.push_back(std::move(m));
  }

  // A set by list: <base>.part<k>.gguf given in `order` to llama_model_load_from_splits and to
  // ggufcheck.
  void in_order(const Base& b, const std::string& kind, const std::string& what,
                const std::vector<Document>& docs, const std::vector<std::size_t>& order) {
    ModelMutant m;
    m.kind = kind;
    m.base = b.model.spec.name;
    m.what = what;
    m.set = true;
    for (std::size_t i = 0; i < docs.size(); ++i) {
      m.files.push_back({b.model.spec.name + ".part" + std::to_string(i + 1) + ".gguf", docs[i]});
    }
    for (std::size_t i : order) m.check_names.push_back(m.files[i].name);
    m.load = ModelMutant::Load::Splits;
    m.load_names = m.check_names;
    out_.push_back(std::move(m));
  }

  void splits(const Base& b) {
    const std::vector<Document> two = split_document(b.doc(), 2);
    const std::vector<Document> three = split_document(b.doc(), 3);
    const auto n_tensors = static_cast<std::uint32_t>(b.doc().tensors.size());
    by_name(b, "split-valid", "2 shards by name", two);
    by_name(b, "split-valid", "3 shards by name", three);
    in_order(b, "split-valid", "3 shards listed in order", three, {0, 1, 2});
    for (std::size_t k = 0; k < 3; ++k) {
      std::vector<std::size_t> written;
      for (std::size_t i = 0; i < 3; ++i) {
        if (i != k) written.push_back(i);
      }
      by_name(b, "split-shard-missing", "shard " + std::to_string(k + 1) + " of 3 missing", three,
              written);
    }
    in_order(b, "split-shard-missing", "shards 1 and 3 of 3 listed", three, {0, 2});
    for (const auto& [shard, number] :
         std::vector<std::pair<std::size_t, std::uint16_t>>{{1, 2}, {2, 1}, {0, 1}, {2, 3}}) {
      std::vector<Document> docs = three;
      split_key(docs[shard], "split.no").value = Value::u16(number);
      by_name(
          b, "split-misnumbered",
          "shard " + std::to_string(shard + 1) + " of 3 says split.no " + std::to_string(number),
          docs);
    }
    in_order(b, "split-reordered", "3 shards listed as 2, 1, 3", three, {1, 0, 2});
    in_order(b, "split-reordered", "3 shards listed as 1, 3, 2", three, {0, 2, 1});
    {
      std::vector<Document> docs = three;
      std::swap(docs[1], docs[2]);
      by_name(b, "split-reordered", "the files of shards 2 and 3 exchanged", docs);
    }
    for (std::size_t shard : {std::size_t{1}, std::size_t{0}}) {
      std::vector<Document> docs = three;
      split_key(docs[shard], "split.no").value = Value::u32(static_cast<std::uint32_t>(shard));
      by_name(b, "split-no-u32", "split.no as u32 in shard " + std::to_string(shard + 1), docs);
    }
    {
      std::vector<Document> docs = three;
      docs[2].tensors.push_back(docs[1].tensors.front());
      by_name(b, "split-duplicate-tensor", docs[1].tensors.front().name + " in shards 2 and 3",
              docs);
      for (Document& d : docs) {
        split_key(d, "split.tensors.count").value =
            Value::i32(static_cast<std::int32_t>(n_tensors + 1));
      }
      by_name(b, "split-duplicate-tensor",
              docs[1].tensors.front().name + " in shards 2 and 3, split.tensors.count " +
                  std::to_string(n_tensors + 1),
              docs);
    }
    for (std::uint32_t count : {n_tensors + 1, n_tensors - 1}) {
      std::vector<Document> docs = three;
      for (Document& d : docs) {
        split_key(d, "split.tensors.count").value = Value::i32(static_cast<std::int32_t>(count));
      }
      by_name(b, "split-tensors-count", "split.tensors.count " + std::to_string(count), docs);
    }
    for (std::uint16_t count : {std::uint16_t{2}, std::uint16_t{4}}) {
      std::vector<Document> docs = three;
      for (Document& d : docs) split_key(d, "split.count").value = Value::u16(count);
      by_name(b, "split-count", "split.count " + std::to_string(count) + " in 3 shards", docs);
    }
    for (const auto& [shard, key] : std::vector<std::pair<std::size_t, const char*>>{
             {1, "split.no"}, {0, "split.no"}, {0, "split.tensors.count"}, {0, "split.count"}}) {
      std::vector<Document> docs = three;
      erase_key(docs[shard], key);
      by_name(b, "split-key-missing",
              std::string("no ") + key + " in shard " + std::to_string(shard + 1), docs);
    }
  }
};

}  // namespace

std::vector<Document> split_document(const Document& document, std::uint32_t count) {
  std::vector<Document> shards(count);
  const std::size_t n = document.tensors.size();
  for (std::uint32_t s = 0; s < count; ++s) {
    Document& shard = shards[s];
    shard.version = document.version;
    if (s == 0) shard.metadata = document.metadata;
    shard.metadata.push_back(pair("split.no", Value::u16(static_cast<std::uint16_t>(s))));
    shard.metadata.push_back(pair("split.count", Value::u16(static_cast<std::uint16_t>(count))));
    shard.metadata.push_back(pair("split.tensors.count", Value::i32(static_cast<std::int32_t>(n))));
    const std::size_t begin = n * s / count;
    const std::size_t end = n * (s + 1) / count;
    for (std::size_t i = begin; i < end; ++i) shard.tensors.push_back(document.tensors[i]);
  }
  return shards;
}

std::string split_file_name(const std::string& prefix, std::uint32_t shard, std::uint32_t count) {
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, "-%05u-of-%05u.gguf", shard, count);
  return prefix + suffix;
}

ModelMutant base_mutant(const BaseModel& base) {
  ModelMutant m;
  m.kind = "base";
  m.base = base.spec.name;
  m.what = "the base model";
  m.files.push_back({base.spec.name + ".gguf", base.document});
  m.load_names = {m.files.front().name};
  m.check_names = m.load_names;
  return m;
}

std::vector<ModelMutant> base_mutants(const BaseModel& base, std::uint64_t seed) {
  std::uint64_t name_hash = 14695981039346656037ULL;  // FNV-1a
  for (const char c : base.spec.name) {
    name_hash = (name_hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  Generator generator(seed ^ name_hash);
  generator.all(base);
  return generator.take();
}

std::vector<ModelMutant> model_mutants(const std::vector<BaseModel>& bases, std::uint64_t seed) {
  std::vector<ModelMutant> out;
  for (const BaseModel& base : bases) {
    for (ModelMutant& m : base_mutants(base, seed)) out.push_back(std::move(m));
  }
  return out;
}

}  // namespace ggufcheck::testing
