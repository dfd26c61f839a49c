#include "llama_loader_reference.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "child_process.hpp"
#include "ggml_abi.hpp"

namespace ggufcheck::testing {

namespace {

// --- the part of llama.h (include/llama.h of the pinned source) that is called -------------------

struct llama_model;
struct llama_adapter_lora;

// struct llama_model_params, field for field. The enums are ints, the pointers opaque.
struct LlamaModelParams {
  void* devices;
  const void* tensor_buft_overrides;
  std::int32_t n_gpu_layers;
  std::int32_t split_mode;  // enum llama_split_mode
  std::int32_t load_mode;   // enum llama_load_mode
  std::int32_t lazy_mode;   // enum llama_lazy_mode
  std::int32_t main_gpu;
  const float* tensor_split;
  bool (*progress_callback)(float progress, void* user_data);
  void* progress_callback_user_data;
  const void* kv_overrides;
  bool vocab_only;
  bool check_tensors;
  bool use_extra_bufts;
  bool no_host;
  bool no_alloc;
  bool load_mtp;
};
// The layout of the pinned header on x86-64 (sizeof 80; checked against llama.h's own struct
// with offsetof when this was written).
static_assert(sizeof(LlamaModelParams) == 80);
static_assert(offsetof(LlamaModelParams, n_gpu_layers) == 16);
static_assert(offsetof(LlamaModelParams, main_gpu) == 32);
static_assert(offsetof(LlamaModelParams, tensor_split) == 40);
static_assert(offsetof(LlamaModelParams, kv_overrides) == 64);
static_assert(offsetof(LlamaModelParams, vocab_only) == 72);
static_assert(offsetof(LlamaModelParams, no_alloc) == 76);
static_assert(offsetof(LlamaModelParams, load_mtp) == 77);

constexpr std::int32_t kLoadModeNone = 0;  // LLAMA_LOAD_MODE_NONE
// llama_model_default_params() of the pinned source (src/llama-model.cpp).
constexpr std::int32_t kDefaultGpuLayers = -1;
constexpr std::int32_t kDefaultSplitMode = 1;  // LLAMA_SPLIT_MODE_LAYER
constexpr std::int32_t kDefaultLoadMode = -1;  // LLAMA_LOAD_MODE_AUTO

// enum ggml_log_level
constexpr int kLogWarn = 3;
constexpr int kLogError = 4;
constexpr int kLogCont = 5;

using LogCallback = void (*)(int level, const char* text, void* user_data);

#define GGUFCHECK_LLAMA_FUNCTIONS(X)                                                       \
  X(llama_model_default_params, LlamaModelParams, ())                                      \
  X(llama_model_load_from_file, llama_model*, (const char* path, LlamaModelParams params)) \
  X(llama_model_load_from_splits, llama_model*,                                            \
    (const char** paths, std::size_t n_paths, LlamaModelParams params))                    \
  X(llama_adapter_lora_init, llama_adapter_lora*, (llama_model * model, const char* path)) \
  X(llama_log_set, void, (LogCallback callback, void* user_data))                          \
  X(ggml_backend_load_all_from_path, void, (const char* dir_path))

struct LlamaApi {
  GGUFCHECK_LLAMA_FUNCTIONS(GGUFCHECK_ABI_MEMBER)
};

// --- the protocol between the test process and the server ---------------------------------------
//
// A request is a mode byte and the paths, each followed by a NUL. An answer's code is the
// outcome; its payload the signal (i32) and what the load printed.

constexpr char kModeFile = 'f';
constexpr char kModeVocabOnly = 'v';
constexpr char kModeSplits = 's';
constexpr char kModeAdapter = 'a';  // paths: the base model, then the adapter

constexpr std::int32_t kLoads = 0;
constexpr std::int32_t kRefuses = 10;
constexpr std::int32_t kCrashes = 20;
constexpr std::int32_t kTimesOut = 21;
constexpr std::int32_t kHarnessFailure = 30;
constexpr std::int32_t kBaseRefused = 31;  // an adapter's base model did not load

constexpr std::size_t kMaxLog = 16384;
// The server answers within the child's time limit and the 10 s after it that child::run
// waits before it kills; beyond this the server itself is stuck.
constexpr unsigned kServerGraceSeconds = 30;

// What the load in a child prints: warnings and errors (and the continuations of those), on its
// stderr, which is a pipe to the server. Set once in the server; the children inherit it.
void log_to_stderr(int level, const char* text, void* /*user_data*/) {
  static bool kept = false;
  kept = level == kLogCont ? kept : level == kLogWarn || level == kLogError;
  if (!kept || text == nullptr) return;
  (void)!::write(STDERR_FILENO, text, std::strlen(text));
}

std::vector<std::string> split_paths(std::string_view text) {
  std::vector<std::string> paths;
  while (!text.empty()) {
    const std::size_t end = text.find('\0');
    paths.emplace_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return paths;
}

// An adapter on its base: the base loaded with its tensors allocated (the adapter's are placed
// in the buffer type of the base tensor each one modifies), then llama_adapter_lora_init.
int load_adapter_once(const LlamaApi& api, const std::vector<std::string>& paths) {
  if (paths.size() != 2) return kHarnessFailure;
  LlamaModelParams params = api.llama_model_default_params();
  params.load_mode = kLoadModeNone;
  params.n_gpu_layers = 0;
  llama_model* model = api.llama_model_load_from_file(paths[0].c_str(), params);
  if (model == nullptr) return kBaseRefused;
  static constexpr char kMark[] = "\nggufcheck: base loaded\n";
  (void)!::write(STDERR_FILENO, kMark, sizeof kMark - 1);
  // Neither is freed: the process ends here.
  return api.llama_adapter_lora_init(model, paths[1].c_str()) != nullptr ? kLoads : kRefuses;
}

// One load in a child of the server; its exit status is the outcome.
int load_once(const LlamaApi& api, char mode, const std::vector<std::string>& paths) {
  if (mode == kModeAdapter) return load_adapter_once(api, paths);
  LlamaModelParams params = api.llama_model_default_params();
  params.no_alloc = true;
  params.load_mode = kLoadModeNone;
  params.n_gpu_layers = 0;
  params.vocab_only = mode == kModeVocabOnly;
  llama_model* model = nullptr;
  if (mode == kModeSplits) {
    std::vector<const char*> pointers;
    pointers.reserve(paths.size());
    for (const std::string& p : paths) pointers.push_back(p.c_str());
    model = api.llama_model_load_from_splits(pointers.data(), pointers.size(), params);
  } else {
    model = api.llama_model_load_from_file(paths.empty() ? "" : paths.front().c_str(), params);
  }
  // The model is not freed: the process ends here.
  return model != nullptr ? kLoads : kRefuses;
}

std::int32_t serve_load(const LlamaApi& api, unsigned time_limit_seconds,
                        const std::string& request, std::string& answer) {
  const char mode = request.empty() ? kModeFile : request[0];
  const std::vector<std::string> paths =
      split_paths(std::string_view(request).substr(request.empty() ? 0 : 1));
  child::Run run;
  std::int32_t code = kHarnessFailure;
  std::int32_t signal = 0;
  try {
    run = child::run([&] { return load_once(api, mode, paths); }, time_limit_seconds, kMaxLog);
    switch (run.end) {
      case child::Run::End::Exited:
        code = run.status == kLoads || run.status == kRefuses ? run.status : kHarnessFailure;
        if (run.status == kBaseRefused) {
          run.output += "\nthe adapter's base model did not load";
        } else if (code == kHarnessFailure) {
          run.output += "\nthe load exited with status " + std::to_string(run.status);
        }
        break;
      case child::Run::End::Signalled:
        code = kCrashes;
        signal = run.status;
        break;
      case child::Run::End::TimedOut:
        code = kTimesOut;
        signal = run.status;
        break;
    }
  } catch (const std::runtime_error& e) {
    run.output = std::string("the server could not run the load: ") + e.what();
  }
  answer.assign(reinterpret_cast<const char*>(&signal), sizeof signal);
  answer += run.output;
  return code;
}

std::string_view trim(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) {
    line.remove_suffix(1);
  }
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  return line;
}

std::vector<std::string_view> lines_of(std::string_view log) {
  std::vector<std::string_view> lines;
  while (!log.empty()) {
    const std::size_t end = log.find('\n');
    const std::string_view line = trim(log.substr(0, end));
    if (!line.empty()) lines.push_back(line);
    if (end == std::string_view::npos) break;
    log.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace

std::string loader_message(const std::string& log, bool crashed) {
  const std::vector<std::string_view> lines = lines_of(log);
  if (crashed) {
    // GGML_ASSERT and GGML_ABORT: "file:line: message"; an uncaught exception: "what(): ...".
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      if (it->find("GGML_ASSERT") != std::string_view::npos ||
          it->find("what():") != std::string_view::npos ||
          it->find("terminate called") != std::string_view::npos) {
        return std::string(*it);
      }
    }
    return lines.empty() ? std::string() : std::string(lines.back());
  }
  // llama_adapter_lora_init: "failed to apply lora adapter: <what it threw>".
  static constexpr std::string_view kAdapterError = "failed to apply lora adapter: ";
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const std::size_t at = it->find(kAdapterError);
    if (at != std::string_view::npos) {
      return std::string(trim(it->substr(at + kAdapterError.size())));
    }
  }
  // llama_model_load: "error loading model: <what the loader threw>".
  static constexpr std::string_view kError = "error loading model: ";
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    const std::size_t at = it->find(kError);
    if (at != std::string_view::npos) return std::string(trim(it->substr(at + kError.size())));
  }
  // Refused before the loader ran ("llama_model_load_from_splits: list of splits is empty").
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->find("failed to load model") == std::string_view::npos) return std::string(*it);
  }
  return lines.empty() ? std::string() : std::string(lines.back());
}

