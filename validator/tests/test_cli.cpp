// The command-line tool, run as a real process (fork and execve; arguments passed as an argv
// vector, never through a shell): exit statuses, the default subcommand, inputs (files,
// directories, standard input), options, output formats, `list`, `explain`, and the rule that
// bad input gives one line on standard error and never a crash.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/writer.hpp"
#include "test_support.hpp"

extern char** environ;  // NOLINT: POSIX

namespace ggufcheck::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Running the CLI
//
// No deadline: a CLI that hangs (say, on a FIFO it should not have opened) hangs its test, and
// ctest's TIMEOUT fails it and kills the process tree. No test measures time.

struct RunResult {
  bool exited = false;  // false: killed by a signal
  int status = -1;      // exit status when exited
  int signal = 0;       // the signal when not exited
  std::string out, err;
};

std::ostream& operator<<(std::ostream& os, const RunResult& r) {
  os << "exited=" << r.exited << " status=" << r.status << " signal=" << r.signal
     << "\n--- stdout ---\n"
     << r.out.substr(0, 4000) << "\n--- stderr ---\n"
     << r.err.substr(0, 4000);
  return os;
}

// The unprivileged user the permission tests run the CLI as when the tests run as root.
constexpr uid_t kNobody = 65534;

struct RunOptions {
  std::optional<std::string> stdin_data;                  // written through a pipe
  std::optional<fs::path> stdin_file;                     // opened and given as standard input
  std::map<std::string, std::optional<std::string>> env;  // set (value) or unset (nullopt)
  int stdout_fd = -1;         // when >= 0: given as standard output instead of a capture pipe
  bool close_stdout = false;  // run with standard output closed
  std::optional<fs::path> cwd;
  // Run as uid/gid 65534 ("nobody", no supplementary groups) when the tests run as root, so
  // file modes apply; as the current user otherwise. The files must be reachable by it
  // (TempDir::share) and the CLI is run from a copy it can execute (unprivileged_cli()).
  bool unprivileged = false;
};

RunOptions stdin_bytes(std::string data) {
  RunOptions options;
  options.stdin_data = std::move(data);
  return options;
}
RunOptions stdin_from(const fs::path& file) {
  RunOptions options;
  options.stdin_file = file;
  return options;
}
RunOptions in_directory(const fs::path& dir) {
  RunOptions options;
  options.cwd = dir;
  return options;
}
RunOptions unprivileged() {
  RunOptions options;
  options.unprivileged = true;
  return options;
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The environment of the test, without the variables that change the CLI's colour (a CI runner
// may set FORCE_COLOR), then the test's own settings.
std::vector<std::string> make_environment(const RunOptions& options) {
  static const std::set<std::string> kColour = {"NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE"};
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (options.env.count(name) == 0 && kColour.count(name) == 0) env.push_back(entry);
  }
  for (const auto& [name, value] : options.env) {
    if (value) env.push_back(name + "=" + *value);
  }
  return env;
}

// A copy of the CLI in a directory every user can enter, for runs as "nobody" (the build tree
// may sit under a directory only root can enter). Made once, removed at exit.
class UnprivilegedCli {
 public:
  explicit UnprivilegedCli(const fs::path& base) {
    std::string pattern = (base / "ggufcheck-cli-bin-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    fs::permissions(dir_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    path_ = dir_ / "ggufcheck";
    fs::copy_file(GGUFCHECK_CLI_PATH, path_);
    fs::permissions(path_, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                               fs::perms::others_read | fs::perms::others_exec);
  }
  ~UnprivilegedCli() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  UnprivilegedCli(const UnprivilegedCli&) = delete;
  UnprivilegedCli& operator=(const UnprivilegedCli&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path dir_, path_;
};

const fs::path& unprivileged_cli() {
  static const UnprivilegedCli cli(shared_temp_root().value_or(fs::temp_directory_path()));
  return cli.path();
}

// Why a test that runs the CLI as another user cannot run here, or nothing: as root it needs a
// directory that user can reach, for the copy of the CLI and the test's files.
std::optional<std::string> cannot_run_unprivileged() {
  if (::geteuid() != 0) return std::nullopt;  // runs as the current user: modes apply already
  if (!shared_temp_root()) {
    return std::string("no temporary directory that uid ") + std::to_string(kNobody) +
           " can reach (TMPDIR, /tmp, /var/tmp and /dev/shm are all closed to other users)";
  }
  return std::nullopt;
}

// The directory of a test whose files another user reads: where that user can reach it.
fs::path shared_base() {
  return ::geteuid() == 0 ? shared_temp_root().value_or(fs::temp_directory_path())
                          : fs::temp_directory_path();
}

// In the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void child_fail(const char* what) {
  const int error = errno;
  const char prefix[] = "test runner: ";
  (void)!::write(2, prefix, sizeof prefix - 1);
  (void)!::write(2, what, std::strlen(what));
  (void)!::write(2, ": ", 2);
  const char* text = std::strerror(error);
  (void)!::write(2, text, std::strlen(text));
  (void)!::write(2, "\n", 1);
  ::_exit(127);
}

// Runs the CLI with exactly these arguments (fork and execve, never a shell), feeding standard
// input, capturing both outputs.
RunResult run_cli(const std::vector<std::string>& args, const RunOptions& options = {}) {
  RunResult result;
  int in_pipe[2] = {-1, -1}, out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  int in_file = -1;
  const bool capture_stdout = options.stdout_fd < 0 && !options.close_stdout;
  if (options.stdin_data && ::pipe2(in_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  if (capture_stdout && ::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  if (options.stdin_file) {
    in_file = ::open(options.stdin_file->c_str(), O_RDONLY | O_CLOEXEC);
    if (in_file < 0) throw std::runtime_error("cannot open " + options.stdin_file->string());
  }
  const bool drop = options.unprivileged && ::geteuid() == 0;
  const std::string cli = drop ? unprivileged_cli().string() : std::string(GGUFCHECK_CLI_PATH);

  // Everything the child needs, prepared before fork.
  std::vector<std::string> argv_storage;
  argv_storage.push_back(cli);
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = make_environment(options);
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int stdin_fd = options.stdin_data ? in_pipe[0] : in_file;
  const int stdout_fd = options.stdout_fd >= 0 ? options.stdout_fd : out_pipe[1];
  const std::string cwd = options.cwd ? options.cwd->string() : std::string();

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    if (stdin_fd >= 0) {
      if (::dup2(stdin_fd, 0) < 0) child_fail("dup2 stdin");
    } else {
      const int null = ::open("/dev/null", O_RDONLY);
      if (null < 0 || ::dup2(null, 0) < 0) child_fail("/dev/null");
    }
    if (options.close_stdout) {
      ::close(1);
    } else if (::dup2(stdout_fd, 1) < 0) {
      child_fail("dup2 stdout");
    }
    if (::dup2(err_pipe[1], 2) < 0) child_fail("dup2 stderr");
    // The CLI must survive a closed pipe on its own: give it the default SIGPIPE action.
    ::signal(SIGPIPE, SIG_DFL);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0) child_fail("chdir");
    if (drop) {
      if (::setgroups(0, nullptr) != 0) child_fail("setgroups");
      if (::setgid(kNobody) != 0) child_fail("setgid");
      if (::setuid(kNobody) != 0) child_fail("setuid");
    }
    ::execve(cli.c_str(), argv.data(), envp.data());
    child_fail("execve");
  }
  close_fd(in_pipe[0]);
  close_fd(out_pipe[1]);
  close_fd(err_pipe[1]);
  close_fd(in_file);

  // Feed standard input and drain both outputs together, so no pipe can fill up and block.
  std::size_t written = 0;
  const std::string input = options.stdin_data.value_or("");
  if (in_pipe[1] >= 0 && input.empty()) close_fd(in_pipe[1]);
  if (in_pipe[1] >= 0) ::fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
  char buffer[1 << 16];
  while (out_pipe[0] >= 0 || err_pipe[0] >= 0 || in_pipe[1] >= 0) {
    std::vector<pollfd> fds;
    if (in_pipe[1] >= 0) fds.push_back({in_pipe[1], POLLOUT, 0});
    if (out_pipe[0] >= 0) fds.push_back({out_pipe[0], POLLIN, 0});
    if (err_pipe[0] >= 0) fds.push_back({err_pipe[0], POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in_pipe[1]) {
        if ((p.revents & (POLLERR | POLLHUP)) != 0) {
          close_fd(in_pipe[1]);
          continue;
        }
        const ssize_t n = ::write(in_pipe[1], input.data() + written, input.size() - written);
        if (n > 0) written += static_cast<std::size_t>(n);
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || written == input.size())
          close_fd(in_pipe[1]);
        continue;
      }
      const ssize_t n = ::read(p.fd, buffer, sizeof buffer);
      if (n > 0) {
        (p.fd == out_pipe[0] ? result.out : result.err).append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        if (p.fd == out_pipe[0]) {
          close_fd(out_pipe[0]);
        } else {
          close_fd(err_pipe[0]);
        }
      }
    }
  }
  close_fd(in_pipe[1]);
  close_fd(out_pipe[0]);
  close_fd(err_pipe[0]);

  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus)) {
    result.exited = true;
    result.status = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    result.signal = WTERMSIG(wstatus);
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Files

fs::path source_dir() {
  return GGUFCHECK_SOURCE_DIR;
}
std::string example(const std::string& name) {
  return (source_dir() / "examples" / name).string();
}

// Passes strict with no finding at all.
ByteVector valid_bytes() {
  return write_bytes(model_document());
}

// A bool byte of 2: an error in strict and spec, silent in llama.cpp.
Document bool2_document() {
  Document doc = model_document();
  doc.metadata.push_back({"general.flag", Value::bool_byte(2), {}});
  return doc;
}
ByteVector bool2_bytes() {
  return write_bytes(bool2_document());
}

// An unconventional key: a warning in strict, an error in spec, silent in llama.cpp.
Document warning_document() {
  Document doc = model_document();
  doc.metadata.push_back({"General.Odd_Key", Value::u32(7), {}});
  return doc;
}
ByteVector warning_bytes() {
  return write_bytes(warning_document());
}

// One error (the bool) and one warning (the key) in strict.
ByteVector error_and_warning_bytes() {
  Document doc = bool2_document();
  doc.metadata.push_back({"General.Odd_Key", Value::u32(7), {}});
  return write_bytes(doc);
}

// Arrays nested three deep: legal in the spec profile (nested-array is silent there).
ByteVector nested3_bytes() {
  Document doc = model_document();
  Value inner = Value::array(ValueType::Uint32, {Value::u32(1), Value::u32(2)});
  Value middle = Value::array(ValueType::Array, {inner});
  doc.metadata.push_back({"general.nested", Value::array(ValueType::Array, {middle}), {}});
  return write_bytes(doc);
}

// A NUL inside a string value: a warning in strict, silent in spec and llama.cpp.
ByteVector nul_string_bytes() {
  Document doc = model_document();
  doc.metadata.push_back({"general.description", Value::string(std::string("a\0b", 3)), {}});
  return write_bytes(doc);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Exactly one line of standard error, starting "ggufcheck: ", and no sign of a crash.
void expect_one_line_error(const RunResult& r, const std::string& what) {
  EXPECT_TRUE(r.exited) << what << "\n" << r;
  const auto err_lines = lines(r.err);
  EXPECT_EQ(err_lines.size(), 1U) << what << ": standard error must be exactly one line\n" << r;
  EXPECT_TRUE(r.err.empty() || r.err.back() == '\n') << what << "\n" << r;
  if (!err_lines.empty()) {
    EXPECT_EQ(err_lines[0].rfind("ggufcheck: ", 0), 0U) << what << "\n" << r;
  }
  for (const char* crash : {"terminate called", "Aborted", "what():", "Segmentation", "core dumped",
                            "AddressSanitizer", "runtime error:"}) {
    EXPECT_FALSE(contains(r.err, crash)) << what << "\n" << r;
  }
}

const std::regex kFindingLine(
    R"(^(.+):0x([0-9a-f]+): (error|warning|note)\[(GGUF[0-9]{4}) ([a-z0-9]+(-[a-z0-9]+)*)\]: (.+)$)");
// The total line of a text run over several files.
const std::regex kTotalLine(R"(^\d+ files: \d+ passed, \d+ failed, \d+ unreadable$)");
const std::regex kAnsi("\x1b\\[[0-9;]*m");

std::string strip_ansi(const std::string& text) {
  return std::regex_replace(text, kAnsi, "");
}

// The set of codes in text output.
std::set<std::string> text_codes(const std::string& out) {
  std::set<std::string> codes;
  for (const auto& line : lines(out)) {
    std::smatch m;
    if (std::regex_match(line, m, kFindingLine)) codes.insert(m[4].str());
  }
  return codes;
}

// ---------------------------------------------------------------------------------------------
// Exit statuses

TEST(CliExitStatus, ValidFilesExitZero) {
  for (const std::string& path :
       {example("valid/tiny-llama.gguf"), example("valid/vocab-only.gguf")}) {
    const RunResult r = run_cli({path});
    EXPECT_TRUE(r.exited && r.status == 0) << path << "\n" << r;
    EXPECT_TRUE(r.err.empty()) << r;
  }
  TempDir dir;
  const RunResult r = run_cli({dir.write("model.gguf", valid_bytes()).string()});
  EXPECT_EQ(r.status, 0) << r;
}

TEST(CliExitStatus, RealFilesExitZeroInEveryProfile) {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(real_gguf_dir())) {
    if (entry.path().extension() == ".gguf") files.push_back(entry.path().string());
  }
  ASSERT_FALSE(files.empty());
  std::sort(files.begin(), files.end());
  for (const std::string profile : {"strict", "spec", "llama.cpp"}) {
    std::vector<std::string> args = {"--profile", profile};
    args.insert(args.end(), files.begin(), files.end());
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 0) << profile << "\n" << r;
  }
}

