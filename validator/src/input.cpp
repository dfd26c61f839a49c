// Input: a read-only memory mapping of a regular file, or the bytes of a stream read to memory.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "checks.hpp"
#include "ggufcheck/validate.hpp"

namespace ggufcheck {

namespace {

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

class Mapping {
 public:
  Mapping(void* data, std::size_t size) : data_(data), size_(size) {}
  ~Mapping() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  [[nodiscard]] Bytes bytes() const { return {static_cast<const std::uint8_t*>(data_), size_}; }

 private:
  void* data_;
  std::size_t size_;
};

std::string errno_text(const char* what, const std::string& path) {
  return fmt::format("cannot {} {}: {}", what, path, std::strerror(errno));
}

// Maps the pages where the metadata usually lies in one call instead of one fault per 64 KiB
// (a third of the time of a 16 MB tokenizer file). Only a prefix: tensor data is never read.
// Kernels before 5.14 lack MADV_POPULATE_READ; the hint is then skipped.
void prefault_metadata(void* data, std::size_t size) {
#ifdef MADV_POPULATE_READ
  constexpr std::size_t kPrefix = 64ULL << 20;
  (void)::madvise(data, std::min(size, kPrefix), MADV_POPULATE_READ);
#else
  (void)data;
  (void)size;
#endif
}

// Reads a stream (standard input, a pipe) to its end. Memory grows with the bytes that exist.
bool read_stream(int fd, std::vector<std::uint8_t>& out) {
  std::uint8_t chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    out.insert(out.end(), chunk, chunk + n);
  }
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
                                      const std::function<void(Bytes)>& use) {
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
    prefault_metadata(data, size);
    const Mapping mapping(data, size);
    use(mapping.bytes());
    return std::nullopt;
  }
  std::vector<std::uint8_t> buffer;
  if (!read_stream(fd, buffer)) return errno_text("read", path);
  use(Bytes(buffer.data(), buffer.size()));
  return std::nullopt;
}

}  // namespace detail

Report validate_file(const std::string& path, const Options& options) {
  const std::string shown = detail::shown_path(path);
  Report report;
  const auto error =
      detail::with_input(path, [&](Bytes bytes) { report = validate(bytes, options, shown); });
  return error ? unreadable_report(shown, *error) : report;
}

}  // namespace ggufcheck
