#include "read/artifact_kind.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "index/keys.hpp"

namespace ggufcheck::detail {

std::optional<std::size_t> ggml_key(const FileIndex& index, std::string_view key) {
  return find_key(index, key, Profile::LlamaCpp);
}

std::string_view ggml_name(const FileIndex& index, std::size_t i) {
  return c_string_prefix(index.name(i));
}

std::string shape_text(const FileIndex& index, std::size_t i) {
  const auto dims = index.dims(i);
  const std::size_t n = std::min<std::size_t>(index.tensors[i].n_dims, dims.size());
  return fmt::format("[{}]",
                     fmt::join(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(n), ", "));
}

KindOf file_kind(const FileIndex& index) {
  KindOf out;
  // One pass over the pairs for both keys (a file may have millions).
  const auto [type, arch] =
      find_keys<2>(index, std::array<std::string_view, 2>{"general.type", "general.architecture"},
                   Profile::LlamaCpp);
  if (type && index.metadata[*type].type() == ValueType::String) {
    out.type_kv = *type;
    out.declared = c_string_prefix(index.string_value(*type));
    if (out.declared == "adapter") {
      out.kind = ArtifactKind::Adapter;
      return out;
    }
    if (out.declared == "mmproj") {
      out.kind = ArtifactKind::Mmproj;
      return out;
    }
    if (out.declared == "imatrix") {
      out.kind = ArtifactKind::Imatrix;
      return out;
    }
    out.unknown = out.declared != "model";
  }
  // llama.cpp's "clip" architecture is the dummy that marks a multimodal projector: its model
  // loader refuses it as a main model, mtmd loads it.
  if (arch && index.metadata[*arch].type() == ValueType::String &&
      c_string_prefix(index.string_value(*arch)) == "clip") {
    out.kind = ArtifactKind::Mmproj;
    out.unknown = false;
    return out;
  }
  out.kind = index.tensor_count == 0 ? ArtifactKind::Vocabulary : ArtifactKind::Model;
  return out;
}

std::string_view kind_name(ArtifactKind kind) {
  switch (kind) {
    case ArtifactKind::Model: return "model";
    case ArtifactKind::Vocabulary: return "vocabulary";
    case ArtifactKind::Adapter: return "adapter";
    case ArtifactKind::Mmproj: return "mmproj";
    case ArtifactKind::Imatrix: return "imatrix";
  }
  return "model";
}

}  // namespace ggufcheck::detail
