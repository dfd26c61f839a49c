#include "ggufcheck/dump.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "checks/checks.hpp"
#include "ggufcheck/document.hpp"
#include "ggufcheck/format.hpp"
#include "read/cursor.hpp"
#include "util/utf8.hpp"

namespace ggufcheck {
namespace {

// Insertion order: the canonical output reads like the file.
using Json = nlohmann::ordered_json;

std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

// The shortest decimal that reads back to the same value at the stored width.
template <typename Float> std::string float_text(Float value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

std::string signed_text(std::uint64_t bits, std::uint32_t width) {
  const std::uint32_t shift = 64 - 8 * width;
  // Sign-extend the stored width: two's complement, as the file holds it.
  const auto value = static_cast<std::int64_t>(bits << shift) >> shift;
  return std::to_string(value);
}

// A string as {"value": text} or, when it is not UTF-8, {"bytes_hex": hex}:
// into `out` under `name` (value) or `name`_bytes_hex.
void put_text(Json &out, const std::string &name, const std::string &text) {
  if (detail::is_valid_utf8(text)) {
    out[name] = text;
  } else {
    out[name + "_bytes_hex"] = hex(text);
  }
}

Json scalar_json(const Value &value);

// An array element: a plain string for scalars and valid strings, an object
// otherwise.
Json element_json(const Value &value) {
  if (value.type == ValueType::Array) {
    Json out;
    out["type"] = "array";
    out["element_type"] = std::string(to_string(value.element_type));
    Json items = Json::array();
    for (const Value &item : value.items)
      items.push_back(element_json(item));
    out["value"] = std::move(items);
    return out;
  }
  if (value.type == ValueType::String && !detail::is_valid_utf8(value.text)) {
    return Json{{"bytes_hex", hex(value.text)}};
  }
  if (value.type == ValueType::Bool && value.bits > 1) {
    return Json{{"value", "true"}, {"raw", std::to_string(value.bits)}};
  }
  return scalar_json(value);
}

Json scalar_json(const Value &value) {
  switch (value.type) {
  case ValueType::Uint8:
  case ValueType::Uint16:
  case ValueType::Uint32:
  case ValueType::Uint64:
    return std::to_string(value.bits);
  case ValueType::Int8:
    return signed_text(value.bits, 1);
  case ValueType::Int16:
    return signed_text(value.bits, 2);
  case ValueType::Int32:
    return signed_text(value.bits, 4);
  case ValueType::Int64:
    return signed_text(value.bits, 8);
  case ValueType::Float32:
    return float_text(
        std::bit_cast<float>(static_cast<std::uint32_t>(value.bits)));
  case ValueType::Float64:
    return float_text(std::bit_cast<double>(value.bits));
  case ValueType::Bool:
    return value.bits != 0 ? "true" : "false";
  case ValueType::String:
    return value.text;
  case ValueType::Array:
    break;
  }
  return nullptr;
}

Json pair_json(const KeyValue &kv) {
  Json out;
  put_text(out, "key", kv.key);
  out["type"] = std::string(to_string(kv.value.type));
  const Value &value = kv.value;
  if (value.type == ValueType::Array) {
    out["element_type"] = std::string(to_string(value.element_type));
    Json items = Json::array();
    for (const Value &item : value.items)
      items.push_back(element_json(item));
    out["value"] = std::move(items);
  } else if (value.type == ValueType::String) {
    put_text(out, "value", value.text);
  } else {
    out["value"] = scalar_json(value);
    if (value.type == ValueType::Bool && value.bits > 1)
      out["raw"] = std::to_string(value.bits);
  }
  return out;
}

std::string sha256_hex(Bytes bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(),
                 nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed (OpenSSL EVP_Digest)");
  }
  return hex(std::string_view(reinterpret_cast<const char *>(digest), length));
}

std::string with_newline(const Json &json) {
  // ASCII only: U+2028, U+0085, a BOM and every other non-ASCII character come
  // out escaped.
  return json.dump(-1, ' ', true) + "\n";
}

Dump rejected(const Report &report) {
  Json errors = Json::array();
  std::string first;
  for (const Finding &f : report.findings) {
    if (f.severity != Severity::Error)
      continue;
    const std::string code = code_string(f.code);
    if (first.empty()) {
      first = fmt::format("{} {} at 0x{:x}: {}", code,
                          catalogue_entry(f.code).name, f.offset, f.message);
    }
    errors.push_back(Json{{"code", code},
                          {"name", std::string(catalogue_entry(f.code).name)},
                          {"offset", std::to_string(f.offset)},
                          {"path", f.path},
                          {"message", f.message}});
  }
  Json out;
  out["ok"] = false;
  out["error"] = first;
  out["errors"] = std::move(errors);
  return Dump{with_newline(out),
              report.exit_status() == 0 ? 1 : report.exit_status()};
}

} // namespace

Dump dump(Bytes bytes, const Options &options, DumpLevel level) {
  return dump(bytes, validate(bytes, options), level);
}

Dump dump(Bytes bytes, const Report &report, DumpLevel level) {
  if (!report.passed())
    return rejected(report);
  Json out;
  out["ok"] = true;
  if (level == DumpLevel::Verdict)
    return Dump{with_newline(out), 0};

  const auto document = read_document(bytes);
  if (!document) {
    // Only with overrides that silence a structural error: the bytes cannot be
    // shown.
    out = Json{{"ok", false},
               {"error", "the file passes under these options but its "
                         "structure cannot be read"},
               {"errors", Json::array()}};
    return Dump{with_newline(out), 1};
  }
  out["version"] = std::to_string(document->version);
  out["endianness"] = document->endian == Endian::Little ? "little" : "big";
  // The alignment and data start in force are the report's: they follow the
  // profile's key rules (the llama.cpp profile reads "general.alignment\0x" as
  // general.alignment, as ggml does), which read_document's spec reading does
  // not.
  const std::uint64_t alignment = report.facts.alignment;
  const std::uint64_t data_start = report.facts.data_start.value_or(0);
  out["alignment"] = std::to_string(alignment);
  out["tensor_count"] = std::to_string(document->tensors.size());
  out["kv_count"] = std::to_string(document->metadata.size());
  if (level == DumpLevel::Header)
    return Dump{with_newline(out), 0};

  // Readers disagree on where the data of a file without tensors starts: only
  // with tensors.
  if (!document->tensors.empty())
    out["data_offset"] = std::to_string(data_start);
  Json metadata = Json::array();
  for (const KeyValue &kv : document->metadata)
    metadata.push_back(pair_json(kv));
  out["metadata"] = std::move(metadata);
  Json tensors = Json::array();
  for (std::size_t i = 0; i < document->tensors.size(); ++i) {
    const Tensor &tensor = document->tensors[i];
    Json t;
    put_text(t, "name", tensor.name);
    const TensorTypeInfo *type = tensor_type(tensor.type);
    t["type"] = type != nullptr ? std::string(type->name) : "unknown";
    t["type_id"] = std::to_string(tensor.type);
    Json dims = Json::array();
    for (const std::uint64_t d : tensor.dims)
      dims.push_back(std::to_string(d));
    t["dims"] = std::move(dims);
    t["offset"] = std::to_string(tensor.offset.value_or(0));
    if (level == DumpLevel::Data) {
      // An accepted file has every tensor's data inside it.
      const auto nbytes = tensor_nbytes(tensor.type, tensor.dims);
      std::uint64_t start = 0;
      const bool inside =
          nbytes && data_start <= bytes.size() &&
          detail::checked_add(data_start, tensor.offset.value_or(0), start) &&
          start <= bytes.size() && *nbytes <= bytes.size() - start;
      t["data_sha256"] =
          inside ? sha256_hex(bytes.subspan(start, *nbytes)) : "";
    }
    tensors.push_back(std::move(t));
  }
  out["tensors"] = std::move(tensors);
  return Dump{with_newline(out), 0};
}

Dump dump_file(const std::string &path, const Options &options,
               DumpLevel level) {
  Dump result;
  const auto error = detail::with_input(path, [&](const detail::Input &input) {
    std::string_view all;
    (void)input.view(0, input.size(), all);
    result = dump(
        Bytes(reinterpret_cast<const std::uint8_t *>(all.data()), all.size()),
        options, level);
  });
  if (error) {
    const Json out{{"ok", false}, {"error", *error}, {"errors", Json::array()}};
    return Dump{with_newline(out), 2};
  }
  return result;
}

} // namespace ggufcheck
