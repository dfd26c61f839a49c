// ggufcheck: validate GGUF files. Exit status: 0 no error, 1 errors, 2 unreadable input,
// 3 usage error, 4 internal error (a report that could not be written among them); with several
// files the worst wins.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "ggufcheck/dump.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"

using namespace ggufcheck;

namespace {

constexpr int kExitUsage = 3;
constexpr int kExitInternal = 4;

struct UsageError {
  std::string message;
};

// ---------------------------------------------------------------------------------------------
// Standard output: every write is checked, and a report that could not be written is exit 4.

int g_write_error = 0;  // the first errno of a failed write to standard output

void emit(std::string_view text) {
  if (text.empty()) return;
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() && g_write_error == 0) {
    g_write_error = errno != 0 ? errno : EIO;
  }
}

// Flushes and closes standard output; returns the errno of the first failure, 0 if none.
int finish_stdout() {
  errno = 0;
  if (std::fflush(stdout) != 0 && g_write_error == 0) g_write_error = errno != 0 ? errno : EIO;
  if (std::ferror(stdout) != 0 && g_write_error == 0) g_write_error = EIO;
  errno = 0;
  if (std::fclose(stdout) != 0 && g_write_error == 0) g_write_error = errno != 0 ? errno : EIO;
  return g_write_error;
}

// A closed standard stream would let the next open() take its descriptor: a report then lands in
// (or fails against) a model file. Each closed one gets /dev/null opened the wrong way round, so
// using it fails (EBADF) instead of succeeding silently: a closed stdout is a write error, a
// closed stdin an unreadable '-'.
void occupy_closed_standard_descriptors() {
  const int modes[3] = {O_WRONLY, O_RDONLY, O_RDONLY};
  for (int fd = 0; fd < 3; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", modes[fd]);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Options

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
};

// "--profile: 'foo' is not a profile (strict, spec, llama.cpp)"
void require_one_of(const std::string& option, const std::string& value,
                    const std::vector<std::string>& allowed, const std::string& what) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  throw UsageError{
      fmt::format("{}: '{}' is not {} ({})", option, value, what, fmt::join(allowed, ", "))};
}

Code parse_code(const std::string& text) {
  const auto code = find_code(text);
  if (!code) throw UsageError{fmt::format("unknown diagnostic '{}' (see 'ggufcheck list')", text)};
  return *code;
}

std::optional<std::uint64_t> parse_unsigned(const std::string& text) {
  if (text.empty() || text[0] == '-' || text[0] == '+' || text[0] == ' ') return std::nullopt;
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size()) return std::nullopt;
  return v;
}

std::uint64_t parse_number(const std::string& name, const std::string& text) {
  const auto v = parse_unsigned(text);
  if (!v)
    throw UsageError{fmt::format("--limit {}: '{}' is not a non-negative number", name, text)};
  return *v;
}

void apply_limit(Limits& limits, const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos)
    throw UsageError{fmt::format("--limit '{}': expected NAME=VALUE", spec)};
  const std::string name = spec.substr(0, eq);
  const std::uint64_t value = parse_number(name, spec.substr(eq + 1));
  if (name == "depth") {
    if (value < 1 || value > kMaxDepthLimit) {
      throw UsageError{fmt::format("--limit depth must be between 1 and {}", kMaxDepthLimit)};
    }
    limits.max_depth = static_cast<std::uint32_t>(value);
  } else if (name == "kv-count") {
    limits.max_kv_count = value;
  } else if (name == "tensor-count") {
    limits.max_tensor_count = value;
  } else if (name == "string-length") {
    limits.max_string_length = value;
  } else if (name == "array-length") {
    limits.max_array_length = value;
  } else if (name == "findings") {
    limits.max_findings = value;
  } else if (name == "template-bytes") {
    limits.max_template_bytes = value;
  } else {
    throw UsageError{
        fmt::format("--limit: unknown limit '{}' (depth, kv-count, tensor-count, string-length, "
                    "array-length, findings, template-bytes)",
                    name)};
  }
}

