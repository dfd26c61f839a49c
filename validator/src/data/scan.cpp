#include "data/scan.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include "ggufcheck/format.hpp"

namespace ggufcheck::detail {
namespace {

constexpr std::uint32_t kQ8_1 = 9;
constexpr std::uint32_t kF64 = 28;
constexpr std::uint32_t kMxfp4 = 39;
constexpr std::uint32_t kNvfp4 = 40;

bool plain_float(std::uint32_t type) {
  return type == 0 || type == 1 || type == 28 || type == 30;
}

// Where a field lies in its block, and how wide it is (quant-blocks.md's tables).
struct FieldPlace {
  std::uint32_t offset;
  std::uint32_t width;
};

FieldPlace field_place(std::uint32_t type, DataField field, std::uint8_t sub) {
  switch (field) {
    case DataField::None: break;
    case DataField::Element: return {0, type == 0 ? 4U : type == 28 ? 8U : 2U};
    case DataField::D:
      switch (type) {
        case 10: return {80, 2};   // q2_K: d after scales and qs
        case 11: return {108, 2};  // q3_K
        case 14: return {208, 2};  // q6_K
        case 15: return {0, 4};    // q8_K: an f32
        case 34: return {52, 2};   // tq1_0
        case 35: return {64, 2};   // tq2_0
        default: return {0, 2};
      }
    case DataField::M: return {2, 2};
    case DataField::Dmin: return {type == 10 ? 82U : 2U, 2};
    case DataField::E: return {0, 1};
    case DataField::HiddenScale: return {48, 8};  // iq1_m: the four u16 words of scales[]
    case DataField::SubScale: return {sub, 1};
  }
  return {0, 0};
}

std::string field_name(DataField field, std::uint8_t sub) {
  switch (field) {
    case DataField::None: break;
    case DataField::Element: return "element";
    case DataField::D: return "d";
    case DataField::M: return "m";
    case DataField::Dmin: return "dmin";
    case DataField::E: return "e";
    case DataField::HiddenScale: return "the scale in scales[]";
    case DataField::SubScale: return fmt::format("d[{}]", sub);
  }
  return "?";
}

// A non-finite value as "nan (0x7e00)", "-inf (0xfc00)": the kind from the bits, and the bits as
// stored, so that a writer author can find them.
std::string value_text(std::uint32_t type, DataField field, std::uint64_t bits) {
  if (field == DataField::E) return fmt::format("0x{:02x} (the E8M0 NaN)", bits);
  std::uint64_t sign = 0;
  std::uint64_t magnitude = 0;
  std::uint64_t inf = 0;
  int digits = 4;
  if (type == 0 || (type == 15 && field == DataField::D)) {
    sign = bits >> 31;
    magnitude = bits & 0x7FFFFFFFU;
    inf = 0x7F800000U;
    digits = 8;
  } else if (type == 28) {
    sign = bits >> 63;
    magnitude = bits & 0x7FFFFFFFFFFFFFFFULL;
    inf = 0x7FF0000000000000ULL;
    digits = 16;
  } else if (type == 30) {
    sign = bits >> 15;
    magnitude = bits & 0x7FFFU;
    inf = 0x7F80U;
  } else {  // f16: the element of an f16 tensor and every f16 scale
    sign = bits >> 15;
    magnitude = bits & 0x7FFFU;
    inf = 0x7C00U;
  }
  if (magnitude < inf) {
    // An f64 beyond the float range: llama.cpp checks f64 through a float, where it is inf.
    double value = 0;
    std::memcpy(&value, &bits, sizeof value);
    return fmt::format("{:g} (0x{:0{}x}), {}inf as a float", value, bits, digits, sign ? "-" : "+");
  }
  const char* kind = magnitude > inf ? "nan" : (sign ? "-inf" : "+inf");
  return fmt::format("{} (0x{:0{}x})", kind, bits, digits);
}

std::string kind_counts(const DataTally& t) {
  if (t.inf == 0) return "NaN";
  if (t.nan == 0) return "infinite";
  return fmt::format("{} NaN, {} infinite", t.nan, t.inf);
}

}  // namespace

DataScan::DataScan(const FileIndex& index, const DataLayout& layout, const Options& options,
                   std::optional<std::uint64_t> available)
    : index_(index), options_(options) {
  for (std::size_t i = 0; i < index.tensors.size(); ++i) {
    const auto extent = layout.tensor(index, i);
    const TensorTypeInfo* info = tensor_type(index.tensors[i].type);
    if (!extent || !extent->begin || extent->nbytes == 0 || info == nullptr || info->removed()) {
      continue;
    }
    std::uint64_t end = 0;
    if (!checked_add(*extent->begin, extent->nbytes, end) ||
        extent->nbytes % info->type_size != 0 || (available && end > *available)) {
      continue;
    }
    Target t;
    t.begin = *extent->begin;
    t.nbytes = extent->nbytes;
    t.tensor = static_cast<std::uint32_t>(i);
    t.type_size = info->type_size;
    t.type = static_cast<std::uint8_t>(info->id);
    targets_.push_back(t);
  }
  // File order; a tensor overlapping the one before is not read (it fails GGUF4002).
  if (!std::is_sorted(targets_.begin(), targets_.end(),
                      [](const Target& a, const Target& b) { return a.begin < b.begin; })) {
    std::stable_sort(targets_.begin(), targets_.end(),
                     [](const Target& a, const Target& b) { return a.begin < b.begin; });
  }
  std::uint64_t reach = 0;
  std::size_t kept = 0;
  for (const Target& t : targets_) {
    if (t.begin < reach) continue;
    reach = t.begin + t.nbytes;
    targets_[kept++] = t;
  }
  targets_.resize(kept);
  for (const Target& t : targets_) total_ += t.nbytes;  // disjoint ranges of one file: no wrap
}

DataScan::~DataScan() = default;

bool DataScan::has_data(const FileIndex& index, const DataLayout& layout) {
  return !cannot_run(index, layout);
}

std::optional<std::string_view> DataScan::cannot_run(const FileIndex& index,
                                                     const DataLayout& layout) {
  if (!index.tensors_complete) return "the tensor infos were not all read";
  if (!layout.data_start) return "the data section's start is not known";
  if (index.endian != Endian::Little) {
    return "the file is big-endian, and the data check reads little-endian tensor data only";
  }
  return std::nullopt;
}

bool DataScan::cancelled() const {
  return options_.data.cancel != nullptr && options_.data.cancel->load(std::memory_order_relaxed);
}

WorkerPool& DataScan::pool() {
  if (!pool_) pool_ = std::make_unique<WorkerPool>(options_.data.threads);
  return *pool_;
}

std::uint64_t DataScan::piece_blocks(const Target& t) {
  return std::max<std::uint64_t>(1, kPieceBytes / t.type_size);
}

void DataScan::scan_piece(const Piece& piece) {
  Target& t = targets_[piece.target];
  current_.store(piece.target, std::memory_order_relaxed);
  const BlockScan scan = scan_blocks(t.type, piece.data, piece.blocks);
  const bool bad = scan.non_finite.count != 0 || scan.nvfp4_scale.count != 0;
  // Set once per tensor, read by every piece of it: atomic accesses to the flag (builtins, as
  // libc++ 14, the OSS-Fuzz build's, has no std::atomic_ref).
  if (scan.nonzero && !__atomic_load_n(&t.nonzero, __ATOMIC_RELAXED)) {
    __atomic_store_n(&t.nonzero, true, __ATOMIC_RELAXED);
  }
  if (bad) {
    const std::lock_guard lock(results_mutex_);
    {
      // merge() takes the other run's start relative to this one's: the tensor's first block.
      tallies_[piece.target].merge(scan, piece.first_block);
    }
  }
  done_.fetch_add(piece.blocks * t.type_size, std::memory_order_relaxed);
}

void DataScan::progress_now() {
  if (!options_.data.progress) return;
  DataProgress p;
  p.done = scanned();
  p.total = total_;
  const std::size_t at = current_.load(std::memory_order_relaxed);
  if (at < targets_.size()) p.tensor = escape(index_.name(targets_[at].tensor), 60);
  options_.data.progress(p);
}

void DataScan::tick() {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_progress_ < std::chrono::milliseconds(200)) return;
  last_progress_ = now;
  progress_now();
}

