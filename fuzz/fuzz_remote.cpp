// Remote files (validate_url, hf://, docs/remote.md) against a server in this process whose
// every answer the input scripts. The server listens on two ports of 127.0.0.1 (two origins: a
// redirect to the other port is a redirect to another host), serves the file the input chose (a
// test-kit document, two files of more than the first request's MiB that make the client grow
// its reading and fetch padding or stream the data, or the input's own bytes), and answers each
// request as the script says: faithfully (206 and the bytes asked), or with another status
// (3xx with a Location here, on the other port or elsewhere; 401, 404, 416, 429 and 503 with a
// Retry-After, 5xx), the whole file as a 200, a Content-Range or Content-Length that is off, not
// there or not a number, a body cut short or longer than announced, another ETag, an encoding,
// a huge header, a 1xx first, the input's bytes as the whole answer, or nothing (the connection
// closed). Nothing waits on a clock: the retries' backoff is 0, Retry-After is capped at 0 s, the
// server never leaves the client waiting (a body shorter than its Content-Length is followed by
// the connection's close), and the deadline, a cancel and a bad token are set, when chosen, so
// that they end the reading at once. Then:
// - every report is well-formed: one GGUF0001 finding (exit 2, or 130 when cancelled), or the
//   invariants of every report (fuzz::check_report) for the file's size;
// - a report that is not GGUF0001 equals validate() of the same bytes in memory, finding for
//   finding, fact for fact (but for the findings that say what a remote reading left unread):
//   never a pass, nor any verdict, of bytes not read;
// - when every answer was faithful (and nothing was set to stop the reading), the file is read;
//   an unreadable file had at least one answer that was not;
// - the token goes to the origin the file was named by, when that is the endpoint's, and never
//   elsewhere.
// A build without libcurl (GGUFCHECK_REMOTE=OFF) runs nothing here.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "pipeline.hpp"
#include "validate/remote.hpp"

namespace {

using namespace ggufcheck;
using fuzz::Choices;

constexpr std::size_t kMaxAnswers = 12;  // scripted answers; later ones are faithful
constexpr std::string_view kToken = "fuzz-token";
// The choices of a faithful reading of a URL on the endpoint's port (run's `how`), of the
// input's bytes (Source::Input).
constexpr std::uint8_t kPlainUrl = 0x84;
constexpr std::uint8_t kInputSource = 2;

// --- what the server says -----------------------------------------------------------------------

enum class Answer : std::uint8_t {
  Faithful,
  Status,         // a status without the file: 401, 403, 404, 410, 416, 429, 500, 503, ...
  Redirect,       // 301, 302, 303, 307, 308 with a Location
  Whole,          // 200 with the whole file, whatever was asked
  RangeOff,       // Content-Range's first or last off by the parameter
  TotalOff,       // Content-Range's total off by the parameter
  TotalUnknown,   // "bytes A-B/*"
  NoRange,        // a 206 without Content-Range
  RangeText,      // Content-Range: the input's text
  LengthOff,      // Content-Length off by the parameter
  LengthText,     // Content-Length: the input's text
  Cut,            // part of the body, then the connection closed
  Longer,         // no Content-Length, the body and more, then the connection closed
  NewEtag,        // another ETag (or Last-Modified) than the first answer's
  Encoded,        // Content-Encoding
  Unsatisfiable,  // 416 with "bytes */N"
  Raw,            // the input's bytes as the whole answer
  Nothing,        // the connection closed without an answer
  Interim,        // a 1xx first, then the answer
  HugeHeaders,    // more header bytes than the client keeps
  ExtraLines,     // the input's text as more header lines of a faithful answer
  kCount
};

struct Script {
  Answer answer = Answer::Faithful;
  std::uint8_t parameter = 0;
  std::string text;  // the input's bytes, for the answers that use them
};

// What the server saw of one request.
struct Served {
  int port_index = 0;  // 0: the endpoint's port, 1: the other origin
  bool authorized = false;
  bool token_right = true;  // the Authorization header, when there, was the token's
  bool faithful = true;
  // The answer may describe another file than the one served (a total, a range or a whole
  // answer of the input's): the client cannot tell, and reads that file.
  bool lie = false;
};

// One execution's file and script, and what the server did with them.
struct Exchange {
  std::shared_ptr<const std::vector<std::uint8_t>> file;
  std::vector<Script> scripts;
  std::size_t next = 0;
  std::vector<Served> served;
  std::string etag = "\"e1\"";
};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// "bytes=A-B" or "bytes=A-": A and B (B absent: the end).
bool parse_range(std::string_view value, std::uint64_t& first, std::optional<std::uint64_t>& last) {
  if (value.substr(0, 6) != "bytes=") return false;
  value.remove_prefix(6);
  const std::size_t dash = value.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash > 19 || value.size() - dash > 20)
    return false;
  first = 0;
  for (const char c : value.substr(0, dash)) {
    if (c < '0' || c > '9') return false;
    first = first * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (dash + 1 == value.size()) {
    last.reset();
    return true;
  }
  std::uint64_t n = 0;
  for (const char c : value.substr(dash + 1)) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<std::uint64_t>(c - '0');
  }
  last = n;
  return true;
}

