// `ggufcheck check` (the default subcommand): validate files, split sets and directories.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"

namespace ggufcheck::cli {

namespace {

struct CheckArgs {
  std::vector<std::string> paths;
  std::string profile = "strict";
  std::string format = "text";
  bool werror = false;
  // --disable, --enable and --severity in command-line order: the last one of a code wins.
  enum class Kind { Disable, Enable, Severity };
  std::vector<std::pair<Kind, std::string>> overrides;
  std::vector<std::string> limits;
  std::optional<std::string> jobs;  // default: 1 file at a time; with --data, every core
  bool data = false;
  bool model_checks = true;     // --no-model-checks turns the model and split-set checks off
  bool template_checks = true;  // --no-template-checks turns the chat-template checks off
  std::string data_read = "pread";
  std::optional<bool> progress;  // default: on when stderr is a terminal (data scans only)
  bool quiet = false;
  std::string color = "auto";
  std::string sarif_help_base;
  std::optional<std::string> sarif_root;
  std::string timeout = "30";  // remote files: seconds
  std::string retries = "3";
  std::string deadline = "600";
  std::string base;  // --base: a LoRA adapter's base model
};

Options make_options(const CheckArgs& args) {
  require_one_of("--profile", args.profile, kProfiles, "a profile");
  Options options;
  options.profile = *parse_profile(args.profile);
  options.werror = args.werror;
  // The last of --disable/--enable/--severity for a code wins. --enable restores the profile's
  // severity of a code the profile reports, and makes one it keeps silent a warning.
  for (const auto& [kind, value] : args.overrides) {
    switch (kind) {
      case CheckArgs::Kind::Disable: {
        const Code code = parse_code(value);
        if (const auto why = refuse_override(code, Severity::Silent)) {
          throw UsageError{fmt::format("--disable {}: {}", value, *why)};
        }
        options.severity_overrides[code] = Severity::Silent;
        break;
      }
      case CheckArgs::Kind::Enable: {
        const Code code = parse_code(value);
        if (catalogue_entry(code).severity(options.profile) == Severity::Silent) {
          options.severity_overrides[code] = Severity::Warning;
        } else {
          options.severity_overrides.erase(code);
        }
        break;
      }
      case CheckArgs::Kind::Severity: {
        const auto eq = value.find('=');
        if (eq == std::string::npos)
          throw UsageError{fmt::format("--severity '{}': expected CODE=LEVEL", value)};
        const auto level = parse_severity(value.substr(eq + 1));
        if (!level) {
          throw UsageError{
              fmt::format("--severity '{}': level must be error, warning, note or off", value)};
        }
        const Code code = parse_code(value.substr(0, eq));
        if (const auto why = refuse_override(code, *level)) {
          throw UsageError{fmt::format("--severity {}: {}", value, *why)};
        }
        options.severity_overrides[code] = *level;
        break;
      }
    }
  }
  for (const auto& spec : args.limits) apply_limit(options.limits, spec);
  options.data.enabled = args.data;
  options.model_checks = args.model_checks;
  options.template_checks = args.template_checks;
  options.base_model = checked_base(args.base);
  require_one_of("--data-read", args.data_read, {"map", "pread"}, "a way to read");
  options.data.read = args.data_read == "pread" ? DataCheck::Read::Pread : DataCheck::Read::Map;
  const auto timeout = parse_unsigned(args.timeout);
  if (!timeout || *timeout < 1 || *timeout > 3600) {
    throw UsageError{
        fmt::format("--timeout: '{}' is not a number of seconds (1..3600)", args.timeout)};
  }
  options.remote.timeout_seconds = static_cast<std::uint32_t>(*timeout);
  const auto retries = parse_unsigned(args.retries);
  if (!retries || *retries > 100) {
    throw UsageError{
        fmt::format("--retries: '{}' is not a number of retries (0..100)", args.retries)};
  }
  options.remote.retries = static_cast<unsigned>(*retries);
  const auto deadline = parse_unsigned(args.deadline);
  if (!deadline || *deadline < 1 || *deadline > 604800) {
    throw UsageError{
        fmt::format("--deadline: '{}' is not a number of seconds (1..604800)", args.deadline)};
  }
  options.remote.deadline_seconds = static_cast<std::uint32_t>(*deadline);
  return options;
}

// The progress line of a data scan, on stderr: rewritten in place on a terminal, one line per
// second elsewhere (when asked for with --progress).
class ProgressLine {
 public:
  explicit ProgressLine(bool terminal) : terminal_(terminal) {}