TEST(CliExitStatus, WarningsAloneStillExitZero) {
  TempDir dir;
  const RunResult r = run_cli({dir.write("warn.gguf", warning_bytes()).string()});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_TRUE(contains(r.out, "warning[GGUF2006 unconventional-key]")) << r;
}

TEST(CliExitStatus, BrokenExamplesExitOne) {
  for (const char* name : {"broken/course-chapter-header.gguf", "broken/hostile-tensor-count.gguf",
                           "broken/three-problems.gguf", "broken/truncated.gguf"}) {
    const RunResult r = run_cli({example(name)});
    EXPECT_TRUE(r.exited && r.status == 1) << name << "\n" << r;
  }
}

// --base: an adapter judged against its base model; a base that cannot be opened, standard input
// or a URL is a usage error.
TEST(CliBase, AnAdapterPassesWithItsBaseAndNotAlone) {
  TempDir dir;
  const std::string base = dir.write("base.gguf", write_bytes(model_document())).string();
  const std::string adapter =
      dir.write("adapter.gguf", write_bytes(adapter_document(model_document()))).string();
  const RunResult with = run_cli({"--base", base, adapter});
  EXPECT_TRUE(with.exited && with.status == 0) << with;
  const RunResult alone = run_cli({adapter});
  EXPECT_EQ(alone.status, 1) << alone;
  EXPECT_TRUE(contains(alone.out, "error[GGUF7020 adapter-base-not-given]")) << alone;
  const RunResult info = run_cli({"info", "--base", base, adapter});
  EXPECT_EQ(info.status, 0) << info;
  EXPECT_TRUE(contains(info.out, "  kind            LoRA adapter")) << info;
  for (const std::string& bad : {(dir.path() / "no-such-base.gguf").string(), std::string("-"),
                                 std::string("https://example.com/base.gguf")}) {
    const RunResult r = run_cli({"--base", bad, adapter});
    EXPECT_TRUE(r.exited && r.status == 3) << bad << "\n" << r;
    EXPECT_TRUE(contains(r.err, "--base")) << r;
    EXPECT_TRUE(r.out.empty()) << r;
  }
}

TEST(CliExitStatus, MissingFileExitsTwo) {
  TempDir dir;
  const std::string missing = (dir.path() / "no-such-file.gguf").string();
  const RunResult r = run_cli({missing});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_TRUE(contains(r.out, "GGUF0001")) << r;
  EXPECT_TRUE(contains(r.out + r.err, missing)) << r;
}

TEST(CliExitStatus, UnopenablePathExitsTwo) {
  TempDir dir;
  const fs::path file = dir.write("plain.gguf", valid_bytes());
  // A path through a regular file (ENOTDIR): cannot be opened, whoever runs the test.
  const RunResult r = run_cli({(file / "inner.gguf").string()});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_TRUE(contains(r.out, "GGUF0001 unreadable-file")) << r;
}

// As root, the CLI runs as "nobody" (see RunOptions::unprivileged), so the mode applies.
TEST(CliExitStatus, PermissionDeniedExitsTwo) {
  if (const auto why = cannot_run_unprivileged()) GTEST_SKIP() << *why;
  TempDir dir(shared_base());
  dir.share();
  const fs::path file = dir.write("secret.gguf", valid_bytes());
  fs::permissions(file, fs::perms::none);
  const RunResult r = run_cli({file.string()}, unprivileged());
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_TRUE(contains(r.out, file.string() + ": error[GGUF0001 unreadable-file]: cannot open " +
                                  file.string() + ": " + std::strerror(EACCES)))
      << r;
  // The same file with its mode restored passes for the same user: the mode was the cause.
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  EXPECT_EQ(run_cli({file.string()}, unprivileged()).status, 0);
}

TEST(CliExitStatus, DirectoryWithoutGgufFilesExitsTwo) {
  TempDir dir;
  dir.write("sub/readme.txt", ByteVector{'h', 'i'});
  dir.write("sub/model.gguf.bak", valid_bytes());
  const RunResult r = run_cli({dir.path().string()});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  EXPECT_TRUE(contains(r.out, "GGUF0001")) << r;
  EXPECT_TRUE(contains(r.out, dir.path().string())) << r;
}

TEST(CliExitStatus, EmptyStandardInputIsAFileThatFails) {
  const RunResult r = run_cli({"-"}, stdin_bytes(std::string()));
  EXPECT_TRUE(r.exited && r.status == 1) << r;
  EXPECT_TRUE(contains(r.out, "GGUF1001")) << r;
}

