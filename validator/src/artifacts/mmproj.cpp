// A multimodal projector as mtmd's clip loader (tools/mtmd/clip.cpp of the pinned llama.cpp:
// clip_init, clip_model_loader::load_hparams) reads it, up to where every projector type reads
// the same keys:
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
//   minicpmv_query_num).
// Each projector type then reads keys and tensors of its own, which ggufcheck does not model: a
// file that passes the rules above gets GGUF7016 (fail closed), never a pass.
#include <algorithm>
#include <string>
#include <vector>

#include "artifacts/artifacts.hpp"
#include "model/keys.hpp"

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

class Reader {
 public:
  Reader(const Model& model, Sink& sink) : model_(model), sink_(sink) {}
  [[nodiscard]] bool refused() const { return refused_; }

  // The pair of `key` when it has `type`; a finding (and nullopt) when it has another, or when
  // it is required and missing.
  std::optional<std::size_t> typed(std::string_view key, ValueType type, bool required,
                                   std::string_view reader) {
    const auto kv = ggml_key(model_, key);
    if (!kv) {
      if (required) {
        refused_ = true;
        report_file(sink_, model_, Code::MmprojKeyInvalid, "metadata",
                    "write the key: every projector type reads it",
                    "no {}: mtmd's clip loader refuses the file (Key not found)", key);
      }
      return std::nullopt;
    }
    if (model_.metadata[*kv].type() != type) {
      refused_ = true;
      report_pair(sink_, model_, Code::MmprojKeyInvalid, *kv,
                  fmt::format("write {} as a {}", key, to_string(type)),
                  "{} is {}, not {}: mtmd's clip loader aborts ({})", key,
                  to_string(model_.metadata[*kv].type()), to_string(type), reader);
      return std::nullopt;
    }
    return kv;
  }

  // get_u32: a u32 of at most INT32_MAX. Its value, or nullopt.
  std::optional<std::uint64_t> u32(std::string_view key, bool required) {
    const auto kv = typed(key, ValueType::Uint32, required, "gguf_get_val_u32");
    if (!kv) return std::nullopt;
    const std::uint64_t value = model_.metadata[*kv].payload() & 0xffffffffU;
    if (value > kInt32Max) {
      refused_ = true;
      report_pair(sink_, model_, Code::MmprojKeyInvalid, *kv, "write a value below 2^31",
                  "{} is {}, above INT32_MAX: mtmd's clip loader refuses the file", key, value);
      return std::nullopt;
    }
    return value;
  }

  // get_arr_f32 / get_arr_int: an array of `element` (else refused). Its pair, or nullopt.
  std::optional<std::size_t> array(std::string_view key, ValueType element) {
    const auto kv = ggml_key(model_, key);
    if (!kv) return std::nullopt;
    if (model_.metadata[*kv].type() != ValueType::Array ||
        model_.array(*kv).elements() != element) {
      refused_ = true;
      report_pair(sink_, model_, Code::MmprojKeyInvalid, *kv,
                  fmt::format("write {} as an array of {}", key, to_string(element)),
                  "{} is not an array of {}: mtmd's clip loader refuses the file", key,
                  to_string(element));
      return std::nullopt;
    }
    return kv;
  }

  // Element j of the i32 array at pair kv.
  [[nodiscard]] std::int64_t i32_at(std::size_t kv, std::uint64_t j) const {
    const std::uint64_t at = model_.count_offset(kv) + model_.size_width() + 4 * j;
    const auto raw = model_.input.number_at(at, 4, model_.endian).value_or(0);
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(raw));
  }

  void refuse(std::size_t kv, std::string_view hint, std::string message) {
    refused_ = true;
    report_pair(sink_, model_, Code::MmprojKeyInvalid, kv, hint, "{}", message);
  }
  void refuse_file(std::string_view hint, std::string message) {
    refused_ = true;
    report_file(sink_, model_, Code::MmprojKeyInvalid, "metadata", hint, "{}", message);
  }

  [[nodiscard]] const Model& model() const { return model_; }

 private:
  const Model& model_;
  Sink& sink_;
  bool refused_ = false;
};

bool flag(Reader& r, std::string_view key) {
  const auto kv = r.typed(key, ValueType::Bool, false, "gguf_get_val_bool");
  return kv && r.model().metadata[*kv].payload() != 0;
}

