// A multimodal projector as mtmd's clip loader (tools/mtmd/clip.cpp of the pinned llama.cpp:
// clip_init, clip_model_loader::load_hparams, load_tensors, init_ctx) reads it, with the checks
// mtmd_init_from_file makes of what came back:
// - clip.has_vision_encoder, clip.has_audio_encoder, clip.has_gen_audio_encoder: bools when
//   present (gguf_get_val_bool aborts on another type); mtmd refuses a file with neither a vision
//   nor an audio encoder;
// - per encoder (vision, audio, gen.audio; the audio one skipped beside a gemma3nv vision one):
//   the projector type (clip.projector_type, else clip.<encoder>.projector_type), a name of
//   PROJECTOR_TYPE_NAMES (generated/projector_types.inc); embedding_length, attention.head_count,
//   feed_forward_length, block_count, projection_dim (u32 at most INT32_MAX), head_dim and
//   head_count_kv when present, attention.layer_norm_epsilon (f32); vision: image_size and
//   patch_size, image_mean and image_std (f32 arrays of 3 or more); audio: num_mel_bins; the
//   optional keys every type reads (use_gelu / use_silu, not both; image_grid_pinpoints, an even
//   number of i32; feature_layer, i32 indices up to block_count; minicpmv_version and
//   minicpmv_query_num);
// - then what the projector type asks for, from generated/projector_rules.inc (written from
//   clip.cpp by validator/tools/mmproj_tables/clip_loader.py): its keys in the order its case of
//   load_hparams reads them, with the merge factor, image token limits and warmup size they set;
//   load_hparams' sanity checks (image_size at most 8192, patch_size 1 to 65535, a non-zero
//   width, max pixels not below min pixels, merge 1 to 65535, window at most 4096; audio:
//   num_mel_bins 1 to 256 and a type that sets the audio preprocessing); the layers' tensors
//   (attn_out, and ffn_up and ffn_down unless the layer has experts, for every layer up to
//   block_count) and the type's required tensors (GGUF7011); the tensor clip_n_mmproj_embd
//   reads the width of in init_ctx (a null read: mtmd crashes);
// - mtmd_context's own checks (tools/mtmd/mtmd.cpp): a vision and an audio encoder of the same
//   width; a projector type init_vision / init_audio has a preprocessor for, as the encoder it
//   is declared for (generated too; whether the type is followed or not); for a resampler, a
//   minicpmv_version init_vision knows.
// - the type's GGML_ASSERTs on the values its case set or read (an abort when one fails), and
//   InternVL's tile candidates (about n log n sizes for n = preproc_max_tiles: not followed
//   past 2^20 tiles, or where a size overflows int);
// A type whose code the generator does not follow (26 of 61 in the pinned source, each with the
// reason in the table), int arithmetic of the loader's that overflows, a warmup image above
// 1 GiB, or widths ggufcheck does not read exactly get GGUF7016 (fail closed), never a pass.
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "artifacts/artifacts.hpp"
#include "index/keys.hpp"

namespace ggufcheck::detail {

namespace {

constexpr std::string_view kProjectorTypes[] = {
#define GGUFCHECK_PROJECTOR_TYPE(enumerator, name) name,
#include "artifacts/generated/projector_types.inc"
#undef GGUFCHECK_PROJECTOR_TYPE
};

bool known_projector(std::string_view name) {
  for (const std::string_view known : kProjectorTypes) {
    if (known == name) return true;
  }
  return false;
}

constexpr std::uint64_t kInt32Max = 0x7fffffff;

class ClipKeyReader {
 public:
  ClipKeyReader(const FileIndex& index, Sink& sink) : index_(index), sink_(sink) {}
  [[nodiscard]] bool refused() const { return refused_; }

  // The pair of `key` when it has `type`; a finding (and nullopt) when it has another, or when
  // it is required and missing.
  std::optional<std::size_t> typed(std::string_view key, ValueType type, bool required,
                                   std::string_view reader) {
    const auto kv = ggml_key(index_, key);
    if (!kv) {
      if (required) {
        refused_ = true;
        report_file(sink_, index_, Code::MmprojKeyInvalid, "metadata",
                    "write the key: every projector type reads it",
                    "no {}: mtmd's clip loader refuses the file (Key not found)", key);
      }
      return std::nullopt;
    }
    if (index_.metadata[*kv].type() != type) {
      refused_ = true;
      report_pair(sink_, index_, Code::MmprojKeyInvalid, *kv,
                  fmt::format("write {} as a {}", key, to_string(type)),
                  "{} is {}, not {}: mtmd's clip loader aborts ({})", key,
                  to_string(index_.metadata[*kv].type()), to_string(type), reader);
      return std::nullopt;
    }
    return kv;
  }

