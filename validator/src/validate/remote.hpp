// Remote files (docs/remote.md): validated from the bytes fetched by HTTP range requests, with
// what a stream's reading shares (validate/growing.hpp): the metadata and tensor infos kept in a
// buffer grown request by request (remote/growth.hpp says by how much), the rest never fetched
// but for the padding between tensors, or with the data check streamed through the scan.
#pragma once

#include <functional>
#include <string>

#include "ggufcheck/validate.hpp"
#include "validate/validate.hpp"

namespace ggufcheck::detail {

struct RemoteOutcome {
  enum class State : std::uint8_t { Read, Missing, Unreadable };
  State state = State::Unreadable;
  std::string why;  // Missing ("HTTP 404 Not Found") and Unreadable: the message
  std::string hint;
  bool interrupted = false;  // Ctrl-C (DataCheck::cancel)
  std::string status;        // Missing: the server's words ("HTTP 404 Not Found")
  bool deadline = false;     // Unreadable: RemoteOptions::deadline passed
};

// Validates the file at `url` (http://, https://, hf://) into `out`, and calls use() while its
// bytes are held (out.index reads them): a split set's first shard stays so while the others
// are read. shown: the name in the report. limits: a stream's (the metadata kept, in bytes:
// StreamLimits::metadata_limit; lowered only by tests).
RemoteOutcome visit_remote(const std::string& url, const Options& options, const std::string& shown,
                           Validated& out, const std::function<void()>& use,
                           const StreamLimits& limits = {});

// The GGUF0001 report of a URL that could not be read.
[[nodiscard]] Report remote_failure_report(const std::string& shown, const RemoteOutcome& outcome);

}  // namespace ggufcheck::detail
