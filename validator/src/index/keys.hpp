// Finding keys in the index, by the profile's rule for what makes two keys the same.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "ggufcheck/validate.hpp"
#include "index/file_index.hpp"

namespace ggufcheck::detail {

// The identity of a key or tensor name for lookups: the llama.cpp profile compares C strings,
// up to the first NUL, as ggml does.
[[nodiscard]] inline std::string_view c_string_prefix(std::string_view bytes) {
  return bytes.substr(0, bytes.find('\0'));
}
[[nodiscard]] inline std::string_view key_identity(std::string_view key, Profile profile) {
  return profile == Profile::LlamaCpp ? c_string_prefix(key) : key;
}
// The index of the pair with this key, or nullopt (first match, by the profile's key identity).
[[nodiscard]] inline std::optional<std::size_t> find_key(const FileIndex& index,
                                                         std::string_view key, Profile profile) {
  for (std::size_t i = 0; i < index.metadata.size(); ++i) {
    if (key_identity(index.key(i), profile) == key) return i;
  }
  return std::nullopt;
}

// The indices of several keys in one pass over the pairs (the first match of each, or nullopt):
// an index of a million pairs is walked once, not once per key.
template <std::size_t N>
[[nodiscard]] std::array<std::optional<std::size_t>, N> find_keys(
    const FileIndex& index, const std::array<std::string_view, N>& keys, Profile profile) {
  std::array<std::optional<std::size_t>, N> found{};
  std::size_t missing = N;
  for (std::size_t i = 0; i < index.metadata.size() && missing > 0; ++i) {
    const std::string_view key = key_identity(index.key(i), profile);
    for (std::size_t k = 0; k < N; ++k) {
      if (!found[k] && keys[k] == key) {
        found[k] = i;
        --missing;
      }
    }
  }
  return found;
}

}  // namespace ggufcheck::detail
