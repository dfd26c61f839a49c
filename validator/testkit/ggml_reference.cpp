#include "ggml_reference.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ggml_abi.hpp"

namespace ggufcheck::testing {

namespace {

// The result of one load, as the exit status of a one-shot child or in a server response.
constexpr int kLoads = 0;
constexpr int kReaderRejects = 10;
constexpr int kOutOfBounds = 11;
constexpr int kCannotStat = 12;

constexpr std::size_t kMaxLog = 4096;

void append_log(std::string& log, const char* text, std::size_t length) {
  if (log.size() < kMaxLog) log.append(text, std::min(length, kMaxLog - log.size()));
}

ReferenceOutcome outcome_of(int code) {
  switch (code) {
    case kLoads: return ReferenceOutcome::Loads;
    case kReaderRejects: return ReferenceOutcome::ReaderRejects;
    case kOutOfBounds: return ReferenceOutcome::OutOfBounds;
    default: return ReferenceOutcome::HarnessFailure;
  }
}

// What every child of the test process does first. A crash must end the process by its
// signal, not in a sanitizer's or a fuzzing engine's handler inherited from the test process
// (libFuzzer's also catch SIGINT, SIGTERM, SIGUSR1/2 and SIGXFSZ). And the child must not
// outlive the test process when that dies without closing the socket (killed, or ended by
// _Exit in a crash handler) while the child is busy.
void prepare_child(pid_t parent) {
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

}  // namespace

namespace {

// What llama_model_loader's constructor does with a single-file model, as far as the container
// goes (llama-model-loader.cpp): the load of ggml::Loaded, then for every tensor
// llama_tensor_weight's bounds check
// `offs + ggml_nbytes(tensor) < offs || offs + ggml_nbytes(tensor) > file->size()`.
int load_container(const ggml::Api& f, const char* path, std::string& log) {
  const ggml::Loaded loaded(f, path);
  ggml::gguf_context* gguf = loaded.gguf();
  if (gguf == nullptr) return kReaderRejects;
  struct stat st {};
  int result = kLoads;
  if (::stat(path, &st) != 0) {
    result = kCannotStat;
  } else {
    const auto file_size = static_cast<std::uint64_t>(st.st_size);
    const std::int64_t n_tensors = f.gguf_get_n_tensors(gguf);
    const std::uint64_t data_offset = f.gguf_get_data_offset(gguf);
    for (std::int64_t i = 0; i < n_tensors && result == kLoads; ++i) {
      const std::uint64_t offs = data_offset + f.gguf_get_tensor_offset(gguf, i);
      const std::uint64_t nbytes = f.gguf_get_tensor_size(gguf, i);
      if (offs + nbytes < offs || offs + nbytes > file_size) {
        char message[256];
        const int n = std::snprintf(
            message, sizeof message,
            "llama_tensor_weight: tensor %lld data is not within the file bounds (offs %llu + "
            "nbytes %llu > file size %llu)\n",
            static_cast<long long>(i), static_cast<unsigned long long>(offs),
            static_cast<unsigned long long>(nbytes), static_cast<unsigned long long>(file_size));
        append_log(log, message, static_cast<std::size_t>(std::max(n, 0)));
        result = kOutOfBounds;
      }
    }
  }
  return result;
}

// The server: requests are a u32 path length and the path; a response is the i32 result, the
// u32 log length and the log, each sent in one piece (one wake-up of the other side). It ends
// when the test process closes its end.
[[noreturn]] void serve(const ggml::Api& f, int socket) {
  std::string log;
  f.ggml_log_set(
      [](int, const char* text, void* user_data) {
        append_log(*static_cast<std::string*>(user_data), text, std::strlen(text));
      },
      &log);
  std::string path, response;
  for (;;) {
    std::uint32_t length = 0;
    if (!receive_all(socket, &length, sizeof length)) ::_exit(0);
    path.assign(length, '\0');
    if (!receive_all(socket, path.data(), length)) ::_exit(0);
    log.clear();
    const std::int32_t result = load_container(f, path.c_str(), log);
    const auto log_length = static_cast<std::uint32_t>(log.size());
    response.assign(reinterpret_cast<const char*>(&result), sizeof result);
    response.append(reinterpret_cast<const char*>(&log_length), sizeof log_length);
    response.append(log);
    if (!send_all(socket, response.data(), response.size())) ::_exit(0);
  }
}

}  // namespace

const char* to_string(ReferenceOutcome outcome) {
  switch (outcome) {
    case ReferenceOutcome::Loads: return "loads";
    case ReferenceOutcome::ReaderRejects: return "reader-rejects";
    case ReferenceOutcome::OutOfBounds: return "out-of-bounds";
    case ReferenceOutcome::Crashes: return "crashes";
    case ReferenceOutcome::TimesOut: return "times-out";
    case ReferenceOutcome::HarnessFailure: return "harness-failure";
  }
  return "?";
}

GgmlReference::GgmlReference(const std::string& library_path, std::filesystem::path scratch_dir)
    : scratch_(std::move(scratch_dir)) {
  try {
    library_ = std::make_unique<const ggml::Library>(library_path);
  } catch (const ggml::LoadError& e) {
    throw ReferenceError(std::string("llama.cpp's reader: ") + e.what() +
                         " (run scripts/setup.sh, or set GGUFCHECK_REFERENCE_GGML_LIB)");
  }
  // ggml_abort() would otherwise fork a debugger to print a backtrace on every assertion.
  ::setenv("GGML_NO_BACKTRACE", "1", 1);
  std::filesystem::create_directories(scratch_);
}

GgmlReference::~GgmlReference() {
  stop_server();
  if (scratch_fd_ >= 0) {
    ::close(scratch_fd_);
    std::error_code ignored;
    std::filesystem::remove(scratch_file_, ignored);
  }
}

// The scratch file is opened once and rewritten in place: no create, unlink or stdio buffer per
// load (the differential fuzzer loads thousands of inputs a second).
ReferenceResult GgmlReference::load(const std::uint8_t* data, std::size_t size) {
  if (scratch_fd_ < 0) {
    static std::atomic<unsigned> instances{0};
    scratch_file_ = scratch_ / ("input-" + std::to_string(::getpid()) + "-" +
                                std::to_string(instances++) + ".gguf");
    scratch_fd_ = ::open(scratch_file_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (scratch_fd_ < 0) {
      throw ReferenceError("cannot create " + scratch_file_.string() + ": " + std::strerror(errno));
    }
  }
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n =
        ::pwrite(scratch_fd_, data + written, size - written, static_cast<off_t>(written));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw ReferenceError("cannot write " + scratch_file_.string() + ": " + std::strerror(errno));
    }
    written += static_cast<std::size_t>(n);
  }
  if (::ftruncate(scratch_fd_, static_cast<off_t>(size)) != 0) {
    throw ReferenceError("cannot truncate " + scratch_file_.string() + ": " + std::strerror(errno));
  }
  return load(scratch_file_);
}

void GgmlReference::start() {
  if (!isolated_ && server_ < 0) start_server();
}

ReferenceResult GgmlReference::load(const std::filesystem::path& file) {
  return isolated_ ? load_isolated(file) : load_on_server(file);
}

void GgmlReference::start_server() {
  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    throw ReferenceError("socketpair failed");
  }
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(sockets[0]);
    ::close(sockets[1]);
    throw ReferenceError("fork failed");
  }
  if (pid == 0) {
    ::close(sockets[0]);
    prepare_child(parent);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);  // a crash is loaded again in a one-shot child, with stderr
    }
    serve(library_->api(), sockets[1]);
  }
  ::close(sockets[1]);
  server_ = pid;
  server_socket_ = sockets[0];
}

