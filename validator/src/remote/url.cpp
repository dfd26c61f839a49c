#include "remote/url.hpp"

#include <fmt/format.h>

#include <vector>

#include "ggufcheck/validate.hpp"
#include "remote/http.hpp"

namespace ggufcheck {

bool is_url(std::string_view path) {
  const auto starts = [&](std::string_view prefix) {
    if (path.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
      const char c = path[i];
      if ((c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c) != prefix[i]) return false;
    }
    return true;
  };
  return starts("https://") || starts("http://") || starts("hf://");
}

namespace detail {
namespace {

bool unreserved(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

std::string percent_encode(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (unreserved(c)) {
      out += c;
    } else {
      out += fmt::format("%{:02X}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    const std::size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

// %XX escapes decoded (a revision is given encoded when it holds a '/'); nullopt on a bad one.
std::optional<std::string> percent_decode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    const auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    if (text.size() - i < 3) return std::nullopt;  // "%" and two hex digits
    const int high = hex(text[i + 1]);
    const int low = hex(text[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

bool bad_segment(std::string_view s) {
  return s.empty() || s == "." || s == "..";
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return out;
}

}  // namespace

HfMapping map_hf_url(std::string_view hf_url, std::string_view endpoint) {
  constexpr std::string_view kScheme = "hf://";
  if (hf_url.size() < kScheme.size() || lower(hf_url.substr(0, kScheme.size())) != kScheme) {
    return {"", "not an hf:// URL"};
  }
  const std::string_view rest = hf_url.substr(kScheme.size());
  if (rest.find_first_of("?#") != std::string_view::npos) {
    return {"", "an hf:// URL has no query or fragment"};
  }
  std::vector<std::string_view> parts = split(rest, '/');
  if (parts.size() < 3) {
    return {"", "expected hf://OWNER/REPO/FILE or hf://OWNER/REPO@REVISION/FILE"};
  }
  const std::string_view owner = parts[0];
  std::string_view repo = parts[1];
  std::string revision = "main";
  if (const std::size_t at = repo.find('@'); at != std::string_view::npos) {
    const auto decoded = percent_decode(repo.substr(at + 1));
    repo = repo.substr(0, at);
    if (!decoded) return {"", "a revision with a malformed %-escape"};
    if (decoded->empty()) return {"", "an empty revision after '@'"};
    revision = *decoded;
  }
  if (bad_segment(owner) || bad_segment(repo)) {
    return {"", "an empty, '.' or '..' owner or repository name"};
  }
  std::string path;
  for (std::size_t i = 2; i < parts.size(); ++i) {
    if (bad_segment(parts[i])) return {"", "an empty, '.' or '..' part in the file's path"};
    if (!path.empty()) path += '/';
    path += percent_encode(parts[i]);
  }
  std::string base(endpoint);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return {fmt::format("{}/{}/{}/resolve/{}/{}", base, percent_encode(owner), percent_encode(repo),
                      percent_encode(revision), path),
          ""};
}

std::optional<Origin> parse_origin(std::string_view url) {
  const std::size_t colon = url.find("://");
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  Origin origin;
  origin.scheme = lower(url.substr(0, colon));
  if (origin.scheme == "https") {
    origin.port = 443;
  } else if (origin.scheme == "http") {
    origin.port = 80;
  } else {
    return std::nullopt;
  }
  std::string_view authority = url.substr(colon + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
    authority.remove_prefix(at + 1);  // userinfo
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {  // an IPv6 literal
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(0, close + 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return std::nullopt;
      port = after.substr(1);
    }
  } else if (const std::size_t c = authority.rfind(':'); c != std::string_view::npos) {
    host = authority.substr(0, c);
    port = authority.substr(c + 1);
  }
  if (host.empty()) return std::nullopt;
  for (const char ch : host) {
    if (static_cast<unsigned char>(ch) <= 0x20 || ch == 0x7F) return std::nullopt;
  }
  if (!port.empty()) {
    const auto number = parse_decimal(port);
    if (!number || *number == 0 || *number > 65535) return std::nullopt;
    origin.port = static_cast<std::uint16_t>(*number);
  }
  origin.host = lower(host);
  // "huggingface.co." names the same host as "huggingface.co".
  if (origin.host.size() > 1 && origin.host.back() == '.') origin.host.pop_back();
  return origin;
}

bool is_hf_host(std::string_view host) {
  constexpr std::string_view kHub = "huggingface.co";
  if (host == kHub) return true;
  return host.size() > kHub.size() + 1 && host.substr(host.size() - kHub.size()) == kHub &&
         host[host.size() - kHub.size() - 1] == '.';
}

bool sends_token(std::string_view named, std::string_view url, std::string_view endpoint) {
  const auto origin = parse_origin(named);
  const auto here = parse_origin(url);
  const auto hub = parse_origin(endpoint);
  if (!origin || !here || *origin != *here) return false;
  return is_hf_host(origin->host) || (hub && *hub == *origin);
}

std::string refused_redirect(std::string_view from, std::string_view to) {
  const auto target = parse_origin(to);
  if (!target) return "not an http or https URL";
  const auto source = parse_origin(from);
  if (source && source->scheme == "https" && target->scheme == "http") {
    return "a redirect from https to http is refused";
  }
  return {};
}

}  // namespace detail
}  // namespace ggufcheck
