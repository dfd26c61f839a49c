// llama_mtmd_judge: the pinned llama.cpp's clip loader (tools/mtmd/clip.cpp and its models/,
// compiled from the source tree conformance/setup unpacks, against the prebuilt libggml of the
// same release) as the judge of the mmproj checks.
//
//     llama_mtmd_judge BACKENDS_DIR FILE
//
// Loads FILE as mtmd_init_from_file loads a projector for metadata only: the CPU backends from
// BACKENDS_DIR (ggml_backend_load_all_from_path), then clip_init with use_gpu = false,
// warmup = false, no_alloc = true, and the checks mtmd makes of what came back (a vision or an
// audio encoder; both project to the same width). Exit 0: loaded; 10: refused, the reason on the
// last line of stderr, after "ggufcheck-refused: "; 2: usage. A crash ends it by its signal,
// which the caller (testkit/mmproj_reference.cpp) counts as a refusal; it runs it under a time
// limit. Only warnings and errors are printed. Its address space is capped (kAddressSpaceLimit):
// a projector whose warmup image is huge (init_ctx fills one even without a warmup) fails with
// std::bad_alloc at once instead of filling the machine's memory; ggufcheck gives such files no
// verdict (GGUF7016) either way.
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "clip-impl.h"
#include "clip.h"
#include "ggml-backend.h"

namespace {

constexpr rlim_t kAddressSpaceLimit = rlim_t{4} << 30;

void warnings_and_errors(ggml_log_level level, const char* text, void* /*user_data*/) {
  static bool kept = false;
  kept = level == GGML_LOG_LEVEL_CONT
             ? kept
             : level == GGML_LOG_LEVEL_WARN || level == GGML_LOG_LEVEL_ERROR;
  if (kept && text != nullptr) std::fputs(text, stderr);
}

int refuse(const std::string& reason) {
  std::fprintf(stderr, "\nggufcheck-refused: %s\n", reason.c_str());
  return 10;
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
  g_logger_state.log_callback = warnings_and_errors;
  ggml_log_set(warnings_and_errors, nullptr);
  ggml_backend_load_all_from_path(argv[1]);

  clip_context_params params{};
  params.use_gpu = false;
  params.device = nullptr;
  params.flash_attn_type = CLIP_FLASH_ATTN_TYPE_AUTO;
  params.image_min_tokens = -1;
  params.image_max_tokens = -1;
  params.warmup = false;
  params.no_alloc = true;
  const clip_init_result loaded = clip_init(argv[2], params);
  // mtmd_context's constructor (tools/mtmd/mtmd.cpp), without a text model to compare with.
  if (loaded.ctx_v == nullptr && loaded.ctx_a == nullptr) {
    return refuse("no vision or audio encoder loaded (Failed to load CLIP model)");
  }
  if (loaded.ctx_v != nullptr && loaded.ctx_a != nullptr) {
    const int vision = clip_n_mmproj_embd(loaded.ctx_v);
    const int audio = clip_n_mmproj_embd(loaded.ctx_a);
    if (vision != audio) {
      return refuse("mismatch between vision and audio mmproj (n_embd_v = " +
                    std::to_string(vision) + ", n_embd_a = " + std::to_string(audio) + ")");
    }
  }
  // Nothing is freed: the process ends here.
  return 0;
}
