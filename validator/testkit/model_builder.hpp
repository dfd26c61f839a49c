// Tiny models that llama.cpp's model loader accepts, built by asking it, not from ggufcheck's
// tables: for every architecture of the pinned llama.cpp (the names of its LLM_ARCH_NAMES table),
// generic hyperparameters (2 layers, n_embd 64, 4 heads, 2 KV heads, n_ff 128) and a small valid
// vocabulary (32 tokens, "llama"; the first architectures' specs are hand-picked, some with a
// "gpt2" vocabulary with merges and a known pre-tokenizer), with per-architecture overrides only
// where llama.cpp asserts a relation its refusals cannot teach (an abort is not a message to
// learn from), then a loop that loads the file in llama.cpp (llama_loader_reference.hpp) and
// reads its refusal:
//
//   "key not found in model: K"                  -> add K (its type and value guessed from its
//                                                   name; a wrong guess is the next refusal)
//   "key K has wrong type T but expected type U" -> retype K to U, same value
//   "array key not found in model: K", "key K has wrong array length; expected N, ...",
//   "K has wrong array element type T", "expected scalar, found array for key: K"
//                                                -> K as an array (one value a layer), of N
//                                                   values, of the next element type, a scalar
//   "tensor 'X' not found", "missing tensor 'X'" -> add X (F32; the shape of the same tensor in
//                                                   another layer, else [1])
//   "tensor 'X' has wrong shape; expected A, ..." -> give X the shape A
//   "... needs to define token type count"       -> tokenizer.ggml.token_type_count = 2
//   "n_expert must be > 0", "cannot have zero experts" (also as a failed GGML_ASSERT)
//                                                -> expert_count 4, expert_used_count 2
//
// until the model loads. What the loop added is recorded with the model. Used by the model
// differential test (validator/tests/test_model_differential.cpp) and its mutants
// (model_mutants.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/writer.hpp"
#include "llama_loader_reference.hpp"
#include "models.hpp"

namespace ggufcheck::testing {

// A tensor a spec writes before the loop starts.
struct SeedTensor {
  SeedTensor(std::string n, std::vector<std::uint64_t> d)
      : name(std::move(n)), dims(std::move(d)) {}
  SeedTensor(const char* n) : name(n), dims{1} {}  // NOLINT(google-explicit-constructor): [1]
  std::string name;                                // "{i}": one in every layer
  std::vector<std::uint64_t> dims;
};

struct BaseSpec {
  std::string name;  // "llama", "llama-moe", "qwen3moe", ...
  std::string arch;  // general.architecture
  std::uint32_t layers = 2;
  bool moe = false;
  bool hand_picked = false;  // one of the first specs, chosen by hand (not the generic ones)
  enum class Vocab : std::uint8_t { Gpt2, Llama };
  Vocab vocab = Vocab::Gpt2;
  std::string pre;                // tokenizer.ggml.pre (gpt2 vocabularies)
  std::vector<KeyValue> hparams;  // the starting keys, "<arch>." left out of their names
  // Tensors llama.cpp does not require that the model has all the same, or whose first guess
  // ([1]) would make llama.cpp abort rather than refuse: written before the first load (a [1]
  // shape is then learnt from the refusal).
  std::vector<SeedTensor> optional_tensors;
};

// The architecture names of the pinned llama.cpp, in the order of its table, read from
// ggufcheck's generated table (the GGUFCHECK_LLAMA_ARCH rows of
// validator/src/llama_loader/generated/llama_arch.inc, written from llama.cpp's LLM_ARCH_NAMES);
// "(unknown)", LLM_ARCH_UNKNOWN's name, is left out. Empty when the file cannot be read.
[[nodiscard]] std::vector<std::string> architecture_names(const std::filesystem::path& table);

// A spec for each architecture: the hand-picked ones for llama (dense and MoE), qwen2, qwen3,
// qwen3moe, gemma2, gemma3, phi3, gpt-oss, mistral3, deepseek2, command-r, cohere2 and glm4; for
// every other name the generic hyperparameters with the architecture's overrides.
[[nodiscard]] std::vector<BaseSpec> base_specs(const std::vector<std::string>& architectures);

// Whether ggufcheck's loader interpreter models the architecture's tensor set
// (detail::modelled_architecture): where it does not, its verdict rests on the keys and the
// vocabulary alone (GGUF7014), and the differential test counts its disagreements apart.
[[nodiscard]] bool ggufcheck_models_tensors_of(std::string_view arch);

// The generic spec of one architecture (name = arch), overrides applied.
[[nodiscard]] BaseSpec generic_spec(const std::string& arch);

// The document a spec starts from: general.architecture, general.name, the hyperparameters
// under "<arch>.", the vocabulary; no tensor yet.
[[nodiscard]] Document starting_document(const BaseSpec& spec);

struct BaseModel {
  BaseSpec spec;
  Document document;                 // tensors without data: model_bytes() fills them
  std::vector<std::string> learned;  // what the loop changed, in order ("key K u32", ...)
  unsigned loads = 0;                // how many loads it took
  std::filesystem::path file;        // where the final bytes were written

  [[nodiscard]] std::string describe() const;  // name, arch, tensor and key counts
};

// The file of a document: every F32 and F16 tensor without data gets small nonzero values
// (deterministic, from the tensor's index), written by the project's writer.
[[nodiscard]] ByteVector model_bytes(const Document& document);

// Builds the spec's base model by the loop above; each round's file is `file`, which holds the
// final model at the end. Throws std::runtime_error with the last refusal when the loop stops
// without a model (a refusal it cannot read, a crash, a repeated change, too many rounds).
[[nodiscard]] BaseModel build_base(LlamaLoaderReference& reference, const BaseSpec& spec,
                                   const std::filesystem::path& file);

// --- reading and changing documents (shared with the mutants) ----------------------------------

// The tensor of this name, or nullptr (find_pair, models.hpp, finds a key).
[[nodiscard]] Tensor* find_tensor(Document& document, std::string_view name);

// "[64, 32]"
[[nodiscard]] std::string shape_text(const std::vector<std::uint64_t>& dims);

// gguf_type_name's names ("u32", "f32", "str", "arr", ...) and back (nullopt: not one).
[[nodiscard]] const char* gguf_type_name(ValueType type);
[[nodiscard]] std::optional<ValueType> gguf_type_from_name(std::string_view name);

// The scalar value as `type`, the same number (integers <-> floats by value, bool 0/1, a string
// of its decimal digits); nullopt when value is not a scalar or type not scalar.
[[nodiscard]] std::optional<Value> convert_scalar(const Value& value, ValueType type);

// The number a scalar integer or float value holds (floats truncated), nullopt otherwise.
[[nodiscard]] std::optional<std::int64_t> scalar_number(const Value& value);

}  // namespace ggufcheck::testing
