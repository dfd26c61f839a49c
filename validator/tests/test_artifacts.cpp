// The judges of the other kinds of file (validator/src/artifacts/): LoRA adapters with and
// without a base model, multimodal projectors, importance matrices, and the kind dispatch. The
// adapter differential test (test_adapter_differential.cpp) compares the adapter judge with
// llama.cpp's llama_adapter_lora_init.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ggufcheck/info.hpp"
#include "mmproj_builder.hpp"
#include "test_support.hpp"

namespace ggufcheck {
namespace {

using testing::ByteVector;
using testing::check;
using testing::codes;
using testing::model_document;
using testing::TempDir;

Options options_of(Profile profile, std::string base = {}) {
  Options options;
  options.profile = profile;
  options.base_model = std::move(base);
  return options;
}

std::string described(const Report& report) {
  std::string out;
  for (const Finding& f : report.findings) {
    out += code_string(f.code) + " " + f.path + ": " + f.message + "\n";
  }
  return out;
}

// The codes of the model checks' area (the container's, such as GGUF5006, left out), sorted.
std::vector<Code> model_codes(const Report& report) {
  std::vector<Code> out;
  for (const Finding& f : report.findings) {
    if (catalogue_entry(f.code).area == Area::Model) out.push_back(f.code);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<Code> sorted_codes(const Report& report) {
  std::vector<Code> out = codes(report);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Tensor& tensor_named(Document& doc, std::string_view name) {
  for (Tensor& t : doc.tensors) {
    if (t.name == name) return t;
  }
  throw std::logic_error("no tensor " + std::string(name));
}

KeyValue& key_named(Document& doc, std::string_view key) {
  for (KeyValue& kv : doc.metadata) {
    if (kv.key == key) return kv;
  }
  throw std::logic_error("no key " + std::string(key));
}

void drop_key(Document& doc, std::string_view key) {
  std::erase_if(doc.metadata, [&](const KeyValue& kv) { return kv.key == key; });
}

// The test model written to a file, as a base for adapters.
class Base {
 public:
  explicit Base(const Document& doc = model_document())
      : path_(dir_.write("base.gguf", write_bytes(doc))) {}
  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  TempDir dir_;
  std::filesystem::path path_;
};

// --- adapters ------------------------------------------------------------------------------------

TEST(Adapter, AGoodAdapterWithItsBasePassesEveryProfile) {
  const Base base;
  const ByteVector bytes = write_bytes(testing::adapter_document(model_document()));
  for (const Profile profile : kAllProfiles) {
    const Report report = check(bytes, options_of(profile, base.path()));
    EXPECT_TRUE(report.findings.empty()) << to_string(profile) << "\n" << described(report);
  }
}

// Without its base, what needs the base is not claimed: an error in the profiles that promise
// llama.cpp's verdict, nothing in spec.
TEST(Adapter, AloneItGetsTheBaseFreeChecksAndNoPass) {
  const ByteVector bytes = write_bytes(testing::adapter_document(model_document()));
  for (const Profile profile : {Profile::Strict, Profile::LlamaCpp}) {
    const Report report = check(bytes, options_of(profile));
    EXPECT_EQ(codes(report), std::vector<Code>{Code::AdapterBaseNotGiven}) << described(report);
    EXPECT_FALSE(report.passed());
  }
  EXPECT_TRUE(check(bytes, options_of(Profile::Spec)).passed());
}

TEST(Adapter, KeysAsLlamaAdapterLoraInitReadsThem) {
  struct Case {
    const char* what;
    void (*change)(Document&);
  };
  const Case cases[] = {
      {"adapter.type alora",
       [](Document& d) { key_named(d, "adapter.type").value = Value::string("alora"); }},
      {"no adapter.type", [](Document& d) { drop_key(d, "adapter.type"); }},
      {"adapter.type u32", [](Document& d) { key_named(d, "adapter.type").value = Value::u32(1); }},
      {"alpha u32", [](Document& d) { key_named(d, "adapter.lora.alpha").value = Value::u32(8); }},
      {"alpha f64", [](Document& d) { key_named(d, "adapter.lora.alpha").value = Value::f64(8); }},
      {"no architecture", [](Document& d) { drop_key(d, "general.architecture"); }},
      {"unknown architecture",
       [](Document& d) { key_named(d, "general.architecture").value = Value::string("lama"); }},
      {"invocation tokens i32",
       [](Document& d) {
         d.metadata.push_back({"adapter.alora.invocation_tokens",
                               Value::array(ValueType::Int32, {Value::i32(1)}),
                               {}});
       }},
      {"invocation tokens u32 scalar",
       [](Document& d) {
         d.metadata.push_back({"adapter.alora.invocation_tokens", Value::u32(1), {}});
       }},
  };
  const Base base;
  for (const Case& c : cases) {
    Document doc = testing::adapter_document(model_document());
    c.change(doc);
    const ByteVector bytes = write_bytes(doc);
    // With or without the base, the key is refused: no base matches such an adapter.
    for (const std::string& with : {std::string(), base.path()}) {
      const Report report = check(bytes, options_of(Profile::LlamaCpp, with));
      EXPECT_EQ(model_codes(report), std::vector<Code>{Code::AdapterKeyInvalid})
          << c.what << (with.empty() ? "" : " (base)") << "\n"
          << described(report);
    }
  }
}

TEST(Adapter, AnAloraWithUint32InvocationTokensAndNoAlphaLoads) {
  const Base base;
  Document doc = testing::adapter_document(model_document());
  drop_key(doc, "adapter.lora.alpha");  // llama.cpp reads 0 then
  doc.metadata.push_back({"adapter.alora.invocation_tokens",
                          Value::array(ValueType::Uint32, {Value::u32(1), Value::u32(3)}),
                          {}});
  const Report report = check(write_bytes(doc), options_of(Profile::LlamaCpp, base.path()));
  EXPECT_TRUE(report.findings.empty()) << described(report);
}

TEST(Adapter, TensorsWithoutTheirPartnerOrRankOrSuffixAreRefusedWithoutTheBase) {
  struct Case {
    const char* what;
    void (*change)(Document&);
    std::string_view tensor;  // where the finding is
  };
  const Case cases[] = {
      {"missing b",
       [](Document& d) {
         std::erase_if(d.tensors,
                       [](const Tensor& t) { return t.name == "blk.0.attn_q.weight.lora_b"; });
       },
       "blk.0.attn_q.weight.lora_a"},
      {"missing a",
       [](Document& d) {
         std::erase_if(d.tensors,
                       [](const Tensor& t) { return t.name == "blk.0.ffn_up.weight.lora_a"; });
       },
       "blk.0.ffn_up.weight.lora_b"},
      {"rank 4 and 8",
       [](Document& d) {
         tensor_named(d, "blk.0.attn_k.weight.lora_b").dims = {8, 64};
       },
       "blk.0.attn_k.weight.lora_b"},
      {"a not transposed",
       [](Document& d) {
         tensor_named(d, "blk.0.attn_v.weight.lora_a").dims = {4, 64};
       },
       "blk.0.attn_v.weight.lora_b"},
      {"no suffix",
       [](Document& d) {
         d.tensors.push_back({"blk.0.attn_q.weight", {64, 64}, 0, {}, {}});
       },
       "blk.0.attn_q.weight"},
  };
  for (const Case& c : cases) {
    Document doc = testing::adapter_document(model_document());
    c.change(doc);
    const Report report = check(write_bytes(doc), options_of(Profile::LlamaCpp));
    ASSERT_EQ(codes(report), std::vector<Code>{Code::AdapterTensorInvalid}) << c.what << "\n"
                                                                            << described(report);
    EXPECT_NE(report.findings[0].path.find(std::string(c.tensor)), std::string::npos)
        << c.what << ": " << report.findings[0].path;
  }
}

// Norm vectors are ignored by llama.cpp (TODO in its source): not refused, not paired.
TEST(Adapter, NormVectorsAreIgnored) {
  const Base base;
  Document doc = testing::adapter_document(model_document());
  doc.tensors.push_back({"blk.0.attn_norm.weight", {64}, 0, {}, {}});
  const Report report = check(write_bytes(doc), options_of(Profile::LlamaCpp, base.path()));
  EXPECT_TRUE(report.findings.empty()) << described(report);
}

TEST(Adapter, AgainstTheBaseTheArchitectureNamesAndShapesMustFit) {
  struct Case {
    const char* what;
    void (*change)(Document&);
  };
  const Case cases[] = {
      {"other architecture",
       [](Document& d) { key_named(d, "general.architecture").value = Value::string("qwen2"); }},
      {"a tensor the base lacks",
       [](Document& d) {
         d.tensors.push_back({"blk.1.attn_q.weight.lora_a", {64, 4}, 0, {}, {}});
         d.tensors.push_back({"blk.1.attn_q.weight.lora_b", {4, 64}, 0, {}, {}});
       }},
      {"a.ne[0] off",
       [](Document& d) {
         tensor_named(d, "blk.0.ffn_down.weight.lora_a").dims = {64, 4};
       }},
      {"b.ne[1] off",
       [](Document& d) {
         tensor_named(d, "blk.0.ffn_up.weight.lora_b").dims = {4, 64};
       }},
      {"token_embd not swapped",
       [](Document& d) {
         tensor_named(d, "token_embd.weight.lora_a").dims = {64, 4};
         tensor_named(d, "token_embd.weight.lora_b").dims = {4, 4};
       }},
  };
  const Base base;
  for (const Case& c : cases) {
    Document doc = testing::adapter_document(model_document());
    c.change(doc);
    const ByteVector bytes = write_bytes(doc);
    const Report report = check(bytes, options_of(Profile::LlamaCpp, base.path()));
    EXPECT_EQ(sorted_codes(report), std::vector<Code>{Code::AdapterBaseMismatch})
        << c.what << "\n"
        << described(report);
    // Alone, the same adapter is consistent: only the base could tell.
    EXPECT_EQ(codes(check(bytes, options_of(Profile::LlamaCpp))),
              std::vector<Code>{Code::AdapterBaseNotGiven})
        << c.what;
  }
}

TEST(Adapter, ABaseThatDoesNotLoadOrIsNotThereIsSaidSo) {
  Document broken = model_document();
  std::erase_if(broken.tensors, [](const Tensor& t) { return t.name == "blk.0.attn_v.weight"; });
  const Base unloadable(broken);
  Document vocabulary = model_document();
  vocabulary.tensors.clear();
  const Base tensorless(vocabulary);
  const ByteVector bytes = write_bytes(testing::adapter_document(model_document()));
  for (const std::string& path :
       {unloadable.path(), tensorless.path(), std::string("/nonexistent/base.gguf")}) {
    const Report report = check(bytes, options_of(Profile::LlamaCpp, path));
    EXPECT_EQ(codes(report), std::vector<Code>{Code::AdapterBaseUnusable}) << path << "\n"
                                                                           << described(report);
  }
  // A base that is itself an adapter is no model.
  TempDir dir;
  const std::string adapter_as_base = dir.write("adapter.gguf", bytes).string();
  EXPECT_EQ(codes(check(bytes, options_of(Profile::LlamaCpp, adapter_as_base))),
            std::vector<Code>{Code::AdapterBaseUnusable});
}

// --- multimodal projectors ----------------------------------------------------------------------

// A projector of every type ggufcheck follows passes (mmproj_differential proves that mtmd
// loads each); a type it does not follow gets GGUF7016, naming why, and never a pass.
TEST(Mmproj, AProjectorOfAFollowedTypePassesAndAnotherIsNotPredicted) {
  for (const std::string& type : testing::followed_projector_types()) {
    const Report report =
        check(write_bytes(testing::projector_of_type(type)), options_of(Profile::LlamaCpp));
    EXPECT_EQ(codes(report), std::vector<Code>{}) << type << "\n" << described(report);
  }
  ASSERT_FALSE(testing::unfollowed_projector_types().empty());
  for (const testing::UnfollowedType& type : testing::unfollowed_projector_types()) {
    if (type.name == "qwen2.5o") continue;  // read as qwen2.5vl_merger, which is followed
    const Report report =
        check(write_bytes(testing::mmproj_document(type.name)), options_of(Profile::LlamaCpp));
    // A type mtmd has no image preprocessor for is refused as a vision encoder, whatever else.
    const Code expected = type.vision ? Code::LoaderNotPredicted : Code::MmprojKeyInvalid;
    EXPECT_EQ(codes(report), std::vector<Code>{expected}) << type.name << "\n" << described(report);
    EXPECT_NE(report.findings.at(0).message.find(type.name), std::string::npos);
  }
}

// What the followed types ask for beyond the common keys: their tensors, their keys, the
// sanity checks of load_hparams, and where ggufcheck cannot follow the arithmetic.
TEST(Mmproj, TheRulesOfAProjectorType) {
  struct Case {
    const char* what;
    const char* type;
    void (*change)(Document&);
    std::vector<Code> expected;
  };
  const Case cases[] = {
      {"a layer's attn_out missing",
       "mlp",
       [](Document& d) {
         std::erase_if(d.tensors,
                       [](const Tensor& t) { return t.name == "v.blk.1.attn_out.weight"; });
       },
       {Code::MissingTensor}},
      {"block_count past the layers",
       "gemma3",
       [](Document& d) { key_named(d, "clip.vision.block_count").value = Value::u32(3); },
       {Code::MissingTensor}},
      {"block_count huge: found missing without walking to it",
       "gemma3",
       [](Document& d) { key_named(d, "clip.vision.block_count").value = Value::u32(0x7fffffff); },
       {Code::MissingTensor}},
      {"a mixture of experts needs no dense ffn",
       "mlp",
       [](Document& d) {
         std::erase_if(d.tensors,
                       [](const Tensor& t) { return t.name == "v.blk.0.ffn_up.weight"; });
         d.tensors.push_back({"v.blk.0.ffn_gate_exps.weight", {64, 64, 4}, 0, {}, {}});
       },
       {}},
      {"the type's required tensor",
       "gemma3",
       [](Document& d) {
         std::erase_if(d.tensors,
                       [](const Tensor& t) { return t.name == "mm.soft_emb_norm.weight"; });
       },
       {Code::MissingTensor}},
      {"the tensor clip_n_mmproj_embd reads",
       "mlp",
       [](Document& d) {
         std::erase_if(d.tensors, [](const Tensor& t) { return t.name == "mm.2.weight"; });
       },
       {Code::MissingTensor}},
      {"merge factor 0",
       "gemma3",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.projector.scale_factor", Value::u32(0), {}});
       },
       {Code::MmprojKeyInvalid}},
      {"image_size above 8192",
       "mlp",
       [](Document& d) { key_named(d, "clip.vision.image_size").value = Value::u32(9000); },
       {Code::MmprojKeyInvalid}},
      {"patch_size 0",
       "mlp",
       [](Document& d) { key_named(d, "clip.vision.patch_size").value = Value::u32(0); },
       {Code::MmprojKeyInvalid}},
      {"embedding_length 0",
       "mlp",
       [](Document& d) { key_named(d, "clip.vision.embedding_length").value = Value::u32(0); },
       {Code::MmprojKeyInvalid}},
      {"the type's required key",
       "phi4",
       [](Document& d) { drop_key(d, "clip.vision.image_max_pixels"); },
       {Code::MmprojKeyInvalid}},
      {"max pixels below min pixels",
       "phi4",
       [](Document& d) { key_named(d, "clip.vision.image_max_pixels").value = Value::u32(10); },
       {Code::MmprojKeyInvalid}},
      {"num_mel_bins above 256",
       "ultravox",
       [](Document& d) { key_named(d, "clip.audio.num_mel_bins").value = Value::u32(300); },
       {Code::MmprojKeyInvalid}},
      {"a vision type for the audio encoder",
       "mlp",
       [](Document& d) {
         d.metadata.push_back({"clip.has_audio_encoder", Value::boolean(true), {}});
         for (KeyValue& kv : std::vector<KeyValue>(d.metadata)) {
           if (kv.key.starts_with("clip.vision.") && kv.key != "clip.vision.image_size" &&
               kv.key != "clip.vision.patch_size" && !kv.key.starts_with("clip.vision.image_")) {
             d.metadata.push_back({"clip.audio." + kv.key.substr(12), kv.value, {}});
           }
         }
         d.metadata.push_back({"clip.audio.num_mel_bins", Value::u32(128), {}});
       },
       {Code::MissingTensor, Code::MmprojKeyInvalid}},
      {"token limits of factors near 2^31 (no overflow in ggufcheck either)",
       "pixtral",
       [](Document& d) {
         key_named(d, "clip.vision.patch_size").value = Value::u32(0x7fffffff);
         d.metadata.push_back({"clip.vision.spatial_merge_size", Value::u32(0x7fffffff), {}});
       },
       {Code::MmprojKeyInvalid}},
      {"a warmup image near 2^31 wide (compared without overflow)",
       "mlp",
       [](Document& d) { key_named(d, "clip.vision.image_size").value = Value::u32(0x7fffffff); },
       {Code::MmprojKeyInvalid}},
      {"token limits that overflow int",
       "pixtral",
       [](Document& d) { key_named(d, "clip.vision.patch_size").value = Value::u32(60000); },
       {Code::LoaderNotPredicted}},
      {"GGML_ASSERT: fewest tiles above the most (the constant 12)",
       "internvl",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.preproc_min_tiles", Value::u32(13), {}});
       },
       {Code::MmprojKeyInvalid}},
      {"GGML_ASSERT: the most tiles at INT32_MAX",
       "internvl",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.preproc_max_tiles", Value::u32(0x7fffffff), {}});
       },
       {Code::MmprojKeyInvalid}},
      {"GGML_ASSERT holds at its bounds (min == max)",
       "internvl",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.preproc_min_tiles", Value::u32(12), {}});
       },
       {}},
      {"tile sizes listed up to 2^20 tiles are followed",
       "internvl",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.preproc_max_tiles", Value::u32(1U << 20), {}});
         key_named(d, "clip.vision.image_size").value = Value::u32(16);
       },
       {}},
      {"tile sizes past 2^20 tiles are not",
       "internvl",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.preproc_max_tiles", Value::u32((1U << 20) + 1), {}});
       },
       {Code::LoaderNotPredicted}},
      {"tile sizes that overflow int are not",
       "internvl",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.preproc_max_tiles", Value::u32(1U << 19), {}});
         key_named(d, "clip.vision.image_size").value = Value::u32(8192);
       },
       {Code::LoaderNotPredicted}},
      {"no tile sizes below one tile (min 0: nothing listed)",
       "internvl",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.preproc_min_tiles", Value::u32(0), {}});
         d.metadata.push_back({"clip.vision.preproc_max_tiles", Value::u32(0x7ffffffe), {}});
       },
       {}},
      {"GGML_ASSERT on the merge factor the key set",
       "minimax_m3",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.spatial_merge_size", Value::u32(0), {}});
       },
       {Code::MmprojKeyInvalid}},
  };
  for (const Case& c : cases) {
    Document doc = testing::projector_of_type(c.type);
    c.change(doc);
    const Report report = check(write_bytes(doc), options_of(Profile::LlamaCpp));
    std::vector<Code> expected = c.expected;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(sorted_codes(report), expected) << c.what << "\n" << described(report);
  }
}

