// Memory for a big table that is written once, front to back or at random (the token index's
// partitioned entries, llama_loader/token_index.hpp). Fresh memory costs a page fault per 4 KiB
// page on first write, and in a virtual machine a fault costs microseconds (2 to 3 us on the
// project's CI machine): for a 250,000-token index's 4 MiB that was half of its time. Above
// 1 MiB the table is its own anonymous mapping, aligned to 2 MiB and advised MADV_HUGEPAGE, so
// that the kernel backs it with transparent huge pages where it can (one fault per 2 MiB);
// below, or where the mapping fails, plain heap memory. (On that machine a huge page that the
// virtual machine never used before sometimes takes the host 5 to 7 ms to back; 4 KiB pages
// cost more on average.)
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>

namespace ggufcheck::detail {

template <typename T>
class TableMemory {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  TableMemory() = default;
  // Room for n elements, not initialised. Throws std::bad_alloc when there is none.
  explicit TableMemory(std::size_t n) : size_(n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kMappedFrom && bytes <= SIZE_MAX - 2 * kHugePage) {
      mapped_length_ = (bytes + kHugePage - 1) / kHugePage * kHugePage + kHugePage;
      void* m = ::mmap(nullptr, mapped_length_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (m != MAP_FAILED) {
        mapping_ = m;
        const auto at = reinterpret_cast<std::uintptr_t>(m);
        const std::uintptr_t aligned = (at + kHugePage - 1) / kHugePage * kHugePage;
        data_ = reinterpret_cast<T*>(aligned);
#ifdef MADV_HUGEPAGE
        (void)::madvise(data_, mapped_length_ - (aligned - at), MADV_HUGEPAGE);
#endif
        return;
      }
      mapped_length_ = 0;
    }
    heap_.reset(new T[n == 0 ? 1 : n]);
    data_ = heap_.get();
  }
  ~TableMemory() {
    release();
  }
  TableMemory(TableMemory&& other) noexcept {
    *this = std::move(other);
  }
  TableMemory& operator=(TableMemory&& other) noexcept {
    if (this != &other) {
      release();
      data_ = other.data_;
      size_ = other.size_;
      mapping_ = other.mapping_;
      mapped_length_ = other.mapped_length_;
      heap_ = std::move(other.heap_);
      other.data_ = nullptr;
      other.size_ = 0;
      other.mapping_ = nullptr;
      other.mapped_length_ = 0;
    }
    return *this;
  }
  TableMemory(const TableMemory&) = delete;
  TableMemory& operator=(const TableMemory&) = delete;

  [[nodiscard]] T* data() {
    return data_;
  }
  [[nodiscard]] const T* data() const {
    return data_;
  }
  [[nodiscard]] std::size_t size() const {
    return size_;
  }
  // Whether the elements are all zero bytes already (a fresh anonymous mapping's are), so that a
  // table whose empty value is zero need not be filled.
  [[nodiscard]] bool zeroed() const {
    return mapping_ != nullptr;
  }
  T& operator[](std::size_t i) {
    return data_[i];
  }
  const T& operator[](std::size_t i) const {
    return data_[i];
  }

 private:
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;
  static constexpr std::size_t kMappedFrom = std::size_t{1} << 20;

  void release() {
    if (mapping_ != nullptr) (void)::munmap(mapping_, mapped_length_);
    heap_.reset();
    mapping_ = nullptr;
    data_ = nullptr;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  void* mapping_ = nullptr;
  std::size_t mapped_length_ = 0;
  std::unique_ptr<T[]> heap_;
};

}  // namespace ggufcheck::detail
