// The model checks (GGUF7xxx) on models, not on random bytes: the input is a program of
// structured mutations of a small llama model that llama.cpp loads (the test kit's
// model_document(): one block, a four-token vocabulary), each byte choosing a move and its
// operands: drop, add or rename a tensor, change a dim, retype or drop a key, shorten a
// per-layer array, change block_count, and on the vocabulary: the tokenizer model and
// pre-tokenizer names, the merges, the types and lengths of scores and token types, duplicate
// tokens (exact, up to a NUL, an empty token beside "[EMPTY_n]"), token texts llama.cpp's
// tokenizers cannot take, the keys llama.cpp reads with other types, a t5 charsmap from the
// input's bytes. The model is written with the library's writer and validated in every profile
// with the model checks: each report's own invariants hold, strict rejects whatever the
// llama.cpp profile rejects in the Model area, and a second run reports the same (fuzzing: the
// spec profile and the second run on one input in four each; a replay: every input). (Not
// fuzz::check_pipeline: its dump check compares the dump, which is the container's, with a report
// that has the model checks, so it fails on every model the model checks refuse.)
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "pipeline.hpp"

namespace {

using namespace ggufcheck;
using fuzz::Choices;

KeyValue* find_pair(Document& doc, std::string_view key) {
  for (KeyValue& kv : doc.metadata) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}

void set_pair(Document& doc, const std::string& key, Value value) {
  if (KeyValue* kv = find_pair(doc, key)) {
    kv->value = std::move(value);
  } else {
    doc.metadata.push_back({key, std::move(value), {}});
  }
}

void erase_pair(Document& doc, std::string_view key) {
  std::erase_if(doc.metadata, [&](const KeyValue& kv) { return kv.key == key; });
}

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

void move_vocabulary(Document& doc, Choices& in) {
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
                                      "llama.vocab_size",
                                      "general.name"};
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
      const std::string key = in.one_of(kKeys);
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

void move_model(Document& doc, Choices& in) {
  static const char* const kNames[] = {
      "output.weight",       "blk.0.attn_q.bias",   "junk",
      "blk.1.attn_q.weight", "blk.0.attn_q.weight", "rope_freqs.weight"};
  const std::uint64_t kDims[] = {0, 1, 3, 4, 5, 63, 64, 65, 128};
  switch (in.below(7)) {
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
        if (!t.dims.empty()) t.dims[in.below(t.dims.size())] = in.one_of(kDims);
      }
      break;
    case 4:
      if (!doc.metadata.empty()) {
        KeyValue& kv = doc.metadata[in.below(doc.metadata.size())];
        kv.value = retyped(kv.value, in);
      }
      break;
    case 5: {  // a per-layer array of the wrong length
      static const char* const kLayerKeys[] = {"llama.attention.head_count",
                                               "llama.attention.head_count_kv",
                                               "llama.feed_forward_length"};
      std::vector<Value> items(in.below(4), Value::u32(4));
      set_pair(doc, in.one_of(kLayerKeys), Value::array(ValueType::Uint32, std::move(items)));
      break;
    }
    default:
      if (in.below(2) == 0 && !doc.metadata.empty()) {
        doc.metadata.erase(doc.metadata.begin() +
                           static_cast<std::ptrdiff_t>(in.below(doc.metadata.size())));
      } else {
        const std::uint32_t counts[] = {0, 1, 2, 513};
        set_pair(doc, "llama.block_count", Value::u32(in.one_of(counts)));
      }
  }
}

// A BPE start: the model with a gpt2 vocabulary (merges, a pre-tokenizer).
void as_gpt2(Document& doc) {
  set_pair(doc, "tokenizer.ggml.model", Value::string("gpt2"));
  set_pair(doc, "tokenizer.ggml.merges", strings({"a a"}));
  set_pair(doc, "tokenizer.ggml.pre", Value::string("gpt-2"));
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
  Document doc = testing::model_document();
  if (in.below(3) == 0) as_gpt2(doc);
  for (int moves = 0; moves < 16 && !in.empty(); ++moves) {
    if (in.below(3) == 0) {
      move_model(doc, in);
    } else {
      move_vocabulary(doc, in);
    }
  }
  const std::vector<std::uint8_t> bytes = write_bytes(doc);
  const Bytes view(bytes.data(), bytes.size());
  const std::size_t choice = fuzz::choice_hash(Bytes(data, size), size);
  fuzz::fail_if(check_model_verdicts(view, choice), view);
  return 0;
}