TEST(Mmproj, TheKeysEveryProjectorReads) {
  struct Case {
    const char* what;
    void (*change)(Document&);
  };
  const Case cases[] = {
      {"unknown projector",
       [](Document& d) { key_named(d, "clip.projector_type").value = Value::string("mlp3"); }},
      {"no projector type", [](Document& d) { drop_key(d, "clip.projector_type"); }},
      {"no encoder", [](Document& d) { drop_key(d, "clip.has_vision_encoder"); }},
      {"encoder flag u8",
       [](Document& d) { key_named(d, "clip.has_vision_encoder").value = Value::u8(1); }},
      {"no block_count", [](Document& d) { drop_key(d, "clip.vision.block_count"); }},
      {"block_count u64",
       [](Document& d) { key_named(d, "clip.vision.block_count").value = Value::u64(2); }},
      {"head_count above INT32_MAX",
       [](Document& d) {
         key_named(d, "clip.vision.attention.head_count").value = Value::u32(0x80000000U);
       }},
      {"epsilon f64",
       [](Document& d) {
         key_named(d, "clip.vision.attention.layer_norm_epsilon").value = Value::f64(1e-6);
       }},
      {"no patch size", [](Document& d) { drop_key(d, "clip.vision.patch_size"); }},
      {"image_mean of 2",
       [](Document& d) {
         key_named(d, "clip.vision.image_mean").value =
             Value::array(ValueType::Float32, {Value::f32(0.5f), Value::f32(0.5f)});
       }},
      {"gelu and silu",
       [](Document& d) {
         d.metadata.push_back({"clip.use_gelu", Value::boolean(true), {}});
         d.metadata.push_back({"clip.use_silu", Value::boolean(true), {}});
       }},
      {"odd pinpoints",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.image_grid_pinpoints",
                               Value::array(ValueType::Int32, {Value::i32(336)}),
                               {}});
       }},
      {"feature layer past block_count",
       [](Document& d) {
         d.metadata.push_back({"clip.vision.feature_layer",
                               Value::array(ValueType::Int32, {Value::i32(1), Value::i32(3)}),
                               {}});
       }},
  };
  for (const Case& c : cases) {
    Document doc = testing::projector_of_type("mlp");
    c.change(doc);
    const Report report = check(write_bytes(doc), options_of(Profile::LlamaCpp));
    EXPECT_EQ(sorted_codes(report), std::vector<Code>{Code::MmprojKeyInvalid}) << c.what << "\n"
                                                                               << described(report);
  }
}