// The projector type of one encoder, as load_hparams reads it; empty when refused.
std::string projector_type(Reader& r, std::string_view encoder) {
  std::string type;
  if (const auto kv =
          r.typed("clip.projector_type", ValueType::String, false, "gguf_get_val_str")) {
    type = c_string_prefix(r.model().string_value(*kv));
  }
  const std::string own = fmt::format("clip.{}.projector_type", encoder);
  std::optional<std::size_t> at = ggml_key(r.model(), "clip.projector_type");
  if (type.empty()) {
    if (const auto kv = r.typed(own, ValueType::String, false, "gguf_get_val_str")) {
      type = c_string_prefix(r.model().string_value(*kv));
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

void read_encoder(Reader& r, std::string_view encoder, std::vector<std::string>& types) {
  // Keys every encoder reads alike are reported for the first one only.
  const bool first = types.empty();
  const std::string type = projector_type(r, encoder);
  if (type.empty()) return;
  types.push_back(type == "qwen2.5o" ? (encoder == "vision" ? "qwen2.5vl_merger" : "qwen2a")
                                     : type);
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
  const std::optional<std::uint64_t> n_layer = [&] {
    const auto kv = ggml_key(r.model(), key("block_count"));
    if (!kv || r.model().metadata[*kv].type() != ValueType::Uint32)
      return std::optional<std::uint64_t>();
    return std::optional<std::uint64_t>(r.model().metadata[*kv].payload() & 0xffffffffU);
  }();
  if (encoder == "vision") {
    (void)r.u32("clip.vision.image_size", true);
    (void)r.u32("clip.vision.patch_size", true);
    (void)r.typed("clip.minicpmv_version", ValueType::Int32, false, "gguf_get_val_i32");
    (void)r.u32("clip.minicpmv_query_num", false);
  } else if (encoder == "audio") {
    (void)r.u32("clip.audio.num_mel_bins", true);
  } else {
    (void)r.typed("clip.gen.audio.model_variant", ValueType::String, false, "gguf_get_val_str");
  }
  if (!first) {
    // The rest was read for the first encoder already.
  } else if (const auto kv = r.array("clip.vision.image_grid_pinpoints", ValueType::Int32);
             kv && r.model().array(*kv).count % 2 != 0) {
    r.refuse(*kv, "write width, height pairs",
             fmt::format("clip.vision.image_grid_pinpoints has {} elements, an odd number: mtmd's "
                         "clip loader refuses the file",
                         r.model().array(*kv).count));
  }
  const bool gelu = first && flag(r, "clip.use_gelu");
  const bool silu = first && flag(r, "clip.use_silu");
  if (gelu && silu) {
    r.refuse(*ggml_key(r.model(), "clip.use_silu"), "set at most one of them",
             "clip.use_gelu and clip.use_silu are both true: mtmd's clip loader refuses the file");
  }
  if (first) {
    (void)r.typed("clip.vision.mm_patch_merge_type", ValueType::String, false, "gguf_get_val_str");
  }
  if (encoder == "vision") {
    std::uint64_t shortest = UINT64_MAX;
    for (const std::string_view name : {"clip.vision.image_mean", "clip.vision.image_std"}) {
      const auto kv = r.array(name, ValueType::Float32);
      shortest = std::min<std::uint64_t>(shortest, kv ? r.model().array(*kv).count : 0);
    }
    if (shortest < 3) {
      r.refuse_file("write clip.vision.image_mean and clip.vision.image_std, 3 float32 each",
                    "clip.vision.image_mean or clip.vision.image_std is missing or has fewer than "
                    "3 elements: mtmd's clip loader refuses the file");
    }
  }
  if (const auto kv = r.array(key("feature_layer"), ValueType::Int32); kv && n_layer) {
    const std::uint64_t count = r.model().array(*kv).count;
    for (std::uint64_t j = 0; j < count; ++j) {
      const std::int64_t v = r.i32_at(*kv, j);
      if (v > static_cast<std::int64_t>(*n_layer)) {
        r.refuse(*kv, "write layer indices from 0 to block_count",
                 fmt::format("{} holds {}, above block_count {}: mtmd's clip loader refuses the "
                             "file",
                             key("feature_layer"), v, *n_layer));
        break;
      }
    }
  }
}

}  // namespace

void check_mmproj(const Model& model, Sink& sink) {
  Reader r(model, sink);
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
  std::vector<std::string> types;
  if (vision) read_encoder(r, "vision", types);
  const bool gemma3nv = !types.empty() && types.front() == "gemma3nv";
  if (audio && !gemma3nv) read_encoder(r, "audio", types);
  if (gen_audio) read_encoder(r, "gen.audio", types);
  if (r.refused() || sink.has_profile_errors()) return;
  report_file(sink, model, Code::LoaderNotPredicted, "model",
              "load it with llama.cpp's mtmd (llama-mtmd-cli --mmproj) to learn its verdict",
              "projector type {}: the keys every projector reads are as mtmd's clip loader reads "
              "them, but ggufcheck does not model this type's own keys and tensors, so it cannot "
              "say whether mtmd loads the file",
              fmt::join(types, ", "));
}

}  // namespace ggufcheck::detail
