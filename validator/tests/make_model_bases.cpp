// Writes fuzz/model_bases.inc, the starting models of fuzz/fuzz_model.cpp: the base model of
// every architecture the test kit builds (model_builder.hpp: base_specs, each loaded by the
// pinned libllama until it loads), as text the harness reads back, since a fuzz target cannot
// ask llama.cpp. Run it after the pinned llama.cpp or the builder changes:
//
//   build/dev/validator/tests/ggufcheck_make_model_bases fuzz/model_bases.inc
//
// One string literal per base (each under the 64 KiB a C++ compiler must take), lines:
//   NAME ARCH LAYERS VOCAB PRE     the spec (VOCAB gpt2 or llama; PRE "-" when none)
//   k KEY TYPE BITS                a scalar key (Value::bits, decimal)
//   k KEY str TEXT                 a string key (TEXT percent-encoded)
//   k KEY arr TYPE ITEM...         an array key (items as above)
//   t NAME TYPE DIM...             a tensor (TYPE the ggml type id); "blk.{i}." for a tensor of
//                                  the same type and shape in every layer
// The vocabulary's keys are left out: the harness puts in a vocabulary of its choice.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "llama_loader_reference.hpp"
#include "model_builder.hpp"

namespace {

namespace fs = std::filesystem;
using namespace ggufcheck;
using namespace ggufcheck::testing;

std::string percent_encoded(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= ' ' || byte >= 0x7F || c == '%' || c == '"' || c == '\\') {
      out += fmt::format("%{:02X}", byte);
    } else {
      out += c;
    }
  }
  return out.empty() ? "%" : out;  // a lone "%": the empty string
}

std::string item_text(const Value& v) {
  if (v.type == ValueType::String) return percent_encoded(v.text);
  if (v.type == ValueType::Array) throw std::runtime_error("a nested array");
  return std::to_string(v.bits);
}

bool vocabulary_key(const std::string& key) {
  static const char* const kLeftOut[] = {
      "general.architecture",           "general.name",
      "tokenizer.ggml.model",           "tokenizer.ggml.pre",
      "tokenizer.ggml.tokens",          "tokenizer.ggml.token_type",
      "tokenizer.ggml.merges",          "tokenizer.ggml.scores",
      "tokenizer.ggml.bos_token_id",    "tokenizer.ggml.eos_token_id",
      "tokenizer.ggml.unknown_token_id"};
  for (const char* k : kLeftOut) {
    if (key == k) return true;
  }
  return false;
}

// "blk.3.attn_q.weight" -> {3, "attn_q.weight"}
bool layer_tensor(const std::string& name, unsigned& layer, std::string& rest) {
  if (name.rfind("blk.", 0) != 0) return false;
  const std::size_t dot = name.find('.', 4);
  if (dot == std::string::npos || dot == 4) return false;
  layer = 0;
  for (std::size_t i = 4; i < dot; ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    layer = layer * 10 + static_cast<unsigned>(name[i] - '0');
  }
  rest = name.substr(dot + 1);
  return true;
}

std::string tensor_line(const std::string& name, const Tensor& t) {
  std::string line = fmt::format("t {} {}", name, t.type);
  for (const std::uint64_t d : t.dims) line += fmt::format(" {}", d);
  return line + "\\n";
}

std::string base_text(const BaseModel& base) {
  const BaseSpec& spec = base.spec;
  std::string out = fmt::format("{} {} {} {} {}\\n", spec.name, spec.arch, spec.layers,
                                spec.vocab == BaseSpec::Vocab::Gpt2 ? "gpt2" : "llama",
                                spec.pre.empty() ? "-" : percent_encoded(spec.pre));
  for (const KeyValue& kv : base.document.metadata) {
    if (vocabulary_key(kv.key)) continue;
    const Value& v = kv.value;
    if (v.type == ValueType::String) {
      out += fmt::format("k {} str {}\\n", kv.key, percent_encoded(v.text));
    } else if (v.type == ValueType::Array) {
      out += fmt::format("k {} arr {}", kv.key, gguf_type_name(v.element_type));
      for (const Value& item : v.items) out += " " + item_text(item);
      out += "\\n";
    } else {
      out += fmt::format("k {} {} {}\\n", kv.key, gguf_type_name(v.type), v.bits);
    }
  }
  // A tensor of every layer with one type and shape is written once, as "blk.{i}.REST".
  std::map<std::string, std::vector<const Tensor*>> by_rest;
  for (const Tensor& t : base.document.tensors) {
    unsigned layer = 0;
    std::string rest;
    if (layer_tensor(t.name, layer, rest)) by_rest[rest].push_back(&t);
  }
  const auto in_every_layer = [&](const std::string& rest) {
    const std::vector<const Tensor*>& ts = by_rest[rest];
    if (ts.size() != spec.layers) return false;
    for (unsigned i = 0; i < spec.layers; ++i) {
      const Tensor& t = *ts[i];
      if (t.name != fmt::format("blk.{}.{}", i, rest) || t.type != ts[0]->type ||
          t.dims != ts[0]->dims) {
        return false;
      }
    }
    return true;
  };
  for (const Tensor& t : base.document.tensors) {
    unsigned layer = 0;
    std::string rest;
    if (layer_tensor(t.name, layer, rest) && in_every_layer(rest)) {
      if (layer == 0) out += tensor_line("blk.{i}." + rest, t);
    } else {
      out += tensor_line(t.name, t);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT.inc\n", argv[0]);
    return 2;
  }
  const std::string library = reference_llama_library_path();
  if (!fs::exists(library)) {
    std::fprintf(stderr, "no libllama at %s\n", library.c_str());
    return 2;
  }
  LlamaLoaderReference reference(library);
  reference.start();
  const fs::path dir =
      fs::temp_directory_path() / ("ggufcheck-model-bases-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<BaseSpec> specs =
      base_specs(architecture_names(fs::path(GGUFCHECK_SOURCE_DIR) / "validator" / "src" /
                                    "llama_loader" / "generated" / "llama_arch.inc"));
  std::string out =
      "// Generated by validator/tests/make_model_bases.cpp from the test kit's base models (the\n"
      "// pinned llama.cpp loads each): do not edit. fuzz/fuzz_model.cpp reads it.\n"
      "// clang-format off\n";
  unsigned built = 0;
  for (const BaseSpec& spec : specs) {
    try {
      const BaseModel base = build_base(reference, spec, dir / (spec.name + ".gguf"));
      out += "\"" + base_text(base) + "\",\n";
      ++built;
    } catch (const std::runtime_error& e) {
      std::fprintf(stderr, "%s: no base (%s)\n", spec.name.c_str(), e.what());
    }
  }
  out += "// clang-format on\n";
  fs::remove_all(dir);
  std::ofstream file(argv[1], std::ios::binary);
  file << out;
  std::fprintf(stderr, "%u of %zu specs built\n", built, specs.size());
  return file ? 0 : 1;
}
