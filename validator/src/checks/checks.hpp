// The stages of validation. Data flows one way: bytes -> reader -> model -> layout -> checks ->
// report. Nothing changes the model after the reader: the checks read it and the layout.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/layout.hpp"
#include "model/model.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

class DataScan;  // data/scan.hpp

// Reader: header, metadata pairs and tensor infos into the model; reports what makes the
// bytes unreadable (truncation, impossible counts, unknown types, nesting). Stops a section
// only where continuing would mean guessing.
void read_model(Model& model, Sink& sink);

// Every stage in order (the check registry, pipeline.cpp): the reader, the layout, then the
// checks. Structure: only what decides whether the bytes lay out as a GGUF file (writer
// diagnosis re-reads files this way), not value contents. Returns the layout.
enum class Checks : std::uint8_t { All, Structure };
Layout run_checks(Model& model, Sink& sink, Checks checks = Checks::All);

// Writer diagnosis (GGUF1901..GGUF1904): for inputs that fail structurally, the notes of the
// wrong-writer hypotheses that explain them, at the offset of their first error. tail: what is
// known of a stream's bytes past those kept (null for a file read whole).
void diagnose_writer(const Input& input, const StreamTail* tail, Sink& sink);

// The input's bytes (a regular file mapped read-only, or a stream read to memory: "-" is
// standard input), passed to use; or why the input cannot be read. "<stdin>" for "-". Streams
// are read whole: `dump` only (validation reads them bounded, validate_file).
std::optional<std::string> with_input(const std::string& path,
                                      const std::function<void(const Input&)>& use);

// How a stream is read (input.cpp): what it keeps past the end of its tensor infos (also what
// writer diagnosis sees of it) and the largest step by which the kept bytes grow while the
// metadata is looked for; the size of each read; the bytes after which a stream whose metadata
// is still not read is given up (GGUF0002), which a remote file's reading shares (remote/).
//
// metadata_limit bounds the memory as well as the bytes: the records kept of what the bytes hold
// (a pair, a tensor info, a token of a vocabulary) and the checks' tables of them take up to
// about 40 bytes per pair, so a metadata of the smallest pairs (9 to 14 bytes) costs up to
// about 5 times its bytes: at most about 2.7 GiB at 512 MiB. The largest real metadata (a
// vocabulary of 256K tokens with its merges) is a few tens of MiB.
struct StreamLimits {
  std::size_t window = std::size_t{64} << 20;
  std::size_t chunk = std::size_t{1} << 20;
  std::size_t metadata_limit = std::size_t{512} << 20;
  // The size of each read past the kept bytes when the data check scans them (split over every
  // core: larger than `chunk`).
  std::size_t data_chunk = std::size_t{8} << 20;
};
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
  Model model;
  Layout layout;
};
// streamed: a stream's data scan, made while its bytes passed (the file's is made here).
void validate_input(const Input& input, const StreamTail* tail, const Options& options,
                    std::string path, Validated& out, const DataScan* streamed = nullptr);
std::string shown_path(const std::string& path);

// Checks over the model, by area (each registered in pipeline.cpp).
void check_keys(const Model& model, const Layout& layout, Sink& sink);
void check_values(const Model& model, const Layout& layout, Sink& sink);
void check_tensor_infos(const Model& model, const Layout& layout, Sink& sink);
void check_layout(const Model& model, const Layout& layout, Sink& sink);
void check_standard_keys(const Model& model, const Layout& layout, Sink& sink);
// Chat templates (templates/template_checks.cpp): tokenizer.chat_template* read as Jinja.
void check_templates(const Model& model, const Layout& layout, Sink& sink);
// What other widely used parsers read differently or refuse (portability/portability.cpp).
void check_portability(const Model& model, const Layout& layout, Sink& sink);

// Sorts the findings by offset and counts them per severity.
// dropped: findings not kept (beyond Limits::max_findings), per severity; they still count.
void finish_report(Report& report, std::vector<Finding> findings,
                   const std::array<std::uint64_t, 4>& dropped = {});

}  // namespace ggufcheck::detail
