// ggufcheck_data_floor: side (c) of the data-scan benchmark, the memory floor. N threads each
// read one contiguous share of the byte range [BEGIN, END) of FILE (its data section) and
// OR-reduce every 64-bit word of it, so every byte really reaches the processor and nothing is
// judged: no scan of the same bytes can be faster on this machine.
//   ggufcheck_data_floor --mode pread|mmap|mmap-populate|mmap-window [--threads N] [--buffer-kib K]
//                        FILE BEGIN END
//   pread:          pread() into a per-thread buffer (default 2 MiB), then reduce the buffer;
//   mmap:           the file mapped (MAP_SHARED), each thread reduces its share of the mapping;
//   mmap-populate:  the same with MAP_POPULATE, the page tables filled before the threads run;
//   mmap-window:    each thread maps its share 64 MiB at a time, reduces it and unmaps it (what
//                   a scan whose peak RSS must stay small can do with a mapping).
// Default N: the cores this process may run on. Prints the reduction (so that it cannot be
// optimised away) and the time.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

enum class Mode { Pread, Mmap, MmapPopulate, MmapWindow };

constexpr std::uint64_t kWindowBytes = 64ULL << 20;

// Reduces whole words; a tail shorter than a word is folded in byte by byte.
std::uint64_t reduce(const std::uint8_t* bytes, std::size_t size) {
  std::uint64_t lanes[8] = {};
  std::size_t i = 0;
  for (; i + 64 <= size; i += 64) {
    for (int k = 0; k < 8; ++k) {
      std::uint64_t word;
      std::memcpy(&word, bytes + i + 8 * static_cast<std::size_t>(k), 8);
      lanes[k] |= word;
    }
  }
  std::uint64_t result = 0;
  for (std::uint64_t lane : lanes) result |= lane;
  for (; i < size; ++i) result |= bytes[i];
  return result;
}

unsigned default_threads() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
    return static_cast<unsigned>(CPU_COUNT(&set));
  const unsigned cores = std::thread::hardware_concurrency();
  return cores == 0 ? 1 : cores;
}

int usage() {
  std::fprintf(
      stderr,
      "usage: ggufcheck_data_floor --mode pread|mmap|mmap-populate|mmap-window [--threads N] "
      "[--buffer-kib K] FILE BEGIN END\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Mode mode = Mode::Pread;
  bool have_mode = false;
  unsigned threads = default_threads();
  std::size_t buffer_bytes = 2U << 20;
  std::vector<std::string> positional;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--mode" && i + 1 < argc) {
      const std::string name = argv[++i];
      have_mode = true;
      if (name == "pread") {
        mode = Mode::Pread;
      } else if (name == "mmap") {
        mode = Mode::Mmap;
      } else if (name == "mmap-populate") {
        mode = Mode::MmapPopulate;
      } else if (name == "mmap-window") {
        mode = Mode::MmapWindow;
      } else {
        return usage();
      }
    } else if (arg == "--threads" && i + 1 < argc) {
      threads = static_cast<unsigned>(std::stoul(argv[++i]));
    } else if (arg == "--buffer-kib" && i + 1 < argc) {
      buffer_bytes = std::stoul(argv[++i]) << 10;
    } else {
      positional.push_back(arg);
    }
  }
  if (!have_mode || positional.size() != 3 || threads == 0 || threads > 1024 || buffer_bytes == 0)
    return usage();
  const std::string& path = positional[0];
  const std::uint64_t begin = std::stoull(positional[1]);
  const std::uint64_t end = std::stoull(positional[2]);

  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "cannot open %s: %s\n", path.c_str(), std::strerror(errno));
    return 2;
  }
  const off_t file_size = ::lseek(fd, 0, SEEK_END);
  if (file_size < 0 || begin > end || end > static_cast<std::uint64_t>(file_size)) {
    std::fprintf(stderr, "range %llu..%llu is not inside %s\n",
                 static_cast<unsigned long long>(begin), static_cast<unsigned long long>(end),
                 path.c_str());
    return 2;
  }

  const auto start = std::chrono::steady_clock::now();
  const std::uint8_t* mapped = nullptr;
  if (mode == Mode::Mmap || mode == Mode::MmapPopulate) {
    const int flags = MAP_SHARED | (mode == Mode::MmapPopulate ? MAP_POPULATE : 0);
    void* address = ::mmap(nullptr, static_cast<std::size_t>(file_size), PROT_READ, flags, fd, 0);
    if (address == MAP_FAILED) {
      std::fprintf(stderr, "cannot map %s: %s\n", path.c_str(), std::strerror(errno));
      return 2;
    }
    mapped = static_cast<const std::uint8_t*>(address);
  }

  const std::uint64_t total = end - begin;
  std::vector<std::uint64_t> results(threads, 0);
  std::vector<int> failed(threads, 0);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    // Shares cut at 4 KiB so no page is read by two threads.
    const std::uint64_t share_begin = begin + (total / threads * t & ~4095ULL);
    const std::uint64_t share_end =
        t + 1 == threads ? end : begin + (total / threads * (t + 1) & ~4095ULL);
    workers.emplace_back([&, t, share_begin, share_end] {
      if (mapped != nullptr) {
        results[t] =
            reduce(mapped + share_begin, static_cast<std::size_t>(share_end - share_begin));
        return;
      }
      if (mode == Mode::MmapWindow) {
        std::uint64_t result = 0;
        for (std::uint64_t at = share_begin & ~4095ULL; at < share_end; at += kWindowBytes) {
          const std::uint64_t window_end = std::min(share_end, at + kWindowBytes);
          const auto length = static_cast<std::size_t>(window_end - at);
          void* window = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(at));
          if (window == MAP_FAILED) {
            failed[t] = 1;
            return;
          }
          // The first window may start before the share (mappings start at a page).
          const std::uint64_t skip = std::max(at, share_begin) - at;
          result |= reduce(static_cast<const std::uint8_t*>(window) + skip, length - skip);
          ::munmap(window, length);
        }
        results[t] = result;
        return;
      }
      std::vector<std::uint8_t> buffer(buffer_bytes);
      std::uint64_t result = 0;
      for (std::uint64_t at = share_begin; at < share_end;) {
        const std::size_t want =
            static_cast<std::size_t>(std::min<std::uint64_t>(buffer_bytes, share_end - at));
        const ssize_t got = ::pread(fd, buffer.data(), want, static_cast<off_t>(at));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
          failed[t] = 1;
          return;
        }
        result |= reduce(buffer.data(), static_cast<std::size_t>(got));
        at += static_cast<std::uint64_t>(got);
      }
      results[t] = result;
    });
  }
  for (std::thread& worker : workers) worker.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::uint64_t reduction = 0;
  for (unsigned t = 0; t < threads; ++t) {
    if (failed[t] != 0) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 2;
    }
    reduction |= results[t];
  }
  std::printf("%llu bytes, %u threads, %.3f s, %.2f GB/s, or-reduce %016llx\n",
              static_cast<unsigned long long>(total), threads, seconds,
              static_cast<double>(total) / seconds / 1e9,
              static_cast<unsigned long long>(reduction));
  return 0;
}
