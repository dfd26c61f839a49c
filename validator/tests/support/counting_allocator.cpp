// The counting global allocator of the test programs that measure what validate() allocates
// (see counting_allocator.hpp). Compiled into each such program exactly once: CMake adds this
// file to the program's sources; including the header without it fails to link.
//
// malloc-based; live and peak bytes are atomics, so the counting is thread-safe. The size of
// a block is taken from malloc_usable_size both when it is allocated and when it is freed, so
// the unsized deletes need no header and the two always agree (glibc and ASan both provide
// it; ASan intercepts malloc, free and malloc_usable_size, so this works under sanitizers too:
// Threats.AllocatorCountsEveryForm proves that these replacements are the ones in use).
#include "counting_allocator.hpp"

#include <malloc.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace ggufcheck::testing {

std::atomic<std::size_t> g_live_bytes{0};
std::atomic<std::size_t> g_peak_bytes{0};
std::atomic<std::uint64_t> g_allocations{0};
std::atomic<std::size_t> g_refuse_from_bytes{0};

}  // namespace ggufcheck::testing

using ggufcheck::testing::g_allocations;
using ggufcheck::testing::g_live_bytes;
using ggufcheck::testing::g_peak_bytes;
using ggufcheck::testing::g_refuse_from_bytes;

namespace {

void note_allocated(void* p) noexcept {
  const std::size_t n = malloc_usable_size(p);
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  const std::size_t live = g_live_bytes.fetch_add(n, std::memory_order_relaxed) + n;
  std::size_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (live > peak &&
         !g_peak_bytes.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
}

void* try_allocate(std::size_t size, std::size_t alignment) noexcept {
  const std::size_t refuse = g_refuse_from_bytes.load(std::memory_order_relaxed);
  if (refuse != 0 && size >= refuse) return nullptr;
  if (size == 0) size = 1;
  void* p = nullptr;
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(size);
  } else if (posix_memalign(&p, alignment, size) != 0) {
    p = nullptr;
  }
  if (p != nullptr) note_allocated(p);
  return p;
}

void* allocate(std::size_t size, std::size_t alignment) {
  for (;;) {
    if (void* p = try_allocate(size, alignment)) return p;
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* allocate_nothrow(std::size_t size, std::size_t alignment) noexcept {
  try {
    return allocate(size, alignment);
  } catch (...) {
    return nullptr;
  }
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  g_live_bytes.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
  std::free(p);
}

std::size_t alignment_of(std::align_val_t alignment) {
  return static_cast<std::size_t>(alignment);
}

}  // namespace

void* operator new(std::size_t size) {
  return allocate(size, 0);
}
void* operator new[](std::size_t size) {
  return allocate(size, 0);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return allocate_nothrow(size, 0);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return allocate_nothrow(size, 0);
}
void* operator new(std::size_t size, std::align_val_t al) {
  return allocate(size, alignment_of(al));
}
void* operator new[](std::size_t size, std::align_val_t al) {
  return allocate(size, alignment_of(al));
}
void* operator new(std::size_t size, std::align_val_t al, const std::nothrow_t&) noexcept {
  return allocate_nothrow(size, alignment_of(al));
}
void* operator new[](std::size_t size, std::align_val_t al, const std::nothrow_t&) noexcept {
  return allocate_nothrow(size, alignment_of(al));
}

void operator delete(void* p) noexcept {
  release(p);
}
void operator delete[](void* p) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  release(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  release(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release(p);
}