// An in-process HTTP/1.1 server on two ephemeral ports of 127.0.0.1: one thread that polls the
// listeners and the connections, reads each request's head and writes its whole answer (a
// send that is not taken within 2 s ends the connection). It is made once, never destroyed, and
// its thread is detached: the process exits whatever it is doing.
class Server {
 public:
  static Server* get() {
    static Server* server = [] {
      auto* made = new Server();
      if (!made->start()) {
        std::fprintf(stderr, "fuzz_remote: cannot listen on 127.0.0.1\n");
        std::abort();
      }
      return made;
    }();
    return server;
  }

  [[nodiscard]] std::uint16_t port(int index) const { return ports_[index]; }
  [[nodiscard]] std::string origin(int index) const {
    return fmt::format("http://127.0.0.1:{}", ports_[index]);
  }

  void begin(Exchange exchange) {
    const std::lock_guard<std::mutex> lock(mutex_);
    exchange_ = std::move(exchange);
  }
  Exchange end() {
    const std::lock_guard<std::mutex> lock(mutex_);
    Exchange done = std::move(exchange_);
    exchange_ = {};
    return done;
  }

 private:
  struct Connection {
    int fd = -1;
    int port_index = 0;
    std::string in;
  };

  bool start() {
    for (int k = 0; k < 2; ++k) {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
      if (fd < 0) return false;
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address.sin_port = 0;
      socklen_t length = sizeof address;
      if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
          ::listen(fd, 64) != 0 ||
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
        return false;
      }
      listeners_[k] = fd;
      ports_[k] = ntohs(address.sin_port);
    }
    std::thread([this] { loop(); }).detach();
    return true;
  }

  void loop() {
    for (;;) {
      std::vector<pollfd> polled;
      for (const int fd : listeners_) polled.push_back({fd, POLLIN, 0});
      for (const Connection& c : connections_) polled.push_back({c.fd, POLLIN, 0});
      if (::poll(polled.data(), polled.size(), 100) <= 0) continue;
      for (int k = 0; k < 2; ++k) {
        if ((polled[static_cast<std::size_t>(k)].revents & POLLIN) == 0) continue;
        const int fd = ::accept4(listeners_[k], nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        const timeval bound{2, 0};
        (void)::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &bound, sizeof bound);
        // A head and its body are two sends: without this, Nagle's algorithm holds the body
        // for the client's delayed ACK (40 ms an answer).
        const int on = 1;
        (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        connections_.push_back({fd, k, {}});
      }
      std::vector<Connection> kept;
      for (std::size_t i = 0; i < connections_.size(); ++i) {
        Connection& c = connections_[i];
        const std::size_t slot = 2 + i;
        bool open = true;
        if (slot < polled.size() && polled[slot].revents != 0) open = serve(c);
        if (open) {
          kept.push_back(std::move(c));
        } else {
          ::close(c.fd);
        }
      }
      connections_ = std::move(kept);
    }
  }

  // Reads what arrived; answers each whole request head. False: the connection is done.
  bool serve(Connection& c) {
    char buffer[16384];
    const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n <= 0) return false;
    c.in.append(buffer, static_cast<std::size_t>(n));
    for (;;) {
      const std::size_t end = c.in.find("\r\n\r\n");
      if (end == std::string::npos) return c.in.size() < 65536;
      const std::string head = c.in.substr(0, end + 2);
      c.in.erase(0, end + 4);
      if (!answer(c, head)) return false;
    }
  }

  bool send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // One request: the script's next answer. False: the connection is closed after it.
  bool answer(Connection& c, const std::string& head) {
    std::string range_header;
    std::string authorization;
    std::size_t at = head.find("\r\n");
    while (at != std::string::npos && at + 2 < head.size()) {
      const std::size_t next = head.find("\r\n", at + 2);
      const std::string_view line(head.data() + at + 2,
                                  (next == std::string::npos ? head.size() : next) - at - 2);
      const std::size_t colon = line.find(':');
      if (colon != std::string_view::npos) {
        const std::string name = lower(line.substr(0, colon));
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
        if (name == "range") range_header = value;
        if (name == "authorization") authorization = value;
      }
      at = next;
    }
    Script script;
    std::shared_ptr<const std::vector<std::uint8_t>> file;
    std::string etag;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (exchange_.next < exchange_.scripts.size()) script = exchange_.scripts[exchange_.next];
      ++exchange_.next;
      file = exchange_.file;
      Served served;
      served.port_index = c.port_index;
      served.authorized = !authorization.empty();
      served.token_right =
          authorization.empty() || authorization == fmt::format("Bearer {}", kToken);
      served.faithful = script.answer == Answer::Faithful;
      served.lie = script.answer == Answer::TotalOff || script.answer == Answer::Raw ||
                   script.answer == Answer::ExtraLines || script.answer == Answer::RangeText ||
                   (script.answer == Answer::Unsatisfiable && script.parameter % 2 == 1 && file &&
                    !file->empty());
      exchange_.served.push_back(served);
      if (script.answer == Answer::NewEtag) exchange_.etag = fmt::format("\"e{}\"", exchange_.next);
      etag = exchange_.etag;
    }
    if (!file) file = std::make_shared<const std::vector<std::uint8_t>>();
    return respond(c, script, *file, range_header, etag);
  }

  bool respond(Connection& c, const Script& script, const std::vector<std::uint8_t>& file,
               const std::string& range_header, const std::string& etag) {
    const std::uint64_t size = file.size();
    const std::uint8_t p = script.parameter;
    std::string out;
    switch (script.answer) {
      case Answer::Raw: (void)send_all(c.fd, script.text); return false;
      case Answer::Nothing: return false;
      case Answer::Status: {
        static constexpr int kCodes[] = {401, 403, 404, 410, 416, 429,
                                         500, 502, 503, 418, 204, 300};
        const int code = kCodes[p % std::size(kCodes)];
        out = fmt::format("HTTP/1.1 {} Scripted\r\n", code);
        static constexpr const char* kRetryAfter[] = {
            nullptr, "0", "1", "Thu, 01 Jan 1970 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT",
            "soon"};
        if (const char* retry = kRetryAfter[(p / 16) % std::size(kRetryAfter)]) {
          out += fmt::format("Retry-After: {}\r\n", retry);
        }
        if (code == 416) out += fmt::format("Content-Range: bytes */{}\r\n", size);
        out += code == 204 ? "\r\n" : "Content-Length: 6\r\n\r\nerror\n";
        return send_all(c.fd, out);
      }
      case Answer::Redirect: {
        static constexpr int kCodes[] = {301, 302, 303, 307, 308};
        const int code = kCodes[p % std::size(kCodes)];
        out = fmt::format("HTTP/1.1 {} Moved\r\n", code);
        switch ((p / 8) % 7) {
          case 0: out += "Location: /moved/file.gguf\r\n"; break;
          case 1: out += fmt::format("Location: {}/again.gguf\r\n", origin(0)); break;
          case 2: out += fmt::format("Location: {}/elsewhere.gguf\r\n", origin(1)); break;
          case 3: out += "Location: ftp://127.0.0.1/file.gguf\r\n"; break;
          case 4: out += fmt::format("Location: /{}\r\n", path_of(script.text)); break;
          case 5: break;  // no Location
          default:
            out += fmt::format("Location: {}/r.gguf?n={}\r\n", origin(c.port_index), p);
            break;
        }
        out += "Content-Length: 0\r\n\r\n";
        return send_all(c.fd, out);
      }
      default: break;
    }
    // An answer with (some of) the file.
    std::uint64_t first = 0;
    std::optional<std::uint64_t> asked_last;
    const bool ranged = parse_range(range_header, first, asked_last);
    if (script.answer == Answer::Unsatisfiable || (ranged && first >= size)) {
      out = fmt::format(
          "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{}\r\n"
          "Content-Length: 0\r\n\r\n",
          script.answer == Answer::Unsatisfiable && p % 2 == 1 ? 0 : size);
      return send_all(c.fd, out);
    }
    const bool whole = !ranged || script.answer == Answer::Whole;
    if (whole) first = 0;
    const std::uint64_t last = whole ? size - 1 : std::min(asked_last.value_or(size - 1), size - 1);
    const std::uint64_t length = size == 0 ? 0 : last - first + 1;
    std::uint64_t shown_first = first;
    std::uint64_t shown_last = last;
    std::string total = std::to_string(size);
    std::string length_field = std::to_string(length);
    std::uint64_t body = length;
    bool close = false;
    std::string extra;
    const std::uint64_t delta = 1 + p % 4;
    switch (script.answer) {
      case Answer::RangeOff:
        if (p % 2 == 0) {
          shown_first += delta;
        } else {
          shown_last = p % 4 == 1 ? shown_last + delta : shown_last - std::min(shown_last, delta);
        }
        break;
      case Answer::TotalOff:
        total = std::to_string(p % 2 == 0 ? size + delta : size - std::min(size, delta));
        break;
      case Answer::TotalUnknown: total = "*"; break;
      case Answer::LengthOff:
        length_field =
            std::to_string(p % 2 == 0 ? length + delta : length - std::min(length, delta));
        close = true;
        break;
      case Answer::LengthText:
        length_field = clean(script.text);
        close = true;
        break;
      case Answer::Cut:
        body = length == 0 ? 0 : static_cast<std::uint64_t>(length * p / 256);
        close = true;
        break;
      case Answer::Longer:
        length_field.clear();
        extra.assign(1 + p * 16U, '\xff');
        close = true;
        break;
      default: break;
    }
    if (script.answer == Answer::Interim) out += "HTTP/1.1 100 Continue\r\n\r\n";
    out += whole ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.1 206 Partial Content\r\n";
    if (!whole && script.answer != Answer::NoRange) {
      out += script.answer == Answer::RangeText
                 ? fmt::format("Content-Range: {}\r\n", clean(script.text))
                 : fmt::format("Content-Range: bytes {}-{}/{}\r\n", shown_first, shown_last, total);
    }
    if (!length_field.empty()) out += fmt::format("Content-Length: {}\r\n", length_field);
    if (script.answer == Answer::NewEtag && p % 2 == 1) {
      out += fmt::format("Last-Modified: Mon, 0{} Jan 2024 00:00:00 GMT\r\n", 1 + p % 8);
    } else {
      out += "Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT\r\n";
    }
    out += fmt::format("ETag: {}\r\nAccept-Ranges: bytes\r\n", etag);
    if (script.answer == Answer::Encoded) {
      out += p % 2 == 0 ? "Content-Encoding: gzip\r\n" : "Content-Encoding: identity\r\n";
    }
    if (script.answer == Answer::HugeHeaders) {
      const std::string line = "X-Padding: " + std::string(1000, 'x') + "\r\n";
      for (int k = 0; k < 70; ++k) out += line;
    }
    if (script.answer == Answer::ExtraLines) out += clean(script.text) + "\r\n";
    if (close || length_field.empty()) out += "Connection: close\r\n";
    out += "\r\n";
    if (!send_all(c.fd, out)) return false;
    if (body > 0 &&
        !send_all(c.fd, std::string_view(reinterpret_cast<const char*>(file.data() + first),
                                         static_cast<std::size_t>(body)))) {
      return false;
    }
    if (!extra.empty() && !send_all(c.fd, extra)) return false;
    return !close && !length_field.empty();
  }

  // The input's text as a path here: a Location that names no other host (no DNS, no network).
  static std::string path_of(std::string_view text) {
    std::string out;
    for (const char ch : text) {
      const bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                         (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
      out += plain ? std::string(1, ch) : fmt::format("%{:02X}", static_cast<unsigned char>(ch));
    }
    return out;
  }

  // The input's text in a header line: no line breaks.
  static std::string clean(std::string_view text) {
    std::string out;
    for (const char ch : text) {
      if (ch != '\r' && ch != '\n') out.push_back(ch);
    }
    return out;
  }

  int listeners_[2] = {-1, -1};
  std::uint16_t ports_[2] = {0, 0};
  std::vector<Connection> connections_;  // the server thread's
  std::mutex mutex_;
  Exchange exchange_;
};

