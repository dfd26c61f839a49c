// The two model shapes of the data-scan benchmark and the sidecar file that describes a
// generated model. Shared by the generator (which writes both) and the harness (which reads the
// sidecar to find the data section and to reuse a model written by the same generator).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ggufcheck::bench::data {

// Bumped whenever the generator's output changes, so that data.sh regenerates the models.
inline constexpr int kGeneratorVersion = 2;

enum class ModelKind { Float, Mixed };

struct TensorPlan {
  std::string name;
  std::vector<std::uint64_t> dims;  // ne[0] first
  std::uint32_t type = 0;
  std::uint64_t nbytes = 0;
};

struct ModelPlan {
  ModelKind kind = ModelKind::Float;
  std::uint32_t layers = 0;
  std::uint32_t embedding = 0, feed_forward = 0, kv_width = 0, vocabulary = 0;
  std::vector<TensorPlan> tensors;
  [[nodiscard]] std::uint64_t data_bytes() const;  // the tensors' bytes, without padding
};

// The model of `kind` whose data comes closest to `target_bytes` (whole layers; at least one).
[[nodiscard]] ModelPlan plan_model(ModelKind kind, std::uint64_t target_bytes);

[[nodiscard]] const char* kind_name(ModelKind kind);  // "float", "mixed"
[[nodiscard]] std::optional<ModelKind> parse_kind(const std::string& name);

// FILE.info beside each model: "key value" lines.
struct Sidecar {
  int version = 0;
  std::string kind;
  std::uint64_t target_mib = 0;
  std::uint64_t file_size = 0;
  std::uint64_t data_offset = 0;  // start of the data section
  std::uint64_t data_bytes = 0;   // the tensors' bytes (padding excluded)
  std::uint64_t tensors = 0;
};

[[nodiscard]] std::string sidecar_path(const std::string& model_path);
[[nodiscard]] bool write_sidecar(const std::string& model_path, const Sidecar& sidecar);
[[nodiscard]] std::optional<Sidecar> read_sidecar(const std::string& model_path);

}  // namespace ggufcheck::bench::data
