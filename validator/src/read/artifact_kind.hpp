// What kind of GGUF file this is (a model, a vocabulary, a LoRA adapter, a multimodal projector,
// an importance matrix), read from its keys as llama.cpp's loaders would; and ggml's way of
// finding a key or naming a tensor (C strings), which every loader shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "index/file_index.hpp"

namespace ggufcheck::detail {

enum class ArtifactKind : std::uint8_t { Model, Vocabulary, Adapter, Mmproj, Imatrix };

struct KindOf {
  ArtifactKind kind = ArtifactKind::Model;
  // general.type when it is a string: its pair and its value as llama.cpp reads it (a C string).
  std::optional<std::size_t> type_kv;
  std::string_view declared;
  // general.type names a kind no converter writes: the file is read as a model all the same.
  bool unknown = false;
};

// What kind of file this is: general.type "adapter", "mmproj" or "imatrix"; a multimodal
// projector also by general.architecture "clip" (convert_hf_to_gguf.py's mmproj files carry no
// general.type); otherwise a model, or a vocabulary-only file when it has no tensors.
[[nodiscard]] KindOf file_kind(const FileIndex& index);
[[nodiscard]] std::string_view kind_name(ArtifactKind kind);

// The first pair with this key as ggml finds it (gguf_find_key: strcmp, so up to a NUL).
[[nodiscard]] std::optional<std::size_t> ggml_key(const FileIndex& index, std::string_view key);
// A tensor's ggml name (a C string).
[[nodiscard]] std::string_view ggml_name(const FileIndex& index, std::size_t i);
// "[a, b, c]": the dims a tensor has.
[[nodiscard]] std::string shape_text(const FileIndex& index, std::size_t i);

}  // namespace ggufcheck::detail
