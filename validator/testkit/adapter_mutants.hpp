// LoRA adapters of the base models (model_builder.hpp) and one change each to what
// llama_adapter_lora_init reads, for the adapter differential test
// (validator/tests/test_model_differential.cpp, AdapterDifferential).
//
// Per base: the adapter documents.hpp's adapter_document() writes (a pair for every 2-D tensor),
// then kinds: adapter (unchanged), keys (general.type, general.architecture, adapter.type,
// adapter.lora.alpha, adapter.alora.invocation_tokens: dropped, retyped, other values),
// pair-missing (a lora_a or a lora_b dropped), rank (b.ne[0] or a.ne[1] changed), shape (a.ne[0],
// b.ne[1] changed, token_embd's pair unswapped), name (a suffix llama.cpp does not know, a base
// tensor the model lacks, a norm vector it ignores), type (F16 halves), expert (a pair for a 3-D
// tensor of a MoE base), empty (no tensors), other-base (the adapter of another architecture).
//
// Deterministic: the same bases and seed give the same mutants in the same order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_builder.hpp"

namespace ggufcheck::testing {

struct AdapterMutant {
  std::string kind;
  std::string base;  // the base model's spec name: the adapter is loaded on it
  std::string what;
  Document adapter;
};

[[nodiscard]] std::vector<AdapterMutant> adapter_mutants(const std::vector<BaseModel>& bases,
                                                         std::uint64_t seed);

}  // namespace ggufcheck::testing
