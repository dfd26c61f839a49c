#include "input/cursor.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ggufcheck::detail {

std::string_view Input::zeros(std::uint64_t n) {
  static const std::array<char, kChunk> kZeros{};
  return {kZeros.data(), static_cast<std::size_t>(std::min<std::uint64_t>(n, kZeros.size()))};
}

std::uint64_t Input::next_data(std::uint64_t at, std::uint64_t end) const {
  if (mapped_fd_ < 0) return at;
  // The descriptor's offset is put back: standard input may be shared with the parent.
  const off_t saved = ::lseek(mapped_fd_, 0, SEEK_CUR);
  const off_t data = ::lseek(mapped_fd_, static_cast<off_t>(at), SEEK_DATA);
  const int error = errno;
  if (saved >= 0) (void)::lseek(mapped_fd_, saved, SEEK_SET);
  // ENXIO: no data at or after `at` (the rest is a hole). Any other failure (a file system
  // without hole reporting): read the bytes.
  if (data < 0) return error == ENXIO ? end : at;
  return std::min(std::max(static_cast<std::uint64_t>(data), at), end);
}

void Input::release(std::uint64_t offset, std::uint64_t length) const {
  if (mapped_fd_ < 0) return;
  static const auto kPage = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<std::uintptr_t>(bytes_.data());
  const std::uint64_t first = (base + offset + kPage - 1) / kPage * kPage;
  const std::uint64_t last = (base + offset + length) / kPage * kPage;
  // A private read-only file mapping: the pages come back from the page cache when touched again.
  if (last > first) {
    (void)::madvise(reinterpret_cast<void*>(first), static_cast<std::size_t>(last - first),
                    MADV_DONTNEED);
  }
}

void Input::advise_sequential(std::uint64_t offset, std::uint64_t length) const {
  if (mapped_fd_ < 0 || offset >= size()) return;
  length = std::min(length, size() - offset);
  static const auto kPage = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<std::uintptr_t>(bytes_.data());
  const std::uint64_t first = (base + offset) / kPage * kPage;
  (void)::madvise(reinterpret_cast<void*>(first),
                  static_cast<std::size_t>(base + offset + length - first), MADV_SEQUENTIAL);
}

bool Input::read_into(std::uint64_t offset, std::span<std::uint8_t> out,
                      ReadFailure& failure) const {
  if (mapped_fd_ < 0) {
    std::string_view bytes;
    if (!view(offset, out.size(), bytes)) {
      failure = {offset, "the file is shorter than it was"};
      return false;
    }
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return true;
  }
  std::uint64_t got = 0;
  while (got < out.size()) {
    const ssize_t n =
        ::pread(mapped_fd_, out.data() + got, out.size() - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failure = {offset + got, n < 0 ? std::strerror(errno) : "the file is shorter than it was"};
      return false;
    }
    got += static_cast<std::uint64_t>(n);
  }
  return true;
}

void Input::advise_sequential_reads(std::uint64_t offset, std::uint64_t length) const {
  if (mapped_fd_ < 0) return;
  (void)::posix_fadvise(mapped_fd_, static_cast<off_t>(offset), static_cast<off_t>(length),
                        POSIX_FADV_SEQUENTIAL);
}

std::optional<std::pair<std::uint64_t, std::uint8_t>> Input::first_nonzero(
    std::uint64_t begin, std::uint64_t end) const {
  std::optional<std::pair<std::uint64_t, std::uint8_t>> found;
  (void)chunks(
      begin, end,
      [&](std::uint64_t at, std::string_view chunk) {
        // Eight bytes at a time: padding is almost always all zeros.
        std::size_t i = 0;
        for (; i + 8 <= chunk.size(); i += 8) {
          std::uint64_t word = 0;
          std::memcpy(&word, chunk.data() + i, 8);
          if (word != 0) break;
        }
        for (; i < chunk.size(); ++i) {
          if (chunk[i] != 0) {
            found.emplace(at + i, static_cast<std::uint8_t>(chunk[i]));
            return false;
          }
        }
        return true;
      },
      Holes::Skipped);
  return found;
}

}  // namespace ggufcheck::detail