  // get_u32: a u32 of at most INT32_MAX. Its value, or nullopt.
  std::optional<std::uint64_t> u32(std::string_view key, bool required) {
    const auto kv = typed(key, ValueType::Uint32, required, "gguf_get_val_u32");
    if (!kv) return std::nullopt;
    const std::uint64_t value = index_.metadata[*kv].payload() & 0xffffffffU;
    if (value > kInt32Max) {
      refused_ = true;
      report_pair(sink_, index_, Code::MmprojKeyInvalid, *kv, "write a value below 2^31",
                  "{} is {}, above INT32_MAX: mtmd's clip loader refuses the file", key, value);
      return std::nullopt;
    }
    return value;
  }

  // get_arr_f32 / get_arr_int: an array of `element` (else refused). Its pair, or nullopt.
  std::optional<std::size_t> array(std::string_view key, ValueType element) {
    const auto kv = ggml_key(index_, key);
    if (!kv) return std::nullopt;
    if (index_.metadata[*kv].type() != ValueType::Array ||
        index_.array(*kv).elements() != element) {
      refused_ = true;
      report_pair(sink_, index_, Code::MmprojKeyInvalid, *kv,
                  fmt::format("write {} as an array of {}", key, to_string(element)),
                  "{} is not an array of {}: mtmd's clip loader refuses the file", key,
                  to_string(element));
      return std::nullopt;
    }
    return kv;
  }

  // Element j of the i32 array at pair kv.
  [[nodiscard]] std::int64_t i32_at(std::size_t kv, std::uint64_t j) const {
    const std::uint64_t at = index_.elements_offset(kv) + 4 * j;
    const auto raw = index_.input.number_at(at, 4, index_.endian).value_or(0);
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(raw));
  }

  void refuse(std::size_t kv, std::string_view hint, std::string message) {
    refused_ = true;
    report_pair(sink_, index_, Code::MmprojKeyInvalid, kv, hint, "{}", message);
  }
  void refuse_file(std::string_view hint, std::string message) {
    refused_ = true;
    report_file(sink_, index_, Code::MmprojKeyInvalid, "metadata", hint, "{}", message);
  }

  [[nodiscard]] const FileIndex& index() const { return index_; }

 private:
  const FileIndex& index_;
  Sink& sink_;
  bool refused_ = false;
};

bool flag(ClipKeyReader& r, std::string_view key) {
  const auto kv = r.typed(key, ValueType::Bool, false, "gguf_get_val_bool");
  return kv && r.index().metadata[*kv].payload() != 0;
}

// The projector type of one encoder, as load_hparams reads it; empty when refused.
std::string projector_type(ClipKeyReader& r, std::string_view encoder) {
  std::string type;
  if (const auto kv =
          r.typed("clip.projector_type", ValueType::String, false, "gguf_get_val_str")) {
    type = c_string_prefix(r.index().string_value(*kv));
  }
  const std::string own = fmt::format("clip.{}.projector_type", encoder);
  std::optional<std::size_t> at = ggml_key(r.index(), "clip.projector_type");
  if (type.empty()) {
    if (const auto kv = r.typed(own, ValueType::String, false, "gguf_get_val_str")) {
      type = c_string_prefix(r.index().string_value(*kv));
      at = kv;
    }
  }
  if (!known_projector(type)) {
    const std::string message =
        type.empty() ? fmt::format(
                           "no projector type for the {} encoder (clip.projector_type or "
                           "{}): mtmd's clip loader refuses the file",
                           encoder, own)
                     : fmt::format(
                           "projector type \"{}\" is not one mtmd knows: its clip loader "
                           "refuses the file (unknown projector type)",
                           escape(type));
    const std::string_view hint =
        "write one of the projector types of the llama.cpp release the file is for (\"mlp\", "
        "\"gemma3\", \"qwen2.5vl_merger\", ...)";
    if (at) {
      r.refuse(*at, hint, message);
    } else {
      r.refuse_file(hint, message);
    }
    return {};
  }
  return type;
}

// --- the projector types' own rules (generated/projector_rules.inc) ----------------------------

enum class StepOp : std::uint8_t {
  Key,
  Merge,
  Limit,
  Warmup,
  WarmupImage,
  Set,
  Assert,
  TileCandidates
};
enum class AssertOp : std::uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
enum class Role : std::uint8_t { Read, NMerge, MinPixels, MaxPixels, WindowSize };

struct ProjectorRules {
  std::string_view name;
  bool followed;
  std::array<std::int64_t, 4> audio;  // sample rate, n_fft, window, hop: -1 when not set
  std::string_view embd_tensor;       // what clip_n_mmproj_embd reads the width of
  unsigned embd_dim;
  bool embd_exact;                // that dim is the width (not a product with more)
  std::string_view becomes_when;  // MLP: with this tensor it is read as MLP_NORM...
  std::string_view becomes_embd_tensor;
  unsigned becomes_embd_dim;
  std::string_view why_not;
};

struct ProjectorStep {
  std::string_view projector;
  StepOp op;
  std::string_view key;     // Assert: its text
  std::string_view member;  // the hparams member a Key or Set step sets
  bool required;
  Role role;
  std::int64_t a, b;
};

// One comparison of a GGML_ASSERT: hparams.member [% modulus] op (hparams.other or constant).
struct ProjectorAssert {
  std::string_view projector;
  int index;
  int alternative;
  std::string_view member;
  std::int64_t modulus;
  AssertOp op;
  std::string_view other;
  std::int64_t constant;
};

struct ProjectorTensor {
  std::string_view projector;
  std::string_view name;  // {prefix}: the encoder's tensor prefix
  bool required;
};

constexpr ProjectorRules kRules[] = {
#define GGUFCHECK_PROJECTOR_RULES(name, followed, rate, fft, window, hop, embd, dim, exact, when, \
                                  becomes, becomes_dim, why_not)                                  \
  {name, followed, {rate, fft, window, hop}, embd, dim, exact, when, becomes, becomes_dim, why_not},
#include "artifacts/generated/projector_rules.inc"
};

