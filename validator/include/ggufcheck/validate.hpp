// The public entry points: validate bytes or a file, get a report.
#pragma once

#include <cstdint>
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

struct Options {
  Profile profile = Profile::Strict;
  bool werror = false;                          // warnings count as errors
  std::map<Code, Severity> severity_overrides;  // --disable/--enable/--severity
  Limits limits;

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
};

struct Report {
  std::string path;
  Facts facts;
  std::vector<Finding> findings;       // sorted by offset
  std::uint64_t findings_dropped = 0;  // beyond Limits::max_findings; counted below all the same
  std::size_t errors = 0;
  std::size_t warnings = 0;
  std::size_t notes = 0;

  [[nodiscard]] bool unreadable() const;
  [[nodiscard]] bool passed() const { return errors == 0; }
  // 0 pass, 1 errors, 2 unreadable (see the CLI's exit status).
  [[nodiscard]] int exit_status() const;
};

[[nodiscard]] Report validate(Bytes bytes, const Options& options, std::string path = "<buffer>");
// The report of an input that could not be read: one GGUF0001 error saying why.
[[nodiscard]] Report unreadable_report(std::string path, std::string why);
// Maps the file read-only; "-" reads standard input. Unreadable input gives a GGUF0001 report.
[[nodiscard]] Report validate_file(const std::string& path, const Options& options);

}  // namespace ggufcheck
