#include "remote/client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "remote/curl_library.hpp"
#include "remote/http.hpp"
#include "remote/url.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {
namespace {

constexpr std::uint64_t kMaxBackoffMs = 8000;
// A transfer slower than this for RemoteOptions::timeout_seconds is a stall.
constexpr long kLowSpeedBytesPerSecond = 1024;
constexpr std::size_t kShownUrl = 200;
constexpr auto kDeadlineSlack = std::chrono::milliseconds(250);

std::string shown_url(std::string_view url) {
  return escape(url, kShownUrl);
}

CURL* handle(void* curl) {
  return static_cast<CURL*>(curl);
}

bool is_redirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// A token goes into a header line: no byte that could end the line or the field.
bool printable_token(std::string_view token) {
  return std::all_of(token.begin(), token.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return b > 0x20 && b < 0x7F;
  });
}

// The milliseconds from now to `deadline`, at least 1 (libcurl takes 0 for no timeout), rounded up
// so that a timeout libcurl reports is at or past the deadline.
long ms_until(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<long>(std::clamp<decltype(left)>(left, 1, LONG_MAX));
}

}  // namespace

Clock::time_point remote_deadline(const RemoteOptions& options) {
  if (options.deadline) return *options.deadline;
  return Clock::now() + std::chrono::seconds(options.deadline_seconds);
}

FetchError deadline_error(const RemoteOptions& options, std::string_view what) {
  FetchError e;
  e.message =
      fmt::format("{}: the deadline of {} s (--deadline) passed", what, options.deadline_seconds);
  e.hint =
      "raise --deadline if the server is slow but sound (with --data, a large file needs its size "
      "over the transfer rate), or check the server";
  e.deadline = true;
  return e;
}

std::string hf_endpoint(const RemoteOptions& options) {
  if (options.hf_endpoint) return *options.hf_endpoint;
  if (const char* env = std::getenv("GGUFCHECK_HF_ENDPOINT"); env != nullptr && *env != '\0') {
    return env;
  }
  return std::string(kDefaultHfEndpoint);
}

// One request's state, shared with libcurl's callbacks.
struct HttpFile::Transfer {
  HttpFile* file = nullptr;
  const Take* take = nullptr;
  std::uint64_t first = 0;  // asked: [first, last]
  std::uint64_t last = 0;
  ResponseHeaders headers;
  bool checked = false;        // the headers were judged (at the first body byte, or after)
  bool accepted = false;       // a 206 or an acceptable 200: its body is the bytes asked
  std::uint64_t expected = 0;  // bytes its body must hold
  std::uint64_t received = 0;
  std::optional<FetchError> error;  // a check that failed: the transfer was stopped
  bool stopped = false;             // take() asked to stop
  bool discarded = false;           // a body not needed (an error page, a redirect's)