constexpr ProjectorStep kSteps[] = {
#define GGUFCHECK_PROJECTOR_STEP(name, op, key, member, required, role, a, b) \
  {name, StepOp::op, key, member, required, Role::role, a, b},
#include "artifacts/generated/projector_rules.inc"
};

constexpr ProjectorAssert kAsserts[] = {
#define GGUFCHECK_PROJECTOR_ASSERT(name, index, alternative, member, modulus, op, other, constant) \
  {name, index, alternative, member, modulus, AssertOp::op, other, constant},
#include "artifacts/generated/projector_rules.inc"
};

constexpr ProjectorTensor kTensors[] = {
#define GGUFCHECK_PROJECTOR_TENSOR(name, tensor, required) {name, tensor, required},
#include "artifacts/generated/projector_rules.inc"
};

// Whether mtmd_context's init_vision / init_audio (tools/mtmd/mtmd.cpp) has a preprocessor for
// the type; else mtmd refuses the file (unexpected vision / audio projector type).
struct Preprocessor {
  std::string_view projector;
  bool vision;
  bool audio;
};

constexpr Preprocessor kPreprocessors[] = {
#define GGUFCHECK_PROJECTOR_PREPROCESSOR(name, vision, audio) {name, vision, audio},
#include "artifacts/generated/projector_rules.inc"
};

bool has_preprocessor(std::string_view type, std::string_view encoder) {
  for (const Preprocessor& p : kPreprocessors) {
    if (p.projector == type) return encoder == "vision" ? p.vision : p.audio;
  }
  return false;
}

// The minicpmv versions init_vision takes for a resampler (load_hparams makes 0 a 2).
constexpr std::int64_t kMinicpmvVersions[] = {2, 3, 4, 5, 6, 100045};

const ProjectorRules* rules_of(std::string_view type) {
  for (const ProjectorRules& rules : kRules) {
    if (rules.name == type) return &rules;
  }
  return nullptr;
}

// The limits load_hparams' sanity check and init_ctx put on the values (tools/mtmd/clip.cpp).
constexpr std::int64_t kMaxImageSize = 8192;
constexpr std::int64_t kPatchSizeBound = 65536;
constexpr std::int64_t kMergeBound = 65536;
constexpr std::int64_t kMaxWindowSize = 4096;
constexpr std::int64_t kMaxMelBins = 256;
// init_ctx fills a warmup image of side x side x 3 floats even without a warmup: above this
// ggufcheck does not say whether the allocation succeeds (fail closed).
constexpr std::uint64_t kMaxWarmupImageBytes = std::uint64_t{1} << 30;

constexpr bool fits_int32(std::int64_t v) {
  return v >= INT32_MIN && v <= INT32_MAX;
}

// InternVL's tile candidates: set_internvl_dhr_res_candidates lists about
// preproc_max_tiles * ln(preproc_max_tiles) sizes; past this many tiles ggufcheck does not say
// whether the list fits in memory and time (fail closed).
constexpr std::int64_t kMaxTilesFollowed = std::int64_t{1} << 20;

// The values of the hparams members a type's asserts read, as its case set them: nullopt where
// the key that sets one was refused (the loader stops there anyway).
class MemberValues {
 public:
  struct Value {
    std::string_view member;
    std::optional<std::int64_t> value;
    std::string_view key;  // the key that set it last; empty for a constant
  };
  void set(std::string_view member, std::optional<std::int64_t> value, std::string_view key) {
    for (Value& v : values_) {
      if (v.member == member) {
        v = {member, value, key};
        return;
      }
    }
    values_.push_back({member, value, key});
  }
  [[nodiscard]] const Value* find(std::string_view member) const {
    for (const Value& v : values_) {
      if (v.member == member) return &v;
    }
    return nullptr;
  }
  [[nodiscard]] std::optional<std::int64_t> get(std::string_view member) const {
    const Value* v = find(member);
    return v ? v->value : std::nullopt;
  }

