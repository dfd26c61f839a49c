// llama.cpp's model loader (the prebuilt libllama.v0.5.0.so of the pinned node-llama-cpp package,
// loaded with dlopen, never linked) as the judge of the model checks (GGUF7xxx, GGUF8xxx):
// does llama_model_load_from_file, or llama_model_load_from_splits, accept the file or the set,
// and with which message does it refuse it; and the judge of the adapter checks: does
// llama_adapter_lora_init accept a LoRA adapter on a base model.
//
// Loads run as llama.cpp's tools load a model for metadata only: llama_model_default_params()
// with no_alloc = true (no tensor data is read or allocated), load_mode = LLAMA_LOAD_MODE_NONE,
// n_gpu_layers = 0, and vocab_only for a vocabulary-only file. llama.cpp aborts on some inputs
// (GGML_ASSERT), so it never runs in the test process: a server process, forked once, installs
// the log callback and loads the CPU backends from the package's directory
// (ggml_backend_load_all_from_path), then forks a child of its own for every load, which
// reports through its exit status and stderr (a load takes milliseconds). The child's end
// decides: exit 0 Loads, exit 10 Refuses (the message is what llama.cpp logged as the reason), a
// signal Crashes, the time limit TimesOut.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "ggml_reference.hpp"  // ReferenceError

namespace ggufcheck::testing {

enum class LoaderOutcome : std::uint8_t {
  Loads,           // a model came back
  Refuses,         // NULL came back (llama.cpp caught the error it logged)
  Crashes,         // the load died of a signal (GGML_ASSERT aborts included)
  TimesOut,        // the load ran longer than the time limit and was killed
  HarnessFailure,  // the reference could not be run
};

[[nodiscard]] const char* to_string(LoaderOutcome outcome);

struct LoaderResult {
  LoaderOutcome outcome = LoaderOutcome::HarnessFailure;
  int signal = 0;  // Crashes, TimesOut: the signal
  // Refuses: the reason llama.cpp logged, without its prefix ("key not found in model: X",
  // "check_tensor_dims: tensor 'X' not found", "check_tensor_dims: tensor 'X' has wrong shape;
  // expected ..., got ...", "done_getting_tensors: wrong number of tensors; expected N, got M",
  // "error loading model hyperparameters: ...", "unknown pre-tokenizer type: 'X'", ...).
  // Crashes: the assertion or the last line printed. HarnessFailure, TimesOut: what happened.
  std::string message;
  std::string log;  // the warnings and errors llama.cpp printed (the start of them)

  [[nodiscard]] bool loads() const { return outcome == LoaderOutcome::Loads; }
};

// The reason in a log of a refused or crashed load (LoaderResult::message), exposed for tests.
[[nodiscard]] std::string loader_message(const std::string& log, bool crashed);

class LlamaLoaderReference {
 public:
  // dlopen()s libllama (and, through its RUNPATH, libggml and libggml-base beside it), resolves
  // the functions and checks that llama_model_default_params() has the layout declared here;
  // throws ReferenceError when any of it fails. The backends are loaded from the library's
  // directory.
  explicit LlamaLoaderReference(const std::string& library_path);
  ~LlamaLoaderReference();
  LlamaLoaderReference(const LlamaLoaderReference&) = delete;
  LlamaLoaderReference& operator=(const LlamaLoaderReference&) = delete;

  // llama_model_load_from_file(file): a shard named <prefix>-00001-of-0000N.gguf brings the
  // other shards of its set by name, as llama.cpp does. vocab_only: a vocabulary-only file.
  [[nodiscard]] LoaderResult load(const std::filesystem::path& file, bool vocab_only = false);
  // llama_adapter_lora_init(model, adapter) on the base model loaded from `base` (its tensors
  // allocated, on the CPU): Loads when an adapter came back, Refuses when NULL did (the message
  // is what it threw), Crashes on an abort. A base that does not load is a HarnessFailure.
  [[nodiscard]] LoaderResult load_adapter(const std::filesystem::path& base,
                                          const std::filesystem::path& adapter);
  // llama_model_load_from_splits(paths, n): the shards in the order given.
  [[nodiscard]] LoaderResult load_splits(const std::vector<std::filesystem::path>& paths);

  // Forks the server now rather than on the first load (no-op when it runs).
  void start();

  // A load that runs longer is killed (TimesOut). Set before the first load or start(): the
  // server takes the limit when it is forked.
  static constexpr unsigned kDefaultTimeLimitSeconds = 20;
  void set_time_limit_seconds(unsigned seconds) { time_limit_seconds_ = seconds; }

  // The library's directory, where the CPU backends are loaded from.
  [[nodiscard]] const std::filesystem::path& bins() const { return bins_; }

 private:
  struct Impl;
  [[nodiscard]] LoaderResult request(char mode, const std::vector<std::filesystem::path>& paths);

  std::unique_ptr<Impl> impl_;
  std::filesystem::path bins_;
  unsigned time_limit_seconds_ = kDefaultTimeLimitSeconds;
};

// GGUFCHECK_REFERENCE_LLAMA_LIB from the environment, else the path CMake compiled in (the
// libllama.v0.5.0.so beside the reference libggml-base.so).
[[nodiscard]] std::string reference_llama_library_path();

}  // namespace ggufcheck::testing
