// The mmproj checks against llama.cpp's mtmd itself: the program llama_mtmd_judge
// (validator/tests/judges/llama_mtmd_judge.cpp: tools/mtmd/mtmd.cpp, clip.cpp and models/ of the
// pinned tree compiled against the prebuilt libllama and libggml;
// validator/testkit/mmproj_reference.hpp runs it), which loads each projector as
// mtmd_init_from_file does for metadata only (mtmd_context with no GPU, no warmup, no_alloc, no
// text model). Skipped (GTEST_SKIP) when the judge was not built (no .deps/conformance/llama.cpp).
//
// For every projector type ggufcheck follows (validator/testkit/mmproj_builder.hpp, from the
// generated table): a projector the judge must load and ggufcheck pass, then one change at a time
// to it, ggufcheck's llama.cpp-profile verdict against the judge's (a crash or a time-out of the
// judge is a refusal). A file ggufcheck gives no verdict (GGUF7016 alone) is counted, not
// compared: fail closed. There is no documented disagreement: any is a failure. The counts are
// asserted exactly.
//
// Environment:
//   GGUFCHECK_MMPROJ_DIFF_FULL=1     every mutant of every type (else about
//                                    kSampledMutantsPerType of each)
//   GGUFCHECK_MMPROJ_DIFF_VERBOSE=1  every comparison printed
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ggufcheck/validate.hpp"
#include "mmproj_builder.hpp"
#include "mmproj_reference.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

namespace fs = std::filesystem;

#if defined(GGUFCHECK_MTMD_JUDGE)
const MmprojReference* reference() {
  static const MmprojReference judge(GGUFCHECK_MTMD_JUDGE, GGUFCHECK_MTMD_BACKENDS);
  return &judge;
}
#else
const MmprojReference* reference() {
  return nullptr;
}
#endif

#define GGUFCHECK_NEED_JUDGE(name)                                                          \
  const MmprojReference* const name = reference();                                          \
  if (name == nullptr) {                                                                    \
    GTEST_SKIP() << "llama_mtmd_judge was not built (run conformance/setup for the pinned " \
                    "llama.cpp tree)";                                                      \
  }

Document llava_projector() {
  return projector_of_type("mlp");
}

TEST(MmprojJudge, LoadsAValidProjectorAndRefusesBrokenOnes) {
  GGUFCHECK_NEED_JUDGE(judge);
  TempDir dir;
  const LoaderResult valid = judge->load(dir.write("llava.gguf", write_bytes(llava_projector())));
  EXPECT_EQ(valid.outcome, LoaderOutcome::Loads) << valid.message << "\n" << valid.log;

  Document unknown = llava_projector();
  for (KeyValue& kv : unknown.metadata) {
    if (kv.key == "clip.projector_type") kv.value = Value::string("mlp3");
  }
  const LoaderResult refused = judge->load(dir.write("unknown.gguf", write_bytes(unknown)));
  EXPECT_EQ(refused.outcome, LoaderOutcome::Refuses) << refused.log;
  EXPECT_EQ(refused.message, "load_hparams: unknown projector type: mlp3");

  // clip_n_mmproj_embd reads mm.2.weight's width without looking: a crash, a refusal to a user.
  Document no_projection = llava_projector();
  std::erase_if(no_projection.tensors, [](const Tensor& t) { return t.name == "mm.2.weight"; });
  const LoaderResult crashed =
      judge->load(dir.write("no-projection.gguf", write_bytes(no_projection)));
  EXPECT_EQ(crashed.outcome, LoaderOutcome::Crashes) << crashed.log;

  const LoaderResult missing = judge->load(dir.path() / "absent.gguf");
  EXPECT_EQ(missing.outcome, LoaderOutcome::Refuses) << missing.log;
}

}  // namespace
}  // namespace ggufcheck::testing