 private:
  std::vector<Value> values_;
};

constexpr bool compare(std::int64_t a, AssertOp op, std::int64_t b) {
  switch (op) {
    case AssertOp::Eq: return a == b;
    case AssertOp::Ne: return a != b;
    case AssertOp::Lt: return a < b;
    case AssertOp::Le: return a <= b;
    case AssertOp::Gt: return a > b;
    case AssertOp::Ge: return a >= b;
  }
  return false;
}

// Whether the type's assert number `index` holds (one alternative whose comparisons all hold);
// nullopt when a value it reads is not known.
std::optional<bool> assert_holds(std::string_view type, std::int64_t index,
                                 const MemberValues& values) {
  bool any_alternative = false;
  bool holds = false;
  int alternative = -1;
  bool alternative_holds = true;
  for (const ProjectorAssert& a : kAsserts) {
    if (a.projector != type || a.index != index) continue;
    if (a.alternative != alternative) {
      if (alternative >= 0) holds = holds || alternative_holds;
      alternative = a.alternative;
      alternative_holds = true;
      any_alternative = true;
    }
    const auto left = values.get(a.member);
    const auto right =
        a.other.empty() ? std::optional<std::int64_t>(a.constant) : values.get(a.other);
    if (!left || !right) return std::nullopt;
    // Values are u32 of at most INT32_MAX or the type's constants: no overflow, and the
    // modulus is a positive constant of the source.
    const std::int64_t lhs = a.modulus > 0 ? *left % a.modulus : *left;
    alternative_holds = alternative_holds && compare(lhs, a.op, *right);
  }
  if (!any_alternative) return std::nullopt;
  return holds || alternative_holds;
}

// What one encoder was read as: its projector type, the values its checks need, and what
// ggufcheck could not follow.
struct Encoder {
  std::string encoder;  // vision, audio, gen.audio
  std::string type;
  std::optional<std::uint64_t> n_embd, n_layer, image_size, patch_size, n_mel_bins;
  std::string not_followed;            // why ggufcheck cannot say what the loader does with it
  std::optional<std::uint64_t> width;  // clip_n_mmproj_embd, when known exactly
};

std::optional<std::uint64_t> u32_value(const FileIndex& index, std::string_view key) {
  const auto kv = ggml_key(index, key);
  if (!kv || index.metadata[*kv].type() != ValueType::Uint32) return std::nullopt;
  const std::uint64_t value = index.metadata[*kv].payload() & 0xffffffffU;
  if (value > kInt32Max) return std::nullopt;
  return value;
}

