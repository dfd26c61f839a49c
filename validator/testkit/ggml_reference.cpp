#include "ggml_reference.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "child_process.hpp"
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
  child::append_bounded(log, text, length, kMaxLog);
}

ReferenceOutcome outcome_of(int code) {
  switch (code) {
    case kLoads: return ReferenceOutcome::Loads;
    case kReaderRejects: return ReferenceOutcome::ReaderRejects;
    case kOutOfBounds: return ReferenceOutcome::OutOfBounds;
    default: return ReferenceOutcome::HarnessFailure;
  }
}

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

// The server's log: what ggml printed during the current load (the server is single-threaded).
std::string& server_log() {
  static std::string log;
  return log;
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
    : server_(std::make_unique<child::Server>()), scratch_(std::move(scratch_dir)) {
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
  if (!isolated_ && !server_->running()) start_server();
}

ReferenceResult GgmlReference::load(const std::filesystem::path& file) {
  return isolated_ ? load_isolated(file) : load_on_server(file);
}

void GgmlReference::start_server() {
  const ggml::Api& api = library_->api();
  try {
    server_->start(
        [&api] {
          api.ggml_log_set([](int, const char* text,
                              void*) { append_log(server_log(), text, std::strlen(text)); },
                           nullptr);
        },
        [&api](const std::string& path, std::string& answer) {
          server_log().clear();
          const std::int32_t result = load_container(api, path.c_str(), server_log());
          answer = server_log();
          return result;
        });
  } catch (const std::runtime_error& e) {
    throw ReferenceError(e.what());
  }
}

void GgmlReference::stop_server() {
  server_->stop();
}

ReferenceResult GgmlReference::load_on_server(const std::filesystem::path& file) {
  if (!server_->running()) start_server();
  child::Server::Answer answer = server_->call(file.string(), time_limit_seconds_);
  ReferenceResult result;
  if (answer.status == child::Server::Answer::Status::TimedOut) {
    result.outcome = ReferenceOutcome::TimesOut;
    result.log = "the load ran longer than " + std::to_string(time_limit_seconds_) + " s";
    return result;
  }
  if (answer.status == child::Server::Answer::Status::Answered) {
    result.outcome = outcome_of(answer.code);
    result.log = std::move(answer.payload);
    return result;
  }
  // The server died on this file. A fresh process decides: it also captures what ggml printed
  // before it died, and rules out damage left by an earlier file.
  result = load_isolated(file);
  if (!result.crashed()) {
    result.log = std::string("the reference server died on this file but a fresh process gives '") +
                 to_string(result.outcome) + "': state left by an earlier load?\n" + result.log;
    result.outcome = ReferenceOutcome::HarnessFailure;
  }
  return result;
}

ReferenceResult GgmlReference::load_isolated(const std::filesystem::path& file) const {
  const ggml::Api& api = library_->api();
  child::Run run;
  try {
    run = child::run(
        [&api, &file] {
          // ggml logs to stderr by default, which is the pipe
          std::string log;
          const int code = load_container(api, file.c_str(), log);
          if (!log.empty()) (void)!::write(STDERR_FILENO, log.data(), log.size());
          return code;
        },
        time_limit_seconds_, kMaxLog, server_->socket());
  } catch (const std::runtime_error& e) {
    throw ReferenceError(e.what());
  }
  ReferenceResult result;
  result.log = std::move(run.output);
  switch (run.end) {
    case child::Run::End::Exited: result.outcome = outcome_of(run.status); break;
    case child::Run::End::Signalled:
      result.outcome = ReferenceOutcome::Crashes;
      result.signal = run.status;
      break;
    case child::Run::End::TimedOut:
      result.outcome = ReferenceOutcome::TimesOut;
      result.signal = run.status;
      break;
  }
  return result;
}

std::string reference_library_path() {
  const char* from_environment = std::getenv("GGUFCHECK_REFERENCE_GGML_LIB");
  return from_environment != nullptr && *from_environment != '\0' ? from_environment
                                                                  : GGUFCHECK_REFERENCE_GGML_LIB;
}

}  // namespace ggufcheck::testing
