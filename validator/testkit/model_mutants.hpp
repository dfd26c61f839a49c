// Structured mutants of the base models (model_builder.hpp): one change each to what llama.cpp's
// model loader reads, for the model differential test
// (validator/tests/test_model_differential.cpp).
//
// Kinds, by group (the test prints its figures per kind):
// - tensors: drop-tensor, add-output, add-bias, add-junk-tensor, rename-tensor, change-dim;
// - keys: drop-key, retype-key (u32 -> u64/i32/f32/u16, f32 -> f64, string -> u32, ...),
//   layer-array (a per-layer array of the right, a shorter, a longer length, empty, i32),
//   out-of-range (block_count 0 / L+1 / 512 / 513, expert counts, nextn_predict_layers,
//   rope.scaling.type, rope.dimension_count, head counts, ...);
// - vocabulary: tokenizer-model, pre-tokenizer, merges, scores, token-type, tokens,
//   duplicate-token (exact, equal up to a NUL, empty beside "[EMPTY_n]"), name-phi3,
//   vocab-only (the vocabulary alone, loaded with vocab_only, and its own mutants);
// - split sets written as llama.cpp's gguf-split writes them (the first shard keeps every key,
//   each shard gets split.no (u16), split.count (u16) and split.tensors.count (i32)):
//   split-valid, split-shard-missing, split-misnumbered, split-reordered, split-no-u32,
//   split-duplicate-tensor, split-tensors-count, split-count, split-key-missing.
//
// Deterministic: the same bases and seed give the same mutants in the same order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_builder.hpp"

namespace ggufcheck::testing {

struct MutantFile {
  std::string name;  // the file name in the mutant's directory
  Document document;
};

struct ModelMutant {
  std::string kind;
  std::string base;
  std::string what;               // the change, for people
  std::vector<MutantFile> files;  // what is written
  bool vocab_only = false;        // one file: llama.cpp loads it with vocab_only
  bool set = false;               // a split set: ggufcheck is the CLI on check_names
  // How llama.cpp loads it: llama_model_load_from_file(load_names[0]) (a set's first shard by
  // name brings the others), or llama_model_load_from_splits(load_names) in that order.
  enum class Load : std::uint8_t { File, Splits };
  Load load = Load::File;
  std::vector<std::string> load_names;
  std::vector<std::string> check_names;  // what ggufcheck is given, in order
};

// The mutants of every base, in order: base_mutants of each.
[[nodiscard]] std::vector<ModelMutant> model_mutants(const std::vector<BaseModel>& bases,
                                                     std::uint64_t seed);

// The mutants of one base (hundreds; at least 30 of every base), chosen by `seed` and the
// base's name, so that a base's mutants do not depend on which other bases there are.
[[nodiscard]] std::vector<ModelMutant> base_mutants(const BaseModel& base, std::uint64_t seed);

// The base itself as a mutant of kind "base" (one file, unchanged).
[[nodiscard]] ModelMutant base_mutant(const BaseModel& base);

// The shards of a document as llama.cpp's gguf-split writes them: tensors in order, in
// `count` runs as even as can be; the first shard holds every key.
[[nodiscard]] std::vector<Document> split_document(const Document& document, std::uint32_t count);

// <prefix>-%05d-of-%05d.gguf, llama_split_path's format (shard numbered from 1).
[[nodiscard]] std::string split_file_name(const std::string& prefix, std::uint32_t shard,
                                          std::uint32_t count);

}  // namespace ggufcheck::testing
