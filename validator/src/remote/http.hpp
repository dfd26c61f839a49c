// What a server says, read as untrusted text (no libcurl here: the fuzz target fuzz_http_headers
// and the unit tests call these directly). Every number is checked: a field that does not parse
// exactly is refused, never guessed at.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

namespace ggufcheck::detail {

// "bytes FIRST-LAST/TOTAL", "bytes FIRST-LAST/*" or "bytes */TOTAL" (RFC 9110 14.4).
struct ContentRange {
  bool satisfied = true;  // false: "bytes */TOTAL" (a 416's)
  std::uint64_t first = 0;
  std::uint64_t last = 0;              // inclusive
  std::optional<std::uint64_t> total;  // absent: "*"
};
[[nodiscard]] std::optional<ContentRange> parse_content_range(std::string_view value);

// A decimal number of at most 19 digits (no sign, no spaces inside), as Content-Length is.
[[nodiscard]] std::optional<std::uint64_t> parse_decimal(std::string_view text);

// Retry-After: delta-seconds, or an HTTP date (IMF-fixdate, as RFC 9110 requires senders to
// write it) given as seconds from `now` (0 for a date in the past).
[[nodiscard]] std::optional<std::uint64_t> parse_retry_after(std::string_view value,
                                                             std::time_t now);

// The response as its header lines arrive (libcurl's header callback, one line at a time). A
// new status line starts a new response (a redirect's, a 100 Continue's): the fields are the
// last response's. Bounded: past kMaxHeaderBytes the response is refused (too_large).
struct ResponseHeaders {
  static constexpr std::size_t kMaxHeaderBytes = 64 * 1024;
  int status = 0;
  std::string reason;  // as sent, cut to 128 bytes
  std::optional<std::string> content_range;
  std::optional<std::string> content_length;
  std::optional<std::string> content_encoding;
  std::optional<std::string> etag;
  std::optional<std::string> last_modified;
  std::optional<std::string> retry_after;
  std::size_t bytes = 0;  // of this response's header lines
  bool too_large = false;
  bool malformed = false;  // a status line that does not parse

  void add_line(std::string_view line);
};

// "HTTP/1.1 206 Partial Content" -> 206 and "Partial Content".
[[nodiscard]] std::optional<std::pair<int, std::string>> parse_status_line(std::string_view line);

// The text of an untrusted header value fit for a message: printable ASCII, others escaped,
// at most `limit` bytes.
[[nodiscard]] std::string shown_header(std::string_view value, std::size_t limit = 128);

}  // namespace ggufcheck::detail
