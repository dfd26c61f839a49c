// ggufcheck_bench: design.md section 5 measured. On a ~16 MB tokenizer-shaped file it times
// `cat`, the ggufcheck CLI and ggml's own reader (each as a process, and the two readers also
// in-process), prints the ratios against the targets, then measures the CLI's peak RSS on that
// file and on hostile headers. It also times validate() on 10^5 metadata keys chosen to collide
// in an unseeded hash table against 10^5 ordinary ones (the colliding file within 2x).
//
// The scale files of issue 13, each validated (or dumped) by the CLI as a process: 10^5 and 10^6
// metadata pairs and tensor infos (time linear in their number, peak RSS within the file's size
// plus 32 MiB, and 10^5 pairs far faster than ggml's reader), a sparse 4 GiB file whose
// general.alignment of 2^31 puts the data behind a hole (peak RSS under 64 MiB), and `dump
// --level 3` of the tokenizer file and of a 1 GiB string (within the file's size plus 64 MiB).
// The model checks on against off (at most 10% more), and with --baseline-cli an older ggufcheck
// against the new one (no slower), are timed in alternation on the tokenizer file (see
// Interleaved). The older ggufcheck also runs once on every file the memory figures use.
//
// `--smoke` does all of it once on small files, for ctest.
//
// Hidden modes, used by the benchmark itself:
//   --ggml-load FILE [--ggml-lib LIB] ggml's reader in a process of its own
//   --peak-rss COMMAND ARGS...        run COMMAND, print its exit status and peak RSS
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
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

// What a run works on: the full sizes, or small ones for --smoke.
struct Sizes {
  std::size_t vocab;               // tokens, and merges, of the tokenizer file
  std::size_t keys;                // pairs of each duplicate-key file; the ordinary one is PAIRS
  std::size_t tensors;             // tensor infos of TENSORS
  std::uint32_t sparse_alignment;  // SPARSE is twice this long
  std::uint64_t long_string;       // bytes of LONG_STRING's string
  std::size_t process_rounds;      // of two CLI commands in alternation, one run of each a round
  std::size_t in_process_rounds;   // of two validate() calls in alternation
  std::size_t template_bytes;      // the chat template timed against the metadata read
};
// On the tokenizer file, 301 rounds of processes take about 7 s, 301 in process about 3 s.
constexpr Sizes kFullSizes{250'000, 100'000, 100'000, 1U << 31, 1ULL << 30, 301, 301, 100'000};
constexpr Sizes kSmokeSizes{2'000, 2'000, 2'000, 1U << 20, 1ULL << 20, 3, 3, 10'000};
constexpr std::size_t kTenfold = 10;  // PAIRS_X10 and TENSORS_X10 against PAIRS and TENSORS
constexpr std::uint64_t kMiB = 1024;  // in KiB, the unit of ru_maxrss
constexpr std::uint64_t kTokenizerHeadroomKib = 8 * kMiB;  // design.md: "plus a few MiB"
constexpr std::uint64_t kHostileLimitKib = 16 * kMiB;
constexpr std::uint64_t kScaleHeadroomKib = 32 * kMiB;  // issue 13's limits
constexpr std::uint64_t kSparseLimitKib = 64 * kMiB;
constexpr std::uint64_t kDumpHeadroomKib = 64 * kMiB;
constexpr int kExitErrorsFound = 1;  // the CLI's status for a file with errors

// Defaults for a full run, before the user's own flags so that those win: repetitions give a
// median, interleaving spreads the machine's noise over all subjects alike.
constexpr std::array<const char*, 3> kDefaultBenchmarkFlags = {
    "--benchmark_repetitions=5", "--benchmark_enable_random_interleaving=true",
    "--benchmark_display_aggregates_only=true"};