// convert_hf_to_gguf.py's projectors say what they are by their architecture, "clip".
TEST(Mmproj, TheClipArchitectureIsAProjectorWithoutGeneralType) {
  Document doc = testing::mmproj_document("mlp3");
  drop_key(doc, "general.type");
  EXPECT_EQ(sorted_codes(check(write_bytes(doc), options_of(Profile::LlamaCpp))),
            std::vector<Code>{Code::MmprojKeyInvalid});
}

// --- importance matrices ------------------------------------------------------------------------

// llama-imatrix writes no general.architecture, which the GGUF specification requires: GGUF5006,
// a warning in the llama.cpp profile, is the only finding.
TEST(Imatrix, AsLlamaImatrixWritesItItLoads) {
  const ByteVector bytes = write_bytes(testing::imatrix_document());
  const Report report = check(bytes, options_of(Profile::LlamaCpp));
  EXPECT_EQ(codes(report), std::vector<Code>{Code::MissingArchitecture}) << described(report);
  EXPECT_TRUE(report.passed());
}

TEST(Imatrix, WhatItsReadersRefuse) {
  struct Case {
    const char* what;
    void (*change)(Document&);
  };
  const Case cases[] = {
      {"no tensors", [](Document& d) { d.tensors.clear(); }},
      {"chunk_count i32",
       [](Document& d) { key_named(d, "imatrix.chunk_count").value = Value::i32(10); }},
      {"no chunk_size", [](Document& d) { drop_key(d, "imatrix.chunk_size"); }},
      {"no datasets", [](Document& d) { drop_key(d, "imatrix.datasets"); }},
      {"counts missing",
       [](Document& d) {
         std::erase_if(d.tensors,
                       [](const Tensor& t) { return t.name == "blk.0.attn_q.weight.counts"; });
       }},
      {"in_sum2 missing",
       [](Document& d) {
         std::erase_if(d.tensors,
                       [](const Tensor& t) { return t.name == "blk.0.attn_k.weight.in_sum2"; });
       }},
      {"in_sum2 F16", [](Document& d) { tensor_named(d, "blk.0.attn_v.weight.in_sum2").type = 1; }},
  };
  for (const Case& c : cases) {
    Document doc = testing::imatrix_document();
    c.change(doc);
    const Report report = check(write_bytes(doc), options_of(Profile::LlamaCpp));
    EXPECT_EQ(sorted_codes(report),
              (std::vector<Code>{Code::MissingArchitecture, Code::ImatrixInvalid}))
        << c.what << "\n"
        << described(report);
  }
}