TEST(CliExitStatus, WorstStatusWinsWhateverTheOrder) {
  TempDir dir;
  const std::string valid = dir.write("valid.gguf", valid_bytes()).string();
  const std::string warn = dir.write("warn.gguf", warning_bytes()).string();
  const std::string broken = dir.write("broken.gguf", bool2_bytes()).string();
  const std::string missing = (dir.path() / "missing.gguf").string();
  struct Case {
    std::vector<std::string> files;
    int status;
  };
  const std::vector<Case> cases = {
      {{valid, warn}, 0},
      {{valid, broken}, 1},
      {{broken, valid}, 1},
      {{warn, broken, valid}, 1},
      {{valid, missing}, 2},
      {{missing, valid}, 2},
      {{valid, broken, missing}, 2},
      {{missing, broken}, 2},
      {{broken, missing, valid}, 2},
  };
  for (const Case& c : cases) {
    for (const std::string format : {"text", "json", "sarif", "github"}) {
      std::vector<std::string> args = {"--format", format};
      args.insert(args.end(), c.files.begin(), c.files.end());
      const RunResult r = run_cli(args);
      EXPECT_TRUE(r.exited && r.status == c.status)
          << format << " " << ::testing::PrintToString(c.files) << "\n"
          << r;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Subcommands and inputs

TEST(CliCheck, DefaultSubcommandIsCheck) {
  TempDir dir;
  const std::string valid = dir.write("valid.gguf", valid_bytes()).string();
  const std::string broken = dir.write("broken.gguf", bool2_bytes()).string();
  const std::vector<std::vector<std::string>> invocations = {
      {valid},
      {broken},
      {valid, broken},
      {"--profile", "llama.cpp", broken},
      {"--format", "json", broken},
      {"--quiet", broken, valid},
  };
  for (const auto& args : invocations) {
    std::vector<std::string> explicit_args = {"check"};
    explicit_args.insert(explicit_args.end(), args.begin(), args.end());
    const RunResult implicit = run_cli(args);
    const RunResult expl = run_cli(explicit_args);
    EXPECT_EQ(implicit.status, expl.status) << ::testing::PrintToString(args);
    EXPECT_EQ(implicit.out, expl.out) << ::testing::PrintToString(args);
    EXPECT_EQ(implicit.err, expl.err) << ::testing::PrintToString(args);
    EXPECT_FALSE(implicit.out.empty() && args[0] != "--quiet") << ::testing::PrintToString(args);
  }
}

TEST(CliCheck, DirectoriesAreSearchedRecursivelyForGguf) {
  TempDir dir;
  const fs::path root = dir.path() / "models";
  const std::string top = dir.write("models/top.gguf", valid_bytes()).string();
  const std::string deep = dir.write("models/a/b/c/deep.gguf", bool2_bytes()).string();
  const std::string side = dir.write("models/a/side.gguf", warning_bytes()).string();
  dir.write("models/a/notes.txt", ByteVector{'x'});
  dir.write("models/a/b/broken.gguf.bak", ByteVector{'n', 'o'});  // not *.gguf: not validated
  fs::create_directories(root / "a" / "dir.gguf");                // a directory named *.gguf

  const RunResult r = run_cli({root.string()});
  EXPECT_TRUE(r.exited && r.status == 1) << r;  // deep.gguf has an error
  for (const std::string& path : {top, deep, side}) {
    EXPECT_TRUE(contains(r.out, path + ":")) << path << "\n" << r;
  }
  EXPECT_FALSE(contains(r.out, "notes.txt")) << r;
  EXPECT_FALSE(contains(r.out, "broken.gguf.bak")) << r;
  EXPECT_FALSE(contains(r.out, "dir.gguf")) << r;

  // JSON lists exactly the three files, each once.
  const RunResult j = run_cli({"--format", "json", root.string()});
  const json doc = json::parse(j.out);
  std::multiset<std::string> paths;
  for (const auto& f : doc.at("files")) paths.insert(f.at("path").get<std::string>());
  EXPECT_EQ(paths, (std::multiset<std::string>{top, deep, side})) << j;
  EXPECT_EQ(j.status, 1);
}

TEST(CliCheck, DirectoryOfOnlyValidFilesPasses) {
  TempDir dir;
  dir.write("d/one.gguf", valid_bytes());
  dir.write("d/x/two.gguf", valid_bytes());
  const RunResult r = run_cli({(dir.path() / "d").string()});
  EXPECT_EQ(r.status, 0) << r;
}

TEST(CliCheck, DashReadsStandardInputFromAPipe) {
  TempDir dir;
  const ByteVector bytes = bool2_bytes();
  const std::string file = dir.write("broken.gguf", bytes).string();
  const RunResult from_file = run_cli({"--format", "json", file});
  const RunResult from_pipe =
      run_cli({"--format", "json", "-"}, stdin_bytes(std::string(bytes.begin(), bytes.end())));
  ASSERT_TRUE(from_pipe.exited) << from_pipe;
  EXPECT_EQ(from_pipe.status, 1) << from_pipe;
  const json a = json::parse(from_file.out), b = json::parse(from_pipe.out);
  EXPECT_EQ(a.at("files").at(0).at("findings"), b.at("files").at(0).at("findings"));
  EXPECT_EQ(a.at("files").at(0).at("facts"), b.at("files").at(0).at("facts"));
  EXPECT_NE(b.at("files").at(0).at("path").get<std::string>(), file);

  // A valid file, larger than a pipe buffer, through standard input passes.
  const ByteVector big = read_file(real_gguf_dir() / "ggml-vocab-falcon.gguf");
  ASSERT_GT(big.size(), 1U << 20);
  const RunResult r = run_cli({"-"}, stdin_bytes(std::string(big.begin(), big.end())));
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_TRUE(contains(r.out, std::to_string(big.size()) + " bytes")) << r;
}

TEST(CliCheck, DashReadsStandardInputRedirectedFromAFile) {
  TempDir dir;
  const std::string valid = dir.write("valid.gguf", valid_bytes()).string();
  const std::string broken = dir.write("broken.gguf", bool2_bytes()).string();
  EXPECT_EQ(run_cli({"-"}, stdin_from(valid)).status, 0);
  const RunResult r = run_cli({"-"}, stdin_from(broken));
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_TRUE(contains(r.out, "GGUF2012")) << r;
  // Mixed with files, in input order.
  const RunResult mixed = run_cli({valid, "-"}, stdin_from(broken));
  EXPECT_EQ(mixed.status, 1) << mixed;
  EXPECT_LT(mixed.out.find(valid), mixed.out.find("GGUF2012")) << mixed;
}

TEST(CliCheck, PathsWithSpacesQuotesAndLeadingDashesArePassedVerbatim) {
  TempDir dir;
  const std::string odd = dir.write("my model's \"v2\" $HOME `x` ;.gguf", bool2_bytes()).string();
  const RunResult r = run_cli({odd});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(r.out.rfind(odd + ":0x", 0), 0U) << r;

  // A path that starts with '-' is a path after '--', with and without the subcommand.
  const fs::path dashed = dir.write("-dash.gguf", bool2_bytes());
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--", dashed.string()},
        std::vector<std::string>{"check", "--", dashed.string()}}) {
    const RunResult r2 = run_cli(args);
    EXPECT_EQ(r2.status, 1) << r2;
    EXPECT_TRUE(contains(r2.out, "GGUF2012")) << r2;
  }
  // Relative to the working directory: "-dash.gguf" itself.
  const RunResult rel = run_cli({"--", "-dash.gguf"}, in_directory(dir.path()));
  EXPECT_EQ(rel.status, 1) << rel;
  EXPECT_EQ(rel.out.rfind("-dash.gguf:0x", 0), 0U) << rel;
}

TEST(CliCheck, ParallelJobsGiveByteIdenticalOutputInInputOrder) {
  TempDir dir;
  std::vector<std::string> files = {
      example("broken/three-problems.gguf"),
      dir.write("z-valid.gguf", valid_bytes()).string(),
      example("valid/tiny-llama.gguf"),
      dir.write("a-bool.gguf", bool2_bytes()).string(),
      (dir.path() / "missing.gguf").string(),
      example("broken/truncated.gguf"),
      dir.write("m-warn.gguf", warning_bytes()).string(),
      example("broken/hostile-tensor-count.gguf"),
      example("valid/vocab-only.gguf"),
      dir.write("b-both.gguf", error_and_warning_bytes()).string(),
      example("broken/course-chapter-header.gguf"),
  };
  for (const auto& entry : fs::directory_iterator(real_gguf_dir())) {
    if (entry.path().extension() == ".gguf") files.push_back(entry.path().string());
  }
  for (const std::string format : {"text", "json", "sarif"}) {
    std::vector<std::string> base = {"--format", format};
    base.insert(base.end(), files.begin(), files.end());
    std::vector<std::string> one = base, two = base;
    one.insert(one.begin(), {"-j", "1"});
    two.insert(two.begin(), {"-j", "2"});
    const RunResult sequential = run_cli(one);
    ASSERT_TRUE(sequential.exited) << sequential;
    EXPECT_EQ(sequential.status, 2) << sequential;
    for (int round = 0; round < 4; ++round) {
      const RunResult parallel = run_cli(two);
      EXPECT_EQ(parallel.status, sequential.status) << format;
      EXPECT_EQ(parallel.out, sequential.out) << format << " round " << round;
      EXPECT_EQ(parallel.err, sequential.err) << format << " round " << round;
    }
    std::vector<std::string> all = base;
    all.insert(all.begin(), {"--jobs", "0"});
    EXPECT_EQ(run_cli(all).out, sequential.out) << format;

    if (format == "text") {
      // Each file's first line appears in input order.
      std::size_t last = 0;
      for (const std::string& f : files) {
        const std::size_t at = sequential.out.find(f + ":");
        ASSERT_NE(at, std::string::npos) << f;
        EXPECT_GE(at, last) << f << " is out of input order";
        last = at;
      }
    } else if (format == "json") {
      const json doc = json::parse(sequential.out);
      ASSERT_EQ(doc.at("files").size(), files.size());
      for (std::size_t i = 0; i < files.size(); ++i) {
        EXPECT_EQ(doc.at("files").at(i).at("path").get<std::string>(), files[i]);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Options

TEST(CliOptions, ProfileChangesTheVerdict) {
  TempDir dir;
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  const std::string warn = dir.write("warn.gguf", warning_bytes()).string();
  struct Case {
    std::string file, profile;
    int status;
  };
  const std::vector<Case> cases = {
      {bool2, "strict", 1}, {bool2, "spec", 1}, {bool2, "llama.cpp", 0},
      {warn, "strict", 0},  {warn, "spec", 1},  {warn, "llama.cpp", 0},
  };
  for (const Case& c : cases) {
    const RunResult r = run_cli({"--profile", c.profile, c.file});
    EXPECT_EQ(r.status, c.status) << c.profile << " " << c.file << "\n" << r;
  }
  // The default profile is strict.
  EXPECT_EQ(run_cli({bool2}).out, run_cli({"--profile", "strict", bool2}).out);
  // llama.cpp keeps the bool silent; strict reports it as an error.
  EXPECT_FALSE(contains(run_cli({"--profile", "llama.cpp", bool2}).out, "GGUF2012"));
  EXPECT_TRUE(
      contains(run_cli({"--profile", "strict", bool2}).out, "error[GGUF2012 non-canonical-bool]"));
  const json doc = json::parse(run_cli({"--format", "json", "--profile", "llama.cpp", bool2}).out);
  EXPECT_EQ(doc.at("profile"), "llama.cpp");
}

TEST(CliOptions, WerrorTurnsAWarningIntoExitOne) {
  TempDir dir;
  const std::string warn = dir.write("warn.gguf", warning_bytes()).string();
  const std::string valid = dir.write("valid.gguf", valid_bytes()).string();
  EXPECT_EQ(run_cli({warn}).status, 0);
  const RunResult r = run_cli({"--werror", warn});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_TRUE(contains(r.out, "error[GGUF2006 unconventional-key]")) << r;
  EXPECT_EQ(run_cli({"--werror", valid}).status, 0);
  const json doc = json::parse(run_cli({"--werror", "--format", "json", warn}).out);
  EXPECT_EQ(doc.at("werror"), true);
  EXPECT_EQ(doc.at("summary").at("exit_status"), 1);
}

TEST(CliOptions, DisableByCodeOrNameSilencesAFinding) {
  TempDir dir;
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  for (const std::string spelling : {"GGUF2012", "non-canonical-bool"}) {
    const RunResult r = run_cli({"--disable", spelling, bool2});
    EXPECT_EQ(r.status, 0) << spelling << "\n" << r;
    EXPECT_FALSE(contains(r.out, "GGUF2012")) << spelling << "\n" << r;
    const RunResult after = run_cli({bool2, "--disable", spelling});
    EXPECT_EQ(after.status, 0) << spelling << "\n" << after;
  }
  // Disabling one code leaves the others.
  const std::string three = example("broken/three-problems.gguf");
  const RunResult r = run_cli({"--disable", "duplicate-key", three});
  EXPECT_EQ(r.status, 1) << r;
  std::set<std::string> expected = text_codes(run_cli({three}).out);
  ASSERT_EQ(expected.erase("GGUF2004"), 1U);
  EXPECT_EQ(text_codes(r.out), expected) << r;
}

// Repeatable options take one value each: the paths after them stay paths.
TEST(CliOptions, RepeatableOptionsDoNotSwallowTheFollowingPaths) {
  TempDir dir;
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  const std::string warn = dir.write("warn.gguf", warning_bytes()).string();
  const std::string nested = dir.write("nested.gguf", nested3_bytes()).string();
  struct Case {
    std::vector<std::string> args;
    int status;
  };
  const std::vector<Case> cases = {
      {{"--disable", "GGUF2012", bool2, warn}, 0},
      {{"--enable", "GGUF2016", bool2, warn}, 1},
      {{"--severity", "GGUF2012=warning", bool2, warn}, 0},
      {{"--profile", "spec", "--limit", "depth=1", nested, bool2}, 1},
      {{"--disable", "GGUF2012", "--disable", "GGUF2006", bool2, warn, bool2}, 0},
  };
  for (const Case& c : cases) {
    const RunResult r = run_cli(c.args);
    EXPECT_TRUE(r.exited && r.status == c.status) << ::testing::PrintToString(c.args) << "\n" << r;
    EXPECT_TRUE(contains(r.out, bool2 + ":")) << ::testing::PrintToString(c.args) << "\n" << r;
  }
}

TEST(CliOptions, EnableReportsASilentDiagnosticAsAWarning) {
  TempDir dir;
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  const std::string nul = dir.write("nul.gguf", nul_string_bytes()).string();
  // non-canonical-bool is silent in llama.cpp.
  const RunResult r = run_cli({"--profile", "llama.cpp", "--enable", "non-canonical-bool", bool2});
  EXPECT_EQ(r.status, 0) << r;
  EXPECT_TRUE(contains(r.out, "warning[GGUF2012 non-canonical-bool]")) << r;
  // nul-in-string is silent in spec.
  EXPECT_FALSE(contains(run_cli({"--profile", "spec", nul}).out, "GGUF2016"));
  const RunResult n = run_cli({"--profile", "spec", "--enable", "GGUF2016", nul});
  EXPECT_EQ(n.status, 0) << n;
  EXPECT_TRUE(contains(n.out, "warning[GGUF2016 nul-in-string]")) << n;
  // --enable never lowers a diagnostic that is already an error.
  const RunResult s = run_cli({"--enable", "GGUF2012", bool2});
  EXPECT_EQ(s.status, 1) << s;
  EXPECT_TRUE(contains(s.out, "error[GGUF2012")) << s;
}

TEST(CliOptions, SeverityOverridesALevel) {
  TempDir dir;
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  const std::string warn = dir.write("warn.gguf", warning_bytes()).string();
  struct Case {
    std::string spec, file;
    int status;
    std::string expected;  // in the output; empty: the code must not appear
  };
  const std::vector<Case> cases = {
      {"GGUF2012=warning", bool2, 0, "warning[GGUF2012"},
      {"non-canonical-bool=note", bool2, 0, "note[GGUF2012"},
      {"GGUF2012=off", bool2, 0, ""},
      {"unconventional-key=error", warn, 1, "error[GGUF2006"},
      {"GGUF2006=note", warn, 0, "note[GGUF2006"},
  };
  for (const Case& c : cases) {
    const RunResult r = run_cli({"--severity", c.spec, c.file});
    EXPECT_EQ(r.status, c.status) << c.spec << "\n" << r;
    if (c.expected.empty()) {
      EXPECT_FALSE(contains(r.out, c.spec.substr(0, 8))) << c.spec << "\n" << r;
    } else {
      EXPECT_TRUE(contains(r.out, c.expected)) << c.spec << "\n" << r;
    }
  }
  // In the llama.cpp profile the bool is silent; --severity makes it an error again.
  EXPECT_EQ(run_cli({"--profile", "llama.cpp", "--severity", "GGUF2012=error", bool2}).status, 1);
}

TEST(CliOptions, LimitDepthRejectsDeeperNesting) {
  TempDir dir;
  const std::string nested = dir.write("nested.gguf", nested3_bytes()).string();
  EXPECT_EQ(run_cli({"--profile", "spec", nested}).status, 0);
  EXPECT_EQ(run_cli({"--profile", "spec", "--limit", "depth=3", nested}).status, 0);
  for (const std::string depth : {"1", "2"}) {
    const RunResult r = run_cli({"--profile", "spec", "--limit", "depth=" + depth, nested});
    EXPECT_EQ(r.status, 1) << depth << "\n" << r;
    EXPECT_TRUE(contains(r.out, "error[GGUF0002 limit-exceeded]")) << depth << "\n" << r;
  }
  const RunResult eq = run_cli({"--profile", "spec", "--limit=depth=2", nested});
  EXPECT_EQ(eq.status, 1) << eq;
}

// A limit on the findings kept must not change the verdict: dropped findings still count.
TEST(CliOptions, LimitFindingsKeepsTheVerdict) {
  TempDir dir;
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  // The warning comes first: with findings=1 the error is the one dropped.
  Document doc = warning_document();
  doc.metadata.push_back({"general.flag", Value::bool_byte(2), {}});
  const std::string warning_first = dir.write("warning-first.gguf", write_bytes(doc)).string();
  for (const std::string n : {"0", "1"}) {
    for (const std::string& file : {bool2, warning_first, example("broken/three-problems.gguf")}) {
      const RunResult r = run_cli({"--limit", "findings=" + n, file});
      EXPECT_EQ(r.status, 1) << "findings=" << n << " " << file << "\n" << r;
      EXPECT_FALSE(contains(r.out, ": pass:")) << "findings=" << n << " " << file << "\n" << r;
    }
  }
}

TEST(CliOptions, QuietPrintsOnlyErrors) {
  TempDir dir;
  const std::string both = dir.write("both.gguf", error_and_warning_bytes()).string();
  const std::string valid = dir.write("valid.gguf", valid_bytes()).string();
  const std::string warn = dir.write("warn.gguf", warning_bytes()).string();
  const RunResult loud = run_cli({both});
  ASSERT_TRUE(contains(loud.out, "warning[GGUF2006")) << loud;

  for (const std::string flag : {"--quiet", "-q"}) {
    const RunResult r = run_cli({flag, both, valid, warn});
    EXPECT_EQ(r.status, 1) << r;
    const auto out = lines(r.out);
    ASSERT_FALSE(out.empty()) << r;
    bool saw_error = false;
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::smatch m;
      if (std::regex_match(out[i], m, kFindingLine)) {
        EXPECT_EQ(m[3].str(), "error") << out[i];
        saw_error = true;
      } else {
        // Only the indented lines that belong to an error.
        EXPECT_TRUE(out[i].rfind("  --> ", 0) == 0 || out[i].rfind("  = hint: ", 0) == 0) << out[i];
      }
    }
    EXPECT_TRUE(saw_error) << r;
    EXPECT_FALSE(contains(r.out, "warning")) << r;
    EXPECT_FALSE(contains(r.out, valid)) << r;
    EXPECT_FALSE(contains(r.out, warn)) << r;
    EXPECT_FALSE(contains(r.out, "FAIL")) << r;
  }
  const RunResult silent = run_cli({"--quiet", valid, warn});
  EXPECT_EQ(silent.status, 0);
  EXPECT_EQ(silent.out, "");
}

TEST(CliOptions, ColorAlwaysEmitsAnsiNeverAndAutoInAPipeDoNot) {
  TempDir dir;
  const std::string both = dir.write("both.gguf", error_and_warning_bytes()).string();
  RunOptions tty_env;
  tty_env.env = {{"TERM", "xterm-256color"}, {"NO_COLOR", std::nullopt}};
  const RunResult always = run_cli({"--color", "always", both}, tty_env);
  const RunResult never = run_cli({"--color", "never", both}, tty_env);
  const RunResult automatic = run_cli({"--color", "auto", both}, tty_env);
  const RunResult by_default = run_cli({both}, tty_env);
  EXPECT_EQ(always.status, 1);
  EXPECT_EQ(never.status, 1);
  EXPECT_TRUE(contains(always.out, "\x1b[")) << always;
  EXPECT_FALSE(contains(never.out, "\x1b")) << never;
  EXPECT_FALSE(contains(automatic.out, "\x1b")) << automatic;
  EXPECT_FALSE(contains(by_default.out, "\x1b")) << by_default;
  // Colour changes nothing but the escapes.
  EXPECT_EQ(strip_ansi(always.out), never.out);
  EXPECT_EQ(never.out, automatic.out);
  // Colour never leaks into machine-readable formats.
  for (const std::string format : {"json", "sarif"}) {
    const RunResult r = run_cli({"--color", "always", "--format", format, both}, tty_env);
    EXPECT_FALSE(contains(r.out, "\x1b")) << format;
    EXPECT_TRUE(json::accept(r.out)) << format;
  }
}

TEST(CliOptions, ColorAutoOnATerminalColoursUnlessNoColor) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    if (master >= 0) ::close(master);
    GTEST_SKIP() << "no pseudo-terminal available";
  }
  const char* slave_name = ::ptsname(master);
  ASSERT_NE(slave_name, nullptr);
  const std::string slave_path = slave_name;
  ::close(master);

  TempDir dir;
  const std::string both = dir.write("both.gguf", error_and_warning_bytes()).string();
  auto run_on_tty = [&](std::map<std::string, std::optional<std::string>> env) {
    const int m = ::posix_openpt(O_RDWR | O_NOCTTY);
    EXPECT_GE(m, 0);
    EXPECT_EQ(::grantpt(m), 0);
    EXPECT_EQ(::unlockpt(m), 0);
    const int s = ::open(::ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
    EXPECT_GE(s, 0);
    RunOptions options;
    options.env = std::move(env);
    options.stdout_fd = s;
    const RunResult r = run_cli({"--color", "auto", both}, options);
    ::close(s);
    std::string out;
    char buffer[4096];
    pollfd p{m, POLLIN, 0};
    while (::poll(&p, 1, 200) > 0) {
      const ssize_t n = ::read(m, buffer, sizeof buffer);
      if (n <= 0) break;
      out.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(m);
    EXPECT_EQ(r.status, 1) << r;
    return out;
  };
  EXPECT_TRUE(contains(run_on_tty({{"TERM", "xterm"}, {"NO_COLOR", std::nullopt}}), "\x1b["));
  EXPECT_FALSE(contains(run_on_tty({{"TERM", "xterm"}, {"NO_COLOR", "1"}}), "\x1b"));
  EXPECT_FALSE(contains(run_on_tty({{"TERM", "dumb"}, {"NO_COLOR", std::nullopt}}), "\x1b"));
}

// ---------------------------------------------------------------------------------------------
// Text output

TEST(CliOutput, TextFindingLinesAreCompilerStyle) {
  TempDir dir;
  const Written written = write(bool2_document());
  const std::string file = dir.write("bool2.gguf", written.bytes).string();
  const RunResult r = run_cli({file});
  ASSERT_EQ(r.status, 1) << r;
  const auto out = lines(r.out);
  ASSERT_GE(out.size(), 3U) << r;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(out[0], m, kFindingLine)) << out[0];
  EXPECT_EQ(m[1].str(), file);
  EXPECT_EQ(std::stoull(m[2].str(), nullptr, 16), written.layout.pairs.back().value_offset)
      << out[0];
  EXPECT_EQ(m[3].str(), "error");
  EXPECT_EQ(m[4].str(), "GGUF2012");
  EXPECT_EQ(m[5].str(), "non-canonical-bool");
  const std::string flag_path =
      "kv[" + std::to_string(written.layout.pairs.size() - 1) + "] \"general.flag\"";
  EXPECT_EQ(out[1].rfind("  --> " + flag_path, 0), 0U) << out[1];
  EXPECT_EQ(out[2].rfind("  = hint: ", 0), 0U) << out[2];
  // Messages: lower case start, no trailing period.
  const std::string message = m[7].str();
  EXPECT_FALSE(message.empty());
  EXPECT_NE(message.back(), '.') << message;
  EXPECT_FALSE(std::isupper(static_cast<unsigned char>(message.front()))) << message;
}

TEST(CliOutput, EveryTextFindingHasAFieldLine) {
  std::vector<std::string> args;
  for (const char* name : {"broken/course-chapter-header.gguf", "broken/hostile-tensor-count.gguf",
                           "broken/three-problems.gguf", "broken/truncated.gguf"}) {
    args.push_back(example(name));
  }
  for (const std::string profile : {"strict", "spec", "llama.cpp"}) {
    std::vector<std::string> full = {"--profile", profile};
    full.insert(full.end(), args.begin(), args.end());
    const RunResult r = run_cli(full);
    const auto out = lines(r.out);
    std::size_t findings = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::smatch m;
      if (!std::regex_match(out[i], m, kFindingLine)) continue;
      ++findings;
      ASSERT_LT(i + 1, out.size());
      EXPECT_EQ(out[i + 1].rfind("  --> ", 0), 0U) << out[i] << "\n" << out[i + 1];
      EXPECT_GT(out[i + 1].size(), 6U) << out[i];
      // Every other line is a field line, a hint line, or a per-file summary.
      ASSERT_TRUE(ggufcheck::find_code(m[4].str()).has_value()) << out[i];
      EXPECT_EQ(catalogue_entry(*ggufcheck::find_code(m[4].str())).name, m[5].str()) << out[i];
    }
    EXPECT_GT(findings, 0U) << profile;
    for (const auto& line : out) {
      std::smatch m;
      const bool ok =
          std::regex_match(line, m, kFindingLine) || line.rfind("  --> ", 0) == 0 ||
          line.rfind("  = hint: ", 0) == 0 ||
          std::regex_search(line, std::regex(R"(: (pass|FAIL|unreadable): \d+ errors?, )")) ||
          std::regex_match(line, kTotalLine) || contains(line, "more findings not shown");
      EXPECT_TRUE(ok) << "unexpected line: " << line;
    }
  }
}

TEST(CliOutput, TextSummaryLineGivesTheVerdict) {
  TempDir dir;
  const std::string valid = dir.write("valid.gguf", valid_bytes()).string();
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  EXPECT_TRUE(contains(run_cli({valid}).out, valid + ": pass: 0 errors, 0 warnings, 0 notes"));
  EXPECT_TRUE(contains(run_cli({bool2}).out, bool2 + ": FAIL: 1 error, 0 warnings, 0 notes"));
}

TEST(CliOutput, JsonMatchesTheExitStatusAndTheFindings) {
  TempDir dir;
  const Written written = write(bool2_document());
  const std::string file = dir.write("bool2.gguf", written.bytes).string();
  const std::string missing = (dir.path() / "missing.gguf").string();
  const RunResult r = run_cli({"--format", "json", file, missing});
  EXPECT_EQ(r.status, 2) << r;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("schema_version"), 1);
  EXPECT_EQ(doc.at("tool").at("name"), "ggufcheck");
  EXPECT_EQ(doc.at("profile"), "strict");
  EXPECT_EQ(doc.at("werror"), false);
  EXPECT_EQ(doc.at("summary").at("exit_status"), 2);
  EXPECT_EQ(doc.at("summary").at("files"), 2);
  EXPECT_EQ(doc.at("summary").at("failed"), 1);
  EXPECT_EQ(doc.at("summary").at("unreadable"), 1);
  EXPECT_EQ(doc.at("summary").at("passed"), 0);
  const json& f = doc.at("files").at(0);
  EXPECT_EQ(f.at("path"), file);
  EXPECT_EQ(f.at("status"), "fail");
  EXPECT_EQ(f.at("facts").at("file_size"), written.bytes.size());
  EXPECT_EQ(f.at("facts").at("version"), 3);
  EXPECT_EQ(f.at("facts").at("kv_count"), written.layout.pairs.size());
  EXPECT_EQ(f.at("facts").at("endianness"), "little");
  ASSERT_EQ(f.at("findings").size(), 1U);
  const json& finding = f.at("findings").at(0);
  EXPECT_EQ(finding.at("code"), "GGUF2012");
  EXPECT_EQ(finding.at("name"), "non-canonical-bool");
  EXPECT_EQ(finding.at("severity"), "error");
  EXPECT_EQ(finding.at("offset"), written.layout.pairs.back().value_offset);
  EXPECT_EQ(finding.at("length"), 1);
  EXPECT_EQ(finding.at("path"),
            "kv[" + std::to_string(written.layout.pairs.size() - 1) + "] \"general.flag\"");
  EXPECT_TRUE(finding.at("hint").is_string());
  const json& m = doc.at("files").at(1);
  EXPECT_EQ(m.at("status"), "unreadable");
  EXPECT_EQ(m.at("findings").at(0).at("code"), "GGUF0001");
  // The unreadable input is also reported on standard error, once.
  expect_one_line_error(r, "json with a missing file");
  EXPECT_TRUE(contains(r.err, missing)) << r;
}

// File names are bytes: one that is not UTF-8 must not turn into an internal error.
TEST(CliOutput, MachineFormatsSurviveANonUtf8FileName) {
  TempDir dir;
  const std::string file = dir.write("name-\xff\xfe.gguf", bool2_bytes()).string();
  for (const std::string format : {"text", "json", "sarif", "github"}) {
    const RunResult r = run_cli({"--format", format, file});
    EXPECT_TRUE(r.exited && r.status == 1) << format << "\n" << r;
    EXPECT_FALSE(contains(r.err, "internal error")) << format << "\n" << r;
    if (format == "json" || format == "sarif") {
      EXPECT_TRUE(json::accept(r.out)) << format << "\n" << r;
    }
  }
}

TEST(CliOutput, SarifIsOneRunWithOneRulePerCodeUsed) {
  const RunResult r = run_cli({"--format", "sarif", example("broken/three-problems.gguf"),
                               example("broken/truncated.gguf"), example("valid/tiny-llama.gguf")});
  EXPECT_EQ(r.status, 1) << r;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("version"), "2.1.0");
  ASSERT_EQ(doc.at("runs").size(), 1U);
  const json& run = doc.at("runs").at(0);
  std::set<std::string> rule_ids, used;
  for (const auto& rule : run.at("tool").at("driver").at("rules")) {
    EXPECT_TRUE(rule_ids.insert(rule.at("id").get<std::string>()).second) << rule;
  }
  for (const auto& result : run.at("results")) {
    used.insert(result.at("ruleId").get<std::string>());
    const json& region = result.at("locations").at(0).at("physicalLocation").at("region");
    EXPECT_EQ(region.at("startLine"), 1);
    EXPECT_TRUE(region.contains("byteOffset"));
    EXPECT_TRUE(region.contains("byteLength"));
  }
  EXPECT_EQ(rule_ids, used);
  EXPECT_FALSE(used.empty());
}