struct Config {
  bool smoke = false;
  std::optional<std::string> write_tokenizer;  // write the file there and stop (for profiling)
  std::optional<std::string> write_template;   // the template file, likewise
  std::string ggml_library = default_ggml_library();
  std::optional<std::string> baseline_cli;  // an older ggufcheck to compare with
  std::vector<char*> benchmark_args;        // argv[0] and whatever Google Benchmark should parse
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
    } else if (arg.starts_with("--write-template=")) {
      config.write_template = arg.substr(std::string_view("--write-template=").size());
    } else if (arg == "--ggml-lib" && i + 1 < argc) {
      config.ggml_library = argv[++i];
    } else if (arg.starts_with("--baseline-cli=")) {
      config.baseline_cli = arg.substr(std::string_view("--baseline-cli=").size());
    } else if (arg == "--baseline-cli" && i + 1 < argc) {
      config.baseline_cli = argv[++i];
    } else {
      if (arg == "--help") {
        std::puts(
            "ggufcheck_bench [--smoke] [--ggml-lib=PATH] [--baseline-cli=PATH] [Google Benchmark "
            "flags]\n"
            "  --smoke                  run every comparison once on small files (ctest)\n"
            "  --ggml-lib=PATH          libggml-base.so to compare with (or GGUFCHECK_GGML_LIB)\n"
            "  --baseline-cli=PATH      an older ggufcheck binary to run beside this one\n"
            "                           (bench/run.sh --with-baseline builds one)\n"
            "  --write-tokenizer=PATH   write the benchmark's file there and stop\n"
            "  --write-template=PATH    write the benchmark's template file there and stop\n");
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

  benchmark::internal::Benchmark* operator()(std::string_view name, Subject subject) const {
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
    return bench;
  }
};

std::optional<std::string> expect_exit(const std::vector<std::string>& argv, int expected) {
  const ProcessResult result = run_process(argv);
  if (result.exited_with(expected)) return std::nullopt;
  return fmt::format("{} ended with {}, expected exit status {}", argv[0], result.describe(),
                     expected);
}

// The template file: its checks ran (the known templates one after the other are no known
// template, and they redefine macros: warnings are expected, errors are not).
std::optional<std::string> expect_template_read(const ggufcheck::Report& report) {
  if (report.errors == 0) return std::nullopt;
  return fmt::format("the template file has {} error(s)", report.errors);
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

double in_mib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0);
}

// The scale files but LONG_STRING, which is written for its measurement and removed after (1 GiB
// on disk), with one line each for the summary.
struct ScaleFiles {
  fs::path pairs, pairs_tenfold, tensors, tensors_tenfold, sparse;
  std::vector<std::string> descriptions;
};

ScaleFiles write_scale_files(const fs::path& dir, const Sizes& sizes,
                             const std::vector<std::uint8_t>& ordinary_keys) {
  ScaleFiles files{dir / "pairs.gguf",       dir / "pairs-x10.gguf", dir / "tensors.gguf",
                   dir / "tensors-x10.gguf", dir / "sparse.gguf",    {}};
  auto describe = [&](std::string_view name, const fs::path& path, std::string what) {
    files.descriptions.push_back(
        fmt::format("{:<12} {}, {:.1f} MiB", name, what, in_mib(fs::file_size(path))));
  };
  write_file(files.pairs, ordinary_keys);
  describe("PAIRS", files.pairs, fmt::format("{} uint8 metadata pairs", sizes.keys));
  write_file(files.pairs_tenfold, keys_file(kTenfold * sizes.keys, KeyShape::Ordinary));
  describe("PAIRS_X10", files.pairs_tenfold,
           fmt::format("{} uint8 metadata pairs", kTenfold * sizes.keys));
  write_file(files.tensors, tensors_file(sizes.tensors));
  describe("TENSORS", files.tensors, fmt::format("{} tensor infos of 32 bytes", sizes.tensors));
  write_file(files.tensors_tenfold, tensors_file(kTenfold * sizes.tensors));
  describe("TENSORS_X10", files.tensors_tenfold,
           fmt::format("{} tensor infos of 32 bytes", kTenfold * sizes.tensors));
  write_sparse_alignment_file(files.sparse, sizes.sparse_alignment);
  describe(
      "SPARSE", files.sparse,
      fmt::format("general.alignment = 2^{}, one tensor behind the padding, {} KiB on disk",
                  std::countr_zero(sizes.sparse_alignment), allocated_bytes(files.sparse) / 1024));
  files.descriptions.push_back(
      fmt::format("{:<12} one string value of {:.1f} MiB (written when measured, removed after)",
                  "LONG_STRING", in_mib(sizes.long_string)));
  return files;
}

