#include "structure_mutator.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/document.hpp"
#include "ggufcheck/format.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::fuzz {
namespace {

using Rng = std::mt19937_64;

// Tensor data the mutator writes in full; larger tensors get no data (and so a layout finding),
// which keeps every mutant small whatever its dims claim.
constexpr std::uint64_t kMaxTensorData = 4096;
// Arrays, strings and metadata the mutator creates stay small: the structure is what matters.
constexpr std::size_t kMaxCreatedItems = 8;

std::uint64_t below(Rng& rng, std::uint64_t n) {
  return n == 0 ? 0 : rng() % n;
}
bool one_in(Rng& rng, std::uint64_t n) {
  return below(rng, n) == 0;
}

template <typename Container>
const auto& pick(Rng& rng, const Container& items) {
  return items[below(rng, items.size())];
}

// A number at a boundary the checks care about, or near the old value.
std::uint64_t interesting(Rng& rng, std::uint64_t old) {
  static constexpr std::array<std::uint64_t, 22> kBoundaries = {
      0,
      1,
      2,
      7,
      8,
      31,
      32,
      63,
      64,
      65,
      255,
      0xffff,
      0x7fffffffULL,
      0x80000000ULL,
      0xffffffffULL,
      0x100000000ULL,
      kReferenceStringLimit,
      kReferenceStringLimit + 1,
      1ULL << 62,
      kInt64Limit - 1,
      kInt64Limit,
      UINT64_MAX,
  };
  switch (below(rng, 6)) {
    case 0: return old + 1;
    case 1: return old - 1;
    case 2: return old * 2;
    case 3: return 1ULL << below(rng, 64);
    case 4: return rng();
    default: return pick(rng, kBoundaries);
  }
}

std::string random_text(Rng& rng) {
  static const std::array<std::string, 12> kTexts = {
      "",
      "llama",
      std::string("a\0b", 3),
      "\xff\xfe",
      "\xc0\x80",
      "\xef\xbb\xbf"
      "bom",
      "line\xe2\x80\xa8separator",
      "next\xc2\x85line",
      "\xed\xa0\x80",
      "\xf4\x90\x80\x80",
      "<|endoftext|>",
      "general.architecture",
  };
  if (one_in(rng, 4)) {
    std::string text(below(rng, 80), '\0');
    for (char& c : text) c = static_cast<char>(rng());
    return text;
  }
  return pick(rng, kTexts);
}

ValueType random_scalar_type(Rng& rng) {
  static constexpr std::array<ValueType, 11> kScalars = {
      ValueType::Uint8,  ValueType::Int8,  ValueType::Uint16,  ValueType::Int16,
      ValueType::Uint32, ValueType::Int32, ValueType::Float32, ValueType::Bool,
      ValueType::Uint64, ValueType::Int64, ValueType::Float64};
  return pick(rng, kScalars);
}

Value random_value_of(Rng& rng, ValueType type, int depth);

Value random_array(Rng& rng, ValueType element_type, int depth) {
  std::vector<Value> items(below(rng, kMaxCreatedItems + 1));
  for (Value& item : items) item = random_value_of(rng, element_type, depth + 1);
  return Value::array(element_type, std::move(items));
}

Value random_value_of(Rng& rng, ValueType type, int depth) {
  switch (type) {
    case ValueType::String: return Value::string(random_text(rng));
    case ValueType::Array: {
      ValueType element = one_in(rng, 3) ? ValueType::String : random_scalar_type(rng);
      if (depth < 3 && one_in(rng, 6)) element = ValueType::Array;
      return random_array(rng, element, depth);
    }
    case ValueType::Bool: return Value::bool_byte(one_in(rng, 4) ? 2 : one_in(rng, 2) ? 1 : 0);
    case ValueType::Float32:
    case ValueType::Float64:
      // The values a canonical output and a data check treat specially, or any bits.
      if (!one_in(rng, 4)) {
        static constexpr std::array<double, 9> kFloats = {0.0,
                                                          -0.0,
                                                          0.1,
                                                          -1.5,
                                                          1e300,
                                                          5e-324,
                                                          std::numeric_limits<double>::infinity(),
                                                          -std::numeric_limits<double>::infinity(),
                                                          std::numeric_limits<double>::quiet_NaN()};
        const double value = pick(rng, kFloats);
        return type == ValueType::Float32 ? Value::f32(static_cast<float>(value))
                                          : Value::f64(value);
      }
      [[fallthrough]];
    default: {
      const std::uint32_t width = scalar_size(type);
      const std::uint64_t mask = width >= 8 ? UINT64_MAX : (1ULL << (8 * width)) - 1;
      return Value::integer(type, interesting(rng, 0) & mask);
    }
  }
}

Value random_value(Rng& rng) {
  switch (below(rng, 4)) {
    case 0: return random_value_of(rng, ValueType::String, 0);
    case 1: return random_value_of(rng, ValueType::Array, 0);
    default: return random_value_of(rng, random_scalar_type(rng), 0);
  }
}

// A pair loaders trust: a standard key with its type (or, one time in four, another type).
KeyValue random_pair(Rng& rng) {
  const auto keys = standard_keys();
  const StandardKeyType& standard = keys[below(rng, keys.size())];
  KeyValue kv;
  switch (below(rng, 4)) {
    case 0:
      kv.key = random_text(rng);
      kv.value = random_value(rng);
      return kv;
    case 1: {
      const auto suffixes = architecture_count_key_suffixes();
      kv.key = "llama." + std::string(suffixes[below(rng, suffixes.size())]);
      kv.value = one_in(rng, 4) ? random_value(rng) : Value::u32(4096);
      return kv;
    }
    default:
      kv.key = std::string(standard.key);
      if (one_in(rng, 4)) {
        kv.value = random_value(rng);
      } else if (standard.type == ValueType::Array) {
        kv.value = random_array(rng, standard.element_type, 1);
      } else {
        kv.value = random_value_of(rng, standard.type, 0);
      }
      return kv;
  }
}

std::uint32_t random_tensor_type(Rng& rng) {
  if (one_in(rng, 8)) return static_cast<std::uint32_t>(interesting(rng, kTensorTypeCount));
  return static_cast<std::uint32_t>(below(rng, kTensorTypeCount + 2));
}

std::string random_tensor_name(Rng& rng, const Document& doc) {
  switch (below(rng, 6)) {
    case 0: return std::string(below(rng, 3) + 63, 'n');  // 63, 64 or 65 bytes
    case 1: return random_text(rng);
    case 2:
      if (!doc.tensors.empty()) return doc.tensors[below(rng, doc.tensors.size())].name;
      [[fallthrough]];
    default: return "blk." + std::to_string(below(rng, 64)) + ".weight";
  }
}

// The data a tensor of this shape holds, when it is small enough to write.
void fit_data(Tensor& tensor) {
  const auto nbytes = tensor_nbytes(tensor.type, tensor.dims);
  const std::uint64_t size = nbytes && *nbytes <= kMaxTensorData ? *nbytes : 0;
  if (!tensor.data) tensor.data.emplace();
  tensor.data->resize(size, 0);
}

Tensor random_tensor(Rng& rng, const Document& doc) {
  Tensor tensor;
  tensor.name = random_tensor_name(rng, doc);
  tensor.type = one_in(rng, 3) ? 0 : random_tensor_type(rng);
  const TensorTypeInfo* type = tensor_type(tensor.type);
  const std::uint64_t block = type != nullptr && !type->removed() ? type->block_size : 1;
  const std::uint64_t n_dims = 1 + below(rng, kMaxDims);
  for (std::uint64_t d = 0; d < n_dims; ++d) {
    tensor.dims.push_back(d == 0 ? block * (1 + below(rng, 4)) : 1 + below(rng, 4));
  }
  fit_data(tensor);
  return tensor;
}

// The valid files a mutant starts from when the input does not parse.
Document seed_document(Rng& rng) {
  Document doc = testing::minimal_document();
  switch (below(rng, 4)) {
    case 0: break;  // the smallest valid file
    case 1:
      doc.metadata.push_back({"general.alignment", Value::u32(64), {}});
      doc.metadata.push_back({"general.quantization_version", Value::u32(2), {}});
      doc.tensors.push_back({"token_embd.weight", {32, 4}, 2, {}, {}});  // Q4_0
      doc.tensors.push_back({"output_norm.weight", {32}, 0, {}, {}});    // F32
      break;
    case 2:
      doc.version = one_in(rng, 2) ? 1 : 2;
      doc.endian = one_in(rng, 2) ? Endian::Big : Endian::Little;
      doc.metadata.push_back({"general.name", Value::string("seed"), {}});
      doc.tensors.push_back({"a", {8, 2}, 1, {}, {}});  // F16
      break;
    default:
      doc.metadata.push_back(
          {"tokenizer.ggml.tokens",
           Value::array(ValueType::String, {Value::string("a"), Value::string("b")}),
           {}});
      doc.metadata.push_back({"tokenizer.ggml.scores",
                              Value::array(ValueType::Float32, {Value::f32(0), Value::f32(1)}),
                              {}});
      doc.tensors.push_back({"blk.0.attn_q.weight", {256, 2}, 12, {}, {}});  // Q4_K
      doc.tensors.push_back({"blk.0.attn_k.weight", {32, 2}, 8, {}, {}});    // Q8_0
      break;
  }
  for (Tensor& tensor : doc.tensors) fit_data(tensor);
  return doc;
}

// A mutant: the document and the write options, then byte patches placed through the layout.
struct Mutant {
  Document doc;
  WriteOptions options;
  std::vector<std::function<void(Written&)>> patches;
};

// A patch past the end (another move shortened the file) is dropped.
void patch_number(Written& written, std::uint64_t at, std::uint64_t value, std::uint32_t width,
                  Endian endian) {
  if (at > written.bytes.size() || width > written.bytes.size() - at) return;
  testing::put_uint(written.bytes, at, value, width, endian);
}

std::uint32_t size_width(const Mutant& m) {
  return m.doc.version == 1 || m.options.narrow_widths ? 4 : 8;
}

// --- the moves: each returns false when it does not apply to this document ----------------

using Move = bool (*)(Mutant&, Rng&);

bool change_count(Mutant& m, Rng& rng) {
  if (one_in(rng, 2)) {
    m.options.kv_count = interesting(rng, m.doc.metadata.size());
  } else {
    m.options.tensor_count = interesting(rng, m.doc.tensors.size());
  }
  return true;
}

bool change_version(Mutant& m, Rng& rng) {
  if (one_in(rng, 2)) {
    m.doc.version = static_cast<std::uint32_t>(1 + below(rng, 3));
  } else {
    m.options.version_field = static_cast<std::uint32_t>(interesting(rng, m.doc.version));
  }
  return true;
}

bool change_endian(Mutant& m, Rng&) {
  m.doc.endian = m.doc.endian == Endian::Little ? Endian::Big : Endian::Little;
  return true;
}

// A length field (key, string value, array count or tensor name) set to a boundary number.
bool change_length(Mutant& m, Rng& rng) {
  const std::size_t pairs = m.doc.metadata.size(), tensors = m.doc.tensors.size();
  if (pairs + tensors == 0) return false;
  const std::uint64_t index = below(rng, pairs + tensors);
  const std::uint64_t value = interesting(rng, 8);
  const std::uint32_t width = size_width(m);
  const Endian endian = m.doc.endian;
  if (index < pairs) {
    const ValueType type = m.doc.metadata[index].value.type;
    const bool value_field = type == ValueType::String || type == ValueType::Array;
    const bool key = !value_field || one_in(rng, 2);
    m.patches.emplace_back([=](Written& w) {
      if (index >= w.layout.pairs.size()) return;  // a second move removed it
      const WrittenPair& pair = w.layout.pairs[index];
      // An array's count follows its element type.
      const std::uint64_t at =
          key ? pair.key_offset : pair.value_offset + (type == ValueType::Array ? 4 : 0);
      patch_number(w, at, value, width, endian);
    });
  } else {
    const std::uint64_t t = index - pairs;
    m.patches.emplace_back([=](Written& w) {
      if (t < w.layout.tensors.size()) {
        patch_number(w, w.layout.tensors[t].name_offset, value, width, endian);
      }
    });
  }
  return true;
}

bool insert_pair(Mutant& m, Rng& rng) {
  const auto at = static_cast<std::ptrdiff_t>(below(rng, m.doc.metadata.size() + 1));
  m.doc.metadata.insert(m.doc.metadata.begin() + at, random_pair(rng));
  return true;
}

bool delete_pair(Mutant& m, Rng& rng) {
  if (m.doc.metadata.empty()) return false;
  m.doc.metadata.erase(m.doc.metadata.begin() +
                       static_cast<std::ptrdiff_t>(below(rng, m.doc.metadata.size())));
  return true;
}

bool duplicate_pair(Mutant& m, Rng& rng) {
  if (m.doc.metadata.empty()) return false;
  const KeyValue copy = m.doc.metadata[below(rng, m.doc.metadata.size())];
  const auto at = static_cast<std::ptrdiff_t>(below(rng, m.doc.metadata.size() + 1));
  m.doc.metadata.insert(m.doc.metadata.begin() + at, copy);
  return true;
}

bool reorder_pairs(Mutant& m, Rng& rng) {
  if (m.doc.metadata.size() < 2) return false;
  std::swap(m.doc.metadata[below(rng, m.doc.metadata.size())],
            m.doc.metadata[below(rng, m.doc.metadata.size())]);
  return true;
}

// A pair's value replaced by one of another type, written consistently.
bool retype_pair(Mutant& m, Rng& rng) {
  if (m.doc.metadata.empty()) return false;
  m.doc.metadata[below(rng, m.doc.metadata.size())].value = random_value(rng);
  return true;
}

// The type field alone changed: the payload stays and no longer matches it.
bool change_value_type(Mutant& m, Rng& rng) {
  if (m.doc.metadata.empty()) return false;
  m.doc.metadata[below(rng, m.doc.metadata.size())].raw_type = static_cast<std::uint32_t>(
      one_in(rng, 2) ? below(rng, kValueTypeCount + 2) : interesting(rng, kValueTypeCount));
  return true;
}

bool change_key(Mutant& m, Rng& rng) {
  if (m.doc.metadata.empty()) return false;
  std::string& key = m.doc.metadata[below(rng, m.doc.metadata.size())].key;
  switch (below(rng, 4)) {
    case 0: key = random_text(rng); break;
    case 1: key += static_cast<char>(rng()); break;
    case 2:
      if (!key.empty()) key[below(rng, key.size())] = one_in(rng, 2) ? '\0' : '\xff';
      break;
    default: key = std::string(standard_keys()[below(rng, standard_keys().size())].key);
  }
  return true;
}

// A value changed in place: a number to a boundary, a string's bytes, an array's items.
bool change_value(Mutant& m, Rng& rng) {
  if (m.doc.metadata.empty()) return false;
  Value& value = m.doc.metadata[below(rng, m.doc.metadata.size())].value;
  switch (value.type) {
    case ValueType::String: value.text = random_text(rng); break;
    case ValueType::Array:
      if (!value.items.empty() && one_in(rng, 2)) {
        value.items.erase(value.items.begin() +
                          static_cast<std::ptrdiff_t>(below(rng, value.items.size())));
      } else if (value.items.size() < 64) {
        value.items.push_back(random_value_of(rng, value.element_type, 1));
      }
      break;
    default: value = random_value_of(rng, value.type, 0);
  }
  return true;
}

// An array's element type field set to another id, the elements left as they are.
bool change_array_type(Mutant& m, Rng& rng) {
  std::vector<std::uint64_t> arrays;
  for (std::size_t i = 0; i < m.doc.metadata.size(); ++i) {
    if (m.doc.metadata[i].value.type == ValueType::Array && !m.doc.metadata[i].raw_type) {
      arrays.push_back(i);
    }
  }
  if (arrays.empty()) return false;
  const std::uint64_t index = arrays[below(rng, arrays.size())];
  if (one_in(rng, 2)) {  // consistently: new elements of the new type
    Value& value = m.doc.metadata[index].value;
    value = random_array(rng, one_in(rng, 3) ? ValueType::String : random_scalar_type(rng), 1);
    return true;
  }
  const auto raw = static_cast<std::uint32_t>(below(rng, kValueTypeCount + 2));
  const Endian endian = m.doc.endian;
  m.patches.emplace_back([=](Written& w) {
    if (index < w.layout.pairs.size()) {
      patch_number(w, w.layout.pairs[index].value_offset, raw, 4, endian);
    }
  });
  return true;
}

KeyValue* find_pair(Document& doc, std::string_view key) {
  for (KeyValue& kv : doc.metadata) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}

bool change_alignment(Mutant& m, Rng& rng) {
  static constexpr std::array<std::uint64_t, 16> kAlignments = {
      0, 1, 2, 3, 4, 8, 16, 24, 31, 32, 40, 64, 128, 1ULL << 31, 0xffffffffULL, 1ULL << 32};
  const std::uint64_t alignment = one_in(rng, 4) ? interesting(rng, 32) : pick(rng, kAlignments);
  KeyValue* existing = find_pair(m.doc, "general.alignment");
  switch (below(rng, 5)) {
    case 0:  // removed: the default applies
      if (existing == nullptr) return false;
      m.doc.metadata.erase(m.doc.metadata.begin() + (existing - m.doc.metadata.data()));
      return true;
    case 1:  // of another type
    {
      Value value = random_value_of(rng, random_scalar_type(rng), 0);
      if (existing != nullptr) {
        existing->value = value;
      } else {
        m.doc.metadata.push_back({"general.alignment", value, {}});
      }
      return true;
    }
    case 2:  // the layout at one alignment, the key saying another
      m.options.alignment = 1U << below(rng, 8);
      [[fallthrough]];
    default: {
      const Value value = Value::u32(static_cast<std::uint32_t>(alignment));
      if (existing != nullptr) {
        existing->value = value;
      } else {
        m.doc.metadata.push_back({"general.alignment", value, {}});
      }
      return true;
    }
  }
}

bool insert_tensor(Mutant& m, Rng& rng) {
  const auto at = static_cast<std::ptrdiff_t>(below(rng, m.doc.tensors.size() + 1));
  m.doc.tensors.insert(m.doc.tensors.begin() + at, random_tensor(rng, m.doc));
  return true;
}

bool delete_tensor(Mutant& m, Rng& rng) {
  if (m.doc.tensors.empty()) return false;
  m.doc.tensors.erase(m.doc.tensors.begin() +
                      static_cast<std::ptrdiff_t>(below(rng, m.doc.tensors.size())));
  return true;
}

bool duplicate_tensor(Mutant& m, Rng& rng) {
  if (m.doc.tensors.empty()) return false;
  const Tensor copy = m.doc.tensors[below(rng, m.doc.tensors.size())];
  m.doc.tensors.insert(
      m.doc.tensors.begin() + static_cast<std::ptrdiff_t>(below(rng, m.doc.tensors.size() + 1)),
      copy);
  return true;
}

bool reorder_tensors(Mutant& m, Rng& rng) {
  if (m.doc.tensors.size() < 2) return false;
  std::swap(m.doc.tensors[below(rng, m.doc.tensors.size())],
            m.doc.tensors[below(rng, m.doc.tensors.size())]);
  return true;
}

Tensor* random_tensor_of(Mutant& m, Rng& rng) {
  return m.doc.tensors.empty() ? nullptr : &m.doc.tensors[below(rng, m.doc.tensors.size())];
}

bool retype_tensor(Mutant& m, Rng& rng) {
  Tensor* tensor = random_tensor_of(m, rng);
  if (tensor == nullptr) return false;
  tensor->type = random_tensor_type(rng);
  fit_data(*tensor);
  return true;
}

bool change_dim(Mutant& m, Rng& rng) {
  Tensor* tensor = random_tensor_of(m, rng);
  if (tensor == nullptr || tensor->dims.empty()) return false;
  std::uint64_t& dim = tensor->dims[below(rng, tensor->dims.size())];
  const TensorTypeInfo* type = tensor_type(tensor->type);
  if (type != nullptr && !type->removed() && type->block_size > 1 && one_in(rng, 3)) {
    dim = type->block_size * (1 + below(rng, 4)) + (one_in(rng, 2) ? 1 : 0);  // off the block
  } else {
    dim = interesting(rng, dim);
  }
  if (one_in(rng, 2)) fit_data(*tensor);
  return true;
}

bool change_n_dims(Mutant& m, Rng& rng) {
  Tensor* tensor = random_tensor_of(m, rng);
  if (tensor == nullptr) return false;
  const std::uint64_t index = static_cast<std::uint64_t>(tensor - m.doc.tensors.data());
  switch (below(rng, 3)) {
    case 0:
      if (tensor->dims.size() > kMaxDims + 4) return false;
      tensor->dims.push_back(one_in(rng, 2) ? 1 : 2);
      break;
    case 1:
      if (tensor->dims.empty()) return false;
      tensor->dims.pop_back();
      break;
    default: {  // the n_dims field alone: the dims that follow no longer match it
      const auto n_dims = static_cast<std::uint32_t>(interesting(rng, tensor->dims.size()));
      const Endian endian = m.doc.endian;
      m.patches.emplace_back([=](Written& w) {
        if (index < w.layout.tensors.size()) {
          patch_number(w, w.layout.tensors[index].n_dims_offset, n_dims, 4, endian);
        }
      });
      return true;
    }
  }
  fit_data(*tensor);
  return true;
}

bool change_tensor_name(Mutant& m, Rng& rng) {
  Tensor* tensor = random_tensor_of(m, rng);
  if (tensor == nullptr) return false;
  tensor->name = random_tensor_name(rng, m.doc);
  return true;
}

bool change_offset(Mutant& m, Rng& rng) {
  Tensor* tensor = random_tensor_of(m, rng);
  if (tensor == nullptr) return false;
  const std::uint64_t old = tensor->offset.value_or(0);
  switch (below(rng, 4)) {
    case 0:  // where another tensor is: an overlap
      tensor->offset = m.doc.tensors[below(rng, m.doc.tensors.size())].offset.value_or(0);
      break;
    case 1: tensor->offset = old + (one_in(rng, 2) ? kDefaultAlignment : 1); break;
    case 2: tensor->offset = old - (one_in(rng, 2) ? kDefaultAlignment : 1); break;
    default: tensor->offset = interesting(rng, old);
  }
  return true;
}

// The data one byte short or long, or bytes a data check looks at (NaN scales).
bool change_data(Mutant& m, Rng& rng) {
  Tensor* tensor = random_tensor_of(m, rng);
  if (tensor == nullptr) return false;
  if (!tensor->data) tensor->data.emplace();
  std::vector<std::uint8_t>& data = *tensor->data;
  switch (below(rng, 3)) {
    case 0:
      if (data.empty()) return false;
      data.pop_back();
      break;
    case 1: data.push_back(0); break;
    default:
      if (data.empty()) return false;
      for (std::uint64_t i = below(rng, 8) + 1; i > 0; --i) {
        data[below(rng, data.size())] = one_in(rng, 2) ? 0xff : static_cast<std::uint8_t>(rng());
      }
  }
  return true;
}

bool change_padding(Mutant& m, Rng& rng) {
  switch (below(rng, 3)) {
    case 0: m.options.padding_byte = static_cast<std::uint8_t>(1 + below(rng, 255)); return true;
    case 1: m.options.pad_after_last_tensor = !m.options.pad_after_last_tensor; return true;
    default: {  // one byte of the padding before the data section
      const auto flip = static_cast<std::uint8_t>(1 + below(rng, 255));
      const std::uint64_t choice = rng();
      m.patches.emplace_back([=](Written& w) {
        const std::uint64_t gap = w.layout.data_start - w.layout.infos_end;
        if (gap == 0) return;
        const std::uint64_t at = w.layout.infos_end + choice % gap;
        if (at < w.bytes.size()) w.bytes[at] ^= flip;  // unless a truncation came first
      });
      return true;
    }
  }
}

bool add_trailing_bytes(Mutant& m, Rng& rng) {
  m.options.trailing.assign(1 + below(rng, 64), one_in(rng, 2) ? 0 : 0x47);
  return true;
}

// One of the course chapter's writer mistakes (gguf-format.md section 7).
bool writer_mistake(Mutant& m, Rng& rng) {
  switch (below(rng, 4)) {
    case 0: m.options.nul_terminated_strings = true; break;
    case 1: m.options.header_alignment_field = true; break;
    case 2: m.options.offset_before_type = true; break;
    default: m.options.narrow_widths = true;
  }
  return true;
}

// Cut at a field boundary (or anywhere): truncation at every kind of place.
bool truncate(Mutant& m, Rng& rng) {
  const std::uint64_t choice = rng();
  const bool anywhere = one_in(rng, 3);
  m.patches.emplace_back([=](Written& w) {
    std::vector<std::uint64_t> cuts = {4, 8, 16, 24, w.layout.infos_end, w.layout.data_start};
    for (const WrittenPair& p : w.layout.pairs) {
      cuts.insert(cuts.end(), {p.key_offset, p.type_offset, p.value_offset, p.end - 1});
    }
    for (const WrittenTensor& t : w.layout.tensors) {
      cuts.insert(cuts.end(), {t.name_offset, t.n_dims_offset, t.dims_offset, t.type_offset,
                               t.offset_offset, t.data_position + t.nbytes - 1});
    }
    std::uint64_t cut = anywhere ? choice % (w.bytes.size() + 1) : cuts[choice % cuts.size()];
    cut = std::min<std::uint64_t>(cut, w.bytes.size());
    w.bytes.resize(cut);
  });
  return true;
}

struct NamedMove {
  Move move;
  bool keeps_offsets;  // the move is about the layout: the offsets must not be recomputed
};

constexpr std::array<NamedMove, 31> kMoves = {{
    {change_count, false},       {change_version, false},    {change_endian, false},
    {change_length, false},      {change_length, false},     {insert_pair, false},
    {delete_pair, false},        {duplicate_pair, false},    {reorder_pairs, false},
    {retype_pair, false},        {change_value_type, false}, {change_key, false},
    {change_value, false},       {change_array_type, false}, {change_alignment, false},
    {change_alignment, false},   {insert_tensor, false},     {delete_tensor, false},
    {duplicate_tensor, false},   {reorder_tensors, false},   {retype_tensor, false},
    {change_dim, false},         {change_dim, false},        {change_n_dims, false},
    {change_tensor_name, false}, {change_offset, true},      {change_data, false},
    {change_padding, false},     {writer_mistake, false},    {add_trailing_bytes, false},
    {truncate, false},
}};

std::optional<Document> parse(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return std::nullopt;
  return read_document(Bytes(data, size));
}

// Data for every tensor (never the writer's default, which can be 64 MiB), and, unless the
// layout itself is being mutated, offsets recomputed so that the layout is consistent.
void settle(Document& doc, WriteOptions& options, bool keep_offsets) {
  // The writer pads to whatever non-zero u32 general.alignment says: lay a huge one out at the
  // default instead of writing gigabytes of padding (the key keeps its value).
  for (const KeyValue& kv : doc.metadata) {
    if (kv.key != "general.alignment") continue;
    if (!options.alignment && kv.value.type == ValueType::Uint32 && kv.value.bits > 4096) {
      options.alignment = kDefaultAlignment;
    }
    break;
  }
  for (Tensor& tensor : doc.tensors) {
    if (!keep_offsets) tensor.offset.reset();
    if (!tensor.data) {
      fit_data(tensor);
    } else if (tensor.data->size() > kMaxTensorData) {
      tensor.data->resize(kMaxTensorData);
    }
  }
}

std::size_t emit(Mutant& m, std::uint8_t* out, std::size_t max_size) {
  Written written = write(m.doc, m.options);
  for (const auto& patch : m.patches) patch(written);
  const std::size_t size = std::min(written.bytes.size(), max_size);
  std::memcpy(out, written.bytes.data(), size);
  return size;
}

}  // namespace

