#include "show.hpp"

#include <algorithm>
#include <bit>
#include <sstream>

#include "expected.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/format.hpp"

namespace ggufcheck::testing {

std::string shown(std::string_view bytes, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == max) {
      out += "...(" + std::to_string(bytes.size()) + " bytes)";
      break;
    }
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (b == '"' || b == '\\') {
      out += '\\';
      out += static_cast<char>(b);
    } else if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
  }
  return out;
}

std::string hex(std::uint64_t v) {
  std::ostringstream out;
  out << "0x" << std::hex << v;
  return out.str();
}

std::string tensor_type_name(std::uint32_t id) {
  const TensorTypeInfo* info = tensor_type(id);
  return info == nullptr ? "type" + std::to_string(id) : std::string(info->name);
}

std::string value_text(const Value& v, std::size_t max_items) {
  switch (v.type) {
    case ValueType::String: return "string \"" + shown(v.text) + "\"";
    case ValueType::Array: {
      std::string out = "array<" + std::string(to_string(v.element_type)) + ">[" +
                        std::to_string(v.items.size()) + "]{";
      for (std::size_t i = 0; i < v.items.size() && i < max_items; ++i) {
        if (i != 0) out += ", ";
        out += value_text(v.items[i], 3);
      }
      if (v.items.size() > max_items) out += ", ...";
      return out + "}";
    }
    case ValueType::Bool:
      return v.bits == 0 ? "bool false" : v.bits == 1 ? "bool true" : "bool byte " + hex(v.bits);
    case ValueType::Float32: {
      const auto f = std::bit_cast<float>(static_cast<std::uint32_t>(v.bits));
      std::ostringstream out;
      out << "float32 " << f << " (" << hex(v.bits) << ")";
      return out.str();
    }
    case ValueType::Float64: {
      std::ostringstream out;
      out << "float64 " << std::bit_cast<double>(v.bits) << " (" << hex(v.bits) << ")";
      return out.str();
    }
    default: break;
  }
  const bool is_signed = v.type == ValueType::Int8 || v.type == ValueType::Int16 ||
                         v.type == ValueType::Int32 || v.type == ValueType::Int64;
  std::string out = std::string(to_string(v.type)) + " ";
  if (is_signed) {
    const std::uint32_t bits = 8 * scalar_size(v.type);
    const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
    const auto value = (v.bits & sign) != 0 && bits < 64 ? static_cast<std::int64_t>(v.bits) -
                                                               static_cast<std::int64_t>(sign << 1)
                                                         : static_cast<std::int64_t>(v.bits);
    return out + std::to_string(value);
  }
  return out + std::to_string(v.bits);
}

std::string tensor_text(const Tensor& t) {
  std::string out = "\"" + shown(t.name) + "\" " + tensor_type_name(t.type) + " [";
  for (std::size_t d = 0; d < t.dims.size(); ++d) {
    out += (d == 0 ? "" : ", ") + std::to_string(t.dims[d]);
  }
  out += "]";
  if (t.offset) out += " offset " + hex(*t.offset);
  if (t.data) {
    const bool zero =
        std::all_of(t.data->begin(), t.data->end(), [](std::uint8_t b) { return b == 0; });
    std::uint64_t fnv = 0xcbf29ce484222325ULL;
    for (const std::uint8_t b : *t.data) fnv = (fnv ^ b) * 0x100000001b3ULL;
    out += " data " + std::to_string(t.data->size()) +
           (zero ? " zero bytes" : " bytes (fnv-1a " + hex(fnv) + ")");
  }
  return out;
}

std::string document_text(const Document& doc) {
  std::string out = "GGUF v" + std::to_string(doc.version) +
                    (doc.endian == Endian::Big ? " big-endian" : " little-endian") + ", " +
                    std::to_string(doc.metadata.size()) + " kv, " +
                    std::to_string(doc.tensors.size()) + " tensors";
  for (std::size_t i = 0; i < doc.metadata.size(); ++i) {
    const KeyValue& kv = doc.metadata[i];
    out += "\n  kv[" + std::to_string(i) + "] \"" + shown(kv.key) + "\" = " + value_text(kv.value);
    if (kv.raw_type) out += " (type written as " + std::to_string(*kv.raw_type) + ")";
  }
  for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
    out += "\n  tensor[" + std::to_string(i) + "] " + tensor_text(doc.tensors[i]);
  }
  return out;
}

void showValue(const Key& key, std::ostream& os) {
  os << "key \"" << shown(key.text) << "\" (" << to_string(key.style) << ")";
}
void showValue(const Alignment& a, std::ostream& os) {
  os << "alignment " << a.value;
}
void showValue(const ValidModel& m, std::ostream& os) {
  os << document_text(m.doc);
  if (m.doc.tensors.empty()) os << "\n  " << (m.pad_when_no_tensors ? "padded" : "unpadded");
}
void showValue(const AnyDocument& d, std::ostream& os) {
  os << document_text(d.doc);
}
void showValue(const Corruption& c, std::ostream& os) {
  const Corrupted x = apply(c);
  const FaultInfo& info = fault_info(c.fault);
  os << "fault " << info.name << " (" << code_string(info.target) << "): " << x.edit
     << "\n  file of " << x.bytes.size() << " bytes; edit at " << hex(x.field_offset)
     << ", target finding at " << hex(x.finding_offset);
  for (const Profile p : kAllProfiles) {
    os << "\n  expected in " << to_string(p) << ": " << describe(x.expected_in(p));
  }
  os << "\n  host (as written before the edit): " << document_text(x.host.doc);
  os << "\n  choices:";
  for (std::uint64_t ch : c.choices) os << " " << hex(ch);
}
void showValue(const Mutation& m, std::ostream& os) {
  switch (m.kind) {
    case Mutation::Kind::Flip: os << "flip (mask " << hex(m.mask) << ")"; break;
    case Mutation::Kind::Overwrite4: os << "overwrite 4 bytes"; break;
    case Mutation::Kind::Overwrite8: os << "overwrite 8 bytes"; break;
  }
  if (m.kind != Mutation::Kind::Flip) {
    os << " with "
       << (m.relative == Mutation::Relative::FileSize    ? "file size + "
           : m.relative == Mutation::Relative::BytesLeft ? "bytes left + "
                                                         : "")
       << hex(m.value) << (m.order == Endian::Big ? " big-endian" : " little-endian");
  }
  os << ((m.where & 1) != 0 ? " at a field start (" : " at any byte (") << hex(m.where >> 1) << ")";
}
void showValue(const HugeClaim& c, std::ostream& os) {
  os << to_string(c.field) << " := " << hex(c.value) << " (which " << c.which << ")";
}

}  // namespace ggufcheck::testing

namespace ggufcheck {

void showValue(const Value& value, std::ostream& os) {
  os << testing::value_text(value);
}
void showValue(const Tensor& tensor, std::ostream& os) {
  os << testing::tensor_text(tensor);
}
void showValue(const Document& doc, std::ostream& os) {
  os << testing::document_text(doc);
}

}  // namespace ggufcheck
