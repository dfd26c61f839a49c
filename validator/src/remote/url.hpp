// Remote inputs by name: which paths are URLs, hf:// mapped to the Hub's resolve URL, and the
// origin (scheme, host, port) that decides where a token may go. Untrusted text (a redirect's
// Location comes from a server): parsed strictly, without libcurl, so the fuzz target and the
// unit tests call it directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ggufcheck::detail {

inline constexpr std::string_view kDefaultHfEndpoint = "https://huggingface.co";

// An hf:// URL mapped, or why it cannot be.
struct HfMapping {
  std::string url;    // empty when it cannot be mapped
  std::string error;  // why not
};
// hf://OWNER/REPO/PATH or hf://OWNER/REPO@REVISION/PATH ->
// ENDPOINT/OWNER/REPO/resolve/REVISION/PATH (REVISION: main when not given). Each part is
// percent-encoded as the Hub's clients do; a revision with '/' (refs/pr/1) is encoded whole. Empty
// parts, "." and ".." are refused.
[[nodiscard]] HfMapping map_hf_url(std::string_view hf_url, std::string_view endpoint);

// scheme://[userinfo@]host[:port][/path...]: the scheme and host lower-cased, the port the
// scheme's default when not given.
struct Origin {
  std::string scheme;
  std::string host;
  std::uint16_t port = 0;
  bool operator==(const Origin&) const = default;
};
[[nodiscard]] std::optional<Origin> parse_origin(std::string_view url);

// Hosts the Hugging Face token is meant for: huggingface.co and its subdomains.
[[nodiscard]] bool is_hf_host(std::string_view host);

// Whether a request to `url` carries the token of a file named by `named`: only when `named` is
// the Hub's (is_hf_host, or the origin of `endpoint`, where hf:// points) and `url` has the
// same origin (a redirect to another scheme, host or port never gets it).
[[nodiscard]] bool sends_token(std::string_view named, std::string_view url,
                               std::string_view endpoint);

// Why a redirect from `from` to `to` is not followed (not http or https; https to http), or
// empty when it is.
[[nodiscard]] std::string refused_redirect(std::string_view from, std::string_view to);

}  // namespace ggufcheck::detail
