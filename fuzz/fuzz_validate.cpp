// The whole validation pipeline on arbitrary bytes: every profile, every output format, and the
// report's invariants (pipeline.hpp).
#include <cstddef>
#include <cstdint>

#include "pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ggufcheck::Bytes bytes(data, size);
  ggufcheck::fuzz::fail_if(ggufcheck::fuzz::check_pipeline(bytes), bytes);
  return 0;
}
