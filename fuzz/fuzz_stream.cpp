// Streams against files: the bytes written to a pipe and read as a stream, with a window and a
// read size of a few bytes (so that the kept bytes, the passed tail and its padding probes all
// take part), must give the report of the same bytes given whole (validate), finding for finding
// and fact for fact. Three documented exceptions: writer diagnosis (GGUF1901..1904) sees only
// the kept bytes of a stream; a stream whose metadata stops parsing is given up a window past
// that point (a GGUF0002 finding; then the report must fail); and where a tensor runs past the
// end (GGUF4003), a stream's data scan, which learns its size only at the end, skips tensors
// overlapping it that the file's scan checks, so its data findings must be a subset of the
// file's and the rest must match (both reports fail). A stream that is not GGUF is read no
// further than its first bytes: only its first finding and verdict are compared. On a third of
// the inputs with the data check.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"
#include "pipeline.hpp"
#include "validate/validate.hpp"

namespace {

using namespace ggufcheck;

bool writer_note(const Finding& f) {
  const auto number = static_cast<unsigned>(f.code);
  return number >= 1901 && number <= 1904;
}

bool data_finding(const Finding& f) {
  return static_cast<unsigned>(f.code) / 1000 == 6;
}

// The report as JSON, without writer diagnosis's notes (they are counted in the summary too),
// and with without_data, without the data check's findings and figure.
std::string comparable(Report report, const Options& options, bool without_data = false) {
  std::erase_if(report.findings, writer_note);
  if (without_data) {
    std::erase_if(report.findings, data_finding);
    report.facts.data_checked.reset();
  }
  report.errors = report.warnings = report.notes = 0;
  for (const Finding& f : report.findings) {
    report.errors += f.severity == Severity::Error;
    report.warnings += f.severity == Severity::Warning;
    report.notes += f.severity == Severity::Note;
  }
  const Report reports[] = {std::move(report)};
  return render_json(reports, options, 0);
}

std::string check_stream(Bytes bytes, std::size_t window, std::size_t chunk, Profile profile,
                         unsigned data_threads) {
  int ends[2];
  if (::pipe(ends) != 0) return "";
  // The whole input fits in the pipe, so it is written before it is read.
  if (::fcntl(ends[1], F_SETPIPE_SZ, 1 << 20) < static_cast<int>(bytes.size()) ||
      ::write(ends[1], bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) {
    ::close(ends[0]);
    ::close(ends[1]);
    return "";
  }
  ::close(ends[1]);
  Options options;
  options.profile = profile;
  // The data check on some inputs (data_threads > 0): the stream's scan, fed chunk by chunk with
  // blocks cut between them, must find what the buffer's finds.
  options.data.enabled = data_threads > 0;
  options.data.threads = data_threads;
  detail::StreamLimits limits;
  limits.window = window;
  limits.chunk = chunk;
  limits.data_chunk = 1 + chunk * 7;
  const Report streamed = detail::validate_stream(ends[0], "<pipe>", "<input>", options, limits);
  ::close(ends[0]);
  const bool given_up =
      !streamed.findings.empty() && streamed.findings.back().code == Code::LimitExceeded &&
      streamed.findings.back().message.find("stopped reading the stream") != std::string::npos;
  if (given_up) {
    return streamed.errors > 0 ? "" : "a stream that was given up passes";
  }
  const Report whole = validate(bytes, options, "<input>");
  // Not GGUF: a stream is read no further than its first bytes, so its size and what the
  // identification makes of them can differ; the verdict cannot.
  if (bytes.size() >= 4 &&
      std::string_view(reinterpret_cast<const char*>(bytes.data()), 4) != "GGUF") {
    const bool same = !streamed.findings.empty() && !whole.findings.empty() &&
                      streamed.findings[0].code == whole.findings[0].code &&
                      streamed.exit_status() == whole.exit_status();
    return same ? "" : "a stream that is not GGUF is judged otherwise than its bytes";
  }
  const bool past_end =
      std::any_of(whole.findings.begin(), whole.findings.end(),
                  [](const Finding& f) { return f.code == Code::TensorOutOfBounds; });
  if (past_end && options.data.enabled) {
    if (whole.passed() || streamed.passed()) return "a file with a tensor past its end passes";
    for (const Finding& f : streamed.findings) {
      if (data_finding(f) &&
          std::none_of(whole.findings.begin(), whole.findings.end(), [&](const Finding& g) {
            return g.code == f.code && g.offset == f.offset && g.message == f.message;
          })) {
        return "the stream's data check found what the file's did not: " + f.message;
      }
    }
  }
  const std::string a = comparable(streamed, options, past_end);
  const std::string b = comparable(whole, options, past_end);
  if (a != b) {
    return "the stream's report differs from the file's (window " + std::to_string(window) +
           ", chunk " + std::to_string(chunk) + "):\nstream: " + a + "\nfile:   " + b;
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Bytes bytes(data, size);
  // The window and the read size from the input's length, so a replay is deterministic.
  const std::size_t window = 1 + size % 61;
  const std::size_t chunk = 1 + size % 13;
  // The data check on a third of the inputs, on the calling thread or on two.
  const unsigned data_threads = size % 3 == 0 ? 1 + static_cast<unsigned>(size / 3 % 2) : 0;
  for (const Profile profile : {Profile::Strict, Profile::LlamaCpp}) {
    fuzz::fail_if(check_stream(bytes, window, chunk, profile, data_threads), bytes);
  }
  return 0;
}