// ---------------------------------------------------------------------------------------------
// --version, --help, list, explain

// The version, the git commit of the build and the llama.cpp the llama.cpp profile follows;
// the JSON output reports the same three.
TEST(CliInfo, VersionPrintsTheVersionAndExitsZero) {
  const RunResult r = run_cli({"--version"});
  EXPECT_TRUE(r.exited && r.status == 0) << r;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      r.out, m,
      std::regex(R"(ggufcheck (\d+\.\d+\.\d+) \(git ([0-9a-f]{12}(-modified)?|unknown)\)\n)"
                 R"(llama\.cpp profile: (llama\.cpp [0-9a-f]{12} \(node-llama-cpp [0-9.]+\))\n)")))
      << r;
  EXPECT_EQ(r.err, "");
  const json doc = json::parse(run_cli({"--format", "json", example("valid/tiny-llama.gguf")}).out);
  EXPECT_EQ(doc.at("tool").at("version"), m[1].str());
  EXPECT_EQ(doc.at("tool").at("commit"), m[2].str());
  EXPECT_EQ(doc.at("tool").at("llama_cpp"), m[4].str());
}

TEST(CliInfo, HelpExitsZeroAndMentionsSubcommandsAndExitStatuses) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"-h"},
        std::vector<std::string>{"help"}}) {
    const RunResult r = run_cli(args);
    EXPECT_TRUE(r.exited && r.status == 0) << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_EQ(r.err, "") << r;
    for (const char* word : {"check", "list", "explain"}) {
      EXPECT_TRUE(contains(r.out, word)) << word << "\n" << r;
    }
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.out, m, std::regex("[Ee]xit status"))) << r;
    const std::string after = m.suffix().str();
    for (const char* status : {"0", "1", "2", "3"}) {
      EXPECT_TRUE(contains(after, status)) << status << "\n" << r;
    }
    EXPECT_TRUE(contains(after, "usage")) << r;
  }
  const RunResult check_help = run_cli({"check", "--help"});
  EXPECT_EQ(check_help.status, 0) << check_help;
  for (const char* option : {"--profile", "--format", "--werror", "--disable", "--enable",
                             "--severity", "--limit", "--jobs", "--quiet", "--color"}) {
    EXPECT_TRUE(contains(check_help.out, option)) << option << "\n" << check_help;
  }
}

