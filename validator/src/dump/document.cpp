#include "ggufcheck/document.hpp"

#include "index/values.hpp"
#include "read/reader.hpp"
#include "validate/validate.hpp"

namespace ggufcheck {
namespace {

using detail::FileIndex;

// Builds Values from the walk of a recorded value (index/values.hpp).
class ValueBuilder {
 public:
  Value result;

  bool scalar(ValueType type, std::uint64_t bits, std::uint64_t /*offset*/) {
    return put(Value::integer(type, bits));
  }
  bool string(std::string_view text, std::uint64_t /*offset*/, std::uint64_t /*length*/) {
    return put(Value::string(std::string(text)));
  }
  bool begin_array(ValueType element_type, std::uint64_t /*count*/, std::uint64_t /*offset*/) {
    open_.push_back(Value::array(element_type, {}));
    return true;
  }
  bool end_array() {
    Value done = std::move(open_.back());
    open_.pop_back();
    return put(std::move(done));
  }

 private:
  bool put(Value value) {
    if (open_.empty()) {
      result = std::move(value);
    } else {
      open_.back().items.push_back(std::move(value));
    }
    return true;
  }
  std::vector<Value> open_;
};

}  // namespace

std::optional<Document> read_document(Bytes bytes) {
  Options options;
  options.profile = Profile::Spec;  // nested arrays allowed: read what the bytes define
  detail::Sink sink(options);
  FileIndex index;
  index.input = detail::Input(bytes);
  detail::read_model(index, sink);
  if (!index.tensors_complete) return std::nullopt;
  const detail::DataLayout layout = detail::resolve_layout(index, sink);

  Document doc;
  doc.version = index.version;
  doc.endian = index.endian;
  for (std::size_t i = 0; i < index.metadata.size(); ++i) {
    ValueBuilder builder;
    if (!detail::walk_value(index, i, builder)) return std::nullopt;  // the reader read it
    doc.metadata.push_back(KeyValue{std::string(index.key(i)), std::move(builder.result), {}});
  }
  for (std::size_t i = 0; i < index.tensors.size(); ++i) {
    Tensor tensor;
    tensor.name = std::string(index.name(i));
    const auto dims = index.dims(i);
    for (std::uint32_t d = 0; d < index.tensors[i].n_dims; ++d) {
      if (d < kMaxDims) {
        tensor.dims.push_back(dims[d]);
      } else if (const auto dim = index.dim(i, d)) {
        tensor.dims.push_back(*dim);
      }
    }
    tensor.type = index.tensors[i].type;
    tensor.offset = index.data_offset(i);
    // The data, when the layout places it inside the bytes.
    const auto nbytes = tensor_nbytes(tensor.type, tensor.dims);
    std::uint64_t start = 0;
    std::string_view data;
    if (nbytes && layout.data_start &&
        detail::checked_add(*layout.data_start, *tensor.offset, start) &&
        index.input.view(start, *nbytes, data)) {
      tensor.data = std::vector<std::uint8_t>(data.begin(), data.end());
    }
    doc.tensors.push_back(std::move(tensor));
  }
  return doc;
}

}  // namespace ggufcheck
