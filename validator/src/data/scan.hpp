// The tensor data scan (check --data): every tensor's bytes through the kernels, on every core.
// A tensor is cut into pieces of whole blocks (about 512 KiB), so one huge tensor keeps every
// core busy; pieces are handed out in file order, so the file is read front to back, and the
// pages behind each piece are given back at once, so resident memory stays a few pieces per
// thread whatever the file's size. A stream is scanned as its bytes pass (feed), chunk by chunk.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "data/kernels.hpp"
#include "index/file_index.hpp"
#include "index/layout.hpp"
#include "report/sink.hpp"
#include "util/worker_pool.hpp"

namespace ggufcheck::detail {

class DataScan {
 public:
  // The bytes a piece holds at most (fewer: a whole number of blocks). 512 KiB stays in a
  // core's L2 between the read and the kernel (bench/data.sh: faster than 256 KiB and 1 MiB).
  static constexpr std::uint64_t kPieceBytes = std::uint64_t{1} << 19;

  // The tensors to scan: those with a byte range and a checkable type, in file order; a tensor
  // that overlaps an earlier one is left out (GGUF4002 fails the file already), so nothing is
  // read twice and the work is bounded by the file's size.
  // available: the input's size when it is known before the scan (a file read whole, a remote
  // file's response): a tensor whose bytes run past it is left out before the overlap rule, so
  // that it hides no tensor it would overlap. A stream's size is known only at its end, so its
  // scan applies the overlap rule first: a tensor overlapping one that turns out to run past the
  // end (GGUF4002 and GGUF4003, both errors) is not scanned there.
  DataScan(const FileIndex& index, const DataLayout& layout, const Options& options,
           std::optional<std::uint64_t> available = std::nullopt);
  ~DataScan();
  DataScan(const DataScan&) = delete;
  DataScan& operator=(const DataScan&) = delete;

  // Whether the bytes have tensor data to scan: every tensor info read, a data section, and
  // little-endian data (the kernels read little-endian). A stream starts its scan on this.
  [[nodiscard]] static bool has_data(const FileIndex& index, const DataLayout& layout);
  // Why the scan cannot run on these bytes (the tensor infos not all read, no data section,
  // big-endian data), or nothing when it can. Other findings never stop it: each tensor with a
  // byte range inside the file is scanned.
  [[nodiscard]] static std::optional<std::string_view> cannot_run(const FileIndex& index,
                                                                  const DataLayout& layout);

  [[nodiscard]] std::uint64_t total() const { return total_; }
  [[nodiscard]] std::uint64_t scanned() const { return done_.load(std::memory_order_relaxed); }
  // The bytes of the tensors whose bytes were all seen (what the report speaks for: a stream cut
  // inside a tensor has scanned part of it, which counts here no more than in the file's scan).
  [[nodiscard]] std::uint64_t completed() const;
  [[nodiscard]] bool cancelled() const;

  // A file or a buffer read whole: every tensor's bytes from the input, through its mapping or
  // (DataCheck::Read::Pread, on a mapped file) with pread into a buffer per thread.
  void scan_input(const Input& input);
  // A stream: the bytes [at, at + bytes.size()) of the file as they pass, in order (each call
  // starts where the previous one ended). Returns false once the scan was cancelled.
  bool feed(std::uint64_t at, Bytes bytes);

  // The findings of every tensor whose bytes were all seen.
  void report(Sink& sink) const;

 private:
  struct Target {
    std::uint64_t begin = 0;   // file offset of the data
    std::uint64_t nbytes = 0;  // a whole number of blocks
    std::uint64_t seen = 0;    // bytes of whole blocks scanned so far (a stream's)
    std::uint32_t tensor = 0;
    std::uint32_t type_size = 0;
    std::uint8_t type = 0;
    bool nonzero = false;
  };
  struct Piece {
    std::size_t target;
    std::uint64_t first_block;  // from the tensor's first block
    std::uint64_t blocks;
    const std::uint8_t* data;
  };

  // The blocks of one piece: a whole number near kPieceBytes.
  [[nodiscard]] static std::uint64_t piece_blocks(const Target& t);
  void scan_piece(const Piece& piece);
  void run_pieces(const std::vector<Piece>& pieces);
  void tick();
  void progress_now();
  [[nodiscard]] WorkerPool& pool();

  const FileIndex& index_;
  const Options& options_;
  std::vector<Target> targets_;
  std::uint64_t total_ = 0;
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::size_t> current_{0};  // a target being scanned, for the progress line
  std::unique_ptr<WorkerPool> pool_;

  std::mutex results_mutex_;
  std::map<std::size_t, BlockScan> tallies_;  // targets with a bad block (few)

  // A stream's partial block at the end of the last chunk.
  std::size_t stream_target_ = 0;  // the first target not yet wholly seen
  std::vector<std::uint8_t> carry_;
  std::chrono::steady_clock::time_point last_progress_{};
};

}  // namespace ggufcheck::detail
