#include "remote/http.hpp"

#include <array>
#include <cstring>

#include "report/sink.hpp"

namespace ggufcheck::detail {
namespace {

constexpr std::string_view kSpaces = " \t";

std::string_view trim(std::string_view text) {
  const std::size_t begin = text.find_first_not_of(kSpaces);
  if (begin == std::string_view::npos) return {};
  const std::size_t end = text.find_last_not_of(kSpaces);
  return text.substr(begin, end - begin + 1);
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// A field kept at most this long: no header of interest is longer, and a server cannot make the
// client keep more.
constexpr std::size_t kMaxValue = 1024;

void keep(std::optional<std::string>& field, std::string_view value) {
  field = std::string(value.substr(0, kMaxValue));
}

std::optional<int> two_digits(std::string_view text) {
  if (text.size() != 2 || text[0] < '0' || text[0] > '9' || text[1] < '0' || text[1] > '9') {
    return std::nullopt;
  }
  return (text[0] - '0') * 10 + (text[1] - '0');
}

// "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate).
std::optional<std::time_t> parse_imf_fixdate(std::string_view text) {
  if (text.size() != 29 || text.substr(3, 2) != ", " || text[7] != ' ' || text[11] != ' ' ||
      text[16] != ' ' || text[19] != ':' || text[22] != ':' || text.substr(25) != " GMT") {
    return std::nullopt;
  }
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  int month = -1;
  for (std::size_t m = 0; m < kMonths.size(); ++m) {
    if (text.substr(8, 3) == kMonths[m]) month = static_cast<int>(m);
  }
  const auto day = two_digits(text.substr(5, 2));
  const auto year = parse_decimal(text.substr(12, 4));
  const auto hour = two_digits(text.substr(17, 2));
  const auto minute = two_digits(text.substr(20, 2));
  const auto second = two_digits(text.substr(23, 2));
  if (month < 0 || !day || !year || !hour || !minute || !second || *day < 1 || *day > 31 ||
      *year < 1970 || *year > 9999 || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = static_cast<int>(*year) - 1900;
  tm.tm_mon = month;
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second;
  const std::time_t t = ::timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return t;
}

}  // namespace

std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;  // 19 digits always fit 64 bits
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return value;
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = trim(value);
  constexpr std::string_view kUnit = "bytes ";
  if (value.size() < kUnit.size() || !iequals(value.substr(0, kUnit.size()), kUnit)) {
    return std::nullopt;
  }
  value = trim(value.substr(kUnit.size()));
  const std::size_t slash = value.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view range = value.substr(0, slash);
  const std::string_view total = value.substr(slash + 1);
  ContentRange out;
  if (total != "*") {
    out.total = parse_decimal(total);
    if (!out.total) return std::nullopt;
  }
  if (range == "*") {
    if (!out.total) return std::nullopt;  // "bytes */*" says nothing
    out.satisfied = false;
    return out;
  }
  const std::size_t dash = range.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const auto first = parse_decimal(range.substr(0, dash));
  const auto last = parse_decimal(range.substr(dash + 1));
  if (!first || !last || *last < *first) return std::nullopt;
  if (out.total && *last >= *out.total) return std::nullopt;
  out.first = *first;
  out.last = *last;
  return out;
}

std::optional<std::uint64_t> parse_retry_after(std::string_view value, std::time_t now) {
  value = trim(value);
  if (const auto seconds = parse_decimal(value)) return seconds;
  const auto when = parse_imf_fixdate(value);
  if (!when) return std::nullopt;
  return *when > now ? static_cast<std::uint64_t>(*when - now) : 0;
}

std::optional<std::pair<int, std::string>> parse_status_line(std::string_view line) {
  // HTTP/1.0, HTTP/1.1, HTTP/2, HTTP/3 as libcurl passes them on.
  if (line.size() < 10 || line.substr(0, 5) != "HTTP/") return std::nullopt;
  const std::size_t space = line.find(' ');
  if (space == std::string_view::npos || space + 4 > line.size()) return std::nullopt;
  const std::string_view code = line.substr(space + 1, 3);
  const auto number = parse_decimal(code);
  if (!number || *number < 100 || *number > 599) return std::nullopt;
  if (space + 4 < line.size() && line[space + 4] != ' ') return std::nullopt;
  const std::string_view reason =
      space + 5 <= line.size() ? trim(line.substr(space + 5)) : std::string_view{};
  return std::pair<int, std::string>{static_cast<int>(*number), std::string(reason.substr(0, 128))};
}

void ResponseHeaders::add_line(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (line.substr(0, 5) == "HTTP/") {
    *this = ResponseHeaders{};  // a new response: a redirect's or an interim one came before
    if (const auto status_line = parse_status_line(line)) {
      status = status_line->first;
      reason = status_line->second;
    } else {
      malformed = true;
    }
    bytes = line.size();
    return;
  }
  bytes += line.size();
  if (bytes > kMaxHeaderBytes) too_large = true;
  if (too_large || line.empty()) return;
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return;  // not a field (folding is obsolete): ignored
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = trim(line.substr(colon + 1));
  if (iequals(name, "content-range")) {
    keep(content_range, value);
  } else if (iequals(name, "content-length")) {
    keep(content_length, value);
  } else if (iequals(name, "content-encoding")) {
    keep(content_encoding, value);
  } else if (iequals(name, "etag")) {
    keep(etag, value);
  } else if (iequals(name, "last-modified")) {
    keep(last_modified, value);
  } else if (iequals(name, "retry-after")) {
    keep(retry_after, value);
  }
}

std::string shown_header(std::string_view value, std::size_t limit) {
  return escape(value, limit);
}

}  // namespace ggufcheck::detail
