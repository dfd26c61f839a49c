// Finds repeated names (metadata keys, tensor names) in one pass, whatever the names are: the
// file chooses them, so they may be chosen to collide.
//
// An open-addressing table of the entries actually read (sized once from their number, never
// from a count in the file), hashed with XXH3-64 under a seed drawn once per process, so that
// a file cannot pick names whose hashes cluster: keys that collide under an unseeded hash
// (std::hash, say) land anywhere here. Each entry keeps its full 64-bit hash, so a probe
// compares the names only when the hashes are equal: an entry costs the hashing of its name,
// a few integer comparisons and, for a real duplicate, one comparison of the two names.
//
// The seed only makes clusters improbable; the bound on the work does not rely on it. A probe
// sequence longer than kMaxProbes (with a random seed and a table at most half full, a chance
// far below 10^-9 even for 10^8 names) switches the finder to an ordered map of the names
// seen, for this finder's remaining inserts: O(log n) comparisons of names per entry from
// then on, so n entries cost O(n log n) comparisons in the worst case.
//
// The answers do not depend on the seed or on the mode: insert returns the index recorded with
// the first insert of an equal name, so every run reports the same earliest entries in the same
// order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace ggufcheck::detail {

// XXH3-64 of the bytes under this process's seed (duplicates.cpp).
[[nodiscard]] std::uint64_t seeded_hash(std::string_view bytes) noexcept;

struct SeededHash {
  std::uint64_t operator()(std::string_view bytes) const noexcept { return seeded_hash(bytes); }
};

// Hash: a callable from std::string_view to std::uint64_t (a template parameter so the tests
// can give one that makes every name collide).
template <typename Hash>
class BasicDuplicateFinder {
 public:
  // A sequence longer than this falls back to the ordered map (see above).
  static constexpr std::size_t kMaxProbes = 256;

  explicit BasicDuplicateFinder(std::size_t entries, Hash hash = Hash{}) : hash_(std::move(hash)) {
    std::size_t capacity = 16;
    while (capacity / 2 < entries) capacity *= 2;
    slots_.assign(capacity, kEmpty);
    names_.reserve(entries);
  }

  // Records name as entry `index`; returns the index of an earlier equal name, if any.
  std::optional<std::size_t> insert(std::string_view name, std::size_t index) {
    if (ordered_mode_) return insert_ordered(name, index);
    const std::uint64_t hash = hash_(name);
    const std::size_t mask = slots_.size() - 1;
    std::size_t slot = static_cast<std::size_t>(hash) & mask;
    for (std::size_t probes = 0; probes < kMaxProbes; ++probes, slot = (slot + 1) & mask) {
      if (slots_[slot] == kEmpty) {
        slots_[slot] = names_.size();
        names_.push_back({name, index, hash});
        return std::nullopt;
      }
      const Entry& other = names_[slots_[slot]];
      if (other.hash == hash && other.name == name) return other.index;
    }
    switch_to_ordered();
    return insert_ordered(name, index);
  }

  // True once a long probe sequence made the finder use the ordered map (for the tests).
  [[nodiscard]] bool ordered() const { return ordered_mode_; }

 private:
  static constexpr std::size_t kEmpty = SIZE_MAX;
  struct Entry {
    std::string_view name;
    std::size_t index;
    std::uint64_t hash;
  };

  // The names seen so far, in the order they were first inserted: try_emplace keeps the first.
  void switch_to_ordered() {
    ordered_mode_ = true;
    for (const Entry& entry : names_) ordered_.try_emplace(entry.name, entry.index);
    slots_ = {};
    names_ = {};
  }

  std::optional<std::size_t> insert_ordered(std::string_view name, std::size_t index) {
    const auto [it, inserted] = ordered_.try_emplace(name, index);
    if (inserted) return std::nullopt;
    return it->second;
  }

  Hash hash_;
  std::vector<std::size_t> slots_;  // indices into names_, or kEmpty
  std::vector<Entry> names_;        // each distinct name once, in the order first inserted
  bool ordered_mode_ = false;
  std::map<std::string_view, std::size_t, std::less<>> ordered_;  // only after the fallback
};

using DuplicateFinder = BasicDuplicateFinder<SeededHash>;

}  // namespace ggufcheck::detail
