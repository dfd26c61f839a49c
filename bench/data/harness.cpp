// ggufcheck_data_bench: runs the three sides of the data-scan benchmark on the generated models
// and prints the medians, the ratios and the targets (bench/data/README.md). Every measured
// thing is a child process of this small one: wall time from fork to wait4, peak RSS from
// wait4's rusage (this process stays a few MiB, so the high-water mark a child inherits at exec
// is negligible).
//   ggufcheck_data_bench --floor BIN --ggml BIN [--cli BIN [--cli-variant ARG]...]
//                        [--baseline-cli BIN] [--lib LIB] [--rounds N] MODEL...
//   ggufcheck_data_bench --pipe --cli BIN MODEL
// Without --cli, side (a) is "not available" and everything else runs. Each --cli-variant adds
// a run of (a) with one more argument (e.g. --data-read=map), shown but not judged. MODEL is a
// file written by ggufcheck_data_generate (its .info sidecar gives the data section).
// --baseline-cli: an older build's command as one more side, interleaved with the others, and
// the ratio of (a) to it (a change that should not change the speed is judged by it).
// --pipe: `cat MODEL | ggufcheck check --data --format json -` against the same command on the
// path: equal reports but for "path", peak RSS of ggufcheck under 256 MiB in both.
// --hash: `ggufcheck hash` (--sha256, --sha256 --no-layer, --xxh64) against sha256sum and cat on
// the same files (bench/data/README.md, "Hashing").
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "models.hpp"

using namespace ggufcheck::bench::data;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kRssLimitMiB = 256;
constexpr double kCliOverFloorLimit = 1.2;
constexpr double kGgmlOverCliFloatTarget = 1.3;

struct Run {
  int exit_code = -1;
  int signal = 0;
  double seconds = 0;
  double peak_rss_mib = 0;
  double cpu_seconds = 0;  // user + system time of the child
  std::string output;      // standard output, when captured
  std::string errors;      // standard error
  [[nodiscard]] bool ok() const { return signal == 0 && exit_code == 0; }
  [[nodiscard]] std::string describe() const {
    return signal != 0 ? "signal " + std::to_string(signal) : "exit " + std::to_string(exit_code);
  }
};

struct Child {
  pid_t pid = -1;
  std::chrono::steady_clock::time_point start;
};

// Starts argv with standard input from `stdin_fd` (-1: /dev/null), standard output to
// `stdout_fd` (-1: /dev/null) and standard error to `stderr_fd` (-1: inherited). Exits this
// program when fork fails: nothing could be measured.
Child start(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd, int stderr_fd = -1) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  Child child;
  child.start = std::chrono::steady_clock::now();
  child.pid = ::fork();
  if (child.pid < 0) {
    std::fprintf(stderr, "cannot fork: %s\n", std::strerror(errno));
    std::exit(2);
  }
  if (child.pid == 0) {
    const int null_in = ::open("/dev/null", O_RDONLY);
    const int null_out = ::open("/dev/null", O_WRONLY);
    ::dup2(stdin_fd >= 0 ? stdin_fd : null_in, STDIN_FILENO);
    ::dup2(stdout_fd >= 0 ? stdout_fd : null_out, STDOUT_FILENO);
    if (stderr_fd >= 0) ::dup2(stderr_fd, STDERR_FILENO);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  return child;
}

Run finish(const Child& child) {
  int status = 0;
  rusage usage{};
  while (::wait4(child.pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "cannot wait: %s\n", std::strerror(errno));
      std::exit(2);
    }
  }
  Run run;
  run.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - child.start).count();
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) run.signal = WTERMSIG(status);
  run.peak_rss_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // KiB on Linux
  const auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  run.cpu_seconds = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  return run;
}

void read_all(int fd, std::string& out) {
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      out.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      return;
    }
  }
}

