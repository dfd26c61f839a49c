#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace ggufcheck::testing::child {

void append_bounded(std::string& log, const char* text, std::size_t length, std::size_t max) {
  if (log.size() < max) log.append(text, std::min(length, max - log.size()));
}

void prepare_child(pid_t parent) {
  // libFuzzer also catches SIGINT, SIGTERM, SIGUSR1/2 and SIGXFSZ.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM, SIGPIPE, SIGINT, SIGTERM,
                  SIGUSR1, SIGUSR2, SIGXFSZ}) {
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    ::sigaction(sig, &action, nullptr);
  }
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);  // the parent died before prctl
}

bool send_all(int socket, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(socket, bytes, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool receive_all(int socket, void* data, std::size_t size) {
  auto* bytes = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::recv(socket, bytes, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

double cpu_seconds(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[1024];
  ssize_t n = 0;
  do {
    n = ::read(fd, text, sizeof text - 1);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  // The name in parentheses may hold spaces and parentheses: the fields start after the last ')'.
  const char* fields = std::strrchr(text, ')');
  if (fields == nullptr) return 0;
  // After ") ": state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt, majflt,
  // cmajflt, utime, stime, cutime, cstime (clock ticks).
  unsigned long long ticks[4] = {};
  if (std::sscanf(fields + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
                  &ticks[0], &ticks[1], &ticks[2], &ticks[3]) != 4) {
    return 0;
  }
  const long per_second = ::sysconf(_SC_CLK_TCK);
  return static_cast<double>(ticks[0] + ticks[1] + ticks[2] + ticks[3]) /
         static_cast<double>(per_second > 0 ? per_second : 100);
}

unsigned wall_guard_seconds(unsigned cpu_limit_seconds) {
  return std::max(10 * cpu_limit_seconds, 300U);
}

namespace {

// Drains the child's pipe until it exits (it may print more than is kept), kills it once it has
// used `cpu_limit_seconds` of CPU time (or wall_guard_seconds of wall time went by: a child that
// waits without computing), reaps it. CPU time, not wall time: a loaded machine must not turn a
// verdict into a timeout.
Run collect(pid_t pid, int fd, unsigned cpu_limit_seconds, std::size_t max_output) {
  Run result;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::seconds(wall_guard_seconds(cpu_limit_seconds));
  bool killed = false;
  char buffer[4096];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready > 0) {
      const ssize_t n = ::read(fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EOF: the child exited
      append_bounded(result.output, buffer, static_cast<std::size_t>(n), max_output);
    }
    if (!killed &&
        (cpu_seconds(pid) > cpu_limit_seconds || std::chrono::steady_clock::now() > deadline)) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
  }
  ::close(fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  if (WIFSIGNALED(status)) {
    result.status = WTERMSIG(status);
    result.end = result.status == SIGALRM || result.status == SIGKILL ? Run::End::TimedOut
                                                                      : Run::End::Signalled;
  } else {
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return result;
}

}  // namespace

Run run(const std::function<int()>& body, unsigned time_limit_seconds, std::size_t max_output,
        int close_in_child) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    if (close_in_child >= 0) ::close(close_in_child);
    ::dup2(fds[1], STDERR_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
    prepare_child(parent);
    // The child's own backstop, should the caller stop draining: the wall-time guard.
    ::alarm(wall_guard_seconds(time_limit_seconds));
    ::_exit(body());
  }
  ::close(fds[1]);
  return collect(pid, fds[0], time_limit_seconds, max_output);
}

Run spawn(const std::vector<std::string>& argv, unsigned time_limit_seconds,
          std::size_t max_output) {
  if (argv.empty()) throw std::runtime_error("spawn: no program");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
  // The default action for what a sanitizer or a fuzzing engine catches (prepare_child's list).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM, SIGPIPE, SIGINT, SIGTERM,
                  SIGUSR1, SIGUSR2, SIGXFSZ}) {
    sigaddset(&defaults, sig);
  }
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF);
  std::vector<std::string> copy = argv;
  std::vector<char*> pointers;
  for (std::string& a : copy) pointers.push_back(a.data());
  pointers.push_back(nullptr);
  pid_t pid = -1;
  const int error =
      ::posix_spawn(&pid, pointers[0], &actions, &attributes, pointers.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  ::close(fds[1]);
  if (error != 0) {
    ::close(fds[0]);
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(error));
  }
  return collect(pid, fds[0], time_limit_seconds, max_output);
}

namespace {

[[noreturn]] void serve(int socket, const Server::Handler& handler) {
  std::string request, answer, message;
  for (;;) {
    std::uint32_t length = 0;
    if (!receive_all(socket, &length, sizeof length)) ::_exit(0);
    request.assign(length, '\0');
    if (!receive_all(socket, request.data(), length)) ::_exit(0);
    answer.clear();
    const std::int32_t code = handler(request, answer);
    const auto answer_length = static_cast<std::uint32_t>(answer.size());
    message.assign(reinterpret_cast<const char*>(&code), sizeof code);
    message.append(reinterpret_cast<const char*>(&answer_length), sizeof answer_length);
    message.append(answer);
    if (!send_all(socket, message.data(), message.size())) ::_exit(0);
  }
}

}  // namespace

void Server::start(const std::function<void()>& setup, const Handler& handler) {
  if (running()) return;
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    throw std::runtime_error("socketpair failed");
  }
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sockets[0]);
    ::close(sockets[1]);
    throw std::runtime_error("fork failed");
  }
  if (pid == 0) {
    ::close(sockets[0]);
    prepare_child(parent);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
    }
    if (setup) setup();
    serve(sockets[1], handler);
  }
  ::close(sockets[1]);
  pid_ = pid;
  socket_ = sockets[0];
}

void Server::stop() {
  if (pid_ < 0) return;
  ::close(socket_);
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  socket_ = -1;
}

Server::Answer Server::call(const std::string& request, unsigned time_limit_seconds) {
  Answer answer;
  if (!running()) return answer;
  const auto length = static_cast<std::uint32_t>(request.size());
  std::string message(reinterpret_cast<const char*>(&length), sizeof length);
  message += request;
  if (send_all(socket_, message.data(), message.size())) {
    // The server's CPU time for this request, checked each second (see collect), and the
    // wall-time guard.
    const double cpu_before = cpu_seconds(pid_);
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::seconds(wall_guard_seconds(time_limit_seconds));
    pollfd p{socket_, POLLIN, 0};
    int ready = 0;
    for (;;) {
      ready = ::poll(&p, 1, 1000);
      if (ready < 0 && errno == EINTR) continue;
      if (ready != 0) break;
      if (cpu_seconds(pid_) - cpu_before > time_limit_seconds ||
          std::chrono::steady_clock::now() > deadline) {
        break;
      }
    }
    if (ready == 0) {
      stop();
      answer.status = Answer::Status::TimedOut;
      return answer;
    }
    std::uint32_t payload_length = 0;
    if (receive_all(socket_, &answer.code, sizeof answer.code) &&
        receive_all(socket_, &payload_length, sizeof payload_length)) {
      answer.payload.resize(payload_length);
      if (receive_all(socket_, answer.payload.data(), payload_length)) {
        answer.status = Answer::Status::Answered;
        return answer;
      }
    }
  }
  stop();
  answer.status = Answer::Status::Died;
  return answer;
}

}  // namespace ggufcheck::testing::child
