#include "process.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "fixtures.hpp"

extern char** environ;

namespace ggufcheck::bench {

namespace {

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& arg : argv) out.push_back(const_cast<char*>(arg.c_str()));
  out.push_back(nullptr);
  return out;
}

ProcessResult wait_for(pid_t pid, const std::string& what) {
  int status = 0;
  rusage usage{};
  while (::wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR)
      throw BenchError(fmt::format("cannot wait for {}: {}", what, std::strerror(errno)));
  }
  ProcessResult result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.peak_rss_kib = static_cast<std::uint64_t>(usage.ru_maxrss);  // KiB on Linux
  return result;
}

void read_all(int fd, std::string& out) {
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      out.append(chunk, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      return;
    }
  }
}

// Owns the two ends of a pipe.
class Pipe {
 public:
  Pipe() {
    if (::pipe2(fds_, O_CLOEXEC) != 0)
      throw BenchError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  [[nodiscard]] int read_end() const { return fds_[0]; }
  [[nodiscard]] int write_end() const { return fds_[1]; }
  void close_read() { close(fds_[0]); }
  void close_write() { close(fds_[1]); }

 private:
  static void close(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  int fds_[2] = {-1, -1};
};

class SpawnActions {
 public:
  SpawnActions() { ::posix_spawn_file_actions_init(&actions_); }
  ~SpawnActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_{};
};

}  // namespace

std::string ProcessResult::describe() const {
  return signal != 0 ? fmt::format("signal {} ({})", signal, ::strsignal(signal))
                     : fmt::format("exit status {}", exit_code);
}

ProcessResult run_process(const std::vector<std::string>& argv, Output output) {
  SpawnActions actions;
  Pipe pipe;
  if (output == Output::Capture) {
    ::posix_spawn_file_actions_adddup2(actions.get(), pipe.write_end(), STDOUT_FILENO);
  } else {
    ::posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  std::vector<char*> args = c_argv(argv);
  const int error =
      ::posix_spawn(&pid, argv.at(0).c_str(), actions.get(), nullptr, args.data(), environ);
  if (error != 0) throw BenchError(fmt::format("cannot run {}: {}", argv[0], std::strerror(error)));
  pipe.close_write();  // so that the read below ends when the child does
  std::string captured;
  if (output == Output::Capture) read_all(pipe.read_end(), captured);
  ProcessResult result = wait_for(pid, argv[0]);
  result.output = std::move(captured);
  return result;
}

ProcessResult measure_peak_rss(const std::string& self, const std::vector<std::string>& argv) {
  std::vector<std::string> helper = {self, "--peak-rss"};
  helper.insert(helper.end(), argv.begin(), argv.end());
  const ProcessResult ran = run_process(helper, Output::Capture);
  ProcessResult result;
  std::istringstream fields(ran.output);
  if (!ran.exited_with(0) ||
      !(fields >> result.exit_code >> result.signal >> result.peak_rss_kib >> result.seconds)) {
    throw BenchError(
        fmt::format("the peak-RSS helper failed on {} ({})", argv.at(0), ran.describe()));
  }
  return result;
}

int peak_rss_helper_main(const std::vector<std::string>& argv) {
  if (argv.empty()) return 2;
  // fork, not posix_spawn: the forked copy of this small process starts with a tiny high-water
  // mark (only its copied anonymous pages), which is all exec passes on to the command.
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) return 2;
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
    std::vector<char*> args = c_argv(argv);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "cannot run %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  const ProcessResult result = wait_for(pid, argv[0]);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  std::printf("%d %d %llu %.6f\n", result.exit_code, result.signal,
              static_cast<unsigned long long>(result.peak_rss_kib), elapsed.count());
  return 0;
}

}  // namespace ggufcheck::bench