const std::vector<std::string> kProfiles = {"strict", "spec", "llama.cpp"};

Options make_options(const CheckArgs& args) {
  require_one_of("--profile", args.profile, kProfiles, "a profile");
  Options options;
  options.profile = *parse_profile(args.profile);
  options.werror = args.werror;
  // The last of --disable/--enable/--severity for a code wins. --enable restores the profile's
  // severity of a code the profile reports, and makes one it keeps silent a warning.
  for (const auto& [kind, value] : args.overrides) {
    switch (kind) {
      case CheckArgs::Kind::Disable:
        options.severity_overrides[parse_code(value)] = Severity::Silent;
        break;
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
        options.severity_overrides[parse_code(value.substr(0, eq))] = *level;
        break;
      }
    }
  }
  for (const auto& spec : args.limits) apply_limit(options.limits, spec);
  options.data.enabled = args.data;
  options.model_checks = args.model_checks;
  options.template_checks = args.template_checks;
  require_one_of("--data-read", args.data_read, {"map", "pread"}, "a way to read");
  options.data.read = args.data_read == "pread" ? DataCheck::Read::Pread : DataCheck::Read::Map;
  return options;
}

// ---------------------------------------------------------------------------------------------
// Ctrl-C: a data scan stops at its next piece, and no report is printed (exit 130). A second
// Ctrl-C ends the process at once.

std::atomic<bool> g_interrupted{false};
constexpr int kExitInterrupted = 130;

extern "C" void on_interrupt(int) {
  if (g_interrupted.exchange(true)) ::_exit(kExitInterrupted);
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

// ---------------------------------------------------------------------------------------------
// Inputs: the directory walk. Nothing that could be a GGUF file is skipped without a report.
//
// - Every entry is looked at, hidden ones too; each directory's entries in byte order, and the
//   files of one command-line directory come out sorted by path.
// - A candidate is an entry whose name ends in ".gguf" (any case), or a symbolic link whose
//   target (resolved to the end of its chain) has such a name.
// - A regular-file candidate, directly or through a link, is validated (an open or read failure
//   is a GGUF0001 report). A candidate that cannot be stat'ed (a dangling link, a link loop,
//   EACCES) or that is not a regular file (a FIFO, socket or device: reading it could block
//   forever) is a GGUF0001 report, never opened.
// - Directories, and links to directories, are walked; each directory once, by (st_dev,
//   st_ino), so a link loop ends and a tree reached twice is reported once. A directory that
//   cannot be listed, and an entry that cannot be stat'ed whatever its name, is a GGUF0001
//   report with the OS error.
// - Dangling links and other entries whose names do not end in ".gguf" are not candidates.

struct Input {
  std::string path;
  std::string problem;  // non-empty: not validated, reported as unreadable
};

bool has_gguf_name(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  constexpr std::string_view kSuffix = ".gguf";
  if (name.size() < kSuffix.size()) return false;
  const std::string_view tail = name.substr(name.size() - kSuffix.size());
  return std::equal(tail.begin(), tail.end(), kSuffix.begin(), [](char a, char b) {
    return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
  });
}

std::string join_path(const std::string& dir, const std::string& name) {
  return !dir.empty() && dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string errno_problem(const char* what, const std::string& path, int error) {
  return fmt::format("cannot {} {}: {}", what, path, std::strerror(error));
}

const char* file_type_name(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "of an unknown type";
}

// Whether the link at `path` names a *.gguf file: its resolved target, or, when it does not
// resolve, the last component of what it points to.
bool link_target_has_gguf_name(const std::string& path) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) != nullptr) return has_gguf_name(resolved);
  char target[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
  if (n <= 0) return false;
  return has_gguf_name(std::string_view(target, static_cast<std::size_t>(n)));
}

