// The pipeline of fuzz_validate, fed by the structure-aware mutator
// (structure_mutator.hpp): mutants are well-formed files with one structural fault, so the
// fuzzer spends its time in the checks rather than at the first length field.
#include <cstddef>
#include <cstdint>

#include "pipeline.hpp"
#include "structure_mutator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ggufcheck::Bytes bytes(data, size);
  ggufcheck::fuzz::fail_if(ggufcheck::fuzz::check_pipeline(bytes), bytes);
  return 0;
}

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  return ggufcheck::fuzz::mutate_structure(data, size, max_size, seed);
}

extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t* data1, std::size_t size1,
                                                 const std::uint8_t* data2, std::size_t size2,
                                                 std::uint8_t* out, std::size_t max_out_size,
                                                 unsigned int seed) {
  return ggufcheck::fuzz::cross_over_structure(data1, size1, data2, size2, out, max_out_size, seed);
}
