#include "summary.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <optional>

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
    } else if (run.aggregate_name == kMedianStatistic) {
      median_[name] = seconds;
    }
  }
}

std::optional<double> Collector::seconds(std::string_view name, Statistic statistic) const {
  const auto& aggregates = statistic == Statistic::Best ? best_ : median_;
  if (const auto it = aggregates.find(name); it != aggregates.end()) return it->second;
  const auto it = samples_.find(name);
  if (it == samples_.end() || it->second.empty()) return std::nullopt;
  std::vector<double> sorted = it->second;
  std::sort(sorted.begin(), sorted.end());
  if (statistic == Statistic::Best) return sorted.front();
  const std::size_t middle = sorted.size() / 2;
  return sorted.size() % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
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
    Described{subject::kCliContainer, "ggufcheck --quiet --no-model-checks FILE", "process"},
    Described{subject::kGgmlProcess, "ggml gguf_init_from_file(FILE)", "process"},
    Described{subject::kValidateFile, "ggufcheck::validate_file(FILE)", "in-process"},
    Described{subject::kValidateBytes, "ggufcheck::validate(), file in RAM", "in-process"},
    Described{subject::kValidateBytesContainer, "the same, --no-model-checks", "in-process"},
    Described{subject::kGgmlInProcess, "ggml gguf_init_from_file(FILE)", "in-process"},
    Described{subject::kOrdinaryKeys, "validate(), ordinary keys", "in-process"},
    Described{subject::kCollidingKeys, "validate(), std::hash-colliding keys", "in-process"},
    Described{subject::kCliPairs, "ggufcheck --quiet PAIRS", "process"},
    Described{subject::kCliPairsTenfold, "ggufcheck --quiet PAIRS_X10", "process"},
    Described{subject::kGgmlPairs, "ggml gguf_init_from_file(PAIRS)", "process"},
    Described{subject::kCliTensors, "ggufcheck --quiet TENSORS", "process"},
    Described{subject::kCliTensorsTenfold, "ggufcheck --quiet TENSORS_X10", "process"},
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
    // Issue 13: no superlinear path in the number of pairs or tensors, and far ahead of ggml's
    // reader (whose duplicate-key search is quadratic) on the same pairs.
    RatioTarget{"PAIRS_X10 / PAIRS (processes)", subject::kCliPairsTenfold, subject::kCliPairs,
                12.0, true},
    RatioTarget{"TENSORS_X10 / TENSORS (processes)", subject::kCliTensorsTenfold,
                subject::kCliTensors, 12.0, true},
    RatioTarget{"ggml / ggufcheck, PAIRS (processes)", subject::kGgmlPairs, subject::kCliPairs,
                100.0, false},
};

std::string verdict(bool judge, bool met) {
  if (!judge) return "";
  return met ? "PASS" : "MISS";
}

std::string mib(std::uint64_t kib) {
  return fmt::format("{:.1f} MiB", static_cast<double>(kib) / 1024.0);
}

std::string milliseconds(double seconds) {
  return fmt::format("{:.1f} ms", seconds * 1e3);
}

// Why a subject was deliberately not measured, if it was not.
std::optional<std::string_view> why_not_measured(const SummaryInput& input, std::string_view name) {
  if (name.starts_with("ggml/") && input.ggml_missing) return "no ggml";
  return std::nullopt;
}

// A ratio timed in alternation, and the medians it comes from.
void print_paired(const PairedRatio& paired, bool judge, bool& ran_everything) {
  const std::string target = fmt::format("target <= {:g}x", paired.bound);
  if (!paired.times) {
    fmt::print("  {:<36} {:>8}   {:<15} NOT MEASURED ({})\n", paired.label, "n/a", target,
               paired.why_not);
    return;
  }
  const Interleaved& times = *paired.times;
  if (!times.problem.empty()) {
    fmt::print("  {:<36} {:>8}   {:<15} FAILED: {}\n", paired.label, "n/a", target, times.problem);
    ran_everything = false;
    return;
  }
  fmt::print("  {:<36} {:7.2f}x   {:<15} {}\n", paired.label, times.ratio, target,
             verdict(judge, times.ratio <= paired.bound));
  fmt::print(
      "    the median of {} rounds of one run each, in alternating order; medians: {} {:.3f} "
      "ms, {} {:.3f} ms\n",
      times.rounds, paired.numerator, times.new_seconds * 1e3, paired.denominator,
      times.old_seconds * 1e3);
}

