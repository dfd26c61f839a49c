#include "report/sink.hpp"

namespace ggufcheck::detail {

std::string escape(std::string_view bytes, std::size_t max_length) {
  std::string out;
  out.reserve(std::min(bytes.size(), max_length) + 8);
  std::size_t shown = 0;
  for (char c : bytes) {
    if (shown == max_length) {
      out += fmt::format("...({} bytes)", bytes.size());
      break;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '"' || byte == '\\') {
      out += '\\';
      out += c;
    } else if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      out += fmt::format("\\x{:02x}", byte);
    }
    ++shown;
  }
  return out;
}

std::string Field::text() const {
  if (!indexed_) return plain_ + suffix_;
  if (!name_) return fmt::format("{}[{}]{}", plain_, index_, suffix_);
  return fmt::format("{}[{}] \"{}\"{}", plain_, index_, escape(*name_), suffix_);
}

}  // namespace ggufcheck::detail
