// Checks of the data layout: padding, where each tensor's data lies, and what follows it.
#include <algorithm>

#include "checks/checks.hpp"

namespace ggufcheck::detail {
namespace {

void report_nonzero_padding(std::uint64_t at, std::uint8_t value, std::uint64_t end,
                            const Field& path, Sink& sink) {
  sink.report(Code::NonzeroPadding, at, end - at, path,
              "padding bytes must be 0x00; readers ignore them, so they can hide data",
              "padding byte at 0x{:x} is 0x{:02x}", at, value);
}

// Reports non-zero bytes in [begin, end) once, at the first one. The input hands the bytes over
// in bounded chunks (holes of a sparse file without reading them); past the bytes kept of a
// stream, the answer was recorded while the stream passed (StreamTail).
void check_zero_padding(const FileIndex& index, std::uint64_t begin, std::uint64_t end,
                        const Field& path, Sink& sink) {
  end = std::min(end, index.size());
  const std::uint64_t kept = index.input.size();
  if (const auto nonzero = index.input.first_nonzero(begin, std::min(end, kept))) {
    report_nonzero_padding(nonzero->first, nonzero->second, end, path, sink);
    return;
  }
  if (end > kept && index.tail != nullptr) {
    if (const auto* probe = index.tail->first_nonzero(std::max(begin, kept), end)) {
      report_nonzero_padding(probe->nonzero, probe->value, end, path, sink);
    }
  }
}

// A tensor's data inside the data section, relative to its start.
struct Extent {
  std::uint64_t begin, end;
  std::size_t index;
};

// The overlap and padding checks over the extents in order of (begin, index): each extent's
// padding reaches the next multiple of the alignment or the next extent's begin, whichever is
// first, so an extent is finished when the next one arrives.
class ExtentWalk {
 public:
  ExtentWalk(const FileIndex& index, std::uint64_t data_start, std::uint64_t alignment, Sink& sink)
      : file_index_(index), data_start_(data_start), alignment_(alignment), sink_(sink) {}

  void add(const Extent& e) {
    if (pending_) finish(e.begin);
    if (count_ > 0 && e.begin < max_end_) {
      sink_.report(Code::OverlappingTensors, file_index_.data_offset_offset(e.index), 8,
                   tensor_path(e.index, file_index_.name(e.index)) + " offset", "",
                   "tensor data 0x{:x}..0x{:x} overlaps tensor[{}] \"{}\" (ends at 0x{:x})",
                   e.begin, e.end, max_index_, escape(file_index_.name(max_index_)), max_end_);
    }
    if (e.end > max_end_ || count_ == 0) {
      max_end_ = e.end;
      max_index_ = e.index;
    }
    ++count_;
    last_ = e;
    pending_ = true;
  }
  void end() {
    if (pending_) finish(UINT64_MAX);
  }
  [[nodiscard]] std::uint64_t max_end() const { return max_end_; }

 private:
  void finish(std::uint64_t next_begin) {
    pending_ = false;
    std::uint64_t pad_end = 0;
    (void)checked_round_up(last_.end, alignment_, pad_end);  // end <= data size: no overflow
    pad_end = std::min(pad_end, next_begin);
    if (pad_end > last_.end) {
      check_zero_padding(file_index_, data_start_ + last_.end, data_start_ + pad_end,
                         tensor_path(last_.index, file_index_.name(last_.index)) + " padding",
                         sink_);
    }
  }