// The usage line of a subcommand's help names the program once, then the subcommand.
TEST(CliInfo, SubcommandHelpHasAWellFormedUsageLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"check", "Usage: ggufcheck check [OPTIONS] "},
      {"list", "Usage: ggufcheck list [OPTIONS]"},
      {"explain", "Usage: ggufcheck explain [OPTIONS] "},
  };
  for (const auto& [sub, usage] : cases) {
    const RunResult r = run_cli({sub, "--help"});
    EXPECT_EQ(r.status, 0) << r;
    EXPECT_TRUE(contains(r.out, usage)) << sub << ": expected '" << usage << "'\n" << r;
    EXPECT_FALSE(contains(r.out, sub + " ggufcheck")) << sub << "\n" << r;
  }
}

TEST(CliInfo, ListShowsTheWholeCatalogue) {
  const RunResult r = run_cli({"list"});
  EXPECT_TRUE(r.exited && r.status == 0) << r;
  for (const CatalogueEntry& e : catalogue()) {
    EXPECT_TRUE(std::regex_search(
        r.out, std::regex(code_string(e.code) + " +" + std::string(e.name) + " ")))
        << code_string(e.code);
  }
}

TEST(CliInfo, ListJsonMatchesTheCatalogue) {
  const RunResult r = run_cli({"list", "--format", "json"});
  ASSERT_TRUE(r.exited && r.status == 0) << r;
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("schema_version"), 1);
  const json& list = doc.at("diagnostics");
  ASSERT_EQ(list.size(), catalogue().size());
  // Sorted by code.
  std::vector<const CatalogueEntry*> entries;
  for (const CatalogueEntry& e : catalogue()) entries.push_back(&e);
  std::sort(entries.begin(), entries.end(), [](const CatalogueEntry* a, const CatalogueEntry* b) {
    return code_string(a->code) < code_string(b->code);
  });
  std::size_t i = 0;
  for (const CatalogueEntry* entry : entries) {
    const CatalogueEntry& e = *entry;
    const json& d = list.at(i++);
    EXPECT_EQ(d.at("code"), code_string(e.code));
    EXPECT_EQ(d.at("name"), std::string(e.name));
    EXPECT_EQ(d.at("meaning"), std::string(e.meaning));
    EXPECT_EQ(d.at("severity").at("strict"), std::string(to_string(e.severity(Profile::Strict))));
    EXPECT_EQ(d.at("severity").at("spec"), std::string(to_string(e.severity(Profile::Spec))));
    EXPECT_EQ(d.at("severity").at("llama.cpp"),
              std::string(to_string(e.severity(Profile::LlamaCpp))));
    EXPECT_EQ(d.at("area"), std::string(to_string(e.area)));
    EXPECT_EQ(d.at("breaks_structure"), e.breaks_structure);
    EXPECT_EQ(d.at("explains_garbage"), e.explains_garbage);
  }
}

TEST(CliInfo, ExplainByCodeAndByNamePrintTheSameEntry) {
  const RunResult by_code = run_cli({"explain", "GGUF4001"});
  const RunResult by_name = run_cli({"explain", "misaligned-offset"});
  EXPECT_TRUE(by_code.exited && by_code.status == 0) << by_code;
  EXPECT_EQ(by_name.status, 0) << by_name;
  EXPECT_EQ(by_code.out, by_name.out);
  EXPECT_TRUE(contains(by_code.out, "GGUF4001")) << by_code;
  EXPECT_TRUE(contains(by_code.out, "misaligned-offset")) << by_code;
  EXPECT_TRUE(contains(by_code.out, std::string(catalogue_entry(Code::MisalignedOffset).meaning)));
  EXPECT_EQ(by_code.err, "");
  // Every code in the dev run; every kCommandRunStride-th under ASan, where a run costs more.
  const auto& entries = catalogue();
  for (std::size_t i = 0; i < entries.size(); i += kCommandRunStride) {
    const CatalogueEntry& e = entries[i];
    const RunResult a = run_cli({"explain", code_string(e.code)});
    const RunResult b = run_cli({"explain", std::string(e.name)});
    EXPECT_EQ(a.status, 0) << code_string(e.code);
    EXPECT_EQ(a.out, b.out) << code_string(e.code);
    // The page docs/diagnostics/GGUFnnnn.md (test_diagnostic_pages.py compares every byte).
    EXPECT_EQ(a.out.rfind("# " + code_string(e.code) + " " + std::string(e.name) + "\n", 0), 0U)
        << a.out;
    EXPECT_TRUE(contains(a.out, "\n" + std::string(e.meaning) + "\n")) << a.out;
  }
}

TEST(CliInfo, ExplainOfAnUnknownCodeExitsThree) {
  for (const std::string what : {"NOPE", "GGUF9999", "misaligned", ""}) {
    const RunResult r = run_cli({"explain", what});
    EXPECT_TRUE(r.exited && r.status == 3) << what << "\n" << r;
    EXPECT_EQ(r.out, "") << what;
    expect_one_line_error(r, "explain '" + what + "'");
  }
  EXPECT_TRUE(contains(run_cli({"explain", "NOPE"}).err, "NOPE"));
}

// ---------------------------------------------------------------------------------------------
// Bad usage: exit 3, nothing on standard output, one line on standard error, no crash.

struct BadUsage {
  std::vector<std::string> args;
  std::string mentions;  // the offending word the message must name
};

std::vector<BadUsage> bad_usages(const std::string& file) {
  return {
      {{"--bogus", file}, "--bogus"},
      {{"check", "--bogus", file}, "--bogus"},
      {{"--profile", "nope", file}, "nope"},
      {{"--profile", "", file}, "profile"},
      {{"--format", "yaml", file}, "yaml"},
      {{"--color", "blue", file}, "blue"},
      {{"--limit", "depth=0", file}, "depth"},
      {{"--limit", "depth=abc", file}, "abc"},
      {{"--limit", "depth=-1", file}, "depth"},
      {{"--limit", "depth=", file}, "depth"},
      {{"--limit", "depth=99999999999999999999999", file}, "depth"},
      {{"--limit", "depth", file}, "depth"},
      {{"--limit", "frobs=3", file}, "frobs"},
      {{"--disable", "GGUF9999", file}, "GGUF9999"},
      {{"--disable", "no-such-name", file}, "no-such-name"},
      {{"--enable", "NOPE", file}, "NOPE"},
      {{"--severity", "GGUF9999=error", file}, "GGUF9999"},
      {{"--severity", "GGUF2012=loud", file}, "loud"},
      {{"--severity", "GGUF2012", file}, "GGUF2012"},
      {{"-j", "-1", file}, "-1"},
      {{"-j", "many", file}, "many"},
      {{"--profile"}, "profile"},
      {{}, ""},
      {{"check"}, ""},
      {{"list", "--format", "xml"}, "xml"},
      {{"list", "extra"}, "extra"},
      {{"explain"}, ""},
      {{"explain", "GGUF4001", "GGUF4002"}, "GGUF4002"},
  };
}

TEST(CliUsage, BadUsageExitsThreeWithNothingOnStdout) {
  TempDir dir;
  const std::string file = dir.write("valid.gguf", valid_bytes()).string();
  for (const BadUsage& u : bad_usages(file)) {
    const RunResult r = run_cli(u.args);
    EXPECT_TRUE(r.exited && r.status == 3) << ::testing::PrintToString(u.args) << "\n" << r;
    EXPECT_EQ(r.out, "") << ::testing::PrintToString(u.args);
    EXPECT_FALSE(r.err.empty()) << ::testing::PrintToString(u.args);
    if (!u.mentions.empty()) {
      EXPECT_TRUE(contains(r.err, u.mentions)) << ::testing::PrintToString(u.args) << "\n" << r;
    }
  }
}

TEST(CliUsage, BadUsageIsOneLineOnStderr) {
  TempDir dir;
  const std::string file = dir.write("valid.gguf", valid_bytes()).string();
  for (const BadUsage& u : bad_usages(file)) {
    expect_one_line_error(run_cli(u.args), ::testing::PrintToString(u.args));
  }
}

TEST(CliUsage, UnreadableInputInMachineFormatsIsOneLineOnStderr) {
  TempDir dir;
  const std::string missing = (dir.path() / "missing.gguf").string();
  for (const std::string format : {"json", "sarif"}) {
    const RunResult r = run_cli({"--format", format, missing});
    EXPECT_EQ(r.status, 2) << r;
    expect_one_line_error(r, format);
    EXPECT_TRUE(contains(r.err, missing)) << r;
    EXPECT_TRUE(json::accept(r.out)) << r;  // stdout stays a valid document
  }
  // Text: the finding goes to stdout; stderr holds at most the same single line.
  const RunResult t = run_cli({missing});
  EXPECT_EQ(t.status, 2);
  EXPECT_LE(lines(t.err).size(), 1U) << t;
}

