// Checks of the standard keys that loaders trust (gguf-format.md section 4).
#include <algorithm>
#include <array>

#include "checks/checks.hpp"
#include "index/keys.hpp"

namespace ggufcheck::detail {
namespace {

// An expected type: a scalar type, or an array of element_type when is_array.
struct Expected {
  ValueType type;
  bool is_array = false;
  ValueType element_type = ValueType::Uint8;
  ValueType alternative = ValueType::Array;  // a second accepted scalar type, if any
};

constexpr Expected scalar(ValueType t) {
  return {t, false, ValueType::Uint8, t};
}
constexpr Expected array_of(ValueType e) {
  return {ValueType::Array, true, e, ValueType::Array};
}
// Counts are uint32 in real files although the spec says "by convention uint64".
constexpr Expected kCount{ValueType::Uint32, false, ValueType::Uint8, ValueType::Uint64};

struct StandardKey {
  std::string_view key;
  Expected expected;
};

constexpr std::array kStandardKeys = {
    StandardKey{"general.architecture", scalar(ValueType::String)},
    StandardKey{"general.quantization_version", scalar(ValueType::Uint32)},
    StandardKey{"general.file_type", scalar(ValueType::Uint32)},
    StandardKey{"general.type", scalar(ValueType::String)},
    StandardKey{"general.name", scalar(ValueType::String)},
    StandardKey{"general.author", scalar(ValueType::String)},
    StandardKey{"general.version", scalar(ValueType::String)},
    StandardKey{"general.organization", scalar(ValueType::String)},
    StandardKey{"general.basename", scalar(ValueType::String)},
    StandardKey{"general.finetune", scalar(ValueType::String)},
    StandardKey{"general.description", scalar(ValueType::String)},
    StandardKey{"general.quantized_by", scalar(ValueType::String)},
    StandardKey{"general.size_label", scalar(ValueType::String)},
    StandardKey{"general.license", scalar(ValueType::String)},
    StandardKey{"general.license.name", scalar(ValueType::String)},
    StandardKey{"general.license.link", scalar(ValueType::String)},
    StandardKey{"general.url", scalar(ValueType::String)},
    StandardKey{"general.doi", scalar(ValueType::String)},
    StandardKey{"general.uuid", scalar(ValueType::String)},
    StandardKey{"general.repo_url", scalar(ValueType::String)},
    StandardKey{"general.source.url", scalar(ValueType::String)},
    StandardKey{"general.source.repo_url", scalar(ValueType::String)},
    StandardKey{"general.tags", array_of(ValueType::String)},
    StandardKey{"general.languages", array_of(ValueType::String)},
    StandardKey{"tokenizer.ggml.model", scalar(ValueType::String)},
    StandardKey{"tokenizer.ggml.pre", scalar(ValueType::String)},
    StandardKey{"tokenizer.ggml.tokens", array_of(ValueType::String)},
    StandardKey{"tokenizer.ggml.scores", array_of(ValueType::Float32)},
    StandardKey{"tokenizer.ggml.token_type", array_of(ValueType::Int32)},
    StandardKey{"tokenizer.ggml.merges", array_of(ValueType::String)},
    StandardKey{"tokenizer.ggml.add_bos_token", scalar(ValueType::Bool)},
    StandardKey{"tokenizer.ggml.add_eos_token", scalar(ValueType::Bool)},
    StandardKey{"tokenizer.ggml.add_space_prefix", scalar(ValueType::Bool)},
    StandardKey{"tokenizer.chat_template", scalar(ValueType::String)},
    StandardKey{"split.no", scalar(ValueType::Uint16)},
    StandardKey{"split.count", scalar(ValueType::Uint16)},
    StandardKey{"split.tensors.count", scalar(ValueType::Int32)},
};

// Suffixes of "{arch}." keys whose type is checked once general.architecture is known.
constexpr std::array<std::string_view, 4> kArchCountKeys = {"context_length", "embedding_length",
                                                            "block_count", "vocab_size"};

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool is_token_id_key(std::string_view key) {
  return starts_with(key, "tokenizer.ggml.") && ends_with(key, "_token_id");
}

std::string describe(const Expected& e) {
  if (e.is_array) return fmt::format("{}[]", to_string(e.element_type));
  if (e.alternative != e.type) {
    return fmt::format("{} or {}", to_string(e.type), to_string(e.alternative));
  }
  return std::string(to_string(e.type));
}

std::string describe(const FileIndex& index, std::size_t i) {
  const ValueType type = index.metadata[i].type();
  if (type == ValueType::Array) return fmt::format("{}[]", to_string(index.array(i).elements()));
  return std::string(to_string(type));
}

bool matches(const FileIndex& index, std::size_t i, const Expected& e) {
  const ValueType type = index.metadata[i].type();
  if (e.is_array) return type == ValueType::Array && index.array(i).elements() == e.element_type;
  return type == e.type || type == e.alternative;
}

std::optional<Expected> expected_type(std::string_view key, std::string_view arch) {
  const bool maybe_standard =
      starts_with(key, "general.") || starts_with(key, "tokenizer.") || starts_with(key, "split.");
  if (maybe_standard) {
    for (const auto& standard : kStandardKeys) {
      if (standard.key == key) return standard.expected;
    }
  }
  if (is_token_id_key(key)) return scalar(ValueType::Uint32);
  if (starts_with(key, "tokenizer.chat_template.")) return scalar(ValueType::String);
  if (!arch.empty() && key.size() > arch.size() && starts_with(key, arch) &&
      key[arch.size()] == '.') {
    const std::string_view suffix = key.substr(arch.size() + 1);
    for (std::string_view count_key : kArchCountKeys) {
      if (suffix == count_key) return kCount;
    }
  }
  return std::nullopt;
}

}  // namespace

void check_standard_keys(const FileIndex& index, const DataLayout& /*layout*/, Sink& sink) {
  const Profile profile = sink.profile();
  const auto [arch, quantization_version, tokens, scores, token_type, split_no] =
      find_keys<6>(index,
                   {"general.architecture", "general.quantization_version", "tokenizer.ggml.tokens",
                    "tokenizer.ggml.scores", "tokenizer.ggml.token_type", "split.no"},
                   profile);
  const std::string_view arch_name = arch && index.metadata[*arch].type() == ValueType::String
                                         ? index.string_value(*arch)
                                         : std::string_view();

  for (std::size_t i = 0; i < index.metadata.size(); ++i) {
    const std::string_view key = index.key(i);
    if (key_identity(key, profile) == "general.alignment") continue;  // GGUF5001
    const auto expected = expected_type(key_identity(key, profile), arch_name);
    if (expected && !matches(index, i, *expected)) {
      sink.report(Code::KeyWrongType, index.type_offset(i), 4, kv_path(i, key) + " type",
                  "loaders read standard keys with a fixed type", "{} is {}, expected {}",
                  escape(key), describe(index, i), describe(*expected));
    }
  }

  // A later shard of a split set (split.no a uint16 of 1 or more, as gguf-split writes it)
  // holds only the split keys: llama.cpp reads general.architecture and
  // general.quantization_version from the first shard. With the model checks off the file is
  // judged as that shard (neither key is missing from it); with them on, the set's checks
  // (splits/sets.cpp) judge it, and a later shard read alone is not a model llama.cpp loads.
  const bool as_later_shard = !sink.options().model_checks && split_no &&
                              index.metadata[*split_no].type() == ValueType::Uint16 &&
                              static_cast<std::uint16_t>(index.metadata[*split_no].payload()) >= 1;
  if (index.metadata_complete && !arch && !as_later_shard) {
    sink.report(Code::MissingArchitecture, 0, header_size(index.narrow()), "metadata",
                "the spec requires general.architecture; llama.cpp cannot pick a model without it",
                "no general.architecture key");
  }
  if (index.tensors_complete && !quantization_version && !as_later_shard) {
    for (std::size_t i = 0; i < index.tensors.size(); ++i) {
      const TensorTypeInfo* type = tensor_type(index.tensors[i].type);
      if (type == nullptr || !type->quantized()) continue;
      sink.report(Code::MissingQuantizationVersion, index.type_offset_of_tensor(i), 4,
                  tensor_path(i, index.name(i)) + " type",
                  "write general.quantization_version (uint32, currently 2)",
                  "tensor is quantized ({}) but general.quantization_version is missing",
                  type->name);
      break;
    }
  }

  if (!tokens || !matches(index, *tokens, array_of(ValueType::String))) return;
  const std::uint64_t vocab = index.array(*tokens).count;
  const std::pair<std::string_view, std::optional<std::size_t>> parallel[] = {
      {"tokenizer.ggml.scores", scores}, {"tokenizer.ggml.token_type", token_type}};
  for (const auto& [name, other] : parallel) {
    if (!other || index.metadata[*other].type() != ValueType::Array) continue;
    const std::uint64_t count = index.array(*other).count;
    if (count == vocab) continue;
    sink.report(Code::TokenizerLengthMismatch, index.count_offset(*other), index.size_width(),
                kv_path(*other, index.key(*other)) + " count",
                "loaders index this array by token id",
                "{} has {} entries but tokenizer.ggml.tokens has {}", name, count, vocab);
  }
  for (std::size_t i = 0; i < index.metadata.size(); ++i) {
    const MetadataEntry& entry = index.metadata[i];
    const std::string_view key = index.key(i);
    if (!is_token_id_key(key_identity(key, profile)) || entry.type() != ValueType::Uint32) continue;
    if (entry.payload() >= vocab) {
      sink.report(Code::TokenIdOutOfRange, index.value_range(i).offset, 4, kv_path(i, key),
                  "loaders index the vocabulary with this id (GHSA-g4cc-763q-h9h6)",
                  "{} is {} but the vocabulary has {} tokens", escape(key), entry.payload(), vocab);
    }
  }
}

}  // namespace ggufcheck::detail

namespace ggufcheck {

std::span<const StandardKeyType> standard_keys() {
  static const auto table = [] {
    std::array<StandardKeyType, detail::kStandardKeys.size()> out{};
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto& standard = detail::kStandardKeys[i];
      out[i] = {standard.key, standard.expected.type, standard.expected.element_type};
    }
    return out;
  }();
  return table;
}

std::span<const std::string_view> architecture_count_key_suffixes() {
  return detail::kArchCountKeys;
}

}  // namespace ggufcheck