// --- the files ----------------------------------------------------------------------------------

enum class Source : std::uint8_t {
  Minimal,
  Model,
  Input,    // the input's remaining bytes
  Patched,  // the model with some of its bytes replaced by the input's
  Growing,  // metadata past the first request: a string array cut at 1 MiB
  Infos,    // tensor infos past the first request
  Spread,   // tensor data past the first request, padding between tensors 64 KiB apart
  Empty,
  kCount
};

std::vector<std::uint8_t> make_file(Source source) {
  using testing::pair;
  using testing::tensor;
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  switch (source) {
    case Source::Minimal: return write_bytes(testing::minimal_document());
    case Source::Model:
    case Source::Patched: return write_bytes(testing::model_document());
    case Source::Growing: {
      std::vector<Value> parts;
      for (int k = 0; k < 4; ++k) parts.push_back(Value::string(std::string(96 * 1024, 'p')));
      return write_bytes(
          testing::document({pair("fuzz.blob", Value::string(std::string(kMiB - 160 * 1024, 'b'))),
                             pair("fuzz.parts", Value::array(ValueType::String, std::move(parts)))},
                            {tensor("t", {8})}));
    }
    case Source::Infos: {
      std::vector<Tensor> tensors;
      for (int k = 0; k < 400; ++k) tensors.push_back(tensor(fmt::format("tensor.{}", k), {8}));
      return write_bytes(
          testing::document({pair("fuzz.blob", Value::string(std::string(kMiB - 8 * 1024, 'b')))},
                            std::move(tensors)));
    }
    case Source::Spread: {
      // A tensor of the first request's MiB, then 18 of 65,540 bytes: each padding range past
      // the kept bytes is more than kPaddingGap from the next, so they are more than the 16
      // ranges a reading without --data fetches.
      std::vector<Tensor> tensors = {tensor("w.big", {kMiB / 4})};
      for (int k = 0; k < 18; ++k) tensors.push_back(tensor(fmt::format("w.{}", k), {16385}));
      WriteOptions written;
      written.padding_byte = 0;
      return write_bytes(testing::document({}, std::move(tensors)), written);
    }
    case Source::Empty:
    case Source::Input:
    case Source::kCount: break;
  }
  return {};
}