TEST(CliUsage, HostileAndOddInputsNeverCrash) {
  TempDir dir;
  std::vector<std::string> files;
  files.push_back(dir.write("empty.gguf", {}).string());
  files.push_back(dir.write("magic-only.gguf", ByteVector{'G', 'G', 'U', 'F'}).string());
  ByteVector huge_counts = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
  for (int i = 0; i < 16; ++i) huge_counts.push_back(0xff);
  files.push_back(dir.write("huge-counts.gguf", huge_counts).string());
  files.push_back(dir.path().string() + "/");  // a directory holding *.gguf files
  files.push_back("/dev/null");
  for (const std::string profile : {"strict", "spec", "llama.cpp"}) {
    for (const std::string format : {"text", "json", "sarif"}) {
      std::vector<std::string> args = {"--profile", profile, "--format", format};
      args.insert(args.end(), files.begin(), files.end());
      const RunResult r = run_cli(args);
      EXPECT_TRUE(r.exited && (r.status == 1 || r.status == 2)) << profile << " " << format << "\n"
                                                                << r;
      EXPECT_FALSE(contains(r.err, "internal error")) << r;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The directory walk: nothing that could be a GGUF file is skipped without a report.

// The text line of an unreadable input: "PATH: error[GGUF0001 unreadable-file]: WHY".
std::string unreadable_line(const fs::path& path, const std::string& why) {
  return path.string() + ": error[GGUF0001 unreadable-file]: " + why + "\n";
}

std::string os_error(int error) {
  return std::strerror(error);
}

// The paths and statuses of the JSON report of a run.
std::map<std::string, std::string> json_statuses(const RunResult& r) {
  std::map<std::string, std::string> out;
  const json doc = json::parse(r.out);
  for (const auto& f : doc.at("files")) {
    EXPECT_TRUE(
        out.emplace(f.at("path").get<std::string>(), f.at("status").get<std::string>()).second)
        << "reported twice: " << f.at("path");
  }
  return out;
}

TEST(CliWalk, DanglingSymlinkIsUnreadable) {
  TempDir dir;
  const fs::path root = dir.path() / "models";
  const fs::path valid = dir.write("models/valid.gguf", valid_bytes());
  fs::create_symlink("nowhere.gguf", root / "dangling.gguf");
  // A link whose own name has no .gguf but whose target has.
  fs::create_symlink("gone.gguf", root / "model");
  // Neither name ends in .gguf: not a candidate, no report.
  fs::create_symlink("nothing-here", root / "latest");

  const RunResult r = run_cli({root.string()});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  const std::string why = os_error(ENOENT);
  EXPECT_TRUE(contains(
      r.out, unreadable_line(root / "dangling.gguf",
                             "cannot open " + (root / "dangling.gguf").string() + ": " + why)))
      << r;
  EXPECT_TRUE(contains(
      r.out,
      unreadable_line(root / "model", "cannot open " + (root / "model").string() + ": " + why)))
      << r;
  EXPECT_TRUE(contains(r.out, valid.string() + ": pass:")) << r;
  EXPECT_FALSE(contains(r.out, "latest")) << r;

  const RunResult j = run_cli({"--format", "json", root.string()});
  EXPECT_EQ(j.status, 2) << j;
  EXPECT_EQ(json_statuses(j),
            (std::map<std::string, std::string>{{(root / "dangling.gguf").string(), "unreadable"},
                                                {(root / "model").string(), "unreadable"},
                                                {valid.string(), "pass"}}));
}

TEST(CliWalk, SymlinkLoopIsUnreadableAndEnds) {
  TempDir dir;
  const fs::path root = dir.path() / "models";
  const fs::path valid = dir.write("models/valid.gguf", valid_bytes());
  fs::create_symlink("a.gguf", root / "a.gguf");  // a.gguf -> a.gguf
  fs::create_symlink("c.gguf", root / "b.gguf");  // b.gguf -> c.gguf -> b.gguf
  fs::create_symlink("b.gguf", root / "c.gguf");
  const RunResult r = run_cli({root.string()});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  for (const char* name : {"a.gguf", "b.gguf", "c.gguf"}) {
    const fs::path link = root / name;
    EXPECT_TRUE(contains(
        r.out, unreadable_line(link, "cannot open " + link.string() + ": " + os_error(ELOOP))))
        << name << "\n"
        << r;
  }
  EXPECT_TRUE(contains(r.out, valid.string() + ": pass:")) << r;
}

// A link to a directory is walked, each directory once: a loop through links ends, and the files
// under it are reported once.
TEST(CliWalk, DirectoryLinksAreFollowedOnce) {
  TempDir dir;
  const fs::path root = dir.path() / "models";
  const fs::path a = dir.write("models/sub/a.gguf", valid_bytes());
  const fs::path b = dir.write("models/sub/deeper/b.gguf", bool2_bytes());
  const fs::path outside = dir.write("elsewhere/c.gguf", valid_bytes());
  fs::create_symlink("..", root / "sub" / "deeper" / "up");  // a loop back to sub/
  fs::create_symlink(".", root / "self");                    // a loop to the root
  fs::create_symlink("../elsewhere", root / "linked");       // a tree outside the root
  const RunResult r = run_cli({"--format", "json", root.string()});
  EXPECT_TRUE(r.exited && r.status == 1) << r;
  EXPECT_EQ(json_statuses(r),
            (std::map<std::string, std::string>{{a.string(), "pass"},
                                                {b.string(), "fail"},
                                                {(root / "linked" / "c.gguf").string(), "pass"}}))
      << r;
  (void)outside;
}

// Hugging Face's cache: snapshots/<rev>/model.gguf -> ../../blobs/<sha>. The link's name is the
// *.gguf; the blob is validated through it, once.
TEST(CliWalk, HuggingFaceCacheLinksAreValidated) {
  TempDir dir;
  const fs::path repo = dir.path() / "models--org--name";
  dir.write("models--org--name/blobs/0123abcd", bool2_bytes());
  dir.write("models--org--name/blobs/4567ef01", valid_bytes());
  fs::create_directories(repo / "snapshots" / "rev1");
  fs::create_symlink("../../blobs/0123abcd", repo / "snapshots" / "rev1" / "model.Q4.gguf");
  fs::create_symlink("../../blobs/4567ef01", repo / "snapshots" / "rev1" / "tokenizer.gguf");
  const RunResult r = run_cli({"--format", "json", repo.string()});
  EXPECT_TRUE(r.exited && r.status == 1) << r;
  EXPECT_EQ(json_statuses(r),
            (std::map<std::string, std::string>{
                {(repo / "snapshots" / "rev1" / "model.Q4.gguf").string(), "fail"},
                {(repo / "snapshots" / "rev1" / "tokenizer.gguf").string(), "pass"}}))
      << r;
}

TEST(CliWalk, HiddenEntriesAndUpperCaseNamesAreWalked) {
  TempDir dir;
  const fs::path root = dir.path() / "models";
  const fs::path hidden = dir.write("models/.cache/hidden.gguf", bool2_bytes());
  const fs::path dotfile = dir.write("models/.dot.gguf", valid_bytes());
  const fs::path upper = dir.write("models/UPPER.GGUF", valid_bytes());
  const RunResult r = run_cli({"--format", "json", root.string()});
  EXPECT_EQ(r.status, 1) << r;
  EXPECT_EQ(json_statuses(r),
            (std::map<std::string, std::string>{
                {hidden.string(), "fail"}, {dotfile.string(), "pass"}, {upper.string(), "pass"}}))
      << r;
}

// Reading a FIFO could block forever: in a walk it is reported, never opened (a hang here is a
// failure by ctest's TIMEOUT). Given directly, it is read like standard input.
TEST(CliWalk, FifoIsUnreadableAndNeverOpened) {
  TempDir dir;
  const fs::path root = dir.path() / "models";
  const fs::path valid = dir.write("models/valid.gguf", valid_bytes());
  const fs::path fifo = root / "x.gguf";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0) << std::strerror(errno);
  fs::create_symlink("x.gguf", root / "link-to-fifo");
  const RunResult r = run_cli({root.string()});
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  for (const fs::path& p : {fifo, root / "link-to-fifo"}) {
    EXPECT_TRUE(contains(r.out, unreadable_line(p, "cannot read " + p.string() +
                                                       ": not a regular file (a FIFO); give it "
                                                       "directly to read it")))
        << p << "\n"
        << r;
  }
  EXPECT_TRUE(contains(r.out, valid.string() + ": pass:")) << r;
  EXPECT_TRUE(contains(r.out, "3 files: 1 passed, 0 failed, 2 unreadable\n")) << r;
}

// As root, run as "nobody": the modes apply.
TEST(CliWalk, UnreadableSubdirectoryIsUnreadable) {
  if (const auto why = cannot_run_unprivileged()) GTEST_SKIP() << *why;
  TempDir dir(shared_base());
  dir.share();
  const fs::path root = dir.path() / "models";
  const fs::path valid = dir.write("models/valid.gguf", valid_bytes());
  dir.write("models/locked/inside.gguf", bool2_bytes());
  dir.write("models/listable/hidden-from-stat.gguf", bool2_bytes());
  fs::permissions(root / "locked", fs::perms::none);
  // Readable but not searchable: the names can be listed, not stat'ed.
  fs::permissions(root / "listable",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);

  const RunResult r = run_cli({root.string()}, unprivileged());
  EXPECT_TRUE(r.exited && r.status == 2) << r;
  const fs::path locked = root / "locked";
  EXPECT_TRUE(contains(r.out, unreadable_line(locked, "cannot list directory " + locked.string() +
                                                          ": " + os_error(EACCES))))
      << r;
  const fs::path unstatable = root / "listable" / "hidden-from-stat.gguf";
  EXPECT_TRUE(contains(r.out, unreadable_line(unstatable, "cannot stat " + unstatable.string() +
                                                              ": " + os_error(EACCES))))
      << r;
  EXPECT_TRUE(contains(r.out, valid.string() + ": pass:")) << r;
  EXPECT_FALSE(contains(r.out, "inside.gguf")) << r;

  // Machine formats: the same reports, and each once on standard error.
  const RunResult j = run_cli({"--format", "json", root.string()}, unprivileged());
  EXPECT_EQ(j.status, 2) << j;
  EXPECT_EQ(json_statuses(j),
            (std::map<std::string, std::string>{{locked.string(), "unreadable"},
                                                {unstatable.string(), "unreadable"},
                                                {valid.string(), "pass"}}));
  EXPECT_EQ(lines(j.err).size(), 2U) << j;

  // The root of the walk itself.
  fs::permissions(root, fs::perms::none);
  const RunResult top = run_cli({root.string()}, unprivileged());
  EXPECT_EQ(top.status, 2) << top;
  EXPECT_TRUE(contains(top.out, unreadable_line(root, "cannot list directory " + root.string() +
                                                          ": " + os_error(EACCES))))
      << top;
  fs::permissions(root, fs::perms::owner_all);
  fs::permissions(root / "locked", fs::perms::owner_all);
  fs::permissions(root / "listable", fs::perms::owner_all);
}

// ---------------------------------------------------------------------------------------------
// A report that cannot be written is exit 4 with a message, never a silent success.

std::string write_error(int error) {
  return "ggufcheck: cannot write the report: " + os_error(error) + "\n";
}

// Every subcommand's output, big enough to fill a pipe's buffer or not.
std::vector<std::vector<std::string>> writing_invocations(const std::string& file) {
  return {{"--format", "text", file},
          {"--format", "json", file},
          {"--format", "sarif", file},
          {"list"},
          {"list", "--format", "json"},
          {"explain", "GGUF4001"},
          {"dump", file},
          {"--help"}};
}

TEST(CliWriteErrors, FullDiskExitsFour) {
  const int full = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (full < 0) GTEST_SKIP() << "no /dev/full: " << std::strerror(errno);
  for (const auto& args : writing_invocations(example("valid/tiny-llama.gguf"))) {
    RunOptions options;
    options.stdout_fd = full;
    const RunResult r = run_cli(args, options);
    EXPECT_TRUE(r.exited && r.status == 4) << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_EQ(r.err, write_error(ENOSPC)) << ::testing::PrintToString(args);
  }
  // Broken input does not hide the write error: 4 is the worst status.
  RunOptions options;
  options.stdout_fd = full;
  const RunResult r = run_cli({example("broken/truncated.gguf")}, options);
  EXPECT_EQ(r.status, 4) << r;
  ::close(full);
}

// A reader that went away: EPIPE, not death by SIGPIPE (the runner gives the CLI SIGPIPE's
// default action).
TEST(CliWriteErrors, ClosedPipeExitsFourWithoutASignal) {
  for (const auto& args : writing_invocations(example("valid/tiny-llama.gguf"))) {
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    ::close(fds[0]);
    RunOptions options;
    options.stdout_fd = fds[1];
    const RunResult r = run_cli(args, options);
    ::close(fds[1]);
    EXPECT_TRUE(r.exited) << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_EQ(r.signal, 0) << ::testing::PrintToString(args);
    EXPECT_EQ(r.status, 4) << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_EQ(r.err, write_error(EPIPE)) << ::testing::PrintToString(args);
  }
}

// A closed standard output fails the first write (EBADF); no file the CLI opens takes its place.
TEST(CliWriteErrors, ClosedStdoutExitsFour) {
  RunOptions options;
  options.close_stdout = true;
  for (const auto& args : writing_invocations(example("valid/tiny-llama.gguf"))) {
    const RunResult r = run_cli(args, options);
    EXPECT_TRUE(r.exited && r.status == 4) << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_EQ(r.err, write_error(EBADF)) << ::testing::PrintToString(args);
  }
  // Nothing to write (--quiet and a pass): nothing lost.
  const RunResult quiet = run_cli({"--quiet", example("valid/tiny-llama.gguf")}, options);
  EXPECT_TRUE(quiet.exited && quiet.status == 0) << quiet;
  EXPECT_EQ(quiet.err, "");
}

// ---------------------------------------------------------------------------------------------
// Conventions

TEST(CliConventions, RepeatedSingleValueOptionsTakeTheLast) {
  TempDir dir;
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  const RunResult text = run_cli({"--format", "json", "--format", "text", bool2});
  EXPECT_EQ(text.status, 1) << text;
  EXPECT_EQ(text.out, run_cli({bool2}).out);
  EXPECT_TRUE(json::accept(run_cli({"--format", "text", "--format=json", bool2}).out));
  EXPECT_EQ(run_cli({"--profile", "strict", "--profile", "llama.cpp", bool2}).status, 0);
  EXPECT_EQ(run_cli({"--profile", "llama.cpp", "--profile", "strict", bool2}).status, 1);
  const RunResult color = run_cli({"--color", "always", "--color", "never", bool2});
  EXPECT_FALSE(contains(color.out, "\x1b")) << color;
  EXPECT_TRUE(contains(run_cli({"--color", "never", "--color", "always", bool2}).out, "\x1b["));
  EXPECT_EQ(run_cli({"-j", "many", "-j", "2", bool2, bool2}).status, 1);
  EXPECT_EQ(run_cli({"--jobs", "2", "-j", "many", bool2}).status, 3);
  EXPECT_EQ(run_cli({"dump", "--level", "3", "--level", "0", bool2}).out,
            run_cli({"dump", "--level", "0", bool2}).out);
  EXPECT_EQ(run_cli({"dump", "--profile", "strict", "--profile", "llama.cpp", bool2}).status, 0);
  EXPECT_EQ(run_cli({"list", "--format", "json", "--format", "text"}).out, run_cli({"list"}).out);
}

// --disable, --enable and --severity: the last one of a code wins; --enable restores the
// profile's severity, or makes a code the profile keeps silent a warning.
TEST(CliConventions, TheLastOverrideOfACodeWins) {
  TempDir dir;
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  struct Case {
    std::vector<std::string> args;
    std::string expected;  // the GGUF2012 line's severity; empty: not reported
  };
  const std::vector<Case> cases = {
      // strict reports the bool as an error.
      {{"--disable", "GGUF2012", "--enable", "GGUF2012"}, "error"},
      {{"--enable", "GGUF2012", "--disable", "GGUF2012"}, ""},
      {{"--severity", "GGUF2012=note", "--enable", "non-canonical-bool"}, "error"},
      {{"--enable", "GGUF2012", "--severity", "GGUF2012=note"}, "note"},
      {{"--severity", "GGUF2012=note", "--disable", "GGUF2012"}, ""},
      {{"--disable", "GGUF2012", "--severity", "GGUF2012=warning"}, "warning"},
      {{"--severity", "GGUF2012=off", "--severity", "GGUF2012=warning"}, "warning"},
      // llama.cpp keeps it silent.
      {{"--profile", "llama.cpp", "--disable", "GGUF2012", "--enable", "GGUF2012"}, "warning"},
      {{"--profile", "llama.cpp", "--severity", "GGUF2012=error", "--enable", "GGUF2012"},
       "warning"},
      {{"--profile", "llama.cpp", "--enable", "GGUF2012", "--severity", "GGUF2012=error"}, "error"},
      {{"--profile", "llama.cpp", "--enable", "GGUF2012", "--disable", "GGUF2012"}, ""},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.push_back(bool2);
    const RunResult r = run_cli(args);
    EXPECT_TRUE(r.exited) << r;
    EXPECT_EQ(r.status, c.expected == "error" ? 1 : 0) << ::testing::PrintToString(args) << "\n"
                                                       << r;
    if (c.expected.empty()) {
      EXPECT_FALSE(contains(r.out, "GGUF2012")) << ::testing::PrintToString(args) << "\n" << r;
    } else {
      EXPECT_TRUE(contains(r.out, c.expected + "[GGUF2012 non-canonical-bool]"))
          << ::testing::PrintToString(args) << "\n"
          << r;
    }
  }
}

TEST(CliConventions, ColourEnvironment) {
  TempDir dir;
  const std::string both = dir.write("both.gguf", error_and_warning_bytes()).string();
  struct Case {
    std::map<std::string, std::optional<std::string>> env;
    std::vector<std::string> options;
    bool colour;
  };
  // Standard output is a pipe throughout.
  const std::vector<Case> cases = {
      {{}, {}, false},
      {{{"FORCE_COLOR", "1"}}, {}, true},
      {{{"FORCE_COLOR", "3"}}, {"--color", "auto"}, true},
      {{{"FORCE_COLOR", "0"}}, {}, false},
      {{{"FORCE_COLOR", ""}}, {}, false},
      {{{"CLICOLOR_FORCE", "1"}}, {}, true},
      {{{"CLICOLOR_FORCE", "0"}}, {}, false},
      {{{"FORCE_COLOR", "1"}, {"TERM", "dumb"}}, {}, true},
      {{{"FORCE_COLOR", "1"}, {"NO_COLOR", "1"}}, {}, true},
      {{{"FORCE_COLOR", "1"}}, {"--color", "never"}, false},
      {{{"NO_COLOR", "1"}}, {"--color", "always"}, true},
  };
  for (const Case& c : cases) {
    RunOptions options;
    options.env = c.env;
    std::vector<std::string> args = c.options;
    args.push_back(both);
    const RunResult r = run_cli(args, options);
    EXPECT_EQ(r.status, 1) << r;
    EXPECT_EQ(contains(r.out, "\x1b["), c.colour)
        << ::testing::PrintToString(c.env) << " " << ::testing::PrintToString(c.options);
  }
}

TEST(CliConventions, AMistypedSubcommandGetsASuggestion) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"lsit", "list"}, {"lst", "list"},        {"chekc", "check"}, {"chek", "check"},
      {"dmup", "dump"}, {"explian", "explain"}, {"hlep", "help"},   {"Lis", "list"},
  };
  for (const auto& [typed, meant] : cases) {
    const RunResult r = run_cli({typed, "whatever"});
    EXPECT_TRUE(r.exited && r.status == 3) << typed << "\n" << r;
    EXPECT_EQ(r.out, "") << typed;
    EXPECT_EQ(r.err, "ggufcheck: '" + typed +
                         "' is neither a file nor a subcommand; did you mean '" + meant + "'?\n")
        << typed;
  }
  // A path that exists is a file, however close to a subcommand.
  TempDir dir;
  dir.write("lsit", valid_bytes());
  const RunResult file = run_cli({"lsit"}, in_directory(dir.path()));
  EXPECT_EQ(file.status, 0) << file;
  EXPECT_TRUE(contains(file.out, "lsit: pass:")) << file;
  // Far from every subcommand: a file that cannot be read.
  for (const std::string far : {"model.gguf", "xyzzy", "checkpoint"}) {
    const RunResult r = run_cli({(dir.path() / far).string()});
    EXPECT_EQ(r.status, 2) << far << "\n" << r;
    const RunResult relative = run_cli({far}, in_directory(dir.path()));
    EXPECT_EQ(relative.status, 2) << far << "\n" << relative;
    EXPECT_TRUE(contains(relative.out, "GGUF0001")) << relative;
  }
}

