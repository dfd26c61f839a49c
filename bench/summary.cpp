#include "summary.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>

namespace ggufcheck::bench {

// Colour only on a terminal, as Google Benchmark's own default reporter does.
Collector::Collector() : ConsoleReporter(::isatty(STDOUT_FILENO) != 0 ? OO_Defaults : OO_Tabular) {}

void Collector::ReportRuns(const std::vector<Run>& runs) {
  ConsoleReporter::ReportRuns(runs);
  for (const Run& run : runs) {
    const std::string& name = run.run_name.function_name;
    if (run.error_occurred) {
      errors_.push_back(fmt::format("{}: {}", name, run.error_message));
      continue;
    }
    const double seconds =
        run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
    if (run.run_type == Run::RT_Iteration) {
      samples_[name].push_back(seconds);
    } else if (run.aggregate_name == kBestStatistic) {
      best_[name] = seconds;
    }
  }
}

std::optional<double> Collector::seconds(std::string_view name) const {
  if (const auto it = best_.find(name); it != best_.end()) return it->second;
  const auto it = samples_.find(name);
  if (it == samples_.end() || it->second.empty()) return std::nullopt;
  return *std::min_element(it->second.begin(), it->second.end());
}

namespace {

struct Described {
  std::string_view subject;
  std::string_view what;
  std::string_view where;
};
constexpr std::array kTimes = {
    Described{subject::kCat, "cat FILE > /dev/null", "process"},
    Described{subject::kCli, "ggufcheck --quiet FILE", "process"},
    Described{subject::kGgmlProcess, "ggml gguf_init_from_file(FILE)", "process"},
    Described{subject::kValidateFile, "ggufcheck::validate_file(FILE)", "in-process"},
    Described{subject::kValidateBytes, "ggufcheck::validate(), file in RAM", "in-process"},
    Described{subject::kGgmlInProcess, "ggml gguf_init_from_file(FILE)", "in-process"},
    Described{subject::kOrdinaryKeys, "validate(), ordinary keys", "in-process"},
    Described{subject::kCollidingKeys, "validate(), std::hash-colliding keys", "in-process"},
};

struct RatioTarget {
  std::string_view label;
  std::string_view numerator;
  std::string_view denominator;
  double bound;
  bool at_most;  // the ratio must be <= bound; else >= bound
};
constexpr std::array kRatios = {
    RatioTarget{"ggufcheck / cat  (processes)", subject::kCli, subject::kCat, 2.0, true},
    RatioTarget{"ggml / ggufcheck (processes)", subject::kGgmlProcess, subject::kCli, 10.0, false},
    RatioTarget{"ggml / ggufcheck (in-process)", subject::kGgmlInProcess, subject::kValidateFile,
                10.0, false},
    // Duplicate detection must not go quadratic on keys chosen to collide (issue 12).
    RatioTarget{"colliding / ordinary keys", subject::kCollidingKeys, subject::kOrdinaryKeys, 2.0,
                true},
};

std::string verdict(bool judge, bool met) {
  if (!judge) return "";
  return met ? "PASS" : "MISS";
}

std::string mib(std::uint64_t kib) {
  return fmt::format("{:.1f} MiB", static_cast<double>(kib) / 1024.0);
}

bool mentions_ggml(std::string_view name) {
  return name.starts_with("ggml/");
}

}  // namespace

bool print_summary(const SummaryInput& input) {
  bool ran_everything = true;
  fmt::print("\n=== ggufcheck benchmark summary: tokenizer file of {} ===\n",
             input.file_description);
  if (input.ggml_missing) {
    fmt::print("NOTE: ggml's reader was NOT measured: {}\n", *input.ggml_missing);
  }
  fmt::print("Duplicate-key case: {}\n", input.keys_description);
  if (!input.judge) fmt::print("(smoke run: figures are not judged)\n");

  fmt::print("\nWall-clock time per run (best repetition):\n");
  for (const Described& row : kTimes) {
    const auto seconds = input.times.seconds(row.subject);
    const std::string label = fmt::format("{:<36} ({})", row.what, row.where);
    if (seconds) {
      fmt::print("  {:<49} {:9.3f} ms\n", label, *seconds * 1e3);
    } else if (!(input.ggml_missing && mentions_ggml(row.subject))) {
      fmt::print("  {:<49} not run\n", label);  // filtered out; failures are listed below
    }
  }

  fmt::print("\nRatios (same run):\n");
  for (const RatioTarget& ratio : kRatios) {
    const std::string target =
        fmt::format("target {} {:g}x", ratio.at_most ? "<=" : ">=", ratio.bound);
    const auto numerator = input.times.seconds(ratio.numerator);
    const auto denominator = input.times.seconds(ratio.denominator);
    if (!numerator || !denominator || *denominator <= 0) {
      const bool ggml = input.ggml_missing && mentions_ggml(ratio.numerator);
      fmt::print("  {:<30} {:>8}   {:<15} {}\n", ratio.label, "n/a", target,
                 ggml ? "NOT MEASURED (no ggml)" : "NOT MEASURED");
      continue;
    }
    const double value = *numerator / *denominator;
    const bool met = ratio.at_most ? value <= ratio.bound : value >= ratio.bound;
    fmt::print("  {:<30} {:7.2f}x   {:<15} {}\n", ratio.label, value, target,
               verdict(input.judge, met));
  }

  fmt::print("\nPeak RSS (ru_maxrss of the process):\n");
  for (const MemoryFigure& figure : input.memory) {
    std::string target = "(information)";
    std::string result;
    if (figure.limit_kib) {
      target =
          fmt::format("target {} {}", figure.strict_limit ? "<" : "<=", mib(*figure.limit_kib));
      const bool met = figure.strict_limit ? figure.peak_rss_kib < *figure.limit_kib
                                           : figure.peak_rss_kib <= *figure.limit_kib;
      result = verdict(input.judge, met);
    }
    if (!figure.problem.empty()) {
      result = fmt::format("FAILED: {}", figure.problem);
      ran_everything = false;
    }
    fmt::print("  {:<46} {:>10}   {:<20} {}\n", figure.what, mib(figure.peak_rss_kib), target,
               result);
  }

  for (const std::string& error : input.times.errors()) {
    fmt::print("FAILED: {}\n", error);
    ran_everything = false;
  }
  return ran_everything;
}

}  // namespace ggufcheck::bench
