// The judges of the other kinds of GGUF file (validator/src/artifacts/) on files built from the
// input, not on random bytes: the input is a program of choices that builds one of the test
// kit's artifacts, each of which its loader in the pinned llama.cpp accepts, then breaks it:
// - a multimodal projector of any projector type the tables name, followed or not
//   (mmproj_builder.hpp's projector_of_type), with a second encoder or not: keys dropped,
//   retyped, set to boundary values (the type's own keys of the generated rules too), tensors
//   dropped, renamed, reshaped or added (the type's optional ones, experts, layers past
//   block_count), the projector type moved to an encoder's key, renamed or cut at a NUL, the
//   encoder flags, the arrays (grid pinpoints, feature layers, mean and std), minicpmv_version;
// - a LoRA adapter of the test kit's model (adapter_document), checked without a base model or
//   against one of a few bases (the model itself, its vocabulary alone, a model llama.cpp
//   refuses, a shard of a split set, a cut file, a path that is missing, a directory, standard
//   input, a URL): keys dropped, retyped or set to other values, the aLoRA invocation tokens,
//   tensors dropped, renamed (suffixes, names the base lacks), reshaped, duplicated, retyped, a
//   pair's rank changed;
// - an importance matrix (imatrix_document): tensors or keys dropped, retyped, reshaped to no
//   elements, renamed.
// The file may then be cut inside its tensor infos. It is validated as a buffer with the model
// checks on, under a profile chosen by the input (every profile in a replay), with --werror or a
// findings limit at times. Each report must:
// - hold the invariants of every report (fuzz::check_report);
// - be the judgement of the kind the file declares (general.type, else general.architecture
//   "clip", as ggml finds the keys): its Model-area findings are that judge's codes;
// - never pass a projector whose type ggufcheck does not follow, nor an adapter without a base
//   model it could read, in the profiles that promise llama.cpp's verdict (fail closed);
// - pass an artifact no move touched (an adapter: with its base; without one, only GGUF7020);
// - give an adapter the same base-free findings (keys, suffixes, pairs, ranks) with its base
//   as without one;
// - be the same on a second run (a replay: every input; fuzzing: one in four).
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "mmproj_builder.hpp"
#include "models.hpp"
#include "pipeline.hpp"