const std::shared_ptr<const std::vector<std::uint8_t>>& kit_file(Source source) {
  static std::map<Source, std::shared_ptr<const std::vector<std::uint8_t>>> files;
  auto& file = files[source];
  if (!file) file = std::make_shared<const std::vector<std::uint8_t>>(make_file(source));
  return file;
}

// --- the checks ---------------------------------------------------------------------------------

// What a remote reading says it left unread (GGUF0002 with its words), which a local file has not.
bool remote_only(const Finding& f) {
  return f.code == Code::LimitExceeded &&
         (f.message.find("were not read") != std::string::npos ||
          f.message.find("the most ggufcheck keeps of a remote file") != std::string::npos);
}

std::string compare(const Report& remote, const Report& local) {
  std::vector<const Finding*> kept;
  for (const Finding& f : remote.findings) {
    if (!remote_only(f)) kept.push_back(&f);
  }
  const std::size_t extra = remote.findings.size() - kept.size();
  // At the findings limit each GGUF0002 kept takes the place of the last finding kept: the
  // remote findings are then the first ones of the file's in memory.
  if (kept.size() > local.findings.size() || local.findings.size() - kept.size() > extra) {
    return fmt::format("{} findings remote, {} in memory", kept.size(), local.findings.size());
  }
  const std::size_t displaced = local.findings.size() - kept.size();
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const Finding& a = *kept[i];
    const Finding& b = local.findings[i];
    if (a.code != b.code || a.severity != b.severity || a.offset != b.offset ||
        a.length != b.length || a.path != b.path || a.message != b.message) {
      return fmt::format("finding {}: {} at {} \"{}\" remote, {} at {} \"{}\" in memory", i,
                         code_string(a.code), a.offset, a.message, code_string(b.code), b.offset,
                         b.message);
    }
  }
  const Facts& x = remote.facts;
  const Facts& y = local.facts;
  if (x.file_size != y.file_size || x.version != y.version || x.tensor_count != y.tensor_count ||
      x.kv_count != y.kv_count || x.kv_read != y.kv_read || x.tensors_read != y.tensors_read ||
      x.alignment != y.alignment || x.data_start != y.data_start ||
      x.tensor_data_size != y.tensor_data_size || x.data_checked != y.data_checked) {
    return "the facts differ from the file's in memory";
  }
  // The remote errors (GGUF0002, at most two) are kept, or counted as dropped at the limit, as
  // are the findings they displaced.
  if (remote.errors < local.errors + extra || remote.errors > local.errors + 2 ||
      remote.warnings != local.warnings || remote.notes != local.notes) {
    return "the counts differ from the file's in memory";
  }
  if (remote.findings_dropped !=
      local.findings_dropped + displaced + (remote.errors - local.errors - extra)) {
    return "dropped findings differ";
  }
  if (remote.errors == local.errors && remote.exit_status() != local.exit_status())
    return "the exit status differs";
  return {};
}