  // Whether the answer is the bytes asked for, as the server describes them.
  void judge() {
    checked = true;
    const int status = headers.status;
    if (status != 200 && status != 206) return;  // judged after the transfer
    const std::string asked = fmt::format("bytes {}-{}", first, last);
    const auto fail = [&](std::string message) {
      error = FetchError{std::move(message), "", false, false, {}};
    };
    if (headers.content_encoding && *headers.content_encoding != "identity") {
      return fail(
          fmt::format("the server encoded the bytes (Content-Encoding: {}), which were "
                      "asked for as they are",
                      shown_header(*headers.content_encoding)));
    }
    // A number and a flag, not an optional: g++ 12 at -O3 takes an optional's value for
    // uninitialised where it is formatted (-Wmaybe-uninitialized).
    std::uint64_t length = 0;
    bool has_length = false;
    if (headers.content_length) {
      const std::optional<std::uint64_t> parsed = parse_decimal(*headers.content_length);
      if (!parsed) {
        return fail(fmt::format("the server's Content-Length \"{}\" is not a number",
                                shown_header(*headers.content_length)));
      }
      length = *parsed;
      has_length = true;
    }
    std::uint64_t total = 0;
    std::uint64_t got_last = 0;
    if (status == 200) {
      // No range support. Harmless only when the whole file is no more than was asked for from
      // its start: otherwise the transfer stops here, before the body comes.
      if (first != 0 || !has_length || length > last + 1) {
        return fail(fmt::format(
            "the server does not support range requests: it answered {} with the whole file{} "
            "to a request for {}; the transfer was stopped",
            "200 OK", has_length ? fmt::format(" ({} bytes)", length) : std::string(), asked));
      }
      total = length;
      got_last = total == 0 ? 0 : total - 1;
      expected = total;
    } else {
      if (!headers.content_range) return fail("the server's 206 answer has no Content-Range");
      const auto range = parse_content_range(*headers.content_range);
      if (!range || !range->satisfied) {
        return fail(fmt::format("the server's Content-Range \"{}\" does not parse",
                                shown_header(*headers.content_range)));
      }
      if (!range->total) {
        return fail(fmt::format("the server's Content-Range \"{}\" does not give the file's size",
                                shown_header(*headers.content_range)));
      }
      total = *range->total;
      const std::uint64_t want_last = std::min(last, total - 1);  // total > last >= first: > 0
      if (range->first != first || range->last != want_last) {
        return fail(fmt::format(
            "the server answered bytes {}-{} of {} to a request for {}: not the bytes asked for",
            range->first, range->last, total, asked));
      }
      got_last = range->last;
      expected = range->last - range->first + 1;
      if (has_length && length != expected) {
        return fail(fmt::format("the server's Content-Length {} contradicts its Content-Range {}",
                                length, shown_header(*headers.content_range)));
      }
    }
    (void)got_last;
    if (file->size_known_ && total != file->size_) {
      return fail(
          fmt::format("the file changed while being read: it was {} bytes, the server "
                      "now says {}",
                      file->size_, total));
    }
    const auto same = [&](const std::optional<std::string>& before,
                          const std::optional<std::string>& now, const char* name) {
      if (before && now && *before != *now) {
        fail(fmt::format("the file changed while being read: its {} was {}, it is now {}", name,
                         shown_header(*before), shown_header(*now)));
        return false;
      }
      return true;
    };
    if (file->size_known_ &&
        (!same(file->etag_, headers.etag, "ETag") ||
         !same(file->last_modified_, headers.last_modified, "Last-Modified"))) {
      return;
    }
    if (!file->size_known_) {
      file->size_known_ = true;
      file->size_ = total;
      file->etag_ = headers.etag;
      file->last_modified_ = headers.last_modified;
    }
    accepted = true;
  }
};

namespace {

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<HttpFile::Transfer*>(user);
  const std::size_t n = size * count;
  t.headers.add_line(std::string_view(data, n));
  return t.headers.too_large ? 0 : n;  // a server cannot make the client keep more
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& t = *static_cast<HttpFile::Transfer*>(user);
  const std::size_t n = size * count;
  if (!t.checked) t.judge();
  if (t.error) return 0;
  if (!t.accepted) {  // an error page, a redirect's body: not needed
    t.discarded = true;
    return 0;
  }
  if (n > t.expected - t.received) {
    t.error = FetchError{fmt::format("the server sent more than the {} bytes it announced for "
                                     "bytes {}-{}; the transfer was stopped",
                                     t.expected, t.first, t.last),
                         "",
                         false,
                         false,
                         {}};
    return 0;
  }
  if (!(*t.take)(t.first + t.received, Bytes(reinterpret_cast<const std::uint8_t*>(data), n))) {
    t.stopped = true;
    return 0;
  }
  t.received += n;
  return n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancel = static_cast<const std::atomic<bool>*>(user);
  return cancel != nullptr && cancel->load(std::memory_order_relaxed) ? 1 : 0;
}

}  // namespace

