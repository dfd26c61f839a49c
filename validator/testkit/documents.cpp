#include "documents.hpp"

#include <utility>

namespace ggufcheck::testing {

Document minimal_document() {
  Document doc;
  doc.metadata.push_back({"general.architecture", Value::string("llama"), {}});
  return doc;
}

KeyValue pair(std::string key, Value value, std::optional<std::uint32_t> raw_type) {
  KeyValue kv;
  kv.key = std::move(key);
  kv.value = std::move(value);
  kv.raw_type = raw_type;
  return kv;
}

Tensor tensor(std::string name, std::vector<std::uint64_t> dims, std::uint32_t type,
              std::optional<std::uint64_t> offset) {
  Tensor t;
  t.name = std::move(name);
  t.dims = std::move(dims);
  t.type = type;
  t.offset = offset;
  return t;
}

Tensor with_data(Tensor t, std::size_t bytes) {
  t.data = std::vector<std::uint8_t>(bytes, 0);
  return t;
}

Document document(std::vector<KeyValue> pairs, std::vector<Tensor> tensors) {
  Document doc = minimal_document();
  for (KeyValue& kv : pairs) doc.metadata.push_back(std::move(kv));
  doc.tensors = std::move(tensors);
  return doc;
}

KeyValue quantization_version() {
  return pair("general.quantization_version", Value::u32(2));
}

Value nested_array(std::size_t levels) {
  Value value = Value::array(ValueType::Uint8, {});
  for (std::size_t i = 1; i < levels; ++i) value = Value::array(ValueType::Array, {value});
  return value;
}

Document model_document() {
  Document doc = minimal_document();
  doc.metadata.push_back({"general.name", Value::string("test model"), {}});
  doc.metadata.push_back({"general.quantization_version", Value::u32(2), {}});
  doc.metadata.push_back({"llama.context_length", Value::u32(4096), {}});
  doc.metadata.push_back({"tokenizer.ggml.model", Value::string("llama"), {}});
  doc.metadata.push_back(
      {"tokenizer.ggml.tokens",
       Value::array(ValueType::String, {Value::string("<unk>"), Value::string("<s>"),
                                        Value::string("</s>"), Value::string("a")}),
       {}});
  doc.metadata.push_back({"tokenizer.ggml.scores",
                          Value::array(ValueType::Float32, {Value::f32(0), Value::f32(0),
                                                            Value::f32(0), Value::f32(-1)}),
                          {}});
  doc.metadata.push_back(
      {"tokenizer.ggml.token_type",
       Value::array(ValueType::Int32, {Value::i32(2), Value::i32(3), Value::i32(3), Value::i32(1)}),
       {}});
  doc.metadata.push_back({"tokenizer.ggml.bos_token_id", Value::u32(1), {}});
  // The hyperparameters and the tensors llama.cpp's llama loader asks for (one block): the
  // model loads.
  doc.metadata.push_back({"llama.embedding_length", Value::u32(64), {}});
  doc.metadata.push_back({"llama.block_count", Value::u32(1), {}});
  doc.metadata.push_back({"llama.feed_forward_length", Value::u32(128), {}});
  doc.metadata.push_back({"llama.attention.head_count", Value::u32(4), {}});
  doc.metadata.push_back({"llama.attention.layer_norm_rms_epsilon", Value::f32(1e-5f), {}});
  doc.tensors.push_back({"token_embd.weight", {64, 4}, 1, {}, {}});     // F16
  doc.tensors.push_back({"blk.0.attn_q.weight", {64, 64}, 8, {}, {}});  // Q8_0
  doc.tensors.push_back({"output_norm.weight", {64}, 0, {}, {}});       // F32
  for (const char* name :
       {"blk.0.attn_k.weight", "blk.0.attn_v.weight", "blk.0.attn_output.weight"}) {
    doc.tensors.push_back({name, {64, 64}, 8, {}, {}});  // Q8_0
  }
  doc.tensors.push_back({"blk.0.attn_norm.weight", {64}, 0, {}, {}});
  doc.tensors.push_back({"blk.0.ffn_norm.weight", {64}, 0, {}, {}});
  doc.tensors.push_back({"blk.0.ffn_gate.weight", {64, 128}, 8, {}, {}});
  doc.tensors.push_back({"blk.0.ffn_up.weight", {64, 128}, 8, {}, {}});
  doc.tensors.push_back({"blk.0.ffn_down.weight", {128, 64}, 8, {}, {}});
  return doc;
}

Document adapter_document(const Document& base, std::uint64_t rank) {
  Document doc;
  for (const KeyValue& kv : base.metadata) {
    if (kv.key == "general.architecture") doc.metadata.push_back(kv);
  }
  doc.metadata.push_back({"general.type", Value::string("adapter"), {}});
  doc.metadata.push_back({"adapter.type", Value::string("lora"), {}});
  doc.metadata.push_back({"adapter.lora.alpha", Value::f32(8.0f), {}});
  for (const Tensor& t : base.tensors) {
    if (t.dims.size() != 2) continue;
    if (t.name == "token_embd.weight") {
      doc.tensors.push_back({t.name + ".lora_a", {rank, t.dims[1]}, 0, {}, {}});
      doc.tensors.push_back({t.name + ".lora_b", {rank, t.dims[0]}, 0, {}, {}});
    } else {
      doc.tensors.push_back({t.name + ".lora_a", {t.dims[0], rank}, 0, {}, {}});
      doc.tensors.push_back({t.name + ".lora_b", {rank, t.dims[1]}, 0, {}, {}});
    }
  }
  return doc;
}

void add_vision_image_keys(Document& doc) {
  doc.metadata.push_back({"clip.vision.image_size", Value::u32(224), {}});
  doc.metadata.push_back({"clip.vision.patch_size", Value::u32(14), {}});
  for (const char* key : {"clip.vision.image_mean", "clip.vision.image_std"}) {
    doc.metadata.push_back(
        {key,
         Value::array(ValueType::Float32, {Value::f32(0.5f), Value::f32(0.5f), Value::f32(0.5f)}),
         {}});
  }
}

Document mmproj_document(std::string projector) {
  Document doc;
  doc.metadata.push_back({"general.architecture", Value::string("clip"), {}});
  doc.metadata.push_back({"general.type", Value::string("mmproj"), {}});
  doc.metadata.push_back({"clip.has_vision_encoder", Value::boolean(true), {}});
  doc.metadata.push_back({"clip.projector_type", Value::string(std::move(projector)), {}});
  for (const auto& [key, value] :
       {std::pair{"embedding_length", 64U}, std::pair{"attention.head_count", 4U},
        std::pair{"feed_forward_length", 128U}, std::pair{"block_count", 2U},
        std::pair{"projection_dim", 64U}}) {
    doc.metadata.push_back({std::string("clip.vision.") + key, Value::u32(value), {}});
  }
  doc.metadata.push_back({"clip.vision.attention.layer_norm_epsilon", Value::f32(1e-6f), {}});
  add_vision_image_keys(doc);
  doc.tensors.push_back({"v.patch_embd.weight", {14, 14, 3, 64}, 0, {}, {}});
  return doc;
}

Document imatrix_document() {
  Document doc;
  doc.metadata.push_back({"general.type", Value::string("imatrix"), {}});
  doc.metadata.push_back(
      {"imatrix.datasets", Value::array(ValueType::String, {Value::string("wiki.train.raw")}), {}});
  doc.metadata.push_back({"imatrix.chunk_count", Value::u32(10), {}});
  doc.metadata.push_back({"imatrix.chunk_size", Value::u32(512), {}});
  for (const Tensor& t : model_document().tensors) {
    if (t.dims.size() != 2 || t.name == "token_embd.weight") continue;
    doc.tensors.push_back({t.name + ".in_sum2", {t.dims[0], 1}, 0, {}, {}});
    doc.tensors.push_back({t.name + ".counts", {1, 1}, 0, {}, {}});
  }
  return doc;
}

std::vector<Document> model_shards(std::size_t n) {
  return shards_of(model_document(), n);
}

std::vector<Document> shards_of(const Document& model, std::size_t n) {
  std::vector<Document> shards(n);
  shards[0].metadata = model.metadata;
  for (std::size_t k = 0; k < n; ++k) {
    shards[k].metadata.push_back({"split.no", Value::u16(static_cast<std::uint16_t>(k)), {}});
    shards[k].metadata.push_back({"split.count", Value::u16(static_cast<std::uint16_t>(n)), {}});
    shards[k].metadata.push_back(
        {"split.tensors.count", Value::i32(static_cast<std::int32_t>(model.tensors.size())), {}});
  }
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    shards[i * n / model.tensors.size()].tensors.push_back(model.tensors[i]);
  }
  return shards;
}

ByteVector prefix(const ByteVector& bytes, std::uint64_t n) {
  return ByteVector(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
}

void append_u32(ByteVector& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

void append_u64(ByteVector& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

void put_uint(ByteVector& bytes, std::uint64_t offset, std::uint64_t value, std::uint32_t width,
              Endian endian) {
  for (std::uint32_t i = 0; i < width; ++i) {
    const std::uint32_t shift = 8 * (endian == Endian::Little ? i : width - 1 - i);
    bytes.at(static_cast<std::size_t>(offset + i)) = static_cast<std::uint8_t>(value >> shift);
  }
}

}  // namespace ggufcheck::testing
