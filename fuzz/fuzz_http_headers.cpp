// What a server says, on arbitrary bytes: each line as a response header line (ResponseHeaders,
// as libcurl's header callback hands them over), as a Content-Range, a Retry-After, a number, a
// URL's origin (a redirect's Location) and an hf:// URL. Nothing may fail, and whatever parses
// must mean what it says: a range inside its total, a number equal to its digits, an origin of
// http or https with a lower-case host and a port, an hf:// mapping under its endpoint with
// every byte of the input encoded. The fields kept stay bounded whatever the input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "pipeline.hpp"
#include "remote/http.hpp"
#include "remote/url.hpp"

namespace {

using namespace ggufcheck::detail;

std::string check_line(std::string_view line) {
  if (const auto r = parse_content_range(line)) {
    if (r->satisfied && r->last < r->first) return "a range that ends before it begins";
    if (r->satisfied && r->total && r->last >= *r->total) return "a range past its total";
    if (!r->satisfied && !r->total) return "an unsatisfied range without a total";
  }
  if (const auto n = parse_decimal(line)) {
    std::uint64_t value = 0;
    for (const char c : line) value = value * 10 + static_cast<std::uint64_t>(c - '0');
    if (value != *n || line.empty() || line.size() > 19) return "a number that is not its digits";
  }
  (void)parse_retry_after(line, 784111777);
  if (const auto origin = parse_origin(line)) {
    if (origin->scheme != "http" && origin->scheme != "https") return "an origin's scheme";
    if (origin->host.empty() || origin->port == 0) return "an origin without host or port";
    for (const char c : origin->host) {
      if (c >= 'A' && c <= 'Z') return "an origin's host not lower-cased";
      if (static_cast<unsigned char>(c) <= 0x20) return "an origin's host with a space";
    }
    if (parse_origin(line) != origin) return "an origin parsed twice differently";
  }
  constexpr std::string_view kEndpoint = "https://huggingface.co";
  const HfMapping mapped = map_hf_url(line, kEndpoint);
  if (mapped.url.empty() == mapped.error.empty()) return "an hf:// mapping and an error, or none";
  if (!mapped.url.empty()) {
    if (mapped.url.compare(0, kEndpoint.size(), kEndpoint) != 0) return "outside the endpoint";
    if (mapped.url.find("/resolve/") == std::string::npos) return "no resolve in the mapping";
    for (const char c : mapped.url) {
      const auto b = static_cast<unsigned char>(c);
      if (b <= 0x20 || b >= 0x7F || c == '?' || c == '#') return "a byte not encoded";
    }
  }
  return {};
}

std::string check(std::string_view text) {
  ResponseHeaders headers;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(begin, end - begin + (end < text.size() ? 1 : 0));
    if (auto broken = check_line(line); !broken.empty()) return broken;
    headers.add_line(line);
    if (headers.reason.size() > 128) return "a reason kept whole";
    for (const auto* field :
         {&headers.content_range, &headers.content_length, &headers.etag, &headers.last_modified,
          &headers.retry_after, &headers.content_encoding}) {
      if (*field && (*field)->size() > 1024) return "a header field kept whole";
    }
    if (headers.status != 0 && (headers.status < 100 || headers.status > 599)) return "a status";
    begin = end + 1;
  }
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ggufcheck::Bytes bytes(data, size);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ggufcheck::fuzz::fail_if(check(text), bytes);
  return 0;
}