HttpFile::HttpFile(std::string url, const RemoteOptions& options, const std::atomic<bool>* cancel,
                   Clock::time_point deadline)
    : origin_url_(std::move(url)),
      url_(origin_url_),
      options_(options),
      cancel_(cancel),
      deadline_(deadline) {
  curl_lib_ = curl_library(curl_error_);
  if (curl_lib_ != nullptr) curl_ = curl_lib_->easy_init();
  const char* env = std::getenv("HF_TOKEN");
  token_ = options.hf_token ? *options.hf_token : env != nullptr ? env : "";
  // The token is the Hub's: it goes to the Hub's hosts, or to the endpoint hf:// was pointed at,
  // and only on requests to the origin the file was named by (never after a redirect elsewhere).
  endpoint_ = hf_endpoint(options);
  token_allowed_ = sends_token(origin_url_, origin_url_, endpoint_);
}

HttpFile::~HttpFile() {
  if (curl_ != nullptr) curl_lib_->easy_cleanup(handle(curl_));
}

std::optional<FetchError> HttpFile::fetch(std::uint64_t begin, std::uint64_t end,
                                          const Take& take) {
  if (curl_lib_ == nullptr) return FetchError{curl_error_, "", false, false, {}};
  if (curl_ == nullptr) return FetchError{"cannot start libcurl", "", false, false, {}};
  if (!token_.empty() && !printable_token(token_)) {
    return FetchError{
        "HF_TOKEN holds spaces or control characters: it was not sent", "", false, false, {}};
  }
  unsigned tries = 0;
  unsigned redirects = 0;
  std::uint64_t at = begin;
  for (;;) {
    if (size_known_) end = std::min(end, size_);
    if (at >= end && size_known_) return std::nullopt;
    if (Clock::now() >= deadline_) {
      return deadline_error(options_, fmt::format("cannot read {}", shown_url(url_)));
    }
    std::uint64_t wait_ms = 0;
    std::optional<FetchError> error;
    switch (attempt(at, end, take, wait_ms, tries, error)) {
      case Step::Done:
      case Step::Stopped: return std::nullopt;
      case Step::Failed: return error;
      case Step::Redirected:
        if (++redirects > options_.max_redirects) {
          return FetchError{fmt::format("more than {} redirects from {}", options_.max_redirects,
                                        shown_url(origin_url_)),
                            "",
                            false,
                            false,
                            {}};
        }
        continue;  // no try spent
      case Step::Retry: break;
    }
    if (tries++ >= options_.retries) {
      return FetchError{fmt::format("{} (gave up after {} {})", last_transient_, tries,
                                    tries == 1 ? "try" : "tries"),
                        "",
                        false,
                        false,
                        {}};
    }
    // The wait, in slices so that Ctrl-C is not kept waiting; none that ends past the deadline.
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
    if (until >= deadline_) {
      FetchError e = deadline_error(options_, last_transient_);
      e.message = fmt::format("{}: the next try would come after the deadline of {} s (--deadline)",
                              last_transient_, options_.deadline_seconds);
      return e;
    }
    for (auto now = std::chrono::steady_clock::now(); now < until;
         now = std::chrono::steady_clock::now()) {
      if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed)) {
        return FetchError{"interrupted", "", false, true, {}};
      }
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(50), until - now));
    }
  }
}