TEST(CliConventions, TopLevelHelpShowsTheOptionsOfCheck) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"help"},
        std::vector<std::string>{"-h"}}) {
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 0) << r;
    for (const char* word : {"check", "list", "explain", "dump", "--profile", "--format",
                             "--werror", "--disable", "--enable", "--severity", "--limit", "--jobs",
                             "--quiet", "--color", "--sarif-help-base", "--sarif-root"}) {
      EXPECT_TRUE(contains(r.out, word)) << word << "\n" << r;
    }
  }
}

// The help names no file outside the repository.
TEST(CliConventions, HelpNamesNoFileOutsideTheRepository) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--help"}, std::vector<std::string>{"check", "--help"},
        std::vector<std::string>{"list", "--help"}, std::vector<std::string>{"explain", "--help"},
        std::vector<std::string>{"dump", "--help"}}) {
    const RunResult r = run_cli(args);
    EXPECT_EQ(r.status, 0) << r;
    for (const char* name : {"docs/gguf.md", "gguf-format.md", "design.md", "threats.md",
                             "conformance.md", "shared/"}) {
      EXPECT_FALSE(contains(r.out, name)) << name << "\n" << r;
    }
    std::smatch m;
    std::string rest = r.out;
    const std::regex doc_ref(R"(docs/[A-Za-z0-9_./-]*[A-Za-z0-9_/])");
    while (std::regex_search(rest, m, doc_ref)) {
      EXPECT_TRUE(fs::exists(source_dir() / m.str())) << m.str() << " does not exist";
      rest = m.suffix().str();
    }
  }
  EXPECT_TRUE(contains(run_cli({"check", "--help"}).out, "what the GGUF specification requires"));
}

// Usage errors in ggufcheck's words, not the argument parser's.
TEST(CliConventions, UsageErrorsReadAsGgufchecksOwnSentences) {
  TempDir dir;
  const std::string file = dir.write("valid.gguf", valid_bytes()).string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--profile", "foo", file}, "--profile: 'foo' is not a profile (strict, spec, llama.cpp)"},
      {{"--frobnicate", file}, "unknown option '--frobnicate' (see 'ggufcheck --help')"},
      {{"check", "--frobnicate=3", file}, "unknown option '--frobnicate' (see 'ggufcheck --help')"},
      {{"-Z", file}, "unknown option '-Z' (see 'ggufcheck --help')"},
      {{"--format"}, "--format needs a value"},
      {{file, "--profile"}, "--profile needs a value"},
      {{"--format", "yaml", file}, "--format: 'yaml' is not a format (text, json, sarif, github)"},
      {{"--color", "blue", file}, "--color: 'blue' is not a colour mode (auto, always, never)"},
      {{"-j", "many", file}, "--jobs: 'many' is not a number of threads (0..1024)"},
      {{"-j", "1025", file}, "--jobs: '1025' is not a number of threads (0..1024)"},
      {{"list", "--format", "xml"}, "--format: 'xml' is not a format of 'list' (text, json)"},
      {{"list", "extra"}, "unexpected argument 'extra' (see 'ggufcheck --help')"},
      {{"explain"}, "explain needs a code or a name (see 'ggufcheck list')"},
      {{"dump"}, "dump needs a file"},
      {{"dump", "--level", "9", file}, "--level: '9' is not a level (0, 1, 2, 3, L0, L1, L2, L3)"},
  };
  for (const auto& [args, message] : cases) {
    const RunResult r = run_cli(args);
    EXPECT_TRUE(r.exited && r.status == 3) << ::testing::PrintToString(args) << "\n" << r;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "ggufcheck: " + message + "\n") << ::testing::PrintToString(args);
  }
  // None of the bad usages shows the argument parser's own phrasing.
  for (const BadUsage& u : bad_usages(file)) {
    const RunResult r = run_cli(u.args);
    for (const char* parser :
         {"The following argument", "not expected", "Run with --help", "is not in {",
          "required TEXT", "Expected", "Could not convert", "Value ", "is required"}) {
      EXPECT_FALSE(contains(r.err, parser)) << ::testing::PrintToString(u.args) << "\n" << r;
    }
  }
}

// Text over several files ends with one total line; one file, or --quiet, has none.
TEST(CliConventions, TextEndsWithATotalOverSeveralFiles) {
  TempDir dir;
  const std::string valid = dir.write("valid.gguf", valid_bytes()).string();
  const std::string bool2 = dir.write("bool2.gguf", bool2_bytes()).string();
  const std::string missing = (dir.path() / "missing.gguf").string();
  const RunResult r = run_cli({valid, bool2, missing});
  EXPECT_EQ(r.status, 2) << r;
  const auto out = lines(r.out);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back(), "3 files: 1 passed, 1 failed, 1 unreadable") << r;
  EXPECT_EQ(std::count_if(out.begin(), out.end(),
                          [](const std::string& l) { return std::regex_match(l, kTotalLine); }),
            1);
  const RunResult one = run_cli({valid});
  EXPECT_FALSE(contains(one.out, " passed, ")) << one;
  const RunResult quiet = run_cli({"--quiet", valid, bool2});
  EXPECT_FALSE(contains(quiet.out, " passed, ")) << quiet;
  // A directory's files count one by one.
  const RunResult tree = run_cli({dir.path().string()});
  EXPECT_TRUE(contains(tree.out, "\n2 files: 1 passed, 1 failed, 0 unreadable\n")) << tree;
  for (const std::string format : {"json", "sarif"}) {
    EXPECT_FALSE(contains(run_cli({"--format", format, valid, bool2}).out, " passed, "));
  }
}

TEST(CliConventions, SarifOptionsReachTheReport) {
  TempDir dir;
  const std::string bool2 = dir.write("sub/bool2.gguf", bool2_bytes()).string();
  const RunResult r =
      run_cli({"--format", "sarif", "--sarif-help-base", "https://example.org/diag/",
               "--sarif-root", dir.path().string(), bool2});
  EXPECT_EQ(r.status, 1) << r;
  const json doc = json::parse(r.out);
  const json& run = doc.at("runs").at(0);
  for (const auto& rule : run.at("tool").at("driver").at("rules")) {
    EXPECT_EQ(rule.at("helpUri").get<std::string>().rfind("https://example.org/diag/", 0), 0U)
        << rule;
  }
  const json& location = run.at("results").at(0).at("locations").at(0).at("physicalLocation");
  EXPECT_EQ(location.at("artifactLocation").at("uriBaseId"), "SRCROOT") << location;
  EXPECT_EQ(location.at("artifactLocation").at("uri"), "sub/bool2.gguf") << location;
  // Without them: absolute URIs.
  const json plain = json::parse(run_cli({"--format", "sarif", bool2}).out);
  const json& artifact = plain.at("runs")
                             .at(0)
                             .at("results")
                             .at(0)
                             .at("locations")
                             .at(0)
                             .at("physicalLocation")
                             .at("artifactLocation");
  EXPECT_FALSE(artifact.contains("uriBaseId")) << artifact;
}

// ---------------------------------------------------------------------------------------------
// --format github, and the options a machine-readable report records

// One workflow command per finding, the file and title escaped as GitHub's runner parses
// properties ("%", ":" and "," inside one would end it), the message with its line breaks
// escaped, the severities mapped to error/warning/notice, then the summary lines.
TEST(CliGithub, AnnotationPerFindingWithEscapedProperties) {
  TempDir dir;
  const std::string file = dir.write("a,b:c%d.gguf", bool2_bytes()).string();
  std::string escaped_file = file;
  for (const auto& [from, to] :
       std::vector<std::pair<std::string, std::string>>{{"%", "%25"}, {":", "%3A"}, {",", "%2C"}}) {
    for (std::size_t at = 0; (at = escaped_file.find(from, at)) != std::string::npos;) {
      escaped_file.replace(at, from.size(), to);
      at += to.size();
    }
  }
  const RunResult r = run_cli({"--format", "github", file, example("valid/tiny-llama.gguf")});
  EXPECT_TRUE(r.exited && r.status == 1) << r;
  std::istringstream lines(r.out);
  std::vector<std::string> commands, plain;
  for (std::string line; std::getline(lines, line);) {
    (line.starts_with("::") ? commands : plain).push_back(line);
  }
  ASSERT_FALSE(commands.empty()) << r;
  const std::regex command(R"(^::(error|warning|notice) file=([^,:]+),title=(GGUF[0-9]{4}) )"
                           R"(([a-z0-9-]+)::(.+) \(at 0x[0-9a-f]+, .+\)(%0Ahint: .+)?$)");
  bool bool_error = false;
  for (const std::string& c : commands) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(c, m, command)) << c;
    EXPECT_EQ(m[2].str(), escaped_file) << c;
    EXPECT_EQ(c.find('\r'), std::string::npos) << c;
    if (m[1] == "error" && m[3] == "GGUF2012") bool_error = true;
  }
  EXPECT_TRUE(bool_error) << r;
  // The text output's summary lines and total, as plain log lines.
  ASSERT_EQ(plain.size(), 3U) << r;
  EXPECT_TRUE(contains(plain[0], ": FAIL: ")) << r;
  EXPECT_TRUE(contains(plain[1], "tiny-llama.gguf: pass: ")) << r;
  EXPECT_EQ(plain[2], "2 files: 1 passed, 1 failed, 0 unreadable") << r;
  EXPECT_EQ(r.err, "") << r;
}