void walk_directory(const std::string& root, std::vector<Input>& found) {
  std::set<std::pair<dev_t, ino_t>> walked;
  struct stat st {};
  if (::stat(root.c_str(), &st) == 0) walked.emplace(st.st_dev, st.st_ino);
  std::vector<std::string> pending = {root};
  while (!pending.empty()) {
    const std::string dir = std::move(pending.back());
    pending.pop_back();
    DIR* handle = ::opendir(dir.c_str());
    if (handle == nullptr) {
      found.push_back({dir, errno_problem("list directory", dir, errno)});
      continue;
    }
    std::vector<std::string> names;
    for (;;) {
      errno = 0;
      const dirent* entry = ::readdir(handle);
      if (entry == nullptr) {
        if (errno != 0) found.push_back({dir, errno_problem("list directory", dir, errno)});
        break;
      }
      const std::string_view name = entry->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    ::closedir(handle);
    std::sort(names.begin(), names.end());

    std::vector<std::string> subdirectories;
    for (const std::string& name : names) {
      const std::string path = join_path(dir, name);
      struct stat entry_st {};
      if (::lstat(path.c_str(), &entry_st) != 0) {
        const int error = errno;
        // Gone since the listing and not a candidate: nothing left to check.
        if (error != ENOENT || has_gguf_name(name)) {
          found.push_back({path, errno_problem("stat", path, error)});
        }
        continue;
      }
      bool candidate = has_gguf_name(name);
      if (S_ISLNK(entry_st.st_mode)) {
        candidate = candidate || link_target_has_gguf_name(path);
        if (::stat(path.c_str(), &entry_st) != 0) {
          if (candidate) found.push_back({path, errno_problem("open", path, errno)});
          continue;
        }
      }
      if (S_ISDIR(entry_st.st_mode)) {
        if (walked.emplace(entry_st.st_dev, entry_st.st_ino).second) {
          subdirectories.push_back(path);
        }
      } else if (!candidate) {
        continue;
      } else if (S_ISREG(entry_st.st_mode)) {
        found.push_back({path, ""});
      } else {
        found.push_back({path, fmt::format("cannot read {}: not a regular file ({}); "
                                           "give it directly to read it",
                                           path, file_type_name(entry_st.st_mode))});
      }
    }
    for (auto it = subdirectories.rbegin(); it != subdirectories.rend(); ++it) {
      pending.push_back(std::move(*it));
    }
  }
}

// Expands directories into their *.gguf files. A directory without one becomes an entry that
// reports why.
std::vector<Input> expand_inputs(const std::vector<std::string>& paths) {
  std::vector<Input> inputs;
  for (const std::string& path : paths) {
    struct stat st {};
    if (path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      inputs.push_back({path, ""});
      continue;
    }
    std::vector<Input> found;
    walk_directory(path, found);
    if (found.empty()) {
      inputs.push_back({path, fmt::format("no *.gguf files found under directory {}", path)});
      continue;
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const Input& a, const Input& b) { return a.path < b.path; });
    for (auto& f : found) inputs.push_back(std::move(f));
  }
  return inputs;
}

// What the workers validate, in input order: a file alone, a split set's shards by name
// (group_inputs: a set once, where one of its shards comes first), or an input the walk could
// not read. A walk's problem with a shard of a set listed is the set's to report (a missing
// shard, a FIFO), so it is left out.
struct Job {
  std::vector<std::string> paths;
  std::string problem;  // non-empty: not validated, reported as unreadable (paths[0])
};

