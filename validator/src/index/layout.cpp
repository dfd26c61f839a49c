#include "index/layout.hpp"

#include <algorithm>

#include "index/keys.hpp"

namespace ggufcheck::detail {
namespace {

bool is_power_of_two(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

}  // namespace

std::optional<TensorExtent> DataLayout::tensor(const FileIndex& index, std::size_t i) const {
  const TensorInfo& info = index.tensors[i];
  if (info.n_dims > kMaxDims) return std::nullopt;
  // Unused dims are 1, so all four give the size of the n_dims the file has.
  const std::array<std::uint64_t, kMaxDims> dims = index.dims(i);
  const auto nbytes = tensor_nbytes(info.type, dims);
  if (!nbytes) return std::nullopt;
  TensorExtent extent;
  extent.nbytes = *nbytes;
  // tensor_nbytes checked the product of dims without a zero: it fits in 63 bits.
  const bool empty = std::find(dims.begin(), dims.end(), 0) != dims.end();
  extent.elements = empty ? 0 : 1;
  if (!empty) {
    for (const std::uint64_t d : dims) extent.elements *= d;
  }
  if (!checked_round_up(extent.nbytes, alignment, extent.padded)) return std::nullopt;
  extent.data_offset = index.data_offset(i);
  std::uint64_t begin = 0;
  if (data_start && checked_add(*data_start, extent.data_offset, begin)) extent.begin = begin;
  return extent;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> DataLayout::padding_ranges(
    const FileIndex& index, std::uint64_t from) const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  if (!data_start) return ranges;
  const auto add = [&](std::uint64_t begin, std::uint64_t end) {
    begin = std::max(begin, from);
    if (begin < end) ranges.emplace_back(begin, end);
  };
  add(index.infos_end, *data_start);
  for (std::size_t i = 0; i < index.tensors.size(); ++i) {
    const auto extent = tensor(index, i);
    std::uint64_t end = 0;
    std::uint64_t begin = 0;
    std::uint64_t padded_end = 0;
    if (!extent || extent->nbytes == 0 || !checked_add(extent->data_offset, extent->nbytes, end) ||
        !checked_add(*data_start, end, begin) || !checked_round_up(end, alignment, padded_end) ||
        !checked_add(*data_start, padded_end, padded_end)) {
      continue;
    }
    add(begin, padded_end);
  }
  return ranges;
}

DataLayout resolve_layout(const FileIndex& file_index, Sink& sink) {
  DataLayout layout;
  // The header's alignment field exists only under writer diagnosis (Dialect).
  layout.alignment =
      file_index.header_alignment != 0 ? file_index.header_alignment : kDefaultAlignment;
  if (const auto index = find_key(file_index, "general.alignment", sink.profile())) {
    const MetadataEntry& entry = file_index.metadata[*index];
    const Field path = kv_path(*index, file_index.key(*index));
    const std::uint64_t value_offset = file_index.value_range(*index).offset;
    if (entry.type() != ValueType::Uint32) {
      sink.report(Code::AlignmentWrongType, file_index.type_offset(*index), 4, path + " type",
                  "store general.alignment as uint32 (type 4); llama.cpp 2025-02 aborts on "
                  "any other type",
                  "general.alignment is {}, not uint32; alignment 32 is used",
                  to_string(entry.type()));
    } else if (entry.payload() == 0) {
      sink.report(Code::AlignmentZero, value_offset, 4, path, "",
                  "general.alignment is 0; alignment 32 is used");
    } else {
      const std::uint64_t value = entry.payload();
      if (!is_power_of_two(value)) {
        sink.report(Code::AlignmentNotPowerOfTwo, value_offset, 4, path,
                    "ggml requires a power of two", "general.alignment {} is not a power of two",
                    value);
      }
      if (value % 8 != 0) {
        sink.report(Code::AlignmentNotMultipleOf8, value_offset, 4, path,
                    "the spec requires a multiple of 8",
                    "general.alignment {} is not a multiple of 8", value);
      }
      if (value > 65536) {
        sink.report(Code::AlignmentTooLarge, value_offset, 4, path, "",
                    "general.alignment {} is above 65536", value);
      }
      layout.alignment = static_cast<std::uint32_t>(value);
      layout.alignment_key = *index;
    }
  }
  if (file_index.tensors_complete) {
    // infos_end <= file size and alignment < 2^32: cannot overflow, checked all the same.
    std::uint64_t data_start = 0;
    layout.data_start = checked_round_up(file_index.infos_end, layout.alignment, data_start)
                            ? data_start
                            : UINT64_MAX;
  }
  return layout;
}

}  // namespace ggufcheck::detail
