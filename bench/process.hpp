// Child processes: run one and wait, or measure its peak resident set size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ggufcheck::bench {

struct ProcessResult {
  int exit_code = -1;  // -1 when ended by a signal
  int signal = 0;
  std::uint64_t peak_rss_kib = 0;  // ru_maxrss; see measure_peak_rss for why not to trust it here
  double seconds = 0;              // wall-clock, from start to exit; set by measure_peak_rss
  std::string output;              // standard output, when captured

  [[nodiscard]] bool exited_with(int code) const { return signal == 0 && exit_code == code; }
  [[nodiscard]] std::string describe() const;  // "exit status 1", "signal 11"
};

enum class Output { Discard, Capture };

// Runs argv (argv[0] is a path) with standard output discarded or captured, standard error
// inherited, and waits for it. Throws BenchError when it cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, Output output = Output::Discard);

// Runs argv through `self --peak-rss argv...` and returns its result with a trustworthy
// peak_rss_kib. Why the detour: Linux records the caller's high-water RSS in the child's
// ru_maxrss when the child execs (exec_mmap), so a child of this big process would seem to
// peak at our size. The helper is a freshly exec'd small process that forks the command.
ProcessResult measure_peak_rss(const std::string& self, const std::vector<std::string>& argv);

// The helper's side: forks and execs argv, waits, prints "exit_code signal peak_rss_kib seconds".
int peak_rss_helper_main(const std::vector<std::string>& argv);

}  // namespace ggufcheck::bench
