// The model checks' behaviour around the codes (test_codes.cpp has one case per code, the model
// differential test compares them with llama.cpp): when they run, what they leave out, and the
// tables they run on.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "llama_loader/interpreter.hpp"
#include "llama_loader/sexpr.hpp"
#include "test_support.hpp"
#include "validate/validate.hpp"

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

// The table's forms are known by their heads once parsed (the interpreter dispatches on them);
// a symbol in head position that is no form, an empty list and atoms are Other.
TEST(LoaderTables, FormsAreKnownByTheirHeadsOnceParsed) {
  using detail::sexpr::Head;
  const detail::sexpr::Node n =
      detail::sexpr::parse("(if 12 (bin == (id x) (n 1)) (block (return (s \"a\"))) (foo 1) ())");
  EXPECT_EQ(n.op, Head::If);
  EXPECT_EQ(n[1].op, Head::Other);  // the line number
  EXPECT_EQ(n[2].op, Head::Bin);
  EXPECT_EQ(n[2][1].op, Head::Other);  // the operator, a symbol
  EXPECT_EQ(n[2][2].op, Head::Id);
  EXPECT_EQ(n[2][3].op, Head::N);
  EXPECT_EQ(n[3].op, Head::Block);
  EXPECT_EQ(n[3][1].op, Head::Return);
  EXPECT_EQ(n[3][1][1].op, Head::S);
  EXPECT_EQ(n[4].op, Head::Other);  // no form of the table
  EXPECT_EQ(n[5].op, Head::Other);  // empty
  EXPECT_TRUE(n[2].is(Head::Bin));
  EXPECT_TRUE(n[2].is("bin"));
  for (const std::string_view form :
       {"n",      "f",       "s",      "id",     "mem",     "idx",   "un",       "bin",
        "tern",   "assign",  "call",   "list",   "block",   "expr",  "decl",     "if",
        "for",    "foreach", "switch", "case",   "default", "break", "continue", "try",
        "lambda", "return",  "throw",  "assert", "unread",  "skip"}) {
    EXPECT_NE(detail::sexpr::head_of(form), Head::Other) << form;
  }
  EXPECT_EQ(detail::sexpr::head_of("ifx"), Head::Other);
  EXPECT_EQ(detail::sexpr::head_of(""), Head::Other);
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

// Every architecture of the pinned llama.cpp has its tensor loading in the table (issue 28);
// a name without a model class (gptj) is refused, as llama.cpp refuses it.
TEST(ModelChecks, EveryArchitectureHasItsLoadingCode) {
  const std::vector<std::string_view> names = detail::architecture_names();
  EXPECT_GE(names.size(), 150U);
  std::size_t modelled = 0;
  for (const std::string_view arch : names) {
    EXPECT_TRUE(detail::known_architecture(arch)) << arch;
    if (detail::modelled_architecture(arch)) ++modelled;
  }
  for (const char* arch : {"llama", "qwen2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3",
                           "gpt-oss", "mistral3", "deepseek2", "command-r", "cohere2", "glm4",
                           "bert", "gpt2", "qwen3next", "ernie4_5-moe", "llama-embed", "clip"}) {
    EXPECT_TRUE(detail::modelled_architecture(arch)) << arch;
  }
  EXPECT_EQ(modelled, names.size() - 2);  // all but gptj and "(unknown)"
  EXPECT_FALSE(detail::modelled_architecture("gptj"));
  EXPECT_FALSE(detail::known_architecture("lama"));
  EXPECT_NE(detail::llama_cpp_tables_version().find("node-llama-cpp 3.22.1"), std::string::npos);
}

// The test model under another architecture's name (its keys renamed): whatever llama.cpp
// makes of it, ggufcheck never answers with the note GGUF7014 and a pass; where it cannot
// follow the code it says so (GGUF7016, an error).
TEST(ModelChecks, NoArchitectureGetsTheTensorSetNotModelledNote) {
  for (const std::string_view arch : detail::architecture_names()) {
    Document doc = model_document();
    for (KeyValue& kv : doc.metadata) {
      if (kv.key == "general.architecture") kv.value = Value::string(std::string(arch));
      if (kv.key.starts_with("llama.")) kv.key = std::string(arch) + kv.key.substr(5);
    }
    for (const Profile profile : {Profile::Strict, Profile::LlamaCpp}) {
      const Report report = check(write_bytes(doc), model_options(profile));
      const std::vector<Code> found = model_codes(report);
      EXPECT_EQ(std::count(found.begin(), found.end(), Code::TensorSetNotModelled), 0)
          << arch << "\n"
          << described(report);
      if (arch == "gptj" || arch == "(unknown)") {
        EXPECT_FALSE(report.passed()) << arch;
      }
    }
  }
}

TEST(ModelChecks, AnArchitectureWithoutAModelIsRefused) {
  Document doc = model_document();
  for (KeyValue& kv : doc.metadata) {
    if (kv.key == "general.architecture") kv.value = Value::string("gptj");
    if (kv.key.starts_with("llama.")) kv.key = "gptj" + kv.key.substr(5);
  }
  const Report report = check(write_bytes(doc), model_options(Profile::LlamaCpp));
  EXPECT_EQ(model_codes(report), std::vector<Code>{Code::UnknownArchitecture}) << described(report);
  EXPECT_NE(described(report).find("unsupported model architecture"), std::string::npos)
      << described(report);
  // vocabulary only: llama.cpp creates the model all the same, and refuses it
  doc.tensors.clear();
  const Report vocab_only = check(write_bytes(doc), model_options(Profile::LlamaCpp));
  EXPECT_EQ(model_codes(vocab_only), std::vector<Code>{Code::UnknownArchitecture})
      << described(vocab_only);
}

// --- the interpreter's forms, on S-expressions of its own -----------------------------------
//
// The test model's keys (llama, n_embd 64, 1 block, 4 heads) with the tensors given, and
// `code` run as its load_arch_tensors.

struct Run {
  detail::Validated read;
  detail::LoaderVerdict verdict;

  [[nodiscard]] std::vector<Code> codes() const {
    std::vector<Code> out;
    for (const detail::LoaderFinding& f : verdict.findings) out.push_back(f.code);
    return out;
  }
  [[nodiscard]] std::string messages() const {
    std::string out;
    for (const detail::LoaderFinding& f : verdict.findings) out += f.message + "\n";
    return out + (verdict.lost_at ? "lost at " + *verdict.lost_at : "");
  }
};

std::unique_ptr<Run> run_code(
    std::string_view code,
    std::vector<Tensor> tensors = {{"token_embd.weight", {64, 4}, 1, {}, {}}},
    std::vector<KeyValue> extra = {}) {
  Document doc = model_document();
  doc.tensors = std::move(tensors);
  for (KeyValue& kv : extra) doc.metadata.push_back(std::move(kv));
  const ByteVector bytes = write_bytes(doc);
  auto out = std::make_unique<Run>();
  const detail::Input input(Bytes(bytes.data(), bytes.size()));
  detail::validate_input(input, nullptr, container_options(), "test", out->read);
  std::vector<detail::TensorRef> refs;
  for (std::size_t i = 0; i < out->read.index.tensors.size(); ++i) {
    refs.push_back({&out->read.index, 0, i});
  }
  out->verdict = detail::run_loader_with_tensor_code(out->read.index, "llama", refs, code);
  // the input's bytes go away with this function: nothing may read them after
  out->read.index.input = detail::Input();
  return out;
}

constexpr std::string_view kCreateEmbd =
    R"((expr (call (id create_tensor) (call (id tn) (id LLM_TENSOR_TOKEN_EMBD) (s "weight")) (list (n 64) (n 4)) (n 0)) 7))";

std::string code(std::string_view text) {
  return std::string(text);
}

TEST(LoaderInterpreter, ALambdaRunsWhereItIsCalledWithItsArguments) {
  const auto called =
      run_code(code("(block (lambda make \"w\" (block (expr (call (id create_tensor) (call (id tn) "
                    "(id LLM_TENSOR_TOKEN_EMBD) (s \"weight\")) (list (id w) (n 4)) (n 0)) 3)) 2) "
                    "(expr (call (id make) (n 64)) 5))"));
  EXPECT_TRUE(called->verdict.findings.empty()) << called->messages();
  EXPECT_TRUE(called->verdict.tensors_modelled);
  // declared, not called: the tensor is not one the loader uses
  const auto uncalled = run_code(
      code("(block (lambda make \"w\" (block (expr (call (id create_tensor) (call (id tn) "
           "(id LLM_TENSOR_TOKEN_EMBD) (s \"weight\")) (list (id w) (n 4)) (n 0)) 3)) 2))"));
  EXPECT_EQ(uncalled->codes(), std::vector<Code>{Code::UnexpectedTensor}) << uncalled->messages();
  // called with the wrong width: the shape comes from the argument
  const auto wrong =
      run_code(code("(block (lambda make \"w\" (block (expr (call (id create_tensor) (call (id tn) "
                    "(id LLM_TENSOR_TOKEN_EMBD) (s \"weight\")) (list (id w) (n 4)) (n 0)) 3)) 2) "
                    "(expr (call (id make) (n 32)) 5))"));
  EXPECT_EQ(wrong->codes(), std::vector<Code>{Code::TensorWrongShape}) << wrong->messages();
}

TEST(LoaderInterpreter, ASwitchStartsAtItsCaseAndFallsThroughToABreak) {
  const auto at = [&](int value, bool with_break) {
    return run_code("(block (switch 4 (n " + std::to_string(value) +
                    ") (case ((n 1)) (throw \"one\" 5)) " + "(case ((n 2) (n 3)) " +
                    std::string(kCreateEmbd) + (with_break ? " (break 8)" : "") +
                    ") (case ((default)) (throw \"other\" 9))))");
  };
  EXPECT_TRUE(at(2, true)->verdict.findings.empty()) << at(2, true)->messages();
  EXPECT_TRUE(at(3, true)->verdict.findings.empty());
  const auto fell = at(3, false);  // no break: on into default
  EXPECT_EQ(fell->codes(), std::vector<Code>{Code::ModelValueOutOfRange}) << fell->messages();
  EXPECT_NE(fell->messages().find("\"other\""), std::string::npos) << fell->messages();
  const auto one = at(1, true);
  EXPECT_NE(one->messages().find("\"one\""), std::string::npos) << one->messages();
  const auto other = at(7, true);
  EXPECT_NE(other->messages().find("\"other\""), std::string::npos) << other->messages();
  // a switch on a value ggufcheck does not know, whose cases matter: lost there
  const auto unknown = run_code("(block (switch 4 (id nothing_known) (case ((n 1)) " +
                                std::string(kCreateEmbd) + ")))");
  ASSERT_TRUE(unknown->verdict.lost_at.has_value());
  EXPECT_EQ(*unknown->verdict.lost_at, "test.cpp:4");
}

TEST(LoaderInterpreter, ARangeForVisitsEachElementAndStopsAtABreak) {
  // for (int v : {1, 2, 3}) { if (v == 3) throw; if (v == 2) break; } creates nothing past 2
  const auto broke = run_code(
      "(block (foreach 2 v \"int\" (list (n 1) (n 2) (n 3)) (block "
      "(if 3 (bin \"==\" (id v) (n 3)) (throw \"three\" 3)) "
      "(if 4 (bin \"==\" (id v) (n 2)) (block " +
      std::string(kCreateEmbd) + " (break 4))))))");
  EXPECT_TRUE(broke->verdict.findings.empty()) << broke->messages();
  // a set keeps one of each: two inserts of 5, one element
  const auto set = run_code(
      "(block (decl seen \"std::unordered_set<\" (n 0) 1) "
      "(foreach 2 v \"int\" (list (n 5) (n 5)) (expr (call (mem (id seen) insert) (id v)) 2)) "
      "(if 3 (bin \"!=\" (call (mem (id seen) size)) (n 1)) (throw \"size\" 3)) " +
      std::string(kCreateEmbd) + ")");
  EXPECT_TRUE(set->verdict.findings.empty()) << set->messages();
  // over what ggufcheck does not model, with an effect: lost at the loop
  const auto unknown = run_code("(block (foreach 6 v \"auto\" (id some_map) (throw \"x\" 6)))");
  ASSERT_TRUE(unknown->verdict.lost_at.has_value());
  EXPECT_EQ(*unknown->verdict.lost_at, "test.cpp:6");
}

// llama.cpp's create_tensor throws for a required tensor that is missing: a try's handler then
// runs, and what the body found is not a finding.
TEST(LoaderInterpreter, ATryRunsItsHandlerWhereTheBodyFails) {
  const auto handled = run_code(
      "(block (try 2 (expr (call (id create_tensor) (call (id tn) (id LLM_TENSOR_OUTPUT) "
      "(s \"weight\")) (list (n 64) (n 4)) (n 0)) 3) " +
      std::string(kCreateEmbd) + "))");
  EXPECT_TRUE(handled->verdict.findings.empty()) << handled->messages();
  const auto body_fine =
      run_code("(block (try 2 " + std::string(kCreateEmbd) + " (throw \"handler\" 4)))");
  EXPECT_TRUE(body_fine->verdict.findings.empty()) << body_fine->messages();
}

TEST(LoaderInterpreter, AnIntegerDivisionOrModuloByZeroIsARefusal) {
  for (const char* op : {"/", "%"}) {
    // hparams.n_expert is 0 in the test model
    const auto divided =
        run_code(std::string("(block (decl q \"int64_t\" (bin \"") + op +
                 "\" (n 64) (mem (id hparams) n_expert)) 2) " + std::string(kCreateEmbd) + ")");
    EXPECT_EQ(divided->codes(), std::vector<Code>{Code::ModelValueOutOfRange}) << op;
    EXPECT_NE(divided->messages().find("divides by zero"), std::string::npos)
        << divided->messages();
  }
  // by a count that is not 0: no finding (n_head 4)
  const auto fine = run_code(
      "(block (decl q \"int64_t\" (bin \"/\" (n 64) "
      "(call (mem (id hparams) n_head) (n 0))) 2) " +
      std::string(kCreateEmbd) + ")");
  EXPECT_TRUE(fine->verdict.findings.empty()) << fine->messages();
}

TEST(LoaderInterpreter, AnAssertionOrAbortRefusesNamingItsLine) {
  const auto asserted = run_code("(block " + std::string(kCreateEmbd) +
                                 " (assert (bin \">\" (mem (id hparams) n_expert) (n 0)) 12))");
  EXPECT_EQ(asserted->codes(), std::vector<Code>{Code::ModelValueOutOfRange});
  EXPECT_NE(asserted->messages().find("test.cpp:12"), std::string::npos) << asserted->messages();
  const auto aborted = run_code("(block (throw \"abort\" 13))");
  EXPECT_NE(aborted->messages().find("test.cpp:13"), std::string::npos) << aborted->messages();
}

// A tensor pointer's type and shape are the file's: ml.get_weight(name)->type, ->ne[1].
TEST(LoaderInterpreter, ATensorPointerHasTheFilesTypeAndShape) {
  const auto f16 = run_code(
      "(block (if 2 (bin \"==\" (mem (call (mem (id ml) get_weight) (s \"token_embd.weight\")) "
      "type) (id GGML_TYPE_F16)) (throw \"f16\" 2)) " +
      std::string(kCreateEmbd) + ")");
  EXPECT_NE(f16->messages().find("\"f16\""), std::string::npos) << f16->messages();
  const auto rows = run_code(
      "(block (decl w \"auto\" (call (mem (id ml) get_weight) (s \"token_embd.weight\")) 1) "
      "(if 2 (bin \"!=\" (idx (mem (mem (id w) tensor) ne) (n 1)) (n 4)) (throw \"rows\" 2)) " +
      std::string(kCreateEmbd) + ")");
  EXPECT_TRUE(rows->verdict.findings.empty()) << rows->messages();
}

TEST(LoaderInterpreter, CodeTheGeneratorCouldNotReadIsNeverAPass) {
  const auto unread = run_code("(block (unread \"a construct the reader does not know\"))");
  ASSERT_TRUE(unread->verdict.lost_at.has_value());
  EXPECT_NE(unread->verdict.lost_at->find("a construct the reader does not know"),
            std::string::npos);
  EXPECT_FALSE(unread->verdict.tensors_modelled);
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