std::string check_unreadable(const Report& report) {
  if (report.findings.size() != 1) return "an unreadable report with more than one finding";
  const Finding& f = report.findings.front();
  if (f.code != Code::UnreadableFile || f.severity != Severity::Error) return "not GGUF0001";
  if (f.message.empty()) return "GGUF0001 without a message";
  if (report.errors != 1 || report.passed()) return "an unreadable report's counts";
  if (report.exit_status() != (report.interrupted ? 130 : 2)) return "an unreadable exit status";
  return {};
}

// --- one execution ------------------------------------------------------------------------------

Options choose_options(Choices& in) {
  Options options;
  const std::uint8_t bits = in.byte();
  static constexpr Profile kProfiles[] = {Profile::Strict, Profile::Spec, Profile::LlamaCpp};
  options.profile = kProfiles[bits % 3];
  options.werror = (bits & 4U) != 0;
  options.model_checks = (bits & 8U) != 0;
  options.data.enabled = (bits & 16U) != 0;
  options.data.threads = 1;
  options.helper_thread = false;
  if ((bits & 32U) != 0) options.limits.max_findings = 1 + in.below(3);
  options.remote.retries = static_cast<unsigned>(in.below(3));
  options.remote.backoff_ms = 0;
  options.remote.retry_after_cap_seconds = 0;
  options.remote.timeout_seconds = 1;
  options.remote.max_redirects = static_cast<std::uint32_t>(in.below(3));
  options.remote.deadline_seconds = 4;  // below libFuzzer's timeout of 5 s; never reached
  return options;
}

