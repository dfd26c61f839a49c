// Checks of the alignment, the tensor infos and the data layout.
#include <algorithm>
#include <optional>

#include "checks/checks.hpp"
#include "ggufcheck/writer.hpp"
#include "read/cursor.hpp"
#include "util/duplicates.hpp"
#include "util/utf8.hpp"

namespace ggufcheck::detail {
namespace {

struct TensorSize {
  std::uint64_t nbytes = 0;
  std::uint64_t padded = 0;
};

// A dim of 0 makes the tensor empty whatever the other dims are.
bool has_zero_dim(const TensorInfo& info) {
  return std::find(info.dims.begin(), info.dims.end(), 0) != info.dims.end();
}

// The tensor's byte size (the writer's tensor_nbytes: one rule for both) and padded size, or
// nullopt when the info does not define one (the reasons are reported by check_tensor_infos).
std::optional<TensorSize> tensor_size(const TensorInfo& info, std::uint64_t alignment) {
  if (info.n_dims > kMaxDims) return std::nullopt;
  // Unused dims are 1, so all four give the size of the n_dims the file has.
  const auto nbytes = tensor_nbytes(info.type, info.dims);
  if (!nbytes) return std::nullopt;
  TensorSize size;
  size.nbytes = *nbytes;
  if (!checked_round_up(size.nbytes, alignment, size.padded)) return std::nullopt;
  return size;
}

bool is_power_of_two(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

void check_name(const Model& model, std::size_t index, Sink& sink) {
  const TensorInfo& info = model.tensors[index];
  const Field path = tensor_path(index, info.name) + " name";
  const std::uint64_t width = model.narrow() ? 4 : 8;
  // ggml requires length < 64 (it copies names into char[64]); the spec says "at most 64".
  const std::uint64_t limit =
      sink.profile() == Profile::Spec ? kReferenceTensorNameLimit : kReferenceTensorNameLimit - 1;
  if (info.name.size() > limit) {
    sink.report(Code::TensorNameTooLong, info.name_offset, width + info.name.size(), path,
                "ggml copies tensor names into a 64-byte buffer including the NUL: at most 63 "
                "bytes",
                "tensor name is {} bytes long, at most {} allowed", info.name.size(), limit);
  }
  if (info.name.empty()) {
    sink.report(Code::EmptyTensorName, info.name_offset, width, path, "", "tensor name is empty");
    return;
  }
  for (std::size_t i = 0; i < info.name.size(); ++i) {
    const auto byte = static_cast<unsigned char>(info.name[i]);
    if (byte < 0x20 || byte == 0x7f) {
      sink.report(Code::InvalidTensorNameBytes, info.name_offset + width + i, 1, path,
                  byte == 0 ? "ggml stores names as C strings: the name ends at the NUL" : "",
                  "tensor name byte {} is 0x{:02x}, a {} byte", i, byte,
                  byte == 0 ? "NUL" : "control");
      return;
    }
  }
  const std::size_t bad = find_invalid_utf8(info.name);
  if (bad != std::string_view::npos) {
    sink.report(Code::InvalidTensorNameBytes, info.name_offset + width + bad, 1, path, "",
                "tensor name is not valid UTF-8 at byte {}", bad);
  }
}

void check_shape_and_type(const Model& model, std::size_t index, Sink& sink) {
  const TensorInfo& info = model.tensors[index];
  const Field path = tensor_path(index, info.name);
  if (info.n_dims == 0) {
    sink.report(Code::ScalarTensor, info.n_dims_offset, 4, path + " n_dims", "",
                "n_dims is 0: a scalar tensor of one element");
  }
  bool dims_ok = info.n_dims <= kMaxDims;
  const std::uint32_t shown = std::min(info.n_dims, kMaxDims);
  for (std::uint32_t d = 0; d < shown; ++d) {
    const auto dim_path = [&] { return path + fmt::format(" dims[{}]", d); };
    if (info.dims[d] >= kInt64Limit) {
      sink.report(Code::NegativeDim, info.dim_offset(d), info.dim_width, dim_path(), "",
                  "dims[{}] is 0x{:x}, negative as the reference reader's int64", d, info.dims[d]);
      dims_ok = false;
    } else if (info.dims[d] == 0) {
      sink.report(
          Code::ZeroDim, info.dim_offset(d), info.dim_width, dim_path(),
          d > 0 ? "llama.cpp 2025-01..2026-08 divides by ne[1..3] in its overflow guard" : "",
          "dims[{}] is 0", d);
    }
  }
  const TensorTypeInfo* type = tensor_type(info.type);
  if (type == nullptr) {
    sink.report(Code::UnknownTensorType, info.type_offset, 4, path + " type",
                "ggml type ids are 0..42", "unknown ggml type {} (0x{:x})", info.type, info.type);
  } else if (type->removed()) {
    sink.report(Code::RemovedTensorType, info.type_offset, 4, path + " type",
                "re-quantize the tensor with a current type",
                "ggml type {} ({}) was removed from ggml", info.type, type->name);
  } else if (type->recent()) {
    sink.report(Code::NewTensorType, info.type_offset, 4, path + " type", "",
                "ggml type {} ({}) is recent: older runtimes reject the file", info.type,
                type->name);
  }
  if (!dims_ok) return;
  std::uint64_t elements = 1;
  for (std::uint32_t d = 0; d < kMaxDims && !has_zero_dim(info); ++d) {
    if (!checked_mul(elements, info.dims[d], elements) || elements >= kInt64Limit) {
      sink.report(Code::ElementCountOverflow, info.dims_offset,
                  static_cast<std::uint64_t>(shown) * info.dim_width, path + " dims",
                  "ggml 2026-08 accepts dims whose product wraps to 0 as an empty tensor",
                  "element count {} x {} x {} x {} does not fit in 63 bits", info.dims[0],
                  info.dims[1], info.dims[2], info.dims[3]);
      return;
    }
  }
  if (type == nullptr || type->removed()) return;
  if (info.dims[0] % type->block_size != 0) {
    sink.report(Code::RowNotBlockMultiple, info.dims_offset, info.dim_width, path + " dims[0]", "",
                "dims[0] is {}, not a multiple of the {} block size {}", info.dims[0], type->name,
                type->block_size);
    return;
  }
  if (!tensor_size(info, model.alignment)) {
    sink.report(Code::ByteSizeOverflow, info.dims_offset,
                static_cast<std::uint64_t>(shown) * info.dim_width, path + " dims",
                "the element count fits but the byte size does not (CVE-2026-33298)",
                "byte size of {} x {} x {} x {} {} (padded to {}) overflows 64 bits", info.dims[0],
                info.dims[1], info.dims[2], info.dims[3], type->name, model.alignment);
  }
}

void report_nonzero_padding(std::uint64_t at, std::uint8_t value, std::uint64_t end,
                            const Field& path, Sink& sink) {
  sink.report(Code::NonzeroPadding, at, end - at, path,
              "padding bytes must be 0x00; readers ignore them, so they can hide data",
              "padding byte at 0x{:x} is 0x{:02x}", at, value);
}

// Reports non-zero bytes in [begin, end) once, at the first one. Past the bytes kept of a
// stream, the answer was recorded while the stream passed (StreamTail).
void check_zero_padding(const Model& model, std::uint64_t begin, std::uint64_t end,
                        const Field& path, Sink& sink) {
  end = std::min(end, model.size());
  const std::uint64_t kept = model.bytes.size();
  for (std::uint64_t at = begin; at < std::min(end, kept); ++at) {
    if (model.bytes[at] != 0) {
      report_nonzero_padding(at, model.bytes[at], end, path, sink);
      return;
    }
  }
  if (end > kept && model.tail != nullptr) {
    if (const auto* probe = model.tail->first_nonzero(std::max(begin, kept), end)) {
      report_nonzero_padding(probe->nonzero, probe->value, end, path, sink);
    }
  }
}

}  // namespace

std::vector<std::pair<std::uint64_t, std::uint64_t>> padding_ranges(const Model& model,
                                                                    std::uint64_t from) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  if (!model.tensors_complete) return ranges;
  const auto add = [&](std::uint64_t begin, std::uint64_t end) {
    begin = std::max(begin, from);
    if (begin < end) ranges.emplace_back(begin, end);
  };
  add(model.infos_end, model.data_start);
  for (const TensorInfo& info : model.tensors) {
    const auto tsize = tensor_size(info, model.alignment);
    std::uint64_t end = 0;
    std::uint64_t begin = 0;
    std::uint64_t padded_end = 0;
    if (!tsize || tsize->nbytes == 0 || !checked_add(info.data_offset, tsize->nbytes, end) ||
        !checked_add(model.data_start, end, begin) ||
        !checked_round_up(end, model.alignment, padded_end) ||
        !checked_add(model.data_start, padded_end, padded_end)) {
      continue;
    }
    add(begin, padded_end);
  }
  return ranges;
}

void check_alignment(Model& model, Sink& sink) {
  // The header's alignment field exists only under writer diagnosis (Dialect).
  model.alignment = model.header_alignment != 0 ? model.header_alignment : kDefaultAlignment;
  const MetadataEntry* entry = find_key(model, "general.alignment", sink.profile());
  if (entry != nullptr) {
    const std::size_t index = static_cast<std::size_t>(entry - model.metadata.data());
    const Field path = kv_path(index, entry->key);
    if (entry->type != ValueType::Uint32) {
      sink.report(Code::AlignmentWrongType, entry->type_offset, 4, path + " type",
                  "store general.alignment as uint32 (type 4); llama.cpp 2025-02 aborts on "
                  "any other type",
                  "general.alignment is {}, not uint32; alignment 32 is used",
                  to_string(entry->type));
    } else if (entry->scalar == 0) {
      sink.report(Code::AlignmentZero, entry->value.offset, 4, path, "",
                  "general.alignment is 0; alignment 32 is used");
    } else {
      const std::uint64_t value = entry->scalar;
      if (!is_power_of_two(value)) {
        sink.report(Code::AlignmentNotPowerOfTwo, entry->value.offset, 4, path,
                    "ggml requires a power of two", "general.alignment {} is not a power of two",
                    value);
      }
      if (value % 8 != 0) {
        sink.report(Code::AlignmentNotMultipleOf8, entry->value.offset, 4, path,
                    "the spec requires a multiple of 8",
                    "general.alignment {} is not a multiple of 8", value);
      }
      if (value > 65536) {
        sink.report(Code::AlignmentTooLarge, entry->value.offset, 4, path, "",
                    "general.alignment {} is above 65536", value);
      }
      model.alignment = static_cast<std::uint32_t>(value);
    }
  }
  if (model.tensors_complete) {
    // infos_end <= file size and alignment < 2^32: cannot overflow, checked all the same.
    if (!checked_round_up(model.infos_end, model.alignment, model.data_start)) {
      model.data_start = UINT64_MAX;
    }
  }
}

void check_tensor_infos(const Model& model, Sink& sink) {
  DuplicateFinder seen(model.tensors.size());
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    check_name(model, i, sink);
    check_shape_and_type(model, i, sink);
    const TensorInfo& info = model.tensors[i];
    // Names are C strings in ggml: "a\0b" and "a\0c" are the same tensor there.
    if (const auto earlier = seen.insert(c_string_prefix(info.name), i)) {
      sink.report(Code::DuplicateTensorName, info.name_offset,
                  (model.narrow() ? 4 : 8) + info.name.size(), tensor_path(i, info.name) + " name",
                  "lookups by name become ambiguous",
                  "tensor name \"{}\" already used by tensor[{}]{}", escape(info.name), *earlier,
                  model.tensors[*earlier].name == info.name
                      ? ""
                      : " (the names are equal up to a NUL; ggml compares them as C strings)");
    }
  }
}

