// Finding keys in the model, by the profile's rule for what makes two keys the same.
#pragma once

#include <optional>
#include <string_view>

#include "ggufcheck/validate.hpp"
#include "model/model.hpp"

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
[[nodiscard]] inline std::optional<std::size_t> find_key(const Model& model, std::string_view key,
                                                         Profile profile) {
  for (std::size_t i = 0; i < model.metadata.size(); ++i) {
    if (key_identity(model.key(i), profile) == key) return i;
  }
  return std::nullopt;
}

}  // namespace ggufcheck::detail
