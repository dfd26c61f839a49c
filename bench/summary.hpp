// The end of a run: times collected from Google Benchmark, ratios and peak-memory figures
// checked against the targets of design.md section 5 and printed as PASS or MISS.
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
inline constexpr std::string_view kGgmlProcess = "ggml/process";
inline constexpr std::string_view kValidateFile = "ggufcheck/validate_file";
inline constexpr std::string_view kValidateBytes = "ggufcheck/validate_in_memory";
inline constexpr std::string_view kGgmlInProcess = "ggml/gguf_init_from_file";
inline constexpr std::string_view kOrdinaryKeys = "ggufcheck/ordinary_keys";
inline constexpr std::string_view kCollidingKeys = "ggufcheck/colliding_keys";
}  // namespace subject

// The name of the statistic "best repetition" that each benchmark computes.
inline constexpr std::string_view kBestStatistic = "best";

// Prints as the console reporter does and keeps each benchmark's wall-clock time per iteration.
class Collector : public benchmark::ConsoleReporter {
 public:
  Collector();
  void ReportRuns(const std::vector<Run>& runs) override;
  // The best repetition, in seconds; nullopt when the benchmark did not run.
  [[nodiscard]] std::optional<double> seconds(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::map<std::string, std::vector<double>, std::less<>> samples_;  // one per repetition
  std::map<std::string, double, std::less<>> best_;                  // when only aggregates come
  std::vector<std::string> errors_;
};

struct MemoryFigure {
  std::string what;
  std::uint64_t peak_rss_kib = 0;
  std::optional<std::uint64_t> limit_kib;  // none: shown for information
  bool strict_limit = false;               // "<" rather than "<="
  std::string problem;                     // non-empty: the process did not behave as expected
};

struct SummaryInput {
  const Collector& times;
  std::string file_description;             // "16.0 MB, 250000 tokens"
  std::string keys_description;             // the two files of the duplicate-key case
  std::optional<std::string> ggml_missing;  // why ggml was not measured
  std::vector<MemoryFigure> memory;
  bool judge = true;  // false in smoke runs: figures only, no PASS/MISS
};

// Prints the summary; returns false when something failed to run (never for a MISS).
bool print_summary(const SummaryInput& input);

}  // namespace ggufcheck::bench
