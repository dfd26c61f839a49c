// llama.cpp's own GGUF reader (ggml's gguf.cpp in a prebuilt libggml-base.so), driven exactly as
// llama.cpp's model loader drives it, for the differential test of the llama.cpp profile.
//
// The reference may abort() or crash on malformed input, so it never runs in the test process.
// Loads go to a server process forked once (forking a large, sanitized test process for every
// file costs tens of milliseconds); when the server dies on a file, that file is loaded again
// in a fresh process of its own with stderr captured, and that run decides the outcome. With
// isolated mode every load gets a fresh process. Byte buffers go through one scratch file per
// instance, rewritten in place for every load and removed by the destructor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ggufcheck::testing {

namespace ggml {
class Library;
}
namespace child {
class Server;
}

class ReferenceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class ReferenceOutcome : std::uint8_t {
  Loads,           // gguf_init_from_file succeeded and every tensor is inside the file
  ReaderRejects,   // gguf_init_from_file returned NULL
  OutOfBounds,     // llama.cpp's loader check: data_offset + offset + nbytes > file size
  Crashes,         // the process died of a signal (abort() included)
  TimesOut,        // the load ran longer than the time limit and was killed
  HarnessFailure,  // the reference could not be run, or gave inconsistent results
};

[[nodiscard]] const char* to_string(ReferenceOutcome outcome);

struct ReferenceResult {
  ReferenceOutcome outcome = ReferenceOutcome::HarnessFailure;
  int signal = 0;   // Crashes: the signal
  std::string log;  // what the reference printed (at most a few KiB)

  // llama.cpp loads the file as a container. A crash or a hang is a failure to load.
  [[nodiscard]] bool loads() const { return outcome == ReferenceOutcome::Loads; }
  [[nodiscard]] bool crashed() const {
    return outcome == ReferenceOutcome::Crashes || outcome == ReferenceOutcome::TimesOut;
  }
};

class GgmlReference {
 public:
  // dlopen()s the library and resolves the functions; throws ReferenceError when it cannot.
  // scratch_dir: where byte buffers are written before loading (created if missing).
  GgmlReference(const std::string& library_path, std::filesystem::path scratch_dir);
  ~GgmlReference();
  GgmlReference(const GgmlReference&) = delete;
  GgmlReference& operator=(const GgmlReference&) = delete;

  // Loads the file as llama.cpp's model loader does, in another process.
  [[nodiscard]] ReferenceResult load(const std::filesystem::path& file);
  // Writes the bytes to the scratch file and loads that.
  [[nodiscard]] ReferenceResult load(const std::uint8_t* data, std::size_t size);
  [[nodiscard]] ReferenceResult load(const std::vector<std::uint8_t>& bytes) {
    return load(bytes.data(), bytes.size());
  }

  // Forks the server now rather than on the first load (no-op when it runs or in isolated
  // mode). A fuzzer calls it before its engine installs the signal handlers and malloc hooks
  // that a forked child would inherit.
  void start();

  // A load that takes longer is killed and counted as TimesOut.
  static constexpr unsigned kDefaultTimeLimitSeconds = 20;
  void set_time_limit_seconds(unsigned seconds) { time_limit_seconds_ = seconds; }
  // Every load in a fresh process (slower; the default is the persistent server).
  void set_isolated(bool isolated) { isolated_ = isolated; }

 private:
  [[nodiscard]] ReferenceResult load_isolated(const std::filesystem::path& file) const;
  [[nodiscard]] ReferenceResult load_on_server(const std::filesystem::path& file);
  void start_server();
  void stop_server();

  std::unique_ptr<const ggml::Library> library_;
  std::unique_ptr<child::Server> server_;
  std::filesystem::path scratch_;
  std::filesystem::path scratch_file_;  // where load(bytes) writes, opened on first use
  int scratch_fd_ = -1;
  unsigned time_limit_seconds_ = kDefaultTimeLimitSeconds;
  bool isolated_ = false;
};

// GGUFCHECK_REFERENCE_GGML_LIB from the environment, else the path CMake compiled in.
[[nodiscard]] std::string reference_library_path();

}  // namespace ggufcheck::testing
