#include <string>
#include <vector>

#include "index/keys.hpp"
#include "llama_loader/interpreter.hpp"
#include "llama_loader/loader.hpp"
#include "read/artifact_kind.hpp"

namespace ggufcheck::detail {
namespace {

// general.architecture as llama.cpp reads it (a C string), when it is a string.
std::optional<std::pair<std::size_t, std::string_view>> architecture(const FileIndex& index) {
  const auto kv = find_key(index, "general.architecture", Profile::LlamaCpp);
  if (!kv || index.metadata[*kv].type() != ValueType::String) return std::nullopt;
  return std::pair{*kv, c_string_prefix(index.string_value(*kv))};
}

// split.count above 1: the file is one shard of a set, whose tensors are checked together.
bool is_shard(const FileIndex& index) {
  const auto kv = find_key(index, "split.count", Profile::LlamaCpp);
  return kv && index.metadata[*kv].type() != ValueType::Array &&
         index.metadata[*kv].type() != ValueType::String && index.metadata[*kv].payload() > 1;
}

void report(const LoaderFinding& f, Sink& sink) {
  sink.report(f.code, f.offset, f.length, Field(f.field), f.hint, "{}", f.message);
}

void report_verdict(const LoaderVerdict& verdict, const FileIndex& first, std::string_view arch,
                    std::span<Sink* const> sinks, bool tensors_expected) {
  for (const LoaderFinding& f : verdict.findings) {
    report(f, *sinks[f.shard < sinks.size() ? f.shard : 0]);
  }
  if (!verdict.findings.empty()) return;
  const std::uint64_t at = first.metadata.size() > 0 ? first.metadata[0].key_offset() : 0;
  if (verdict.lost_at) {
    // Fail closed: what llama.cpp does past that line is not known, so no pass is claimed.
    sinks[0]->report(Code::LoaderNotPredicted, at, 0, Field("model"),
                     "load the file with llama.cpp to learn its verdict; please report the file "
                     "so that ggufcheck can follow this code",
                     "cannot predict llama.cpp's loader: ggufcheck could not follow llama.cpp's "
                     "{} loader past {}",
                     arch, *verdict.lost_at);
  } else if (tensors_expected && !verdict.tensors_modelled) {
    // Every architecture of the pinned llama.cpp has its tensor loading in the table: were one
    // not followed, that is no pass either (GGUF7014, a note, is no longer given).
    sinks[0]->report(Code::LoaderNotPredicted, at, 0, Field("model"),
                     "load the file with llama.cpp to learn its verdict",
                     "cannot predict llama.cpp's loader: ggufcheck did not follow the tensor "
                     "loading of architecture \"{}\"",
                     arch);
  }
}

// ggml's reader (gguf_init_from_file) compares every key with every other one and every tensor
// name with every other one to find duplicates: its time grows with the square of the counts.
// Measured by bench/reference_load_cost.py (on this project's 2-core CI machine, libggml-base.so
// of node-llama-cpp 3.22.1): 40,000 tensors 4.2 s, 60,000 9.9 s; 40,000 keys 3.4 s, 60,000
// 8.4 s. The estimate is seconds = 2.6e-9 * tensors^2 + 2.1e-9 * keys^2; a file past
// kSlowLoadSeconds gets GGUF7015.
constexpr double kSecondsPerTensorPair = 2.6e-9;
constexpr double kSecondsPerKeyPair = 2.1e-9;
constexpr double kSlowLoadSeconds = 2.0;

}  // namespace

void check_reference_load_cost(const FileIndex& index, Sink& sink) {
  const auto tensors = static_cast<double>(index.tensors.size());
  const auto keys = static_cast<double>(index.metadata.size());
  const double seconds =
      kSecondsPerTensorPair * tensors * tensors + kSecondsPerKeyPair * keys * keys;
  if (seconds < kSlowLoadSeconds) return;
  sink.report(Code::SlowReferenceLoad, 0, 24, Field("header"),
              "ggml's reader compares every pair of keys and of tensor names; keep the counts to "
              "what the model needs",
              "{} keys and {} tensors: llama.cpp's reader takes about {:.0f} s to open the file "
              "(it checks for duplicates pair by pair)",
              index.metadata.size(), index.tensors.size(), seconds);
}

void check_model_loader(const FileIndex& index, const KindOf& kind, Sink& sink,
                        TokenIndexObserver* tokens) {
  if (kind.unknown) {
    const std::size_t kv = *kind.type_kv;
    sink.report(Code::UnknownFileKind, index.metadata[kv].key_offset(),
                index.pair_end(kv) - index.metadata[kv].key_offset(), Field::kv(kv, index.key(kv)),
                "write \"model\" for a model (or leave the key out); \"adapter\", \"mmproj\" and "
                "\"imatrix\" name the other kinds",
                "general.type is \"{}\", a kind no converter writes: llama.cpp reads the file as a "
                "model, and so does ggufcheck",
                escape(kind.declared));
  }
  // Every file llama.cpp is given is read as a model: one with neither tensors nor a vocabulary
  // too (vocab_only: llama.cpp refuses it, "key not found in model: tokenizer.ggml.model").
  check_vocabulary(index, sink, tokens);
  const auto arch = architecture(index);
  if (!arch) {
    // llama.cpp's loader reads the architecture first and refuses a file without one (the
    // container profiles' GGUF5006 / GGUF5008 say so too; llama.cpp's reader only warns).
    const auto at = find_key(index, "general.architecture", Profile::LlamaCpp);
    const std::uint64_t offset =
        at ? index.metadata[*at].key_offset()
           : (index.metadata.size() > 0 ? index.metadata[0].key_offset() : 0);
    const std::uint64_t length = at ? index.pair_end(*at) - offset : 0;
    sink.report(Code::UnknownArchitecture, offset, length,
                at ? Field::kv(*at, index.key(*at)) : Field("metadata"),
                "write general.architecture, a string such as \"llama\"",
                "{}: llama.cpp's model loader cannot tell the architecture and refuses the file",
                at ? "general.architecture is not a string" : "no general.architecture");
    return;
  }
  const auto [kv, name] = *arch;
  if (!known_architecture(name)) {
    sink.report(Code::UnknownArchitecture, index.metadata[kv].key_offset(),
                index.pair_end(kv) - index.metadata[kv].key_offset(), Field::kv(kv, index.key(kv)),
                "check the spelling, or whether the architecture is newer than the llama.cpp "
                "ggufcheck's tables come from",
                "architecture \"{}\" is not one llama.cpp knows ({})", escape(name),
                llama_cpp_tables_version());
    return;
  }
  // A vocabulary-only file (no tensors, as llama.cpp's ggml-vocab-*.gguf) is loaded with
  // vocab_only: its hyperparameters and tensors are not read. The model is created all the
  // same, which llama.cpp refuses for a name it has no model for (run_loader says so otherwise).
  if (index.tensor_count == 0) {
    if (!modelled_architecture(name)) {
      sink.report(Code::UnknownArchitecture, index.metadata[kv].key_offset(),
                  index.pair_end(kv) - index.metadata[kv].key_offset(),
                  Field::kv(kv, index.key(kv)),
                  "convert the model to an architecture llama.cpp implements",
                  "llama.cpp knows the name of architecture \"{}\" but has no model for it: it "
                  "refuses the file (\"unsupported model architecture\")",
                  escape(name));
    }
    return;
  }
  if (!index.tensors_complete || sink.structure_broken(Area::TensorInfo)) {
    sink.report(Code::StageNotRun, 0, 0, Field("model"),
                "fix the tensor infos first; llama.cpp reads every one before the model",
                "the tensor-set checks did not run: {}",
                index.tensors_complete ? "a tensor info is malformed"
                                       : "the tensor infos were not all read");
    return;
  }
  const bool shard = is_shard(index);
  std::vector<TensorRef> tensors;
  if (!shard) {
    tensors.reserve(index.tensors.size());
    for (std::size_t i = 0; i < index.tensors.size(); ++i) tensors.push_back({&index, 0, i});
  }
  const LoaderVerdict verdict = run_loader(index, name, tensors, !shard);
  Sink* const sinks[] = {&sink};
  report_verdict(verdict, index, name, sinks, !shard);
}

void check_tensor_set(const FileIndex& first, std::span<const TensorRef> tensors,
                      std::span<Sink* const> sinks) {
  if (sinks.empty() || !sinks[0]->options().model_checks) return;
  // The other kinds' judges read the first shard alone (check_model).
  if (const ArtifactKind kind = file_kind(first).kind;
      kind != ArtifactKind::Model && kind != ArtifactKind::Vocabulary) {
    return;
  }
  const auto arch = architecture(first);
  if (!arch || !known_architecture(arch->second)) return;
  LoaderVerdict verdict = run_loader(first, arch->second, tensors, true);
  // The first shard's own check reported its key findings already (a refusal before the
  // tensors among them: then there is no tensor verdict to give).
  const bool refused = !verdict.findings.empty();
  std::erase_if(verdict.findings, [](const LoaderFinding& f) {
    return f.code != Code::MissingTensor && f.code != Code::TensorWrongShape &&
           f.code != Code::UnexpectedTensor;
  });
  if (refused && verdict.findings.empty()) return;
  report_verdict(verdict, first, arch->second, sinks, true);
}

}  // namespace ggufcheck::detail
