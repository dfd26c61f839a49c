#include "splits/names.hpp"

#include <fmt/format.h>

namespace ggufcheck::detail {
namespace {

// "-NNNNN-of-MMMMM.gguf": five digits each, since a u16 count never needs more.
constexpr std::string_view kOf = "-of-";
constexpr std::string_view kSuffix = ".gguf";
constexpr std::size_t kDigits = 5;
constexpr std::size_t kPostfix = 1 + kDigits + kOf.size() + kDigits + kSuffix.size();
constexpr std::uint32_t kMaxCount = 65535;

std::optional<std::uint32_t> digits(std::string_view text) {
  std::uint32_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint32_t>(c - '0');
  }
  return value;
}

}  // namespace

std::optional<ShardName> parse_shard_name(std::string_view path) {
  // llama_split_prefix: the path must be longer than the postfix (a prefix of at least a byte).
  if (path.size() <= kPostfix) return std::nullopt;
  const std::string_view postfix = path.substr(path.size() - kPostfix);
  if (postfix[0] != '-' || postfix.substr(1 + kDigits, kOf.size()) != kOf ||
      postfix.substr(kPostfix - kSuffix.size()) != kSuffix) {
    return std::nullopt;
  }
  const auto number = digits(postfix.substr(1, kDigits));
  const auto count = digits(postfix.substr(1 + kDigits + kOf.size(), kDigits));
  if (!number || !count || *number < 1 || *number > *count || *count > kMaxCount) {
    return std::nullopt;
  }
  return ShardName{std::string(path.substr(0, path.size() - kPostfix)), *number, *count};
}

std::string shard_path(std::string_view prefix, std::uint32_t number, std::uint32_t count) {
  return fmt::format("{}-{:05}-of-{:05}.gguf", prefix, number, count);
}

bool names_first_shard(std::string_view path, std::uint32_t count) {
  const auto name = parse_shard_name(path);
  return name && name->number == 1 && name->count == count;
}

}  // namespace ggufcheck::detail