// Said plainly, before writing a file the disk cannot take.
void require_free_space(const fs::path& dir, std::uint64_t bytes) {
  const std::uintmax_t available = fs::space(dir).available;
  if (available < bytes) {
    throw BenchError(fmt::format("{} has {:.1f} MiB free, the benchmark needs {:.1f} MiB there",
                                 dir.string(), in_mib(available), in_mib(bytes)));
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// `first` against `second`: one run of each a round, which goes first alternating, so that both
// meet the machine in the same state. Each round gives a ratio; the median of those is robust to
// the load that comes and goes during the rounds.
Interleaved interleave(const Subject& first, const Subject& second, std::size_t rounds) {
  Interleaved result;
  result.rounds = rounds;
  const auto timed = [&](const Subject& subject) -> std::optional<double> {
    const auto start = std::chrono::steady_clock::now();
    const std::optional<std::string> problem = subject();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (!problem) return elapsed.count();
    result.problem = *problem;
    return std::nullopt;
  };
  std::vector<double> first_times, second_times, ratios;
  for (std::size_t round = 0; round < rounds; ++round) {
    std::optional<double> first_time, second_time;
    if (round % 2 == 0) {
      first_time = timed(first);
      second_time = timed(second);
    } else {
      second_time = timed(second);
      first_time = timed(first);
    }
    if (!first_time || !second_time) return result;
    first_times.push_back(*first_time);
    second_times.push_back(*second_time);
    ratios.push_back(*first_time / *second_time);
  }
  result.new_seconds = median(std::move(first_times));
  result.old_seconds = median(std::move(second_times));
  result.ratio = median(std::move(ratios));
  return result;
}

// Peak RSS and time of one run of a command.
Measured measure(const std::string& self, const std::vector<std::string>& argv, int expected_exit) {
  const ProcessResult result = measure_peak_rss(self, argv);
  Measured measured{result.peak_rss_kib, result.seconds, {}};
  if (!result.exited_with(expected_exit)) {
    measured.problem = fmt::format("{}, expected exit status {}", result.describe(), expected_exit);
  }
  return measured;
}

int run(int argc, char** argv) {
  Config config = parse_arguments(argc, argv);
  int benchmark_argc = static_cast<int>(config.benchmark_args.size());
  benchmark::Initialize(&benchmark_argc, config.benchmark_args.data());
  if (benchmark::ReportUnrecognizedArguments(benchmark_argc, config.benchmark_args.data()))
    return 2;

  if (config.write_tokenizer) {
    write_file(*config.write_tokenizer, tokenizer_file(kFullSizes.vocab));
    return 0;
  }
  if (config.write_template) {
    write_file(*config.write_template, template_file(kFullSizes.template_bytes));
    return 0;
  }
  if (config.baseline_cli && ::access(config.baseline_cli->c_str(), X_OK) != 0) {
    throw BenchError(
        fmt::format("--baseline-cli {}: {}", *config.baseline_cli, std::strerror(errno)));
  }
  const Sizes& sizes = config.smoke ? kSmokeSizes : kFullSizes;
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string cli = GGUFCHECK_BENCH_CLI;
  const TempDir dir;
  const Files files = write_files(dir.path(), sizes.vocab);
  const std::string tokenizer = files.tokenizer.string();
  // The duplicate-key case, in memory: keys chosen to collide in an unseeded table against
  // ordinary ones, the same number and length. The ordinary ones are also PAIRS.
  const std::vector<std::uint8_t> ordinary_keys = keys_file(sizes.keys, KeyShape::Ordinary);
  const std::vector<std::uint8_t> colliding_keys = keys_file(sizes.keys, KeyShape::Colliding);
  const ScaleFiles scale = write_scale_files(dir.path(), sizes, ordinary_keys);

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
  const auto cli_check = [&](const fs::path& file) {
    return std::vector<std::string>{cli, "--quiet", file.string()};
  };
  const auto ggml_load = [&](const fs::path& file) {
    return std::vector<std::string>{self, "--ggml-load", file.string(), "--ggml-lib",
                                    config.ggml_library};
  };
  const std::vector<std::string> cli_command = cli_check(files.tokenizer);
  const std::vector<std::string> ggml_command = ggml_load(files.tokenizer);

  const ggufcheck::Options options;  // the CLI's defaults: the strict profile
  const std::vector<std::uint8_t>& tokenizer_bytes = files.tokenizer_bytes;
  const std::uint64_t size = tokenizer_bytes.size();
  const Registrar add{config.smoke};
  const auto process = [](std::vector<std::string> command) -> Subject {
    return [command = std::move(command)] { return expect_exit(command, 0); };
  };
  const auto add_process = [&](std::string_view name, std::vector<std::string> command) {
    return add(name, process(std::move(command)));
  };
  const Subject cli_run = process(cli_command);
  const Subject cli_container_run =
      process({cli, "--quiet", "--no-model-checks", files.tokenizer.string()});
  ggufcheck::Options container = options;
  container.model_checks = false;
  const Subject validate_bytes = [&] {
    return expect_pass(
        ggufcheck::validate({tokenizer_bytes.data(), tokenizer_bytes.size()}, options));
  };
  const Subject validate_bytes_container = [&] {
    return expect_pass(
        ggufcheck::validate({tokenizer_bytes.data(), tokenizer_bytes.size()}, container));
  };
  add_process(subject::kCat, cat_command);
  add(subject::kCli, cli_run);
  add(subject::kCliContainer, cli_container_run);
  add(subject::kValidateFile,
      [&] { return expect_pass(ggufcheck::validate_file(tokenizer, options)); });
  add(subject::kValidateBytes, validate_bytes);
  add(subject::kValidateBytesContainer, validate_bytes_container);
  // The key files are containers (keys of no model, which the model checks would refuse; they ran
  // no model checks on such a file before either): checked without the model checks.
  add(subject::kOrdinaryKeys, [&] {
    return expect_pass(
        ggufcheck::validate({ordinary_keys.data(), ordinary_keys.size()}, container));
  });
  add(subject::kCollidingKeys, [&] {
    return expect_pass(
        ggufcheck::validate({colliding_keys.data(), colliding_keys.size()}, container));
  });
  // The scale files are containers (tensor infos of no model): checked without the model checks.
  const auto cli_container_check = [&](const fs::path& file) {
    return std::vector<std::string>{cli, "--quiet", "--no-model-checks", file.string()};
  };
  add_process(subject::kCliPairs, cli_container_check(scale.pairs));
  add_process(subject::kCliPairsTenfold, cli_container_check(scale.pairs_tenfold));
  add_process(subject::kCliTensors, cli_container_check(scale.tensors));
  add_process(subject::kCliTensorsTenfold, cli_container_check(scale.tensors_tenfold));
  if (ggml) {
    add_process(subject::kGgmlProcess, ggml_command);
    add(subject::kGgmlInProcess, [&]() -> std::optional<std::string> {
      if (ggml->load(tokenizer)) return std::nullopt;
      return "gguf_init_from_file returned null for the benchmark's own file";
    });
    // One repetition: ggml's duplicate-key search is quadratic, about 20 s a run on 10^5 pairs,
    // and the target's bound is far from where the ratio falls.
    add_process(subject::kGgmlPairs, ggml_load(scale.pairs))->Repetitions(1);
  }

  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  // Issue 15: the model checks (the vocabulary as llama.cpp loads it, here) add at most 10% to
  // the check a user runs, as a process and in process. Issue 13: the new CLI no slower than the
  // baseline on the tokenizer file, within the noise.
  std::vector<PairedRatio> paired;
  paired.push_back({"model checks on / off (processes)",
                    "on",
                    "off",
                    1.10,
                    interleave(cli_run, cli_container_run, sizes.process_rounds),
                    {}});
  paired.push_back({"model checks on / off (in-process)",
                    "on",
                    "off",
                    1.10,
                    interleave(validate_bytes, validate_bytes_container, sizes.in_process_rounds),
                    {}});
  // Issue 16: the chat-template checks on a 100 KB template cost at most what reading the
  // tokenizer file's metadata costs (both in process, the container checks alone for the latter).
  const std::vector<std::uint8_t> template_bytes = template_file(sizes.template_bytes);
  const Subject validate_template = [&] {
    return expect_template_read(
        ggufcheck::validate({template_bytes.data(), template_bytes.size()}, container));
  };
  paired.push_back(
      {fmt::format("{} KB template / metadata of FILE", sizes.template_bytes / 1000),
       "template",
       "metadata",
       1.0,
       interleave(validate_template, validate_bytes_container, sizes.in_process_rounds),
       {}});
  PairedRatio against_baseline{"new / baseline, FILE", "new", "baseline", 1.05, {}, {}};
  if (config.baseline_cli) {
    std::vector<std::string> baseline_command = cli_command;
    baseline_command[0] = *config.baseline_cli;
    against_baseline.times = interleave(cli_run, process(baseline_command), sizes.process_rounds);
  } else {
    against_baseline.why_not = "no --baseline-cli";
  }
  paired.push_back(std::move(against_baseline));

  // The CLI with `arguments` on `file`, and the baseline CLI on the same when there is one.
  const auto cli_figure = [&](std::string what, const std::vector<std::string>& arguments,
                              const fs::path& file, int expected_exit) {
    std::vector<std::string> command = {cli};
    command.insert(command.end(), arguments.begin(), arguments.end());
    command.push_back(file.string());
    read_through(file);
    MemoryFigure figure{std::move(what), measure(self, command, expected_exit), {}, false, {}};
    if (config.baseline_cli) {
      command[0] = *config.baseline_cli;
      figure.baseline = measure(self, command, expected_exit);
    }
    return figure;
  };
  const auto file_plus = [](const fs::path& file, std::uint64_t headroom_kib) {
    return fs::file_size(file) / 1024 + headroom_kib;
  };
  std::vector<MemoryFigure> memory;
  memory.push_back(
      {"measurement floor: /bin/true", measure(self, {"/bin/true"}, 0), {}, false, {}});
  const std::vector<std::string> check = {"--quiet"};
  const std::vector<std::string> container_check = {"--quiet", "--no-model-checks"};
  const std::vector<std::string> dump = {"dump", "--level", "3"};
  memory.push_back(cli_figure(fmt::format("ggufcheck, tokenizer file ({:.1f} MiB)", in_mib(size)),
                              check, files.tokenizer, 0));
  memory.back().limit_kib = size / 1024 + kTokenizerHeadroomKib;
  if (ggml) {
    memory.push_back(
        {"ggml reader, tokenizer file", measure(self, ggml_command, 0), {}, false, {}});
  }
  for (const auto& [claim, path] : files.hostile) {
    memory.push_back(cli_figure("ggufcheck, " + claim, check, path, kExitErrorsFound));
    memory.back().limit_kib = kHostileLimitKib;
    memory.back().strict_limit = true;
  }
  memory.push_back(cli_figure("ggufcheck, PAIRS", container_check, scale.pairs, 0));
  memory.push_back(cli_figure("ggufcheck, PAIRS_X10", container_check, scale.pairs_tenfold, 0));
  memory.back().limit_kib = file_plus(scale.pairs_tenfold, kScaleHeadroomKib);
  memory.push_back(cli_figure("ggufcheck, TENSORS", container_check, scale.tensors, 0));
  memory.push_back(cli_figure("ggufcheck, TENSORS_X10", container_check, scale.tensors_tenfold, 0));
  memory.back().limit_kib = file_plus(scale.tensors_tenfold, kScaleHeadroomKib);
  // The spec profile: strict also reports the 2^31 alignment as a portability error
  // (GGUF9507: @huggingface/gguf computes the data offset in 32 bits), which is not measured here.
  const std::vector<std::string> spec_container_check = {"--quiet", "--profile", "spec",
                                                         "--no-model-checks"};
  memory.push_back(cli_figure("ggufcheck, SPARSE", spec_container_check, scale.sparse, 0));
  memory.back().limit_kib = kSparseLimitKib;
  memory.back().strict_limit = true;
  memory.push_back(
      cli_figure("ggufcheck dump --level 3, tokenizer file", dump, files.tokenizer, 0));
  memory.back().limit_kib = file_plus(files.tokenizer, kDumpHeadroomKib);
  {
    const fs::path long_string = dir.path() / "long-string.gguf";
    require_free_space(dir.path(), sizes.long_string);
    write_long_string_file(long_string, sizes.long_string);
    memory.push_back(cli_figure("ggufcheck dump --level 3, LONG_STRING", dump, long_string, 0));
    memory.back().limit_kib = file_plus(long_string, kDumpHeadroomKib);
    fs::remove(long_string);
  }

  const std::string description =
      fmt::format("{:.1f} MiB, {} tokens and merges", in_mib(size), sizes.vocab);
  const std::string keys_description =
      fmt::format("{} metadata keys of 10 bytes per file ({} KiB), validated in memory", sizes.keys,
                  colliding_keys.size() / 1024);
  const bool ok =
      print_summary({collector, description, keys_description, scale.descriptions, ggml_missing,
                     config.baseline_cli, std::move(paired), std::move(memory), !config.smoke});
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
