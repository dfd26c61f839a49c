#include "mmproj_builder.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "documents.hpp"

namespace ggufcheck::testing {

namespace {

struct Rules {
  std::string_view name;
  bool followed;
  bool audio;
  std::string_view embd_tensor;
  std::string_view why_not;
};

struct Step {
  std::string_view projector;
  std::string_view op;
  std::string_view key;
  std::string_view member;
  bool required;
  std::string_view role;
};

// A comparison of one of the type's GGML_ASSERTs: member [% modulus] op (other or constant).
struct AssertRule {
  std::string_view projector;
  int index;
  int alternative;
  std::string_view member;
  std::int64_t modulus;
  std::string_view op;
  std::string_view other;
  std::int64_t constant;
};

struct TensorRule {
  std::string_view projector;
  std::string_view name;
  bool required;
};

constexpr Rules kRules[] = {
#define GGUFCHECK_PROJECTOR_RULES(name, followed, rate, fft, window, hop, embd, dim, exact, when, \
                                  becomes, becomes_dim, why_not)                                  \
  {name, followed, (rate) > 0 && (fft) > 0 && (window) > 0 && (hop) > 0, embd, why_not},
#include "artifacts/generated/projector_rules.inc"
};

constexpr Step kSteps[] = {
#define GGUFCHECK_PROJECTOR_STEP(name, op, key, member, required, role, a, b) \
  {name, #op, key, member, required, #role},
#include "artifacts/generated/projector_rules.inc"
};

constexpr AssertRule kAsserts[] = {
#define GGUFCHECK_PROJECTOR_ASSERT(name, index, alternative, member, modulus, op, other, constant) \
  {name, index, alternative, member, modulus, #op, other, constant},
#include "artifacts/generated/projector_rules.inc"
};

constexpr TensorRule kTensors[] = {
#define GGUFCHECK_PROJECTOR_TENSOR(name, tensor, required) {name, tensor, required},
#include "artifacts/generated/projector_rules.inc"
};

struct Preprocessor {
  std::string_view projector;
  bool vision;
};

constexpr Preprocessor kPreprocessors[] = {
#define GGUFCHECK_PROJECTOR_PREPROCESSOR(name, vision, audio) {name, vision},
#include "artifacts/generated/projector_rules.inc"
};

constexpr std::uint32_t kWidth = 64;
constexpr std::uint32_t kLayers = 2;

const Rules& rules_of(std::string_view type) {
  for (const Rules& r : kRules) {
    if (r.name == type) return r;
  }
  static const Rules none{};
  return none;
}

std::string with_prefix(std::string_view pattern, std::string_view prefix) {
  std::string name(pattern);
  if (const std::size_t at = name.find("{prefix}"); at != std::string::npos) {
    name.replace(at, 8, prefix);
  }
  return name;
}

bool compare(std::int64_t a, std::string_view op, std::int64_t b) {
  if (op == "Eq") return a == b;
  if (op == "Ne") return a != b;
  if (op == "Lt") return a < b;
  if (op == "Le") return a <= b;
  if (op == "Gt") return a > b;
  return a >= b;  // Ge
}

// Whether v for `member` can satisfy each of the type's asserts: some alternative whose
// comparisons of the member with a constant all hold (those with another member are left to
// that member's own value).
bool satisfies_asserts(std::string_view type, std::string_view member, std::int64_t v) {
  for (const AssertRule& first : kAsserts) {
    if (first.projector != type || first.alternative != 0 || first.member != member) continue;
    bool any = false;
    for (int alternative = 0; !any && alternative < 8; ++alternative) {
      bool all = true;
      bool seen = false;
      for (const AssertRule& a : kAsserts) {
        if (a.projector != type || a.index != first.index || a.alternative != alternative) {
          continue;
        }
        seen = true;
        if (a.member != member || !a.other.empty()) continue;
        all = all && compare(a.modulus > 0 ? v % a.modulus : v, a.op, a.constant);
      }
      any = seen && all;
    }
    if (!any) return false;
  }
  return true;
}

// A value the loader takes for a key of this role (and that the type's asserts accept).
std::uint32_t value_for(std::string_view type, const Step& step) {
  if (step.role == "NMerge") return 2;
  if (step.role == "MinPixels") return 3136;
  if (step.role == "MaxPixels") return 1000000;
  if (step.role == "WindowSize") return 16;
  if (step.key.find("stack_factor") != std::string_view::npos) return 4;
  for (const std::uint32_t v : {2U, 3U, 4U, 8U, 1U, 16U}) {
    if (satisfies_asserts(type, step.member, v)) return v;
  }
  return 2;
}

}  // namespace

std::vector<std::string> followed_projector_types() {
  std::vector<std::string> out;
  for (const Rules& r : kRules) {
    if (r.followed) out.emplace_back(r.name);
  }
  return out;
}

std::vector<UnfollowedType> unfollowed_projector_types() {
  std::vector<UnfollowedType> out;
  for (const Rules& r : kRules) {
    if (r.followed) continue;
    bool vision = false;
    for (const Preprocessor& p : kPreprocessors) {
      if (p.projector == r.name) vision = p.vision;
    }
    out.push_back({std::string(r.name), std::string(r.why_not), vision});
  }
  return out;
}

Document projector_of_type(std::string_view type) {
  const Rules& rules = rules_of(type);
  const std::string encoder = rules.audio ? "audio" : "vision";
  const std::string prefix = rules.audio ? "a" : "v";
  Document doc;
  doc.metadata.push_back({"general.architecture", Value::string("clip"), {}});
  doc.metadata.push_back({"general.type", Value::string("mmproj"), {}});
  doc.metadata.push_back({rules.audio ? "clip.has_audio_encoder" : "clip.has_vision_encoder",
                          Value::boolean(true),
                          {}});
  doc.metadata.push_back({"clip.projector_type", Value::string(std::string(type)), {}});
  for (const auto& [key, value] :
       {std::pair{"embedding_length", kWidth}, std::pair{"attention.head_count", 4U},
        std::pair{"feed_forward_length", 2 * kWidth}, std::pair{"block_count", kLayers},
        std::pair{"projection_dim", kWidth}}) {
    doc.metadata.push_back({"clip." + encoder + "." + key, Value::u32(value), {}});
  }
  doc.metadata.push_back(
      {"clip." + encoder + ".attention.layer_norm_epsilon", Value::f32(1e-6f), {}});
  if (rules.audio) {
    doc.metadata.push_back({"clip.audio.num_mel_bins", Value::u32(128), {}});
  } else {
    add_vision_image_keys(doc);
  }
  for (const Step& step : kSteps) {
    if (step.projector != type || step.op != "Key" || !step.required) continue;
    const bool present = std::any_of(doc.metadata.begin(), doc.metadata.end(),
                                     [&](const KeyValue& kv) { return kv.key == step.key; });
    if (!present) {
      doc.metadata.push_back({std::string(step.key), Value::u32(value_for(type, step)), {}});
    }
  }
  for (std::uint32_t il = 0; il < kLayers; ++il) {
    const std::string blk = prefix + ".blk." + std::to_string(il) + ".";
    doc.tensors.push_back({blk + "attn_out.weight", {kWidth, kWidth}, 0, {}, {}});
    doc.tensors.push_back({blk + "ffn_up.weight", {kWidth, 2 * kWidth}, 0, {}, {}});
    doc.tensors.push_back({blk + "ffn_down.weight", {2 * kWidth, kWidth}, 0, {}, {}});
  }
  const std::string embd = with_prefix(rules.embd_tensor, prefix);
  for (const TensorRule& t : kTensors) {
    if (t.projector != type) continue;
    const std::string name = with_prefix(t.name, prefix);
    if (!t.required && name != embd) continue;
    doc.tensors.push_back({name, {kWidth, kWidth}, 0, {}, {}});
  }
  return doc;
}

std::vector<ProjectorMutant> projector_mutants(const Document& base) {
  std::vector<ProjectorMutant> out;
  const auto add = [&](std::string description, const auto& change) {
    Document doc = base;
    change(doc);
    out.push_back({std::move(description), std::move(doc)});
  };
  for (std::size_t k = 0; k < base.metadata.size(); ++k) {
    const std::string& key = base.metadata[k].key;
    if (key == "general.architecture" || key == "general.type") continue;
    add("remove " + key, [&](Document& d) {
      d.metadata.erase(d.metadata.begin() + static_cast<std::ptrdiff_t>(k));
    });
    const ValueType type = base.metadata[k].value.type;
    if (type == ValueType::Uint32) {
      for (const std::uint32_t v : {0U, 1U, 9000U, 70000U, 0x7fffffffU, 0x80000000U}) {
        add(key + " = " + std::to_string(v),
            [&](Document& d) { d.metadata[k].value = Value::u32(v); });
      }
      add(key + " as u64", [&](Document& d) { d.metadata[k].value = Value::u64(2); });
      add(key + " as i32", [&](Document& d) { d.metadata[k].value = Value::i32(2); });
    } else if (type == ValueType::Float32) {
      add(key + " as f64", [&](Document& d) { d.metadata[k].value = Value::f64(1e-6); });
    } else if (type == ValueType::Bool) {
      add(key + " = false", [&](Document& d) { d.metadata[k].value = Value::boolean(false); });
      add(key + " as u8", [&](Document& d) { d.metadata[k].value = Value::u8(1); });
    } else if (type == ValueType::String) {
      add(key + " = mlp3", [&](Document& d) { d.metadata[k].value = Value::string("mlp3"); });
      add(key + " as u32", [&](Document& d) { d.metadata[k].value = Value::u32(1); });
    } else if (type == ValueType::Array) {
      add(key + " of 2", [&](Document& d) { d.metadata[k].value.items.resize(2); });
      add(key + " as i32 array", [&](Document& d) {
        d.metadata[k].value =
            Value::array(ValueType::Int32, {Value::i32(1), Value::i32(1), Value::i32(1)});
      });
    }
  }
  for (std::size_t t = 0; t < base.tensors.size(); ++t) {
    const std::string& name = base.tensors[t].name;
    add("remove " + name,
        [&](Document& d) { d.tensors.erase(d.tensors.begin() + static_cast<std::ptrdiff_t>(t)); });
    add("rename " + name, [&](Document& d) { d.tensors[t].name += ".x"; });
    add("reshape " + name, [&](Document& d) { d.tensors[t].dims = {32, 16, 2}; });
  }
  add("an extra tensor", [](Document& d) {
    d.tensors.push_back({"mm.extra.weight", {8}, 0, {}, {}});
  });
  for (const char* key : {"clip.vision.block_count", "clip.audio.block_count"}) {
    add(std::string(key) + " one more than the layers", [&](Document& d) {
      for (KeyValue& kv : d.metadata) {
        if (kv.key == key) kv.value = Value::u32(kLayers + 1);
      }
    });
  }
  add("an audio encoder beside", [](Document& d) {
    d.metadata.push_back({"clip.has_audio_encoder", Value::boolean(true), {}});
  });
  add("both gelu and silu", [](Document& d) {
    d.metadata.push_back({"clip.use_gelu", Value::boolean(true), {}});
    d.metadata.push_back({"clip.use_silu", Value::boolean(true), {}});
  });
  return out;
}

// The projector as the other encoder: a vision one's keys and layers moved to audio (with
// num_mel_bins), or an audio one's to vision (with the image keys).
Document other_encoder(const Document& base, bool audio) {
  const std::string from = audio ? "audio" : "vision";
  const std::string to = audio ? "vision" : "audio";
  Document doc;
  for (const KeyValue& kv : base.metadata) {
    KeyValue moved = kv;
    if (kv.key == "clip.has_" + from + "_encoder") moved.key = "clip.has_" + to + "_encoder";
    for (const char* suffix : {"embedding_length", "attention.head_count", "feed_forward_length",
                               "block_count", "projection_dim", "attention.layer_norm_epsilon"}) {
      if (kv.key == "clip." + from + "." + suffix) moved.key = "clip." + to + "." + suffix;
    }
    doc.metadata.push_back(std::move(moved));
  }
  if (audio) {
    add_vision_image_keys(doc);
  } else {
    doc.metadata.push_back({"clip.audio.num_mel_bins", Value::u32(128), {}});
  }
  const std::string from_prefix = audio ? "a.blk." : "v.blk.";
  const std::string to_prefix = audio ? "v.blk." : "a.blk.";
  for (Tensor t : base.tensors) {
    if (t.name.starts_with(from_prefix)) t.name = to_prefix + t.name.substr(from_prefix.size());
    doc.tensors.push_back(std::move(t));
  }
  return doc;
}

std::vector<ProjectorMutant> projector_mutants_of_type(std::string_view type) {
  const Document base = projector_of_type(type);
  std::vector<ProjectorMutant> out = projector_mutants(base);
  out.push_back({rules_of(type).audio ? "as a vision encoder" : "as an audio encoder",
                 other_encoder(base, rules_of(type).audio)});
  for (const std::int32_t version : {0, 2, 4, 7, 100045}) {
    Document doc = base;
    doc.metadata.push_back({"clip.minicpmv_version", Value::i32(version), {}});
    out.push_back({"clip.minicpmv_version = " + std::to_string(version), std::move(doc)});
  }
  const auto has_key = [&](std::string_view key) {
    return std::any_of(base.metadata.begin(), base.metadata.end(),
                       [&](const KeyValue& kv) { return kv.key == key; });
  };
  for (const Step& step : kSteps) {
    if (step.projector != type || step.op != "Key" || has_key(step.key)) continue;
    const std::string key(step.key);
    for (const std::uint32_t v : {0U, 1U, 5000U, 70000U, 0x7fffffffU}) {
      Document doc = base;
      doc.metadata.push_back({key, Value::u32(v), {}});
      out.push_back({"add " + key + " = " + std::to_string(v), std::move(doc)});
    }
    Document doc = base;
    doc.metadata.push_back({key, Value::i32(2), {}});
    out.push_back({"add " + key + " as i32", std::move(doc)});
  }
  const std::string prefix = rules_of(type).audio ? "a" : "v";
  for (const TensorRule& t : kTensors) {
    if (t.projector != type || t.required) continue;
    const std::string name = with_prefix(t.name, prefix);
    if (std::any_of(base.tensors.begin(), base.tensors.end(),
                    [&](const Tensor& present) { return present.name == name; })) {
      continue;
    }
    Document doc = base;
    doc.tensors.push_back({name, {kWidth, kWidth}, 0, {}, {}});
    out.push_back({"add " + name, std::move(doc)});
  }
  return out;
}

}  // namespace ggufcheck::testing
