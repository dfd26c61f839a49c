// Validating a file by path: a regular file mapped (input/file.hpp), or a stream (standard
// input, a pipe, a FIFO, a character device) read in bounded chunks; a URL is url.cpp's.
//
// A stream keeps its metadata and a window of 64 MiB after it in memory; the rest is counted and
// its padding bytes are checked as it passes (StreamTail), so the report is that of the same
// bytes given as a file, with memory bounded by the metadata plus the window.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "data/scan.hpp"
#include "ggufcheck/validate.hpp"
#include "input/cursor.hpp"
#include "input/file.hpp"
#include "read/file_kind.hpp"
#include "validate/growing.hpp"
#include "validate/validate.hpp"

namespace ggufcheck {

using detail::changed_text;
using detail::DataLayout;
using detail::DataScan;
using detail::errno_text;
using detail::FileDescriptor;
using detail::FileIndex;
using detail::GrowingBuffer;
using detail::GuardedMapping;
using detail::Input;
using detail::prefault_metadata;
using detail::Probe;
using detail::probe_input;
using detail::same_file_state;
using detail::StreamTail;
using detail::tail_probes;
using detail::TailPass;

namespace {

// --- streams ----------------------------------------------------------------------------------

// Passes the rest of the stream through `pass` (its padding probes and, with a data scan, the
// scan; a cancelled scan stops the reading).
bool pass_tail(int fd, std::uint64_t kept, StreamTail& tail, std::size_t chunk_size,
               DataScan* scan) {
  std::vector<std::uint8_t> chunk(chunk_size);
  TailPass pass(tail, scan);
  std::uint64_t at = kept;  // file offset of chunk[0]
  if (scan != nullptr) {
    // A pipe holds 64 KiB by default: a larger one lets the writer run ahead while a chunk is
    // scanned (a failure, e.g. not a pipe, changes nothing).
    (void)::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
  }
  for (;;) {
    // With a data scan, each chunk is filled before it is scanned: a pipe hands over at most
    // what it holds, and a scan per 64 KiB would cost more in waking the threads than it does.
    const detail::StreamRead read = detail::read_stream(
        fd, chunk, scan != nullptr, [scan] { return scan != nullptr && scan->cancelled(); });
    if (read.failed) return false;
    if (read.stopped || read.got == 0) break;
    if (!pass.feed(at, Bytes(chunk.data(), read.got))) {
      break;  // interrupted: the report says so, and nothing more is read
    }
    at += read.got;
  }
  tail.size = at - kept;
  return true;
}

// The report of a stream given up before its end, with a finding that says so at `offset`.
Report limit_report(Report report, std::uint64_t max_findings, std::uint64_t offset,
                    std::string message) {
  return detail::with_limit_finding(
      std::move(report), max_findings, offset, std::move(message),
      "give the file itself instead of a stream: a file is read whole");
}

}  // namespace

namespace detail {

// Validates a stream: the metadata and a window after it kept, the rest passed (see top).
Report validate_stream(int fd, const std::string& path, const std::string& shown,
                       const Options& options, const StreamLimits& limits) {
  GrowingBuffer buffer;
  bool eof = false;
  std::size_t want = limits.chunk;
  for (;;) {
    if (!buffer.fill(fd, want, eof)) return unreadable_report(shown, errno_text("read", path));
    const Bytes bytes = buffer.bytes();
    if (eof) return validate(bytes, options, shown);
    // Not GGUF: the first bytes say what it is (file_kind.hpp reads at most kIdentifyWindow of
    // them), and the rest is not read (/dev/zero must end).
    if (bytes.size() >= 4 && Input(bytes).prefix(4) != "GGUF") {
      if (bytes.size() < kIdentifyWindow &&
          !buffer.fill(fd, static_cast<std::size_t>(kIdentifyWindow), eof)) {
        return unreadable_report(shown, errno_text("read", path));
      }
      return validate(buffer.bytes(), options, shown);
    }
    Probe probe = probe_input(bytes, options);
    if (probe.tensors_complete) {
      std::uint64_t window_end = 0;
      if (!checked_add(probe.index.infos_end, limits.window, window_end)) {
        window_end = UINT64_MAX;
      }
      if (window_end > buffer.size()) {
        if (!buffer.fill(fd, static_cast<std::size_t>(window_end), eof)) {
          return unreadable_report(shown, errno_text("read", path));
        }
        // Growing may have moved the bytes the index was read from: it is read again from where
        // they are now (the same header, pairs and infos), never re-pointed.
        probe = {};
        probe = probe_input(buffer.bytes(), options);
      }
      if (eof) return validate(buffer.bytes(), options, shown);
      StreamTail tail;
      tail.probes = tail_probes(probe, buffer.size());
      // The data scan sees the kept bytes first, then the rest as it passes.
      std::unique_ptr<DataScan> scan;
      if (options.data.enabled && DataScan::has_data(probe.index, probe.layout)) {
        scan = std::make_unique<DataScan>(probe.index, probe.layout, options);
        (void)scan->feed(0, buffer.bytes());
      }
      const std::size_t chunk = scan ? limits.data_chunk : limits.chunk;
      if (!pass_tail(fd, buffer.size(), tail, chunk, scan.get())) {
        return unreadable_report(shown, errno_text("read", path));
      }
      return validate_input(Input(buffer.bytes()), &tail, options, shown, scan.get());
    }
    // The reader stopped short of the tensor data. If more bytes moved it on, read more; if a
    // whole window past where it stopped did not, the stop is the file's own, and what follows
    // is not needed (nor read: /dev/zero must end).
    const std::size_t kept = buffer.size();
    const bool stuck = kept - std::min<std::uint64_t>(kept, probe.stop) >= limits.window;
    if (stuck || kept >= limits.metadata_limit) {
      Report report = validate(bytes, options, shown);
      return limit_report(
          std::move(report), options.limits.max_findings, kept,
          stuck ? fmt::format("stopped reading the stream after {} bytes: the reader stops at "
                              "0x{:x}, and the rest was not read",
                              kept, probe.stop)
                : fmt::format("the stream's metadata does not end within the first {} bytes, "
                              "the most ggufcheck keeps of a stream",
                              kept));
    }
    want = kept + std::min(std::max(kept, limits.chunk), limits.window);
  }
}

}  // namespace detail

namespace {

Report validate_regular(int fd, const struct stat& before, const std::string& path,
                        const std::string& shown, const Options& options) {
  const auto size = static_cast<std::size_t>(before.st_size);
  const std::unique_ptr<GuardedMapping> guarded = detail::map_file(fd, size);
  if (!guarded) return unreadable_report(shown, errno_text("map", path));
  const GuardedMapping& mapping = *guarded;
  if (!mapping.guarded()) {
    // Every slot of the SIGBUS handler is taken: read it as a stream, which cannot fault.
    return detail::validate_stream(fd, path, shown, options);
  }
  prefault_metadata(mapping.bytes(), fd);
  // The descriptor lets bulk reads skip holes and give back the pages they passed.
  Report report = validate_input(Input(mapping.bytes(), fd), nullptr, options, shown);
  struct stat after {};
  if (mapping.faulted() || ::fstat(fd, &after) != 0 || !same_file_state(before, after)) {
    return unreadable_report(shown, changed_text(path, before, fd));
  }
  return report;
}

}  // namespace

Report unreadable_report(std::string path, std::string why) {
  Report report;
  report.path = std::move(path);
  // Always an error: an input that was not read must never pass, whatever the overrides say.
  std::vector<Finding> findings;
  findings.push_back(
      Finding{Code::UnreadableFile, Severity::Error, 0, 0, "file", std::move(why), ""});
  detail::finish_report(report, std::move(findings));
  return report;
}

namespace detail {

std::string shown_path(const std::string& path) {
  return path == "-" ? "<stdin>" : path;
}

}  // namespace detail

Report validate_file(const std::string& path, const Options& options) {
  if (is_url(path)) return validate_url(path, options);
  const std::string shown = detail::shown_path(path);
  try {
    const bool is_stdin = path == "-";
    const int fd = is_stdin ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return unreadable_report(shown, errno_text("open", path));
    const FileDescriptor file(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) return unreadable_report(shown, errno_text("stat", path));
    if (S_ISDIR(st.st_mode)) {
      return unreadable_report(shown, fmt::format("cannot read {}: is a directory", path));
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      return validate_regular(fd, st, path, shown, options);
    }
    return detail::validate_stream(fd, path, shown, options);
  } catch (const std::bad_alloc&) {
    return unreadable_report(
        shown,
        fmt::format("not enough memory to validate {}: the other inputs are still checked", path));
  } catch (const std::system_error& e) {  // no thread could be started for the data scan
    return unreadable_report(shown, fmt::format("cannot check the data of {}: {}", path, e.what()));
  } catch (const std::runtime_error& e) {  // a read of the tensor data failed
    return unreadable_report(shown, fmt::format("cannot read {}: {}", path, e.what()));
  }
}

}  // namespace ggufcheck
