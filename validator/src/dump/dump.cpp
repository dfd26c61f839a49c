// dump renders the index and layout that validation kept (checks.hpp's Validated), streaming:
// values are written as the walker reaches them (index/values.hpp) and tensor data is hashed
// in the input's bounded chunks, so no value, list or output is ever held whole.
#include "ggufcheck/dump.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>

#include "dump/json_writer.hpp"
#include "ggufcheck/format.hpp"
#include "index/values.hpp"
#include "util/digest.hpp"
#include "util/utf8.hpp"
#include "validate/validate.hpp"

namespace ggufcheck {
namespace {

using detail::DataLayout;
using detail::FileIndex;
using detail::JsonWriter;

// A number or scalar value's canonical text, formatted in place (no allocation per element).
class ScalarText {
 public:
  ScalarText(ValueType type, std::uint64_t bits) {
    switch (type) {
      case ValueType::Uint8:
      case ValueType::Uint16:
      case ValueType::Uint32:
      case ValueType::Uint64: number(bits); break;
      case ValueType::Int8: number(detail::sign_extended(bits, 1)); break;
      case ValueType::Int16: number(detail::sign_extended(bits, 2)); break;
      case ValueType::Int32: number(detail::sign_extended(bits, 4)); break;
      case ValueType::Int64: number(detail::sign_extended(bits, 8)); break;
      case ValueType::Float32:
        floating(std::bit_cast<float>(static_cast<std::uint32_t>(bits)));
        break;
      case ValueType::Float64: floating(std::bit_cast<double>(bits)); break;
      case ValueType::Bool: text(bits != 0 ? "true" : "false"); break;
      case ValueType::String:
      case ValueType::Array: break;  // not scalars: the walker gives them otherwise
    }
  }
  explicit ScalarText(std::uint64_t value) { number(value); }
  [[nodiscard]] std::string_view view() const { return {buffer_, length_}; }

 private:
  template <typename Number>
  void number(Number value) {
    const auto result = std::to_chars(buffer_, buffer_ + sizeof buffer_, value);
    length_ = static_cast<std::size_t>(result.ptr - buffer_);
  }
  // The shortest decimal that reads back to the same value at the stored width.
  template <typename Float>
  void floating(Float value) {
    if (std::isnan(value)) return text("nan");
    if (std::isinf(value)) return text(value < 0 ? "-inf" : "inf");
    number(value);
  }
  void text(std::string_view s) { length_ = s.copy(buffer_, sizeof buffer_); }

  char buffer_[32];  // the longest: a double's 24 characters ("-2.2250738585072014e-308")
  std::size_t length_ = 0;
};

void number(JsonWriter& out, std::uint64_t value) {
  out.string(ScalarText(value).view());
}

// A key, string value or tensor name: the text under `name`, or when it is not UTF-8 its hex
// under `hex_name`.
void put_text(JsonWriter& out, std::string_view name, std::string_view hex_name,
              std::string_view text) {
  if (detail::is_valid_utf8(text)) {
    out.key(name);
    out.string(text);
  } else {
    out.key(hex_name);
    out.hex_string(text);
  }
}

// The walk's visitor for one pair's value: writes each element as the walk reaches it. Depth 0
// is the pair itself (its "value" member, and for an array its "element_type"); deeper values
// are array elements: plain strings for scalars and valid strings, objects otherwise.
class ValueRenderer {
 public:
  explicit ValueRenderer(JsonWriter& out) : out_(out) {}

  bool scalar(ValueType type, std::uint64_t bits, std::uint64_t /*offset*/) {
    // A bool byte other than 0 or 1 (accepted by the llama.cpp profile only) shows that byte.
    const bool odd_bool = type == ValueType::Bool && bits > 1;
    if (depth_ == 0) {
      out_.key("value");
      out_.string(ScalarText(type, bits).view());
      if (odd_bool) {
        out_.key("raw");
        number(out_, bits);
      }
    } else if (odd_bool) {
      out_.begin_object();
      out_.key("value");
      out_.string("true");
      out_.key("raw");
      number(out_, bits);
      out_.end_object();
    } else {
      out_.string(ScalarText(type, bits).view());
    }
    return !out_.failed();
  }

  bool string(std::string_view text, std::uint64_t /*offset*/, std::uint64_t /*length*/) {
    if (depth_ == 0) {
      put_text(out_, "value", "value_bytes_hex", text);
    } else if (detail::is_valid_utf8(text)) {
      out_.string(text);
    } else {
      out_.begin_object();
      out_.key("bytes_hex");
      out_.hex_string(text);
      out_.end_object();
    }
    return !out_.failed();
  }

