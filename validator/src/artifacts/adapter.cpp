// A LoRA adapter as llama_adapter_lora_init (src/llama-adapter.cpp of the pinned llama.cpp) reads
// it against a base model:
// - general.type "adapter", general.architecture the base's (a missing or unknown one never is),
//   adapter.type "lora" (an aLoRA is a LoRA with adapter.alora.invocation_tokens, a uint32
//   array), adapter.lora.alpha a float32 when present; the string and float reads
//   (gguf_get_val_str, gguf_get_val_f32) abort on another type;
// - every tensor named "<base tensor>.lora_a", "<base tensor>.lora_b" (each occurrence of the
//   suffix is removed from the name, as replace_all does) or "..._norm.weight" (ignored); each
//   pair complete; a of [n_in, rank] and b of [rank, n_out]: a.ne[1] == b.ne[0];
// - with the base: each pair's base tensor exists, with ne[0] == a.ne[0] and ne[1] == b.ne[1]
//   (token_embd.weight, whose A and B are swapped: ne[0] == b.ne[1], ne[1] == a.ne[1]).
// No tensor type is refused at load. The base is read as a model (the llama.cpp profile, model
// checks on): one llama.cpp would not load cannot be a base.
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

#include "artifacts/artifacts.hpp"
#include "index/keys.hpp"
#include "llama_loader/interpreter.hpp"

