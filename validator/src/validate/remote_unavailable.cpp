// A build without libcurl (GGUFCHECK_REMOTE=OFF): URLs are reported unreadable, saying why.
#include <fmt/format.h>

#include "validate/remote.hpp"

namespace ggufcheck {
namespace detail {

RemoteOutcome visit_remote(const std::string& url, const Options&, const std::string& shown,
                           Validated&, const std::function<void()>&, const StreamLimits&) {
  (void)url;
  return {RemoteOutcome::State::Unreadable,
          fmt::format("cannot read {}: this ggufcheck was built without remote files "
                      "(GGUFCHECK_REMOTE=OFF, or libcurl was not found when it was built)",
                      shown),
          "install libcurl's headers (Debian: libcurl4-openssl-dev) and rebuild, or download the "
          "file and check it locally",
          false,
          "",
          false};
}

}  // namespace detail

bool remote_supported() {
  return false;
}

}  // namespace ggufcheck
