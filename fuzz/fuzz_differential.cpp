// The llama.cpp profile against llama.cpp's own reader, on arbitrary bytes: every input is
// validated with `--profile llama.cpp` and loaded by ggml's gguf_init_from_file plus the model
// loader's bounds check (validator/testkit/ggml_reference.hpp), and the two verdicts must agree
// unless a divergence of docs/llama-cpp-divergences.md explains the difference
// (validator/testkit/divergences.hpp, the same judge as the differential test). An
// undocumented disagreement, an undocumented crash or hang of the reference, or a harness
// failure prints both verdicts and aborts, so that libFuzzer saves the input.
//
// The reference is the prebuilt libggml-base.so of scripts/setup.sh, loaded with dlopen: it is
// not instrumented (no coverage, no sanitizer checks inside it; the coverage that guides the
// fuzzer is ggufcheck's), and it runs in a server process of its own, forked once in
// LLVMFuzzerInitialize (before libFuzzer installs its signal handlers and malloc hooks), which
// reads each input from a scratch file under $TMPDIR (default /dev/shm), so that its aborts,
// crashes and gibibyte allocations never hit the fuzzer.
//
//   cmake --preset fuzz && cmake --build --preset fuzz --target fuzz_differential
//   mkdir -p /tmp/diffcorpus
//   build/fuzz/fuzz/fuzz_differential -max_total_time=600 -rss_limit_mb=1024 -timeout=5
//       -max_len=65536 -dict=fuzz/gguf.dict /tmp/diffcorpus corpus/valid corpus/threats
//       corpus/codes corpus/hostile corpus/writers
//
// (one command; the first directory is where libFuzzer writes what it finds, so never a
// directory of corpus/).
//
// GGUFCHECK_REFERENCE_GGML_LIB selects another libggml-base.so. Without libFuzzer (the default
// build) the target replays files and directories (ctest replays the corpus and
// fuzz/regressions/fuzz_differential). See docs/llama-cpp-divergences.md, "The fuzzer".
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "divergences.hpp"
#include "ggml_reference.hpp"

namespace {

namespace fs = std::filesystem;
using ggufcheck::testing::ByteVector;
using ggufcheck::testing::GgmlReference;

// Inputs over 1 MiB are skipped. libFuzzer generates at most -max_len bytes (64 KiB in
// fuzz_differential.options), but a corpus or a replay may hold any file, and every execution
// writes the whole input to the scratch file and has both readers go through it: the cost
// grows with the size while the coverage does not, since past the tensor infos both readers
// only compare the tensor data's size with the file's. 1 MiB keeps every seed of corpus/
// (the largest, a real vocabulary model, is 450 KB).
constexpr std::size_t kMaxInputSize = 1 << 20;

// A reference load that runs longer is killed and reported as a hang of the reference, before
// libFuzzer's own -timeout (5 s in fuzz_differential.options) would report the input with no
// explanation. No input of 64 KiB takes more than a second, gibibyte fields included.
constexpr unsigned kReferenceTimeLimitSeconds = 4;

std::unique_ptr<GgmlReference> reference;
fs::path scratch_dir;

// Stops the server (and waits for it) and removes the scratch directory: at exit, and before
// an abort(), after which libFuzzer's handler ends the process with _Exit.
void shut_down() {
  reference.reset();
  if (!scratch_dir.empty()) {
    std::error_code ignored;
    fs::remove_all(scratch_dir, ignored);
    scratch_dir.clear();
  }
}

[[noreturn]] void fail(const std::string& problem) {
  std::fprintf(stderr, "fuzz_differential: %s\n", problem.c_str());
  std::fflush(stderr);
  shut_down();
  std::abort();
}

// $TMPDIR if set, else /dev/shm (a tmpfs: the scratch file is rewritten for every input), else
// the system's temporary directory; one directory per process.
fs::path make_scratch_dir_name() {
  std::error_code error;
  fs::path base;
  const char* tmpdir = std::getenv("TMPDIR");
  if (tmpdir != nullptr && *tmpdir != '\0') {
    base = tmpdir;
  } else if (fs::is_directory("/dev/shm", error) && ::access("/dev/shm", W_OK) == 0) {
    base = "/dev/shm";
  } else {
    base = fs::temp_directory_path(error);
    if (error) base = "/tmp";
  }
  return base / ("ggufcheck-fuzz-differential-" + std::to_string(::getpid()));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  const std::string library = ggufcheck::testing::reference_library_path();
  std::error_code error;
  if (!fs::is_regular_file(library, error)) {
    std::fprintf(stderr,
                 "fuzz_differential: llama.cpp's reader %s is missing: run scripts/setup.sh "
                 "(or point GGUFCHECK_REFERENCE_GGML_LIB at a libggml-base.so)\n",
                 library.c_str());
    std::exit(1);
  }
  try {
    scratch_dir = make_scratch_dir_name();
    reference = std::make_unique<GgmlReference>(library, scratch_dir);
    reference->set_time_limit_seconds(kReferenceTimeLimitSeconds);
    reference->start();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_differential: %s\n", e.what());
    shut_down();
    std::exit(1);
  }
  std::atexit(shut_down);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ggufcheck::testing;
  if (size > kMaxInputSize) return 0;
  if (!reference) fail("the reference is not set up (LLVMFuzzerInitialize did not run)");
  // A copy of exactly the input's size, as the predicates of the divergences take one.
  const ByteVector bytes(data, data + size);
  Comparison c;
  try {
    c = compare(*reference, bytes);
  } catch (const std::exception& e) {
    fail(std::string("harness failure: ") + e.what());
  }
  // ggml's reader compares every pair of keys and of tensor names: on a file for which ggufcheck
  // predicts a load of seconds (GGUF7015, a model check; corpus/codes has its example), the
  // reference may run past the time limit on a slow or busy machine. That is the prediction, not
  // a finding about the reference.
  if (c.reference.outcome == ReferenceOutcome::TimesOut) {
    ggufcheck::Options predicting = llama_cpp_options();
    predicting.model_checks = true;
    const ggufcheck::Report report =
        ggufcheck::validate(ggufcheck::Bytes(bytes.data(), bytes.size()), predicting);
    if (std::any_of(report.findings.begin(), report.findings.end(),
                    [](const ggufcheck::Finding& f) {
                      return f.code == ggufcheck::Code::SlowReferenceLoad;
                    })) {
      return 0;
    }
  }
  const Verdict v = judge(bytes, c);
  if (!v.ok) fail(v.problem + "\n  " + describe(c));
  return 0;
}
