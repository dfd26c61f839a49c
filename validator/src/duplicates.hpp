// Finds repeated names in one pass: an open-addressing hash table sized once from the number
// of entries actually read (never from a count in the file), so a million keys cost one
// allocation instead of a million nodes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace ggufcheck::detail {

class DuplicateFinder {
 public:
  explicit DuplicateFinder(std::size_t entries) {
    std::size_t capacity = 16;
    while (capacity < entries * 2) capacity *= 2;
    slots_.assign(capacity, kEmpty);
    names_.reserve(entries);
  }

  // Records name as entry `index`; returns the index of an earlier equal name, if any.
  std::optional<std::size_t> insert(std::string_view name, std::size_t index) {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t slot = std::hash<std::string_view>{}(name)&mask;; slot = (slot + 1) & mask) {
      if (slots_[slot] == kEmpty) {
        slots_[slot] = names_.size();
        names_.push_back({name, index});
        return std::nullopt;
      }
      const Entry& other = names_[slots_[slot]];
      if (other.name == name) return other.index;
    }
  }

 private:
  static constexpr std::size_t kEmpty = SIZE_MAX;
  struct Entry {
    std::string_view name;
    std::size_t index;
  };
  std::vector<std::size_t> slots_;
  std::vector<Entry> names_;
};

}  // namespace ggufcheck::detail