// --- the kinds
// ------------------------------------------------------------------------------------

// A general.type no converter writes: llama.cpp's model loader ignores the key and loads the
// model; strict warns, the llama.cpp profile follows llama.cpp.
TEST(FileKinds, AnUnknownGeneralTypeIsReadAsAModel) {
  Document doc = model_document();
  doc.metadata.push_back({"general.type", Value::string("checkpoint"), {}});
  const ByteVector bytes = write_bytes(doc);
  EXPECT_EQ(codes(check(bytes, options_of(Profile::Strict))),
            std::vector<Code>{Code::UnknownFileKind});
  EXPECT_TRUE(check(bytes, options_of(Profile::Strict)).passed());
  EXPECT_TRUE(check(bytes, options_of(Profile::LlamaCpp)).findings.empty());
}

TEST(FileKinds, InfoNamesTheKind) {
  Document vocabulary = model_document();
  vocabulary.tensors.clear();
  Document unknown = model_document();
  unknown.metadata.push_back({"general.type", Value::string("checkpoint"), {}});
  const std::pair<Document, std::string> files[] = {
      {model_document(), "model"},
      {vocabulary, "vocabulary"},
      {unknown, "model"},
      {testing::adapter_document(model_document()), "adapter"},
      {testing::mmproj_document(), "mmproj"},
      {testing::imatrix_document(), "imatrix"}};
  for (const auto& [doc, kind] : files) {
    const ByteVector bytes = write_bytes(doc);
    const Info info = info_bytes(Bytes(bytes.data(), bytes.size()), Options{}, InfoOptions{});
    EXPECT_EQ(info.kind, kind);
    const std::string text = render_info_text(info, false);
    EXPECT_EQ(text.find("  kind  ") != std::string::npos, kind != "model") << text;
  }
}

TEST(FileKinds, TheBaseOptionIsIgnoredByOtherKinds) {
  TempDir dir;
  const std::string missing = (dir.path() / "not-there.gguf").string();
  EXPECT_TRUE(check(write_bytes(model_document()), options_of(Profile::LlamaCpp, missing))
                  .findings.empty());
  EXPECT_TRUE(
      check(write_bytes(testing::imatrix_document()), options_of(Profile::LlamaCpp, missing))
          .passed());
}

}  // namespace
}  // namespace ggufcheck
