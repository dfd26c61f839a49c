// The end of a run: times collected from Google Benchmark, ratios and peak-memory figures
// checked against the targets of design.md section 5 and issue 13 and printed as PASS or MISS.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ggufcheck::bench {

// The benchmarks, by name; the ratios refer to them.
namespace subject {
inline constexpr std::string_view kCat = "cat/process";
inline constexpr std::string_view kCli = "ggufcheck/process";
inline constexpr std::string_view kCliContainer = "ggufcheck/process/container";
inline constexpr std::string_view kGgmlProcess = "ggml/process";
inline constexpr std::string_view kValidateFile = "ggufcheck/validate_file";
inline constexpr std::string_view kValidateBytes = "ggufcheck/validate_in_memory";
// The same without the model checks (Options::model_checks off): what they add (issue 15).
inline constexpr std::string_view kValidateBytesContainer =
    "ggufcheck/validate_in_memory/container";
inline constexpr std::string_view kGgmlInProcess = "ggml/gguf_init_from_file";
inline constexpr std::string_view kOrdinaryKeys = "ggufcheck/ordinary_keys";
inline constexpr std::string_view kCollidingKeys = "ggufcheck/colliding_keys";
// The scale files: the CLI on n and on 10n metadata pairs or tensor infos, ggml on the n pairs.
inline constexpr std::string_view kCliPairs = "ggufcheck/process/pairs";
inline constexpr std::string_view kCliPairsTenfold = "ggufcheck/process/pairs_x10";
inline constexpr std::string_view kCliTensors = "ggufcheck/process/tensors";
inline constexpr std::string_view kCliTensorsTenfold = "ggufcheck/process/tensors_x10";
inline constexpr std::string_view kGgmlPairs = "ggml/process/pairs";
}  // namespace subject

// The name of the statistic "best repetition" that each benchmark computes.
inline constexpr std::string_view kBestStatistic = "best";
// Google Benchmark's own, computed whenever there are several repetitions.
inline constexpr std::string_view kMedianStatistic = "median";

enum class Statistic { Best, Median };

// Prints as the console reporter does and keeps each benchmark's wall-clock time per iteration.
class Collector : public benchmark::ConsoleReporter {
 public:
  Collector();
  void ReportRuns(const std::vector<Run>& runs) override;
  // The best or the median repetition, in seconds; nullopt when the benchmark did not run.
  [[nodiscard]] std::optional<double> seconds(std::string_view name,
                                              Statistic statistic = Statistic::Best) const;
  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::map<std::string, std::vector<double>, std::less<>> samples_;  // one per repetition
  // When only aggregates come:
  std::map<std::string, double, std::less<>> best_;
  std::map<std::string, double, std::less<>> median_;
  std::vector<std::string> errors_;
};

// One run of a command: its peak RSS and wall-clock time.
struct Measured {
  std::uint64_t peak_rss_kib = 0;
  double seconds = 0;
  std::string problem;  // non-empty: the process did not behave as expected
};

struct MemoryFigure {
  std::string what;
  Measured measured;
  std::optional<std::uint64_t> limit_kib;  // none: shown for information
  bool strict_limit = false;               // "<" rather than "<="
  std::optional<Measured> baseline;        // the same command with the baseline CLI
};

// Two ways of doing the same work, timed in alternation: one run of each a round, the first of
// the two alternating. A ratio near 1 (the model checks' 10%, the new CLI against the old) is
// smaller than the machine's swings from one second to the next; pairing the runs and taking the
// median of the rounds' ratios spreads those swings over both sides alike.
struct Interleaved {
  std::size_t rounds = 0;  // each one run of both
  double new_seconds = 0;  // medians; "new" is the numerator of the ratio
  double old_seconds = 0;
  double ratio = 0;     // the median of each round's new / old
  std::string problem;  // non-empty: a run did not behave as expected
};

// An interleaved ratio with its target.
struct PairedRatio {
  std::string label;
  std::string numerator;  // what "new" and "old" are, for the line under the ratio
  std::string denominator;
  double bound = 0;                  // the ratio must be <= bound
  std::optional<Interleaved> times;  // none: not measured
  std::string why_not;               // when not measured
};

struct SummaryInput {
  const Collector& times;
  std::string file_description;             // "16.0 MB, 250000 tokens"
  std::string keys_description;             // the two files of the duplicate-key case
  std::vector<std::string> scale_files;     // one line for each of the scale files
  std::optional<std::string> ggml_missing;  // why ggml was not measured
  std::optional<std::string> baseline_cli;  // the old CLI compared with, if any
  std::vector<PairedRatio> paired;          // the ratios measured in alternation
  std::vector<MemoryFigure> memory;
  bool judge = true;  // false in smoke runs: figures only, no PASS/MISS
};

// Prints the summary; returns false when something failed to run (never for a MISS).
bool print_summary(const SummaryInput& input);

}  // namespace ggufcheck::bench