void DataScan::scan_input(const Input& input) {
  // A tensor whose bytes run past the end of the input is not read (GGUF4003 fails the file);
  // the others are, whatever else is wrong with the file.
  std::erase_if(targets_, [&](const Target& t) {
    return t.nbytes > input.size() - std::min(t.begin, input.size());
  });
  total_ = 0;
  for (const Target& t : targets_) total_ += t.nbytes;
  if (targets_.empty()) {
    progress_now();
    return;
  }
  // Pieces are numbered across all tensors in file order; piece k of the scan is found in the
  // running sum of each tensor's piece count (one entry per tensor, nothing per piece).
  std::vector<std::uint64_t> first_piece(targets_.size() + 1, 0);
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    const Target& t = targets_[i];
    const std::uint64_t blocks = t.nbytes / t.type_size;
    const std::uint64_t per = piece_blocks(t);
    first_piece[i + 1] = first_piece[i] + (blocks + per - 1) / per;
  }
  const std::uint64_t pieces = first_piece.back();
  const bool use_pread = options_.data.read == DataCheck::Read::Pread && input.mapped_fd() >= 0;
  const auto piece_at = [&](std::uint64_t k) {
    Piece piece{};
    const auto it = std::upper_bound(first_piece.begin(), first_piece.end(), k);
    piece.target = static_cast<std::size_t>(it - first_piece.begin()) - 1;
    const Target& t = targets_[piece.target];
    const std::uint64_t per = piece_blocks(t);
    piece.first_block = (k - first_piece[piece.target]) * per;
    piece.blocks = std::min(per, t.nbytes / t.type_size - piece.first_block);
    return piece;
  };
  const auto begin_of = [&](const Piece& piece) {
    const Target& t = targets_[piece.target];
    return t.begin + piece.first_block * t.type_size;
  };

  // Pages behind the scan are given back at a frontier: below the first piece still being read.
  // Not per piece: the kernel maps the pages around a fault ("fault-around", up to 64 KiB), so
  // a piece's first read maps pages of the piece before it again after they were given back,
  // and those would stay; no read happens below the lowest piece in flight, so what lies more
  // than kFaultAround below it is never mapped again.
  constexpr std::uint64_t kFaultAround = std::uint64_t{2} << 20;
  std::mutex next_mutex;
  std::uint64_t next = 0;
  std::vector<std::uint64_t> in_flight;  // at most one per thread
  static const auto kPage = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::uint64_t released = targets_.front().begin / kPage * kPage;
  const auto finish = [&](std::uint64_t k) {  // under next_mutex
    in_flight.erase(std::find(in_flight.begin(), in_flight.end(), k));
    if (use_pread || input.mapped_fd() < 0) return;
    const std::uint64_t lowest =
        in_flight.empty() ? next : *std::min_element(in_flight.begin(), in_flight.end());
    std::uint64_t below = input.size();
    if (lowest < pieces) {
      const std::uint64_t begin = begin_of(piece_at(lowest));
      below = begin > kFaultAround ? (begin - kFaultAround) / kPage * kPage : 0;
    }
    if (below > released) {
      input.release(released, below - released);
      released = below;
    }
  };

  // Read-ahead for a file that is not in the page cache: the scan reads it front to back.
  const std::uint64_t data_end = targets_.back().begin + targets_.back().nbytes;
  if (use_pread) {
    input.advise_sequential_reads(targets_.front().begin, data_end - targets_.front().begin);
  } else {
    input.advise_sequential(targets_.front().begin, data_end - targets_.front().begin);
  }

  const std::function<void(unsigned)> job = [&](unsigned) {
    std::vector<std::uint8_t> buffer;
    if (use_pread) buffer.resize(static_cast<std::size_t>(kPieceBytes + 512));
    for (;;) {
      if (cancelled()) return;
      std::uint64_t k = 0;
      Piece piece{};
      bool hole = false;
      {
        const std::lock_guard lock(next_mutex);
        if (next >= pieces) return;
        k = next++;
        in_flight.push_back(k);
        piece = piece_at(k);
        // A piece wholly in a hole of a sparse file is zeros: finite everywhere, nothing to read.
        const std::uint64_t begin = begin_of(piece);
        const std::uint64_t end = begin + piece.blocks * targets_[piece.target].type_size;
        hole = input.mapped_fd() >= 0 && input.next_data(begin, end) >= end;
      }
      const Target& t = targets_[piece.target];
      const std::uint64_t begin = begin_of(piece);
      const std::uint64_t length = piece.blocks * t.type_size;
      Bytes bytes;
      if (hole) {
        done_.fetch_add(length, std::memory_order_relaxed);
      } else if (use_pread) {
        Input::ReadFailure failure;
        if (!input.read_into(begin, std::span(buffer.data(), static_cast<std::size_t>(length)),
                             failure)) {
          throw std::runtime_error(
              fmt::format("cannot read the tensor data at 0x{:x}: {}", failure.at, failure.why));
        }
        piece.data = buffer.data();
        scan_piece(piece);
      } else if (input.view(begin, length, bytes)) {  // else past the input: not a target
        piece.data = bytes.data();
        scan_piece(piece);
      }
      {
        const std::lock_guard lock(next_mutex);
        finish(k);
      }
      if (pool().inline_jobs()) tick();  // no thread waits to tick for us
    }
  };
  pool().run(job, options_.data.progress ? std::function<void()>([this] { tick(); }) : nullptr);
  if (!cancelled()) {
    for (Target& t : targets_) t.seen = t.nbytes;
  }
  progress_now();
}

