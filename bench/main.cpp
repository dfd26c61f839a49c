// ggufcheck_bench: design.md section 5 measured. On a ~16 MB tokenizer-shaped file it times
// `cat`, the ggufcheck CLI and ggml's own reader (each as a process, and the two readers also
// in-process), prints the ratios against the targets, then measures the CLI's peak RSS on that
// file and on hostile headers. It also times validate() on 10^5 metadata keys chosen to collide
// in an unseeded hash table against 10^5 ordinary ones (the colliding file within 2x). `--smoke`
// does all of it once on a small file, for ctest.
//
// Hidden modes, used by the benchmark itself:
//   --ggml-load FILE [--ggml-lib LIB] ggml's reader in a process of its own
//   --peak-rss COMMAND ARGS...        run COMMAND, print its exit status and peak RSS
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures.hpp"
#include "ggml_reader.hpp"
#include "ggufcheck/validate.hpp"
#include "process.hpp"
#include "summary.hpp"

namespace fs = std::filesystem;
using namespace ggufcheck::bench;

namespace {

constexpr std::size_t kVocabSize = 250'000;
constexpr std::size_t kSmokeVocabSize = 2'000;
constexpr std::size_t kKeyCount = 100'000;  // the duplicate-key case: keys per file
constexpr std::size_t kSmokeKeyCount = 2'000;
constexpr std::uint64_t kMiB = 1024;                       // in KiB, the unit of ru_maxrss
constexpr std::uint64_t kTokenizerHeadroomKib = 8 * kMiB;  // design.md: "plus a few MiB"
constexpr std::uint64_t kHostileLimitKib = 16 * kMiB;
constexpr int kExitErrorsFound = 1;  // the CLI's status for a file with errors

// Defaults for a full run, before the user's own flags so that those win: repetitions give a
// median, interleaving spreads the machine's noise over all subjects alike.
constexpr std::array<const char*, 3> kDefaultBenchmarkFlags = {
    "--benchmark_repetitions=5", "--benchmark_enable_random_interleaving=true",
    "--benchmark_display_aggregates_only=true"};

struct Config {
  bool smoke = false;
  std::optional<std::string> write_tokenizer;  // write the file there and stop (for profiling)
  std::string ggml_library = default_ggml_library();
  std::vector<char*> benchmark_args;  // argv[0] and whatever Google Benchmark should parse
};

Config parse_arguments(int argc, char** argv) {
  Config config;
  config.benchmark_args.push_back(argv[0]);
  std::vector<char*> rest;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--smoke") {
      config.smoke = true;
    } else if (arg.starts_with("--ggml-lib=")) {
      config.ggml_library = arg.substr(std::string_view("--ggml-lib=").size());
    } else if (arg.starts_with("--write-tokenizer=")) {
      config.write_tokenizer = arg.substr(std::string_view("--write-tokenizer=").size());
    } else if (arg == "--ggml-lib" && i + 1 < argc) {
      config.ggml_library = argv[++i];
    } else {
      if (arg == "--help") {
        std::puts(
            "ggufcheck_bench [--smoke] [--ggml-lib=PATH] [Google Benchmark flags]\n"
            "  --smoke                  run every comparison once on a small file (ctest)\n"
            "  --ggml-lib=PATH          libggml-base.so to compare with (or GGUFCHECK_GGML_LIB)\n"
            "  --write-tokenizer=PATH   write the benchmark's file there and stop\n");
      }
      rest.push_back(argv[i]);
    }
  }
  if (!config.smoke) {
    for (const char* flag : kDefaultBenchmarkFlags)
      config.benchmark_args.push_back(const_cast<char*>(flag));
  }
  config.benchmark_args.insert(config.benchmark_args.end(), rest.begin(), rest.end());
  return config;
}

// One side of the comparison: runs once per call, returns why it failed if it did.
using Subject = std::function<std::optional<std::string>()>;