void GgmlReference::stop_server() {
  if (server_ < 0) return;
  ::close(server_socket_);
  ::kill(server_, SIGKILL);
  while (::waitpid(server_, nullptr, 0) < 0 && errno == EINTR) {
  }
  server_ = -1;
  server_socket_ = -1;
}

ReferenceResult GgmlReference::load_on_server(const std::filesystem::path& file) {
  if (server_ < 0) start_server();
  const std::string path = file.string();
  const auto length = static_cast<std::uint32_t>(path.size());
  std::string request(reinterpret_cast<const char*>(&length), sizeof length);
  request += path;
  ReferenceResult result;
  if (send_all(server_socket_, request.data(), request.size())) {
    pollfd p{server_socket_, POLLIN, 0};
    int ready = 0;
    do {
      ready = ::poll(&p, 1, static_cast<int>(time_limit_seconds_) * 1000);
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
      stop_server();
      result.outcome = ReferenceOutcome::TimesOut;
      result.log = "the load ran longer than " + std::to_string(time_limit_seconds_) + " s";
      return result;
    }
    std::int32_t code = 0;
    std::uint32_t log_length = 0;
    if (receive_all(server_socket_, &code, sizeof code) &&
        receive_all(server_socket_, &log_length, sizeof log_length)) {
      result.log.resize(log_length);
      if (receive_all(server_socket_, result.log.data(), log_length)) {
        result.outcome = outcome_of(code);
        return result;
      }
    }
  }
  // The server died on this file. A fresh process decides: it also captures what ggml printed
  // before it died, and rules out damage left by an earlier file.
  stop_server();
  result = load_isolated(file);
  if (!result.crashed()) {
    result.log = std::string("the reference server died on this file but a fresh process gives '") +
                 to_string(result.outcome) + "': state left by an earlier load?\n" + result.log;
    result.outcome = ReferenceOutcome::HarnessFailure;
  }
  return result;
}

ReferenceResult GgmlReference::load_isolated(const std::filesystem::path& file) const {
  ReferenceResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw ReferenceError("pipe2 failed");
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw ReferenceError("fork failed");
  }
  if (pid == 0) {
    if (server_socket_ >= 0) ::close(server_socket_);
    ::dup2(fds[1], STDERR_FILENO);  // ggml logs to stderr by default
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
    prepare_child(parent);
    ::alarm(time_limit_seconds_);
    std::string log;
    const int code = load_container(library_->api(), file.c_str(), log);
    if (!log.empty()) (void)!::write(STDERR_FILENO, log.data(), log.size());
    ::_exit(code);
  }
  ::close(fds[1]);

  // Drain the child's stderr (it may print a long key) until it exits; keep the start.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(time_limit_seconds_ + 10);
  bool killed = false;
  char buffer[4096];
  for (;;) {
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, 1000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready > 0) {
      const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // EOF: the child exited
      append_log(result.log, buffer, static_cast<std::size_t>(n));
    }
    if (!killed && std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw ReferenceError("waitpid failed");
  }
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.outcome = result.signal == SIGALRM || result.signal == SIGKILL
                         ? ReferenceOutcome::TimesOut
                         : ReferenceOutcome::Crashes;
    return result;
  }
  result.outcome = outcome_of(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return result;
}

std::string reference_library_path() {
  const char* from_environment = std::getenv("GGUFCHECK_REFERENCE_GGML_LIB");
  return from_environment != nullptr && *from_environment != '\0' ? from_environment
                                                                  : GGUFCHECK_REFERENCE_GGML_LIB;
}

}  // namespace ggufcheck::testing