  const FileIndex& file_index_;
  std::uint64_t data_start_;
  std::uint64_t alignment_;
  Sink& sink_;
  std::uint64_t max_end_ = 0;
  std::size_t max_index_ = 0;
  std::size_t count_ = 0;
  Extent last_{0, 0, 0};
  bool pending_ = false;
};

}  // namespace

void check_layout(const FileIndex& file_index, const DataLayout& layout, Sink& sink) {
  if (!file_index.tensors_complete || !layout.data_start) return;
  const std::uint64_t size = file_index.size();
  const std::uint64_t alignment = layout.alignment;
  const std::uint64_t data_start = *layout.data_start;
  if (file_index.tensors.empty()) {
    // gguf-py ends such a file after the last pair; ggml's C writer pads it: both are valid.
    check_zero_padding(file_index, file_index.infos_end, data_start, "padding", sink);
    if (size > data_start) {
      sink.report(Code::TrailingBytes, data_start, size - data_start, "trailing", "",
                  "{} bytes after the end of the file's content at 0x{:x}", size - data_start,
                  data_start);
    }
    return;
  }
  if (data_start > size) {
    sink.report(Code::TruncatedBeforeData, file_index.infos_end, size - file_index.infos_end,
                "padding", "", "file ends at 0x{:x}, before the tensor data section at 0x{:x}",
                size, data_start);
    return;
  }
  check_zero_padding(file_index, file_index.infos_end, data_start, "padding", sink);

  const std::uint64_t data_size = size - data_start;
  // The extents the overlap and padding checks look at: in bounds and not empty.
  const auto placed = [&](std::size_t i) -> std::optional<Extent> {
    const auto extent = layout.tensor(file_index, i);
    if (!extent || extent->nbytes == 0 || extent->data_offset > data_size ||
        extent->nbytes > data_size - extent->data_offset) {
      return std::nullopt;
    }
    return Extent{extent->data_offset, extent->data_offset + extent->nbytes, i};
  };
  bool all_known = true;
  bool all_in_bounds = true;
  // Extents in tensor-info order are almost always in offset order too; only when they are not
  // are they gathered and sorted (the common case keeps nothing per tensor).
  bool in_order = true;
  std::uint64_t last_begin = 0;
  // Where the next tensor should start: after the previous one (relative), and at the running
  // sum of padded sizes (absolute). A tensor is reported only when it matches neither, so one
  // wrong offset or one gap gives one finding, not one per tensor after it.
  // (Plain value + flag pairs: g++ 12 -O3 misreports std::optional<uint64_t> as uninitialised.)
  std::uint64_t after_previous = 0;
  bool after_previous_known = true;
  std::uint64_t running = 0;
  bool running_known = true;
  for (std::size_t i = 0; i < file_index.tensors.size(); ++i) {
    const std::uint64_t data_offset = file_index.data_offset(i);
    const std::uint64_t offset_at = file_index.data_offset_offset(i);
    const auto path = [&] { return tensor_path(i, file_index.name(i)) + " offset"; };
    if (data_offset % alignment != 0) {
      sink.report(Code::MisalignedOffset, offset_at, 8, path(),
                  "offsets are relative to the data section and padded to general.alignment",
                  "offset 0x{:x} is not a multiple of alignment {}", data_offset, alignment);
    }
    const auto tsize = layout.tensor(file_index, i);
    if (!tsize) {
      all_known = false;
      after_previous_known = false;
      running_known = false;
      continue;
    }
    if (after_previous_known && data_offset != after_previous &&
        !(running_known && data_offset == running)) {
      sink.report(Code::NonContiguousLayout, offset_at, 8, path(),
                  "ggml requires tensors back to back in tensor-info order, each padded to the "
                  "alignment",
                  "offset 0x{:x} is not the end of the previous tensor's padded data (0x{:x})",
                  data_offset, after_previous);
    }
    // Either sum can wrap (CVE-2025-53630): the end of this tensor, or the running sum of the
    // padded sizes so far; one finding per tensor says so.
    const bool running_wraps = running_known && !checked_add(running, tsize->padded, running);
    if (running_wraps) running_known = false;
    std::uint64_t next = 0;
    const bool end_wraps = !checked_add(data_offset, tsize->padded, next);
    after_previous = next;
    after_previous_known = !end_wraps;
    if (running_wraps || end_wraps) {
      sink.report(Code::ByteSizeOverflow, offset_at, 8, path(),
                  "CVE-2025-53630: a sum of padded sizes that wraps passes a bounds check",
                  "{} overflows 64 bits (padded size 0x{:x})",
                  end_wraps ? fmt::format("offset 0x{:x} + padded size", data_offset)
                            : std::string("the running sum of padded tensor sizes"),
                  tsize->padded);
    }
    if (data_offset > data_size || tsize->nbytes > data_size - data_offset) {
      std::uint64_t file_offset = 0;
      const std::string where = checked_add(data_start, data_offset, file_offset)
                                    ? fmt::format("file offset 0x{:x}", file_offset)
                                    : std::string("an offset beyond 64 bits");
      sink.report(Code::TensorOutOfBounds, offset_at, 8, path(),
                  "the file is truncated, or the offset or dims are wrong",
                  "tensor data 0x{:x}+0x{:x} (at {}) runs past the end of the {}-byte data section",
                  data_offset, tsize->nbytes, where, data_size);
      all_in_bounds = false;
      continue;
    }
    if (tsize->nbytes != 0) {
      if (data_offset < last_begin) in_order = false;
      last_begin = data_offset;
    }
  }

  ExtentWalk walk(file_index, data_start, alignment, sink);
  if (in_order) {
    for (std::size_t i = 0; i < file_index.tensors.size(); ++i) {
      if (const auto e = placed(i)) walk.add(*e);
    }
  } else {
    std::vector<Extent> extents;
    for (std::size_t i = 0; i < file_index.tensors.size(); ++i) {
      if (const auto e = placed(i)) extents.push_back(*e);
    }
    std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.index < b.index;
    });
    for (const Extent& e : extents) walk.add(e);
  }
  walk.end();
  if (!all_known || !all_in_bounds) return;
  const std::uint64_t max_end = walk.max_end();
  std::uint64_t padded_end = 0;
  (void)checked_round_up(max_end, alignment, padded_end);
  if (data_size < padded_end) {
    sink.report(Code::MissingFinalPadding, data_start + max_end, data_size - max_end, "padding",
                "writers pad after every tensor, including the last",
                "file ends {} bytes short of the padded end of the tensor data at 0x{:x}",
                padded_end - data_size, data_start + padded_end);
  } else if (data_size > padded_end) {
    sink.report(Code::TrailingBytes, data_start + padded_end, data_size - padded_end, "trailing",
                "bytes after the data are ignored by readers and can hide content",
                "{} bytes after the end of the tensor data at 0x{:x}", data_size - padded_end,
                data_start + padded_end);
  }
}

}  // namespace ggufcheck::detail
