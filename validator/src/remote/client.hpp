// One remote file read by HTTP range requests with libcurl: retries with backoff on transient
// failures, timeouts, redirects followed here (not by libcurl) so that the token and the scheme
// are decided at each hop, and every answer checked against what was asked.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ggufcheck/bytes.hpp"
#include "ggufcheck/validate.hpp"

namespace ggufcheck::detail {

struct CurlLibrary;

// Why a fetch failed: a message for GGUF0001 (and a hint), whether the server said the file is
// not there (404, 410: a missing shard of a set), and whether Ctrl-C stopped it.
struct FetchError {
  std::string message;
  std::string hint;
  bool missing = false;
  bool interrupted = false;
  std::string status;     // missing: the server's words ("HTTP 404 Not Found")
  bool deadline = false;  // RemoteOptions::deadline passed
};

using Clock = std::chrono::steady_clock;

// The time by which the reading of a remote input ends: RemoteOptions::deadline when set, else
// deadline_seconds from now.
[[nodiscard]] Clock::time_point remote_deadline(const RemoteOptions& options);

// The GGUF0001 message of an input the deadline stopped: `what` says where it was.
[[nodiscard]] FetchError deadline_error(const RemoteOptions& options, std::string_view what);

class HttpFile {
 public:
  struct Transfer;  // one request's state, shared with libcurl's callbacks

  // url: http:// or https:// (hf:// is mapped before). cancel: set to stop (Ctrl-C). Every
  // request ends by `deadline`, and none starts after it (FetchError::deadline).
  HttpFile(std::string url, const RemoteOptions& options, const std::atomic<bool>* cancel,
           Clock::time_point deadline);
  ~HttpFile();
  HttpFile(const HttpFile&) = delete;
  HttpFile& operator=(const HttpFile&) = delete;

  // The bytes [begin, end) (end clipped to the file's size once it is known), handed to `take`
  // in order as they arrive; take returns false to stop (a cancelled data scan). The first fetch
  // learns the size: it must begin at 0. A transfer cut short is resumed where it stopped, within
  // the retries.
  using Take = std::function<bool(std::uint64_t at, Bytes bytes)>;
  [[nodiscard]] std::optional<FetchError> fetch(std::uint64_t begin, std::uint64_t end,
                                                const Take& take);

  [[nodiscard]] std::uint64_t size() const { return size_; }
  [[nodiscard]] unsigned requests() const { return requests_; }

 private:
  // One request for [at, end): Done (at advanced to end), Stopped (take said so), Redirected
  // (url_ changed), Retry (a transient failure: at advanced past what arrived, wait_ms set), or
  // Failed (error set).
  enum class Step : std::uint8_t { Done, Stopped, Redirected, Retry, Failed };
  Step attempt(std::uint64_t& at, std::uint64_t end, const Take& take, std::uint64_t& wait_ms,
               unsigned tries, std::optional<FetchError>& error);

  std::string origin_url_;  // as given
  std::string url_;         // where the last redirect led (the next requests go there)
  const RemoteOptions& options_;
  const std::atomic<bool>* cancel_;
  Clock::time_point deadline_;
  std::string token_;
  std::string endpoint_;                   // where hf:// points (its origin may get the token)
  bool token_allowed_ = false;             // the origin is the Hub's (or the configured endpoint's)
  const CurlLibrary* curl_lib_ = nullptr;  // null when libcurl could not be loaded
  std::string curl_error_;                 // why it could not
  void* curl_ = nullptr;                   // CURL*
  bool size_known_ = false;
  std::uint64_t size_ = 0;
  std::optional<std::string> etag_;
  std::optional<std::string> last_modified_;
  unsigned requests_ = 0;
  std::string last_transient_;  // what the last transient failure was
};

// The endpoint hf:// maps to: RemoteOptions::hf_endpoint, GGUFCHECK_HF_ENDPOINT or the Hub.
[[nodiscard]] std::string hf_endpoint(const RemoteOptions& options);

}  // namespace ggufcheck::detail
