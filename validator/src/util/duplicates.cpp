// The seeded hash of duplicates.hpp: XXH3-64, header-only (XXH_INLINE_ALL), under a seed drawn
// from the kernel once per process.
#include "util/duplicates.hpp"

#include <sys/random.h>

#include <chrono>
#include <cstdint>
#include <string_view>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ggufcheck::detail {

namespace {

// getrandom(2) without blocking; should the kernel's pool not be ready yet (early boot), the
// clock and an address, mixed: the answers never depend on the seed, only the odds of a long
// probe sequence do, and the finder bounds those on its own.
std::uint64_t draw_seed() noexcept {
  std::uint64_t seed = 0;
  if (::getrandom(&seed, sizeof seed, GRND_NONBLOCK) == static_cast<ssize_t>(sizeof seed)) {
    return seed;
  }
  const auto now = static_cast<std::uint64_t>(
      std::chrono::high_resolution_clock::now().time_since_epoch().count());
  const auto where = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(&seed));
  return XXH3_64bits_withSeed(&where, sizeof where, now);
}

}  // namespace

std::uint64_t seeded_hash(std::string_view bytes) noexcept {
  static const std::uint64_t seed = draw_seed();
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

}  // namespace ggufcheck::detail