std::vector<Job> jobs_of(const std::vector<Input>& inputs, bool sets) {
  std::vector<Job> jobs;
  if (!sets) {
    for (const Input& input : inputs) jobs.push_back({{input.path}, input.problem});
    return jobs;
  }
  std::vector<std::string> readable;
  for (const Input& input : inputs) {
    if (input.problem.empty()) readable.push_back(input.path);
  }
  std::vector<std::vector<std::string>> groups = group_inputs(readable);
  std::set<std::string> in_sets;
  for (const auto& group : groups) {
    if (group.size() > 1) in_sets.insert(group.begin(), group.end());
  }
  // group_inputs keeps the order of first mention: each readable input either starts the next
  // group or belongs to a set listed before.
  std::size_t next = 0;
  for (const Input& input : inputs) {
    if (!input.problem.empty()) {
      if (in_sets.count(input.path) == 0) jobs.push_back({{input.path}, input.problem});
      continue;
    }
    if (next < groups.size() &&
        std::find(groups[next].begin(), groups[next].end(), input.path) != groups[next].end()) {
      jobs.push_back({std::move(groups[next++]), ""});
    }
  }
  return jobs;
}

// --color auto: FORCE_COLOR or CLICOLOR_FORCE (non-empty, not "0") colour even a pipe; else
// NO_COLOR (non-empty) or TERM=dumb turn colour off; else colour when stdout is a terminal.
bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const auto set = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
  };
  if (set("FORCE_COLOR") || set("CLICOLOR_FORCE")) return true;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return ::isatty(STDOUT_FILENO) != 0;
}

int run_check(const CheckArgs& args) {
  require_one_of("--format", args.format, {"text", "json", "sarif"}, "a format");
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
    // Without SA_RESTART: a read of a stream that waits for bytes returns, and the scan stops.
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    (void)::sigaction(SIGINT, &action, nullptr);
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
  } else {
    const TextStyle style{use_color(args.color), args.quiet};
    for (const Report& r : reports) emit(render_text(r, style));
    // The total of a run over several files, after the per-file summaries; --quiet prints
    // errors only, so no total either.
    if (reports.size() > 1 && !args.quiet) emit(render_text_total(reports, style));
  }
  for (const Report& r : reports) {
    if (r.unreadable() && args.format != "text") {
      for (const Finding& f : r.findings) {
        if (f.code == Code::UnreadableFile)
          std::fprintf(stderr, "ggufcheck: %s\n", shown_name(f.message).c_str());
      }
    }
  }
  return status;
}

// ---------------------------------------------------------------------------------------------
// The command line

const std::vector<std::string> kSubcommands = {"check", "list", "explain", "dump", "help"};

// Optimal string alignment distance (Levenshtein with adjacent transpositions).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// `ggufcheck FILE` means `ggufcheck check FILE`; a first word that is neither a path nor a
// subcommand but is close to one is a usage error with a suggestion.
std::vector<std::string> with_default_subcommand(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  static const std::vector<std::string> kFirst = {"check", "list", "explain", "dump",
                                                  "help",  "-h",   "--help",  "--version"};
  if (args.empty() || std::find(kFirst.begin(), kFirst.end(), args[0]) == kFirst.end()) {
    struct stat st {};
    if (!args.empty() && !args[0].empty() && args[0][0] != '-' && args[0].size() <= 64 &&
        ::lstat(args[0].c_str(), &st) != 0) {
      std::size_t best = 3;
      std::string suggestion;
      for (const std::string& sub : kSubcommands) {
        const std::size_t d = edit_distance(args[0], sub);
        if (d < best) {
          best = d;
          suggestion = sub;
        }
      }
      if (!suggestion.empty()) {
        throw UsageError{fmt::format("'{}' is neither a file nor a subcommand; did you mean '{}'?",
                                     args[0], suggestion)};
      }
    }
    args.insert(args.begin(), "check");
  }
  if (args[0] == "help") args[0] = "--help";
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
  return args;
}

// CLI11's exceptions in ggufcheck's own words.
std::string usage_message(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    const std::size_t colon = what.find(':');
    const std::size_t space = what.find(' ');
    if (!what.empty() && what[0] == '-' && colon != std::string::npos && colon < space) {
      return fmt::format("{} needs a value", what.substr(0, colon));
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    if (what.rfind("code ", 0) == 0) return "explain needs a code or a name (see 'ggufcheck list')";
    if (what.rfind("file ", 0) == 0) return "dump needs a file";
  }
  return fmt::format("{} (see 'ggufcheck --help')", what);
}