void check_layout(const Model& model, Sink& sink) {
  if (!model.tensors_complete) return;
  const std::uint64_t size = model.size();
  const std::uint64_t alignment = model.alignment;
  if (model.tensors.empty()) {
    // gguf-py ends such a file after the last pair; ggml's C writer pads it: both are valid.
    check_zero_padding(model, model.infos_end, model.data_start, "padding", sink);
    if (size > model.data_start) {
      sink.report(Code::TrailingBytes, model.data_start, size - model.data_start, "trailing", "",
                  "{} bytes after the end of the file's content at 0x{:x}", size - model.data_start,
                  model.data_start);
    }
    return;
  }
  if (model.data_start > size) {
    sink.report(Code::TruncatedBeforeData, model.infos_end, size - model.infos_end, "padding", "",
                "file ends at 0x{:x}, before the tensor data section at 0x{:x}", size,
                model.data_start);
    return;
  }
  check_zero_padding(model, model.infos_end, model.data_start, "padding", sink);

  const std::uint64_t data_size = size - model.data_start;
  struct Extent {
    std::uint64_t begin, end;  // relative to data_start
    std::size_t index;
  };
  std::vector<Extent> extents;
  bool all_known = true;
  bool all_in_bounds = true;
  // Where the next tensor should start: after the previous one (relative), and at the running
  // sum of padded sizes (absolute). A tensor is reported only when it matches neither, so one
  // wrong offset or one gap gives one finding, not one per tensor after it.
  // (Plain value + flag pairs: g++ 12 -O3 misreports std::optional<uint64_t> as uninitialised.)
  std::uint64_t after_previous = 0;
  bool after_previous_known = true;
  std::uint64_t running = 0;
  bool running_known = true;
  for (std::size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorInfo& info = model.tensors[i];
    const Field path = tensor_path(i, info.name) + " offset";
    if (info.data_offset % alignment != 0) {
      sink.report(Code::MisalignedOffset, info.data_offset_offset, 8, path,
                  "offsets are relative to the data section and padded to general.alignment",
                  "offset 0x{:x} is not a multiple of alignment {}", info.data_offset, alignment);
    }
    const auto tsize = tensor_size(info, alignment);
    if (!tsize) {
      all_known = false;
      after_previous_known = false;
      running_known = false;
      continue;
    }
    if (after_previous_known && info.data_offset != after_previous &&
        !(running_known && info.data_offset == running)) {
      sink.report(Code::NonContiguousLayout, info.data_offset_offset, 8, path,
                  "ggml requires tensors back to back in tensor-info order, each padded to the "
                  "alignment",
                  "offset 0x{:x} is not the end of the previous tensor's padded data (0x{:x})",
                  info.data_offset, after_previous);
    }
    // Either sum can wrap (CVE-2025-53630): the end of this tensor, or the running sum of the
    // padded sizes so far; one finding per tensor says so.
    const bool running_wraps = running_known && !checked_add(running, tsize->padded, running);
    if (running_wraps) running_known = false;
    std::uint64_t next = 0;
    const bool end_wraps = !checked_add(info.data_offset, tsize->padded, next);
    after_previous = next;
    after_previous_known = !end_wraps;
    if (running_wraps || end_wraps) {
      sink.report(Code::ByteSizeOverflow, info.data_offset_offset, 8, path,
                  "CVE-2025-53630: a sum of padded sizes that wraps passes a bounds check",
                  "{} overflows 64 bits (padded size 0x{:x})",
                  end_wraps ? fmt::format("offset 0x{:x} + padded size", info.data_offset)
                            : std::string("the running sum of padded tensor sizes"),
                  tsize->padded);
    }
    if (info.data_offset > data_size || tsize->nbytes > data_size - info.data_offset) {
      std::uint64_t file_offset = 0;
      const std::string where = checked_add(model.data_start, info.data_offset, file_offset)
                                    ? fmt::format("file offset 0x{:x}", file_offset)
                                    : std::string("an offset beyond 64 bits");
      sink.report(Code::TensorOutOfBounds, info.data_offset_offset, 8, path,
                  "the file is truncated, or the offset or dims are wrong",
                  "tensor data 0x{:x}+0x{:x} (at {}) runs past the end of the {}-byte data section",
                  info.data_offset, tsize->nbytes, where, data_size);
      all_in_bounds = false;
      continue;
    }
    if (tsize->nbytes != 0)
      extents.push_back({info.data_offset, info.data_offset + tsize->nbytes, i});
  }

  std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.index < b.index;
  });
  std::uint64_t max_end = 0;
  std::size_t max_index = 0;
  for (std::size_t k = 0; k < extents.size(); ++k) {
    const Extent& e = extents[k];
    if (k > 0 && e.begin < max_end) {
      const TensorInfo& info = model.tensors[e.index];
      sink.report(Code::OverlappingTensors, info.data_offset_offset, 8,
                  tensor_path(e.index, info.name) + " offset", "",
                  "tensor data 0x{:x}..0x{:x} overlaps tensor[{}] \"{}\" (ends at 0x{:x})", e.begin,
                  e.end, max_index, escape(model.tensors[max_index].name), max_end);
    }
    // The padding after a tensor: up to the next multiple of the alignment or the next tensor.
    std::uint64_t pad_end = 0;
    (void)checked_round_up(e.end, alignment, pad_end);  // e.end <= data_size: no overflow
    if (k + 1 < extents.size()) pad_end = std::min(pad_end, extents[k + 1].begin);
    if (e.end > max_end || k == 0) {
      max_end = e.end;
      max_index = e.index;
    }
    if (pad_end > e.end) {
      check_zero_padding(model, model.data_start + e.end, model.data_start + pad_end,
                         tensor_path(e.index, model.tensors[e.index].name) + " padding", sink);
    }
  }
  if (!all_known || !all_in_bounds) return;
  std::uint64_t padded_end = 0;
  (void)checked_round_up(max_end, alignment, padded_end);
  if (data_size < padded_end) {
    sink.report(Code::MissingFinalPadding, model.data_start + max_end, data_size - max_end,
                "padding", "writers pad after every tensor, including the last",
                "file ends {} bytes short of the padded end of the tensor data at 0x{:x}",
                padded_end - data_size, model.data_start + padded_end);
  } else if (data_size > padded_end) {
    sink.report(Code::TrailingBytes, model.data_start + padded_end, data_size - padded_end,
                "trailing", "bytes after the data are ignored by readers and can hide content",
                "{} bytes after the end of the tensor data at 0x{:x}", data_size - padded_end,
                model.data_start + padded_end);
  }
}

}  // namespace ggufcheck::detail
