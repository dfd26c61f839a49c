#include "mutations.hpp"

#include <algorithm>

#include "show.hpp"

namespace ggufcheck::testing {

std::vector<std::uint64_t> field_starts(const WrittenLayout& layout) {
  std::vector<std::uint64_t> out = {0, 4, 8, 16};
  for (const WrittenPair& p : layout.pairs) {
    out.insert(out.end(), {p.key_offset, p.type_offset, p.value_offset, p.value_offset + 4});
  }
  for (const WrittenTensor& t : layout.tensors) {
    out.insert(out.end(), {t.name_offset, t.n_dims_offset, t.dims_offset, t.dims_offset + 8,
                           t.type_offset, t.offset_offset, t.data_position});
  }
  out.insert(out.end(), {layout.infos_end, layout.data_start});
  return out;
}

Mutated mutate(const ByteVector& original, const WrittenLayout& layout, const Mutation& m) {
  Mutated out{original, "no change (empty file)"};
  if (original.empty()) return out;
  const std::uint32_t width = m.kind == Mutation::Kind::Flip         ? 1
                              : m.kind == Mutation::Kind::Overwrite4 ? 4
                                                                     : 8;
  if (original.size() < width) return out;
  std::uint64_t at = 0;
  if ((m.where & 1) != 0) {
    at = pick_of(m.where >> 1, field_starts(layout));
  } else {
    at = (m.where >> 1) % original.size();
  }
  at = std::min<std::uint64_t>(at, original.size() - width);
  if (m.kind == Mutation::Kind::Flip) {
    const auto mask = static_cast<std::uint8_t>(m.mask == 0 ? 1 : m.mask);
    out.bytes[static_cast<std::size_t>(at)] ^= mask;
    out.edit = "byte at " + hex(at) + " ^= " + hex(mask);
    return out;
  }
  std::uint64_t value = m.value;
  if (m.relative == Mutation::Relative::FileSize) value += original.size();
  if (m.relative == Mutation::Relative::BytesLeft) value += original.size() - (at + width);
  put_uint(out.bytes, at, value, width, m.order);
  out.edit = std::to_string(width) + " bytes at " + hex(at) +
             " := " + hex(width == 4 ? value & 0xFFFFFFFFu : value) +
             (m.order == Endian::Big ? " big-endian" : " little-endian");
  return out;
}

std::string_view to_string(HugeClaim::Field field) {
  switch (field) {
    case HugeClaim::Field::KvCount: return "kv_count";
    case HugeClaim::Field::TensorCount: return "tensor_count";
    case HugeClaim::Field::KeyLength: return "key length";
    case HugeClaim::Field::StringLength: return "string length";
    case HugeClaim::Field::ArrayCount: return "array count";
    case HugeClaim::Field::NameLength: return "tensor name length";
    case HugeClaim::Field::NDims: return "n_dims";
    case HugeClaim::Field::Dim: return "a dim";
    case HugeClaim::Field::Offset: return "a tensor offset";
  }
  return "?";
}

Mutated claim(const ValidModel& model, const HugeClaim& c) {
  const Written w = model.write();
  Mutated out{w.bytes, ""};
  const Endian e = model.doc.endian;
  const WrittenLayout& l = w.layout;
  std::vector<std::uint64_t> at;
  std::uint32_t width = 8;
  switch (c.field) {
    case HugeClaim::Field::KvCount: at = {16}; break;
    case HugeClaim::Field::TensorCount: at = {8}; break;
    case HugeClaim::Field::KeyLength:
      for (const WrittenPair& p : l.pairs) at.push_back(p.key_offset);
      break;
    case HugeClaim::Field::StringLength:
      for (std::size_t i = 0; i < l.pairs.size(); ++i) {
        if (model.doc.metadata[i].value.type == ValueType::String) {
          at.push_back(l.pairs[i].value_offset);
        }
      }
      break;
    case HugeClaim::Field::ArrayCount:
      for (std::size_t i = 0; i < l.pairs.size(); ++i) {
        if (model.doc.metadata[i].value.type == ValueType::Array) {
          at.push_back(l.pairs[i].value_offset + 4);
        }
      }
      break;
    case HugeClaim::Field::NameLength:
      for (const WrittenTensor& t : l.tensors) at.push_back(t.name_offset);
      break;
    case HugeClaim::Field::NDims:
      width = 4;
      for (const WrittenTensor& t : l.tensors) at.push_back(t.n_dims_offset);
      break;
    case HugeClaim::Field::Dim:
      for (std::size_t i = 0; i < l.tensors.size(); ++i) {
        for (std::size_t d = 0; d < model.doc.tensors[i].dims.size(); ++d) {
          at.push_back(l.tensors[i].dims_offset + 8 * d);
        }
      }
      break;
    case HugeClaim::Field::Offset:
      for (const WrittenTensor& t : l.tensors) at.push_back(t.offset_offset);
      break;
  }
  std::string what(to_string(c.field));
  if (at.empty()) {
    at = {16};
    width = 8;
    what = "kv_count (the file has no " + what + ")";
  }
  const std::uint64_t offset = pick_of(c.which, at);
  put_uint(out.bytes, offset, c.value, width, e);
  out.edit =
      what + " at " + hex(offset) + " := " + hex(width == 4 ? c.value & 0xFFFFFFFFu : c.value);
  return out;
}

}  // namespace ggufcheck::testing