// Runs argv to completion; its standard output is captured when `capture`, else discarded.
// Standard error always goes to a temporary file, read back into Run::errors: the report of a
// failure, and no terminal for the child (ggufcheck draws a progress line on one).
Run run(const std::vector<std::string>& argv, bool capture, int stdin_fd = -1) {
  std::FILE* errors = std::tmpfile();
  if (errors == nullptr) {
    std::fprintf(stderr, "cannot create a temporary file: %s\n", std::strerror(errno));
    std::exit(2);
  }
  const auto read_errors = [errors](Run result) {
    std::rewind(errors);
    char chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, errors)) > 0;)
      result.errors.append(chunk, n);
    std::fclose(errors);
    return result;
  };
  if (!capture) return read_errors(finish(start(argv, stdin_fd, -1, ::fileno(errors))));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "cannot create a pipe: %s\n", std::strerror(errno));
    std::exit(2);
  }
  const Child child = start(argv, stdin_fd, fds[1], ::fileno(errors));
  ::close(fds[1]);
  std::string output;
  read_all(fds[0], output);
  ::close(fds[0]);
  Run result = finish(child);
  result.output = std::move(output);
  return read_errors(std::move(result));
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

enum class Role { Cli, CliVariant, Baseline, Ggml, Floor };

struct Side {
  Side(Role r, std::string l, std::vector<std::string> a)
      : role(r), label(std::move(l)), argv(std::move(a)) {}
  Role role;
  std::string label;
  std::vector<std::string> argv;
  std::vector<double> seconds;
  double peak_rss_mib = 0;
  std::optional<Run> failure;  // the first failed run, if any
  [[nodiscard]] bool measured() const { return !failure && !seconds.empty(); }
  [[nodiscard]] double time() const { return median(seconds); }
};

struct Model {
  std::string path;
  Sidecar info;
  std::vector<Side> sides;  // (a) first when present, (b), then the floor modes
};

const char* verdict(bool pass) {
  return pass ? "PASS" : "MISS";
}

std::string model_label(const Sidecar& info) {
  return info.kind == "float" ? "float-heavy (F16, BF16, F32)"
                              : "mixed (F16, BF16, F32, Q8_0, Q4_K, Q5_K, Q6_K, MXFP4, IQ4_XS)";
}

struct Options {
  std::string cli, ggml, floor, lib, baseline_cli;
  std::vector<std::string> cli_variants;  // an extra argument each: more (a) sides, not judged
  int rounds = 5;
  bool pipe = false;
  bool hash = false;
  std::vector<std::string> models;
};

std::optional<Sidecar> load_info(const std::string& path) {
  auto info = read_sidecar(path);
  if (!info)
    std::fprintf(stderr, "%s has no readable sidecar %s\n", path.c_str(),
                 sidecar_path(path).c_str());
  return info;
}