HttpFile::Step HttpFile::attempt(std::uint64_t& at, std::uint64_t end, const Take& take,
                                 std::uint64_t& wait_ms, unsigned tries,
                                 std::optional<FetchError>& error) {
  CURL* curl = handle(curl_);
  Transfer t;
  t.file = this;
  t.take = &take;
  t.first = at;
  t.last = end - 1;  // end > at
  const std::string range = fmt::format("{}-{}", t.first, t.last);
  curl_slist* headers = nullptr;
  headers = curl_lib_->slist_append(headers, "User-Agent: ggufcheck/" GGUFCHECK_VERSION);
  // The token only to the origin the file was named by, and only if that is the Hub's.
  const bool send_token = !token_.empty() && sends_token(origin_url_, url_, endpoint_);
  std::string authorization;
  if (send_token) {
    authorization = "Authorization: Bearer " + token_;
    headers = curl_lib_->slist_append(headers, authorization.c_str());
  }
  char message[CURL_ERROR_SIZE] = {};
  curl_lib_->easy_setopt(curl, CURLOPT_URL, url_.c_str());
  curl_lib_->easy_setopt(curl, CURLOPT_RANGE, range.c_str());
  curl_lib_->easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_lib_->easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);  // followed here, hop by hop
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_lib_->easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_lib_->easy_setopt(curl, CURLOPT_PROTOCOLS,
                         static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_lib_->easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_lib_->easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options_.timeout_seconds));
  // The whole request, a trickle included, ends by the deadline.
  curl_lib_->easy_setopt(curl, CURLOPT_TIMEOUT_MS, ms_until(deadline_));
  curl_lib_->easy_setopt(curl, CURLOPT_LOW_SPEED_LIMIT, kLowSpeedBytesPerSecond);
  curl_lib_->easy_setopt(curl, CURLOPT_LOW_SPEED_TIME,
                         static_cast<long>(std::max<std::uint32_t>(1, options_.timeout_seconds)));
  curl_lib_->easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_lib_->easy_setopt(curl, CURLOPT_HEADERDATA, &t);
  curl_lib_->easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_lib_->easy_setopt(curl, CURLOPT_WRITEDATA, &t);
  curl_lib_->easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
  curl_lib_->easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_lib_->easy_setopt(curl, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(cancel_));
  curl_lib_->easy_setopt(curl, CURLOPT_ERRORBUFFER, message);
  const CURLcode rc = curl_lib_->easy_perform(curl);
  curl_lib_->easy_setopt(curl, CURLOPT_HTTPHEADER, nullptr);
  curl_lib_->easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  curl_lib_->slist_free_all(headers);
  ++requests_;
  at += t.received;
  const std::string where = shown_url(url_);
  const auto fail = [&](std::string text, std::string hint = {}, bool missing = false) {
    error = FetchError{std::move(text), std::move(hint), missing, false, {}};
    return Step::Failed;
  };
  const auto transient = [&](std::string text, std::uint64_t wait) {
    last_transient_ = std::move(text);
    wait_ms = wait;
    return Step::Retry;
  };
  const std::uint64_t backoff = std::min<std::uint64_t>(
      std::uint64_t{options_.backoff_ms} << std::min(tries, 16u), kMaxBackoffMs);
  if (rc == CURLE_ABORTED_BY_CALLBACK) {
    error = FetchError{"interrupted", "", false, true, {}};
    return Step::Failed;
  }
  if (t.error) {
    error = std::move(t.error);
    return Step::Failed;
  }
  if (t.stopped) return Step::Stopped;
  // libcurl's clock (CLOCK_MONOTONIC_RAW where there is one) and its checks in whole
  // milliseconds may end a request a moment before the deadline by this one's: a timeout that
  // close to it is the deadline's.
  if (rc == CURLE_OPERATION_TIMEDOUT && Clock::now() + kDeadlineSlack >= deadline_) {
    error = deadline_error(
        options_, t.received > 0
                      ? fmt::format("cannot read {}: {} of the {} bytes asked for had arrived",
                                    shown_url(url_), t.received, t.expected)
                      : fmt::format("cannot read {}: {} for bytes {}", shown_url(url_),
                                    t.headers.status == 0 ? "no answer" : "no bytes", range));
    return Step::Failed;
  }
  if (t.headers.malformed)
    return fail(fmt::format("{} answered with a malformed status line", where));
  if (t.headers.too_large) {
    return fail(fmt::format("{} sent more than {} bytes of headers", where,
                            ResponseHeaders::kMaxHeaderBytes));
  }
  const std::string curl_text =
      message[0] != '\0' ? std::string(message) : curl_lib_->easy_strerror(rc);
  const int status = t.headers.status;
  if (status == 0) {
    // No answer at all.
    curl_off_t connected = 0;
    (void)curl_lib_->easy_getinfo(curl, CURLINFO_CONNECT_TIME_T, &connected);
    if (rc == CURLE_COULDNT_CONNECT || (rc == CURLE_OPERATION_TIMEDOUT && connected == 0)) {
      return transient(fmt::format("cannot connect to {}: {}", where, curl_text), backoff);
    }
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return fail(fmt::format("{} stalled: no answer within {} s (--timeout)", where,
                              options_.timeout_seconds));
    }
    if (rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING) {
      return transient(fmt::format("{} closed the connection: {}", where, curl_text), backoff);
    }
    return fail(fmt::format("cannot read {}: {}", where, rc == CURLE_OK ? "no answer" : curl_text));
  }
  if (!t.checked) t.judge();  // an answer without a body
  if (t.error) {
    error = std::move(t.error);
    return Step::Failed;
  }
  if (t.accepted) {
    if (t.received == t.expected) return Step::Done;  // [at, end) clipped to the file
    if (rc == CURLE_OPERATION_TIMEDOUT) {
      return fail(fmt::format(
          "{} stalled after {} of {} bytes: less than {} bytes a second for "
          "{} s (--timeout)",
          where, t.received, t.expected, kLowSpeedBytesPerSecond, options_.timeout_seconds));
    }
    if (rc == CURLE_OK) {
      return fail(fmt::format("{} sent {} of the {} bytes it announced for bytes {}", where,
                              t.received, t.expected, range));
    }
    // A connection cut short: the next try asks for the rest.
    return transient(fmt::format("{} broke off after {} of {} bytes: {}", where, t.received,
                                 t.expected, curl_text),
                     backoff);
  }
  const std::string status_text =
      t.headers.reason.empty() ? fmt::format("HTTP {}", status)
                               : fmt::format("HTTP {} {}", status, shown_header(t.headers.reason));
  if (is_redirect(status)) {
    char* location = nullptr;
    (void)curl_lib_->easy_getinfo(curl, CURLINFO_REDIRECT_URL, &location);
    if (location == nullptr)
      return fail(fmt::format("{}: {} without a Location", where, status_text));
    const std::string next = location;
    if (const std::string why = refused_redirect(url_, next); !why.empty()) {
      return fail(fmt::format("{} redirects to {}: {}", where, shown_url(next), why));
    }
    url_ = next;
    return Step::Redirected;
  }
  if (status == 416 && !size_known_ && t.first == 0 && t.headers.content_range) {
    // "bytes */0": an empty file, which has no byte to ask for.
    if (const auto r = parse_content_range(*t.headers.content_range);
        r && !r->satisfied && r->total == 0) {
      size_known_ = true;
      size_ = 0;
      etag_ = t.headers.etag;
      last_modified_ = t.headers.last_modified;
      return Step::Done;
    }
  }
  if (status == 401 || status == 403) {
    std::string hint;
    if (!token_allowed_) {
      hint = "HF_TOKEN is sent to huggingface.co only; this server wants other credentials";
    } else if (token_.empty()) {
      hint = "a gated or private repository: set HF_TOKEN to a token that can read it";
    } else {
      hint =
          "the token in HF_TOKEN was sent and refused: check that it can read the repository "
          "(and that its gate was accepted)";
    }
    return fail(fmt::format("cannot read {}: {}", where, status_text), hint);
  }
  if (status == 404 || status == 410) {
    (void)fail(fmt::format("cannot read {}: {}", where, status_text),
               "check the URL (for hf://, the owner, the repository, the revision and the file's "
               "path)",
               true);
    error->status = status_text;
    return Step::Failed;
  }
  if (status == 429 || (status >= 500 && status <= 599)) {
    std::uint64_t wait = backoff;
    if (t.headers.retry_after && (status == 429 || status == 503)) {
      const auto seconds = parse_retry_after(*t.headers.retry_after, std::time(nullptr));
      if (seconds) {
        if (*seconds > options_.retry_after_cap_seconds) {
          return fail(
              fmt::format("cannot read {}: {}, and the server asks to retry after {} s, "
                          "more than the {} s ggufcheck waits",
                          where, status_text, *seconds, options_.retry_after_cap_seconds));
        }
        wait = *seconds * 1000;
      }
    }
    return transient(fmt::format("cannot read {}: {}", where, status_text), wait);
  }
  if (status == 416) {
    return fail(fmt::format("cannot read {}: {} for bytes {}{}", where, status_text, range,
                            size_known_ ? ": the file changed while being read" : ""));
  }
  return fail(fmt::format("cannot read {}: {}", where, status_text));
}

}  // namespace ggufcheck::detail
