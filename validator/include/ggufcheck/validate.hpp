// The public entry points: validate bytes or a file, get a report.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ggufcheck/bytes.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/format.hpp"

namespace ggufcheck {

// Resource limits. The defaults never reject a file the reference reader accepts.
// The deepest array nesting any setting allows: the walk recurses once per level.
inline constexpr std::uint32_t kMaxDepthLimit = 1024;

struct Limits {
  std::uint32_t max_depth = 64;  // array nesting, at most kMaxDepthLimit
  std::uint64_t max_kv_count = UINT64_MAX;
  std::uint64_t max_tensor_count = UINT64_MAX;
  std::uint64_t max_string_length = UINT64_MAX;
  std::uint64_t max_array_length = UINT64_MAX;
  std::uint64_t max_findings = 10000;  // further findings are counted, not kept
};

// Where a tensor data scan is (DataCheck::progress).
struct DataProgress {
  std::uint64_t done = 0;   // bytes of tensor data scanned
  std::uint64_t total = 0;  // bytes of tensor data to scan
  std::string tensor;       // a tensor being scanned (its name, escaped)
};

// The tensor data check (check --data): every tensor's bytes, after the structure was read.
struct DataCheck {
  bool enabled = false;
  unsigned threads = 0;  // 0: one per core
  // How a file's bytes are read: with pread into one buffer per thread (the default: it
  // measured faster than the mapping, bench/data.sh), or through the mapping (released behind
  // the scan). Streams are read sequentially whatever this says.
  enum class Read : std::uint8_t { Map, Pread };
  Read read = Read::Pread;
  // Called from one thread a few times a second during a scan, and once at its end.
  std::function<void(const DataProgress&)> progress;
  // Set (e.g. by a SIGINT handler) to stop a scan: the report then says it was interrupted.
  const std::atomic<bool>* cancel = nullptr;
};

struct Options {
  Profile profile = Profile::Strict;
  bool werror = false;                          // warnings count as errors
  std::map<Code, Severity> severity_overrides;  // --disable/--enable/--severity
  Limits limits;
  DataCheck data;
  // The model checks (GGUF7xxx, GGUF8xxx): whether llama.cpp's model loader accepts the file, not
  // only its container. Off for container fixtures and parser conformance (--no-model-checks).
  bool model_checks = true;

  [[nodiscard]] Severity severity(Code code) const;
};

struct Finding {
  Code code{};
  Severity severity = Severity::Error;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  std::string path;     // field path: kv[3] "general.alignment"
  std::string message;  // lower case, no trailing period, untrusted bytes escaped
  std::string hint;     // may be empty
};

struct Facts {
  std::uint64_t file_size = 0;
  std::optional<std::uint32_t> version;
  Endian endian = Endian::Little;
  std::optional<std::uint64_t> tensor_count;
  std::optional<std::uint64_t> kv_count;
  std::uint64_t kv_read = 0;       // pairs actually read
  std::uint64_t tensors_read = 0;  // tensor infos actually read
  std::uint32_t alignment = kDefaultAlignment;
  std::optional<std::uint64_t> data_start;
  std::optional<std::uint64_t> tensor_data_size;  // bytes from data_start to the end of the file
  // With the data check: the bytes of tensor data it scanned (tensors whose bytes the layout
  // could not place are not scanned; their findings fail the file already).
  std::optional<std::uint64_t> data_checked;
};

struct Report {
  std::string path;
  Facts facts;
  std::vector<Finding> findings;       // sorted by offset
  std::uint64_t findings_dropped = 0;  // beyond Limits::max_findings; counted below all the same
  std::size_t errors = 0;
  std::size_t warnings = 0;
  std::size_t notes = 0;
  // The data check was stopped (DataCheck::cancel) before it ended: the report is incomplete
  // and must not be shown as a verdict.
  bool interrupted = false;

  [[nodiscard]] bool unreadable() const;
  [[nodiscard]] bool passed() const { return errors == 0 && !interrupted; }
  // 0 pass, 1 errors, 2 unreadable, 130 interrupted (see the CLI's exit status).
  [[nodiscard]] int exit_status() const;
};

[[nodiscard]] Report validate(Bytes bytes, const Options& options, std::string path = "<buffer>");
// The report of an input that could not be read: one GGUF0001 error saying why.
[[nodiscard]] Report unreadable_report(std::string path, std::string why);
// Maps the file read-only; "-" reads standard input. Unreadable input gives a GGUF0001 report.
[[nodiscard]] Report validate_file(const std::string& path, const Options& options);

}  // namespace ggufcheck