  bool begin_array(ValueType element_type, std::uint64_t /*count*/, std::uint64_t /*offset*/) {
    if (depth_ > 0) {
      out_.begin_object();
      out_.key("type");
      out_.string("array");
    }
    out_.key("element_type");
    out_.string(to_string(element_type));
    out_.key("value");
    out_.begin_array();
    ++depth_;
    return !out_.failed();
  }

  bool end_array() {
    out_.end_array();
    if (--depth_ > 0) out_.end_object();
    return !out_.failed();
  }

 private:
  JsonWriter& out_;
  std::uint32_t depth_ = 0;
};

// False when the output failed.
bool write_pair(const FileIndex& index, std::size_t i, JsonWriter& out) {
  out.begin_object();
  put_text(out, "key", "key_bytes_hex", index.key(i));
  out.key("type");
  out.string(to_string(index.metadata[i].type()));
  ValueRenderer renderer(out);
  if (!detail::walk_value(index, i, renderer)) {
    if (out.failed()) return false;
    // The reader read this value: a walk that fails is a bug, not a property of the file.
    throw std::logic_error(fmt::format("dump: metadata pair {} cannot be walked again", i));
  }
  out.end_object();
  return !out.failed();
}

// SHA-256 over the input's bounded chunks (util/digest.hpp), one tensor at a time.
class Sha256 {
 public:
  // The digest of [begin, begin + length) of the input (inside it), as 32 bytes.
  std::string_view digest(const detail::Input& input, std::uint64_t begin, std::uint64_t length) {
    detail::Digest digest(detail::DigestKind::Sha256);
    if (!input.chunks(begin, begin + length, [&](std::uint64_t /*at*/, std::string_view chunk) {
          digest.update(chunk.data(), chunk.size());
          return true;
        })) {
      throw std::runtime_error("SHA-256 failed: a tensor's bytes could not be read");
    }
    digest_ = digest.sha256();
    return {reinterpret_cast<const char*>(digest_.data()), digest_.size()};
  }

