// The conformance cases as data: one Case per file, with the verdict each profile expects
// (conformance/README.md). generate.cpp writes the files, their canonical outputs and
// manifest.json from this list. The verdicts are declared from gguf-format.md (the spec's rules
// and what the reference reader does), never copied from what ggufcheck prints: the runner
// compares the two.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace ggufcheck::conformance {

using ByteVector = std::vector<std::uint8_t>;

enum class Verdict : std::uint8_t { Accept, Reject, Either };

// A data case's third verdict: what llama.cpp's tensor data check (ggml_validate_row_data on each
// tensor's bytes, as --check-tensors runs it) makes of the file, declared from what that check
// inspects per type (docs/llama-cpp-divergences.md, "Tensor data").
struct DataExpectation {
  Verdict verdict = Verdict::Accept;  // Accept or Reject
  std::string tensor;                 // for a reject: the first tensor (in file order) that fails
  std::string rule;                   // what the check finds in the data, one sentence
  std::string error_class;            // for a reject: non_finite or refused_type
};

// A model case's fourth verdict: what llama.cpp's model loader (llama_model_load_from_file with
// no_alloc, vocab_only for a file without tensors) makes of the file, or of the split set whose
// first shard it is, declared from the loader's source (src/llama-model-loader.cpp,
// src/llama-model.cpp, src/models/, src/llama-vocab.cpp of the pinned llama.cpp).
struct ModelExpectation {
  Verdict verdict = Verdict::Accept;  // Accept or Reject (an abort of the loader is a Reject)
  std::string rule;                   // what the loader does with the file, one sentence
  std::string error_class;            // for a reject: is_model_error_class's vocabulary
};

struct Case {
  std::string id;    // y_/n_/i_<area>_<what>; the file is cases/<id>.gguf. Never reused.
  std::string rule;  // the spec rule or reader behaviour the case tests, one sentence
  Verdict spec = Verdict::Accept;
  Verdict llama_cpp = Verdict::Accept;
  std::string error_class;        // for a case some profile rejects: conformance.md's vocabulary
  bool recommended = false;       // level: "recommended" instead of "required"
  std::vector<std::string> tags;  // "hostile", "big"
  std::function<ByteVector()> build;
  std::optional<DataExpectation> data;    // data cases (area "data") only
  std::optional<ModelExpectation> model;  // model and split cases (areas "model", "split") only
  // A split case (area "split"): the shards of the set, numbered from 1, written as
  // <id>-<number>-of-<split_count>.gguf (llama.cpp's llama_split_path, "%s-%05d-of-%05d.gguf");
  // build() is shard 1, the case's file. A shard left empty here is not written (a missing
  // shard). split_count is 0 for every other case.
  std::uint32_t split_count = 0;
  std::function<std::vector<ByteVector>()> build_shards;  // shards 2..split_count

  // The case's file name under cases/: <id>.gguf, or <id>-00001-of-<N>.gguf for a split case.
  [[nodiscard]] std::string file_name() const;
  // The file name of shard `number` (from 1) of a split case.
  [[nodiscard]] std::string shard_name(std::uint32_t number) const;

  [[nodiscard]] std::string area() const;
};

// A real file fetched by conformance/setup (not committed): the pinned bundle's bytes and the
// SHA-256 of `ggufcheck dump --level 3 --profile llama.cpp` of them.
struct RealCase {
  std::string id;
  std::string file;  // under .deps/conformance/llama.cpp/models/
  std::string sha256;
  std::uint64_t size = 0;
  std::string canonical_sha256;
  std::string gguf_version;
  Verdict spec = Verdict::Accept;
  Verdict llama_cpp = Verdict::Accept;
  std::string error_class;
  std::string rule;
};

// Every generated case, sorted by id; ids are unique, and the prefix matches the verdicts.
[[nodiscard]] std::vector<Case> cases();
[[nodiscard]] std::vector<RealCase> real_cases();

// A case whose file is too big to commit (over 2 GiB, nearly all zeros). The manifest lists its
// non-zero extents ("sparse"), and conformance/run writes it as a sparse file under
// {deps}/generated/, so it costs a few KiB of disk and no download.
struct SparseCase {
  std::string id;
  std::string rule;
  Verdict spec = Verdict::Accept;
  Verdict llama_cpp = Verdict::Accept;
  std::string error_class;
  std::vector<std::string> tags;
  std::uint64_t size = 0;  // the file's size; bytes outside the extents are zero
  struct Extent {
    std::uint64_t offset = 0;
    ByteVector bytes;
  };
  std::vector<Extent> extents;  // ascending, not overlapping, within size
};
[[nodiscard]] std::vector<SparseCase> sparse_cases();

// The vocabulary of conformance.md ("Cases").
[[nodiscard]] bool is_error_class(const std::string& name);
// The data verdict's vocabulary: non_finite (a NaN or infinite element or scale, mxfp4's NaN
// exponent byte), refused_type (q8_1, which the check refuses whatever its bytes).
[[nodiscard]] bool is_data_error_class(const std::string& name);
// The model verdict's vocabulary: unknown_arch, missing_key, key_type, bad_value, bad_vocab,
// dup_token, missing_tensor, tensor_shape, extra_tensor, split_set.
[[nodiscard]] bool is_model_error_class(const std::string& name);

}  // namespace ggufcheck::conformance