void read_encoder(ClipKeyReader& r, std::string_view encoder, std::vector<Encoder>& encoders) {
  // Keys every encoder reads alike are reported for the first one only.
  const bool first = encoders.empty();
  std::string type = projector_type(r, encoder);
  if (type.empty()) return;
  if (type == "qwen2.5o") type = encoder == "vision" ? "qwen2.5vl_merger" : "qwen2a";
  Encoder e;
  e.encoder = encoder;
  e.type = type;
  const auto key = [&](std::string_view suffix) {
    return fmt::format("clip.{}.{}", encoder, suffix);
  };
  for (const std::string_view suffix : {"embedding_length", "attention.head_count",
                                        "feed_forward_length", "block_count", "projection_dim"}) {
    (void)r.u32(key(suffix), true);
  }
  (void)r.u32(key("attention.head_dim"), false);
  (void)r.typed(key("attention.layer_norm_epsilon"), ValueType::Float32, true, "gguf_get_val_f32");
  (void)r.u32(key("attention.head_count_kv"), false);
  const FileIndex& index = r.index();
  e.n_embd = u32_value(index, key("embedding_length"));
  e.n_layer = u32_value(index, key("block_count"));
  if (encoder == "vision") {
    (void)r.u32("clip.vision.image_size", true);
    (void)r.u32("clip.vision.patch_size", true);
    (void)r.typed("clip.minicpmv_version", ValueType::Int32, false, "gguf_get_val_i32");
    (void)r.u32("clip.minicpmv_query_num", false);
    e.image_size = u32_value(index, "clip.vision.image_size");
    e.patch_size = u32_value(index, "clip.vision.patch_size");
  } else if (encoder == "audio") {
    (void)r.u32("clip.audio.num_mel_bins", true);
    e.n_mel_bins = u32_value(index, "clip.audio.num_mel_bins");
    e.image_size = 0;
    e.patch_size = 1;
  } else {
    (void)r.typed("clip.gen.audio.model_variant", ValueType::String, false, "gguf_get_val_str");
    e.image_size = 0;
    e.patch_size = 1;
  }
  if (!first) {
    // The rest was read for the first encoder already.
  } else if (const auto kv = r.array("clip.vision.image_grid_pinpoints", ValueType::Int32);
             kv && index.array(*kv).count % 2 != 0) {
    r.refuse(*kv, "write width, height pairs",
             fmt::format("clip.vision.image_grid_pinpoints has {} elements, an odd number: mtmd's "
                         "clip loader refuses the file",
                         index.array(*kv).count));
  }
  const bool gelu = first && flag(r, "clip.use_gelu");
  const bool silu = first && flag(r, "clip.use_silu");
  if (gelu && silu) {
    r.refuse(*ggml_key(index, "clip.use_silu"), "set at most one of them",
             "clip.use_gelu and clip.use_silu are both true: mtmd's clip loader refuses the file");
  }
  if (first) {
    (void)r.typed("clip.vision.mm_patch_merge_type", ValueType::String, false, "gguf_get_val_str");
  }
  if (encoder == "vision") {
    std::uint64_t shortest = UINT64_MAX;
    for (const std::string_view name : {"clip.vision.image_mean", "clip.vision.image_std"}) {
      const auto kv = r.array(name, ValueType::Float32);
      shortest = std::min<std::uint64_t>(shortest, kv ? index.array(*kv).count : 0);
    }
    if (shortest < 3) {
      r.refuse_file("write clip.vision.image_mean and clip.vision.image_std, 3 float32 each",
                    "clip.vision.image_mean or clip.vision.image_std is missing or has fewer than "
                    "3 elements: mtmd's clip loader refuses the file");
    }
  }
  if (const auto kv = r.array(key("feature_layer"), ValueType::Int32); kv && e.n_layer) {
    const std::uint64_t count = index.array(*kv).count;
    for (std::uint64_t j = 0; j < count; ++j) {
      const std::int64_t v = r.i32_at(*kv, j);
      if (v > static_cast<std::int64_t>(*e.n_layer)) {
        r.refuse(*kv, "write layer indices from 0 to block_count",
                 fmt::format("{} holds {}, above block_count {}: mtmd's clip loader refuses the "
                             "file",
                             key("feature_layer"), v, *e.n_layer));
        break;
      }
    }
  }
  encoders.push_back(std::move(e));
}

