// What the subcommands of the ggufcheck command line share: checked output, usage errors, option
// parsing, the inputs (directories expanded), Ctrl-C, and the Command each subcommand registers.
#pragma once

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/validate.hpp"

namespace ggufcheck::cli {

// The whole command line (main.cpp): parses argv, runs the subcommand, writes the report and
// closes standard output; returns the exit status. The ggufcheck executable's main() and the
// Python module's `python -m ggufcheck` call it.
int cli_main(int argc, char** argv);

inline constexpr int kExitUsage = 3;
inline constexpr int kExitInternal = 4;
inline constexpr int kExitInterrupted = 130;

// A mistake on the command line: printed as "ggufcheck: MESSAGE", exit 3.
struct UsageError {
  std::string message;
};

// --- standard output: every write is checked, and a report that could not be written is exit 4
void emit(std::string_view text);
// Whether a write to standard output failed (a streaming writer stops then).
[[nodiscard]] bool output_failed();
// Flushes and closes standard output; returns the errno of the first failure, 0 if none.
[[nodiscard]] int finish_stdout();
void occupy_closed_standard_descriptors();

// --- options
// "--profile: 'foo' is not a profile (strict, spec, llama.cpp)"
void require_one_of(const std::string& option, const std::string& value,
                    const std::vector<std::string>& allowed, const std::string& what);
[[nodiscard]] Code parse_code(const std::string& text);
[[nodiscard]] std::optional<std::uint64_t> parse_unsigned(const std::string& text);
// --limit NAME=VALUE into limits.
void apply_limit(Limits& limits, const std::string& spec);
// --base MODEL: a local file that can be opened (not '-', not a URL); "" stays "".
[[nodiscard]] std::string checked_base(const std::string& path);
extern const std::vector<std::string> kProfiles;
// A single-value option: given twice, the last one wins.
CLI::Option* take_last(CLI::Option* option, const std::string& type_name);
// --color auto|always|never, with FORCE_COLOR, CLICOLOR_FORCE, NO_COLOR and TERM=dumb.
[[nodiscard]] bool use_color(const std::string& mode);

// --- Ctrl-C: a long operation stops at its next piece, and no report is printed (exit 130). A
// second Ctrl-C ends the process at once.
extern std::atomic<bool> g_interrupted;
// Installs the handler without SA_RESTART, so that a read waiting for bytes returns.
void catch_interrupts();

// --- inputs
struct InputPath {
  std::string path;
  std::string problem;  // non-empty: not read, reported as unreadable
};
// Expands directories into their *.gguf files (inputs.cpp says how); other paths stay as given.
[[nodiscard]] std::vector<InputPath> expand_inputs(const std::vector<std::string>& paths);
// For a subcommand that reads local files only (`info`, `dump`, `hash`, `verify`): why a URL is
// not read. "cannot read URL: 'ggufcheck info' reads local files only (...)"
[[nodiscard]] std::string local_files_only(const std::string& url, std::string_view command);
// expand_inputs, with each URL an input not read, saying so (local_files_only).
[[nodiscard]] std::vector<InputPath> expand_local_inputs(const std::vector<std::string>& paths,
                                                         std::string_view command);

// What is validated, in input order: a file alone, a split set's shards by name (group_inputs:
// a set once, where one of its shards comes first), or an input the walk could not read.
struct Job {
  std::vector<std::string> paths;
  std::string problem;  // non-empty: not validated, reported as unreadable (paths[0])
};
[[nodiscard]] std::vector<Job> jobs_of(const std::vector<InputPath>& inputs, bool sets);

// --- subcommands
// A subcommand: its options registered on the app; run() is called when it was the one given.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};
[[nodiscard]] Command add_check_command(CLI::App& app);
[[nodiscard]] Command add_info_command(CLI::App& app);
// `hash` and `verify` (hash.cpp): digests of the tensor data, and files against a manifest.
[[nodiscard]] Command add_hash_command(CLI::App& app);
[[nodiscard]] Command add_verify_command(CLI::App& app);

}  // namespace ggufcheck::cli
