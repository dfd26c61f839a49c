#include "models.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "ggufcheck/format.hpp"

namespace ggufcheck::testing {

std::uint64_t round_up(std::uint64_t value, std::uint64_t alignment) {
  const std::uint64_t rem = value % alignment;
  return rem == 0 ? value : value + (alignment - rem);
}

bool is_power_of_two(std::uint64_t v) {
  return v != 0 && (v & (v - 1)) == 0;
}

std::size_t pick(std::uint64_t choice, std::size_t n) {
  return n == 0 ? 0 : static_cast<std::size_t>(choice % n);
}

std::vector<std::uint8_t> seeded_bytes(std::uint64_t seed, std::uint64_t count) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(count), 0);
  if (seed == 0) return out;
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
  for (auto& b : out) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::uint8_t>(x >> 24);
  }
  return out;
}

std::string encode_utf8(std::uint32_t cp) {
  std::string out;
  const auto byte = [&](std::uint32_t v) { out.push_back(static_cast<char>(v & 0xFF)); };
  if (cp < 0x80) {
    byte(cp);
  } else if (cp < 0x800) {
    byte(0xC0 | (cp >> 6));
    byte(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    byte(0xE0 | (cp >> 12));
    byte(0x80 | ((cp >> 6) & 0x3F));
    byte(0x80 | (cp & 0x3F));
  } else {
    byte(0xF0 | (cp >> 18));
    byte(0x80 | ((cp >> 12) & 0x3F));
    byte(0x80 | ((cp >> 6) & 0x3F));
    byte(0x80 | (cp & 0x3F));
  }
  return out;
}

std::string truncate_utf8(std::string text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

bool conventional_key(std::string_view key, bool strict) {
  constexpr std::string_view kTemplate = "tokenizer.chat_template.";
  const std::size_t upper_from =
      strict && key.substr(0, kTemplate.size()) == kTemplate ? kTemplate.size() : key.size();
  std::size_t segment = 0;
  for (std::size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    if (c == '.') {
      if (segment == 0) return false;
      segment = 0;
      continue;
    }
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                    (strict && c == '-') || (i >= upper_from && c >= 'A' && c <= 'Z');
    if (!ok) return false;
    ++segment;
  }
  return segment != 0;
}

bool printable_ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b >= 0x20 && b < 0x7f;
  });
}

std::string_view to_string(KeyStyle style) {
  switch (style) {
    case KeyStyle::Conventional: return "conventional";
    case KeyStyle::StrictOnly: return "conventional in strict only";
    case KeyStyle::Unconventional: return "unconventional";
  }
  return "?";
}

bool reserved_first_segment(std::string_view segment) {
  return segment == "general" || segment == "tokenizer" || segment == "split" ||
         segment == "0fault";
}

WriteOptions ValidModel::options() const {
  WriteOptions o;
  o.pad_when_no_tensors = pad_when_no_tensors;
  return o;
}

Written ValidModel::write() const {
  return ggufcheck::write(doc, options());
}

std::string_view architecture_of(const Document& doc) {
  for (const KeyValue& kv : doc.metadata) {
    if (kv.key == "general.architecture" && kv.value.type == ValueType::String) {
      return kv.value.text;
    }
  }
  return {};
}

const KeyValue* find_pair(const Document& doc, std::string_view key) {
  for (const KeyValue& kv : doc.metadata) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}
KeyValue* find_pair(Document& doc, std::string_view key) {
  for (KeyValue& kv : doc.metadata) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}
void set_pair(Document& doc, std::string_view key, Value value) {
  if (KeyValue* kv = find_pair(doc, key)) {
    kv->value = std::move(value);
  } else {
    doc.metadata.push_back({std::string(key), std::move(value), {}});
  }
}
void erase_pair(Document& doc, std::string_view key) {
  std::erase_if(doc.metadata, [&](const KeyValue& kv) { return kv.key == key; });
}
std::optional<std::size_t> pair_index(const Document& doc, std::string_view key) {
  for (std::size_t i = 0; i < doc.metadata.size(); ++i) {
    if (doc.metadata[i].key == key) return i;
  }
  return std::nullopt;
}

bool is_quantized(std::uint32_t type) {
  const TensorTypeInfo* info = tensor_type(type);
  return info != nullptr && info->quantized();
}

bool has_quantized_tensor(const Document& doc) {
  return std::any_of(doc.tensors.begin(), doc.tensors.end(),
                     [](const Tensor& t) { return is_quantized(t.type); });
}

std::uint32_t effective_alignment(const Document& doc) {
  const KeyValue* kv = find_pair(doc, "general.alignment");
  if (kv != nullptr && kv->value.type == ValueType::Uint32 &&
      kv->raw_type.value_or(static_cast<std::uint32_t>(ValueType::Uint32)) ==
          static_cast<std::uint32_t>(ValueType::Uint32) &&
      kv->value.bits != 0) {
    return static_cast<std::uint32_t>(kv->value.bits);
  }
  return kDefaultAlignment;
}

bool dotted_prefixes(std::string_view a, std::string_view b) {
  if (a.size() > b.size()) std::swap(a, b);
  if (a == "tokenizer.chat_template" || a == "general.license") return false;
  return b.size() > a.size() && b.substr(0, a.size()) == a && b[a.size()] == '.';
}

bool is_free_key(std::string_view key, std::string_view arch) {
  const std::string_view first = key.substr(0, key.find('.'));
  return !reserved_first_segment(first) && first != arch;
}

void ensure_quantization_version(Document& doc) {
  if (find_pair(doc, "general.quantization_version") == nullptr) {
    doc.metadata.push_back({"general.quantization_version", Value::u32(2), {}});
  }
}

void make_names_unique(Document& doc) {
  std::set<std::string> seen;
  for (Tensor& t : doc.tensors) {
    while (seen.count(t.name) != 0) {
      if (t.name.size() >= 63) t.name = truncate_utf8(t.name, 40);
      t.name += "x";
    }
    seen.insert(t.name);
  }
}

}  // namespace ggufcheck::testing
