// The layout: resolved once, after the tensor infos, from the index, and read-only after. The
// alignment in force (by the profile's rule for finding general.alignment: the byte-exact key,
// or the C-string key llama.cpp compares), where the data section starts, and for each tensor
// its element count, byte size, padded size and byte range. Every later stage (the layout
// checks, dump, the stream's padding probes, data scans and hashes) reads this, so they all see
// the same layout.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "index/file_index.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

struct TensorExtent {
  std::uint64_t elements = 0;
  std::uint64_t nbytes = 0;
  std::uint64_t padded = 0;       // nbytes rounded up to the alignment
  std::uint64_t data_offset = 0;  // as stored: relative to the data section
  // The data's file offset, when data_start + data_offset fits in 64 bits.
  std::optional<std::uint64_t> begin;
};

class DataLayout {
 public:
  std::uint32_t alignment = kDefaultAlignment;
  std::optional<std::size_t> alignment_key;  // the pair that set it, if one did
  // Where the tensor data starts (known when every tensor info was read); UINT64_MAX when the
  // rounding would not fit (it cannot: infos_end is inside the file).
  std::optional<std::uint64_t> data_start;

  // Tensor i's extent, or nullopt when its type and dims define no byte size (the reasons are
  // reported by the tensor-info checks). Computed from the record on each call: the index keeps
  // no per-tensor state beyond what the reader recorded.
  [[nodiscard]] std::optional<TensorExtent> tensor(const FileIndex& index, std::size_t i) const;

  // Where the layout check may look for padding after each tensor, as [begin, end) file
  // offsets: a superset of the ranges it reads (each begins where a tensor's data ends and
  // reaches at most the next multiple of the alignment), begins clamped to at least `from`.
  // Used to scan a stream's tensor data as it passes.
  [[nodiscard]] std::vector<std::pair<std::uint64_t, std::uint64_t>> padding_ranges(
      const FileIndex& index, std::uint64_t from) const;
};

// Resolves the layout, reporting what is wrong with general.alignment.
[[nodiscard]] DataLayout resolve_layout(const FileIndex& file_index, Sink& sink);

}  // namespace ggufcheck::detail
