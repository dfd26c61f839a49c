// The model stage: each kind of file judged by the loader of llama.cpp's that reads it.
#include "artifacts/artifacts.hpp"
#include "llama_loader/loader.hpp"

namespace ggufcheck::detail {

void check_model_stage(const FileIndex& index, const DataLayout& /*layout*/, Sink& sink,
                       ValidateBase validate_base, TokenIndexObserver* tokens) {
  // The model is checked whenever what it needs was read: the metadata for the keys and the
  // vocabulary, every tensor info for the tensor set. Other findings (padding, layout, values)
  // never stop it; where it cannot run, the report says so (GGUF0003).
  if (!sink.options().model_checks) return;
  if (!index.metadata_complete) {
    sink.report(Code::StageNotRun, 0, 0, Field("model"),
                "fix what stops the reading first; llama.cpp reads every metadata pair before "
                "the model",
                "the model checks did not run: the metadata was not read to its end");
    return;
  }
  check_reference_load_cost(index, sink);
  // A LoRA adapter by llama_adapter_lora_init, a multimodal projector by mtmd's clip loader, an
  // importance matrix by the imatrix reader; anything else by the model loader, which never
  // looks at general.type.
  const KindOf kind = file_kind(index);
  switch (kind.kind) {
    case ArtifactKind::Adapter: check_adapter(index, sink, validate_base); return;
    case ArtifactKind::Mmproj: check_mmproj(index, sink); return;
    case ArtifactKind::Imatrix: check_imatrix(index, sink); return;
    case ArtifactKind::Model:
    case ArtifactKind::Vocabulary: break;
  }
  check_model_loader(index, kind, sink, tokens);
}

}  // namespace ggufcheck::detail