// Registers each subject as a Google Benchmark timed in wall-clock time: the CPU time of this
// process says nothing about a child's. Besides mean and median, each reports its best
// repetition, which the ratios use: other load on the machine only ever adds time.
struct Registrar {
  bool smoke;  // one iteration each

  void operator()(std::string_view name, Subject subject) const {
    auto* bench = benchmark::RegisterBenchmark(
        std::string(name).c_str(), [subject = std::move(subject)](benchmark::State& state) {
          for (auto _ : state) {
            if (const auto failure = subject()) {
              state.SkipWithError(failure->c_str());
              break;
            }
          }
        });
    bench->UseRealTime()->Unit(benchmark::kMillisecond);
    bench->ComputeStatistics(std::string(kBestStatistic), [](const std::vector<double>& times) {
      return *std::min_element(times.begin(), times.end());
    });
    if (smoke) bench->Iterations(1)->Repetitions(1);
  }
};

std::optional<std::string> expect_exit(const std::vector<std::string>& argv, int expected) {
  const ProcessResult result = run_process(argv);
  if (result.exited_with(expected)) return std::nullopt;
  return fmt::format("{} ended with {}, expected exit status {}", argv[0], result.describe(),
                     expected);
}

std::optional<std::string> expect_pass(const ggufcheck::Report& report) {
  if (report.passed()) return std::nullopt;
  return fmt::format("ggufcheck found {} error(s) in the benchmark's own file", report.errors);
}

struct Files {
  fs::path tokenizer;
  std::vector<std::uint8_t> tokenizer_bytes;              // also kept in memory, for validate()
  std::vector<std::pair<std::string, fs::path>> hostile;  // what it claims, where it is
};

Files write_files(const fs::path& dir, std::size_t vocab_size) {
  Files files;
  files.tokenizer = dir / "tokenizer.gguf";
  files.tokenizer_bytes = tokenizer_file(vocab_size);
  write_file(files.tokenizer, files.tokenizer_bytes);
  int index = 0;
  for (const HostileFile& hostile : hostile_files()) {
    const fs::path path = dir / fmt::format("hostile-{}.gguf", index++);
    write_file(path, hostile.bytes);
    files.hostile.emplace_back(hostile.name, path);
  }
  return files;
}

// Peak RSS of a command, shown for information until the caller sets a limit.
MemoryFigure measure(const std::string& self, std::string what,
                     const std::vector<std::string>& argv, int expected_exit) {
  const ProcessResult result = measure_peak_rss(self, argv);
  MemoryFigure figure;
  figure.what = std::move(what);
  figure.peak_rss_kib = result.peak_rss_kib;
  if (!result.exited_with(expected_exit)) {
    figure.problem = fmt::format("{}, expected exit status {}", result.describe(), expected_exit);
  }
  return figure;
}

double in_mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

