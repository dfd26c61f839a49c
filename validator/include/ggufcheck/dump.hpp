// `ggufcheck dump`: the canonical JSON of a file, the output the conformance suite compares
// (docs/dump.md). An accepted file gives its header, metadata and tensor infos with every
// scalar as a string; a rejected one gives {"ok": false} with its errors.
#pragma once

#include <cstdint>
#include <string>

#include "ggufcheck/validate.hpp"

namespace ggufcheck {

enum class DumpLevel : std::uint8_t {
  Verdict = 0,    // L0: accepted or not
  Header = 1,     // L1: + version, byte order, alignment, counts
  Structure = 2,  // L2: + data offset, every metadata pair, every tensor info
  Data = 3,       // L3: + the SHA-256 of each tensor's data
};

struct Dump {
  std::string json;     // one JSON object and a newline
  int exit_status = 0;  // 0 accepted, 1 rejected, 2 unreadable (as Report::exit_status)
};

// The file is accepted when it passes under the options (its profile, overrides, limits).
[[nodiscard]] Dump dump(Bytes bytes, const Options& options, DumpLevel level);
// The same from the report of validate(bytes, options), for a caller that has it already.
[[nodiscard]] Dump dump(Bytes bytes, const Report& report, DumpLevel level);
// Maps the file read-only; "-" reads standard input.
[[nodiscard]] Dump dump_file(const std::string& path, const Options& options, DumpLevel level);

}  // namespace ggufcheck
