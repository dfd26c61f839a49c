#include "validate/remote.hpp"

#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "data/scan.hpp"
#include "remote/client.hpp"
#include "remote/growth.hpp"
#include "remote/url.hpp"
#include "validate/growing.hpp"

namespace ggufcheck {
namespace detail {
namespace {

RemoteOutcome failed(const FetchError& e) {
  RemoteOutcome outcome;
  outcome.state = e.missing ? RemoteOutcome::State::Missing : RemoteOutcome::State::Unreadable;
  outcome.why = e.message;
  outcome.hint = e.hint;
  outcome.interrupted = e.interrupted;
  outcome.status = e.status;
  outcome.deadline = e.deadline;
  return outcome;
}

RemoteOutcome unreadable(std::string why, std::string hint = {}) {
  return {RemoteOutcome::State::Unreadable, std::move(why), std::move(hint), false, "", false};
}

RemoteOutcome read_remote(const std::string& url, const Options& options, const std::string& shown,
                          Validated& out, const std::function<void()>& use,
                          const StreamLimits& limits) {
  std::string target = url;
  if (is_url(target) && (target[0] == 'h' || target[0] == 'H') &&
      (target[1] == 'f' || target[1] == 'F')) {  // hf://
    const HfMapping mapped = map_hf_url(target, hf_endpoint(options.remote));
    if (mapped.url.empty()) {
      return unreadable(fmt::format("cannot read {}: {}", shown, mapped.error),
                        "hf://OWNER/REPO/FILE or hf://OWNER/REPO@REVISION/FILE");
    }
    target = mapped.url;
  }
  HttpFile file(target, options.remote, options.data.cancel, remote_deadline(options.remote));
  GrowingBuffer buffer;
  // The kept bytes arrive in order, each request starting where the buffer ends.
  const HttpFile::Take keep = [&buffer](std::uint64_t at, Bytes bytes) {
    return at == buffer.size() && buffer.append(bytes);
  };
  const auto fetch_kept = [&](std::uint64_t end) -> std::optional<FetchError> {
    buffer.reserve(static_cast<std::size_t>(end));
    const std::size_t before = buffer.size();
    if (auto e = file.fetch(buffer.size(), end, keep)) return e;
    const std::uint64_t want = std::min(end, file.size());
    if (buffer.size() != want) {
      return FetchError{fmt::format("cannot read {}: {} bytes arrived of the {} asked for", shown,
                                    buffer.size() - before, want - before),
                        "",
                        false,
                        false,
                        {}};
    }
    return std::nullopt;
  };
  if (auto e = fetch_kept(kFirstRequest)) return failed(*e);
  const std::uint64_t size = file.size();

  // Grow until the reader reads the tensor infos whole, or stops on something the bytes it has
  // already decide (an error of the file's own), or the file ends.
  StreamTail tail;
  Probe probe;
  bool gave_up = false;
  for (;;) {
    tail.size = size - buffer.size();
    probe = {};  // one index at a time: the last one's records go before the next is read
    probe = probe_input(buffer.bytes(), options, &tail);
    if (probe.tensors_complete || probe.index.shortfall.needed == 0 || buffer.size() >= size) {
      break;
    }
    if (buffer.size() >= limits.metadata_limit) {
      gave_up = true;
      break;
    }
    const std::uint64_t next =
        next_request_end(probe.index, buffer.size(), size, limits.metadata_limit);
    if (auto e = fetch_kept(next)) return failed(*e);
  }
  const std::uint64_t kept = buffer.size();
  tail.size = size - kept;

  // After the kept bytes: with the data check, every byte through the scan and the padding
  // probes; without, the padding ranges alone, within a budget (growth.hpp).
  std::unique_ptr<DataScan> scan;
  PaddingPlan plan;
  if (probe.tensors_complete && kept < size) {
    tail.probes = tail_probes(probe, kept);
    if (options.data.enabled && DataScan::has_data(probe.index, probe.layout)) {
      // The file's size is known from the response: a tensor past it hides no neighbour, as in
      // a local file's scan.
      scan = std::make_unique<DataScan>(probe.index, probe.layout, options, size);
      (void)scan->feed(0, buffer.bytes());
      TailPass pass(tail, scan.get());
      // Chunks as large as a stream's, so the scan's threads get whole pieces.
      std::vector<std::uint8_t> chunk;
      chunk.reserve(limits.data_chunk);
      std::uint64_t chunk_at = kept;
      bool going = true;
      const auto flush = [&] {
        going = going && pass.feed(chunk_at, Bytes(chunk.data(), chunk.size()));
        chunk_at += chunk.size();
        chunk.clear();
        return going;
      };
      const HttpFile::Take take = [&](std::uint64_t, Bytes bytes) {
        while (!bytes.empty()) {
          const std::size_t n = std::min(bytes.size(), limits.data_chunk - chunk.size());
          chunk.insert(chunk.end(), bytes.data(), bytes.data() + n);
          bytes = bytes.subspan(n);
          if (chunk.size() == limits.data_chunk && !flush()) return false;
        }
        return true;
      };
      if (auto e = file.fetch(kept, size, take)) return failed(*e);
      if (!chunk.empty()) (void)flush();
    } else {
      plan = plan_padding(tail.probes);
      TailPass pass(tail, nullptr);
      std::vector<std::uint8_t> bytes;
      for (const PaddingSpan& span : plan.spans) {
        bytes.clear();
        bytes.reserve(static_cast<std::size_t>(span.end - span.begin));
        const HttpFile::Take take = [&](std::uint64_t, Bytes b) {
          bytes.insert(bytes.end(), b.data(), b.data() + b.size());
          return true;
        };
        if (auto e = file.fetch(span.begin, span.end, take)) return failed(*e);
        (void)pass.feed(span.begin, Bytes(bytes.data(), bytes.size()));
      }
    }
  }
  // The probe's index is not needed past here but by a data scan (which reads it): its records
  // go before validate_input reads the bytes again into its own.
  if (!scan) probe = {};

  // Read whole: a file's report (the data check, if asked, scans what was read).
  validate_input(Input(buffer.bytes()), kept < size ? &tail : nullptr, options, shown, out,
                 scan.get());
  if (gave_up) {
    out.report = with_limit_finding(
        std::move(out.report), options.limits.max_findings, kept,
        fmt::format("the metadata does not end within the first {} bytes, the most ggufcheck "
                    "keeps of a remote file; the rest was not read",
                    kept),
        "download the file and check it locally: a file is read whole");
  }
  if (plan.unchecked != 0) {
    out.report = with_limit_finding(
        std::move(out.report), options.limits.max_findings, plan.first_unchecked,
        fmt::format("{} padding range{} between tensors ({} bytes from 0x{:x}) were not read: a "
                    "remote check without --data fetches at most {} ranges of padding, {} bytes "
                    "in all",
                    plan.unchecked, plan.unchecked == 1 ? "" : "s", plan.unchecked_bytes,
                    plan.first_unchecked, kPaddingRequests, kPaddingBytes),
        "check with --data, which reads every byte, or download the file and check it locally");
  }
  use();
  return {RemoteOutcome::State::Read, "", "", false, "", false};
}

}  // namespace

RemoteOutcome visit_remote(const std::string& url, const Options& options, const std::string& shown,
                           Validated& out, const std::function<void()>& use,
                           const StreamLimits& limits) {
  try {
    return read_remote(url, options, shown, out, use, limits);
  } catch (const std::bad_alloc&) {
    return unreadable(
        fmt::format("not enough memory to validate {}: the other inputs are still checked", shown));
  } catch (const std::system_error& e) {  // no thread could be started for the data scan
    return unreadable(fmt::format("cannot check the data of {}: {}", shown, e.what()));
  }
}

}  // namespace detail

bool remote_supported() {
  return true;
}

}  // namespace ggufcheck