  void show(const std::string& path, const DataProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (p.done == 0 || started_path_ != path) {
      started_path_ = path;
      start_ = now;
      last_ = {};
    }
    const bool end = p.done >= p.total;
    if (!end &&
        now - last_ < (terminal_ ? std::chrono::milliseconds(200) : std::chrono::seconds(1))) {
      return;
    }
    last_ = now;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double rate = seconds > 0 ? static_cast<double>(p.done) / seconds : 0;
    std::string eta = "--:--";
    if (rate > 0 && !end) {
      const auto left =
          static_cast<unsigned long long>(static_cast<double>(p.total - p.done) / rate);
      eta = fmt::format("{}:{:02}", left / 60, left % 60);
    }
    const double percent =
        p.total == 0 ? 100.0 : 100.0 * static_cast<double>(p.done) / static_cast<double>(p.total);
    std::string line =
        fmt::format("{}: data {} of {} ({:.0f}%), {}/s, ETA {}{}{}", path, size_text(p.done),
                    size_text(p.total), percent, size_text(static_cast<std::uint64_t>(rate)), eta,
                    p.tensor.empty() ? "" : ", ", p.tensor);
    if (terminal_) {
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
      if (end) std::fputs("\r\033[K", stderr);  // the report follows on stdout: leave no line
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

 private:
  static std::string size_text(std::uint64_t bytes) {
    constexpr std::array kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
    auto value = static_cast<double>(bytes);
    std::size_t unit = 0;
    while (value >= 1024 && unit + 1 < kUnits.size()) {
      value /= 1024;
      ++unit;
    }
    return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, kUnits[unit]);
  }

  bool terminal_;
  std::string started_path_;
  std::chrono::steady_clock::time_point start_{};
  std::chrono::steady_clock::time_point last_{};
};

int run_check(const CheckArgs& args) {
  require_one_of("--format", args.format, {"text", "json", "sarif", "github"}, "a format");
  require_one_of("--color", args.color, {"auto", "always", "never"}, "a colour mode");
  const std::string jobs_text = args.jobs.value_or(args.data ? "0" : "1");
  const auto jobs_arg = parse_unsigned(jobs_text);
  if (!jobs_arg || *jobs_arg > 1024) {
    throw UsageError{fmt::format("--jobs: '{}' is not a number of threads (0..1024)", jobs_text)};
  }
  Options options = make_options(args);
  if (args.paths.empty()) {
    throw UsageError{"no input: give GGUF files or directories (see 'ggufcheck --help')"};
  }
  const std::vector<Job> work = jobs_of(expand_inputs(args.paths), options.model_checks);
  std::vector<SetReports> done(work.size());
  // With --data, files are checked one after another, each scan on N threads (reading one file
  // front to back is what the disk and the page cache do best); without, N files (or split
  // sets) at once.
  const auto requested = static_cast<unsigned>(*jobs_arg);
  options.helper_thread = !(args.jobs && requested == 1);  // -j 1: one thread, nothing beside it
  unsigned jobs = 1;
  if (args.data) {
    options.data.threads = requested;
    options.data.cancel = &g_interrupted;
    catch_interrupts();
  } else {
    // A set keeps two files mapped at once and the SIGBUS guard has room for 1024 mappings.
    jobs =
        std::clamp<unsigned>(requested == 0 ? std::thread::hardware_concurrency() : requested, 1,
                             static_cast<unsigned>(std::clamp<std::size_t>(work.size(), 1, 512)));
  }
  const bool progress = args.data && args.progress.value_or(::isatty(STDERR_FILENO) != 0);
  ProgressLine line(::isatty(STDERR_FILENO) != 0);
  ShardProgress shard_progress;
  if (progress) {
    shard_progress = [&line](const std::string& path, const DataProgress& p) {
      line.show(path == "-" ? "<stdin>" : path, p);
    };
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < work.size() && !g_interrupted; i = next++) {
      if (!work[i].problem.empty()) {
        done[i].reports.push_back(unreadable_report(work[i].paths[0], work[i].problem));
      } else {
        done[i] = validate_set(work[i].paths, options, shard_progress);
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  // Shards named outside the pattern, each validated alone, given together: one set in the
  // order given, as llama_model_load_from_splits loads its list (read again as that set).
  std::vector<std::size_t> lone;
  for (std::size_t i = 0; i < done.size(); ++i) {
    if (done[i].lone_shard) lone.push_back(i);
  }
  if (lone.size() > 1 && !g_interrupted) {
    std::vector<std::string> paths;
    for (const std::size_t i : lone) paths.push_back(work[i].paths[0]);
    done[lone[0]] = validate_set(paths, options, shard_progress);
    for (std::size_t j = 1; j < lone.size(); ++j) done[lone[j]].reports.clear();
  }
  std::vector<Report> reports;
  for (SetReports& d : done) {
    for (Report& r : d.reports) reports.push_back(std::move(r));
  }

  // Interrupted: no report at all, not even of the files already checked, so that nothing
  // partial can be read as a verdict.
  if (g_interrupted ||
      std::any_of(reports.begin(), reports.end(), [](const Report& r) { return r.interrupted; })) {
    std::fputs("ggufcheck: interrupted; no report was written\n", stderr);
    return kExitInterrupted;
  }

  int status = 0;
  for (const Report& r : reports) status = std::max(status, r.exit_status());

  if (args.format == "json") {
    emit(render_json(reports, options, status));
  } else if (args.format == "sarif") {
    SarifOptions sarif;
    sarif.help_base = args.sarif_help_base;
    sarif.root = args.sarif_root;
    emit(render_sarif(reports, options, sarif));
  } else if (args.format == "github") {
    emit(render_github(reports));
  } else {
    const TextStyle style{use_color(args.color), args.quiet};
    for (const Report& r : reports) emit(render_text(r, style));
    // The total of a run over several files, after the per-file summaries; --quiet prints
    // errors only, so no total either.
    if (reports.size() > 1 && !args.quiet) emit(render_text_total(reports, style));
  }
  for (const Report& r : reports) {
    if (r.unreadable() && (args.format == "json" || args.format == "sarif")) {
      for (const Finding& f : r.findings) {
        if (f.code == Code::UnreadableFile)
          std::fprintf(stderr, "ggufcheck: %s\n", shown_name(f.message).c_str());
      }
    }
  }
  return status;
}

}  // namespace

Command add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  CheckArgs& check = *args;
  auto* cmd_check = app.add_subcommand(
      "check", "Validate files (the default subcommand: 'ggufcheck model.gguf' works too)");
  cmd_check->allow_extras();
  cmd_check
      ->add_option("paths", check.paths,
                   "GGUF files; directories are searched recursively for *.gguf (hidden "
                   "entries and links included; what cannot be read is reported); '-' "
                   "reads standard input; https:// and http:// URLs, and hf://OWNER/REPO/FILE "
                   "(hf://OWNER/REPO@REVISION/FILE) for the Hugging Face Hub, are read by range "
                   "requests, the metadata and tensor infos only (HF_TOKEN is sent to the Hub; "
                   "docs/remote.md). A shard <prefix>-00002-of-00003.gguf checks its whole "
                   "split set, once however many of its shards are given")
      ->type_name("PATH");
  take_last(cmd_check->add_option("--profile", check.profile,
                                  "strict (default: the CI gate), spec (what the GGUF "
                                  "specification requires) or llama.cpp (errors exactly where "
                                  "llama.cpp fails to load)"),
            "PROFILE");
  take_last(cmd_check->add_option("--format", check.format,
                                  "Output: text (default), json, sarif, or github (GitHub Actions "
                                  "workflow commands: an annotation per finding)"),
            "FORMAT");
  cmd_check->add_flag("--werror", check.werror, "Treat warnings as errors");
  cmd_check
      ->add_option_function<std::string>(
          "--disable",
          [&check](const std::string& v) {
            check.overrides.emplace_back(CheckArgs::Kind::Disable, v);
          },
          "Silence a diagnostic (code or name); repeatable. A code that means the file "
          "cannot be read as GGUF (GGUF0001, GGUF0002, the header's GGUF1001-GGUF1004 and "
          "GGUF1007, truncations, unknown types, impossible counts and layouts: `ggufcheck list` "
          "marks them) cannot be disabled or downgraded: that is a usage error (exit 3)")
      ->type_name("CODE")
      ->allow_extra_args(false)
      ->trigger_on_parse();
  cmd_check
      ->add_option_function<std::string>(
          "--enable",
          [&check](const std::string& v) {
            check.overrides.emplace_back(CheckArgs::Kind::Enable, v);
          },
          "Report a diagnostic at the profile's severity, or as a warning if the "
          "profile keeps it silent; repeatable")
      ->type_name("CODE")
      ->allow_extra_args(false)
      ->trigger_on_parse();
  cmd_check
      ->add_option_function<std::string>(
          "--severity",
          [&check](const std::string& v) {
            check.overrides.emplace_back(CheckArgs::Kind::Severity, v);
          },
          "Set a diagnostic's severity: CODE=error|warning|note|off; repeatable. "
          "Of --disable, --enable and --severity the last one of a code wins")
      ->type_name("CODE=LEVEL")
      ->allow_extra_args(false)
      ->trigger_on_parse();
  cmd_check
      ->add_option("--limit", check.limits,
                   "Resource limit NAME=VALUE: depth (array nesting, default 64, max 1024), "
                   "kv-count, tensor-count, string-length, array-length (default unlimited; "
                   "exceeding one reports GGUF0002), findings (kept per file, default 10000), "
                   "template-bytes (the largest chat template read, default 4194304; it also "
                   "scales the work budget of a file's chat templates, GGUF0002 past it)")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  take_last(cmd_check->add_option(
                "-j,--jobs,--threads", check.jobs,
                "Threads. With --data: the threads of each file's data scan (default 0: one per "
                "core), files one after another. Without: N files validated in parallel "
                "(default 1; 0: one per core). A vocabulary of 16,384 tokens or more is indexed on "
                "a second thread while the file is read; an explicit -j 1 keeps everything on one "
                "(the findings are the same)"),
            "N");
  cmd_check->add_flag("--data,--check-tensors", check.data,
                      "Also read every tensor's bytes: NaN and infinite values in float tensors, "
                      "non-finite block scales in quantized ones (what llama.cpp's "
                      "--check-tensors rejects), q8_1 tensors, ambiguous nvfp4 scale bytes, "
                      "all-zero tensors (GGUF6001-GGUF6005)");
  cmd_check->add_flag("!--no-model-checks", check.model_checks,
                      "Check the container (and with --data the tensor data) only, not whether "
                      "llama.cpp's model loader accepts the model: its architecture keys, "
                      "vocabulary, tensor set and split set (GGUF7xxx, GGUF8xxx). For container "
                      "fixtures, partial files and parser conformance");
  take_last(cmd_check->add_option(
                "--base", check.base,
                "A LoRA adapter's base model (a local GGUF file): adapters are checked against "
                "it as llama_adapter_lora_init loads them (architecture, tensor names and "
                "shapes). Without it an adapter gets the checks that need no base and "
                "GGUF7020 adapter-base-not-given. Other files ignore it"),
            "MODEL");
  cmd_check->add_flag("!--no-template-checks", check.template_checks,
                      "Do not read the chat templates (tokenizer.chat_template*) as Jinja: no "
                      "GGUF9001-GGUF9016. For comparing the container with readers that take a "
                      "template as a plain string");
  // Not add_flag(..., check.progress): CLI11 2.1 binds a std::optional<bool> as a counter and
  // sets it to false at registration, which made the default "off" even on a terminal.
  cmd_check
      ->add_flag_function(
          "--progress,!--no-progress", [&check](std::int64_t n) { check.progress = n > 0; },
          "With --data: a progress line on stderr (default: when stderr is a terminal)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  take_last(cmd_check->add_option("--data-read", check.data_read,
                                  "With --data: how a file's bytes are read: pread (default: "
                                  "into a buffer per thread) or map (through the mapping, "
                                  "released behind the scan)"),
            "HOW");
  cmd_check->add_flag("-q,--quiet", check.quiet, "Text output: print errors only, no summaries");
  take_last(
      cmd_check->add_option(
          "--color", check.color,
          "Colour text output: auto (default: on a terminal; NO_COLOR turns it off, FORCE_COLOR or "
          "CLICOLOR_FORCE on), always, never"),
      "WHEN");
  take_last(cmd_check->add_option("--timeout", check.timeout,
                                  "Remote files: seconds to connect, and a transfer slower than "
                                  "1 KiB/s for this long is a stall (default 30)"),
            "SECONDS");
  take_last(cmd_check->add_option("--retries", check.retries,
                                  "Remote files: further tries of a request after a transient "
                                  "failure (a failed connection, a 5xx, a 429), with a backoff "
                                  "from 0.5 s doubling to 8 s, or the server's Retry-After up to "
                                  "60 s (default 3)"),
            "N");
  take_last(cmd_check->add_option(
                "--deadline", check.deadline,
                "Remote files: the whole reading of a URL, or of a split set by URL with all its "
                "shards (every request, retry, wait and trickle, the tensor data with --data), "
                "ends within this many seconds; what is not read by then is unreadable "
                "(GGUF0001, exit status 2), never a pass (default 600, at most 604800). A set's "
                "later shards are fetched 4 at a time, no more of them than the first shard's "
                "split.count; a URL's metadata is kept up to 512 MiB (GGUF0002 past it)"),
            "SECONDS");
  take_last(cmd_check->add_option("--sarif-help-base", check.sarif_help_base,
                                  "SARIF: the URL each rule's helpUri starts with (the page "
                                  "GGUFnnnn.md is appended)"),
            "URL");
  take_last(cmd_check->add_option("--sarif-root", check.sarif_root,
                                  "SARIF: artifact URIs relative to DIR (uriBaseId SRCROOT) "
                                  "instead of absolute file:// URIs"),
            "DIR");
  return {cmd_check, [args] { return run_check(*args); }};
}

}  // namespace ggufcheck::cli