std::size_t mutate_structure(std::uint8_t* data, std::size_t size, std::size_t max_size,
                             unsigned int seed) {
  Rng rng(seed);
  // A share of byte-level mutations keeps the fuzzer exploring what no move produces.
  if (one_in(rng, 8)) return LLVMFuzzerMutate(data, size, max_size);
  Mutant m;
  const auto parsed = parse(data, size);
  m.doc = parsed ? *parsed : seed_document(rng);
  // Offsets kept from the input most of the time, so mutations of the layout can stack; else
  // recomputed, so that the move is the only fault.
  bool keep_offsets = parsed && one_in(rng, 4);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const NamedMove& move = kMoves[below(rng, kMoves.size())];
    if (move.move(m, rng)) {
      keep_offsets = keep_offsets || move.keeps_offsets;
      // A second move now and then: faults that only show together.
      if (one_in(rng, 4)) (void)kMoves[below(rng, kMoves.size())].move(m, rng);
      break;
    }
  }
  settle(m.doc, m.options, keep_offsets);
  return emit(m, data, max_size);
}

std::size_t cross_over_structure(const std::uint8_t* first, std::size_t first_size,
                                 const std::uint8_t* second, std::size_t second_size,
                                 std::uint8_t* out, std::size_t max_out, unsigned int seed) {
  Rng rng(seed);
  const auto a = parse(first, first_size);
  const auto b = parse(second, second_size);
  Mutant m;
  m.doc = a ? *a : seed_document(rng);
  const Document other = b ? *b : seed_document(rng);
  // A prefix of the first's pairs and tensors, then a suffix of the second's.
  const auto splice = [&](auto& mine, const auto& theirs) {
    mine.resize(below(rng, mine.size() + 1));
    const auto from = static_cast<std::ptrdiff_t>(below(rng, theirs.size() + 1));
    mine.insert(mine.end(), theirs.begin() + from, theirs.end());
  };
  splice(m.doc.metadata, other.metadata);
  splice(m.doc.tensors, other.tensors);
  settle(m.doc, m.options, false);
  return emit(m, out, max_out);
}

}  // namespace ggufcheck::fuzz
