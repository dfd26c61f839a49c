#include "expected.hpp"

#include <algorithm>

#include "ggufcheck/format.hpp"
#include "models.hpp"
#include "show.hpp"

namespace ggufcheck::testing {

std::vector<FindingKey> expected_in(const std::vector<Expect>& expected, Profile profile) {
  std::vector<FindingKey> out;
  for (const Expect& e : expected) {
    if (!e.profiles[static_cast<std::size_t>(profile)]) continue;
    if (catalogue_entry(e.code).severity(profile) == Severity::Silent) continue;
    out.emplace_back(static_cast<std::uint16_t>(e.code), e.offset, e.length);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<FindingKey> actual_findings(const Report& report) {
  std::vector<FindingKey> out;
  for (const Finding& f : report.findings) {
    out.emplace_back(static_cast<std::uint16_t>(f.code), f.offset, f.length);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string describe(const std::vector<FindingKey>& findings) {
  std::string out;
  for (const auto& [code, offset, length] : findings) {
    if (!out.empty()) out += ", ";
    out += code_string(static_cast<Code>(code)) + "@" + hex(offset) + "+" + std::to_string(length);
  }
  return out.empty() ? "(none)" : out;
}

std::string describe(const Report& report) {
  std::string out;
  for (const Finding& f : report.findings) {
    out += "\n    " + code_string(f.code) + " " + std::string(to_string(f.severity)) + " @" +
           hex(f.offset) + "+" + std::to_string(f.length) + " " + f.path + ": " + f.message;
  }
  return out.empty() ? "\n    (no findings)" : out;
}

std::vector<Expect> implied_findings(const Document& doc, const WrittenLayout& layout,
                                     const Reach& reach) {
  std::vector<Expect> out;
  const std::uint64_t width = doc.version == 1 ? 4 : 8;
  if (reach.header) {
    if (doc.version == 2) out.push_back({Code::OldVersion, 4, 4});
    if (doc.endian == Endian::Big) out.push_back({Code::ByteSwappedFile, 4, 4});
  }
  for (std::size_t i = 0; i < doc.metadata.size() && i < reach.pairs; ++i) {
    const std::string& key = doc.metadata[i].key;
    if (key.empty() || !printable_ascii(key)) continue;
    const std::uint64_t at = layout.pairs[i].key_offset;
    const std::uint64_t length = width + key.size();
    if (!conventional_key(key, true)) {
      out.push_back({Code::UnconventionalKey, at, length, {true, false, true}});
    }
    if (!conventional_key(key, false)) {
      out.push_back({Code::UnconventionalKey, at, length, {false, true, false}});
    }
  }
  // GGUF9503: a key that is the dotted prefix of another (node-llama-cpp keeps the keys under
  // tokenizer.chat_template and general.license flat), once per shorter key.
  const std::size_t pairs = std::min(doc.metadata.size(), reach.pairs);
  for (std::size_t j = 0; j < pairs; ++j) {
    const std::string& prefix = doc.metadata[j].key;
    if (prefix == "tokenizer.chat_template" || prefix == "general.license") continue;
    for (std::size_t i = 0; i < pairs; ++i) {
      const std::string& key = doc.metadata[i].key;
      if (key.size() > prefix.size() && key.compare(0, prefix.size(), prefix) == 0 &&
          key[prefix.size()] == '.') {
        out.push_back({Code::KeyPrefixConflict, layout.pairs[j].key_offset, width + prefix.size()});
        break;
      }
    }
  }
  for (std::size_t i = 0; i < doc.tensors.size() && i < reach.tensors; ++i) {
    const Tensor& t = doc.tensors[i];
    const TensorTypeInfo* type = tensor_type(t.type);
    if (type != nullptr && type->recent() && reach.type_changed.count(i) == 0) {
      out.push_back({Code::NewTensorType, layout.tensors[i].type_offset, 4});
    }
    if (t.dims.empty()) out.push_back({Code::ScalarTensor, layout.tensors[i].n_dims_offset, 4});
  }
  return out;
}

}  // namespace ggufcheck::testing
