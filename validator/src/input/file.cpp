#include "input/file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <mutex>
#include <new>

namespace ggufcheck::detail {

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kStreamWindow = StreamLimits{}.window;
constexpr std::size_t kStreamMetadataLimit = StreamLimits{}.metadata_limit;
constexpr std::size_t kStreamChunk = StreamLimits{}.chunk;

}  // namespace

std::string errno_text(const char* what, const std::string& path, int error) {
  return fmt::format("cannot {} {}: {}", what, path, std::strerror(error));
}

// --- SIGBUS: the mappings being read, and a handler that keeps their reads alive -------------

struct GuardedRegion {
  std::atomic<std::uintptr_t> begin{0};
  std::atomic<std::uintptr_t> end{0};
  std::atomic<bool> faulted{false};
  std::atomic<bool> taken{false};
};
namespace {

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

}  // namespace

GuardedMapping::GuardedMapping(void* data, std::size_t size) : data_(data), size_(size) {
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
GuardedMapping::~GuardedMapping() {
  if (region_ != nullptr) {
    region_->begin.store(0, std::memory_order_release);
    region_->end.store(0, std::memory_order_release);
    region_->taken.store(false, std::memory_order_release);
  }
  ::munmap(data_, size_);
}

bool GuardedMapping::faulted() const {
  return region_ != nullptr && region_->faulted.load(std::memory_order_acquire);
}

// Maps the pages where the metadata usually lies in one call instead of one fault per 64 KiB
// (a third of the time of a 16 MB tokenizer file). Only a prefix: tensor data is never read.
// Kernels before 5.14 lack MADV_POPULATE_READ; the hint is then skipped.
std::unique_ptr<GuardedMapping> map_file(int fd, std::size_t size) {
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED) return nullptr;
  return std::make_unique<GuardedMapping>(data, size);
}

// The start of a file (where its metadata is) faulted in with one call rather than page by
// page; only up to its first hole, which holds nothing to read (a sparse file's padding).
void prefault_metadata(Bytes mapped, int fd) {
  // madvise takes the address as writable; the advice only faults the pages in.
  void* const data = const_cast<std::uint8_t*>(mapped.data());
  const std::size_t size = mapped.size();
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

GrowingBuffer::~GrowingBuffer() {
  if (data_ != nullptr) ::munmap(data_, capacity_);
}

StreamRead read_stream(int fd, std::span<std::uint8_t> out, bool whole,
                       const std::function<bool()>& stop) {
  StreamRead result;
  while (result.got < out.size()) {
    const ssize_t n = ::read(fd, out.data() + result.got, out.size() - result.got);
    if (n < 0) {
      if (errno == EINTR) {
        if (stop && stop()) {  // Ctrl-C while the stream waits
          result.stopped = true;
          return result;
        }
        continue;
      }
      result.failed = true;
      return result;
    }
    if (n == 0) {
      result.ended = true;
      return result;
    }
    result.got += static_cast<std::size_t>(n);
    if (!whole) break;
  }
  return result;
}

bool GrowingBuffer::fill(int fd, std::size_t want, bool& eof) {
  if (want > capacity_) reserve(want);
  if (size_ >= want || eof) return true;
  const StreamRead read = read_stream(fd, std::span(data_ + size_, want - size_), true);
  size_ += read.got;
  if (read.ended) eof = true;
  return !read.failed;
}

bool GrowingBuffer::append(Bytes bytes) {
  if (bytes.size() > capacity_ - size_) return false;
  std::memcpy(data_ + size_, bytes.data(), bytes.size());
  size_ += bytes.size();
  return true;
}

void GrowingBuffer::reserve(std::size_t want) {
  if (want <= capacity_) return;
  if (want > SIZE_MAX - kMiB) throw std::bad_alloc();
  const std::size_t capacity = (want + kMiB - 1) / kMiB * kMiB;
  void* data = data_ == nullptr ? ::mmap(nullptr, capacity, PROT_READ | PROT_WRITE,
                                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                                : ::mremap(data_, capacity_, capacity, MREMAP_MAYMOVE);
  if (data == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::uint8_t*>(data);
  capacity_ = capacity;
}

Status with_input(const std::string& path, const std::function<void(const Input&)>& use) {
  const bool is_stdin = path == "-";
  const int fd = is_stdin ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::failure(errno_text("open", path));
  FileDescriptor file(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::failure(errno_text("stat", path));
  if (S_ISDIR(st.st_mode))
    return Status::failure(fmt::format("cannot read {}: is a directory", path));
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<std::size_t>(st.st_size);
    void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) return Status::failure(errno_text("map", path));
    const GuardedMapping mapping(data, size);
    use(Input(mapping.bytes(), fd));
    struct stat after {};
    if (mapping.faulted() || ::fstat(fd, &after) != 0 || !same_file_state(st, after)) {
      return Status::failure(changed_text(path, st, fd));
    }
    return Status::success();
  }
  // dump needs every byte (it hashes the tensor data): the stream is read whole, up to a limit,
  // and no further than a magic that is not GGUF.
  GrowingBuffer buffer;
  bool eof = false;
  for (std::size_t want = kStreamChunk; !eof; want += std::min(want, kStreamWindow)) {
    if (!buffer.fill(fd, want, eof)) return Status::failure(errno_text("read", path));
    const Bytes bytes = buffer.bytes();
    if (bytes.size() >= 4 && Input(bytes).prefix(4) != "GGUF") break;
    if (!eof && bytes.size() >= kStreamMetadataLimit) {
      return Status::failure(
          fmt::format("cannot read {}: a stream of more than {} bytes (give the file itself)", path,
                      kStreamMetadataLimit));
    }
  }
  use(Input(buffer.bytes()));
  return Status::success();
}

}  // namespace ggufcheck::detail
