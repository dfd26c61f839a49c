// Small document builders shared by the unit tests and the corpus generator
// (corpus/generator): no test framework, no paths, only the writer's types.
#pragma once

#include <cstddef>
#include <cstdint>
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
