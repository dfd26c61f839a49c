#include "hostile.hpp"

#include <algorithm>
#include <utility>

namespace ggufcheck::testing {

namespace {

// The width of counts and lengths: 32 bits in version 1, 64 after.
std::uint32_t size_width(const Document& doc) {
  return doc.version == 1 ? 4 : 8;
}

// The document written, then `width` bytes at the offset `where` finds in its layout := value.
template <typename Where>
Written overwritten(const Document& doc, Where where, std::uint64_t value, std::uint32_t width) {
  Written w = write(doc);
  put_uint(w.bytes, where(w.layout), value, width, doc.endian);
  return w;
}

}  // namespace

Written with_key_length(const Document& doc, std::size_t pair, std::uint64_t length) {
  return overwritten(
      doc, [pair](const WrittenLayout& l) { return l.pairs.at(pair).key_offset; }, length,
      size_width(doc));
}

Written with_string_length(const Document& doc, std::size_t pair, std::uint64_t length) {
  return overwritten(
      doc, [pair](const WrittenLayout& l) { return l.pairs.at(pair).value_offset; }, length,
      size_width(doc));
}

Written with_element_length(const Document& doc, std::size_t pair, std::size_t element,
                            std::uint64_t length) {
  const std::uint32_t width = size_width(doc);
  // After the element type and the count, each element before it: its length and its bytes.
  std::uint64_t skipped = 4 + width;
  for (std::size_t i = 0; i < element; ++i) {
    skipped += width + doc.metadata.at(pair).value.items.at(i).text.size();
  }
  return overwritten(
      doc,
      [pair, skipped](const WrittenLayout& l) { return l.pairs.at(pair).value_offset + skipped; },
      length, width);
}

Written with_array_type(const Document& doc, std::size_t pair, std::uint32_t type) {
  return overwritten(
      doc, [pair](const WrittenLayout& l) { return l.pairs.at(pair).value_offset; }, type, 4);
}

Written with_array_count(const Document& doc, std::size_t pair, std::uint64_t count) {
  return overwritten(
      doc, [pair](const WrittenLayout& l) { return l.pairs.at(pair).value_offset + 4; }, count,
      size_width(doc));
}

Written with_tensor_name_length(const Document& doc, std::size_t index, std::uint64_t length) {
  return overwritten(
      doc, [index](const WrittenLayout& l) { return l.tensors.at(index).name_offset; }, length,
      size_width(doc));
}

Written with_n_dims(const Document& doc, std::size_t index, std::uint32_t n_dims) {
  return overwritten(
      doc, [index](const WrittenLayout& l) { return l.tensors.at(index).n_dims_offset; }, n_dims,
      4);
}

ByteVector with_counts(const Document& doc, std::optional<std::uint64_t> tensor_count,
                       std::optional<std::uint64_t> kv_count) {
  WriteOptions options;
  options.tensor_count = tensor_count;
  options.kv_count = kv_count;
  return write_bytes(doc, options);
}

ByteVector with_magic(ByteVector bytes, std::string_view magic) {
  std::copy(magic.begin(), magic.begin() + 4, bytes.begin());
  return bytes;
}

Document with_alignment(Value value) {
  return document({pair("general.alignment", std::move(value))},
                  {tensor("a", {3}), tensor("b", {8})});
}

ByteVector two_tensors_at(std::uint64_t first, std::uint64_t second, std::size_t data_bytes) {
  Tensor a = tensor("a", {8}, 0, first);
  Tensor b = tensor("b", {8}, 0, second);
  a.data = ByteVector(data_bytes, 0);
  b.data = ByteVector();
  return write_bytes(document({}, {a, b}));
}

ByteVector deeply_nested(std::uint64_t depth) {
  const Written w = write(document({pair("my.deep", Value::array(ValueType::Uint8, {}))}));
  ByteVector bytes = prefix(w.bytes, w.layout.pairs[1].value_offset);
  for (std::uint64_t i = 0; i < depth; ++i) {
    append_u32(bytes, static_cast<std::uint32_t>(ValueType::Array));
    append_u64(bytes, 1);
  }
  append_u32(bytes, static_cast<std::uint32_t>(ValueType::Uint8));
  append_u64(bytes, 0);
  return bytes;
}

}  // namespace ggufcheck::testing