const char* to_string(LoaderOutcome outcome) {
  switch (outcome) {
    case LoaderOutcome::Loads: return "loads";
    case LoaderOutcome::Refuses: return "refuses";
    case LoaderOutcome::Crashes: return "crashes";
    case LoaderOutcome::TimesOut: return "times-out";
    case LoaderOutcome::HarnessFailure: return "harness-failure";
  }
  return "?";
}

struct LlamaLoaderReference::Impl {
  explicit Impl(const std::string& path) : object(path) {
    const ggml::SharedObject& library = object;
    LlamaApi& table = api;
    GGUFCHECK_LLAMA_FUNCTIONS(GGUFCHECK_ABI_RESOLVE)
  }
  ggml::SharedObject object;
  LlamaApi api;
  child::Server server;
};

LlamaLoaderReference::LlamaLoaderReference(const std::string& library_path)
    : bins_(std::filesystem::path(library_path).parent_path()) {
  try {
    impl_ = std::make_unique<Impl>(library_path);
  } catch (const ggml::LoadError& e) {
    throw ReferenceError(std::string("llama.cpp's model loader: ") + e.what() +
                         " (run scripts/setup.sh, or set GGUFCHECK_REFERENCE_LLAMA_LIB)");
  }
  // The declared struct must be the library's: its defaults must read back as the source has
  // them (a shifted field would not).
  const LlamaModelParams defaults = impl_->api.llama_model_default_params();
  if (defaults.devices != nullptr || defaults.n_gpu_layers != kDefaultGpuLayers ||
      defaults.split_mode != kDefaultSplitMode || defaults.load_mode != kDefaultLoadMode ||
      defaults.kv_overrides != nullptr || defaults.vocab_only || !defaults.use_extra_bufts ||
      defaults.no_alloc || defaults.load_mtp) {
    throw ReferenceError("llama.cpp's model loader: llama_model_default_params() of " +
                         library_path +
                         " does not read back as the pinned llama.h declares it (another "
                         "version of the library?)");
  }
  // ggml_abort() would otherwise fork a debugger to print a backtrace on every assertion.
  ::setenv("GGML_NO_BACKTRACE", "1", 1);
}

