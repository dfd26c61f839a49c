// Input: a read-only memory mapping of a regular file, or a stream (standard input, a pipe, a
// FIFO, a character device) read in bounded chunks.
//
// A mapped file that shrinks while it is read raises SIGBUS on the pages past its new end: a
// handler maps a zero page there so the read goes on, and the report becomes "changed while
// being read" (GGUF0001), never a signal death. A file modified in place is caught by comparing
// its size and modification time before and after.
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

#include "checks/checks.hpp"
#include "data/scan.hpp"
#include "ggufcheck/validate.hpp"
#include "read/cursor.hpp"
#include "read/file_kind.hpp"
#include "read/growing.hpp"

namespace ggufcheck {

using detail::DataScan;
using detail::GrowingBuffer;
using detail::Input;
using detail::Layout;
using detail::Model;
using detail::Probe;
using detail::probe_input;
using detail::StreamTail;
using detail::tail_probes;
using detail::TailPass;

const StreamTail::Probe* detail::StreamTail::first_nonzero(std::uint64_t begin,
                                                           std::uint64_t end) const {
  const auto it = std::lower_bound(probes.begin(), probes.end(), begin,
                                   [](const Probe& p, std::uint64_t b) { return p.begin < b; });
  if (it == probes.end() || it->begin != begin || !it->found || it->nonzero >= end) return nullptr;
  return &*it;
}

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kStreamWindow = detail::StreamLimits{}.window;
constexpr std::size_t kStreamMetadataLimit = detail::StreamLimits{}.metadata_limit;
constexpr std::size_t kStreamChunk = detail::StreamLimits{}.chunk;

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ > 2) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

std::string errno_text(const char* what, const std::string& path, int error = errno) {
  return fmt::format("cannot {} {}: {}", what, path, std::strerror(error));
}

// --- SIGBUS: the mappings being read, and a handler that keeps their reads alive -------------

struct GuardedRegion {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<bool> faulted{false};
  std::atomic<bool> taken{false};
};
// One per mapping being read at once (the CLI validates at most 1024 files in parallel); a
// mapping that finds no free slot is read as a stream instead.
std::array<GuardedRegion, 1024> g_regions;
struct sigaction g_previous_sigbus {};
std::uintptr_t g_page_size = 4096;

void on_sigbus(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (GuardedRegion& region : g_regions) {
    const std::uintptr_t begin = region.begin.load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= region.end.load(std::memory_order_acquire)) {
      continue;
    }
    // The file ends before this page now: read zeros from here on, and say so afterwards.
    void* page = reinterpret_cast<void*>(address & ~(g_page_size - 1));
    if (::mmap(page, g_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
        MAP_FAILED) {
      region.faulted.store(true, std::memory_order_release);
      return;
    }
  }
  // Not a mapping of ours: whatever would have happened without this handler.
  if ((g_previous_sigbus.sa_flags & SA_SIGINFO) != 0 && g_previous_sigbus.sa_sigaction != nullptr) {
    g_previous_sigbus.sa_sigaction(signal, info, context);
    return;
  }
  if (g_previous_sigbus.sa_handler == SIG_IGN) return;
  if (g_previous_sigbus.sa_handler != SIG_DFL && g_previous_sigbus.sa_handler != nullptr) {
    g_previous_sigbus.sa_handler(signal);
    return;
  }
  ::signal(SIGBUS, SIG_DFL);
  ::raise(SIGBUS);
}

void install_sigbus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    const long page = ::sysconf(_SC_PAGESIZE);
    if (page > 0) g_page_size = static_cast<std::uintptr_t>(page);
    struct sigaction action {};
    action.sa_sigaction = on_sigbus;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    (void)::sigaction(SIGBUS, &action, &g_previous_sigbus);
  });
}

// A read-only mapping of a whole file, registered with the SIGBUS handler while it lives.
class GuardedMapping {
 public:
  GuardedMapping(void* data, std::size_t size) : data_(data), size_(size) {
    install_sigbus_handler();
    for (GuardedRegion& region : g_regions) {
      bool expected = false;
      if (region.taken.compare_exchange_strong(expected, true, std::memory_order_acq_rel)) {
        region_ = &region;
        region.faulted.store(false, std::memory_order_relaxed);
        region.end.store(reinterpret_cast<std::uintptr_t>(data) + size, std::memory_order_release);
        region.begin.store(reinterpret_cast<std::uintptr_t>(data), std::memory_order_release);
        break;
      }
    }
  }
  ~GuardedMapping() {
    if (region_ != nullptr) {
      region_->begin.store(0, std::memory_order_release);
      region_->end.store(0, std::memory_order_release);
      region_->taken.store(false, std::memory_order_release);
    }
    ::munmap(data_, size_);
  }
  GuardedMapping(const GuardedMapping&) = delete;
  GuardedMapping& operator=(const GuardedMapping&) = delete;

  [[nodiscard]] bool guarded() const { return region_ != nullptr; }
  [[nodiscard]] bool faulted() const {
    return region_ != nullptr && region_->faulted.load(std::memory_order_acquire);
  }
  [[nodiscard]] Bytes bytes() const { return {static_cast<const std::uint8_t*>(data_), size_}; }

 private:
  void* data_;
  std::size_t size_;
  GuardedRegion* region_ = nullptr;
};

