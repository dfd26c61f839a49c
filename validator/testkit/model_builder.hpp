// Tiny models that llama.cpp's model loader accepts, built by asking it, not from ggufcheck's
// tables: for each architecture a hand-picked set of hyperparameters (2-3 layers, n_embd 64,
// 4 heads) and a small valid vocabulary (32 tokens, "gpt2" with merges and a known
// pre-tokenizer, or "llama"), then a loop that loads the file in llama.cpp
// (llama_loader_reference.hpp) and reads its refusal:
//
//   "key not found in model: K"                  -> add K (its type and value guessed from its
//                                                   name; a wrong guess is the next refusal)
//   "key K has wrong type T but expected type U" -> retype K to U, same value
//   "tensor 'X' not found", "missing tensor 'X'" -> add X (F32; the shape of the same tensor in
//                                                   another layer, else [1])
//   "tensor 'X' has wrong shape; expected A, ..." -> give X the shape A
//
// until the model loads. What the loop added is recorded with the model. Used by the model
// differential test (validator/tests/test_model_differential.cpp) and its mutants
// (model_mutants.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/writer.hpp"
#include "llama_loader_reference.hpp"
#include "models.hpp"

namespace ggufcheck::testing {

struct BaseSpec {
  std::string name;  // "llama", "llama-moe", "qwen3moe", ...
  std::string arch;  // general.architecture
  std::uint32_t layers = 2;
  bool moe = false;
  enum class Vocab : std::uint8_t { Gpt2, Llama };
  Vocab vocab = Vocab::Gpt2;
  std::string pre;                // tokenizer.ggml.pre (gpt2 vocabularies)
  std::vector<KeyValue> hparams;  // the hand-picked keys, "<arch>." left out of their names
  // Tensors llama.cpp does not require that the model has all the same ("{i}": every layer),
  // written first with shape [1]: the loop learns their shape from the refusal.
  std::vector<std::string> optional_tensors;
};

// The architectures the differential test builds: llama (dense and MoE), qwen2, qwen3,
// qwen3moe, gemma2, gemma3, phi3, gpt-oss, mistral3, deepseek2, command-r, cohere2, glm4.
[[nodiscard]] std::vector<BaseSpec> base_specs();

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