// A file named like a workflow command must not become one: only the annotations start "::".
TEST(CliGithub, AFileNamedLikeACommandStartsNoCommand) {
  TempDir dir;
  dir.write("::warning::x.gguf", bool2_bytes());
  const RunResult r =
      run_cli({"--format", "github", "::warning::x.gguf"}, in_directory(dir.path()));
  EXPECT_TRUE(r.exited && r.status == 1) << r;
  std::istringstream lines(r.out);
  std::size_t commands = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("::")) continue;
    ++commands;
    EXPECT_TRUE(line.starts_with("::error file=%3A%3Awarning%3A%3Ax.gguf,title=GGUF2012 ")) << r;
  }
  EXPECT_EQ(commands, 1U) << r;
  EXPECT_TRUE(contains(r.out, "\n./::warning::x.gguf: FAIL: 1 error")) << r;
}

TEST(CliGithub, WarningsAndNotesBecomeWarningAndNotice) {
  const RunResult strict = run_cli({"--format", "github", "--severity", "GGUF2012=warning",
                                    example("broken/three-problems.gguf")});
  EXPECT_TRUE(contains(strict.out, "::warning file=")) << strict;
  EXPECT_TRUE(contains(strict.out, "title=GGUF2012 non-canonical-bool::")) << strict;
  const RunResult notes = run_cli(
      {"--format", "github", "--severity", "GGUF2012=note", example("broken/three-problems.gguf")});
  EXPECT_TRUE(contains(notes.out, "::notice file=")) << notes;
  const RunResult unreadable = run_cli({"--format", "github", "no-such-file.gguf"});
  EXPECT_EQ(unreadable.status, 2) << unreadable;
  EXPECT_TRUE(contains(
      unreadable.out, "::error file=no-such-file.gguf,title=GGUF0001 unreadable-file::cannot open"))
      << unreadable;
  EXPECT_EQ(unreadable.err, "") << unreadable;  // once, in the log, not twice
}

// A stored report says what it was checked against: JSON and SARIF record the options.
TEST(CliOutput, JsonAndSarifRecordTheOptionsInForce) {
  const std::vector<std::string> options = {
      "--profile",     "spec",    "--werror",    "--disable",         "GGUF2012", "--severity",
      "GGUF2004=note", "--limit", "kv-count=99", "--no-model-checks", "--data"};
  std::vector<std::string> args = {"--format", "json"};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back(example("valid/tiny-llama.gguf"));
  const RunResult j = run_cli(args);
  ASSERT_TRUE(json::accept(j.out)) << j;
  args[1] = "sarif";
  const RunResult s = run_cli(args);
  ASSERT_TRUE(json::accept(s.out)) << s;
  const json from_json = json::parse(j.out).at("options");
  const json from_sarif = json::parse(s.out).at("runs").at(0).at("properties").at("options");
  EXPECT_EQ(from_json, from_sarif);
  EXPECT_EQ(from_json.at("profile"), "spec");
  EXPECT_EQ(from_json.at("werror"), true);
  EXPECT_EQ(from_json.at("severity_overrides"), json({{"GGUF2012", "off"}, {"GGUF2004", "note"}}));
  EXPECT_EQ(from_json.at("limits").at("kv-count"), 99);
  EXPECT_TRUE(from_json.at("limits").at("tensor-count").is_null());
  EXPECT_EQ(from_json.at("limits").at("depth"), 64);
  EXPECT_EQ(from_json.at("data"), true);
  EXPECT_EQ(from_json.at("model_checks"), false);
  EXPECT_EQ(from_json.at("template_checks"), true);
  const json tool = json::parse(j.out).at("tool");
  EXPECT_TRUE(contains(tool.at("llama_cpp").get<std::string>(), "node-llama-cpp")) << tool;
  EXPECT_FALSE(tool.at("commit").get<std::string>().empty()) << tool;
}

// ---------------------------------------------------------------------------------------------
// Standard error on a terminal (a pseudo-terminal from posix_openpt): what --progress defaults to

struct PtyRun {
  RunResult result;  // out: stdout (a pipe); err: what the terminal received
};

// Runs the CLI with standard error on the slave side of a new pseudo-terminal (standard output
// on a pipe, standard input /dev/null), reading both until the child is gone.
PtyRun run_cli_with_stderr_on_a_terminal(const std::vector<std::string>& args) {
  PtyRun run;
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    throw std::runtime_error(std::string("posix_openpt: ") + std::strerror(errno));
  }
  const char* slave_name = ::ptsname(master);
  if (slave_name == nullptr) throw std::runtime_error("ptsname");
  int slave = ::open(slave_name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) throw std::runtime_error(std::string("open pty: ") + std::strerror(errno));
  int out_pipe[2] = {-1, -1};
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw std::runtime_error("pipe");

  std::vector<std::string> argv_storage = {GGUFCHECK_CLI_PATH};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = make_environment({});
  std::vector<char*> envp;
  for (auto& e : env_storage) envp.push_back(e.data());
  envp.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDONLY);
    if (null < 0 || ::dup2(null, 0) < 0) child_fail("/dev/null");
    if (::dup2(out_pipe[1], 1) < 0) child_fail("dup2 stdout");
    if (::dup2(slave, 2) < 0) child_fail("dup2 stderr");
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(argv_storage[0].c_str(), argv.data(), envp.data());
    child_fail("execve");
  }
  close_fd(slave);
  close_fd(out_pipe[1]);
  int master_fd = master;
  char buffer[1 << 16];
  // The master reads EIO once no process holds the slave any more: the child has ended.
  while (out_pipe[0] >= 0 || master_fd >= 0) {
    std::vector<pollfd> fds;
    if (out_pipe[0] >= 0) fds.push_back({out_pipe[0], POLLIN, 0});
    if (master_fd >= 0) fds.push_back({master_fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), -1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      const ssize_t n = ::read(p.fd, buffer, sizeof buffer);
      if (n > 0) {
        (p.fd == out_pipe[0] ? run.result.out : run.result.err)
            .append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close_fd(p.fd == out_pipe[0] ? out_pipe[0] : master_fd);
      }
    }
  }
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus)) {
    run.result.exited = true;
    run.result.status = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    run.result.signal = WTERMSIG(wstatus);
  }
  return run;
}

// The progress line is printed at a scan's first update and always at its last (100%), so one
// scan of a file with tensor data prints it whatever the speed: no timing is involved.
TEST(CliProgress, OnByDefaultWhenStderrIsATerminal) {
  const std::string file = example("valid/tiny-llama.gguf");
  const PtyRun on = run_cli_with_stderr_on_a_terminal({"--data", "--quiet", file});
  ASSERT_TRUE(on.result.exited) << on.result;
  EXPECT_EQ(on.result.status, 0) << on.result;
  EXPECT_TRUE(contains(on.result.err, file + ": data ")) << on.result;
  EXPECT_TRUE(contains(on.result.err, "(100%)")) << on.result;
  // Rewritten in place, and erased at the end so the report follows on a clean line.
  EXPECT_TRUE(contains(on.result.err, "\r\033[K")) << on.result;
  EXPECT_FALSE(contains(on.result.err, "data checked")) << on.result;  // the report is stdout's
}

TEST(CliProgress, OffOnATerminalWhenRefusedOrWithoutData) {
  const std::string file = example("valid/tiny-llama.gguf");
  const PtyRun refused = run_cli_with_stderr_on_a_terminal({"--data", "--no-progress", file});
  EXPECT_EQ(refused.result.status, 0) << refused.result;
  EXPECT_EQ(refused.result.err, "") << refused.result;
  const PtyRun last_wins =
      run_cli_with_stderr_on_a_terminal({"--data", "--progress", "--no-progress", file});
  EXPECT_EQ(last_wins.result.err, "") << last_wins.result;
  const PtyRun no_data = run_cli_with_stderr_on_a_terminal({file});
  EXPECT_EQ(no_data.result.status, 0) << no_data.result;
  EXPECT_EQ(no_data.result.err, "") << no_data.result;
}

TEST(CliProgress, OffByDefaultWhenStderrIsNotATerminal) {
  const std::string file = example("valid/tiny-llama.gguf");
  const RunResult piped = run_cli({"--data", "--quiet", file});
  EXPECT_EQ(piped.status, 0) << piped;
  EXPECT_EQ(piped.err, "") << piped;
  // Asked for, or asked for after a refusal (the last wins): one line per update, no escapes.
  for (const auto& args :
       {std::vector<std::string>{"--data", "--quiet", "--progress", file},
        std::vector<std::string>{"--data", "--quiet", "--no-progress", "--progress", file}}) {
    const RunResult asked = run_cli(args);
    EXPECT_EQ(asked.status, 0) << asked;
    EXPECT_TRUE(contains(asked.err, file + ": data ")) << asked;
    EXPECT_TRUE(contains(asked.err, "(100%)")) << asked;
    EXPECT_FALSE(contains(asked.err, "\033")) << asked;
  }
}

// ---------------------------------------------------------------------------------------------
// URLs: only `check` reads them; the other subcommands say they read local files only (no
// request is made: the addresses need not exist).

TEST(CliUrls, SubcommandsThatReadLocalFilesSaySo) {
  for (const std::string url :
       {"https://example.invalid/model.gguf", "hf://owner/repo/model.gguf"}) {
    const std::string said = "reads local files only";
    const RunResult info = run_cli({"info", url});
    EXPECT_EQ(info.status, 2) << info;
    EXPECT_TRUE(contains(info.out, "cannot read " + url + ": 'ggufcheck info' " + said)) << info;
    EXPECT_FALSE(contains(info.out + info.err, "No such file")) << info;
    const RunResult info_json = run_cli({"info", "--format", "json", url});
    EXPECT_EQ(info_json.status, 2) << info_json;
    EXPECT_TRUE(contains(info_json.out, said)) << info_json;

    const RunResult dump = run_cli({"dump", url});
    EXPECT_EQ(dump.status, 2) << dump;
    ASSERT_TRUE(json::accept(dump.out)) << dump;
    const json failure = json::parse(dump.out);
    EXPECT_EQ(failure.at("ok"), false) << dump;
    EXPECT_TRUE(contains(failure.at("error").get<std::string>(), "'ggufcheck dump' " + said))
        << dump;
    EXPECT_EQ(failure.at("errors"), json::array()) << dump;

    for (const std::string format : {"text", "json"}) {
      const RunResult hash = run_cli({"hash", "--format", format, url});
      EXPECT_EQ(hash.status, 2) << hash;
      EXPECT_TRUE(contains(hash.err, "'ggufcheck hash' " + said)) << hash;
      EXPECT_FALSE(contains(hash.err, "No such file")) << hash;
    }

    // verify: a URL as the manifest, or as a file to verify against one.
    const RunResult manifest = run_cli({"verify", url});
    EXPECT_EQ(manifest.status, 2) << manifest;
    EXPECT_TRUE(contains(manifest.err, "'ggufcheck verify' " + said)) << manifest;
    EXPECT_FALSE(contains(manifest.err, "No such file")) << manifest;
  }
  // A URL among local files: the files are still read, the run is exit 2.
  const TempDir dir;
  const std::string file = example("valid/tiny-llama.gguf");
  const RunResult hashed = run_cli({"hash", "--format", "json", file});
  ASSERT_EQ(hashed.status, 0) << hashed;
  const fs::path manifest =
      dir.write("model.json", ByteVector(hashed.out.begin(), hashed.out.end()));
  const RunResult verify = run_cli({"verify", manifest.string(), "https://example.invalid/m.gguf"});
  EXPECT_EQ(verify.status, 2) << verify;
  EXPECT_TRUE(contains(verify.err, "'ggufcheck verify' reads local files only")) << verify;
  const RunResult mixed = run_cli({"info", file, "https://example.invalid/m.gguf", file});
  EXPECT_EQ(mixed.status, 2) << mixed;
  // Both files shown to their verdict lines, the URL between them unreadable.
  const std::size_t first = mixed.out.find(file + ": pass");
  ASSERT_NE(first, std::string::npos) << mixed;
  EXPECT_NE(mixed.out.find(file + ": pass", first + 1), std::string::npos) << mixed;
  EXPECT_TRUE(contains(mixed.out, "'ggufcheck info' reads local files only")) << mixed;
}

}  // namespace
}  // namespace ggufcheck::testing
