// Writes the README demo's sample files: a few valid files and a few broken ones, all made by
// the library's writer. Usage: ggufcheck_make_examples OUTPUT_DIR
#include <cstdio>
#include <filesystem>
#include <string>

#include "ggufcheck/writer.hpp"

using namespace ggufcheck;
namespace fs = std::filesystem;

namespace {

Document tiny_llama() {
  Document doc;
  std::vector<Value> tokens, scores, types;
  const char* words[] = {"<unk>",
                         "<s>",
                         "</s>",
                         "\xe2\x96\x81"
                         "the",
                         "\xe2\x96\x81"
                         "a",
                         "ing",
                         "\xe2\x96\x81"
                         "of",
                         "er",
                         "\xe2\x96\x81"
                         "to",
                         "ed",
                         "\xc3\xa9",
                         "\xe4\xb8\xad"};
  for (std::size_t i = 0; i < std::size(words); ++i) {
    tokens.push_back(Value::string(words[i]));
    scores.push_back(Value::f32(-static_cast<float>(i)));
    types.push_back(Value::i32(i < 3 ? 3 : 1));
  }
  doc.metadata = {
      {"general.architecture", Value::string("llama"), {}},
      {"general.name", Value::string("tiny-llama example"), {}},
      {"general.file_type", Value::u32(2), {}},
      {"general.quantization_version", Value::u32(2), {}},
      {"llama.context_length", Value::u32(2048), {}},
      {"llama.embedding_length", Value::u32(64), {}},
      {"llama.block_count", Value::u32(1), {}},
      {"llama.attention.head_count", Value::u32(4), {}},
      {"llama.attention.layer_norm_rms_epsilon", Value::f32(1e-5f), {}},
      {"tokenizer.ggml.model", Value::string("llama"), {}},
      {"tokenizer.ggml.tokens", Value::array(ValueType::String, tokens), {}},
      {"tokenizer.ggml.scores", Value::array(ValueType::Float32, scores), {}},
      {"tokenizer.ggml.token_type", Value::array(ValueType::Int32, types), {}},
      {"tokenizer.ggml.bos_token_id", Value::u32(1), {}},
      {"tokenizer.ggml.eos_token_id", Value::u32(2), {}},
      {"tokenizer.ggml.add_bos_token", Value::boolean(true), {}},
  };
  doc.tensors = {
      {"token_embd.weight", {64, 12}, 1, {}, {}},        // F16
      {"blk.0.attn_q.weight", {64, 64}, 2, {}, {}},      // Q4_0
      {"blk.0.ffn_down.weight", {256, 64}, 12, {}, {}},  // Q4_K
      {"output_norm.weight", {64}, 0, {}, {}},           // F32
  };
  // Weights that pass `check --data`: every byte 0x11 is a finite value (f16 and f32 0x11..),
  // finite scales and some quants in the blocks of Q4_0 and Q4_K; zeros would be GGUF6005.
  for (Tensor& t : doc.tensors)
    t.data = std::vector<std::uint8_t>(*tensor_nbytes(t.type, t.dims), 0x11);
  return doc;
}

// The valid sample: the container above made a model llama.cpp loads, with every tensor its
// llama loader asks for (one block, in the shapes it computes from the keys).
Document loadable_tiny_llama() {
  Document doc = tiny_llama();
  doc.metadata.push_back({"llama.feed_forward_length", Value::u32(256), {}});
  const std::vector<Tensor> more = {
      {"blk.0.attn_norm.weight", {64}, 0, {}, {}},        // F32
      {"blk.0.attn_k.weight", {64, 64}, 2, {}, {}},       // Q4_0
      {"blk.0.attn_v.weight", {64, 64}, 2, {}, {}},       // Q4_0
      {"blk.0.attn_output.weight", {64, 64}, 2, {}, {}},  // Q4_0
      {"blk.0.ffn_norm.weight", {64}, 0, {}, {}},         // F32
      {"blk.0.ffn_gate.weight", {64, 256}, 8, {}, {}},    // Q8_0
      {"blk.0.ffn_up.weight", {64, 256}, 8, {}, {}},      // Q8_0
  };
  for (Tensor t : more) {
    t.data = std::vector<std::uint8_t>(*tensor_nbytes(t.type, t.dims), 0x11);
    doc.tensors.push_back(std::move(t));
  }
  return doc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 3;
  }
  const fs::path dir = argv[1];
  bool ok = true;

  // valid/
  ok &= save_file(dir / "valid/tiny-llama.gguf", write_bytes(loadable_tiny_llama()));
  Document vocab = tiny_llama();
  vocab.tensors.clear();
  ok &= save_file(dir / "valid/vocab-only.gguf", write_bytes(vocab));

  // broken/: a duplicate key, a bool byte of 2 and a misaligned tensor, all reported at once, in
  // the model llama.cpp loads (so that the model checks, which run beside the container's
  // errors, add nothing of their own).
  Document three = loadable_tiny_llama();
  three.metadata.push_back({"general.name", Value::string("second name"), {}});
  three.metadata[15].value = Value::bool_byte(2);
  three.tensors[1].offset = 1184;  // the running sum is 1152 + 32; 1184 - 16 is misaligned
  *three.tensors[1].offset -= 16;
  // Zero data, so that the overlapping tensor leaves zeros where its padding is looked for: the
  // three problems and nothing else.
  for (Tensor& t : three.tensors) t.data.reset();
  ok &= save_file(dir / "broken/three-problems.gguf", write_bytes(three));

  // broken/: cut inside the tensor infos.
  Written full = write(tiny_llama());
  std::vector<std::uint8_t> cut(
      full.bytes.begin(),
      full.bytes.begin() + static_cast<long>(full.layout.tensors[2].dims_offset + 4));
  ok &= save_file(dir / "broken/truncated.gguf", cut);

  // broken/: written as the course chapter describes (40-byte header with an alignment field).
  WriteOptions chapter;
  chapter.header_alignment_field = true;
  ok &= save_file(dir / "broken/course-chapter-header.gguf", write_bytes(tiny_llama(), chapter));

  // broken/: a tensor count whose record-size product wraps 64 bits (CVE-2024-21836 shape).
  WriteOptions hostile;
  hostile.tensor_count = 0x1D1D1D1D1D1D1D1DULL;
  ok &= save_file(dir / "broken/hostile-tensor-count.gguf", write_bytes(vocab, hostile));

  if (!ok) {
    std::fprintf(stderr, "ggufcheck_make_examples: cannot write under %s\n", dir.c_str());
    return 2;
  }
  return 0;
}