int benchmark(const Options& options) {
  std::vector<Model> models;
  for (const std::string& path : options.models) {
    const auto info = load_info(path);
    if (!info) return 2;
    Model model{path, *info, {}};
    const std::string begin = std::to_string(info->data_offset);
    const std::string end = std::to_string(info->file_size);
    // The data check alone: the generated models are containers of tensor data, not models
    // llama.cpp's loader takes, and the model checks have their own benchmark (bench/run.sh).
    if (!options.cli.empty())
      model.sides.emplace_back(
          Role::Cli, "(a) ggufcheck check --data",
          std::vector<std::string>{options.cli, "check", "--data", "--no-model-checks", path});
    for (const std::string& extra : options.cli_variants) {
      model.sides.emplace_back(Role::CliVariant, "(a) ggufcheck check --data " + extra,
                               std::vector<std::string>{options.cli, "check", "--data",
                                                        "--no-model-checks", extra, path});
    }
    if (!options.baseline_cli.empty()) {
      model.sides.emplace_back(Role::Baseline, "(a0) the baseline's ggufcheck check --data",
                               std::vector<std::string>{options.baseline_cli, "check", "--data",
                                                        "--no-model-checks", path});
    }
    std::vector<std::string> ggml = {options.ggml, path};
    if (!options.lib.empty()) ggml = {options.ggml, "--lib", options.lib, path};
    model.sides.emplace_back(Role::Ggml, "(b) ggml_validate_row_data, a task per tensor", ggml);
    for (const char* mode : {"pread", "mmap", "mmap-populate", "mmap-window"}) {
      model.sides.emplace_back(
          Role::Floor, std::string("(c) floor: ") + mode,
          std::vector<std::string>{options.floor, "--mode", mode, path, begin, end});
    }
    models.push_back(std::move(model));
  }

  // Interleaved: a round runs every side of every model once, starting at a different side
  // each round, so that a slow spell of the shared machine spreads over all of them.
  for (int round = 0; round < options.rounds; ++round) {
    for (Model& model : models) {
      const std::size_t n = model.sides.size();
      for (std::size_t k = 0; k < n; ++k) {
        Side& side = model.sides[(k + static_cast<std::size_t>(round)) % n];
        if (side.failure) continue;
        Run result = run(side.argv, true);
        if (!result.ok()) {
          side.failure = std::move(result);
          continue;
        }
        side.seconds.push_back(result.seconds);
        side.peak_rss_mib = std::max(side.peak_rss_mib, result.peak_rss_mib);
      }
    }
    std::fprintf(stderr, "round %d of %d done\n", round + 1, options.rounds);
  }

  bool all_pass = true;
  for (const Model& model : models) {
    const double data_bytes = static_cast<double>(model.info.data_bytes);
    std::printf(
        "\n%s: %s\n  %llu tensors, %.1f MiB of tensor data; median of %d runs, each a "
        "process\n",
        model.path.c_str(), model_label(model.info).c_str(),
        static_cast<unsigned long long>(model.info.tensors), data_bytes / kMiB, options.rounds);
    std::printf("  %-48s %9s %8s %10s\n", "side", "median", "GB/s", "peak RSS");
    const Side* floor = nullptr;
    const Side* cli = nullptr;
    const Side* ggml = nullptr;
    const Side* baseline = nullptr;
    for (const Side& side : model.sides) {
      if (!side.measured()) {
        std::printf("  %-48s FAILED (%s)\n%s", side.label.c_str(), side.failure->describe().c_str(),
                    (side.failure->output + side.failure->errors).c_str());
        continue;
      }
      std::printf("  %-48s %7.1f ms %8.2f %6.1f MiB\n", side.label.c_str(), side.time() * 1e3,
                  data_bytes / side.time() / 1e9, side.peak_rss_mib);
      if (side.role == Role::Cli) {
        cli = &side;
      } else if (side.role == Role::Ggml) {
        ggml = &side;
      } else if (side.role == Role::Baseline) {
        baseline = &side;
      } else if (side.role == Role::Floor && (floor == nullptr || side.time() < floor->time())) {
        floor = &side;
      }
    }
    if (options.cli.empty()) std::printf("  %-48s not available\n", "(a) ggufcheck check --data");
    if (floor == nullptr) {
      std::printf("  no floor measured\n");
      all_pass = false;
      continue;
    }
    std::printf("  floor (c) = the fastest plain read: %s\n", floor->argv[2].c_str());
    if (ggml != nullptr) std::printf("  b/c = %.2f\n", ggml->time() / floor->time());
    if (cli == nullptr) {
      // Not built with --data: nothing to judge; built with it but failed: a miss.
      std::printf("  a/c, b/a, peak RSS of (a): not available%s\n",
                  options.cli.empty() ? "" : " (MISS: (a) failed)");
      all_pass = all_pass && options.cli.empty();
      continue;
    }
    const double a_over_c = cli->time() / floor->time();
    std::printf("  a/c = %.2f (target <= %.1f) %s\n", a_over_c, kCliOverFloorLimit,
                verdict(a_over_c <= kCliOverFloorLimit));
    all_pass = all_pass && a_over_c <= kCliOverFloorLimit;
    if (ggml != nullptr) {
      const double b_over_a = ggml->time() / cli->time();
      if (model.info.kind == "float") {
        std::printf("  b/a = %.2f (target >= %.1f) %s\n", b_over_a, kGgmlOverCliFloatTarget,
                    verdict(b_over_a >= kGgmlOverCliFloatTarget));
        all_pass = all_pass && b_over_a >= kGgmlOverCliFloatTarget;
      } else {
        std::printf("  b/a = %.2f\n", b_over_a);
      }
    }
    if (baseline != nullptr) {
      std::printf("  a/a0 = %.3f (this build over the baseline's; peak RSS %.1f vs %.1f MiB)\n",
                  cli->time() / baseline->time(), cli->peak_rss_mib, baseline->peak_rss_mib);
    }
    std::printf("  peak RSS of (a) = %.1f MiB (target < %.0f MiB) %s\n", cli->peak_rss_mib,
                kRssLimitMiB, verdict(cli->peak_rss_mib < kRssLimitMiB));
    all_pass = all_pass && cli->peak_rss_mib < kRssLimitMiB;
  }
  return all_pass ? 0 : 1;
}