// The type's own keys and load_hparams' sanity checks, as the steps of its case run them.
void read_type_hparams(ClipKeyReader& r, const ProjectorRules& rules, Encoder& e) {
  std::int64_t n_merge = 1;
  std::int64_t min_pixels = -1;
  std::int64_t max_pixels = -1;
  std::int64_t window = 0;
  // The warmup image's side, unless it is image_size. Not an optional: g++ 12 -O3 warns falsely
  // that an optional's value may be used uninitialized here.
  bool warmup_is_image_size = true;
  std::int64_t warmup = 0;
  // The keys that set them last (empty: a constant of the type's).
  std::string_view merge_key, max_pixels_key, window_key;
  const std::int64_t patch = e.patch_size ? static_cast<std::int64_t>(*e.patch_size) : 1;
  const auto unpredictable = [&](std::string why) {
    if (e.not_followed.empty()) e.not_followed = std::move(why);
  };
  // At the key's pair when the file has it.
  const auto refuse = [&](std::string_view key, std::string_view hint, std::string message) {
    message = fmt::format("{}: mtmd's clip loader refuses the file", message);
    if (const auto kv = key.empty() ? std::nullopt : ggml_key(r.index(), key)) {
      r.refuse(*kv, hint, std::move(message));
    } else {
      r.refuse_file(hint, std::move(message));
    }
  };
  MemberValues members;
  for (const ProjectorStep& step : kSteps) {
    if (step.projector != rules.name) continue;
    switch (step.op) {
      case StepOp::Key: {
        const auto value = r.u32(step.key, step.required);
        if (!value) {
          // Missing and optional: the member keeps what the case set before.
          if (step.required || ggml_key(r.index(), step.key)) {
            members.set(step.member, std::nullopt, step.key);
          }
          break;
        }
        const auto v = static_cast<std::int64_t>(*value);
        members.set(step.member, v, step.key);
        switch (step.role) {
          case Role::NMerge:
            n_merge = v;
            merge_key = step.key;
            break;
          case Role::MinPixels: min_pixels = v; break;
          case Role::MaxPixels:
            max_pixels = v;
            max_pixels_key = step.key;
            break;
          case Role::WindowSize:
            window = v;
            window_key = step.key;
            break;
          case Role::Read: break;
        }
        break;
      }
      case StepOp::Merge:
        n_merge = step.a;
        merge_key = {};
        members.set("n_merge", step.a, {});
        break;
      case StepOp::Set: members.set(step.member, step.a, {}); break;
      case StepOp::Assert:
        if (assert_holds(rules.name, step.a, members) == false) {
          // At the key that set the first value it reads, when a key did.
          std::string_view at;
          for (const ProjectorAssert& a : kAsserts) {
            if (a.projector != rules.name || a.index != step.a) continue;
            if (const auto* v = members.find(a.member); v && !v->key.empty()) at = v->key;
            break;
          }
          refuse(at, "write values the projector type's loader asserts",
                 fmt::format("GGML_ASSERT({}) fails for projector type {} (an abort)", step.key,
                             rules.name));
          return;  // the loader aborts here: its later keys and sanity checks are not reached
        }
        break;
      case StepOp::TileCandidates: {
        const auto lowest = members.get("preproc_min_tiles");
        const auto highest = members.get("preproc_max_tiles");
        if (!lowest || !highest || *lowest < 1) break;
        if (*highest > kMaxTilesFollowed) {
          unpredictable(fmt::format(
              "its loader lists the image tile sizes up to {} tiles (about n log n of them; "
              "ggufcheck follows up to {})",
              *highest, kMaxTilesFollowed));
        } else if (e.image_size &&
                   !fits_int32(*highest * static_cast<std::int64_t>(*e.image_size))) {
          unpredictable(
              fmt::format("its loader's tile sizes ({} tiles of image_size {}) overflow int",
                          *highest, *e.image_size));
        }
        break;
      }
      case StepOp::Limit: {
        // set_limit_image_tokens: patch_size * patch_size * n_merge * n_merge in int, left to
        // right, which ggufcheck follows only without overflow. Each factor is below 2^31 and
        // each partial product is checked before the next, so none overflows int64 here.
        const std::int64_t squared = patch * patch;
        const std::int64_t once = fits_int32(squared) ? squared * n_merge : INT64_MAX;
        const std::int64_t area = fits_int32(once) ? once * n_merge : INT64_MAX;
        if (!fits_int32(area) || !fits_int32(step.a * area) || !fits_int32(step.b * area)) {
          unpredictable(fmt::format(
              "its image token limits overflow int in the loader (patch_size {} and merge {})",
              patch, n_merge));
          break;
        }
        min_pixels = step.a * area;
        max_pixels = step.b * area;
        max_pixels_key = {};
        warmup = static_cast<std::int64_t>(std::sqrt(static_cast<double>(max_pixels)));
        warmup_is_image_size = false;
        break;
      }
      case StepOp::Warmup:
        if (!fits_int32(step.a * patch) || !fits_int32(step.a * patch * n_merge)) {
          unpredictable(fmt::format(
              "its warmup image size overflows int in the loader (patch_size {} and merge {})",
              patch, n_merge));
          break;
        }
        warmup = step.a * patch * n_merge;
        warmup_is_image_size = false;
        break;
      case StepOp::WarmupImage: warmup_is_image_size = true; break;
    }
  }
  const std::string embedding_key = fmt::format("clip.{}.embedding_length", e.encoder);
  if (e.image_size && static_cast<std::int64_t>(*e.image_size) > kMaxImageSize) {
    refuse("clip.vision.image_size", "write an image_size of at most 8192",
           fmt::format("clip.vision.image_size is {}, above 8192", *e.image_size));
  }
  if (e.patch_size && (*e.patch_size == 0 || *e.patch_size >= kPatchSizeBound)) {
    refuse("clip.vision.patch_size", "write a patch_size from 1 to 65535",
           fmt::format("clip.vision.patch_size is {}", *e.patch_size));
  }
  if (e.n_embd && *e.n_embd == 0) {
    refuse(embedding_key, "write the encoder's width", fmt::format("{} is 0", embedding_key));
  }
  if (e.not_followed.empty() && max_pixels < min_pixels) {
    refuse(max_pixels_key, "write image_max_pixels at least image_min_pixels",
           fmt::format("the largest image ({} pixels) is below the smallest ({} pixels)",
                       max_pixels, min_pixels));
  }
  if (n_merge <= 0 || n_merge >= kMergeBound) {
    refuse(merge_key, "write a merge factor from 1 to 65535",
           merge_key.empty()
               ? fmt::format("the projector's merge factor (n_merge) is {}", n_merge)
               : fmt::format("{} (the projector's merge factor) is {}", merge_key, n_merge));
  }
  if (window > kMaxWindowSize) {
    refuse(window_key, "write a window size of at most 4096",
           fmt::format("{} is {}, above 4096", window_key, window));
  }
  if (e.encoder == "audio") {
    if (e.n_mel_bins && (*e.n_mel_bins == 0 || *e.n_mel_bins > kMaxMelBins)) {
      refuse("clip.audio.num_mel_bins", "write num_mel_bins from 1 to 256",
             fmt::format("clip.audio.num_mel_bins is {}", *e.n_mel_bins));
    }
    if (std::any_of(rules.audio.begin(), rules.audio.end(),
                    [](std::int64_t v) { return v <= 0; })) {
      refuse("", "use an audio projector type for the audio encoder",
             fmt::format("projector type {} sets no audio preprocessing (sample rate, FFT), which "
                         "an audio encoder needs",
                         rules.name));
    }
  }
  if (e.encoder == "vision" && e.not_followed.empty()) {
    // init_ctx's dummy image (get_dummy_batch), made even without a warmup.
    const std::int64_t side =
        warmup_is_image_size ? static_cast<std::int64_t>(e.image_size.value_or(0)) : warmup;
    // side x side x 3 floats, compared by division: side may be near 2^31.
    constexpr std::uint64_t kBytesPerPixel = 12;
    const auto unsigned_side = static_cast<std::uint64_t>(side);
    if (side > 0 && unsigned_side > kMaxWarmupImageBytes / kBytesPerPixel / unsigned_side) {
      unpredictable(fmt::format(
          "its loader fills a {} x {} warmup image (3 floats a pixel, above 1 GiB) on load", side,
          side));
    }
  }
}

