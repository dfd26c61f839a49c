// Finds repeated names (metadata keys, tensor names) in one pass, whatever the names are: the
// file chooses them, so they may be chosen to collide.
//
// An open-addressing table of the entries actually read (sized once from their number, never
// from a count in the file), hashed with XXH3-64 under a seed drawn once per process, so that
// a file cannot pick names whose hashes cluster: keys that collide under an unseeded hash
// (std::hash, say) land anywhere here. A probe compares the names in the slots it passes (at
// most half full: about one and a half on average), which string_view does length first: an
// entry costs the hashing of its name and a comparison or two, each at most as long as the
// name, so the work stays linear in the bytes of the names.
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

#include <algorithm>
#include <bit>
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
// can give one that makes every name collide). The finder keeps no names, only entry indices
// (4 bytes a slot, two slots an entry): it asks the caller for an entry's name when a probe
// needs to compare it, so a model of a million names needs 8 MB for it, not 50.
template <typename Hash>
class BasicDuplicateFinder {
 public:
  // A sequence longer than this falls back to the ordered map (see above).
  static constexpr std::size_t kMaxProbes = 256;

  explicit BasicDuplicateFinder(std::size_t entries, Hash hash = Hash{}) : hash_(std::move(hash)) {
    // At most half full. A slot is 32 bits: the entry index in the low index_bits_ (never all
    // ones, which marks an empty slot) and a tag of the name's hash above it, so a probe compares
    // names only when the tags agree (with 10^6 names, 12 bits of tag: one probe in 4096), not
    // at every slot it passes, each of which would be a cache miss into the model and the file.
    // More entries than 2^31 go to the ordered map from the start (they take over 25 GB).
    index_bits_ = static_cast<unsigned>(std::bit_width(entries));
    if (index_bits_ >= 32) {
      ordered_mode_ = true;
      return;
    }
    index_mask_ = (std::uint32_t{1} << index_bits_) - 1;
    slots_.assign(std::max<std::size_t>(16, 2 * entries), kEmpty);
  }

  // Records name as entry `index`; returns the index of an earlier equal name, if any.
  // name_of(j) gives the name of an entry j inserted before.
  template <typename NameOf>
  std::optional<std::size_t> insert(std::string_view name, std::size_t index,
                                    const NameOf& name_of) {
    if (ordered_mode_) return insert_ordered(name, index);
    const std::uint64_t hash = hash_(name);
    const std::size_t capacity = slots_.size();
    // The slot by multiply-shift of the hash (its high bits: any capacity, not only powers of
    // two); the tag from its low bits.
    std::size_t slot = static_cast<std::size_t>((static_cast<Wide>(hash) * capacity) >> 64);
    const std::uint32_t tag = static_cast<std::uint32_t>(hash << index_bits_) & ~index_mask_;
    for (std::size_t probes = 0; probes < kMaxProbes; ++probes) {
      const std::uint32_t held = slots_[slot];
      if (held == kEmpty) {
        slots_[slot] = tag | static_cast<std::uint32_t>(index);
        return std::nullopt;
      }
      if ((held & ~index_mask_) == tag) {
        const std::size_t other = held & index_mask_;
        if (name_of(other) == name) return other;
      }
      if (++slot == capacity) slot = 0;
    }
    switch_to_ordered(name_of);
    return insert_ordered(name, index);
  }

  // A hint that `name` is inserted soon: fetches its first slot, so that a loop prefetching a
  // few entries ahead does not wait on a cache miss per name once the table outgrows the cache.
  void prefetch(std::string_view name) const {
    if (ordered_mode_) return;
    const std::uint64_t hash = hash_(name);
    __builtin_prefetch(
        &slots_[static_cast<std::size_t>((static_cast<Wide>(hash) * slots_.size()) >> 64)]);
  }

  // True once a long probe sequence made the finder use the ordered map (for the tests).
  [[nodiscard]] bool ordered() const { return ordered_mode_; }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  __extension__ typedef unsigned __int128 Wide;  // g++ and clang: the high half of a product

  // Every distinct name seen so far is in exactly one slot, with the index it was first
  // inserted with: the map keeps those.
  template <typename NameOf>
  void switch_to_ordered(const NameOf& name_of) {
    ordered_mode_ = true;
    for (const std::uint32_t held : slots_) {
      if (held == kEmpty) continue;
      const std::size_t entry = held & index_mask_;
      ordered_.try_emplace(name_of(entry), entry);
    }
    slots_ = {};
  }

  std::optional<std::size_t> insert_ordered(std::string_view name, std::size_t index) {
    const auto [it, inserted] = ordered_.try_emplace(name, index);
    if (inserted) return std::nullopt;
    return it->second;
  }

  Hash hash_;
  std::vector<std::uint32_t> slots_;  // tag | entry index, or kEmpty
  unsigned index_bits_ = 0;
  std::uint32_t index_mask_ = 0;
  bool ordered_mode_ = false;
  std::map<std::string_view, std::size_t, std::less<>> ordered_;  // only after the fallback
};

using DuplicateFinder = BasicDuplicateFinder<SeededHash>;

}  // namespace ggufcheck::detail