// Every "path" member removed, wherever it is, so two reports of the same bytes compare equal.
void drop_paths(nlohmann::json& value) {
  if (value.is_object()) {
    value.erase("path");
    for (auto& [key, member] : value.items()) drop_paths(member);
  } else if (value.is_array()) {
    for (auto& item : value) drop_paths(item);
  }
}

int pipe_measurement(const Options& options) {
  const std::string& path = options.models.front();
  const auto info = load_info(path);
  if (!info) return 2;
  const std::vector<std::string> by_path = {options.cli, "check", "--data",
                                            "--format",  "json",  path};
  const std::vector<std::string> by_pipe = {options.cli, "check", "--data",
                                            "--format",  "json",  "-"};
  std::vector<double> path_seconds, pipe_seconds;
  double path_rss = 0, pipe_rss = 0;
  std::string path_report, pipe_report;
  for (int round = 0; round < options.rounds; ++round) {
    const Run direct = run(by_path, true);
    if (!direct.ok()) {
      std::printf("ggufcheck on the path failed (%s)\n%s", direct.describe().c_str(),
                  (direct.output + direct.errors).c_str());
      return 1;
    }
    path_seconds.push_back(direct.seconds);
    path_rss = std::max(path_rss, direct.peak_rss_mib);
    path_report = direct.output;

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return 2;
    const Child cat = start({"/bin/cat", path}, -1, fds[1]);
    ::close(fds[1]);
    const Run piped = run(by_pipe, true, fds[0]);
    ::close(fds[0]);
    const Run cat_run = finish(cat);
    if (!piped.ok() || !cat_run.ok()) {
      std::printf("the pipe failed (ggufcheck %s, cat %s)\n%s", piped.describe().c_str(),
                  cat_run.describe().c_str(), (piped.output + piped.errors).c_str());
      return 1;
    }
    pipe_seconds.push_back(piped.seconds);
    pipe_rss = std::max(pipe_rss, piped.peak_rss_mib);
    pipe_report = piped.output;
  }
  nlohmann::json a = nlohmann::json::parse(path_report, nullptr, false);
  nlohmann::json b = nlohmann::json::parse(pipe_report, nullptr, false);
  const bool parsed = !a.is_discarded() && !b.is_discarded();
  if (parsed) {
    drop_paths(a);
    drop_paths(b);
  }
  const bool same = parsed && a == b;
  const double bytes = static_cast<double>(info->file_size);
  std::printf("\n%s: %.2f GiB, median of %d runs\n", path.c_str(), bytes / kMiB / 1024,
              options.rounds);
  std::printf("  ggufcheck check --data FILE         %8.1f ms %6.2f GB/s %7.1f MiB peak RSS\n",
              median(path_seconds) * 1e3, bytes / median(path_seconds) / 1e9, path_rss);
  std::printf("  cat FILE | ggufcheck check --data - %8.1f ms %6.2f GB/s %7.1f MiB peak RSS\n",
              median(pipe_seconds) * 1e3, bytes / median(pipe_seconds) / 1e9, pipe_rss);
  std::printf("  reports equal but for \"path\": %s\n", same ? "PASS" : "MISS");
  if (!same) {
    std::printf("--- path report\n%s\n--- pipe report\n%s\n", path_report.c_str(),
                pipe_report.c_str());
  }
  const bool rss_ok = path_rss < kRssLimitMiB && pipe_rss < kRssLimitMiB;
  std::printf("  peak RSS of ggufcheck < %.0f MiB (path and pipe): %s\n", kRssLimitMiB,
              verdict(rss_ok));
  return same && rss_ok ? 0 : 1;
}

