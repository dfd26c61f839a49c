#include "ggufcheck/writer.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <system_error>

#include "input/cursor.hpp"

namespace ggufcheck {

Value Value::f32(float v) {
  return integer(ValueType::Float32, std::bit_cast<std::uint32_t>(v));
}
Value Value::f64(double v) {
  return integer(ValueType::Float64, std::bit_cast<std::uint64_t>(v));
}

Value Value::string(std::string v) {
  Value value;
  value.type = ValueType::String;
  value.text = std::move(v);
  return value;
}

Value Value::array(ValueType element_type, std::vector<Value> items) {
  Value value;
  value.type = ValueType::Array;
  value.element_type = element_type;
  value.items = std::move(items);
  return value;
}

bool save_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

namespace {

constexpr std::uint64_t kMaxDefaultData = 64ULL << 20;

class ByteWriter {
 public:
  ByteWriter(Endian endian, bool narrow, bool nul_strings)
      : swap_(endian == Endian::Big), narrow_(narrow), nul_strings_(nul_strings) {}

  std::vector<std::uint8_t> out;

  [[nodiscard]] std::uint64_t pos() const { return out.size(); }

  template <typename T>
  void put(T v) {
    if constexpr (sizeof(T) > 1) {
      if (swap_) v = detail::Cursor::byteswap(v);
    }
    const std::size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
  }
  void put_size(std::uint64_t v) {
    if (narrow_) {
      put(static_cast<std::uint32_t>(v));
    } else {
      put(v);
    }
  }
  void put_string(const std::string& s) {
    put_size(s.size());
    out.insert(out.end(), s.begin(), s.end());
    if (nul_strings_) out.push_back(0);
  }
  void put_scalar(ValueType type, std::uint64_t bits) {
    switch (scalar_size(type)) {
      case 1: put(static_cast<std::uint8_t>(bits)); break;
      case 2: put(static_cast<std::uint16_t>(bits)); break;
      case 4: put(static_cast<std::uint32_t>(bits)); break;
      default: put(bits); break;
    }
  }
  void put_value(const Value& v) {
    if (v.type == ValueType::String) {
      put_string(v.text);
    } else if (v.type == ValueType::Array) {
      put(static_cast<std::uint32_t>(v.element_type));
      put_size(v.items.size());
      for (const Value& item : v.items) put_value(item);
    } else {
      put_scalar(v.type, v.bits);
    }
  }
  void pad_to(std::uint64_t alignment, std::uint8_t byte) {
    const std::uint64_t rem = pos() % alignment;
    if (rem != 0) out.insert(out.end(), alignment - rem, byte);
  }

 private:
  bool swap_;
  bool narrow_;
  bool nul_strings_;
};

std::uint32_t alignment_of(const Document& doc, const WriteOptions& options) {
  if (options.alignment) return *options.alignment;
  // The first general.alignment pair decides, as in every reader: 32 unless it is a non-zero u32.
  for (const KeyValue& kv : doc.metadata) {
    if (kv.key != "general.alignment") continue;
    const bool valid = kv.value.type == ValueType::Uint32 &&
                       kv.raw_type.value_or(static_cast<std::uint32_t>(ValueType::Uint32)) ==
                           static_cast<std::uint32_t>(ValueType::Uint32) &&
                       kv.value.bits != 0;
    return valid ? static_cast<std::uint32_t>(kv.value.bits) : kDefaultAlignment;
  }
  return kDefaultAlignment;
}

}  // namespace

Written write(const Document& doc, const WriteOptions& options) {
  const bool narrow = options.narrow_widths || doc.version == 1;
  ByteWriter w(doc.endian, narrow, options.nul_terminated_strings);
  Written result;
  WrittenLayout& layout = result.layout;
  layout.alignment = alignment_of(doc, options);
  const std::uint64_t alignment = layout.alignment == 0 ? 1 : layout.alignment;

  for (char c : std::string_view("GGUF")) w.out.push_back(static_cast<std::uint8_t>(c));
  w.put(options.version_field.value_or(doc.version));
  w.put_size(options.tensor_count.value_or(doc.tensors.size()));
  w.put_size(options.kv_count.value_or(doc.metadata.size()));
  if (options.header_alignment_field) {
    w.put(static_cast<std::uint32_t>(alignment));
    w.put(std::uint32_t{0});
  }

  for (const KeyValue& kv : doc.metadata) {
    WrittenPair pair;
    pair.offset = pair.key_offset = w.pos();
    w.put_string(kv.key);
    pair.type_offset = w.pos();
    w.put(kv.raw_type.value_or(static_cast<std::uint32_t>(kv.value.type)));
    pair.value_offset = w.pos();
    w.put_value(kv.value);
    pair.end = w.pos();
    layout.pairs.push_back(pair);
  }

  // Sizes and default offsets: tensors back to back, each padded to the alignment.
  std::vector<std::uint64_t> data_sizes;
  std::vector<const std::vector<std::uint8_t>*> explicit_data;
  std::uint64_t running = 0;
  std::vector<std::uint64_t> offsets;
  for (const Tensor& t : doc.tensors) {
    const auto nbytes = tensor_nbytes(t.type, t.dims);
    std::uint64_t size = 0;
    if (t.data) {
      size = t.data->size();
    } else if (nbytes && *nbytes <= kMaxDefaultData) {
      size = *nbytes;
    }
    data_sizes.push_back(size);
    offsets.push_back(t.offset.value_or(running));
    std::uint64_t padded = 0;
    if (!detail::checked_round_up(nbytes.value_or(size), alignment, padded) ||
        !detail::checked_add(running, padded, running)) {
      running = 0;  // a hostile shape: later default offsets are meaningless anyway
    }
  }

  for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
    const Tensor& t = doc.tensors[i];
    WrittenTensor info;
    info.offset = info.name_offset = w.pos();
    w.put_string(t.name);
    info.n_dims_offset = w.pos();
    w.put(static_cast<std::uint32_t>(t.dims.size()));
    info.dims_offset = w.pos();
    for (std::uint64_t d : t.dims) w.put_size(d);
    if (options.offset_before_type) {
      info.offset_offset = w.pos();
      w.put(offsets[i]);
      info.type_offset = w.pos();
      w.put(t.type);
    } else {
      info.type_offset = w.pos();
      w.put(t.type);
      info.offset_offset = w.pos();
      w.put(offsets[i]);
    }
    info.nbytes = data_sizes[i];
    layout.tensors.push_back(info);
  }
  layout.infos_end = w.pos();
  if (!doc.tensors.empty() || options.pad_when_no_tensors)
    w.pad_to(alignment, options.padding_byte);
  layout.data_start = w.pos();

  for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
    const Tensor& t = doc.tensors[i];
    layout.tensors[i].data_position = w.pos();
    if (t.data) {
      w.out.insert(w.out.end(), t.data->begin(), t.data->end());
    } else {
      w.out.insert(w.out.end(), data_sizes[i], std::uint8_t{0});
    }
    if (i + 1 < doc.tensors.size() || options.pad_after_last_tensor) {
      w.pad_to(alignment, options.padding_byte);
    }
  }
  w.out.insert(w.out.end(), options.trailing.begin(), options.trailing.end());
  result.bytes = std::move(w.out);
  return result;
}

}  // namespace ggufcheck
