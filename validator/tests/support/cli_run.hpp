// Runs the built CLI (GGUFCHECK_CLI_PATH) in a child process: its exit status or signal, its
// standard output and its peak resident memory. For the tests of inputs and split sets.
#pragma once

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ggufcheck::testing {

struct CliRun {
  int status = -1;  // exit status, or -1
  int signal = 0;   // the signal that ended it, or 0
  std::string out;
  long max_rss_kib = 0;
};

// In a forked child: becomes the CLI run with `args` (exit 127 when it cannot be started).
[[noreturn]] inline void exec_cli(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  std::string cli = GGUFCHECK_CLI_PATH;
  argv.push_back(cli.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(cli.c_str(), argv.data());
  ::_exit(127);
}

// Waits for the child: its exit status (or -1), the signal that ended it (or 0), its peak RSS.
inline void wait_for(pid_t child, int& exit_status, int& signal, long& max_rss_kib) {
  int status = 0;
  struct rusage usage {};
  while (::wait4(child, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  max_rss_kib = usage.ru_maxrss;
  if (WIFEXITED(status)) exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) signal = WTERMSIG(status);
}

// Runs the CLI with `args`; standard input from `input` (a path: through `cat`, so a pipe) when
// given.
inline CliRun run_cli(const std::vector<std::string>& args, const std::string& piped_file = "",
                      std::size_t address_space_limit = 0) {
  int out_pipe[2];
  if (::pipe(out_pipe) != 0) throw std::runtime_error("pipe");
  int in_pipe[2] = {-1, -1};
  pid_t feeder = -1;
  if (!piped_file.empty()) {
    if (::pipe(in_pipe) != 0) throw std::runtime_error("pipe");
    feeder = ::fork();
    if (feeder == 0) {
      ::dup2(in_pipe[1], STDOUT_FILENO);
      ::close(in_pipe[0]);
      ::close(in_pipe[1]);
      ::close(out_pipe[0]);
      ::close(out_pipe[1]);
      ::execlp("cat", "cat", piped_file.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  const pid_t child = ::fork();
  if (child == 0) {
    if (address_space_limit != 0) {
      const struct rlimit limit = {address_space_limit, address_space_limit};
      if (::setrlimit(RLIMIT_AS, &limit) != 0) ::_exit(126);
    }
    if (in_pipe[0] >= 0) {
      ::dup2(in_pipe[0], STDIN_FILENO);
      ::close(in_pipe[0]);
      ::close(in_pipe[1]);
    }
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    exec_cli(args);
  }
  if (in_pipe[0] >= 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
  }
  ::close(out_pipe[1]);
  CliRun run;
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(out_pipe[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    run.out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(out_pipe[0]);
  wait_for(child, run.status, run.signal, run.max_rss_kib);
  if (feeder > 0) {
    int ignored = 0;
    while (::waitpid(feeder, &ignored, 0) < 0 && errno == EINTR) {
    }
  }
  return run;
}

// Both outputs captured, from a working directory of its choice (so that the names a command
// prints are short and fixed); `started` runs in this process once the child exists (to signal
// it, say).
struct CapturedRun {
  int status = -1;  // exit status, or -1
  int signal = 0;   // the signal that ended it, or 0
  std::string out, err;
  long max_rss_kib = 0;
};
inline std::ostream& operator<<(std::ostream& os, const CapturedRun& r) {
  return os << "status=" << r.status << " signal=" << r.signal << "\n--- stdout\n"
            << r.out.substr(0, 3000) << "\n--- stderr\n"
            << r.err.substr(0, 3000);
}
struct CaptureOptions {
  std::string cwd;
  std::function<void(pid_t)> started;
};

inline CapturedRun run_cli_captured(const std::vector<std::string>& args,
                                    const CaptureOptions& options = {}) {
  int out_pipe[2], err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0) throw std::runtime_error("pipe");
  const pid_t child = ::fork();
  if (child == 0) {
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    for (const int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    exec_cli(args);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (options.started) options.started(child);
  CapturedRun run;
  // Both pipes read as they fill, so that neither blocks the child.
  struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* into[2] = {&run.out, &run.err};
  int open_count = 2;
  char buffer[65536];
  while (open_count > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_count;
        continue;
      }
      into[i]->append(buffer, static_cast<std::size_t>(n));
    }
  }
  wait_for(child, run.status, run.signal, run.max_rss_kib);
  return run;
}

}  // namespace ggufcheck::testing
