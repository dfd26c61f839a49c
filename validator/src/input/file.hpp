// Opening an input: a regular file mapped read-only under a SIGBUS guard, or a stream (standard
// input, a pipe, a FIFO, a character device) read into a buffer that grows in place. What the
// rest of the library sees of either is an Input (cursor.hpp).
//
// A mapped file that shrinks while it is read raises SIGBUS on the pages past its new end: a
// handler maps a zero page there so the read goes on, and the caller reports the file "changed
// while being read" (GGUF0001), never a signal death. A file modified in place is caught by
// comparing its size and modification time before and after.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "ggufcheck/bytes.hpp"
#include "input/cursor.hpp"
#include "util/status.hpp"

namespace ggufcheck::detail {

// How a stream is read: what it keeps past the end of its tensor infos (also what writer
// diagnosis sees of it) and the largest step by which the kept bytes grow while the metadata is
// looked for; the size of each read; the bytes after which a stream whose metadata is still not
// read is given up (GGUF0002), which a remote file's reading shares (validate/remote.cpp).
//
// metadata_limit bounds the memory as well as the bytes: the records kept of what the bytes hold
// (a pair, a tensor info, a token of a vocabulary) and the checks' tables of them take up to
// about 40 bytes per pair, so a metadata of the smallest pairs (9 to 14 bytes) costs up to
// about 5 times its bytes: at most about 2.7 GiB at 512 MiB. The largest real metadata (a
// vocabulary of 256K tokens with its merges) is a few tens of MiB.
struct StreamLimits {
  std::size_t window = std::size_t{64} << 20;
  std::size_t chunk = std::size_t{1} << 20;
  std::size_t metadata_limit = std::size_t{512} << 20;
  // The size of each read past the kept bytes when the data check scans them (split over every
  // core: larger than `chunk`).
  std::size_t data_chunk = std::size_t{8} << 20;
};

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

// "cannot <what> <path>: <strerror>".
[[nodiscard]] std::string errno_text(const char* what, const std::string& path, int error = errno);

struct GuardedRegion;
// A read-only mapping of a whole file, registered with the SIGBUS handler while it lives.
class GuardedMapping {
 public:
  GuardedMapping(void* data, std::size_t size);
  ~GuardedMapping();
  GuardedMapping(const GuardedMapping&) = delete;
  GuardedMapping& operator=(const GuardedMapping&) = delete;

  [[nodiscard]] bool guarded() const { return region_ != nullptr; }
  [[nodiscard]] bool faulted() const;
  [[nodiscard]] Bytes bytes() const { return {static_cast<const std::uint8_t*>(data_), size_}; }

 private:
  void* data_;
  std::size_t size_;
  GuardedRegion* region_ = nullptr;
};

// The start of a file (where its metadata is) faulted in with one call rather than page by
// page; only up to its first hole, which holds nothing to read (a sparse file's padding).
void prefault_metadata(Bytes mapped, int fd);

// Maps the regular file `fd` (of `size` bytes, more than 0) read-only and guards the mapping;
// nullptr, with errno, when it cannot be mapped.
[[nodiscard]] std::unique_ptr<GuardedMapping> map_file(int fd, std::size_t size);
// The size and modification time are unchanged.
[[nodiscard]] bool same_file_state(const struct stat& a, const struct stat& b);
// "<path> changed while being read: ..." for a file whose state changed since `before`.
[[nodiscard]] std::string changed_text(const std::string& path, const struct stat& before, int fd);

// The bytes kept, in an anonymous mapping that grows in place (mremap), so growing never holds
// two copies.
class GrowingBuffer {
 public:
  GrowingBuffer() = default;
  ~GrowingBuffer();
  GrowingBuffer(const GrowingBuffer&) = delete;
  GrowingBuffer& operator=(const GrowingBuffer&) = delete;

  [[nodiscard]] Bytes bytes() const { return {data_, size_}; }
  [[nodiscard]] std::size_t size() const { return size_; }

  // Reads `fd` until `want` bytes are kept or it ends. False with errno on a read error.
  bool fill(int fd, std::size_t want, bool& eof);
  // Room for `want` bytes in all (throws std::bad_alloc).
  void reserve(std::size_t want);
  [[nodiscard]] std::size_t capacity() const { return capacity_; }
  // Keeps `bytes` after those kept (bytes that arrived by another way: a remote file's). False
  // when they do not fit in the room reserved.
  [[nodiscard]] bool append(Bytes bytes);

 private:
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

// What one read_stream did: the bytes it read, and why it stopped short of the whole span.
struct StreamRead {
  std::size_t got = 0;
  bool ended = false;    // the stream ended
  bool failed = false;   // a read failed (errno says why)
  bool stopped = false;  // a read was interrupted and stop() said to stop
};
// Reads from a stream into `out`, until it is full (whole) or after the first read that returns
// bytes (not whole), or the stream ends. A read interrupted by a signal is tried again unless
// stop() says to stop.
StreamRead read_stream(int fd, std::span<std::uint8_t> out, bool whole,
                       const std::function<bool()>& stop = {});

// The input's bytes (a regular file mapped read-only, or a stream read to memory: "-" is
// standard input), passed to use; or why the input cannot be read. Streams are read whole, up to
// StreamLimits::metadata_limit: for the stages that need every byte (dump, hash, info; validation
// reads streams bounded, validate/files.cpp).
Status with_input(const std::string& path, const std::function<void(const Input&)>& use);

}  // namespace ggufcheck::detail
