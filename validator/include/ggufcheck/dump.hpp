// `ggufcheck dump`: the canonical JSON of a file, the output the conformance suite compares
// (docs/dump.md). An accepted file gives its header, metadata and tensor infos with every
// scalar as a string; a rejected one gives {"ok": false} with its errors. The file is validated
// once and the dump rendered from what validation read, streaming: memory stays bounded whatever
// the size of a value or of the output.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

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

// Maps the file read-only ("-" reads standard input) and hands its dump to `write` piece by
// piece, in order; returns the exit status (as Dump::exit_status). The file is accepted when it
// passes under the options (its profile, overrides, limits). Output stops at the first write that
// returns false. A file that changes while it is dumped gives exit status 2 and the error object
// on a line of its own, after any text already written.
[[nodiscard]] int dump_file(const std::string& path, const Options& options, DumpLevel level,
                            const std::function<bool(std::string_view)>& write);
// The same into a string.
[[nodiscard]] Dump dump_file(const std::string& path, const Options& options, DumpLevel level);
[[nodiscard]] Dump dump(Bytes bytes, const Options& options, DumpLevel level);

}  // namespace ggufcheck
