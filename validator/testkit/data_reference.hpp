// A plain scalar reading of tensor data, for the data kernels' tests and fuzz target: what
// ggml_validate_row_data checks in each block (and ggufcheck's extras), one block and one field
// at a time, in ggml's order, written from the block tables and not from the kernels.
#pragma once

#include <cstdint>

#include "data/kernels.hpp"

namespace ggufcheck::testing {

// Bytes per block of a known type as the block tables give them (0 for removed and unknown
// ids), for a check against the library's type table.
[[nodiscard]] std::uint32_t reference_block_bytes(std::uint32_t type);

// The BlockScan of `blocks` blocks of `type` at `data`, computed the slow, obvious way.
[[nodiscard]] detail::BlockScan reference_scan_blocks(std::uint32_t type, const std::uint8_t* data,
                                                      std::uint64_t blocks);

}  // namespace ggufcheck::testing
