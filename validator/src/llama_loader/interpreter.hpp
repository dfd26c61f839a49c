// Runs llama.cpp's model loading code, as the generated table holds it
// (generated/llama_arch.inc), against one file's keys and tensors: what llama_model_load_from_file
// would read, refuse, or abort on, without loading anything.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/diagnostic.hpp"
#include "llama_loader/loader.hpp"

namespace ggufcheck::detail {

// A reason llama.cpp would not load the file, where it is, and what to say.
struct LoaderFinding {
  Code code{};
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::size_t shard = 0;
  std::string field;
  std::string message;
  std::string hint;
};

struct LoaderVerdict {
  std::vector<LoaderFinding> findings;
  bool known_architecture = false;
  bool tensors_modelled = false;  // the architecture's tensor set was followed to its end
  // Where the code could not be followed (a value it computes from something ggufcheck does not
  // model): the source line. Nothing after it is claimed.
  std::optional<std::string> lost_at;
};

// The architecture names the pinned llama.cpp knows.
[[nodiscard]] bool known_architecture(std::string_view name);
[[nodiscard]] std::vector<std::string_view> architecture_names();
// Whether ggufcheck models the architecture's tensor set (every architecture with a model class
// in the pinned llama.cpp: the others are refused as llama.cpp refuses them).
[[nodiscard]] bool modelled_architecture(std::string_view name);
// The llama.cpp version the tables come from.
[[nodiscard]] std::string_view llama_cpp_tables_version();

// Runs the hyperparameter reads of `first` (the file, or a split set's first shard) and, with
// `tensors`, the tensor set; stops at the first refusal of the hyperparameters, as llama.cpp does,
// but reports every tensor fault.
[[nodiscard]] LoaderVerdict run_loader(const FileIndex& first, std::string_view architecture,
                                       std::span<const TensorRef> tensors, bool check_tensors);

// For the interpreter's tests: runs the hyperparameter reads of `first`, then `tensor_code` (an
// S-expression of the table's forms, validator/tools/llama_tables/cxx.py) in place of the
// architecture's load_arch_tensors, against `tensors`.
[[nodiscard]] LoaderVerdict run_loader_with_tensor_code(const FileIndex& first,
                                                        std::string_view architecture,
                                                        std::span<const TensorRef> tensors,
                                                        std::string_view tensor_code);

}  // namespace ggufcheck::detail
