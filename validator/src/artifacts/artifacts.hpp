// The kinds of GGUF file that another loader of llama.cpp's reads than its model loader, each
// judged by that loader's rules (docs/model-checks.md): LoRA adapters (llama_adapter_lora_init,
// src/llama-adapter.cpp), multimodal projectors (mtmd's clip loader, tools/mtmd/clip.cpp) and
// importance matrices (common_imatrix_load, common/imatrix-loader.cpp). The model stage
// (llama_loader/model_checks.cpp) dispatches to them by the file's kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "index/file_index.hpp"
#include "index/layout.hpp"
#include "read/artifact_kind.hpp"
#include "report/sink.hpp"
#include "util/status.hpp"

namespace ggufcheck::detail {

class TokenIndexObserver;  // llama_loader/token_index.hpp

// How an adapter's base model (--base) is read: validated as a local file in the llama.cpp
// profile, its report and index given to use() while its bytes are held; or why it could not be
// read. The pipeline (validate/) passes its own, since the judges sit below it.
using ValidateBase =
    Status (*)(const std::string& path, const Options& options,
               const std::function<void(const Report& report, const FileIndex& index)>& use);

// The model stage (registered in validate/pipeline.cpp): each kind of file judged by the loader
// of llama.cpp's that reads it; a model or vocabulary by the model loader (llama_loader/).
// Runs whenever the metadata was read whole, unless Options::model_checks is off.
// tokens: the token index the reader's observer built, or null.
void check_model_stage(const FileIndex& index, const DataLayout& layout, Sink& sink,
                       ValidateBase validate_base, TokenIndexObserver* tokens);

// The judges: each reports what its loader refuses or aborts on, and GGUF7016 where ggufcheck
// cannot follow it. They run on a model whose metadata was read whole.
void check_adapter(const FileIndex& index, Sink& sink, ValidateBase validate_base);
void check_mmproj(const FileIndex& index, Sink& sink);
void check_imatrix(const FileIndex& index, Sink& sink);

// --- shared by the judges ------------------------------------------------------------------------

// A finding about pair kv / tensor i, spanning its record.
template <typename... Args>
void report_pair(Sink& sink, const FileIndex& index, Code code, std::size_t kv,
                 std::string_view hint, fmt::format_string<Args...> format, Args&&... args) {
  const std::uint64_t at = index.metadata[kv].key_offset();
  sink.report(code, at, index.pair_end(kv) - at, Field::kv(kv, index.key(kv)), hint, format,
              std::forward<Args>(args)...);
}
template <typename... Args>
void report_tensor(Sink& sink, const FileIndex& index, Code code, std::size_t i,
                   std::string_view hint, fmt::format_string<Args...> format, Args&&... args) {
  const std::uint64_t at = index.tensors[i].name_offset;
  sink.report(code, at, index.info_end(i) - at, Field::tensor(i, index.name(i)), hint, format,
              std::forward<Args>(args)...);
}
// A finding about the file as a whole (a key that is not there): at its first pair.
template <typename... Args>
void report_file(Sink& sink, const FileIndex& index, Code code, std::string_view field,
                 std::string_view hint, fmt::format_string<Args...> format, Args&&... args) {
  const std::uint64_t at = index.metadata.size() > 0 ? index.metadata[0].key_offset() : 0;
  sink.report(code, at, 0, Field(std::string(field)), hint, format, std::forward<Args>(args)...);
}

}  // namespace ggufcheck::detail
