// The mmproj checks against llama.cpp's clip loader itself: the program llama_mtmd_judge
// (validator/tests/judges/llama_mtmd_judge.cpp: tools/mtmd/clip.cpp of the pinned tree compiled
// against the prebuilt libggml; validator/testkit/mmproj_reference.hpp runs it), which loads each
// projector as mtmd_init_from_file does for metadata only (clip_init, no GPU, no warmup,
// no_alloc). Skipped (GTEST_SKIP) when the judge was not built (no .deps/conformance/llama.cpp).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

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

// A LLaVA projector as convert_hf_to_gguf.py writes one, two layers deep.
Document llava_projector() {
  Document doc = mmproj_document("mlp");
  for (int layer = 0; layer < 2; ++layer) {
    const std::string blk = "v.blk." + std::to_string(layer) + ".";
    doc.tensors.push_back({blk + "attn_out.weight", {64, 64}, 0, {}, {}});
    doc.tensors.push_back({blk + "ffn_up.weight", {64, 128}, 0, {}, {}});
    doc.tensors.push_back({blk + "ffn_down.weight", {128, 64}, 0, {}, {}});
  }
  doc.tensors.push_back({"mm.0.weight", {64, 96}, 0, {}, {}});
  doc.tensors.push_back({"mm.0.bias", {96}, 0, {}, {}});
  doc.tensors.push_back({"mm.2.weight", {96, 96}, 0, {}, {}});
  doc.tensors.push_back({"mm.2.bias", {96}, 0, {}, {}});
  return doc;
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