namespace {

using namespace ggufcheck;
using fuzz::Choices;
using testing::erase_pair;
using testing::find_pair;
using testing::set_pair;
using namespace std::literals;

// A few dozen moves reach every check; longer programs only cost time.
constexpr std::size_t kMaxInput = 512;
constexpr int kMaxMoves = 12;

// --- what the generated projector rules name --------------------------------------------------

struct StepKey {
  std::string_view projector;
  std::string_view key;
};
constexpr StepKey kStepKeys[] = {
#define GGUFCHECK_PROJECTOR_STEP(name, op, key, member, required, role, a, b) {name, key},
#include "artifacts/generated/projector_rules.inc"
};

struct TypeTensor {
  std::string_view projector;
  std::string_view name;
};
constexpr TypeTensor kTypeTensors[] = {
#define GGUFCHECK_PROJECTOR_TENSOR(name, tensor, required) {name, tensor},
#include "artifacts/generated/projector_rules.inc"
};

std::string with_prefix(std::string_view pattern, std::string_view prefix) {
  std::string name(pattern);
  if (const std::size_t at = name.find("{prefix}"); at != std::string::npos) {
    name.replace(at, 8, prefix);
  }
  return name;
}

// Every projector type of the tables: those ggufcheck follows, then the others.
struct ProjectorTypes {
  std::vector<std::string> names;
  std::vector<bool> followed;
  std::vector<bool> audio;  // projector_of_type writes it as an audio encoder
};
const ProjectorTypes& projector_types() {
  static const ProjectorTypes types = [] {
    ProjectorTypes out;
    for (std::string& name : testing::followed_projector_types()) {
      out.names.push_back(std::move(name));
      out.followed.push_back(true);
    }
    for (testing::UnfollowedType& t : testing::unfollowed_projector_types()) {
      out.names.push_back(std::move(t.name));
      out.followed.push_back(false);
    }
    for (const std::string& name : out.names) {
      const Document doc = testing::projector_of_type(name);
      out.audio.push_back(
          std::any_of(doc.metadata.begin(), doc.metadata.end(),
                      [](const KeyValue& kv) { return kv.key == "clip.has_audio_encoder"; }));
    }
    return out;
  }();
  return types;
}

// --- documents ---------------------------------------------------------------------------------

Tensor* find_tensor(Document& doc, std::string_view name) {
  for (Tensor& t : doc.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string_view c_prefix(std::string_view s) {
  return s.substr(0, std::min(s.find('\0'), s.size()));
}

constexpr std::uint32_t kNumbers[] = {
    0,     1,        2,        3,           4,           7,          14,   16,
    64,    224,      1000,     4096,        4097,        8192,       8193, 65535,
    65536, 1U << 20, 1U << 21, 0x7fffffffU, 0x80000000U, 0xffffffffU};
// Dims stay small: the writer writes every tensor's data in full.
constexpr std::uint64_t kDims[] = {0, 1, 2, 3, 4, 8, 14, 32, 63, 64, 65, 128};

// The same value as another type (or a plain value of another kind).
Value retyped(const Value& v, Choices& in) {
  switch (in.below(8)) {
    case 0: return Value::u64(v.bits);
    case 1: return Value::i32(static_cast<std::int32_t>(v.bits));
    case 2: return Value::f32(static_cast<float>(v.bits & 0xFFFF));
    case 3: return Value::u8(static_cast<std::uint8_t>(v.bits));
    case 4: return Value::string(v.text.empty() ? "1" : v.text);
    case 5: return Value::u32(static_cast<std::uint32_t>(v.bits));
    case 6: return Value::f64(1e-6);
    default:
      return v.type == ValueType::Array ? Value::array(ValueType::Uint32, {Value::u32(1)})
                                        : Value::array(v.type, {v});
  }
}

// Moves any kind of file takes: a pair dropped or retyped, a tensor dropped, a dim changed.
void move_any(Document& doc, Choices& in) {
  switch (in.below(4)) {
    case 0:
      if (!doc.metadata.empty()) {
        doc.metadata.erase(doc.metadata.begin() +
                           static_cast<std::ptrdiff_t>(in.below(doc.metadata.size())));
      }
      break;
    case 1:
      if (!doc.metadata.empty()) {
        KeyValue& kv = doc.metadata[in.below(doc.metadata.size())];
        kv.value = retyped(kv.value, in);
      }
      break;
    case 2:
      if (!doc.tensors.empty()) {
        doc.tensors.erase(doc.tensors.begin() +
                          static_cast<std::ptrdiff_t>(in.below(doc.tensors.size())));
      }
      break;
    default:
      if (!doc.tensors.empty()) {
        Tensor& t = doc.tensors[in.below(doc.tensors.size())];
        if (in.below(4) == 0) {
          t.dims.resize(1 + in.below(4), 1);
        } else if (!t.dims.empty()) {
          t.dims[in.below(t.dims.size())] = in.one_of(kDims);
        }
      }
  }
}

// --- projectors --------------------------------------------------------------------------------

// An encoder's keys, as projector_of_type writes them for the other modality.
void add_encoder(Document& doc, std::string_view encoder, std::string_view type,
                 std::uint32_t width, std::uint32_t layers) {
  set_pair(doc, fmt::format("clip.has_{}_encoder", encoder == "gen.audio" ? "gen_audio" : encoder),
           Value::boolean(true));
  const std::string key = fmt::format("clip.{}.", encoder);
  for (const auto& [suffix, value] :
       {std::pair{"embedding_length", width}, std::pair{"attention.head_count", 4U},
        std::pair{"feed_forward_length", 2 * width}, std::pair{"block_count", layers},
        std::pair{"projection_dim", width}}) {
    set_pair(doc, key + suffix, Value::u32(value));
  }
  set_pair(doc, key + "attention.layer_norm_epsilon", Value::f32(1e-6f));
  if (!type.empty()) set_pair(doc, key + "projector_type", Value::string(std::string(type)));
  const std::string prefix = encoder == "vision" ? "v" : encoder == "audio" ? "a" : "a.gen.code";
  if (encoder == "audio") set_pair(doc, "clip.audio.num_mel_bins", Value::u32(128));
  if (encoder == "vision") {
    set_pair(doc, "clip.vision.image_size", Value::u32(224));
    set_pair(doc, "clip.vision.patch_size", Value::u32(14));
  }
  for (std::uint32_t il = 0; il < layers; ++il) {
    const std::string blk = fmt::format("{}.blk.{}.", prefix, il);
    doc.tensors.push_back(testing::tensor(blk + "attn_out.weight", {width, width}));
    doc.tensors.push_back(testing::tensor(blk + "ffn_up.weight", {width, 2 * width}));
    doc.tensors.push_back(testing::tensor(blk + "ffn_down.weight", {2 * width, width}));
  }
  for (const TypeTensor& t : kTypeTensors) {
    if (t.projector == type && !find_tensor(doc, with_prefix(t.name, prefix))) {
      doc.tensors.push_back(testing::tensor(with_prefix(t.name, prefix), {width, width}));
    }
  }
}

void move_mmproj(Document& doc, const std::string& type, Choices& in) {
  static const char* const kFlags[] = {"clip.has_vision_encoder", "clip.has_audio_encoder",
                                       "clip.has_gen_audio_encoder", "clip.use_gelu",
                                       "clip.use_silu"};
  static const char* const kTypeKeys[] = {"clip.projector_type", "clip.vision.projector_type",
                                          "clip.audio.projector_type",
                                          "clip.gen.audio.projector_type"};
  static const char* const kBlockCounts[] = {"clip.vision.block_count", "clip.audio.block_count"};
  static const char* const kPrefixes[] = {"v", "a", "a.gen.code"};
  const ProjectorTypes& types = projector_types();
  switch (in.below(14)) {
    case 0:
    case 1: move_any(doc, in); break;
    case 2: {  // a key to a boundary number, as a u32 or another integer type
      if (doc.metadata.empty()) break;
      KeyValue& kv = doc.metadata[in.below(doc.metadata.size())];
      const std::uint32_t v = in.below(4) == 0 ? in.u16() : in.one_of(kNumbers);
      kv.value = in.below(8) == 0 ? Value::i32(static_cast<std::int32_t>(v)) : Value::u32(v);
      break;
    }
    case 3: {  // a key of the type's own rules (or any type's), at a boundary number
      std::vector<std::string_view> keys;
      const bool any = in.below(4) == 0;
      for (const StepKey& s : kStepKeys) {
        if ((any || s.projector == type) && s.key.starts_with("clip.")) keys.push_back(s.key);
      }
      if (keys.empty()) break;
      const std::string_view key = keys[in.below(keys.size())];
      if (in.below(6) == 0) {
        erase_pair(doc, key);
      } else {
        set_pair(doc, key, Value::u32(in.below(3) == 0 ? in.u16() : in.one_of(kNumbers)));
      }
      break;
    }
    case 4: {  // a tensor renamed: another layer, another prefix, a NUL, a suffix
      if (doc.tensors.empty()) break;
      std::string& name = doc.tensors[in.below(doc.tensors.size())].name;
      switch (in.below(4)) {
        case 0: name += ".x"; break;
        case 1: name += std::string(1, '\0') + "x"; break;
        case 2:
          if (name.size() > 2 && name[1] == '.') name[0] = name[0] == 'v' ? 'a' : 'v';
          break;
        default:
          if (const std::size_t at = name.find("blk."); at != std::string::npos) {
            name[at + 4] = static_cast<char>('0' + in.below(4));
          }
      }
      break;
    }
    case 5: {  // a tensor added: one of a type's, an expert block, a layer past the others
      const std::string prefix = kPrefixes[in.below(2)];
      const std::uint64_t width = in.below(4) == 0 ? in.one_of(kDims) : 8;
      switch (in.below(3)) {
        case 0: {
          std::vector<std::string_view> names;
          const bool any = in.below(4) == 0;
          for (const TypeTensor& t : kTypeTensors) {
            if (any || t.projector == type) names.push_back(t.name);
          }
          if (names.empty()) break;
          const std::string name = with_prefix(names[in.below(names.size())], prefix);
          if (!find_tensor(doc, name)) doc.tensors.push_back(testing::tensor(name, {width, width}));
          break;
        }
        case 1:
          doc.tensors.push_back(testing::tensor(
              fmt::format("{}.blk.{}.ffn_gate_exps.weight", prefix, in.below(3)), {width, width}));
          break;
        default: {
          const std::string blk = fmt::format("{}.blk.{}.", prefix, 2 + in.below(2));
          for (const char* part : {"attn_out.weight", "ffn_up.weight", "ffn_down.weight"}) {
            if (in.below(4) != 0) doc.tensors.push_back(testing::tensor(blk + part, {8, 8}));
          }
        }
      }
      break;
    }
    case 6: {  // an encoder flag: on, off, or of another type
      const char* key = in.one_of(kFlags);
      switch (in.below(3)) {
        case 0: set_pair(doc, key, Value::boolean(false)); break;
        case 1: set_pair(doc, key, Value::u8(1)); break;
        default: set_pair(doc, key, Value::boolean(true));
      }
      break;
    }
    case 7: {  // a second encoder, mostly of a type of its modality, of the same width or not
      static const char* const kEncoders[] = {"audio", "vision", "gen.audio"};
      const std::string_view encoder = in.one_of(kEncoders);
      std::size_t other = in.below(types.names.size());
      const bool audio = encoder != "vision";
      for (std::size_t tries = 0;
           tries < types.names.size() && in.below(4) != 0 && types.audio[other] != audio; ++tries) {
        other = (other + 1) % types.names.size();
      }
      const std::uint32_t width = in.below(3) == 0 ? 4 : 8;
      const std::uint32_t layers = static_cast<std::uint32_t>(in.below(3));
      // Each encoder then names its own type, as files with two encoders do.
      if (const KeyValue* shared = find_pair(doc, "clip.projector_type");
          shared != nullptr && in.below(4) != 0) {
        const Value value = shared->value;
        erase_pair(doc, "clip.projector_type");
        set_pair(doc,
                 find_pair(doc, "clip.has_vision_encoder") != nullptr ? "clip.vision.projector_type"
                                                                      : "clip.audio.projector_type",
                 value);
      }
      add_encoder(doc, encoder, in.below(8) == 0 ? std::string_view() : types.names[other], width,
                  layers);
      break;
    }
    case 8: {  // the projector type: moved to an encoder's key, another name, cut at a NUL
      const Value current = find_pair(doc, "clip.projector_type") != nullptr
                                ? find_pair(doc, "clip.projector_type")->value
                                : Value::string(type);
      const char* key = in.one_of(kTypeKeys);
      switch (in.below(5)) {
        case 0:
          erase_pair(doc, "clip.projector_type");
          set_pair(doc, key, current);
          break;
        case 1: set_pair(doc, key, Value::string(types.names[in.below(types.names.size())])); break;
        case 2: set_pair(doc, key, Value::string(type + std::string(1, '\0') + "x")); break;
        case 3: set_pair(doc, key, Value::string(in.below(2) == 0 ? "" : "mlp3")); break;
        default: set_pair(doc, key, Value::string("qwen2.5o"));
      }
      break;
    }
    case 9: {  // block_count against the layers written
      const std::uint32_t counts[] = {0, 1, 3, 100, 0x7fffffff};
      set_pair(doc, in.one_of(kBlockCounts), Value::u32(in.one_of(counts)));
      break;
    }
    case 10: {  // the arrays every type reads
      const std::size_t n = in.below(5);
      std::vector<Value> items;
      switch (in.below(4)) {
        case 0:
          for (std::size_t i = 0; i < n; ++i) items.push_back(Value::i32(336));
          set_pair(doc, "clip.vision.image_grid_pinpoints",
                   in.below(4) == 0 ? Value::array(ValueType::Float32, {Value::f32(1)})
                                    : Value::array(ValueType::Int32, std::move(items)));
          break;
        case 1:
          for (std::size_t i = 0; i < n; ++i) {
            items.push_back(Value::i32(static_cast<std::int32_t>(in.byte() % 6) - 1));
          }
          set_pair(doc, in.below(2) == 0 ? "clip.vision.feature_layer" : "clip.audio.feature_layer",
                   Value::array(in.below(6) == 0 ? ValueType::Uint32 : ValueType::Int32,
                                std::move(items)));
          break;
        default:
          for (std::size_t i = 0; i < n; ++i) items.push_back(Value::f32(0.5f));
          set_pair(doc, in.below(2) == 0 ? "clip.vision.image_mean" : "clip.vision.image_std",
                   Value::array(in.below(6) == 0 ? ValueType::Float64 : ValueType::Float32,
                                std::move(items)));
      }
      break;
    }
    case 11: {  // the minicpmv keys, a patch merge type
      const std::int32_t versions[] = {0, 2, 3, 4, 5, 6, 7, -1, 100045};
      switch (in.below(3)) {
        case 0: set_pair(doc, "clip.minicpmv_version", Value::i32(in.one_of(versions))); break;
        case 1: set_pair(doc, "clip.minicpmv_query_num", Value::u32(in.one_of(kNumbers))); break;
        default: set_pair(doc, "clip.vision.mm_patch_merge_type", Value::string("spatial_unpad"));
      }
      break;
    }
    case 12: {  // the kind: general.type and general.architecture
      static constexpr std::string_view kTypes[] = {"mmproj",  "model",       "adapter",
                                                    "imatrix", "mmproj\0x"sv, "projector"};
      if (in.below(2) == 0) {
        if (in.below(3) == 0) {
          erase_pair(doc, "general.type");
        } else {
          set_pair(doc, "general.type", Value::string(std::string(in.one_of(kTypes))));
        }
      } else {
        set_pair(doc, "general.architecture", Value::string(in.below(2) == 0 ? "llama" : "clip"));
      }
      break;
    }
    default: {  // a tensor's width (what the encoders project to) or shape
      if (doc.tensors.empty()) break;
      Tensor& t = doc.tensors[in.below(doc.tensors.size())];
      if (in.below(3) == 0) {
        t.dims = {32, 16, 2};
      } else if (!t.dims.empty()) {
        t.dims[in.below(t.dims.size())] = in.below(2) == 0 ? 4 : in.one_of(kDims);
      }
    }
  }
}

// --- adapters ----------------------------------------------------------------------------------

void move_adapter(Document& doc, Choices& in) {
  static constexpr std::string_view kArchitectures[] = {"llama", "qwen2", "clip",
                                                        "lama",  "",      "llama\0x"sv};
  static constexpr std::string_view kAdapterTypes[] = {"lora", "alora", "", "LORA", "lora\0x"sv};
  switch (in.below(13)) {
    case 0:
    case 1: move_any(doc, in); break;
    case 2:
      set_pair(doc, "general.architecture", Value::string(std::string(in.one_of(kArchitectures))));
      break;
    case 3:
      if (in.below(4) == 0) {
        erase_pair(doc, "adapter.type");
      } else {
        set_pair(doc, "adapter.type", Value::string(std::string(in.one_of(kAdapterTypes))));
      }
      break;
    case 4: {  // aLoRA invocation tokens
      const Value values[] = {Value::array(ValueType::Uint32, {Value::u32(1), Value::u32(3)}),
                              Value::array(ValueType::Uint32, {}),
                              Value::array(ValueType::Int32, {Value::i32(1)}),
                              Value::array(ValueType::String, {Value::string("a")}), Value::u32(1)};
      set_pair(doc, "adapter.alora.invocation_tokens", in.one_of(values));
      break;
    }
    case 5: {
      const Value alphas[] = {Value::f32(8), Value::f64(8), Value::u32(8), Value::string("8")};
      if (in.below(4) == 0) {
        erase_pair(doc, "adapter.lora.alpha");
      } else {
        set_pair(doc, "adapter.lora.alpha", in.one_of(alphas));
      }
      break;
    }
    case 6: {  // a tensor renamed: suffixes, names the base lacks, norms
      if (doc.tensors.empty()) break;
      std::string& name = doc.tensors[in.below(doc.tensors.size())].name;
      const std::string stem = name.substr(0, name.rfind('.'));
      switch (in.below(7)) {
        case 0: name = stem; break;
        case 1: name = stem + ".lora_a.lora_a"; break;
        case 2: name = "blk.0.lora_b" + name.substr(std::min<std::size_t>(5, name.size())); break;
        case 3: name = stem + (name.ends_with("_a") ? ".lora_b" : ".lora_a"); break;
        case 4: name = "blk.0.attn_norm.weight"; break;
        case 5: name = "blk.7" + name.substr(std::min<std::size_t>(5, name.size())); break;
        default: name = stem + ".lora_a" + std::string(1, '\0') + "x";
      }
      break;
    }
    case 7: {  // a dim changed or the dims swapped
      if (doc.tensors.empty()) break;
      Tensor& t = doc.tensors[in.below(doc.tensors.size())];
      if (in.below(3) == 0 && t.dims.size() >= 2) {
        std::swap(t.dims[0], t.dims[1]);
      } else if (!t.dims.empty()) {
        t.dims[in.below(t.dims.size())] = in.one_of(kDims);
      }
      break;
    }
    case 12: {  // a whole pair renamed: a base tensor the model lacks, or another one's
      if (doc.tensors.size() < 2) break;
      const std::size_t a = in.below(doc.tensors.size() / 2) * 2;
      static const char* const kStems[] = {"blk.7.attn_q.weight", "blk.0.attn_q.bias",
                                           "output_norm.weight", "blk.0.ffn_down.weight"};
      const std::string stem = in.one_of(kStems);
      doc.tensors[a].name = stem + ".lora_a";
      doc.tensors[a + 1].name = stem + ".lora_b";
      break;
    }
    case 8:  // a tensor twice
      if (!doc.tensors.empty()) doc.tensors.push_back(doc.tensors[in.below(doc.tensors.size())]);
      break;
    case 9: {  // a pair's rank, both halves alike (the rank is the adapter's to choose)
      if (doc.tensors.size() < 2) break;
      const std::size_t a = in.below(doc.tensors.size() / 2) * 2;
      Tensor& lora_a = doc.tensors[a];
      Tensor& lora_b = doc.tensors[a + 1];
      const std::uint64_t rank = 1 + in.below(16);
      if (lora_a.dims.size() < 2 || lora_b.dims.empty()) break;
      if (lora_a.name.starts_with("token_embd")) {
        lora_a.dims[0] = rank;
        lora_b.dims[0] = rank;
      } else {
        lora_a.dims[1] = rank;
        lora_b.dims[0] = rank;
      }
      break;
    }
    case 10:  // a tensor of another type (F16, Q8_0, or one no ggml has)
      if (!doc.tensors.empty()) {
        const std::uint32_t tensor_types[] = {1, 8, 99};
        doc.tensors[in.below(doc.tensors.size())].type = in.one_of(tensor_types);
      }
      break;
    default: set_pair(doc, "general.type", Value::string(in.below(2) == 0 ? "model" : "adapter"));
  }
}

// --- importance matrices -----------------------------------------------------------------------

void move_imatrix(Document& doc, Choices& in) {
  switch (in.below(7)) {
    case 0:
    case 1: move_any(doc, in); break;
    case 2: doc.tensors.clear(); break;
    case 3: {
      static const char* const kKeys[] = {"imatrix.chunk_count", "imatrix.chunk_size",
                                          "imatrix.datasets"};
      const char* key = in.one_of(kKeys);
      if (in.below(2) == 0) {
        erase_pair(doc, key);
      } else {
        set_pair(doc, key, in.below(2) == 0 ? Value::i32(10) : Value::u64(10));
      }
      break;
    }
    case 4:
      if (!doc.tensors.empty()) {
        const std::uint32_t tensor_types[] = {1, 8, 99};
        doc.tensors[in.below(doc.tensors.size())].type = in.one_of(tensor_types);
      }
      break;
    case 5:
      if (!doc.tensors.empty()) {
        std::string& name = doc.tensors[in.below(doc.tensors.size())].name;
        const std::string names[] = {"", ".in_sum2", ".counts", name + ".counts",
                                     name.substr(0, name.rfind('.'))};
        name = in.one_of(names);
      }
      break;
    default:
      if (!doc.tensors.empty()) {  // a counts tensor without elements
        doc.tensors[in.below(doc.tensors.size())].dims = {1, 0};
      }
  }
}

// --- base models for adapters ------------------------------------------------------------------

// A memory-backed file holding `bytes`, for the process's life: its path, or "" when the
// kernel has no memfd.
std::string memory_file(const std::vector<std::uint8_t>& bytes) {
  const int fd = ::memfd_create("fuzz_artifacts_base", MFD_CLOEXEC);
  if (fd < 0) return {};
  std::size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n <= 0) return {};
    at += static_cast<std::size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

enum class Base : std::uint8_t {
  None,
  Model,  // the test kit's model: llama.cpp loads it
  Vocabulary,
  Refused,  // a required tensor dropped
  Shard,
  Cut,
  Empty,
  Missing,
  Directory,
  Stdin,
  Url,
  kCount
};

std::string base_path(Base base) {
  static const std::map<Base, std::string> files = [] {
    std::map<Base, std::string> out;
    const Document model = testing::model_document();
    out[Base::Model] = memory_file(write_bytes(model));
    Document vocabulary = model;
    vocabulary.tensors.clear();
    out[Base::Vocabulary] = memory_file(write_bytes(vocabulary));
    Document refused = model;
    std::erase_if(refused.tensors, [](const Tensor& t) { return t.name == "output_norm.weight"; });
    out[Base::Refused] = memory_file(write_bytes(refused));
    out[Base::Shard] = memory_file(write_bytes(testing::shards_of(model, 2)[0]));
    const std::vector<std::uint8_t> whole = write_bytes(model);
    out[Base::Cut] = memory_file(testing::prefix(whole, whole.size() / 2));
    out[Base::Empty] = memory_file({});
    out[Base::Missing] = "/nonexistent/fuzz_artifacts/base.gguf";
    out[Base::Directory] = "/";
    out[Base::Stdin] = "-";
    out[Base::Url] = "https://example.invalid/base.gguf";
    return out;
  }();
  const auto at = files.find(base);
  return at == files.end() ? std::string() : at->second;
}

// --- the checks --------------------------------------------------------------------------------

enum class Kind : std::uint8_t { Mmproj, Adapter, Imatrix, Other };

// The kind llama.cpp's loaders take the file for: general.type, else general.architecture
// "clip", each the first pair ggml finds by its C string.
Kind declared_kind(const Document& doc) {
  const Value* type = nullptr;
  const Value* arch = nullptr;
  for (const KeyValue& kv : doc.metadata) {
    const std::string_view key = c_prefix(kv.key);
    if (key == "general.type" && type == nullptr) type = &kv.value;
    if (key == "general.architecture" && arch == nullptr) arch = &kv.value;
  }
  if (type != nullptr && type->type == ValueType::String) {
    const std::string_view declared = c_prefix(type->text);
    if (declared == "adapter") return Kind::Adapter;
    if (declared == "mmproj") return Kind::Mmproj;
    if (declared == "imatrix") return Kind::Imatrix;
  }
  if (arch != nullptr && arch->type == ValueType::String && c_prefix(arch->text) == "clip") {
    return Kind::Mmproj;
  }
  return Kind::Other;
}

// The Model-area codes each kind's judge reports.
bool judged_as(Code code, Kind kind) {
  if (code == Code::SlowReferenceLoad) return true;  // the model stage's, for every kind
  switch (kind) {
    case Kind::Mmproj:
      return code == Code::MmprojKeyInvalid || code == Code::MissingTensor ||
             code == Code::LoaderNotPredicted;
    case Kind::Adapter:
      return code == Code::AdapterKeyInvalid || code == Code::AdapterTensorInvalid ||
             code == Code::AdapterBaseMismatch || code == Code::AdapterBaseNotGiven ||
             code == Code::AdapterBaseUnusable || code == Code::LoaderNotPredicted;
    case Kind::Imatrix: return code == Code::ImatrixInvalid;
    case Kind::Other: return true;
  }
  return true;
}

// The type clip.projector_type names when ggufcheck does not follow it (every encoder reads
// it first), else "".
std::string unfollowed_type(const Document& doc) {
  for (const KeyValue& kv : doc.metadata) {
    if (c_prefix(kv.key) != "clip.projector_type") continue;
    if (kv.value.type != ValueType::String) return {};
    const std::string_view name = c_prefix(kv.value.text);
    // qwen2.5o is read as a followed type of each modality.
    if (name == "qwen2.5o") return {};
    const ProjectorTypes& types = projector_types();
    for (std::size_t i = 0; i < types.names.size(); ++i) {
      if (types.names[i] == name && !types.followed[i]) return types.names[i];
    }
    return {};
  }
  return {};
}

bool same_findings(const Report& a, const Report& b) {
  if (a.findings.size() != b.findings.size() || a.errors != b.errors || a.warnings != b.warnings ||
      a.notes != b.notes || a.findings_dropped != b.findings_dropped) {
    return false;
  }
  for (std::size_t i = 0; i < a.findings.size(); ++i) {
    const Finding& x = a.findings[i];
    const Finding& y = b.findings[i];
    if (x.code != y.code || x.offset != y.offset || x.length != y.length || x.path != y.path ||
        x.message != y.message || x.severity != y.severity) {
      return false;
    }
  }
  return true;
}

// The findings no base changes: the adapter's keys, suffixes, pairs and ranks.
std::vector<std::pair<Code, std::uint64_t>> base_free(const Report& report) {
  std::vector<std::pair<Code, std::uint64_t>> out;
  for (const Finding& f : report.findings) {
    if (f.code == Code::AdapterKeyInvalid || f.code == Code::AdapterTensorInvalid) {
      out.emplace_back(f.code, f.offset);
    }
  }
  return out;
}

// The first findings, for the message of a broken invariant.
std::string described(const Report& report) {
  std::string out;
  for (std::size_t i = 0; i < std::min<std::size_t>(report.findings.size(), 3); ++i) {
    const Finding& f = report.findings[i];
    out += fmt::format("; {} {}: {}", code_string(f.code), f.path, f.message);
  }
  return out;
}

struct Built {
  Kind built = Kind::Other;
  Document document;
  bool pristine = false;  // no move changed the written bytes
  bool followed = true;   // a projector type ggufcheck follows
  Base base = Base::None;
};

std::string check(const Built& b, Bytes bytes, const Options& options, std::size_t choice) {
  const Report report = validate(bytes, options);
  if (std::string problem = fuzz::check_report(report, options, bytes.size()); !problem.empty()) {
    return problem;
  }
  const Kind kind = declared_kind(b.document);
  for (const Finding& f : report.findings) {
    if (catalogue_entry(f.code).area == Area::Model && !judged_as(f.code, kind)) {
      return fmt::format("{} reported for a file of another kind than its judge's{}",
                         code_string(f.code), described(report));
    }
  }
  const bool promises_llama = options.profile != Profile::Spec;
  if (promises_llama && report.passed()) {
    if (kind == Kind::Mmproj && !unfollowed_type(b.document).empty()) {
      return "a projector of a type ggufcheck does not follow passes" + described(report);
    }
    if (kind == Kind::Adapter && b.base != Base::Model) {
      return "an adapter passes without a base model ggufcheck could read" + described(report);
    }
  }
  if (b.pristine) {
    const bool should_pass = b.followed && (b.built != Kind::Adapter || b.base == Base::Model);
    // The llama.cpp profile passes it (llama-imatrix writes no general.architecture: a warning
    // there, an error in strict), and no loader's judge finds anything in any profile.
    const bool model_finding =
        std::any_of(report.findings.begin(), report.findings.end(),
                    [](const Finding& f) { return catalogue_entry(f.code).area == Area::Model; });
    if (should_pass && (model_finding || (options.profile == Profile::LlamaCpp && !options.werror &&
                                          !report.passed()))) {
      return "an artifact no move touched does not pass" + described(report);
    }
    if (b.built == Kind::Adapter && b.base == Base::None && promises_llama) {
      if (report.findings.size() != 1 || report.findings[0].code != Code::AdapterBaseNotGiven) {
        return "an adapter no move touched, without its base: not GGUF7020 alone" +
               described(report);
      }
    }
  }
  if (b.base != Base::None && report.findings_dropped == 0) {
    Options alone = options;
    alone.base_model.clear();
    const Report without = validate(bytes, alone);
    if (without.findings_dropped == 0 && base_free(without) != base_free(report)) {
      return "the adapter's base-free findings change with its base model";
    }
  }
  if (fuzz::every_run || choice % 4 == 0) {
    if (!same_findings(report, validate(bytes, options))) return "two runs disagree";
  }
  return {};
}

Built build(Choices& in) {
  Built b;
  const std::size_t what = in.below(8);
  if (what < 5) {
    const ProjectorTypes& types = projector_types();
    const std::size_t i = in.below(types.names.size());
    static std::vector<Document> cache(types.names.size());
    static std::vector<bool> made(types.names.size());
    if (!made[i]) {
      cache[i] = testing::projector_of_type(types.names[i]);
      // A width of 8 rather than 64: the judge compares widths, never sizes with the keys, and
      // the data of 64-wide tensors (written in full) made each execution a few times slower.
      for (Tensor& t : cache[i].tensors) {
        for (std::uint64_t& d : t.dims) d = d >= 64 ? d / 8 : d;
      }
      made[i] = true;
    }
    b.built = Kind::Mmproj;
    b.document = cache[i];
    b.followed = types.followed[i];
    for (int moves = 0; moves < kMaxMoves && !in.empty(); ++moves) {
      move_mmproj(b.document, types.names[i], in);
    }
    b.pristine = b.document == cache[i];
  } else if (what < 7) {
    static const Document model = testing::model_document();
    static const Document adapter = testing::adapter_document(model);
    b.built = Kind::Adapter;
    b.base = static_cast<Base>(in.below(static_cast<std::size_t>(Base::kCount)));
    b.document = adapter;
    for (int moves = 0; moves < kMaxMoves && !in.empty(); ++moves) move_adapter(b.document, in);
    b.pristine = b.document == adapter;
  } else {
    static const Document imatrix = testing::imatrix_document();
    b.built = Kind::Imatrix;
    b.document = imatrix;
    for (int moves = 0; moves < kMaxMoves && !in.empty(); ++moves) move_imatrix(b.document, in);
    b.pristine = b.document == imatrix;
  }
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > kMaxInput) return 0;
  Choices in(data, size);
  // The options first, so that the program of moves can grow at the end.
  const std::size_t profile_choice = in.below(3);
  const std::size_t flags = in.byte();
  const Built b = build(in);
  Written written = write(b.document);
  bool cut = false;
  if (!written.layout.tensors.empty() && flags % 16 == 1) {
    // Cut inside a tensor info: the metadata whole, the tensor infos not.
    const WrittenTensor& t = written.layout.tensors[(flags / 16) % written.layout.tensors.size()];
    written.bytes.resize(t.name_offset + 3);
    cut = true;
  }
  Built judged = b;
  judged.pristine = b.pristine && !cut;
  const Bytes view(written.bytes.data(), written.bytes.size());
  Options options;
  options.werror = flags % 16 == 2;
  if (flags % 16 == 3) options.limits.max_findings = 1 + flags / 64;
  if (b.built == Kind::Adapter) options.base_model = base_path(b.base);
  if (b.base != Base::None && options.base_model.empty()) return 0;  // no memfd here
  const std::size_t choice = fuzz::choice_hash(Bytes(data, size), size);
  const Profile profiles[] = {Profile::Strict, Profile::Spec, Profile::LlamaCpp};
  for (std::size_t p = 0; p < 3; ++p) {
    if (!fuzz::every_run && p != profile_choice) continue;
    options.profile = profiles[p];
    if (std::string problem = check(judged, view, options, choice); !problem.empty()) {
      fuzz::fail_if(fmt::format("{} (profile {})", problem, to_string(profiles[p])), view);
    }
  }
  return 0;
}
