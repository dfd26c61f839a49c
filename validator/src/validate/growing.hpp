// Reading an input in growing pieces, as a stream (input.cpp) and a remote file (remote/) are
// read: the bytes kept in a buffer that grows in place, the reader run over them so far (a
// probe), and the pass over the bytes after them (their padding probes answered and, with the
// data check, their tensor data scanned), so that the report is that of the whole file while
// memory holds only the metadata and a window.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ggufcheck/bytes.hpp"
#include "ggufcheck/validate.hpp"
#include "index/file_index.hpp"
#include "index/layout.hpp"

namespace ggufcheck::detail {

class DataScan;  // data/scan.hpp

// The reader over the bytes kept so far, with the run's options (its limits decide where it
// stops); findings are counted, not kept. tail: on a prefix of a file whose size is known (a
// remote file), the bytes after it, so that the reader judges counts by the file and records
// where it ran short of bytes (FileIndex::shortfall).
struct Probe {
  bool tensors_complete = false;
  std::uint64_t stop = 0;  // how far the reader got
  FileIndex index;
  DataLayout layout;
};
[[nodiscard]] Probe probe_input(Bytes bytes, const Options& options,
                                const StreamTail* tail = nullptr);

// The places past `from` where the layout check will look for padding (sorted by begin, one per
// begin), each still to be answered.
[[nodiscard]] std::vector<StreamTail::Probe> tail_probes(const Probe& probe, std::uint64_t from);

// The bytes after the kept ones as they pass: each padding probe gets the first non-zero byte at
// or after its begin, and with a data scan, the bytes go through it. Bytes come in file order;
// a call may start past where the previous one ended (a remote file's padding, fetched range by
// range without the tensor data between), and a probe is answered only from bytes that passed.
class TailPass {
 public:
  TailPass(StreamTail& tail, DataScan* scan) : tail_(tail), scan_(scan) {}
  // The bytes [at, at + bytes.size()). False once the data scan was cancelled.
  bool feed(std::uint64_t at, Bytes bytes);

 private:
  StreamTail& tail_;
  DataScan* scan_;
  std::vector<std::size_t> pending_;  // probes begun, not yet answered
  std::size_t next_ = 0;              // the first probe not begun
};

// The report with one more error (GGUF0002) at `offset` saying what was not read: always an
// error, whatever the overrides, since bytes that were not read must never pass. Kept within
// max_findings (Limits::max_findings): a report holding that many already drops (and counts)
// its last finding to keep this one, which says why the file fails.
[[nodiscard]] Report with_limit_finding(Report report, std::uint64_t max_findings,
                                        std::uint64_t offset, std::string message,
                                        std::string hint);

}  // namespace ggufcheck::detail
