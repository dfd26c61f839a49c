// A counting replacement of the global operator new/delete (every form), for the test programs
// that measure the peak of the bytes validate() allocates: test_threats.cpp,
// test_properties.cpp and the corpus tests. The counters and PeakProbe are declared here; the
// replacement operators and the counters are defined in counting_allocator.cpp, which each
// program that includes this header compiles exactly once (CMake: add
// support/counting_allocator.cpp to its sources). Including the header without it fails to link,
// so a program can neither forget the definition nor get it twice.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace ggufcheck::testing {

extern std::atomic<std::size_t> g_live_bytes;     // bytes currently allocated
extern std::atomic<std::size_t> g_peak_bytes;     // the highest g_live_bytes since the last reset
extern std::atomic<std::uint64_t> g_allocations;  // allocations since the start
// Non-zero: every allocation of at least this many bytes fails (std::bad_alloc, or nullptr for
// the nothrow forms), to test what an allocation failure does.
extern std::atomic<std::size_t> g_refuse_from_bytes;

// The peak of live heap bytes above the level at construction.
class PeakProbe {
 public:
  PeakProbe() : baseline_(g_live_bytes.load()) { g_peak_bytes.store(baseline_); }
  [[nodiscard]] std::size_t peak() const {
    const std::size_t peak = g_peak_bytes.load();
    return peak > baseline_ ? peak - baseline_ : 0;
  }

 private:
  std::size_t baseline_;
};

}  // namespace ggufcheck::testing