// The baseline's row under a figure: its own figures, then new against old.
void print_baseline(const MemoryFigure& figure, bool& ran_everything) {
  const Measured& old = *figure.baseline;
  std::string comparison;
  if (!old.problem.empty()) {
    comparison = fmt::format("FAILED: {}", old.problem);
    ran_everything = false;
  } else if (old.peak_rss_kib > 0 && old.seconds > 0) {
    comparison = fmt::format(
        "new/old: {:.2f}x RSS, {:.2f}x time",
        static_cast<double>(figure.measured.peak_rss_kib) / static_cast<double>(old.peak_rss_kib),
        figure.measured.seconds / old.seconds);
  }
  fmt::print("  {:<52} {:>10} {:>10}   {}\n", "  baseline", mib(old.peak_rss_kib),
             milliseconds(old.seconds), comparison);
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
  fmt::print("Scale files:\n");
  for (const std::string& line : input.scale_files) fmt::print("  {}\n", line);
  if (input.baseline_cli) {
    fmt::print("Baseline (the old CLI, compared in the same run): {}\n", *input.baseline_cli);
  } else {
    fmt::print("NOTE: no --baseline-cli: old and new are not compared\n");
  }
  if (!input.judge) fmt::print("(smoke run: figures are not judged)\n");

  fmt::print("\nWall-clock time per run (best repetition, median):\n");
  for (const Described& row : kTimes) {
    const auto best = input.times.seconds(row.subject, Statistic::Best);
    const auto median = input.times.seconds(row.subject, Statistic::Median);
    const std::string label = fmt::format("{:<36} ({})", row.what, row.where);
    if (best && median) {
      fmt::print("  {:<49} {:10.3f} ms {:10.3f} ms\n", label, *best * 1e3, *median * 1e3);
    } else if (!why_not_measured(input, row.subject)) {
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
      const auto reason = why_not_measured(input, ratio.numerator);
      fmt::print("  {:<36} {:>8}   {:<15} NOT MEASURED{}\n", ratio.label, "n/a", target,
                 reason ? fmt::format(" ({})", *reason) : "");
      continue;
    }
    const double value = *numerator / *denominator;
    const bool met = ratio.at_most ? value <= ratio.bound : value >= ratio.bound;
    fmt::print("  {:<36} {:7.2f}x   {:<15} {}\n", ratio.label, value, target,
               verdict(input.judge, met));
  }
  fmt::print("\nRatios timed in alternation (same run):\n");
  for (const PairedRatio& paired : input.paired) print_paired(paired, input.judge, ran_everything);

  fmt::print("\nPeak RSS (ru_maxrss of the process) and wall-clock time, one run each:\n");
  for (const MemoryFigure& figure : input.memory) {
    const Measured& measured = figure.measured;
    std::string target = "(information)";
    std::string result;
    if (figure.limit_kib) {
      target =
          fmt::format("target {} {}", figure.strict_limit ? "<" : "<=", mib(*figure.limit_kib));
      const bool met = figure.strict_limit ? measured.peak_rss_kib < *figure.limit_kib
                                           : measured.peak_rss_kib <= *figure.limit_kib;
      result = verdict(input.judge, met);
    }
    if (!measured.problem.empty()) {
      result = fmt::format("FAILED: {}", measured.problem);
      ran_everything = false;
    }
    fmt::print("  {:<52} {:>10} {:>10}   {:<20} {}\n", figure.what, mib(measured.peak_rss_kib),
               milliseconds(measured.seconds), target, result);
    if (figure.baseline) print_baseline(figure, ran_everything);
  }

  for (const std::string& error : input.times.errors()) {
    fmt::print("FAILED: {}\n", error);
    ran_everything = false;
  }
  return ran_everything;
}

}  // namespace ggufcheck::bench
