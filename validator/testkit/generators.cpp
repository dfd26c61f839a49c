#include "generators.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace ggufcheck::testing::gen {

namespace {

Gen<std::string> segment(bool first) {
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

Gen<std::string> conventional_key_text() {
  return rc::gen::exec([] {
    std::string key = *segment(true);
    const auto segments = *rc::gen::weightedElement<std::size_t>({{1, 0}, {4, 1}, {3, 2}, {1, 3}});
    for (std::size_t i = 0; i < segments; ++i) key += "." + *segment(false);
    return key;
  });
}

// Real architecture names contain '-' ("command-r.context_length").
Gen<std::string> dashed_key_text() {
  return rc::gen::exec([] {
    std::string key = *conventional_key_text();
    const std::size_t at = 1 + pick(*rc::gen::arbitrary<std::uint64_t>(), key.size() - 1);
    if (key[at - 1] == '.') return key.insert(at, "x-");
    return key.insert(at, "-");
  });
}

// Chat template names may be upper case ("tokenizer.chat_template.ChatML").
Gen<std::string> chat_template_key_text() {
  return rc::gen::exec([] {
    std::string name = *segment(true);
    name[0] = static_cast<char>(name[0] - 'a' + 'A');
    name += *rc::gen::elementOf(std::vector<std::string>{"", "ML", "Tool_Use", "RAG"});
    return "tokenizer.chat_template." + name;
  });
}

Gen<std::string> strict_only_key_text() {
  return rc::gen::weightedOneOf<std::string>(
      {{3, dashed_key_text()}, {1, chat_template_key_text()}});
}

// A conventional key broken in one way: an upper-case letter, a punctuation byte or a space,
// or an empty segment (leading, trailing or doubled '.').
Gen<std::string> unconventional_key_text() {
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

Gen<Key> key(KeyStyle style) {
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

}  // namespace

Gen<Key> any_key() {
  return rc::gen::weightedOneOf<Key>({{3, key(KeyStyle::Conventional)},
                                      {2, key(KeyStyle::StrictOnly)},
                                      {2, key(KeyStyle::Unconventional)}});
}

namespace {

// A code point for valid UTF-8 text: mostly printable ASCII, then the boundaries of each
// encoding length, the last code points before and after the surrogates, U+FFFD, U+FFFF and
// U+10FFFF, and controls (valid UTF-8 in string values). Never NUL.
Gen<std::uint32_t> code_point(bool controls) {
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
Gen<std::string> utf8_text(std::size_t max_chars, bool controls = true) {
  return rc::gen::exec([=] {
    const std::size_t n = *rc::gen::weightedOneOf<std::size_t>(
        {{1, rc::gen::just<std::size_t>(0)}, {4, rc::gen::inRange<std::size_t>(1, max_chars + 1)}});
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += encode_utf8(*code_point(controls));
    return out;
  });
}

// Whether the chat-template stage reports the code point in a general.* string (GGUF9013):
// zero-width, bidirectional and other invisible characters (templates/template_checks.cpp).
bool invisible_code_point(std::uint32_t c) {
  return (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) || c == 0xFEFF ||
         c == 0x061C || c == 0x180E || c == 0x00AD || c == 0x115F || c == 0x1160 || c == 0x3164 ||
         c == 0xFFA0 || (c >= 0xE0000 && c <= 0xE007F);
}

// Valid UTF-8 as utf8_text, without the invisible characters GGUF9013 reports in general.*
// strings (the expectation model predicts no finding for them; the code tests cover GGUF9013).
Gen<std::string> visible_text(std::size_t max_chars) {
  return rc::gen::exec([=] {
    const std::size_t n = *rc::gen::weightedOneOf<std::size_t>(
        {{1, rc::gen::just<std::size_t>(0)}, {4, rc::gen::inRange<std::size_t>(1, max_chars + 1)}});
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t c = *code_point(true);
      out += encode_utf8(invisible_code_point(c) ? std::uint32_t{'x'} : c);
    }
    return out;
  });
}

// Chat-template text whose findings the expectation model knows (none): plain words, no Jinja,
// no script mixing, URL, long run or invisible character. Arbitrary template text has a property
// of its own (ChatTemplates.AnyTextChangesOnlyTemplateFindings).
Gen<std::string> plain_template_text(std::size_t max_words) {
  return rc::gen::exec([=] {
    static const std::vector<std::string> kWords = {"hello", "user", "reply", "model",
                                                    "turn",  "chat", "end",   "system"};
    const std::size_t n = *rc::gen::inRange<std::size_t>(0, max_words + 1);
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) out += ' ';
      out += *rc::gen::elementOf(kWords);
    }
    return out;
  });
}

// Any bytes at all: NUL, controls, invalid UTF-8.
Gen<std::string> any_bytes(std::size_t max_bytes) {
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
Gen<std::uint64_t> scalar_bits(ValueType type, bool canonical) {
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

std::vector<ValueType> value_types(std::uint32_t version, bool arrays) {
  std::vector<ValueType> out;
  const std::uint32_t count = version == 1 ? kValueTypeCountV1 : kValueTypeCount;
  for (std::uint32_t t = 0; t < count; ++t) {
    if (!arrays && t == static_cast<std::uint32_t>(ValueType::Array)) continue;
    out.push_back(static_cast<ValueType>(t));
  }
  return out;
}

Gen<Value> value_of_type(ValueType type, ValueOptions options);

}  // namespace

Gen<std::string> any_text(std::size_t max_chars) {
  return utf8_text(max_chars);
}

Gen<Value> any_value(ValueOptions options) {
  return rc::gen::mapcat(rc::gen::elementOf(value_types(options.version, true)),
                         [options](ValueType type) { return value_of_type(type, options); });
}

namespace {

Gen<Value> value_of_type(ValueType type, ValueOptions options) {
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

std::vector<std::uint32_t> usable_tensor_types() {
  std::vector<std::uint32_t> out;
  for (std::uint32_t id = 0; id < kTensorTypeCount; ++id) {
    if (!tensor_type(id)->removed()) out.push_back(id);
  }
  return out;
}

// A name strict accepts: 1..63 bytes, printable ASCII or valid UTF-8, no controls.
Gen<std::string> tensor_name() {
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

}  // namespace

Gen<Tensor> tensor(TensorOptions options) {
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

Gen<Alignment> alignment(std::uint32_t min) {
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

Gen<ValidModel> valid_model() {
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
    if (maybe(2)) pairs.push_back({"general.name", Value::string(*visible_text(10)), {}});
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
    if (maybe(1)) {
      pairs.push_back({"tokenizer.chat_template", Value::string(*plain_template_text(4)), {}});
    }
    if (maybe(1)) {
      pairs.push_back({*chat_template_key_text(), Value::string(*plain_template_text(2)), {}});
    }
    if (maybe(1)) {
      std::vector<Value> tags;
      for (std::size_t i = 0, n = *rc::gen::inRange<std::size_t>(0, 3); i < n; ++i) {
        tags.push_back(Value::string(*visible_text(5)));
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
      // A key that prefixes another by its dots is a strict error (GGUF9503): valid models
      // have none.
      const auto prefix_conflict = [&k](const KeyValue& kv) { return dotted_prefixes(kv.key, k); };
      if (std::any_of(pairs.begin(), pairs.end(), prefix_conflict) ||
          std::any_of(doc.metadata.begin(), doc.metadata.end(), prefix_conflict)) {
        continue;
      }
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

Gen<AnyDocument> any_document() {
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

Gen<Corruption> corruption() {
  return rc::gen::exec([] {
    Corruption c;
    c.fault = *rc::gen::elementOf(all_faults());
    c.host = *valid_model();
    for (std::uint64_t& x : c.choices) x = *rc::gen::arbitrary<std::uint64_t>();
    return c;
  });
}

namespace {

std::vector<std::uint64_t> boundary_values() {
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

}  // namespace

Gen<Mutation> mutation() {
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

Gen<HugeClaim> huge_claim() {
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

}  // namespace ggufcheck::testing::gen
