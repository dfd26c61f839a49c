#include "scenario.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <utility>

namespace ggufcheck::testing {

BigBuffer::BigBuffer(const ByteVector& prefix, std::size_t size, std::uint8_t fill) : size_(size) {
  constexpr std::size_t kPage = 4096;
  constexpr std::size_t kChunk = 2u << 20;
  const std::size_t head = (prefix.size() / kPage + 1) * kPage;
  mapped_ = head + (size > head ? (size - head + kChunk - 1) / kChunk * kChunk : 0);
  void* region =
      ::mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) return;
  data_ = static_cast<std::uint8_t*>(region);
  if (::mmap(data_, head, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) ==
      MAP_FAILED) {
    return;
  }
  std::memcpy(data_, prefix.data(), prefix.size());
  std::memset(data_ + prefix.size(), fill, head - prefix.size());
  const int fd = ::memfd_create("ggufcheck-test-fill", MFD_CLOEXEC);
  if (fd < 0) return;
  bool mapped = ::ftruncate(fd, static_cast<off_t>(kChunk)) == 0;
  if (mapped && fill != 0) {
    void* chunk = ::mmap(nullptr, kChunk, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    mapped = chunk != MAP_FAILED;
    if (mapped) {
      std::memset(chunk, fill, kChunk);
      ::munmap(chunk, kChunk);
    }
  }
  for (std::size_t at = head; mapped && at < mapped_; at += kChunk) {
    mapped = ::mmap(data_ + at, kChunk, PROT_READ, MAP_FIXED | MAP_SHARED, fd, 0) != MAP_FAILED;
  }
  ::close(fd);
  ok_ = mapped;
}

BigBuffer::~BigBuffer() {
  if (data_ != nullptr) ::munmap(data_, mapped_);
}

Scenario at(ByteVector bytes, std::uint64_t offset, std::uint64_t length, std::string path,
            std::vector<Code> also) {
  Scenario s;
  s.bytes = std::move(bytes);
  s.offset = offset;
  s.length = length;
  s.path = std::move(path);
  s.also = std::move(also);
  return s;
}

std::string kv_path(std::size_t index, std::string_view shown_key, std::string_view field) {
  std::string path = "kv[" + std::to_string(index) + "] \"" + std::string(shown_key) + "\"";
  if (!field.empty()) path += " " + std::string(field);
  return path;
}

std::string tensor_path(std::size_t index, std::string_view shown_name, std::string_view field) {
  std::string path = "tensor[" + std::to_string(index) + "] \"" + std::string(shown_name) + "\"";
  if (!field.empty()) path += " " + std::string(field);
  return path;
}

}  // namespace ggufcheck::testing
