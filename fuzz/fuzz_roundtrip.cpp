// Whatever the reader accepts, the writer writes back and the reader reads to an equal document
// (pipeline.hpp).
#include <cstddef>
#include <cstdint>

#include "pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ggufcheck::Bytes bytes(data, size);
  ggufcheck::fuzz::fail_if(ggufcheck::fuzz::check_roundtrip(bytes), bytes);
  return 0;
}