// Maps the pages where the metadata usually lies in one call instead of one fault per 64 KiB
// (a third of the time of a 16 MB tokenizer file). Only a prefix: tensor data is never read.
// Kernels before 5.14 lack MADV_POPULATE_READ; the hint is then skipped.
// The start of a file (where its metadata is) faulted in with one call rather than page by
// page; only up to its first hole, which holds nothing to read (a sparse file's padding).
void prefault_metadata(void* data, std::size_t size, int fd) {
#ifdef MADV_POPULATE_READ
  constexpr std::size_t kPrefix = 64 * kMiB;
  std::size_t length = std::min(size, kPrefix);
  const off_t saved = ::lseek(fd, 0, SEEK_CUR);  // put back: standard input may be shared
  const off_t hole = ::lseek(fd, 0, SEEK_HOLE);
  if (saved >= 0) (void)::lseek(fd, saved, SEEK_SET);
  if (hole >= 0) length = std::min(length, static_cast<std::size_t>(hole));
  (void)::madvise(data, length, MADV_POPULATE_READ);
#else
  (void)data;
  (void)size;
  (void)fd;
#endif
}

bool same_file_state(const struct stat& a, const struct stat& b) {
  return a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

std::string changed_text(const std::string& path, const struct stat& before, int fd) {
  struct stat after {};
  if (::fstat(fd, &after) == 0 && after.st_size != before.st_size) {
    return fmt::format("{} changed while being read: it was {} bytes, it is now {}", path,
                       before.st_size, after.st_size);
  }
  return fmt::format("{} changed while being read (modified in place)", path);
}

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
    ssize_t n = 0;
    bool failed = false;
    bool interrupted = false;
    while (static_cast<std::size_t>(n) < chunk.size()) {
      const ssize_t got = ::read(fd, chunk.data() + n, chunk.size() - static_cast<std::size_t>(n));
      if (got < 0) {
        if (errno == EINTR) {
          if (scan != nullptr && scan->cancelled()) {  // Ctrl-C while the stream waits
            interrupted = true;
            break;
          }
          continue;
        }
        failed = true;
        break;
      }
      if (got == 0) break;
      n += got;
      if (scan == nullptr) break;
    }
    if (failed) return false;
    if (interrupted || n == 0) break;
    if (!pass.feed(at, Bytes(chunk.data(), static_cast<std::size_t>(n)))) {
      break;  // interrupted: the report says so, and nothing more is read
    }
    at += static_cast<std::uint64_t>(n);
  }
  tail.size = at - kept;
  return true;
}

// The report of a stream given up before its end, with a finding that says so at `offset`.
Report limit_report(Report report, std::uint64_t offset, std::string message) {
  return detail::with_limit_finding(
      std::move(report), offset, std::move(message),
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
      if (!checked_add(probe.model.infos_end, limits.window, window_end)) {
        window_end = UINT64_MAX;
      }
      if (window_end > buffer.size()) {
        if (!buffer.fill(fd, static_cast<std::size_t>(window_end), eof)) {
          return unreadable_report(shown, errno_text("read", path));
        }
      }
      // Growing may have moved the buffer: the model reads its bytes from where they are now.
      probe.model.input = Input(buffer.bytes());
      if (eof) return validate(buffer.bytes(), options, shown);
      StreamTail tail;
      tail.probes = tail_probes(probe, buffer.size());
      // The data scan sees the kept bytes first, then the rest as it passes.
      std::unique_ptr<DataScan> scan;
      if (options.data.enabled && DataScan::has_data(probe.model, probe.layout)) {
        scan = std::make_unique<DataScan>(probe.model, probe.layout, options);
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
          std::move(report), kept,
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
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return unreadable_report(shown, errno_text("map", path));
  const GuardedMapping mapping(data, size);
  if (!mapping.guarded()) {
    // Every slot of the SIGBUS handler is taken: read it as a stream, which cannot fault.
    return detail::validate_stream(fd, path, shown, options);
  }
  prefault_metadata(data, size, fd);
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

std::optional<std::string> with_input(const std::string& path,
                                      const std::function<void(const Input&)>& use) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno_text("open", path);
  FileDescriptor file(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_text("stat", path);
  if (S_ISDIR(st.st_mode)) return fmt::format("cannot read {}: is a directory", path);
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) return errno_text("map", path);
    const GuardedMapping mapping(data, size);
    use(Input(mapping.bytes(), fd));
    struct stat after {};
    if (mapping.faulted() || ::fstat(fd, &after) != 0 || !same_file_state(st, after)) {
      return changed_text(path, st, fd);
    }
    return std::nullopt;
  }
  // dump needs every byte (it hashes the tensor data): the stream is read whole, up to a limit,
  // and no further than a magic that is not GGUF.
  GrowingBuffer buffer;
  bool eof = false;
  for (std::size_t want = kStreamChunk; !eof; want += std::min(want, kStreamWindow)) {
    if (!buffer.fill(fd, want, eof)) return errno_text("read", path);
    const Bytes bytes = buffer.bytes();
    if (bytes.size() >= 4 && Input(bytes).prefix(4) != "GGUF") break;
    if (!eof && bytes.size() >= kStreamMetadataLimit) {
      return fmt::format("cannot read {}: a stream of more than {} bytes (give the file itself)",
                         path, kStreamMetadataLimit);
    }
  }
  use(Input(buffer.bytes()));
  return std::nullopt;
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