bool DataScan::feed(std::uint64_t at, Bytes bytes) {
  if (cancelled()) return false;
  const std::uint64_t end = at + bytes.size();
  std::vector<Piece> pieces;
  while (stream_target_ < targets_.size()) {
    Target& t = targets_[stream_target_];
    const std::uint64_t target_end = t.begin + t.nbytes;
    if (t.begin >= end) break;
    if (target_end <= at) {  // wholly before this chunk and not seen: never delivered
      ++stream_target_;
      carry_.clear();
      continue;
    }
    std::uint64_t pos = t.begin + t.seen;  // the next byte of the tensor to scan
    if (!carry_.empty()) {
      // The rest of a block begun in the last chunk.
      const std::uint64_t want = t.type_size - carry_.size();
      const std::uint64_t take = std::min<std::uint64_t>(want, end - at);
      carry_.insert(carry_.end(), bytes.data(), bytes.data() + take);
      if (carry_.size() < t.type_size) break;  // the chunk ended inside the block again
      scan_piece(Piece{stream_target_, t.seen / t.type_size, 1, carry_.data()});
      t.seen += t.type_size;
      carry_.clear();
      pos = t.begin + t.seen;
    }
    if (pos < at) {  // bytes of this tensor went by unseen (cannot happen: the stream is whole)
      ++stream_target_;
      continue;
    }
    const std::uint64_t avail = std::min(target_end, end) - pos;
    const std::uint64_t blocks = avail / t.type_size;
    const std::uint64_t per = piece_blocks(t);
    for (std::uint64_t b = 0; b < blocks; b += per) {
      pieces.push_back(Piece{stream_target_, t.seen / t.type_size + b, std::min(per, blocks - b),
                             bytes.data() + (pos - at) + b * t.type_size});
    }
    t.seen += blocks * t.type_size;
    if (t.seen == t.nbytes) {
      ++stream_target_;
      continue;
    }
    // The chunk ends inside a block: keep its first bytes for the next chunk.
    const std::uint64_t rest = pos + blocks * t.type_size;
    carry_.assign(bytes.data() + (rest - at), bytes.data() + bytes.size());
    break;
  }
  run_pieces(pieces);
  tick();
  return !cancelled();
}

