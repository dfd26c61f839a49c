#include "ggufcheck/document.hpp"

#include "checks/checks.hpp"
#include "read/cursor.hpp"

namespace ggufcheck {
namespace {

using detail::Cursor;

// Reads one value of `type` at the cursor; the reader has already walked these bytes.
Value read_value(Cursor& cursor, ValueType type, bool narrow) {
  if (type == ValueType::String) {
    std::uint64_t length = 0;
    std::string_view text;
    (void)cursor.read_size(length, narrow);
    (void)cursor.read_bytes(length, text);
    return Value::string(std::string(text));
  }
  if (type == ValueType::Array) {
    std::uint32_t element_type = 0;
    std::uint64_t count = 0;
    (void)cursor.read(element_type);
    (void)cursor.read_size(count, narrow);
    std::vector<Value> items;
    for (std::uint64_t i = 0; i < count; ++i) {
      items.push_back(read_value(cursor, static_cast<ValueType>(element_type), narrow));
    }
    return Value::array(static_cast<ValueType>(element_type), std::move(items));
  }
  std::uint64_t bits = 0;
  switch (scalar_size(type)) {
    case 1: {
      std::uint8_t v = 0;
      (void)cursor.read(v);
      bits = v;
      break;
    }
    case 2: {
      std::uint16_t v = 0;
      (void)cursor.read(v);
      bits = v;
      break;
    }
    case 4: {
      std::uint32_t v = 0;
      (void)cursor.read(v);
      bits = v;
      break;
    }
    default: (void)cursor.read(bits); break;
  }
  return Value::integer(type, bits);
}

}  // namespace

std::optional<Document> read_document(Bytes bytes) {
  DocumentLayout ignored;
  return read_document(bytes, ignored, true);
}

std::optional<Document> read_document(Bytes bytes, DocumentLayout& layout, bool copy_tensor_data) {
  Options options;
  options.profile = Profile::Spec;  // nested arrays allowed: read what the bytes define
  detail::Sink sink(options);
  Model model;
  model.bytes = bytes;
  detail::read_model(model, sink);
  if (!model.tensors_complete) return std::nullopt;
  detail::check_alignment(model, sink);
  layout.alignment = model.alignment;
  layout.data_start = model.data_start;

  Document doc;
  doc.version = model.version;
  doc.endian = model.endian;
  for (const MetadataEntry& entry : model.metadata) {
    Cursor cursor(bytes, model.endian, entry.value.offset);
    doc.metadata.push_back(
        KeyValue{std::string(entry.key), read_value(cursor, entry.type, model.narrow()), {}});
  }
  for (const TensorInfo& info : model.tensors) {
    Tensor tensor;
    tensor.name = std::string(info.name);
    for (std::uint32_t d = 0; d < info.n_dims; ++d) {
      std::uint64_t dim = 0;
      Cursor cursor(bytes, model.endian, info.dim_offset(d));
      (void)cursor.read_size(dim, model.narrow());
      tensor.dims.push_back(dim);
    }
    tensor.type = info.type;
    tensor.offset = info.data_offset;
    const auto nbytes = tensor_nbytes(info.type, tensor.dims);
    std::uint64_t start = 0;
    if (nbytes && model.data_start <= bytes.size() &&
        detail::checked_add(model.data_start, info.data_offset, start) && start <= bytes.size() &&
        *nbytes <= bytes.size() - start) {
      layout.tensor_data.emplace_back(ByteRange{start, *nbytes});
      if (copy_tensor_data) {
        const auto* first = bytes.data() + start;
        tensor.data = std::vector<std::uint8_t>(first, first + *nbytes);
      }
    } else {
      layout.tensor_data.emplace_back();
    }
    doc.tensors.push_back(std::move(tensor));
  }
  return doc;
}

}  // namespace ggufcheck