// The tensors load_tensors asks for (the layers every type but a few has, then the type's own)
// and the one clip_n_mmproj_embd reads in init_ctx.
void read_type_tensors(Sink& sink, const FileIndex& index, const ProjectorRules& rules, Encoder& e,
                       const std::unordered_map<std::string_view, std::size_t>& tensors,
                       bool& refused) {
  const std::string prefix = e.encoder == "vision"  ? "v"
                             : e.encoder == "audio" ? "a"
                                                    : "a.gen.code";
  const auto missing = [&](const std::string& name, std::string_view why,
                           std::string_view hint =
                               "write the tensor: the projector type's loader "
                               "asks for it") {
    refused = true;
    report_file(sink, index, Code::MissingTensor, "tensors", hint,
                "no tensor {}: {} (projector type {})", name, why, rules.name);
  };
  constexpr std::string_view kLayerHint =
      "write every layer's tensors up to block_count, or set block_count to the layers written";
  const auto has = [&](const std::string& name) { return tensors.contains(name); };
  if (e.n_layer) {
    // Layer il needs its own attn_out tensor, so past the tensor count one is surely missing:
    // the search stops there rather than at a file-supplied block_count.
    const std::uint64_t layers = std::min<std::uint64_t>(*e.n_layer, index.tensors.size() + 1);
    for (std::uint64_t il = 0; il < layers; ++il) {
      const std::string blk = fmt::format("{}.blk.{}.", prefix, il);
      std::string name = blk + "attn_out.weight";
      if (!has(name)) {
        missing(name, "the clip loader reads attn_out of every layer up to block_count",
                kLayerHint);
        break;
      }
      if (has(blk + "ffn_gate_exps.weight")) continue;  // a mixture of experts: no dense ffn
      bool gap = false;
      for (const char* part : {"ffn_up.weight", "ffn_down.weight"}) {
        name = blk + part;
        if (!has(name)) {
          missing(name,
                  "the clip loader reads ffn_up and ffn_down of every layer up to "
                  "block_count",
                  kLayerHint);
          gap = true;
          break;
        }
      }
      if (gap) break;
    }
  }
  const auto named = [&](std::string_view pattern) {
    std::string name(pattern);
    if (const std::size_t at = name.find("{prefix}"); at != std::string::npos) {
      name.replace(at, 8, prefix);
    }
    return name;
  };
  for (const ProjectorTensor& t : kTensors) {
    if (t.projector != rules.name || !t.required) continue;
    const std::string name = named(t.name);
    if (!has(name)) missing(name, "the projector type's loader requires it");
  }
  if (e.encoder == "gen.audio")
    return;  // no init_ctx, and mtmd reads no width without a text model
  std::string embd = named(rules.embd_tensor);
  unsigned dim = rules.embd_dim;
  if (!rules.becomes_when.empty() && has(named(rules.becomes_when))) {
    embd = named(rules.becomes_embd_tensor);
    dim = rules.becomes_embd_dim;
  }
  const auto at = tensors.find(embd);
  if (at == tensors.end()) {
    if (!refused) missing(embd, "clip_n_mmproj_embd reads its width on load, and mtmd crashes");
    return;
  }
  if (rules.embd_exact) e.width = index.dims(at->second)[dim];
}

}  // namespace

