// How much of a remote file to ask for next (pure arithmetic, unit-tested on its own).
//
// The first request asks for kFirstRequest bytes. After each one the reader runs over the bytes
// so far; while it stops short of the end of the tensor infos for want of bytes, the next request
// ends at
//
//   max(prediction + kLookahead, kept * 3 / 2), never past the file's end or the metadata limit,
//   nor past max(kept * kMaxGrowth, kept + kMaxStep),
//
// where the prediction is what the reader knows where it stopped: the end of the field or of a
// fixed-size array exactly (FileIndex::shortfall), the end of a string array or of the tensor infos
// extrapolated from the elements read so far, plus a sixteenth of the extrapolated rest. So the
// kept bytes grow by half at least (at most about 16 requests up to 512 MiB, the most kept:
// StreamLimits::metadata_limit), and the last request
// ends at most kLookahead past the reader's prediction, or half the bytes already read past them
// when the prediction is closer than that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "index/file_index.hpp"

namespace ggufcheck::detail {

inline constexpr std::uint64_t kFirstRequest = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kLookahead = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kMaxGrowth = 8;
inline constexpr std::uint64_t kMaxStep = std::uint64_t{16} << 20;

// Where the next request ends, for a reader that stopped on a prefix of `kept` bytes with a
// shortfall (index.shortfall.needed != 0): always past `kept`, at most `limit` (the most kept of
// a file's metadata) and the file's size.
[[nodiscard]] std::uint64_t next_request_end(const FileIndex& index, std::uint64_t kept,
                                             std::uint64_t file_size, std::uint64_t limit);

// The padding after the kept bytes, fetched without the tensor data between: the probes'
// ranges merged into spans when less than kPaddingGap apart, at most kPaddingRequests spans of
// kPaddingBytes in all; the probes of the spans not fetched are `unchecked`.
inline constexpr std::uint64_t kPaddingGap = std::uint64_t{64} << 10;
inline constexpr std::size_t kPaddingRequests = 16;
inline constexpr std::uint64_t kPaddingBytes = std::uint64_t{1} << 20;
struct PaddingSpan {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};
struct PaddingPlan {
  std::vector<PaddingSpan> spans;
  std::size_t unchecked = 0;          // probes left out
  std::uint64_t unchecked_bytes = 0;  // their bytes
  std::uint64_t first_unchecked = 0;  // the begin of the first one left out
};
[[nodiscard]] PaddingPlan plan_padding(const std::vector<StreamTail::Probe>& probes);

}  // namespace ggufcheck::detail
