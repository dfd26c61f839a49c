// Running a reference implementation (llama.cpp's prebuilt libraries, loaded with dlopen) away
// from the test process, which it may abort or crash: a one-shot child whose stderr is captured,
// and a server process forked once that answers requests over a socket. Shared by
// ggml_reference.cpp (llama.cpp's GGUF reader) and llama_loader_reference.cpp (its model loader).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ggufcheck::testing::child {

// Appends at most `max - log.size()` bytes: the start of what a reference printed.
void append_bounded(std::string& log, const char* text, std::size_t length, std::size_t max);

// What every child of the test process does first: the default action for the signals a
// sanitizer or a fuzzing engine catches (a crash must end the child by its signal), and death
// with the parent (`parent`, the pid before fork) so that a child never outlives it.
void prepare_child(pid_t parent);

// send/recv until every byte went, retrying EINTR; false when the other end is gone.
[[nodiscard]] bool send_all(int socket, const void* data, std::size_t size);
[[nodiscard]] bool receive_all(int socket, void* data, std::size_t size);

// The CPU time (user and system, its reaped children's too) process `pid` has used so far; 0
// when it cannot be read. The time limits below are CPU time: on a loaded machine a child gets
// less of the processor, and a wall-time limit would turn its verdict into a timeout.
[[nodiscard]] double cpu_seconds(pid_t pid);
// The wall time after which a child is stopped whatever its CPU time (one that waits without
// computing): ten times its CPU-time limit, at least 300 s.
[[nodiscard]] unsigned wall_guard_seconds(unsigned cpu_limit_seconds);

// How a one-shot child ended.
struct Run {
  enum class End : std::uint8_t { Exited, Signalled, TimedOut };
  End end = End::Exited;
  int status = 0;      // Exited: the exit status; Signalled, TimedOut: the signal
  std::string output;  // what it wrote to stderr, at most max_output bytes of its start
};

// Forks a child that runs `body` (its result is the exit status) with stdout on /dev/null and
// stderr on a pipe that the caller drains. The child gets SIGKILL once it has used
// time_limit_seconds of CPU time, SIGALRM after the wall-time guard (both are End::TimedOut).
// `close_in_child`: a descriptor of the caller that the child must not hold (-1: none). Throws
// std::runtime_error when it cannot fork.
[[nodiscard]] Run run(const std::function<int()>& body, unsigned time_limit_seconds,
                      std::size_t max_output, int close_in_child = -1);

// Runs the program argv[0] with argv (posix_spawn: the caller's memory is not copied, which
// matters for a large or sanitized caller), stdin on /dev/null, stdout and stderr on the pipe
// that becomes Run::output; SIGKILL after time_limit_seconds of CPU time or the wall-time guard
// (End::TimedOut). Throws
// std::runtime_error when it cannot be started.
[[nodiscard]] Run spawn(const std::vector<std::string>& argv, unsigned time_limit_seconds,
                        std::size_t max_output);

// A process forked once that answers requests, one at a time. A request is bytes; an answer
// is an int32 and bytes. The server runs `setup` once, then `handler` on each request, with
// stdout and stderr on /dev/null; it ends when the test process closes its end of the socket
// (or dies). Every message goes in one piece: u32 length and bytes; i32, u32 length and bytes.
class Server {
 public:
  using Handler = std::function<std::int32_t(const std::string& request, std::string& answer)>;

  Server() = default;
  ~Server() { stop(); }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Forks the server (throws std::runtime_error when it cannot).
  void start(const std::function<void()>& setup, const Handler& handler);
  void stop();
  [[nodiscard]] bool running() const { return pid_ >= 0; }
  // The test process's end of the socket (-1 when not running), for children that must close it.
  [[nodiscard]] int socket() const { return socket_; }

  struct Answer {
    enum class Status : std::uint8_t { Answered, TimedOut, Died };
    Status status = Status::Died;
    std::int32_t code = 0;
    std::string payload;
  };
  // Sends the request and waits for the answer until the server has used time_limit_seconds of
  // CPU time on it (or the wall-time guard went by). On TimedOut and Died the server is stopped
  // (the next start() forks a fresh one).
  [[nodiscard]] Answer call(const std::string& request, unsigned time_limit_seconds);

 private:
  pid_t pid_ = -1;
  int socket_ = -1;
};

}  // namespace ggufcheck::testing::child