namespace ggufcheck::detail {

namespace {

constexpr std::string_view kLoraA = ".lora_a";
constexpr std::string_view kLoraB = ".lora_b";

// replace_all(name, suffix, ""): every occurrence, left to right.
std::string without_all(std::string_view name, std::string_view part) {
  std::string out;
  std::size_t last = 0;
  for (std::size_t at = name.find(part); at != std::string_view::npos; at = name.find(part, last)) {
    out.append(name.substr(last, at - last));
    last = at + part.size();
  }
  out.append(name.substr(last));
  return out;
}

// What the adapter check needs of the base model: its architecture and its tensors' names
// (as ggml holds them) with their first two dims.
struct BaseModel {
  std::string architecture;
  std::unordered_map<std::string, std::array<std::uint64_t, 2>> tensors;
};

struct BaseRead {
  std::optional<BaseModel> base;
  std::string unusable;     // why it cannot be a base (AdapterBaseUnusable)
  std::string unpredicted;  // why ggufcheck cannot judge against it (LoaderNotPredicted)
};

BaseRead read_base(const std::string& path, const Options& options, ValidateBase validate_base) {
  BaseRead out;
  if (path == "-" || is_url(path)) {
    out.unusable = "a base model is read from a local file, not from standard input or a URL";
    return out;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    out.unusable = fmt::format("cannot open {}: {}", path, std::strerror(errno));
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    out.unusable = fmt::format("{} is not a regular file", path);
    return out;
  }
  // The base as llama.cpp's model loader reads it: its verdict in the llama.cpp profile, with
  // no override of the adapter's run changing it.
  Options base_options;
  base_options.profile = Profile::LlamaCpp;
  base_options.limits = options.limits;
  base_options.model_checks = true;
  base_options.template_checks = false;
  base_options.helper_thread = options.helper_thread;
  Report report;
  const auto failed =
      validate_base(path, base_options, [&](const Report& read, const FileIndex& index) {
        report = read;
        if (!index.metadata_complete || !index.tensors_complete) return;
        if (const auto split = ggml_key(index, "split.count");
            split && index.metadata[*split].type() == ValueType::Uint16 &&
            index.metadata[*split].payload() > 1) {
          out.unpredicted =
              "the base model is a shard of a split set, which ggufcheck does not "
              "read as a base";
          return;
        }
        BaseModel base;
        if (const auto arch = ggml_key(index, "general.architecture");
            arch && index.metadata[*arch].type() == ValueType::String) {
          base.architecture = std::string(c_string_prefix(index.string_value(*arch)));
        }
        base.tensors.reserve(index.tensors.size());
        for (std::size_t i = 0; i < index.tensors.size(); ++i) {
          const auto dims = index.dims(i);
          base.tensors.try_emplace(std::string(ggml_name(index, i)),
                                   std::array<std::uint64_t, 2>{dims[0], dims[1]});
        }
        out.base = std::move(base);
      });
  if (!failed.ok()) {
    out.base.reset();
    out.unusable = failed.why();
    return out;
  }
  if (report.errors != 0 || report.unreadable()) {
    out.base.reset();
    out.unpredicted.clear();
    const auto first = std::find_if(report.findings.begin(), report.findings.end(),
                                    [](const Finding& f) { return f.severity == Severity::Error; });
    out.unusable = first == report.findings.end()
                       ? "llama.cpp would not load it as a model"
                       : fmt::format("llama.cpp would not load it as a model: {} {}: {}",
                                     code_string(first->code), first->path, first->message);
    return out;
  }
  if (!out.base && out.unpredicted.empty()) out.unusable = "its tensor infos were not all read";
  if (out.base && out.base->tensors.empty()) {
    out.base.reset();
    out.unusable = "it has no tensors (a vocabulary-only file is no base model)";
  }
  return out;
}

// The adapter's keys, as llama_adapter_lora_init reads them. Returns the architecture when it is
// a string naming one llama.cpp knows.
std::optional<std::string_view> check_adapter_keys(const FileIndex& index, Sink& sink) {
  std::optional<std::string_view> architecture;
  const auto arch = ggml_key(index, "general.architecture");
  if (!arch) {
    report_file(sink, index, Code::AdapterKeyInvalid, "metadata",
                "write general.architecture, the base model's architecture (\"llama\", ...)",
                "no general.architecture: llama_adapter_lora_init refuses the adapter (model "
                "arch and LoRA arch mismatch)");
  } else if (index.metadata[*arch].type() != ValueType::String) {
    report_pair(sink, index, Code::AdapterKeyInvalid, *arch, "write it as a string",
                "general.architecture is {}, not a string: llama_adapter_lora_init aborts "
                "(gguf_get_val_str)",
                to_string(index.metadata[*arch].type()));
  } else {
    const std::string_view name = c_string_prefix(index.string_value(*arch));
    if (!known_architecture(name) || name == "clip") {
      report_pair(sink, index, Code::AdapterKeyInvalid, *arch,
                  "write the base model's architecture, as its general.architecture spells it",
                  "architecture \"{}\" is not one llama.cpp loads a model of ({}): no base model "
                  "matches it, llama_adapter_lora_init refuses the adapter",
                  escape(name), llama_cpp_tables_version());
    } else {
      architecture = name;
    }
  }
  const auto type = ggml_key(index, "adapter.type");
  if (!type) {
    report_file(sink, index, Code::AdapterKeyInvalid, "metadata", "write adapter.type = \"lora\"",
                "no adapter.type: llama_adapter_lora_init refuses the adapter (it expects "
                "\"lora\")");
  } else if (index.metadata[*type].type() != ValueType::String) {
    report_pair(sink, index, Code::AdapterKeyInvalid, *type, "write adapter.type = \"lora\"",
                "adapter.type is {}, not a string: llama_adapter_lora_init aborts "
                "(gguf_get_val_str)",
                to_string(index.metadata[*type].type()));
  } else if (const std::string_view value = c_string_prefix(index.string_value(*type));
             value != "lora") {
    report_pair(sink, index, Code::AdapterKeyInvalid, *type,
                "write adapter.type = \"lora\" (an aLoRA too: its invocation tokens make it one)",
                "adapter.type is \"{}\": llama_adapter_lora_init loads \"lora\" only",
                escape(value));
  }
  if (const auto alpha = ggml_key(index, "adapter.lora.alpha");
      alpha && index.metadata[*alpha].type() != ValueType::Float32) {
    report_pair(sink, index, Code::AdapterKeyInvalid, *alpha,
                "write adapter.lora.alpha as a float32",
                "adapter.lora.alpha is {}, not float32: llama_adapter_lora_init aborts "
                "(gguf_get_val_f32)",
                to_string(index.metadata[*alpha].type()));
  }
  if (const auto tokens = ggml_key(index, "adapter.alora.invocation_tokens")) {
    const ValueType t = index.metadata[*tokens].type();
    if (t != ValueType::Array) {
      report_pair(sink, index, Code::AdapterKeyInvalid, *tokens,
                  "write the invocation tokens as an array of uint32 token ids",
                  "adapter.alora.invocation_tokens is {}, not an array: llama_adapter_lora_init "
                  "refuses the adapter",
                  to_string(t));
    } else if (index.array(*tokens).elements() != ValueType::Uint32) {
      report_pair(sink, index, Code::AdapterKeyInvalid, *tokens,
                  "write the invocation tokens as an array of uint32 token ids",
                  "adapter.alora.invocation_tokens is an array of {}, not uint32: "
                  "llama_adapter_lora_init refuses the adapter",
                  to_string(index.array(*tokens).elements()));
    }
  }
  return architecture;
}

}  // namespace

void check_adapter(const FileIndex& index, Sink& sink, ValidateBase validate_base) {
  const auto architecture = check_adapter_keys(index, sink);
  const bool tensors_read = index.tensors_complete && !sink.structure_broken(Area::TensorInfo);
  if (!tensors_read) {
    sink.report(Code::StageNotRun, 0, 0, Field("model"),
                "fix the tensor infos first; llama.cpp reads every one before the adapter",
                "the adapter's tensor checks did not run: {}",
                index.tensors_complete ? "a tensor info is malformed"
                                       : "the tensor infos were not all read");
    return;
  }
  // The pairs by base tensor name, in the loader's order (a std::map); a later tensor that
  // names the same half takes its place, as in the loader's map.
  constexpr std::size_t kNone = SIZE_MAX;
  std::map<std::string, std::pair<std::size_t, std::size_t>> pairs;
  bool refused = false;
  for (std::size_t i = 0; i < index.tensors.size(); ++i) {
    const std::string_view name = ggml_name(index, i);
    if (name.ends_with(kLoraA)) {
      pairs.try_emplace(without_all(name, kLoraA), kNone, kNone).first->second.first = i;
    } else if (name.ends_with(kLoraB)) {
      pairs.try_emplace(without_all(name, kLoraB), kNone, kNone).first->second.second = i;
    } else if (!name.ends_with("_norm.weight")) {
      refused = true;
      report_tensor(sink, index, Code::AdapterTensorInvalid, i,
                    "name each tensor <base tensor>.lora_a or <base tensor>.lora_b (norm vectors "
                    "<...>_norm.weight are ignored)",
                    "tensor \"{}\" is neither a .lora_a nor a .lora_b: llama_adapter_lora_init "
                    "refuses the adapter (unexpected suffix)",
                    escape(name));
    }
  }
  std::optional<BaseRead> base;
  if (!sink.options().base_model.empty()) {
    base = read_base(sink.options().base_model, sink.options(), validate_base);
    if (!base->base) {
      const bool unpredicted = !base->unpredicted.empty();
      report_file(
          sink, index, unpredicted ? Code::LoaderNotPredicted : Code::AdapterBaseUnusable, "model",
          unpredicted ? "load the adapter with llama.cpp and the base model to learn its verdict"
                      : "give a base model llama.cpp loads (--base MODEL)",
          "the base model {} cannot be used: {}", escape(sink.options().base_model),
          unpredicted ? base->unpredicted : base->unusable);
      refused = true;
    } else if (architecture && *architecture != base->base->architecture) {
      const std::size_t kv = *ggml_key(index, "general.architecture");
      report_pair(sink, index, Code::AdapterBaseMismatch, kv,
                  "give the base model the adapter was trained on, or write its architecture",
                  "the adapter is for \"{}\", the base model is \"{}\": llama_adapter_lora_init "
                  "refuses it (model arch and LoRA arch mismatch)",
                  escape(*architecture), escape(base->base->architecture));
      refused = true;
    }
  }
  const BaseModel* against = base && base->base ? &*base->base : nullptr;
  for (const auto& [name, halves] : pairs) {
    const auto [a, b] = halves;
    if (a == kNone || b == kNone) {
      refused = true;
      report_tensor(sink, index, Code::AdapterTensorInvalid, a == kNone ? b : a,
                    "write both halves of every pair, <name>.lora_a and <name>.lora_b",
                    "\"{}\" has no {} tensor: llama_adapter_lora_init refuses the adapter (pair "
                    "missing one component)",
                    escape(name), a == kNone ? "lora_a" : "lora_b");
      continue;
    }
    const auto da = index.dims(a);
    const auto db = index.dims(b);
    const bool token_embd = name.ends_with("token_embd.weight");
    if (!token_embd && da[1] != db[0]) {
      refused = true;
      report_tensor(sink, index, Code::AdapterTensorInvalid, b,
                    "write lora_a as [n_in, rank] and lora_b as [rank, n_out] (ggml order)",
                    "\"{}\": lora_a is {} and lora_b {}: the rank differs (a.ne[1] != b.ne[0]); "
                    "llama_adapter_lora_init refuses the adapter (lora_a not transposed)",
                    escape(name), shape_text(index, a), shape_text(index, b));
    }
    if (against == nullptr) continue;
    const auto found = against->tensors.find(name);
    if (found == against->tensors.end()) {
      refused = true;
      report_tensor(sink, index, Code::AdapterBaseMismatch, a,
                    "give the base model the adapter was trained on",
                    "\"{}\" is not a tensor of the base model: llama_adapter_lora_init refuses "
                    "the adapter",
                    escape(name));
      continue;
    }
    const auto& ne = found->second;
    const bool fits =
        token_embd ? ne[0] == db[1] && ne[1] == da[1] : ne[0] == da[0] && ne[1] == db[1];
    if (!fits) {
      refused = true;
      report_tensor(sink, index, Code::AdapterBaseMismatch, a,
                    token_embd ? "token_embd's pair is swapped: lora_a [rank, n_vocab], lora_b "
                                 "[rank, n_embd]"
                               : "lora_a's ne[0] is the base tensor's ne[0], lora_b's ne[1] its "
                                 "ne[1]",
                    "\"{}\": lora_a {} and lora_b {} do not fit the base tensor [{}, {}]: "
                    "llama_adapter_lora_init refuses the adapter (incorrect shape)",
                    escape(name), shape_text(index, a), shape_text(index, b), ne[0], ne[1]);
    }
  }
  if (!base && !refused && !sink.has_profile_errors()) {
    report_file(sink, index, Code::AdapterBaseNotGiven, "model",
                "check it with its base model: --base MODEL",
                "the adapter was checked without its base model: whether llama.cpp loads it "
                "depends on the base's architecture and tensors");
  }
}

}  // namespace ggufcheck::detail
