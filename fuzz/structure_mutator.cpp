#include "structure_mutator.hpp"

namespace ggufcheck::fuzz {

std::size_t mutate_structure(std::uint8_t* data, std::size_t size, std::size_t max_size,
                             unsigned int /*seed*/) {
  return LLVMFuzzerMutate(data, size, max_size);
}

std::size_t cross_over_structure(const std::uint8_t* /*first*/, std::size_t /*first_size*/,
                                 const std::uint8_t* /*second*/, std::size_t /*second_size*/,
                                 std::uint8_t* /*out*/, std::size_t /*max_out*/,
                                 unsigned int /*seed*/) {
  return 0;
}

}  // namespace ggufcheck::fuzz
