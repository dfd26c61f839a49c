#include "dump/json_writer.hpp"

#include <algorithm>
#include <cstdint>

namespace ggufcheck::detail {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// The length of the UTF-8 sequence at text[i], and its code point; 0 when the bytes there are
// not a valid sequence (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF, as
// util/utf8.hpp decides).
std::size_t decode(std::string_view text, std::size_t i, std::uint32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  unsigned char low = 0x80;  // bounds of the second byte
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1FU;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0FU;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07U;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (length > text.size() - i || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xBF) return 0;
    code_point = (code_point << 6) | (byte(k) & 0x3FU);
  }
  return length;
}

// Bytes that stand for themselves in a JSON string (nlohmann escapes the rest).
bool is_plain(unsigned char c) {
  return c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
}

}  // namespace

// The buffer grows to kBufferSize as the text does: most documents are a few kilobytes, and a
// whole buffer made for each was most of a small dump's cost under ASan.
JsonWriter::JsonWriter(const Output& output) : output_(output) {
  buffer_.reserve(kInitialBuffer);
}

void JsonWriter::begin_object() {
  separate();
  put('{');
  first_in_container_.push_back(true);
}

void JsonWriter::end_object() {
  first_in_container_.pop_back();
  put('}');
}

void JsonWriter::begin_array() {
  separate();
  put('[');
  first_in_container_.push_back(true);
}

void JsonWriter::end_array() {
  first_in_container_.pop_back();
  put(']');
}

void JsonWriter::key(std::string_view name) {
  separate();
  put('"');
  escape(name);
  put("\":");
  after_key_ = true;
}

void JsonWriter::string(std::string_view text) {
  separate();
  put('"');
  escape(text);
  put('"');
}

void JsonWriter::hex_string(std::string_view bytes) {
  separate();
  put('"');
  for (const char c : bytes) {
    if (failed_) return;
    const auto byte = static_cast<unsigned char>(c);
    put(kHexDigits[byte >> 4]);
    put(kHexDigits[byte & 15]);
  }
  put('"');
}

void JsonWriter::boolean(bool value) {
  separate();
  put(value ? "true" : "false");
}

void JsonWriter::raw(std::string_view text) {
  put(text);
}

bool JsonWriter::flush() {
  if (!failed_ && !buffer_.empty()) {
    flushed_any_ = true;
    if (!output_(buffer_)) failed_ = true;
  }
  buffer_.clear();
  return !failed_;
}

void JsonWriter::discard() {
  buffer_.clear();
  first_in_container_.clear();
  after_key_ = false;
}

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_in_container_.empty()) return;
  if (first_in_container_.back()) {
    first_in_container_.back() = false;
  } else {
    put(',');
  }
}

void JsonWriter::put(std::string_view text) {
  while (!text.empty() && !failed_) {
    const std::size_t n = std::min(text.size(), kBufferSize - buffer_.size());
    buffer_.append(text.data(), n);
    text.remove_prefix(n);
    if (buffer_.size() >= kBufferSize) flush();
  }
}

// nlohmann's dump_escaped with ensure_ascii: the short escapes for \b \t \n \f \r " and \,
// \u00XX for the other control characters, and \uXXXX (a surrogate pair above U+FFFF, lower-case
// hex) for DEL and every code point beyond ASCII.
void JsonWriter::escape(std::string_view text) {
  std::size_t plain_from = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (is_plain(c)) {
      ++i;
      continue;
    }
    put(text.substr(plain_from, i - plain_from));
    if (failed_) return;
    std::uint32_t code_point = c;
    std::size_t length = 1;
    if (c >= 0x80) {
      length = decode(text, i, code_point);
      if (length == 0) {
        code_point = 0xFFFD;
        length = 1;
      }
    }
    switch (code_point) {
      case '\b': put("\\b"); break;
      case '\t': put("\\t"); break;
      case '\n': put("\\n"); break;
      case '\f': put("\\f"); break;
      case '\r': put("\\r"); break;
      case '"': put("\\\""); break;
      case '\\': put("\\\\"); break;
      default: {
        const auto unit = [&](std::uint32_t u) {
          const char escaped[6] = {'\\',
                                   'u',
                                   kHexDigits[(u >> 12) & 15],
                                   kHexDigits[(u >> 8) & 15],
                                   kHexDigits[(u >> 4) & 15],
                                   kHexDigits[u & 15]};
          put(std::string_view(escaped, sizeof escaped));
        };
        if (code_point <= 0xFFFF) {
          unit(code_point);
        } else {
          unit(0xD7C0 + (code_point >> 10));
          unit(0xDC00 + (code_point & 0x3FF));
        }
      }
    }
    i += length;
    plain_from = i;
  }
  put(text.substr(plain_from));
}

}  // namespace ggufcheck::detail