namespace ggufcheck::testing {
namespace {

// --- the differential ------------------------------------------------------------------------

// What the table follows today (validator/src/artifacts/generated/projector_rules.inc): a change
// in the pinned source or in the generator's reach changes these on purpose.
constexpr std::size_t kFollowedTypes = 35;
constexpr std::size_t kMinimumMutantsPerType = 30;
// The default run: every type's mutants sampled down to about this many.
constexpr std::size_t kSampledMutantsPerType = 6;
// The counts of a run, asserted exactly: mutants compared, and those ggufcheck gives no verdict
// (GGUF7016 alone: the loader's int arithmetic overflows, or its warmup image is above 1 GiB;
// the judge refuses every one of them, by std::bad_alloc, an overflowed check or its time limit).
constexpr std::size_t kFullMutants = 4690;
constexpr std::size_t kFullUnpredicted = 28;
constexpr std::size_t kSampledMutants = 244;
constexpr std::size_t kSampledUnpredicted = 2;

struct Ours {
  bool loads = false;
  bool unpredicted = false;  // GGUF7016 the only error: no verdict
  std::string errors;
};

Ours ours(const fs::path& file) {
  Options options;
  options.profile = Profile::LlamaCpp;
  const Report report = validate_file(file.string(), options);
  Ours out;
  bool other = false;
  for (const Finding& f : report.findings) {
    if (f.severity != Severity::Error) continue;
    out.errors += code_string(f.code) + " " + f.message + "\n";
    if (f.code == Code::LoaderNotPredicted) {
      out.unpredicted = true;
    } else {
      other = true;
    }
  }
  out.unpredicted = out.unpredicted && !other;
  out.loads = out.errors.empty();
  return out;
}

TEST(MmprojDifferential, EveryFollowedTypeHasABaseTheJudgeLoadsAndGgufcheckPasses) {
  EXPECT_EQ(followed_projector_types().size(), kFollowedTypes);
  GGUFCHECK_NEED_JUDGE(judge);
  TempDir dir;
  std::size_t loaded = 0;
  for (const std::string& type : followed_projector_types()) {
    const fs::path file = dir.write(type + ".gguf", write_bytes(projector_of_type(type)));
    const LoaderResult theirs = judge->load(file);
    EXPECT_EQ(theirs.outcome, LoaderOutcome::Loads) << type << ": " << theirs.message << "\n"
                                                    << theirs.log;
    if (theirs.loads()) ++loaded;
    const Ours verdict = ours(file);
    EXPECT_TRUE(verdict.loads) << type << ":\n" << verdict.errors;
  }
  EXPECT_EQ(loaded, kFollowedTypes);
}

TEST(MmprojDifferential, GgufcheckAgreesWithTheJudgeOnEveryMutant) {
  GGUFCHECK_NEED_JUDGE(judge);
  const bool full = env_text("GGUFCHECK_MMPROJ_DIFF_FULL") == "1";
  const bool verbose = env_text("GGUFCHECK_MMPROJ_DIFF_VERBOSE") == "1";
  TempDir dir;
  std::size_t compared = 0, unpredicted = 0, disagreements = 0;
  std::size_t fewest = SIZE_MAX;
  for (const std::string& type : followed_projector_types()) {
    const std::vector<ProjectorMutant> mutants = projector_mutants_of_type(type);
    fewest = std::min(fewest, mutants.size());
    const std::size_t stride =
        full ? 1 : std::max<std::size_t>(1, mutants.size() / kSampledMutantsPerType);
    for (std::size_t m = 0; m < mutants.size(); m += stride) {
      const ProjectorMutant& mutant = mutants[m];
      const fs::path file =
          dir.write(type + "-" + std::to_string(m) + ".gguf", write_bytes(mutant.document));
      const LoaderResult theirs = judge->load(file);
      ASSERT_NE(theirs.outcome, LoaderOutcome::HarnessFailure) << theirs.message;
      const Ours verdict = ours(file);
      ++compared;
      if (verbose) {
        std::printf("%s / %s: judge %s (%s); ggufcheck %s\n", type.c_str(),
                    mutant.description.c_str(), to_string(theirs.outcome), theirs.message.c_str(),
                    verdict.loads ? "passes" : verdict.errors.c_str());
      }
      if (verdict.unpredicted) {
        ++unpredicted;  // fail closed: no verdict, whatever the judge says
        continue;
      }
      if (verdict.loads != theirs.loads()) {
        ++disagreements;
        ADD_FAILURE() << type << " / " << mutant.description << ": the judge "
                      << to_string(theirs.outcome) << " (" << theirs.message << "), ggufcheck "
                      << (verdict.loads ? "passes" : "fails:\n" + verdict.errors);
      }
    }
  }
  if (full) {
    EXPECT_GE(fewest, kMinimumMutantsPerType);
  }
  EXPECT_EQ(compared, full ? kFullMutants : kSampledMutants);
  EXPECT_EQ(unpredicted, full ? kFullUnpredicted : kSampledUnpredicted);
  std::printf(
      "mmproj differential: %zu types, %zu mutants compared, %zu without a verdict "
      "(GGUF7016), %zu disagreements%s\n",
      followed_projector_types().size(), compared, unpredicted, disagreements,
      full ? "" : " (a sample: GGUFCHECK_MMPROJ_DIFF_FULL=1 for every mutant)");
  EXPECT_EQ(disagreements, 0U);
}

}  // namespace
}  // namespace ggufcheck::testing
