// The kinds of GGUF file that another loader of llama.cpp's reads than its model loader, each
// judged by that loader's rules (docs/model-checks.md): LoRA adapters (llama_adapter_lora_init,
// src/llama-adapter.cpp), multimodal projectors (mtmd's clip loader, tools/mtmd/clip.cpp) and
// importance matrices (common_imatrix_load, common/imatrix-loader.cpp). The model stage
// (loader/model_checks.cpp) dispatches to them by the file's kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "model/model.hpp"
#include "report/sink.hpp"

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
[[nodiscard]] KindOf file_kind(const Model& model);
[[nodiscard]] std::string_view kind_name(ArtifactKind kind);

// The judges: each reports what its loader refuses or aborts on, and GGUF7016 where ggufcheck
// cannot follow it. They run on a model whose metadata was read whole.
void check_adapter(const Model& model, Sink& sink);
void check_mmproj(const Model& model, Sink& sink);
void check_imatrix(const Model& model, Sink& sink);

// --- shared by the judges ------------------------------------------------------------------------

// The first pair with this key as ggml finds it (gguf_find_key: strcmp, so up to a NUL).
[[nodiscard]] std::optional<std::size_t> ggml_key(const Model& model, std::string_view key);
// A finding about pair kv / tensor i, spanning its record.
template <typename... Args>
void report_pair(Sink& sink, const Model& model, Code code, std::size_t kv, std::string_view hint,
                 fmt::format_string<Args...> format, Args&&... args) {
  const std::uint64_t at = model.metadata[kv].key_offset();
  sink.report(code, at, model.pair_end(kv) - at, Field::kv(kv, model.key(kv)), hint, format,
              std::forward<Args>(args)...);
}
template <typename... Args>
void report_tensor(Sink& sink, const Model& model, Code code, std::size_t i, std::string_view hint,
                   fmt::format_string<Args...> format, Args&&... args) {
  const std::uint64_t at = model.tensors[i].name_offset;
  sink.report(code, at, model.info_end(i) - at, Field::tensor(i, model.name(i)), hint, format,
              std::forward<Args>(args)...);
}
// A finding about the file as a whole (a key that is not there): at its first pair.
template <typename... Args>
void report_file(Sink& sink, const Model& model, Code code, std::string_view field,
                 std::string_view hint, fmt::format_string<Args...> format, Args&&... args) {
  const std::uint64_t at = model.metadata.size() > 0 ? model.metadata[0].key_offset() : 0;
  sink.report(code, at, 0, Field(std::string(field)), hint, format, std::forward<Args>(args)...);
}
// A tensor's ggml name (a C string) and its ne[0], ne[1] (1 past n_dims).
[[nodiscard]] std::string_view ggml_name(const Model& model, std::size_t i);
// "[a, b, c]": the dims a tensor has.
[[nodiscard]] std::string shape_text(const Model& model, std::size_t i);

}  // namespace ggufcheck::detail
