// Document builders: small documents for the writer, and the byte-level edits that hostile
// files need. No test framework, no paths, only the writer's types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ggufcheck/format.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

using ByteVector = std::vector<std::uint8_t>;

// The smallest file the strict profile passes: a v3 header and general.architecture.
[[nodiscard]] Document minimal_document();

// A metadata pair; raw_type is written instead of the value's type (payload unchanged).
[[nodiscard]] KeyValue pair(std::string key, Value value,
                            std::optional<std::uint32_t> raw_type = std::nullopt);

// A tensor info of a ggml type (F32 by default) at the default offset unless one is given.
[[nodiscard]] Tensor tensor(std::string name, std::vector<std::uint64_t> dims,
                            std::uint32_t type = 0,
                            std::optional<std::uint64_t> offset = std::nullopt);

// The tensor with `bytes` zero bytes of data, whatever its shape says.
[[nodiscard]] Tensor with_data(Tensor t, std::size_t bytes);

// minimal_document() (kv[0] is general.architecture) plus these pairs and tensors.
[[nodiscard]] Document document(std::vector<KeyValue> pairs, std::vector<Tensor> tensors = {});

[[nodiscard]] KeyValue quantization_version();

// An array nested `levels` deep: levels 1 is a plain (empty) uint8 array.
[[nodiscard]] Value nested_array(std::size_t levels);

// A small model: metadata, a tokenizer and tensors of a few types.
[[nodiscard]] Document model_document();

// The other kinds of file (docs/model-checks.md), each one its loader in the pinned llama.cpp
// accepts:
// - a LoRA adapter of `base` (general.type "adapter", adapter.type "lora", adapter.lora.alpha
//   f32): a lora_a [ne0, rank] and lora_b [rank, ne1] F32 pair for every 2-D tensor of the base
//   but token_embd.weight, whose pair is swapped (lora_a [rank, ne1], lora_b [rank, ne0]);
[[nodiscard]] Document adapter_document(const Document& base, std::uint64_t rank = 4);
// - a multimodal projector with a vision encoder of projector type `projector`: the keys every
//   projector type reads and v.patch_embd.weight, no layers (mmproj_builder.hpp builds complete
//   projectors of the types ggufcheck follows);
[[nodiscard]] Document mmproj_document(std::string projector = "mlp");
// The image keys every vision encoder reads: image_size 224, patch_size 14, image_mean and
// image_std of three 0.5s.
void add_vision_image_keys(Document& doc);
// - an importance matrix as llama-imatrix writes one (general.type "imatrix", chunk keys, an
//   in_sum2 [n, 1] and counts [1, 1] F32 pair per weight of model_document()).
[[nodiscard]] Document imatrix_document();

// model_document() as a split set of n shards (n >= 1) the way gguf-split writes one: the first
// holds every model key, each holds split.no (u16, from 0), split.count (u16) and
// split.tensors.count (i32), and the tensors are dealt out in order.
[[nodiscard]] std::vector<Document> model_shards(std::size_t n);
// Any model as such a set (model_shards is shards_of(model_document(), n)).
[[nodiscard]] std::vector<Document> shards_of(const Document& model, std::size_t n);

// The first n bytes (a cut file).
[[nodiscard]] ByteVector prefix(const ByteVector& bytes, std::uint64_t n);

// Little-endian numbers appended by hand, for shapes the writer cannot produce.
void append_u32(ByteVector& out, std::uint32_t v);
void append_u64(ByteVector& out, std::uint64_t v);

// Writes the low `width` bytes of `value` at `offset` in the given byte order (std::out_of_range
// past the end).
void put_uint(ByteVector& bytes, std::uint64_t offset, std::uint64_t value, std::uint32_t width,
              Endian endian);

// Overwrites bytes at an offset with a number of T's width.
template <typename T>
void patch(ByteVector& bytes, std::uint64_t offset, T value, Endian endian = Endian::Little) {
  put_uint(bytes, offset, static_cast<std::uint64_t>(value), sizeof(T), endian);
}

}  // namespace ggufcheck::testing
