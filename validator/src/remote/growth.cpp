#include "remote/growth.hpp"

#include <algorithm>

namespace ggufcheck::detail {
namespace {

// a + b, at most UINT64_MAX
std::uint64_t add(std::uint64_t a, std::uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// Where `count` elements end when `walked` of them took `bytes` from `from`, with a sixteenth of
// the rest as margin (long double: the numbers are the file's, and may be absurd).
std::uint64_t extrapolate(std::uint64_t at, std::uint64_t bytes, std::uint64_t walked,
                          std::uint64_t count) {
  if (walked == 0 || count <= walked) return at;
  const long double per = static_cast<long double>(bytes) / static_cast<long double>(walked);
  const long double rest = per * static_cast<long double>(count - walked) * 17.0L / 16.0L;
  if (rest >= 1.8e19L) return UINT64_MAX;
  return add(at, static_cast<std::uint64_t>(rest));
}

}  // namespace

std::uint64_t next_request_end(const FileIndex& index, std::uint64_t kept, std::uint64_t file_size,
                               std::uint64_t limit) {
  const Shortfall& s = index.shortfall;
  std::uint64_t prediction = std::max(s.needed, add(kept, 1));
  // A string array cut short: its end from the elements walked.
  if (s.walked > 0 && s.at > s.elements_offset) {
    prediction =
        std::max(prediction, extrapolate(s.at, s.at - s.elements_offset, s.walked, s.count));
  }
  // Tensor infos cut short: their end from those read.
  if (index.metadata_complete && !index.tensors_complete && !index.tensors.empty() &&
      index.infos_end > index.tensors[0].name_offset) {
    prediction = std::max(
        prediction, extrapolate(index.infos_end, index.infos_end - index.tensors[0].name_offset,
                                index.tensors.size(), index.tensor_count));
  }
  std::uint64_t end = std::max(add(prediction, kLookahead), add(kept, kept / 2));
  // The prediction comes from the file's own numbers: one request never asks for more than
  // kMaxGrowth times what was read (or kMaxStep past it), so a claim of gigabytes is believed a
  // step at a time, each paid for by bytes the server really sent.
  const std::uint64_t step_cap = std::max(
      kept > UINT64_MAX / kMaxGrowth ? UINT64_MAX : kept * kMaxGrowth, add(kept, kMaxStep));
  end = std::min({end, step_cap, file_size, std::max(limit, add(kept, 1))});
  return std::max(end, std::min(add(kept, 1), file_size));
}

PaddingPlan plan_padding(const std::vector<StreamTail::Probe>& probes) {
  PaddingPlan plan;
  std::uint64_t bytes = 0;
  bool full = false;
  for (const StreamTail::Probe& p : probes) {
    if (p.end <= p.begin) continue;
    if (!full && !plan.spans.empty() && p.begin <= add(plan.spans.back().end, kPaddingGap)) {
      PaddingSpan& span = plan.spans.back();
      const std::uint64_t grown = std::max(span.end, p.end);
      if (bytes + (grown - span.end) <= kPaddingBytes) {
        bytes += grown - span.end;
        span.end = grown;
        continue;
      }
      full = true;
    }
    if (!full && plan.spans.size() < kPaddingRequests && p.end - p.begin <= kPaddingBytes - bytes) {
      plan.spans.push_back({p.begin, p.end});
      bytes += p.end - p.begin;
      continue;
    }
    full = true;  // the probes are in file order: the rest are left out too
    if (plan.unchecked == 0) plan.first_unchecked = p.begin;
    ++plan.unchecked;
    plan.unchecked_bytes = add(plan.unchecked_bytes, p.end - p.begin);
  }
  return plan;
}

}  // namespace ggufcheck::detail