std::string run(Choices& in) {
  Server* server = Server::get();
  Options options = choose_options(in);

  // Where the file is named, and what stops the reading on purpose.
  const std::uint8_t how = in.byte();
  bool may_fail = false;  // something set here may end the reading without a bad answer
  static std::atomic<bool> cancelled{true};
  switch (how % 16) {
    case 0:  // cancelled: no transfer gets past its first progress call
      options.data.cancel = &cancelled;
      may_fail = true;
      break;
    case 1:  // the deadline passed before the reading began
      options.remote.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
      may_fail = true;
      break;
    case 2:  // the first retry would wait past the deadline
      options.remote.backoff_ms = 60000;
      options.remote.retries = 1;
      break;
    case 3:  // a token that is never sent
      options.remote.hf_token = "a token";
      may_fail = true;
      break;
    default: break;
  }
  // The endpoint and the token from the options, or from the environment (set at start).
  if ((how & 16U) == 0) {
    options.remote.hf_endpoint = server->origin(0);
    if (!options.remote.hf_token) options.remote.hf_token = std::string(kToken);
  }
  const int named_port = (how & 32U) != 0 ? 1 : 0;
  std::string url;
  switch ((how >> 6) & 3U) {
    case 0: url = "hf://owner/repo/model.gguf"; break;
    case 1: {
      const std::string text = in.bytes(24);
      url = "hf://" + text;
      may_fail = true;  // a mapping refused is no answer at all
      break;
    }
    default: url = fmt::format("{}/files/model.gguf", server->origin(named_port)); break;
  }
  const bool named_hub = url.rfind("hf://", 0) == 0 || named_port == 0;

  // The file.
  const auto source = static_cast<Source>(in.below(static_cast<std::size_t>(Source::kCount)));
  std::shared_ptr<const std::vector<std::uint8_t>> file;
  // Limits of the reading (only a test lowers them): the metadata kept, the data's chunks.
  detail::StreamLimits limits;
  const std::uint8_t limit_bits = in.byte();
  if ((limit_bits & 1U) != 0) limits.metadata_limit = std::size_t{1} << 20;
  if ((limit_bits & 2U) != 0) limits.data_chunk = 4096;

  // The answers.
  Exchange exchange;
  const std::size_t answers = in.below(kMaxAnswers + 1);
  for (std::size_t k = 0; k < answers; ++k) {
    Script s;
    const std::uint8_t kind = in.byte();
    // Half the answers faithful, so that scripts reach the later requests.
    s.answer = kind < 128
                   ? Answer::Faithful
                   : static_cast<Answer>(1 + (kind - 128) % (static_cast<int>(Answer::kCount) - 1));
    s.parameter = in.byte();
    if (s.answer == Answer::Raw || s.answer == Answer::RangeText ||
        s.answer == Answer::LengthText || s.answer == Answer::ExtraLines ||
        s.answer == Answer::Redirect) {
      s.text = in.bytes(48);
    }
    exchange.scripts.push_back(std::move(s));
  }
  if (source == Source::Input || source == Source::Patched) {
    std::vector<std::uint8_t> bytes = in.rest();
    if (source == Source::Patched) {
      std::vector<std::uint8_t> model = *kit_file(Source::Model);
      const std::size_t at = bytes.empty() ? 0 : bytes[0] * model.size() / 256;
      for (std::size_t k = 1; k < bytes.size() && at + k - 1 < model.size(); ++k)
        model[at + k - 1] = bytes[k];
      bytes = std::move(model);
    }
    file = std::make_shared<const std::vector<std::uint8_t>>(std::move(bytes));
  } else {
    file = kit_file(source);
  }
  exchange.file = file;

  server->begin(std::move(exchange));
  detail::Validated out;
  Report report;
  const detail::RemoteOutcome outcome = detail::visit_remote(
      url, options, url, out, [&] { report = std::move(out.report); }, limits);
  if (outcome.state != detail::RemoteOutcome::State::Read) {
    report = detail::remote_failure_report(url, outcome);
  }
  const Exchange done = server->end();

  // The token: to the endpoint's origin when the file was named there, never elsewhere.
  const bool token_set = !(how % 16 == 3);
  for (const Served& s : done.served) {
    if (!s.token_right) return "an Authorization header that is not the token";
    const bool expected = token_set && named_hub && s.port_index == 0;
    if (s.authorized != expected) {
      return s.authorized ? "the token went where it must not" : "the token was not sent";
    }
  }
  const bool all_faithful = std::all_of(done.served.begin(), done.served.end(),
                                        [](const Served& s) { return s.faithful; });
  if (report.unreadable()) {
    if (auto broken = check_unreadable(report); !broken.empty()) return broken;
    if (all_faithful && !may_fail) {
      return "a file served faithfully is unreadable: " + report.findings.front().message;
    }
    return {};
  }
  if (report.interrupted) return "an interrupted reading gave a report";
  const bool lied =
      std::any_of(done.served.begin(), done.served.end(), [](const Served& s) { return s.lie; });
  if (lied) return fuzz::check_report(report, options, report.facts.file_size);
  if (auto broken = fuzz::check_report(report, options, file->size()); !broken.empty())
    return broken;
  const bool gave_up =
      std::any_of(report.findings.begin(), report.findings.end(), [](const Finding& f) {
        return f.code == Code::LimitExceeded &&
               f.message.find("the most ggufcheck keeps of a remote file") != std::string::npos;
      });
  const Report local = validate(Bytes(file->data(), file->size()), options);
  // Metadata past the limit was not read: no file to compare with, but the reading fails. Its
  // GGUF0002 says so, or was counted past a findings limit the report had reached already.
  const bool past_limit =
      !local.facts.data_start || *local.facts.data_start > limits.metadata_limit;
  if (gave_up || (past_limit && report.findings_dropped != 0)) {
    return report.errors != 0 ? std::string{} : "a reading that gave up has no error";
  }
  if (auto broken = compare(report, local); !broken.empty()) return broken;
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (!remote_supported()) return 0;
  Server* server = Server::get();
  // What the options leave unset: hf:// through this server, and the token.
  ::setenv("GGUFCHECK_HF_ENDPOINT", server->origin(0).c_str(), 1);
  ::setenv("HF_TOKEN", std::string(kToken).c_str(), 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!remote_supported() || size > 65536) return 0;
  const Bytes bytes(data, size);
  if (size >= 4 && data[0] == 'G' && data[1] == 'G' && data[2] == 'U' && data[3] == 'F') {
    // A GGUF file (the seed corpus): served faithfully by URL, under options its hash chooses
    // (no small findings limit, no retries or redirects), read as the same bytes in memory.
    const auto bits = static_cast<std::uint8_t>(ggufcheck::fuzz::choice_hash(bytes) & 0x1FU);
    std::vector<std::uint8_t> program = {bits, 0, 0, kPlainUrl, kInputSource, 0, 0};
    program.insert(program.end(), data, data + size);
    Choices in(program.data(), program.size());
    ggufcheck::fuzz::fail_if(run(in), bytes);
    return 0;
  }
  Choices in(data, size);
  ggufcheck::fuzz::fail_if(run(in), bytes);
  return 0;
}
