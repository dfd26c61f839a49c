// The top of the library: validation of an input, from its bytes to the finished report. The
// public entry points (ggufcheck/validate.hpp) dispatch here by what the input is (a file, a
// stream, a URL); the check registry (pipeline.cpp) runs every stage in order; the report is
// finished here.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ggufcheck/validate.hpp"
#include "index/file_index.hpp"
#include "index/layout.hpp"
#include "input/file.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

class DataScan;            // data/scan.hpp
class TokenIndexObserver;  // llama_loader/token_index.hpp

// Every stage in order (the check registry, pipeline.cpp): the reader, the layout, then the
// checks. Structure: only what decides whether the bytes lay out as a GGUF file (writer
// diagnosis re-reads files this way), not value contents. Returns the layout.
// tokens: the token index's observer, given to the reader and then to the model stage, or null.
enum class Checks : std::uint8_t { All, Structure };
DataLayout run_checks(FileIndex& file_index, Sink& sink, Checks checks = Checks::All,
                      TokenIndexObserver* tokens = nullptr);

// Validates what `fd` streams (path names it in messages, shown in the report).
[[nodiscard]] Report validate_stream(int fd, const std::string& path, const std::string& shown,
                                     const Options& options, const StreamLimits& limits = {});

// Validates the bytes kept of an input and, for a stream, what is known of the rest.
[[nodiscard]] Report validate_input(const Input& input, const StreamTail* tail,
                                    const Options& options, std::string path,
                                    const DataScan* streamed = nullptr);
// The same, keeping what was read, for a stage that renders it (dump).
struct Validated {
  Report report;
  FileIndex index;
  DataLayout layout;
};
// streamed: a stream's data scan, made while its bytes passed (the file's is made here).
void validate_input(const Input& input, const StreamTail* tail, const Options& options,
                    std::string path, Validated& out, const DataScan* streamed = nullptr);
// "<stdin>" for "-", else the path.
std::string shown_path(const std::string& path);

// Sorts the findings by offset and counts them per severity.
// dropped: findings not kept (beyond Limits::max_findings), per severity; they still count.
void finish_report(Report& report, std::vector<Finding> findings,
                   const std::array<std::uint64_t, 4>& dropped = {});

}  // namespace ggufcheck::detail
