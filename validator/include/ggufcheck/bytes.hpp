// Input bytes and ranges of them, as the library's interfaces take and give them.
#pragma once

#include <cstdint>
#include <span>

namespace ggufcheck {

using Bytes = std::span<const std::uint8_t>;

struct ByteRange {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  [[nodiscard]] std::uint64_t end() const { return offset + length; }
};

}  // namespace ggufcheck
