// llama.cpp's mtmd (tools/mtmd/mtmd.cpp and clip.cpp of the pinned source, compiled into the
// program llama_mtmd_judge against the prebuilt libllama and libggml:
// validator/tests/judges/llama_mtmd_judge.cpp) as the judge of the mmproj checks: does mtmd, as
// mtmd_init_from_file loads a projector for metadata only (no GPU, no warmup, no_alloc, no text
// model), load a multimodal projector, and with which message does it refuse it.
//
// Every load is a program run of its own (posix_spawn, child_process.hpp) under a time limit:
// exit 0 Loads, exit 10 Refuses (the message is the reason clip_init or mtmd logged), a signal
// Crashes (a GGML_ASSERT, or a null tensor read: both refusals for a user), the limit TimesOut.
#pragma once

#include <filesystem>
#include <string>

#include "llama_loader_reference.hpp"  // LoaderOutcome, LoaderResult

namespace ggufcheck::testing {

class MmprojReference {
 public:
  // `judge`: the llama_mtmd_judge program; `backends`: the directory of the prebuilt CPU
  // backends (the reference libggml's). Nothing is checked until the first load.
  MmprojReference(std::filesystem::path judge, std::filesystem::path backends);

  [[nodiscard]] LoaderResult load(const std::filesystem::path& file) const;

  static constexpr unsigned kTimeLimitSeconds = 20;

 private:
  std::filesystem::path judge_;
  std::filesystem::path backends_;
};

// The reason in what the judge printed (LoaderResult::message), exposed for tests.
[[nodiscard]] std::string mmproj_refusal(const std::string& log, bool crashed);

}  // namespace ggufcheck::testing