void DataScan::run_pieces(const std::vector<Piece>& pieces) {
  if (pieces.empty()) return;
  if (pieces.size() == 1) {
    scan_piece(pieces.front());
    return;
  }
  std::atomic<std::size_t> next{0};
  pool().run([&](unsigned) {
    for (std::size_t k = next.fetch_add(1); k < pieces.size(); k = next.fetch_add(1)) {
      scan_piece(pieces[k]);
    }
  });
}

std::uint64_t DataScan::completed() const {
  std::uint64_t bytes = 0;
  for (const Target& t : targets_) {
    if (t.seen == t.nbytes) bytes += t.nbytes;  // disjoint ranges of one file: no wrap
  }
  return bytes;
}

void DataScan::report(Sink& sink) const {
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    const Target& t = targets_[i];
    // A stream that ended early: the tensor's bytes are not all here (GGUF4003 says so).
    if (t.seen != t.nbytes) continue;
    const std::string_view name = index_.name(t.tensor);
    const Field field = Field::tensor(t.tensor, name) + " data";
    const TensorTypeInfo* info = tensor_type(t.type);
    const std::uint64_t blocks = t.nbytes / t.type_size;
    if (t.type == kQ8_1) {
      sink.report(Code::UncheckableTensorType, t.begin, t.nbytes, field,
                  "Q8_1 is the intermediate format of ggml's dot products, not a storage type: "
                  "store Q8_0 instead",
                  "tensor[{}] \"{}\" has type Q8_1, which llama.cpp's data check refuses "
                  "(--check-tensors fails the load) whatever its bytes",
                  t.tensor, escape(name));
    }
    if (const auto it = tallies_.find(i); it != tallies_.end()) {
      const BlockScan& scan = it->second;
      if (const DataTally& bad = scan.non_finite; bad.count != 0) {
        const FieldPlace place = field_place(t.type, bad.field, bad.sub);
        const std::uint64_t offset = t.begin + bad.first * t.type_size + place.offset;
        if (plain_float(t.type)) {
          sink.report(Code::NonFiniteElement, offset, place.width, field,
                      "NaN or infinite weights make every result that uses them NaN: look for an "
                      "overflow in the conversion (a value beyond the target type's range becomes "
                      "inf) or NaN in the source checkpoint",
                      "{} of the {} elements of tensor[{}] \"{}\" ({}) are not finite{} ({}); "
                      "the first is element {} at 0x{:x}: {}",
                      bad.count, blocks, t.tensor, escape(name), info->name,
                      t.type == kF64 ? " as llama.cpp reads them (through a float)" : "",
                      kind_counts(bad), bad.first, offset, value_text(t.type, bad.field, bad.bits));
        } else if (t.type == kMxfp4) {
          sink.report(Code::NonFiniteScale, offset, place.width, field,
                      "0xff is the E8M0 code for NaN: every element of the block decodes to NaN "
                      "(or 2^127, by decoder); the quantizer met NaN input or divided by zero",
                      "{} of the {} blocks of tensor[{}] \"{}\" (MXFP4) have the scale byte "
                      "e = 0xff, the E8M0 NaN; the first is block {} at 0x{:x}",
                      bad.count, blocks, t.tensor, escape(name), bad.first, offset);
        } else {
          sink.report(Code::NonFiniteScale, offset, place.width, field,
                      "a NaN or infinite block scale makes the whole block decode to NaN; the "
                      "quantizer met NaN or infinite input weights (or an overflow): quantize "
                      "again from a clean source",
                      "{} of the {} blocks of tensor[{}] \"{}\" ({}) have a non-finite scale ({}); "
                      "the first is block {}, {} at 0x{:x}: {}",
                      bad.count, blocks, t.tensor, escape(name), info->name, kind_counts(bad),
                      bad.first, field_name(bad.field, bad.sub), offset,
                      value_text(t.type, bad.field, bad.bits));
        }
      }
      if (const DataTally& odd = scan.nvfp4_scale; odd.count != 0 && t.type == kNvfp4) {
        const FieldPlace place = field_place(t.type, odd.field, odd.sub);
        const std::uint64_t offset = t.begin + odd.first * t.type_size + place.offset;
        sink.report(Code::AmbiguousNvfp4Scale, offset, place.width, field,
                    "UE4M3 scales are 0x00..0x7e: ggml's CPU decoder reads 0x7f as 0 and ignores "
                    "bit 7, its CUDA path reads bit 7 as a sign, so one file decodes differently "
                    "by backend; ggml's own quantizer never writes these bytes",
                    "{} of the {} blocks of tensor[{}] \"{}\" (NVFP4) have a scale byte that "
                    "decoders read differently (0x7f, the UE4M3 NaN, or bit 7 set); the first is "
                    "block {}, {} at 0x{:x}: 0x{:02x}",
                    odd.count, blocks, t.tensor, escape(name), odd.first,
                    field_name(odd.field, odd.sub), offset, odd.bits);
      }
    }
    if (!t.nonzero) {
      sink.report(Code::AllZeroTensor, t.begin, t.nbytes, field,
                  "a converter that created the tensor but never wrote its values (or a download "
                  "that left a hole) gives zeros; an all-zero weight makes its layer output "
                  "nothing",
                  "every one of the {} of tensor[{}] \"{}\" ({}) is zero", byte_count(t.nbytes),
                  t.tensor, escape(name), info->name);
    }
  }
}

}  // namespace ggufcheck::detail
