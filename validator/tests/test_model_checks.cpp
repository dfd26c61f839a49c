// The model checks' behaviour around the codes (test_codes.cpp has one case per code, the model
// differential test compares them with llama.cpp): when they run, what they leave out, and the
// tables they run on.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "loader/interpreter.hpp"
#include "test_support.hpp"

namespace ggufcheck {
namespace {

using testing::ByteVector;
using testing::check;
using testing::codes;
using testing::container_options;
using testing::minimal_document;
using testing::model_document;

Options model_options(Profile profile) {
  Options options;
  options.profile = profile;
  return options;
}

std::vector<Code> model_codes(const Report& report) {
  std::vector<Code> out;
  for (const Finding& f : report.findings) {
    const Area area = catalogue_entry(f.code).area;
    if (area == Area::Model || area == Area::SplitSet) out.push_back(f.code);
  }
  return out;
}

std::string described(const Report& report) {
  std::string out;
  for (const Finding& f : report.findings) {
    out += code_string(f.code) + " " + f.message + "\n";
  }
  return out;
}

KeyValue& key_of(Document& doc, std::string_view key) {
  for (KeyValue& kv : doc.metadata) {
    if (kv.key == key) return kv;
  }
  throw std::logic_error("no key " + std::string(key));
}

void drop_tensor(Document& doc, std::string_view name) {
  std::erase_if(doc.tensors, [&](const Tensor& t) { return t.name == name; });
}

TEST(ModelChecks, TheTestModelLoadsInEveryProfile) {
  const ByteVector bytes = write_bytes(model_document());
  for (const Profile profile : kAllProfiles) {
    const Report report = check(bytes, model_options(profile));
    EXPECT_TRUE(report.findings.empty()) << to_string(profile) << "\n" << described(report);
  }
}

TEST(ModelChecks, AreOnByDefaultAndOffWithTheOption) {
  Document doc = model_document();
  drop_tensor(doc, "blk.0.attn_v.weight");
  const ByteVector bytes = write_bytes(doc);
  EXPECT_EQ(model_codes(check(bytes, Options{})), std::vector<Code>{Code::MissingTensor});
  EXPECT_TRUE(model_codes(check(bytes, container_options())).empty());
}

// An error of the container's does not switch the model checks off: they need the metadata and
// the tensor infos, which were read.
TEST(ModelChecks, RunBesideTheContainersErrors) {
  Document doc = model_document();
  drop_tensor(doc, "blk.0.attn_v.weight");
  doc.metadata.push_back({"general.name", Value::string("again"), {}});  // GGUF2004
  const Report report = check(write_bytes(doc), model_options(Profile::Strict));
  EXPECT_EQ(codes(report), (std::vector<Code>{Code::DuplicateKey, Code::MissingTensor}))
      << described(report);
}

TEST(ModelChecks, AVocabularyOnlyFileGetsNoHyperparameterOrTensorChecks) {
  Document doc = model_document();
  doc.tensors.clear();
  std::erase_if(doc.metadata, [](const KeyValue& kv) { return kv.key.starts_with("llama."); });
  const Report report = check(write_bytes(doc), model_options(Profile::Strict));
  EXPECT_TRUE(model_codes(report).empty()) << described(report);
}

// Neither tensors nor a vocabulary: llama.cpp loads such a file as a vocabulary-only one and
// refuses it ("key not found in model: tokenizer.ggml.model"); so do strict and llama.cpp.
TEST(ModelChecks, AFileOfMetadataOnlyIsRefusedAsLlamaCppRefusesIt) {
  for (const Profile profile : kAllProfiles) {
    const Report report = check(write_bytes(minimal_document()), model_options(profile));
    if (profile == Profile::Spec) {
      EXPECT_TRUE(report.findings.empty()) << described(report);
    } else {
      EXPECT_EQ(codes(report), std::vector<Code>{Code::UnknownTokenizerModel})
          << to_string(profile) << "\n"
          << described(report);
    }
  }
}

// general.type naming a kind of file another loader reads: that loader's judge, never the model
// loader's verdict (test_artifacts.cpp tests the judges).
TEST(ModelChecks, ANonModelKindIsJudgedByItsOwnLoader) {
  const std::pair<const char*, Code> kinds[] = {{"adapter", Code::AdapterKeyInvalid},
                                                {"mmproj", Code::MmprojKeyInvalid},
                                                {"imatrix", Code::ImatrixInvalid}};
  for (const auto& [kind, code] : kinds) {
    Document doc = model_document();
    doc.metadata.push_back({"general.type", Value::string(kind), {}});
    const Report report = check(write_bytes(doc), model_options(Profile::LlamaCpp));
    EXPECT_TRUE(testing::has(report, code)) << kind << "\n" << described(report);
    EXPECT_FALSE(testing::has(report, Code::LoaderNotPredicted)) << described(report);
    EXPECT_FALSE(report.passed());
  }
  for (const char* kind : {"model", "vocab", ""}) {
    Document doc = model_document();
    doc.metadata.push_back({"general.type", Value::string(kind), {}});
    const Report report = check(write_bytes(doc), model_options(Profile::LlamaCpp));
    EXPECT_TRUE(report.passed()) << kind << "\n" << described(report);
  }
}

// A shard's own tensors are part of a set: its keys are checked, its tensor set with the set's.
TEST(ModelChecks, AShardGetsItsKeysCheckedAndNotItsTensorSet) {
  Document doc = model_document();
  drop_tensor(doc, "blk.0.attn_v.weight");
  doc.metadata.push_back({"split.no", Value::u16(0), {}});
  doc.metadata.push_back({"split.count", Value::u16(2), {}});
  doc.metadata.push_back({"split.tensors.count", Value::i32(20), {}});
  EXPECT_TRUE(model_codes(check(write_bytes(doc), model_options(Profile::LlamaCpp))).empty());
  key_of(doc, "llama.block_count").value = Value::u64(1);
  EXPECT_EQ(model_codes(check(write_bytes(doc), model_options(Profile::LlamaCpp))),
            std::vector<Code>{Code::ModelKeyWrongType});
}

TEST(ModelChecks, APerLayerArrayOfBlockCountEntriesIsRead) {
  Document doc = model_document();
  key_of(doc, "llama.block_count").value = Value::u32(1);
  key_of(doc, "llama.attention.head_count").value =
      Value::array(ValueType::Uint32, {Value::u32(4)});
  EXPECT_TRUE(check(write_bytes(doc), model_options(Profile::Strict)).findings.empty());
  // An array of i32 is read into llama.cpp's u32 array too; one of f32 is not.
  key_of(doc, "llama.attention.head_count").value = Value::array(ValueType::Int32, {Value::i32(4)});
  EXPECT_TRUE(check(write_bytes(doc), model_options(Profile::Strict)).findings.empty());
  key_of(doc, "llama.attention.head_count").value =
      Value::array(ValueType::Float32, {Value::f32(4)});
  EXPECT_EQ(model_codes(check(write_bytes(doc), model_options(Profile::Strict))),
            std::vector<Code>{Code::ModelKeyWrongType});
}

TEST(ModelChecks, TheHeadSizeDecidesTheShapes) {
  // 8 heads of 8 instead of 4 of 16: n_embd / n_head times n_head is still 64, the same shapes.
  // A key_length of 16 makes attn_q 64 x 128 (llama.cpp: "expected 64, 128, got 64, 64").
  Document doc = model_document();
  key_of(doc, "llama.attention.head_count").value = Value::u32(8);
  EXPECT_TRUE(model_codes(check(write_bytes(doc), model_options(Profile::Strict))).empty());
  doc.metadata.push_back({"llama.attention.key_length", Value::u32(16), {}});
  const Report report = check(write_bytes(doc), model_options(Profile::Strict));
  const std::vector<Code> found = model_codes(report);
  EXPECT_FALSE(found.empty()) << described(report);
  EXPECT_TRUE(std::all_of(found.begin(), found.end(), [](Code c) {
    return c == Code::TensorWrongShape;
  })) << described(report);
  EXPECT_NE(described(report).find("\"blk.0.attn_q.weight\" has shape [64, 64]: llama.cpp's "
                                   "llama loader expects [64, 128]"),
            std::string::npos)
      << described(report);
}

TEST(ModelChecks, AnOptionalTensorMayBeThereOrNot) {
  Document doc = model_document();
  doc.tensors.push_back({"output.weight", {64, 4}, 0, {}, {}});
  doc.tensors.push_back({"blk.0.attn_output.bias", {64}, 0, {}, {}});
  EXPECT_TRUE(model_codes(check(write_bytes(doc), model_options(Profile::Strict))).empty());
  doc.tensors.back().dims = {65};
  EXPECT_EQ(model_codes(check(write_bytes(doc), model_options(Profile::Strict))),
            std::vector<Code>{Code::TensorWrongShape});
}

TEST(ModelChecks, EveryTensorFaultIsReportedNotOnlyTheFirst) {
  Document doc = model_document();
  drop_tensor(doc, "blk.0.attn_v.weight");
  drop_tensor(doc, "blk.0.ffn_up.weight");
  doc.tensors.push_back({"blk.3.attn_q.weight", {64, 64}, 0, {}, {}});
  const std::vector<Code> found =
      model_codes(check(write_bytes(doc), model_options(Profile::LlamaCpp)));
  EXPECT_EQ(found,
            (std::vector<Code>{Code::MissingTensor, Code::MissingTensor, Code::UnexpectedTensor}));
}

TEST(ModelChecks, TheModelledArchitecturesAreTheIssuesList) {
  for (const char* arch : {"llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3",
                           "gpt-oss", "mistral3", "deepseek2", "command-r", "cohere2", "glm4"}) {
    EXPECT_TRUE(detail::known_architecture(arch)) << arch;
    EXPECT_TRUE(detail::modelled_architecture(arch)) << arch;
  }
  EXPECT_TRUE(detail::known_architecture("bert"));
  EXPECT_FALSE(detail::modelled_architecture("bert"));
  EXPECT_FALSE(detail::known_architecture("lama"));
  EXPECT_NE(detail::llama_cpp_tables_version().find("node-llama-cpp 3.22.1"), std::string::npos);
}

// A hundred thousand tensors of a llama model's architecture, none of them its: every one is
// reported once, in time linear in their number (no quadratic lookup).
TEST(ModelChecks, ManyUnexpectedTensorsAreEachReportedOnce) {
  Document doc = model_document();
  for (int i = 0; i < 100000; ++i) {
    doc.tensors.push_back({"x." + std::to_string(i), {1}, 0, {}, {}});
  }
  Options options = model_options(Profile::LlamaCpp);
  options.limits.max_findings = 200000;
  const Report report = check(write_bytes(doc), options);
  const std::vector<Code> found = model_codes(report);
  EXPECT_EQ(std::count(found.begin(), found.end(), Code::UnexpectedTensor), 100000);
  EXPECT_EQ(std::count(found.begin(), found.end(), Code::SlowReferenceLoad), 1);
}

}  // namespace
}  // namespace ggufcheck
