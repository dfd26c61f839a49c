// llama_mtmd_judge: the pinned llama.cpp's mtmd (tools/mtmd/mtmd.cpp, clip.cpp and its models/,
// compiled from the source tree conformance/setup unpacks, against the prebuilt libllama and
// libggml of the same release) as the judge of the mmproj checks.
//
//     llama_mtmd_judge BACKENDS_DIR FILE
//
// Loads FILE as mtmd_init_from_file loads a projector, for metadata only: the CPU backends from
// BACKENDS_DIR (ggml_backend_load_all_from_path), then mtmd's own context (mtmd_context, whose
// constructor mtmd_init_from_file calls) with mtmd_context_params_default(), use_gpu = false,
// warmup = false and the constructor's no_alloc = true: clip_init, the checks mtmd makes of what
// came back (a vision or an audio encoder; both project to the same width) and the preprocessor
// chosen by projector type (init_vision, init_audio). No text model is given: where mtmd then
// needs one's vocabulary ("llama_vocab is not provided": minicpmv's slice tokens) the projector
// was read whole, and the judge says it loads.
//
// Exit 0: loaded; 10: refused, the reason on the last line of stderr, after "ggufcheck-refused:
// "; 2: usage. A crash ends it by its signal, which the caller (testkit/mmproj_reference.cpp)
// counts as a refusal; it runs it under a time limit. Only warnings and errors are printed. Its
// address space is capped (kAddressSpaceLimit): a projector whose warmup image is huge (clip's
// init_ctx fills one even without a warmup) fails with std::bad_alloc at once instead of filling
// the machine's memory; ggufcheck gives such files no verdict (GGUF7016) either way.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

// mtmd_context is defined in mtmd.cpp alone: the judge is compiled with it.
#include "mtmd.cpp"  // NOLINT(bugprone-suspicious-include)

namespace {

constexpr rlim_t kAddressSpaceLimit = rlim_t{4} << 30;

void warnings_and_errors(ggml_log_level level, const char* text, void* /*user_data*/) {
  static bool kept = false;
  kept = level == GGML_LOG_LEVEL_CONT
             ? kept
             : level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR;
  if (kept && text != nullptr) std::fputs(text, stderr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: llama_mtmd_judge BACKENDS_DIR FILE\n");
    return 2;
  }
  const rlimit limit{kAddressSpaceLimit, kAddressSpaceLimit};
  setrlimit(RLIMIT_AS, &limit);
  // ggml_abort() would otherwise fork a debugger to print a backtrace on every assertion.
  setenv("GGML_NO_BACKTRACE", "1", 1);
  mtmd_log_set(warnings_and_errors, nullptr);
  ggml_log_set(warnings_and_errors, nullptr);
  ggml_backend_load_all_from_path(argv[1]);

  mtmd_context_params params = mtmd_context_params_default();
  params.use_gpu = false;
  params.warmup = false;
  try {
    // Nothing is freed: the process ends here.
    (void)new mtmd_context(argv[2], /*text_model=*/nullptr, params, /*no_alloc=*/true);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    if (what.find("llama_vocab is not provided") != std::string::npos) return 0;
    std::fprintf(stderr, "\nggufcheck-refused: %s\n", what.substr(0, what.find('\n')).c_str());
    return 10;
  }
  return 0;
}
