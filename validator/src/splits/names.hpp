// The names of a split set's shards as llama.cpp derives them (llama_split_prefix and
// llama_split_path in its src/llama.cpp): "<prefix>-%05d-of-%05d.gguf", numbered from 1, with
// a count of at most 65535 (split.count is a u16). Names are compared as the byte strings the
// caller gives, directories included, as llama.cpp compares the path it is given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ggufcheck::detail {

struct ShardName {
  std::string prefix;        // everything before "-NNNNN-of-MMMMM.gguf"; never empty
  std::uint32_t number = 0;  // 1 .. count, as the name writes it
  std::uint32_t count = 0;   // 1 .. 65535
};

// The name's place in a set, when it ends in "-%05d-of-%05d.gguf" with 1 <= number <= count
// <= 65535 after a non-empty prefix (the only names llama.cpp derives).
[[nodiscard]] std::optional<ShardName> parse_shard_name(std::string_view path);

// llama_split_path: the name of shard `number` (1-based) of `count`.
[[nodiscard]] std::string shard_path(std::string_view prefix, std::uint32_t number,
                                     std::uint32_t count);

// llama_split_prefix(path, 0, count) succeeds: the path ends in "-00001-of-<count>.gguf" after a
// non-empty prefix, so llama.cpp can derive the other shards' names from it.
[[nodiscard]] bool names_first_shard(std::string_view path, std::uint32_t count);

}  // namespace ggufcheck::detail
