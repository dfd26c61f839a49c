// The stages of validation. Data flows one way: bytes -> reader -> model -> checks -> report.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ggufcheck/model.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

// Reader: header, metadata pairs and tensor infos into the model; reports what makes the
// bytes unreadable (truncation, impossible counts, unknown types, nesting). Stops a section
// only where continuing would mean guessing.
void read_model(Model& model, Sink& sink);

// Every stage in order: the reader, then the checks. Structure: only what decides whether the
// bytes lay out as a GGUF file (writer diagnosis re-reads files this way), not value contents.
enum class Checks : std::uint8_t { All, Structure };
void run_checks(Model& model, Sink& sink, Checks checks = Checks::All);

// Writer diagnosis (GGUF1901..GGUF1904): for bytes that fail structurally, the notes of the
// wrong-writer hypotheses that explain them, at the offset of their first error. tail: what is
// known of a stream's bytes past those kept (null for a file read whole).
void diagnose_writer(Bytes bytes, const StreamTail* tail, Sink& sink);

// The input's bytes (a regular file mapped read-only, or a stream read to memory: "-" is
// standard input), passed to use; or why the input cannot be read. "<stdin>" for "-". Streams
// are read whole: `dump` only (validation reads them bounded, validate_file).
std::optional<std::string> with_input(const std::string& path,
                                      const std::function<void(Bytes)>& use);

// How a stream is read (input.cpp): what it keeps past the end of its tensor infos (also what
// writer diagnosis sees of it) and the largest step by which the kept bytes grow while the
// metadata is looked for; the size of each read; the bytes after which a stream whose metadata
// is still not read is given up (GGUF0002).
struct StreamLimits {
  std::size_t window = std::size_t{64} << 20;
  std::size_t chunk = std::size_t{1} << 20;
  std::size_t metadata_limit = std::size_t{4} << 30;
};
// Validates what `fd` streams (path names it in messages, shown in the report).
[[nodiscard]] Report validate_stream(int fd, const std::string& path, const std::string& shown,
                                     const Options& options, const StreamLimits& limits = {});

// Validates the bytes kept of an input and, for a stream, what is known of the rest.
[[nodiscard]] Report validate_input(Bytes kept, const StreamTail* tail, const Options& options,
                                    std::string path);

// Where the layout check may look for padding after each tensor, as [begin, end) file offsets:
// a superset of the ranges check_layout reads (each begins where a tensor's data ends and
// reaches at most the next multiple of the alignment), begins clamped to at least `from`.
// Used to scan a stream's tensor data as it passes.
[[nodiscard]] std::vector<std::pair<std::uint64_t, std::uint64_t>> padding_ranges(
    const Model& model, std::uint64_t from);
std::string shown_path(const std::string& path);

// Checks over the model, by area.
void check_keys(const Model& model, Sink& sink);
void check_values(const Model& model, Sink& sink);
void check_alignment(Model& model, Sink& sink);  // sets model.alignment and data_start
void check_tensor_infos(const Model& model, Sink& sink);
void check_layout(const Model& model, Sink& sink);
void check_standard_keys(const Model& model, Sink& sink);

// Sorts the findings by offset and counts them per severity.
// dropped: findings not kept (beyond Limits::max_findings), per severity; they still count.
void finish_report(Report& report, std::vector<Finding> findings,
                   const std::array<std::uint64_t, 4>& dropped = {});

// The identity of a key or tensor name for lookups: the llama.cpp profile compares C strings,
// up to the first NUL, as ggml does.
[[nodiscard]] std::string_view c_string_prefix(std::string_view bytes);
[[nodiscard]] std::string_view key_identity(std::string_view key, Profile profile);
// The entry for key, or nullptr (first match, by the profile's key identity).
[[nodiscard]] const MetadataEntry* find_key(const Model& model, std::string_view key,
                                            Profile profile);

}  // namespace ggufcheck::detail
