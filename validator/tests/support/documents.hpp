// Small document builders shared by the unit tests and the corpus generator
// (corpus/generator): no test framework, no paths, only the writer's types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ggufcheck/format.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

// The smallest file the strict profile passes: a v3 header and general.architecture.
inline Document minimal_document() {
  Document doc;
  doc.metadata.push_back({"general.architecture", Value::string("llama"), {}});
  return doc;
}

// A metadata pair; raw_type is written instead of the value's type (payload unchanged).
inline KeyValue pair(std::string key, Value value,
                     std::optional<std::uint32_t> raw_type = std::nullopt) {
  KeyValue kv;
  kv.key = std::move(key);
  kv.value = std::move(value);
  kv.raw_type = raw_type;
  return kv;
}

// A tensor info of a ggml type (F32 by default) at the default offset unless one is given.
inline Tensor tensor(std::string name, std::vector<std::uint64_t> dims, std::uint32_t type = 0,
                     std::optional<std::uint64_t> offset = std::nullopt) {
  Tensor t;
  t.name = std::move(name);
  t.dims = std::move(dims);
  t.type = type;
  t.offset = offset;
  return t;
}

// The tensor with `bytes` zero bytes of data, whatever its shape says.
inline Tensor with_data(Tensor t, std::size_t bytes) {
  t.data = std::vector<std::uint8_t>(bytes, 0);
  return t;
}

// minimal_document() (kv[0] is general.architecture) plus these pairs and tensors.
inline Document document(std::vector<KeyValue> pairs, std::vector<Tensor> tensors = {}) {
  Document doc = minimal_document();
  for (KeyValue& kv : pairs) doc.metadata.push_back(std::move(kv));
  doc.tensors = std::move(tensors);
  return doc;
}

inline KeyValue quantization_version() {
  return pair("general.quantization_version", Value::u32(2));
}

// An array nested `levels` deep: levels 1 is a plain (empty) uint8 array.
inline Value nested_array(std::size_t levels) {
  Value value = Value::array(ValueType::Uint8, {});
  for (std::size_t i = 1; i < levels; ++i) value = Value::array(ValueType::Array, {value});
  return value;
}

// The first n bytes (a cut file).
inline std::vector<std::uint8_t> prefix(const std::vector<std::uint8_t>& bytes, std::uint64_t n) {
  return std::vector<std::uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
}

// Little-endian numbers appended by hand, for shapes the writer cannot produce.
inline void append_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
inline void append_u64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// A file whose last pair, kv[1] "my.deep", is `depth` array headers nested in each other (each:
// element type array, count 1), ending in an empty uint8 array.
inline std::vector<std::uint8_t> deeply_nested(std::uint64_t depth) {
  const Written w = write(document({pair("my.deep", Value::array(ValueType::Uint8, {}))}));
  std::vector<std::uint8_t> bytes = prefix(w.bytes, w.layout.pairs[1].value_offset);
  for (std::uint64_t i = 0; i < depth; ++i) {
    append_u32(bytes, static_cast<std::uint32_t>(ValueType::Array));
    append_u64(bytes, 1);
  }
  append_u32(bytes, static_cast<std::uint32_t>(ValueType::Uint8));
  append_u64(bytes, 0);
  return bytes;
}

// A small model: metadata, a tokenizer and tensors of a few types.
inline Document model_document() {
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
  doc.tensors.push_back({"token_embd.weight", {64, 4}, 1, {}, {}});     // F16
  doc.tensors.push_back({"blk.0.attn_q.weight", {64, 64}, 8, {}, {}});  // Q8_0
  doc.tensors.push_back({"output_norm.weight", {64}, 0, {}, {}});       // F32
  return doc;
}

// Overwrites bytes at an offset with a little- or big-endian number.
template <typename T>
void patch(std::vector<std::uint8_t>& bytes, std::uint64_t offset, T value,
           Endian endian = Endian::Little) {
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    const std::size_t shift = 8 * (endian == Endian::Little ? i : sizeof(T) - 1 - i);
    bytes.at(offset + i) = static_cast<std::uint8_t>(static_cast<std::uint64_t>(value) >> shift);
  }
}

}  // namespace ggufcheck::testing