// --hash: `ggufcheck hash` against the plain tools on the same files, interleaved in rounds:
// sha256sum (one SHA-256 of the whole file, one core) and cat (the bytes read, nothing hashed).
// hash --sha256 computes two SHA-256 over the tensor data (each tensor's, and the model's), on
// every core; --no-layer only the model's, which is one digest in order: one core.
int hash_measurement(const Options& options) {
  struct HashSide {
    std::string label;
    std::vector<std::string> argv;
    int digests = 0;  // SHA-256 passes over the tensor data (for the per-core figure), 0: none
    std::vector<double> seconds;
    std::vector<double> cpu_seconds;
    double peak_rss_mib = 0;
    std::optional<Run> failure;
  };
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  double load[3] = {0, 0, 0};
  const bool have_load = ::getloadavg(load, 3) == 3;
  bool all_pass = true;
  for (const std::string& path : options.models) {
    const auto info = load_info(path);
    if (!info) return 2;
    const auto make = [](std::string label, std::vector<std::string> argv, int digests) {
      HashSide h;
      h.label = std::move(label);
      h.argv = std::move(argv);
      h.digests = digests;
      return h;
    };
    std::vector<HashSide> sides = {
        make("(h) ggufcheck hash --sha256", {options.cli, "hash", "--sha256", path}, 2),
        make("(h) ggufcheck hash --sha256 --no-layer",
             {options.cli, "hash", "--sha256", "--no-layer", path}, 1),
        make("(h) ggufcheck hash --xxh64", {options.cli, "hash", "--xxh64", path}, 0),
        make("(s) sha256sum FILE", {"/usr/bin/sha256sum", path}, 1),
        make("(r) cat FILE > /dev/null", {"/bin/cat", path}, 0),
    };
    for (int round = 0; round < options.rounds; ++round) {
      for (std::size_t k = 0; k < sides.size(); ++k) {
        HashSide& side = sides[(k + static_cast<std::size_t>(round)) % sides.size()];
        if (side.failure) continue;
        Run result = run(side.argv, false);
        if (!result.ok()) {
          side.failure = std::move(result);
          continue;
        }
        side.seconds.push_back(result.seconds);
        side.cpu_seconds.push_back(result.cpu_seconds);
        side.peak_rss_mib = std::max(side.peak_rss_mib, result.peak_rss_mib);
      }
      std::fprintf(stderr, "round %d of %d done\n", round + 1, options.rounds);
    }
    const double file_bytes = static_cast<double>(info->file_size);
    const double data_bytes = static_cast<double>(info->data_bytes);
    std::printf(
        "\n%s: %s\n  %.1f MiB file, %.1f MiB of tensor data; median of %d runs, %u cores"
        " (load average at the start: %.2f)\n",
        path.c_str(), model_label(*info).c_str(), file_bytes / kMiB, data_bytes / kMiB,
        options.rounds, cores, have_load ? load[0] : -1.0);
    std::printf("  %-42s %9s %11s %10s\n", "side", "median", "file GB/s", "peak RSS");
    for (const HashSide& side : sides) {
      if (side.failure || side.seconds.empty()) {
        std::printf("  %-42s FAILED (%s)\n%s", side.label.c_str(),
                    side.failure ? side.failure->describe().c_str() : "no run",
                    side.failure ? side.failure->errors.c_str() : "");
        all_pass = false;
        continue;
      }
      const double t = median(side.seconds);
      std::printf("  %-42s %7.1f ms %11.2f %6.1f MiB", side.label.c_str(), t * 1e3,
                  file_bytes / t / 1e9, side.peak_rss_mib);
      if (side.digests > 0) {
        // SHA-256 bytes per CPU second (user + system): what one core hashes, whatever else
        // the shared machine runs; sha256sum hashes the whole file once.
        const double hashed =
            side.label.starts_with("(s)") ? file_bytes : side.digests * data_bytes;
        std::printf("  (SHA-256 %.2f GB per CPU second)", hashed / median(side.cpu_seconds) / 1e9);
      }
      std::printf("\n");
    }
    const auto time_of = [&](std::size_t i) {
      return sides[i].seconds.empty() || sides[i].failure ? 0.0 : median(sides[i].seconds);
    };
    if (time_of(0) > 0 && time_of(3) > 0) {
      std::printf("  hash --sha256 / sha256sum = %.2f\n", time_of(0) / time_of(3));
    }
    if (time_of(1) > 0 && time_of(3) > 0) {
      std::printf("  hash --sha256 --no-layer / sha256sum = %.2f\n", time_of(1) / time_of(3));
    }
    if (time_of(2) > 0 && time_of(4) > 0) {
      std::printf("  hash --xxh64 / cat = %.2f\n", time_of(2) / time_of(4));
    }
    for (std::size_t i = 0; i < 3; ++i) {
      if (sides[i].seconds.empty()) continue;
      const bool rss_ok = sides[i].peak_rss_mib < kRssLimitMiB;
      std::printf("  peak RSS of %s = %.1f MiB (target < %.0f MiB) %s\n", sides[i].label.c_str(),
                  sides[i].peak_rss_mib, kRssLimitMiB, verdict(rss_ok));
      all_pass = all_pass && rss_ok;
    }
  }
  return all_pass ? 0 : 1;
}