// Arguments no option or positional took.
void reject_leftovers(const CLI::App& app) {
  for (const std::string& arg : app.remaining(true)) {
    if (arg == "--") continue;  // the end of the options, kept by CLI11 among the extras
    if (arg.size() > 1 && arg[0] == '-') {
      const std::string name = arg.substr(0, arg.find('='));
      throw UsageError{fmt::format("unknown option '{}' (see 'ggufcheck --help')", name)};
    }
    throw UsageError{fmt::format("unexpected argument '{}' (see 'ggufcheck --help')", arg)};
  }
}

// A single-value option: given twice, the last one wins.
CLI::Option* take_last(CLI::Option* option, const std::string& type_name) {
  return option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->type_name(type_name);
}

int run(int argc, char** argv) {
  CLI::App app{
      "ggufcheck: a strict, bounds-checked validator for GGUF model files.\n"
      "Exit status: 0 no error, 1 errors found, 2 an input could not be read, 3 usage error,\n"
      "4 internal error (or the report could not be written); with several files the worst "
      "wins.",
      "ggufcheck"};
  app.set_version_flag("--version", std::string("ggufcheck ") + std::string(tool_version()));
  app.require_subcommand(1);
  app.allow_extras();
  CheckArgs check;
  auto* cmd_check = app.add_subcommand(
      "check", "Validate files (the default subcommand: 'ggufcheck model.gguf' works too)");
  cmd_check->allow_extras();
  cmd_check
      ->add_option("paths", check.paths,
                   "GGUF files; directories are searched recursively for *.gguf (hidden "
                   "entries and links included; what cannot be read is reported); '-' "
                   "reads standard input. A shard <prefix>-00002-of-00003.gguf checks its whole "
                   "split set, once however many of its shards are given")
      ->type_name("PATH");
  take_last(cmd_check->add_option("--profile", check.profile,
                                  "strict (default: the CI gate), spec (what the GGUF "
                                  "specification requires) or llama.cpp (errors exactly where "
                                  "llama.cpp fails to load)"),
            "PROFILE");
  take_last(
      cmd_check->add_option("--format", check.format, "Output: text (default), json or sarif"),
      "FORMAT");
  cmd_check->add_flag("--werror", check.werror, "Treat warnings as errors");
  cmd_check
      ->add_option_function<std::string>(
          "--disable",
          [&check](const std::string& v) {
            check.overrides.emplace_back(CheckArgs::Kind::Disable, v);
          },
          "Silence a diagnostic (code or name); repeatable")
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
                   "template-bytes (the largest chat template read, default 4194304)")
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
  cmd_check->add_flag("!--no-template-checks", check.template_checks,
                      "Do not read the chat templates (tokenizer.chat_template*) as Jinja: no "
                      "GGUF9001-GGUF9016. For comparing the container with readers that take a "
                      "template as a plain string");
  cmd_check->add_flag("--progress,!--no-progress", check.progress,
                      "With --data: a progress line on stderr (default: when stderr is a "
                      "terminal)");
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
  take_last(cmd_check->add_option("--sarif-help-base", check.sarif_help_base,
                                  "SARIF: the URL each rule's helpUri starts with (the page "
                                  "GGUFnnnn.md is appended)"),
            "URL");
  take_last(cmd_check->add_option("--sarif-root", check.sarif_root,
                                  "SARIF: artifact URIs relative to DIR (uriBaseId SRCROOT) "
                                  "instead of absolute file:// URIs"),
            "DIR");

  std::string list_format = "text";
  auto* cmd_list =
      app.add_subcommand("list", "List every diagnostic with its severity per profile");
  cmd_list->allow_extras();
  take_last(cmd_list->add_option("--format", list_format, "text (default) or json"), "FORMAT");

  std::string explain_what;
  auto* cmd_explain = app.add_subcommand(
      "explain",
      "Print a diagnostic's page (docs/diagnostics/): what it means, why it matters, an example, "
      "how to fix the writer");
  cmd_explain->allow_extras();
  cmd_explain->add_option("code", explain_what, "A code or a name: GGUF4001 or misaligned-offset")
      ->required();

  std::string dump_path;
  std::string dump_level = "2";
  std::string dump_profile = "strict";
  auto* cmd_dump = app.add_subcommand(
      "dump",
      "Print the canonical JSON of a file (the conformance suite's output, docs/dump.md): "
      "exit 0 accepted, 1 rejected ({\"ok\": false} with the errors), 2 unreadable");
  cmd_dump->allow_extras();
  cmd_dump->add_option("file", dump_path, "A GGUF file; '-' reads standard input")->required();
  take_last(cmd_dump->add_option("--level", dump_level,
                                 "0 verdict, 1 + header and counts, 2 + metadata and tensor "
                                 "infos (default), 3 + SHA-256 of each tensor's data; L0..L3 "
                                 "work too"),
            "LEVEL");
  take_last(cmd_dump->add_option("--profile", dump_profile,
                                 "The profile whose verdict decides acceptance: strict "
                                 "(default), spec or llama.cpp"),
            "PROFILE");

  // After the subcommands, which would inherit it.
  app.footer(
      "'ggufcheck FILE...' is 'ggufcheck check FILE...'. Run 'ggufcheck SUBCOMMAND --help' for "
      "the options of each subcommand.");

  std::vector<std::string> args = with_default_subcommand(argc, argv);
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    const auto subcommands = app.get_subcommands();
    if (subcommands.empty()) {
      // The top level: the subcommands, then the options of the default one.
      emit(app.help());
      emit("\n");
      emit(cmd_check->help("ggufcheck"));
    } else {
      emit(subcommands.front()->help("ggufcheck"));
    }
    return 0;
  } catch (const CLI::CallForVersion& e) {
    emit(e.what());
    emit("\n");
    return 0;
  } catch (const CLI::ParseError& e) {
    throw UsageError{usage_message(e)};
  }
  reject_leftovers(app);

  if (cmd_list->parsed()) {
    require_one_of("--format", list_format, {"text", "json"}, "a format of 'list'");
    emit(list_format == "json" ? render_catalogue_json() : render_catalogue_text());
    return 0;
  }
  if (cmd_explain->parsed()) {
    emit(render_explanation(parse_code(explain_what)));
    return 0;
  }
  if (cmd_dump->parsed()) {
    require_one_of("--level", dump_level, {"0", "1", "2", "3", "L0", "L1", "L2", "L3"}, "a level");
    require_one_of("--profile", dump_profile, kProfiles, "a profile");
    Options options;
    options.profile = *parse_profile(dump_profile);
    const auto level = static_cast<DumpLevel>(dump_level.back() - '0');
    // Streamed as it is rendered; a write that fails stops it, and main() makes that exit 4.
    return dump_file(dump_path, options, level, [](std::string_view text) {
      emit(text);
      return g_write_error == 0;
    });
  }
  return run_check(check);
}

int run_guarded(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ggufcheck: %s\n", e.message.c_str());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufcheck: internal error: %s\n", e.what());
    return kExitInternal;
  } catch (...) {
    std::fprintf(stderr, "ggufcheck: internal error\n");
    return kExitInternal;
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A reader that goes away is a write error (EPIPE, exit 4), not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  occupy_closed_standard_descriptors();
  const int status = run_guarded(argc, argv);
  if (const int error = finish_stdout(); error != 0) {
    std::fprintf(stderr, "ggufcheck: cannot write the report: %s\n", std::strerror(error));
    return kExitInternal;
  }
  return status;
}
