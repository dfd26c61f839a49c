#include "index/file_index.hpp"

#include <algorithm>

namespace ggufcheck::detail {

const StreamTail::Probe* StreamTail::first_nonzero(std::uint64_t begin, std::uint64_t end) const {
  const auto it = std::lower_bound(probes.begin(), probes.end(), begin,
                                   [](const Probe& p, std::uint64_t b) { return p.begin < b; });
  if (it == probes.end() || it->begin != begin || !it->found || it->nonzero >= end) return nullptr;
  return &*it;
}

std::uint64_t FileIndex::key_length(std::size_t i) const {
  const MetadataEntry& entry = metadata[i];
  const std::uint64_t fixed = size_width() + terminator() + 4;  // length, NUL, type
  const std::uint64_t size = pair_end(i) - entry.key_offset();
  switch (entry.type()) {
    case ValueType::Array: return array(i).key_length;
    case ValueType::String: return size - fixed - size_width() - entry.payload() - terminator();
    default: return size - fixed - scalar_size(entry.type());
  }
}

std::array<std::uint64_t, kMaxDims> FileIndex::dims(std::size_t i) const {
  std::array<std::uint64_t, kMaxDims> out{1, 1, 1, 1};
  Cursor cursor = input.cursor(dims_offset(i), endian);
  const std::uint32_t n = std::min(tensors[i].n_dims, kMaxDims);
  for (std::uint32_t d = 0; d < n; ++d) {
    if (!cursor.read_width(out[d], size_width())) break;  // the reader read them: not reached
  }
  return out;
}

}  // namespace ggufcheck::detail
