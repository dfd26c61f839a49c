// The public entry points: validate bytes or a file, get a report.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
  // Chat templates above this size are not read (GGUF0002): the reader's syntax tree is a few
  // times the template's size, and no real template comes near (the largest of llama.cpp's
  // is under 40 KiB).
  std::uint64_t max_template_bytes = std::uint64_t{4} << 20;
};

// Sets the limit `name` (depth, kv-count, tensor-count, string-length, array-length, findings,
// template-bytes: --limit's names) to value. Returns why it cannot ("unknown limit 'x' (depth,
// ...)", "depth must be between 1 and 1024"), or nothing when it was set.
[[nodiscard]] std::optional<std::string> set_limit(Limits& limits, std::string_view name,
                                                   std::uint64_t value);

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

// Remote files (https://, http://, hf://; docs/remote.md): read by HTTP range requests, the
// header, metadata and tensor infos only (and the tensor data with DataCheck::enabled).
struct RemoteOptions {
  // Further tries of a request after a transient failure (a connection that fails, a 5xx, a
  // 429), each after a wait that doubles from backoff_ms (at most 8 s; a 429's or 503's
  // Retry-After instead, up to retry_after_cap_seconds; a longer one ends the tries).
  unsigned retries = 3;
  std::uint32_t backoff_ms = 500;
  std::uint32_t retry_after_cap_seconds = 60;
  // The connect timeout; and a transfer slower than 1 KiB/s for this long is a stall (GGUF0001).
  std::uint32_t timeout_seconds = 30;
  std::uint32_t max_redirects = 10;
  // The whole reading of a remote input (a file, or a split set by URL with all its shards:
  // requests, retries and their waits, a trickling body, the tensor data with --data) ends
  // within this many seconds of its start; what is not read by then makes the input unreadable
  // (GGUF0001), never a pass.
  std::uint32_t deadline_seconds = 600;
  // When set, the time by which it ends instead (a split set's shards share their set's).
  std::optional<std::chrono::steady_clock::time_point> deadline;
  // The token sent as "Authorization: Bearer" to the Hugging Face Hub (huggingface.co and its
  // subdomains, or the endpoint below) and to no other host: unset, HF_TOKEN's value.
  std::optional<std::string> hf_token;
  // Where hf:// points: unset, GGUFCHECK_HF_ENDPOINT's value or https://huggingface.co.
  std::optional<std::string> hf_endpoint;
};

struct Options {
  Profile profile = Profile::Strict;
  bool werror = false;  // warnings count as errors
  // --disable/--enable/--severity. An override refuse_override() refuses (a code that ends the
  // reading, silenced or downgraded) is ignored: severity() gives the catalogue's.
  std::map<Code, Severity> severity_overrides;
  Limits limits;
  DataCheck data;
  // The model checks (GGUF7xxx, GGUF8xxx): whether llama.cpp's model loader accepts the file, not
  // only its container. Off for container fixtures and parser conformance (--no-model-checks).
  bool model_checks = true;
  // The chat-template checks (GGUF9001-GGUF9016): tokenizer.chat_template* read as Jinja, as
  // servers render them. Off only where a caller compares the container alone with a reader
  // that does not look at templates (--no-template-checks).
  bool template_checks = true;
  // Whether the model checks may index a big vocabulary (16,384 tokens or more) on a thread of
  // their own while the file is read, on a machine with more than one core. The findings are
  // the same either way. The CLI's -j 1 turns it off.
  bool helper_thread = true;
  // A LoRA adapter's base model (--base): a local GGUF file read as llama.cpp's model loader
  // reads it, against which llama_adapter_lora_init's checks run (architecture, tensor names and
  // shapes). Empty: an adapter gets the checks that need no base, and GGUF7020 says the others
  // did not run. Other kinds of file ignore it.
  std::string base_model;
  RemoteOptions remote;

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
// Maps the file read-only; "-" reads standard input; a URL (is_url) is validate_url's.
// Unreadable input gives a GGUF0001 report.
[[nodiscard]] Report validate_file(const std::string& path, const Options& options);

// --- remote files ------------------------------------------------------------------------------
// Whether the path is a URL: http://, https:// or hf:// (any case), never a local file.
[[nodiscard]] bool is_url(std::string_view path);
// Whether this build reads URLs (CMake option GGUFCHECK_REMOTE, with libcurl).
[[nodiscard]] bool remote_supported();
// Validates the file at `url` by HTTP range requests (Options::remote): the report is that of
// the same bytes as a local file, but for what remote reading cannot see without the tensor
// data (docs/remote.md). A URL that cannot be read (an HTTP error, a server without range
// support or one that contradicts itself, a file that changes while it is read, a stall, a build
// without GGUFCHECK_REMOTE) gives a GGUF0001 report.
[[nodiscard]] Report validate_url(const std::string& url, const Options& options);

// --- split sets --------------------------------------------------------------------------------
// A model written as shards <prefix>-00001-of-0000N.gguf .. <prefix>-0000N-of-0000N.gguf (each
// with split.no, split.count and split.tensors.count), which llama.cpp loads from the first
// shard, deriving the other names from it (GGUF8001-GGUF8007). The checks of a set need the
// model checks (Options::model_checks); without them every file is validated alone.

// The inputs as they are validated, in the order given: a file alone, or a set of shards by name
// (a path <prefix>-%05d-of-%05d.gguf with a count of 2 or more stands for every shard of its
// set, in order, there or not; the set comes once, where one of its shards is first named). A
// shard name none of whose set is there stays a file alone (its report: it cannot be opened).
[[nodiscard]] std::vector<std::vector<std::string>> group_inputs(
    const std::vector<std::string>& paths);

// Where a shard's data scan is (Options::data.progress for the file at `path`).
using ShardProgress = std::function<void(const std::string& path, const DataProgress&)>;

struct SetReports {
  // One per file read, in the set's order, each the file's own report (validate_file's) with
  // the set's findings about it. A shard that is not there has none: the first shard there
  // reports it (GGUF8001), naming it.
  std::vector<Report> reports;
  // The paths were one file whose split keys make it a shard of a set that its name does not
  // place in one (any split key but those of a whole model: split.count a u16 of at most 1,
  // split.no absent or 0). Several such files given together are one set in the order given:
  // validate_set on their paths together.
  bool lone_shard = false;
};

// Validates a file, or a split set's shards, as llama.cpp loads them:
// - one path: a file alone, as llama_model_load_from_file reads it (a u16 split.count above 1
//   makes it a shard, found only by its name); a shard name with a count of 2 or more stands
//   for its whole set, as below;
// - the paths of a set by name, in order (group_inputs): the set llama_model_load_from_file
//   finds from its first shard;
// - other paths: one set in the order given, as llama_model_load_from_splits reads its list.
// A shard of a set keeps from its own checks only those that hold for a shard: llama.cpp reads
// the model keys from the first shard only (a later shard without general.architecture is
// fine). The first shard's bytes stay mapped while the others are read; of each other shard
// only its split keys and tensor infos are kept.
[[nodiscard]] SetReports validate_set(const std::vector<std::string>& paths, const Options& options,
                                      const ShardProgress& progress = {});

}  // namespace ggufcheck