 private:
  Sha256Digest digest_{};
};

void write_tensor(const FileIndex& index, const DataLayout& layout, std::size_t i, Sha256* hash,
                  JsonWriter& out) {
  const detail::TensorInfo& info = index.tensors[i];
  out.begin_object();
  put_text(out, "name", "name_bytes_hex", index.name(i));
  const TensorTypeInfo* type = tensor_type(info.type);
  out.key("type");
  out.string(type != nullptr ? type->name : "unknown");
  out.key("type_id");
  number(out, info.type);
  out.key("dims");
  out.begin_array();
  const auto dims = index.dims(i);
  for (std::uint32_t d = 0; d < info.n_dims; ++d) {
    if (d < kMaxDims) {
      number(out, dims[d]);
    } else if (const auto dim = index.dim(i, d)) {
      number(out, *dim);  // beyond ggml's four: only when overrides let the file pass
    }
  }
  out.end_array();
  out.key("offset");
  number(out, index.data_offset(i));
  if (hash != nullptr) {
    out.key("data_sha256");
    // An accepted file has every tensor's data inside it; "" if the layout says otherwise.
    const auto extent = layout.tensor(index, i);
    const std::uint64_t size = index.input.size();
    if (extent && extent->begin && *extent->begin <= size &&
        extent->nbytes <= size - *extent->begin) {
      out.hex_string(hash->digest(index.input, *extent->begin, extent->nbytes));
    } else {
      out.string("");
    }
  }
  out.end_object();
}

void write_failure(JsonWriter& out, std::string_view error) {
  out.begin_object();
  out.key("ok");
  out.boolean(false);
  out.key("error");
  out.string(error);
  out.key("errors");
  out.begin_array();
  out.end_array();
  out.end_object();
}

int write_rejected(const Report& report, JsonWriter& out) {
  const auto is_error = [](const Finding& f) { return f.severity == Severity::Error; };
  const auto first = std::find_if(report.findings.begin(), report.findings.end(), is_error);
  out.begin_object();
  out.key("ok");
  out.boolean(false);
  out.key("error");
  out.string(first == report.findings.end()
                 ? std::string()
                 : fmt::format("{} {} at 0x{:x}: {}", code_string(first->code),
                               catalogue_entry(first->code).name, first->offset, first->message));
  out.key("errors");
  out.begin_array();
  for (const Finding& f : report.findings) {
    if (!is_error(f) || out.failed()) continue;
    out.begin_object();
    out.key("code");
    out.string(code_string(f.code));
    out.key("name");
    out.string(catalogue_entry(f.code).name);
    out.key("offset");
    number(out, f.offset);
    out.key("path");
    out.string(f.path);
    out.key("message");
    out.string(f.message);
    out.end_object();
  }
  out.end_array();
  out.end_object();
  return report.exit_status() == 0 ? 1 : report.exit_status();
}

// The dump of what validation kept, without its final newline; returns the exit status.
int write_dump(const detail::Validated& validated, DumpLevel level, JsonWriter& out) {
  if (!validated.report.passed()) return write_rejected(validated.report, out);
  const FileIndex& index = validated.index;
  const DataLayout& layout = validated.layout;
  if (level != DumpLevel::Verdict && !index.tensors_complete) {
    // Only with overrides that silence a structural error: the bytes cannot be shown.
    write_failure(out, "the file passes under these options but its structure cannot be read");
    return 1;
  }
  out.begin_object();
  out.key("ok");
  out.boolean(true);
  if (level >= DumpLevel::Header) {
    out.key("version");
    number(out, index.version);
    out.key("endianness");
    out.string(index.endian == Endian::Little ? "little" : "big");
    // The layout's: it follows the profile's rule for finding general.alignment.
    out.key("alignment");
    number(out, layout.alignment);
    out.key("tensor_count");
    number(out, index.tensors.size());
    out.key("kv_count");
    number(out, index.metadata.size());
  }
  if (level >= DumpLevel::Structure) {
    // Readers disagree on where the data of a file without tensors starts: only with tensors.
    if (!index.tensors.empty()) {
      out.key("data_offset");
      number(out, layout.data_start.value_or(0));
    }
    out.key("metadata");
    out.begin_array();
    for (std::size_t i = 0; i < index.metadata.size(); ++i) {
      if (!write_pair(index, i, out)) return 0;  // the output failed: the writer knows
    }
    out.end_array();
    std::optional<Sha256> hash;
    if (level == DumpLevel::Data) hash.emplace();
    out.key("tensors");
    out.begin_array();
    for (std::size_t i = 0; i < index.tensors.size() && !out.failed(); ++i) {
      write_tensor(index, layout, i, hash ? &*hash : nullptr, out);
    }
    out.end_array();
  }
  out.end_object();
  return 0;
}

// Validates the input once and writes its dump and the newline after it.
int dump_input(const detail::Input& input, const Options& options, DumpLevel level,
               std::string path, JsonWriter& out) {
  detail::Validated validated;
  // The dump is the container's (the conformance format): the model checks do not decide it.
  Options container = options;
  container.model_checks = false;
  detail::validate_input(input, nullptr, container, std::move(path), validated);
  const int status = write_dump(validated, level, out);
  out.raw("\n");
  return status;
}

}  // namespace

int dump_file(const std::string& path, const Options& options, DumpLevel level,
              const std::function<bool(std::string_view)>& write) {
  JsonWriter out(write);
  int status = 0;
  const auto error = detail::with_input(path, [&](const detail::Input& input) {
    status = dump_input(input, options, level, detail::shown_path(path), out);
  });
  if (!error.ok()) {
    // The file could not be read, or changed while it was: what was rendered is void. Text not
    // yet handed over is dropped; text already handed over cannot be taken back, and the error
    // follows it on a line of its own.
    const bool began = out.flushed_any();
    out.discard();
    if (began) out.raw("\n");
    write_failure(out, error.why());
    out.raw("\n");
    status = 2;
  }
  out.flush();
  return status;
}

Dump dump(Bytes bytes, const Options& options, DumpLevel level) {
  Dump result;
  const JsonWriter::Output append = [&](std::string_view text) {
    result.json.append(text);
    return true;
  };
  JsonWriter out(append);
  result.exit_status = dump_input(detail::Input(bytes), options, level, "<buffer>", out);
  out.flush();
  return result;
}

Dump dump_file(const std::string& path, const Options& options, DumpLevel level) {
  Dump result;
  result.exit_status = dump_file(path, options, level, [&](std::string_view text) {
    result.json.append(text);
    return true;
  });
  return result;
}

}  // namespace ggufcheck