int usage() {
  std::fprintf(
      stderr,
      "usage: ggufcheck_data_bench --floor BIN --ggml BIN [--cli BIN [--cli-variant ARG]...] "
      "[--baseline-cli BIN] [--lib LIB] [--rounds N] MODEL...\n"
      "       ggufcheck_data_bench --pipe --cli BIN [--rounds N] MODEL\n"
      "       ggufcheck_data_bench --hash --cli BIN [--rounds N] MODEL...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--cli" && has_value) {
      options.cli = argv[++i];
    } else if (arg == "--ggml" && has_value) {
      options.ggml = argv[++i];
    } else if (arg == "--floor" && has_value) {
      options.floor = argv[++i];
    } else if (arg == "--cli-variant" && has_value) {
      options.cli_variants.emplace_back(argv[++i]);
    } else if (arg == "--baseline-cli" && has_value) {
      options.baseline_cli = argv[++i];
    } else if (arg == "--lib" && has_value) {
      options.lib = argv[++i];
    } else if (arg == "--rounds" && has_value) {
      options.rounds = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--pipe") {
      options.pipe = true;
    } else if (arg == "--hash") {
      options.hash = true;
    } else if (!arg.starts_with("-")) {
      options.models.push_back(arg);
    } else {
      return usage();
    }
  }
  if (options.models.empty()) return usage();
  if (options.pipe) {
    if (options.cli.empty() || options.models.size() != 1) return usage();
    return pipe_measurement(options);
  }
  if (options.hash) {
    if (options.cli.empty()) return usage();
    return hash_measurement(options);
  }
  if (options.floor.empty() || options.ggml.empty()) return usage();
  return benchmark(options);
}
