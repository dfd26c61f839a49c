// Checks of the tensor infos: names, shapes and types.
#include <algorithm>
#include <array>

#include "checks/checks.hpp"
#include "index/keys.hpp"
#include "util/duplicates.hpp"
#include "util/utf8.hpp"

namespace ggufcheck::detail {
namespace {

// A dim of 0 makes the tensor empty whatever the other dims are.
bool has_zero_dim(const std::array<std::uint64_t, kMaxDims>& dims) {
  return std::find(dims.begin(), dims.end(), 0) != dims.end();
}

void check_name(const FileIndex& file_index, std::size_t index, std::string_view name, Sink& sink) {
  const std::uint64_t name_offset = file_index.tensors[index].name_offset;
  const Field path = tensor_path(index, name) + " name";
  const std::uint64_t width = file_index.size_width();
  // ggml requires length < 64 (it copies names into char[64]); the spec says "at most 64".
  const std::uint64_t limit =
      sink.profile() == Profile::Spec ? kReferenceTensorNameLimit : kReferenceTensorNameLimit - 1;
  if (name.size() > limit) {
    sink.report(Code::TensorNameTooLong, name_offset, width + name.size(), path,
                "ggml copies tensor names into a 64-byte buffer including the NUL: at most 63 "
                "bytes",
                "tensor name is {} bytes long, at most {} allowed", name.size(), limit);
  }
  if (name.empty()) {
    sink.report(Code::EmptyTensorName, name_offset, width, path, "", "tensor name is empty");
    return;
  }
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto byte = static_cast<unsigned char>(name[i]);
    if (byte < 0x20 || byte == 0x7f) {
      sink.report(Code::InvalidTensorNameBytes, name_offset + width + i, 1, path,
                  byte == 0 ? "ggml stores names as C strings: the name ends at the NUL" : "",
                  "tensor name byte {} is 0x{:02x}, a {} byte", i, byte,
                  byte == 0 ? "NUL" : "control");
      return;
    }
  }
  const std::size_t bad = find_invalid_utf8(name);
  if (bad != std::string_view::npos) {
    sink.report(Code::InvalidTensorNameBytes, name_offset + width + bad, 1, path, "",
                "tensor name is not valid UTF-8 at byte {}", bad);
  }
}

void check_shape_and_type(const FileIndex& file_index, const DataLayout& layout, std::size_t index,
                          std::string_view name, Sink& sink) {
  const TensorInfo& info = file_index.tensors[index];
  const std::array<std::uint64_t, kMaxDims> dims = file_index.dims(index);
  const std::uint32_t dim_width = file_index.size_width();
  const Field path = tensor_path(index, name);
  if (info.n_dims == 0) {
    sink.report(Code::ScalarTensor, file_index.n_dims_offset(index), 4, path + " n_dims", "",
                "n_dims is 0: a scalar tensor of one element");
  }
  bool dims_ok = info.n_dims <= kMaxDims;
  const std::uint32_t shown = std::min(info.n_dims, kMaxDims);
  for (std::uint32_t d = 0; d < shown; ++d) {
    const auto dim_path = [&] { return path + fmt::format(" dims[{}]", d); };
    if (dims[d] >= kInt64Limit) {
      sink.report(Code::NegativeDim, file_index.dim_offset(index, d), dim_width, dim_path(), "",
                  "dims[{}] is 0x{:x}, negative as the reference reader's int64", d, dims[d]);
      dims_ok = false;
    } else if (dims[d] == 0) {
      sink.report(
          Code::ZeroDim, file_index.dim_offset(index, d), dim_width, dim_path(),
          d > 0 ? "llama.cpp 2025-01..2026-08 divides by ne[1..3] in its overflow guard" : "",
          "dims[{}] is 0", d);
    }
  }
  const TensorTypeInfo* type = tensor_type(info.type);
  if (type == nullptr) {
    sink.report(Code::UnknownTensorType, file_index.type_offset_of_tensor(index), 4, path + " type",
                "ggml type ids are 0..42", "unknown ggml type {} (0x{:x})", info.type, info.type);
  } else if (type->removed()) {
    sink.report(Code::RemovedTensorType, file_index.type_offset_of_tensor(index), 4, path + " type",
                "re-quantize the tensor with a current type",
                "ggml type {} ({}) was removed from ggml", info.type, type->name);
  } else if (type->recent()) {
    sink.report(Code::NewTensorType, file_index.type_offset_of_tensor(index), 4, path + " type", "",
                "ggml type {} ({}) is recent: older runtimes reject the file", info.type,
                type->name);
  }
  if (!dims_ok) return;
  std::uint64_t elements = 1;
  for (std::uint32_t d = 0; d < kMaxDims && !has_zero_dim(dims); ++d) {
    if (!checked_mul(elements, dims[d], elements) || elements >= kInt64Limit) {
      sink.report(Code::ElementCountOverflow, file_index.dims_offset(index),
                  static_cast<std::uint64_t>(shown) * dim_width, path + " dims",
                  "ggml 2026-08 accepts dims whose product wraps to 0 as an empty tensor",
                  "element count {} x {} x {} x {} does not fit in 63 bits", dims[0], dims[1],
                  dims[2], dims[3]);
      return;
    }
  }
  if (type == nullptr || type->removed()) return;
  if (dims[0] % type->block_size != 0) {
    sink.report(Code::RowNotBlockMultiple, file_index.dims_offset(index), dim_width,
                path + " dims[0]", "", "dims[0] is {}, not a multiple of the {} block size {}",
                dims[0], type->name, type->block_size);
    return;
  }
  if (!layout.tensor(file_index, index)) {
    sink.report(Code::ByteSizeOverflow, file_index.dims_offset(index),
                static_cast<std::uint64_t>(shown) * dim_width, path + " dims",
                "the element count fits but the byte size does not (CVE-2026-33298)",
                "byte size of {} x {} x {} x {} {} (padded to {}) overflows 64 bits", dims[0],
                dims[1], dims[2], dims[3], type->name, layout.alignment);
  }
}

}  // namespace

void check_tensor_infos(const FileIndex& index, const DataLayout& layout, Sink& sink) {
  const auto name_of = [&index](std::size_t i) { return c_string_prefix(index.name(i)); };
  DuplicateFinder seen(index.tensors.size());
  constexpr std::size_t kAhead = 8;
  for (std::size_t i = 0; i < index.tensors.size(); ++i) {
    if (i + kAhead < index.tensors.size()) seen.prefetch(name_of(i + kAhead));
    const std::string_view name = index.name(i);
    check_name(index, i, name, sink);
    check_shape_and_type(index, layout, i, name, sink);
    // Names are C strings in ggml: "a\0b" and "a\0c" are the same tensor there.
    if (const auto earlier = seen.insert(c_string_prefix(name), i, name_of)) {
      sink.report(Code::DuplicateTensorName, index.tensors[i].name_offset,
                  index.size_width() + name.size(), tensor_path(i, name) + " name",
                  "lookups by name become ambiguous",
                  "tensor name \"{}\" already used by tensor[{}]{}", escape(name), *earlier,
                  index.name(*earlier) == name
                      ? ""
                      : " (the names are equal up to a NUL; ggml compares them as C strings)");
    }
  }
}

}  // namespace ggufcheck::detail