void check_mmproj(const FileIndex& index, Sink& sink) {
  ClipKeyReader r(index, sink);
  const bool vision = flag(r, "clip.has_vision_encoder");
  const bool audio = flag(r, "clip.has_audio_encoder");
  const bool gen_audio = flag(r, "clip.has_gen_audio_encoder");
  if (r.refused()) return;
  if (!vision && !audio) {
    r.refuse_file("set clip.has_vision_encoder or clip.has_audio_encoder to true",
                  "no vision or audio encoder (clip.has_vision_encoder, clip.has_audio_encoder): "
                  "mtmd refuses the file (Failed to load CLIP model)");
    return;
  }
  std::vector<Encoder> encoders;
  if (vision) read_encoder(r, "vision", encoders);
  const bool gemma3nv = !encoders.empty() && encoders.front().type == "gemma3nv";
  if (audio && !gemma3nv) read_encoder(r, "audio", encoders);
  if (gen_audio) read_encoder(r, "gen.audio", encoders);
  // The types' own keys and tensors, where ggufcheck follows them.
  std::unordered_map<std::string_view, std::size_t> tensors;
  if (index.tensors_complete) {
    tensors.reserve(index.tensors.size());
    for (std::size_t i = 0; i < index.tensors.size(); ++i) tensors.emplace(ggml_name(index, i), i);
  }
  // mtmd_context, after clip_init: the preprocessor of each encoder's type (whatever clip_init
  // made of the file, mtmd refuses it without one).
  for (const Encoder& e : encoders) {
    if (e.encoder == "gen.audio" || has_preprocessor(e.type, e.encoder)) continue;
    const auto at = ggml_key(index, "clip.projector_type");
    const std::string message = fmt::format(
        "projector type {} has no {} preprocessor in mtmd: it refuses the file (unexpected {} "
        "projector type)",
        e.type, e.encoder == "vision" ? "image" : "audio", e.encoder);
    constexpr std::string_view hint = "declare the encoder the projector type is for";
    if (at) {
      r.refuse(*at, hint, message);
    } else {
      r.refuse_file(hint, message);
    }
  }
  if (!encoders.empty() && encoders.front().encoder == "vision" &&
      encoders.front().type == "resampler") {
    if (const auto kv = ggml_key(index, "clip.minicpmv_version");
        kv && index.metadata[*kv].type() == ValueType::Int32) {
      const auto version = static_cast<std::int32_t>(
          static_cast<std::uint32_t>(index.metadata[*kv].payload() & 0xffffffffU));
      if (version != 0 && std::find(std::begin(kMinicpmvVersions), std::end(kMinicpmvVersions),
                                    version) == std::end(kMinicpmvVersions)) {
        r.refuse(*kv, "write a minicpmv version mtmd knows (2, 3, 4, 5, 6 or 100045)",
                 fmt::format("clip.minicpmv_version is {}: mtmd refuses the file (unsupported "
                             "minicpmv version)",
                             version));
      }
    }
  }
  bool tensor_refused = false;
  for (Encoder& e : encoders) {
    const ProjectorRules* rules = rules_of(e.type);
    if (rules == nullptr || !rules->followed) {
      e.not_followed = fmt::format("ggufcheck does not follow the loader's code for this type ({})",
                                   rules == nullptr ? "no rules" : rules->why_not);
      continue;
    }
    read_type_hparams(r, *rules, e);
    if (index.tensors_complete) read_type_tensors(sink, index, *rules, e, tensors, tensor_refused);
  }
  if (r.refused() || tensor_refused || sink.has_profile_errors()) return;
  // mtmd_context: a vision and an audio encoder must project to the same width.
  const Encoder* vision_encoder = nullptr;
  const Encoder* audio_encoder = nullptr;
  for (const Encoder& e : encoders) {
    if (e.encoder == "vision") vision_encoder = &e;
    if (e.encoder == "audio") audio_encoder = &e;
  }
  std::vector<std::string> unfollowed;
  for (const Encoder& e : encoders) {
    if (!e.not_followed.empty()) {
      unfollowed.push_back(
          fmt::format("{} encoder, projector type {}: {}", e.encoder, e.type, e.not_followed));
    }
  }
  if (unfollowed.empty() && vision_encoder != nullptr && audio_encoder != nullptr) {
    if (!vision_encoder->width || !audio_encoder->width) {
      unfollowed.emplace_back(
          "the vision and audio encoders' widths, which mtmd compares, are not read exactly by "
          "ggufcheck");
    } else if (*vision_encoder->width != *audio_encoder->width) {
      r.refuse_file("use a vision and an audio projector for the same text model",
                    fmt::format("the vision encoder projects to width {}, the audio encoder to "
                                "{}: mtmd refuses the file (mismatch between vision and audio "
                                "mmproj)",
                                *vision_encoder->width, *audio_encoder->width));
      return;
    }
  }
  if (unfollowed.empty()) return;
  report_file(sink, index, Code::LoaderNotPredicted, "model",
              "load it with llama.cpp's mtmd (llama-mtmd-cli --mmproj) to learn its verdict",
              "{}; so ggufcheck cannot say whether mtmd loads the file",
              fmt::join(unfollowed, "; "));
}

}  // namespace ggufcheck::detail
