#include "models.hpp"

#include <array>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "ggufcheck/format.hpp"

namespace ggufcheck::bench::data {

namespace {

std::uint32_t type_id(const char* name) {
  const auto id = find_tensor_type(name);
  if (!id) throw std::logic_error(std::string("unknown tensor type ") + name);
  return *id;
}

void add(ModelPlan& plan, std::string name, std::vector<std::uint64_t> dims, std::uint32_t type) {
  const auto nbytes = tensor_nbytes(type, std::span<const std::uint64_t>(dims));
  if (!nbytes || *nbytes == 0) throw std::logic_error("no byte size for tensor " + name);
  plan.tensors.push_back(TensorPlan{std::move(name), std::move(dims), type, *nbytes});
}

std::string block(std::uint32_t layer, const char* suffix) {
  return "blk." + std::to_string(layer) + "." + suffix;
}

// An unquantized release (BF16 or F16 matrices, F32 norms and biases, an F32 output head):
// embedding 1536, feed-forward 4096, two KV heads of 128, 32000 tokens; 12 tensors a layer.
// Layers alternate BF16 and F16 so that both types carry a large share of the bytes.
ModelPlan float_model(std::uint32_t layers) {
  ModelPlan plan{ModelKind::Float, layers, 1536, 4096, 256, 32000, {}};
  const std::uint32_t f32 = type_id("F32"), f16 = type_id("F16"), bf16 = type_id("BF16");
  const std::uint64_t e = plan.embedding, f = plan.feed_forward, kv = plan.kv_width;
  add(plan, "token_embd.weight", {e, plan.vocabulary}, bf16);
  for (std::uint32_t l = 0; l < layers; ++l) {
    const std::uint32_t matrix = l % 2 == 0 ? bf16 : f16;
    add(plan, block(l, "attn_norm.weight"), {e}, f32);
    add(plan, block(l, "attn_q.weight"), {e, e}, matrix);
    add(plan, block(l, "attn_q.bias"), {e}, f32);
    add(plan, block(l, "attn_k.weight"), {e, kv}, matrix);
    add(plan, block(l, "attn_k.bias"), {kv}, f32);
    add(plan, block(l, "attn_v.weight"), {e, kv}, matrix);
    add(plan, block(l, "attn_v.bias"), {kv}, f32);
    add(plan, block(l, "attn_output.weight"), {e, e}, matrix);
    add(plan, block(l, "ffn_norm.weight"), {e}, f32);
    add(plan, block(l, "ffn_gate.weight"), {e, f}, matrix);
    add(plan, block(l, "ffn_up.weight"), {e, f}, matrix);
    add(plan, block(l, "ffn_down.weight"), {f, e}, matrix);
  }
  add(plan, "output_norm.weight", {e}, f32);
  add(plan, "output.weight", {e, plan.vocabulary}, f32);
  return plan;
}

// A mixed quantization: embedding 2048, feed-forward 5632, four KV heads of 128, 32000 tokens.
// The seven matrices of each layer take the eight matrix types in turn (layer after layer, so
// each type gets about the same number of weights and every kernel runs on every shape); norms
// are F32, the embedding Q8_0 and the head Q6_K.
ModelPlan mixed_model(std::uint32_t layers) {
  ModelPlan plan{ModelKind::Mixed, layers, 2048, 5632, 512, 32000, {}};
  const std::array<std::uint32_t, 8> matrix_types = {
      type_id("F16"),  type_id("BF16"), type_id("Q8_0"),  type_id("Q4_K"),
      type_id("Q5_K"), type_id("Q6_K"), type_id("MXFP4"), type_id("IQ4_XS")};
  const std::uint32_t f32 = type_id("F32");
  const std::uint64_t e = plan.embedding, f = plan.feed_forward, kv = plan.kv_width;
  std::size_t next = 0;
  const auto matrix = [&] { return matrix_types[next++ % matrix_types.size()]; };
  add(plan, "token_embd.weight", {e, plan.vocabulary}, type_id("Q8_0"));
  for (std::uint32_t l = 0; l < layers; ++l) {
    add(plan, block(l, "attn_norm.weight"), {e}, f32);
    add(plan, block(l, "attn_q.weight"), {e, e}, matrix());
    add(plan, block(l, "attn_k.weight"), {e, kv}, matrix());
    add(plan, block(l, "attn_v.weight"), {e, kv}, matrix());
    add(plan, block(l, "attn_output.weight"), {e, e}, matrix());
    add(plan, block(l, "ffn_norm.weight"), {e}, f32);
    add(plan, block(l, "ffn_gate.weight"), {e, f}, matrix());
    add(plan, block(l, "ffn_up.weight"), {e, f}, matrix());
    add(plan, block(l, "ffn_down.weight"), {f, e}, matrix());
  }
  add(plan, "output_norm.weight", {e}, f32);
  add(plan, "output.weight", {e, plan.vocabulary}, type_id("Q6_K"));
  return plan;
}

ModelPlan make(ModelKind kind, std::uint32_t layers) {
  return kind == ModelKind::Float ? float_model(layers) : mixed_model(layers);
}

std::uint64_t distance(std::uint64_t a, std::uint64_t b) {
  return a > b ? a - b : b - a;
}

}  // namespace

std::uint64_t ModelPlan::data_bytes() const {
  std::uint64_t sum = 0;
  for (const TensorPlan& t : tensors) sum += t.nbytes;
  return sum;
}

ModelPlan plan_model(ModelKind kind, std::uint64_t target_bytes) {
  // Layers are added while that brings the size closer to the target (a few hundred at most).
  ModelPlan best = make(kind, 1);
  for (std::uint32_t layers = 2; layers <= 4096; ++layers) {
    ModelPlan next = make(kind, layers);
    if (distance(next.data_bytes(), target_bytes) >= distance(best.data_bytes(), target_bytes))
      break;
    best = std::move(next);
  }
  return best;
}

const char* kind_name(ModelKind kind) {
  return kind == ModelKind::Float ? "float" : "mixed";
}

std::optional<ModelKind> parse_kind(const std::string& name) {
  if (name == "float") return ModelKind::Float;
  if (name == "mixed") return ModelKind::Mixed;
  return std::nullopt;
}

std::string sidecar_path(const std::string& model_path) {
  return model_path + ".info";
}

bool write_sidecar(const std::string& model_path, const Sidecar& s) {
  std::ofstream out(sidecar_path(model_path), std::ios::trunc);
  out << "version " << s.version << "\nkind " << s.kind << "\ntarget_mib " << s.target_mib
      << "\nfile_size " << s.file_size << "\ndata_offset " << s.data_offset << "\ndata_bytes "
      << s.data_bytes << "\ntensors " << s.tensors << "\n";
  out.close();
  return static_cast<bool>(out);
}

std::optional<Sidecar> read_sidecar(const std::string& model_path) {
  std::ifstream in(sidecar_path(model_path));
  std::map<std::string, std::string> fields;
  std::string key, value;
  while (in >> key >> value) fields[key] = value;
  const auto number = [&](const char* name) -> std::optional<std::uint64_t> {
    const auto found = fields.find(name);
    if (found == fields.end() || found->second.empty() ||
        found->second.find_first_not_of("0123456789") != std::string::npos ||
        found->second.size() > 19)
      return std::nullopt;
    return std::stoull(found->second);
  };
  const auto version = number("version"), target = number("target_mib"), size = number("file_size"),
             offset = number("data_offset"), bytes = number("data_bytes"),
             tensors = number("tensors");
  if (!version || !target || !size || !offset || !bytes || !tensors || !fields.contains("kind") ||
      *version > 1000000 || *offset > *size)
    return std::nullopt;
  return Sidecar{
      static_cast<int>(*version), fields["kind"], *target, *size, *offset, *bytes, *tensors};
}

}  // namespace ggufcheck::bench::data
