// The structure-aware mutator of fuzz_structured (the libpng mutator's idea applied to GGUF):
// parse the input into a document, make one structural move, write it back with everything
// else consistent, so that mutants get past the header and the length fields.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ggufcheck::fuzz {

// Mutates data[0, size) in place into at most max_size bytes and returns the new size. An input
// that does not parse is replaced by one of a few valid seeds first. Deterministic in seed.
std::size_t mutate_structure(std::uint8_t* data, std::size_t size, std::size_t max_size,
                             unsigned int seed);

// Writes into out (at most max_out bytes) a file made of parts of two inputs: pairs and tensors
// of both, in the header of the first. Returns the size written. Deterministic in seed.
std::size_t cross_over_structure(const std::uint8_t* first, std::size_t first_size,
                                 const std::uint8_t* second, std::size_t second_size,
                                 std::uint8_t* out, std::size_t max_out, unsigned int seed);

}  // namespace ggufcheck::fuzz

// libFuzzer's byte-level mutator (replay_main.cpp has a stand-in), used for a share of the moves.
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);