int run(int argc, char** argv) {
  Config config = parse_arguments(argc, argv);
  int benchmark_argc = static_cast<int>(config.benchmark_args.size());
  benchmark::Initialize(&benchmark_argc, config.benchmark_args.data());
  if (benchmark::ReportUnrecognizedArguments(benchmark_argc, config.benchmark_args.data()))
    return 2;

  if (config.write_tokenizer) {
    write_file(*config.write_tokenizer, tokenizer_file(kVocabSize));
    return 0;
  }
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string cli = GGUFCHECK_BENCH_CLI;
  const TempDir dir;
  const Files files = write_files(dir.path(), config.smoke ? kSmokeVocabSize : kVocabSize);
  const std::string tokenizer = files.tokenizer.string();

  std::unique_ptr<GgmlReader> ggml;
  std::optional<std::string> ggml_missing;
  try {
    ggml = std::make_unique<GgmlReader>(config.ggml_library);
  } catch (const BenchError& e) {
    ggml_missing = e.what();
    fmt::print(stderr, "NOTE: the ggml comparison is skipped: {}\n", e.what());
  }

  // The commands, shared by the timing and the memory measurements.
  const std::vector<std::string> cat_command = {"/bin/cat", tokenizer};
  const std::vector<std::string> cli_command = {cli, "--quiet", tokenizer};
  const std::vector<std::string> ggml_command = {self, "--ggml-load", tokenizer, "--ggml-lib",
                                                 config.ggml_library};

  const ggufcheck::Options options;  // the CLI's defaults: the strict profile
  const std::vector<std::uint8_t>& tokenizer_bytes = files.tokenizer_bytes;
  const std::uint64_t size = tokenizer_bytes.size();
  const Registrar add{config.smoke};
  add(subject::kCat, [&] { return expect_exit(cat_command, 0); });
  add(subject::kCli, [&] { return expect_exit(cli_command, 0); });
  add(subject::kValidateFile,
      [&] { return expect_pass(ggufcheck::validate_file(tokenizer, options)); });
  add(subject::kValidateBytes, [&] {
    return expect_pass(
        ggufcheck::validate({tokenizer_bytes.data(), tokenizer_bytes.size()}, options));
  });
  // The duplicate-key case, in memory: keys chosen to collide in an unseeded table against
  // ordinary ones, the same number and length.
  const std::size_t key_count = config.smoke ? kSmokeKeyCount : kKeyCount;
  const std::vector<std::uint8_t> ordinary_keys = keys_file(key_count, KeyShape::Ordinary);
  const std::vector<std::uint8_t> colliding_keys = keys_file(key_count, KeyShape::Colliding);
  add(subject::kOrdinaryKeys, [&] {
    return expect_pass(ggufcheck::validate({ordinary_keys.data(), ordinary_keys.size()}, options));
  });
  add(subject::kCollidingKeys, [&] {
    return expect_pass(
        ggufcheck::validate({colliding_keys.data(), colliding_keys.size()}, options));
  });
  if (ggml) {
    add(subject::kGgmlProcess, [&] { return expect_exit(ggml_command, 0); });
    add(subject::kGgmlInProcess, [&]() -> std::optional<std::string> {
      if (ggml->load(tokenizer)) return std::nullopt;
      return "gguf_init_from_file returned null for the benchmark's own file";
    });
  }

  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  std::vector<MemoryFigure> memory;
  memory.push_back(measure(self, "measurement floor: /bin/true", {"/bin/true"}, 0));
  memory.push_back(measure(
      self, fmt::format("ggufcheck, tokenizer file ({:.1f} MiB)", in_mib(size)), cli_command, 0));
  memory.back().limit_kib = size / 1024 + kTokenizerHeadroomKib;
  if (ggml) memory.push_back(measure(self, "ggml reader, tokenizer file", ggml_command, 0));
  for (const auto& [claim, path] : files.hostile) {
    memory.push_back(
        measure(self, "ggufcheck, " + claim, {cli, "--quiet", path.string()}, kExitErrorsFound));
    memory.back().limit_kib = kHostileLimitKib;
    memory.back().strict_limit = true;
  }

  const std::string description = fmt::format("{:.1f} MiB, {} tokens and merges", in_mib(size),
                                              config.smoke ? kSmokeVocabSize : kVocabSize);
  const std::string keys_description =
      fmt::format("{} metadata keys of 10 bytes per file ({} KiB), validated in memory", key_count,
                  colliding_keys.size() / 1024);
  const bool ok = print_summary(
      {collector, description, keys_description, ggml_missing, std::move(memory), !config.smoke});
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "--peak-rss")
    return peak_rss_helper_main({args.begin() + 1, args.end()});
  if (args.size() >= 2 && args[0] == "--ggml-load") {
    const bool library_given = args.size() == 4 && args[2] == "--ggml-lib";
    return ggml_load_main(library_given ? args[3] : default_ggml_library(), args[1]);
  }
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufcheck_bench: %s\n", e.what());
    return 1;
  }
}