LlamaLoaderReference::~LlamaLoaderReference() = default;

void LlamaLoaderReference::start() {
  if (impl_->server.running()) return;
  const LlamaApi& api = impl_->api;
  const std::string bins = bins_.string();
  const unsigned limit = time_limit_seconds_;
  try {
    impl_->server.start(
        [&api, bins] {
          api.llama_log_set(log_to_stderr, nullptr);
          api.ggml_backend_load_all_from_path(bins.c_str());
        },
        [&api, limit](const std::string& request, std::string& answer) {
          return serve_load(api, limit, request, answer);
        });
  } catch (const std::runtime_error& e) {
    throw ReferenceError(std::string("llama.cpp's model loader: ") + e.what());
  }
}

LoaderResult LlamaLoaderReference::load(const std::filesystem::path& file, bool vocab_only) {
  return request(vocab_only ? kModeVocabOnly : kModeFile, {file});
}

LoaderResult LlamaLoaderReference::load_adapter(const std::filesystem::path& base,
                                                const std::filesystem::path& adapter) {
  return request(kModeAdapter, {base, adapter});
}

LoaderResult LlamaLoaderReference::load_splits(const std::vector<std::filesystem::path>& paths) {
  return request(kModeSplits, paths);
}

LoaderResult LlamaLoaderReference::request(char mode,
                                           const std::vector<std::filesystem::path>& paths) {
  start();
  std::string message(1, mode);
  for (const std::filesystem::path& p : paths) {
    message += p.string();
    message += '\0';
  }
  child::Server::Answer answer =
      impl_->server.call(message, time_limit_seconds_ + kServerGraceSeconds);
  LoaderResult result;
  if (answer.status != child::Server::Answer::Status::Answered ||
      answer.payload.size() < sizeof(std::int32_t)) {
    result.message = answer.status == child::Server::Answer::Status::TimedOut
                         ? "the reference server did not answer in time"
                         : "the reference server died";
    return result;
  }
  std::memcpy(&result.signal, answer.payload.data(), sizeof result.signal);
  result.log = answer.payload.substr(sizeof(std::int32_t));
  switch (answer.code) {
    case kLoads: result.outcome = LoaderOutcome::Loads; break;
    case kRefuses:
      result.outcome = LoaderOutcome::Refuses;
      result.message = loader_message(result.log, false);
      break;
    case kCrashes:
      result.outcome = LoaderOutcome::Crashes;
      result.message = loader_message(result.log, true);
      if (result.message.empty()) result.message = "signal " + std::to_string(result.signal);
      break;
    case kTimesOut:
      result.outcome = LoaderOutcome::TimesOut;
      result.message = "the load ran longer than " + std::to_string(time_limit_seconds_) + " s";
      break;
    default: result.message = loader_message(result.log, false); break;
  }
  return result;
}

std::string reference_llama_library_path() {
  const char* from_environment = std::getenv("GGUFCHECK_REFERENCE_LLAMA_LIB");
  return from_environment != nullptr && *from_environment != '\0' ? from_environment
                                                                  : GGUFCHECK_REFERENCE_LLAMA_LIB;
}

}  // namespace ggufcheck::testing
