// The model checks (GGUF7xxx, GGUF8xxx) against llama.cpp's model loader itself: the pinned
// libllama.v0.5.0.so (validator/testkit/llama_loader_reference.hpp), which loads each file or
// split set with no_alloc as llama.cpp's tools load a model's metadata. ggufcheck's verdict in
// the llama.cpp profile (no error: it loads) must be llama.cpp's on every base model and every
// mutant, and the strict profile must reject at least what llama.cpp rejects (a crash or a hang
// of llama.cpp is a refusal). What differs on purpose is the table kDivergences below, mirrored
// in docs/llama-cpp-divergences.md ("Model loader", headings "### M<n>. `id`").
//
// The base models are built by the oracle (validator/testkit/model_builder.hpp), one for every
// architecture of the pinned llama.cpp (its names read from ggufcheck's generated table):
// generic or hand-picked hyperparameters, then the keys, key types, tensors and shapes llama.cpp
// asks for, once per run in a temporary directory. The architectures it cannot build are the
// table unbuildable(), asserted exactly, each with the refusal that stops it. The mutants
// (validator/testkit/model_mutants.hpp) change one thing each. Single files go through the library
// (ggufcheck::validate_file); split sets through the CLI (`ggufcheck --profile llama.cpp --quiet
// SHARD...`, its exit status).
//
// ggufcheck models every architecture of the pinned llama.cpp (asserted:
// EveryArchitectureIsModelled), so every base's verdicts must agree; the disagreements on purpose
// are the page's table.
//
// By default (ctest, CI) every base runs with a deterministic sample of its mutants (about
// kSampledMutantsPerHandPickedBase of a hand-picked base's, with the first of each kind, and
// kSampledMutantsPerBase of another's);
// GGUFCHECK_MODEL_DIFF_FULL=1 (scripts/test.sh differential) runs every mutant of every base.
//
// Environment:
//   GGUFCHECK_MODEL_DIFF_FULL=1  every mutant of every base
//   GGUFCHECK_MODEL_DIFF_SEED   seed of the mutants' choices (default kDefaultSeed)
//   GGUFCHECK_MODEL_DIFF_KIND   only the mutants of this kind (e.g. change-dim)
//   GGUFCHECK_MODEL_DIFF_BASE   only the mutants of this base (e.g. deepseek2)
//   GGUFCHECK_MODEL_DIFF_SHOW   disagreements printed per kind (default 3)
//   GGUFCHECK_MODEL_DIFF_VERBOSE=1  every comparison printed
//   GGUFCHECK_DIFF_DUMP         a directory: every disagreeing mutant's files are written there
//   GGUFCHECK_REFERENCE_LLAMA_LIB  the libllama to test against
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "adapter_mutants.hpp"
#include "child_process.hpp"
#include "ggufcheck/validate.hpp"
#include "llama_loader_reference.hpp"
#include "model_builder.hpp"
#include "model_mutants.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kDefaultSeed = 20261201;
// What the issue asks of the full differential: bases for at least 150 architectures, at least 30
// mutants of each, at least 4,500 in all.
constexpr std::size_t kMinimumArchitectures = 150;
constexpr std::size_t kMinimumMutantsPerBase = 30;
constexpr std::size_t kMinimumMutants = 4500;
// The default run: each generated base's mutants sampled down to about this many.
constexpr std::size_t kSampledMutantsPerBase = 6;
constexpr std::size_t kSampledMutantsPerHandPickedBase = 30;
constexpr unsigned kCliTimeLimitSeconds = 60;
constexpr std::size_t kMaxCliOutput = 65536;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  return std::strtoull(text, nullptr, 0);
}

bool in_ci() {
  return env_text("CI") == "true";
}

// --- the reference and the bases, once per run ---------------------------------------------------

// The run's temporary directory ($TMPDIR, else /dev/shm when there is one: every mutant is
// written there), removed at exit.
fs::path temporary_root() {
  if (!env_text("TMPDIR").empty()) return fs::temp_directory_path();
  std::error_code ignored;
  return fs::is_directory("/dev/shm", ignored) ? fs::path("/dev/shm") : fs::temp_directory_path();
}

struct Scratch {
  fs::path dir = temporary_root() / ("ggufcheck-model-differential-" + std::to_string(::getpid()));
  Scratch() { fs::create_directories(dir); }
  ~Scratch() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

const fs::path& scratch() {
  static const Scratch s;
  return s.dir;
}

// The architectures of the pinned llama.cpp whose base model the oracle cannot build: what
// llama.cpp says when it stops the oracle, and why (docs/llama-cpp-divergences.md, "Model
// loader", mirrors it).
struct Unbuildable {
  std::string_view message;
  std::string_view why;
};

const std::map<std::string, Unbuildable>& unbuildable() {
  static const std::map<std::string, Unbuildable> table = {
      {"clip",
       {"CLIP cannot be used as main model",
        "a vision projector (mtmd's loader reads it); llama.cpp's model loader refuses every "
        "clip file after its hyperparameters"}},
      {"gptj",
       {"unsupported model architecture: 'gptj'",
        "a name in llama.cpp's table without a model class (llama_model_mapping has no case for "
        "it): no gptj file loads"}},
  };
  return table;
}

// The reference, started once per process; the bases are built when a test first needs them
// (all of them, or one by name): each test runs in a process of its own under ctest.
struct Oracle {
  std::unique_ptr<LlamaLoaderReference> reference;
  std::string why_not;
  bool library_missing = false;
  std::vector<std::string> architectures;  // the pinned llama.cpp's names
  std::vector<BaseSpec> specs;
  bool built = false;
  std::vector<BaseModel> bases;
  std::map<std::string, std::string> failures;  // spec name -> why it did not become a model
  double build_seconds = 0;
  unsigned loads = 0;
};

Oracle& oracle() {
  static Oracle o = [] {
    Oracle s;
    s.architectures = architecture_names(fs::path(GGUFCHECK_SOURCE_DIR) / "validator" / "src" /
                                         "llama_loader" / "generated" / "llama_arch.inc");
    s.specs = base_specs(s.architectures);
    const std::string path = reference_llama_library_path();
    if (!fs::exists(path)) {
      s.library_missing = true;
      s.why_not = "llama.cpp's libllama is missing (" + path +
                  "): run scripts/setup.sh, or set GGUFCHECK_REFERENCE_LLAMA_LIB";
      return s;
    }
    try {
      s.reference = std::make_unique<LlamaLoaderReference>(path);
      s.reference->start();
    } catch (const ReferenceError& e) {
      s.reference.reset();
      s.why_not = e.what();
    }
    return s;
  }();
  return o;
}

fs::path base_file(const BaseSpec& spec) {
  const fs::path dir = scratch() / "bases";
  fs::create_directories(dir);
  return dir / (spec.name + ".gguf");
}

// Every spec built (once), in the specs' order.
const std::vector<BaseModel>& bases() {
  Oracle& o = oracle();
  if (o.built || o.reference == nullptr) return o.bases;
  o.built = true;
  const auto start = std::chrono::steady_clock::now();
  for (const BaseSpec& spec : o.specs) {
    try {
      o.bases.push_back(build_base(*o.reference, spec, base_file(spec)));
      o.loads += o.bases.back().loads;
    } catch (const std::runtime_error& e) {
      o.failures[spec.name] = e.what();
    }
  }
  o.build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o.bases;
}

// One base by its spec's name, built alone unless every base is built already.
const BaseModel* find_base(const std::string& name) {
  Oracle& o = oracle();
  if (o.built) {
    for (const BaseModel& b : o.bases) {
      if (b.spec.name == name) return &b;
    }
    return nullptr;
  }
  static std::map<std::string, BaseModel> alone;
  if (const auto it = alone.find(name); it != alone.end()) return &it->second;
  for (const BaseSpec& spec : o.specs) {
    if (spec.name != name || o.reference == nullptr) continue;
    try {
      return &alone.emplace(name, build_base(*o.reference, spec, base_file(spec))).first->second;
    } catch (const std::runtime_error& e) {
      o.failures[spec.name] = e.what();
    }
  }
  return nullptr;
}

std::string failures_text() {
  std::string out;
  for (const auto& [name, why] : oracle().failures) out += "\n  " + name + ": " + why;
  return out;
}

#define GGUFCHECK_NEED_LLAMA(name)                                        \
  LlamaLoaderReference* const name = oracle().reference.get();            \
  if (name == nullptr) {                                                  \
    if (in_ci() || !oracle().library_missing) FAIL() << oracle().why_not; \
    GTEST_SKIP() << oracle().why_not;                                     \
  }

// --- one comparison ------------------------------------------------------------------------------

struct Verdict {
  bool loads = false;
  std::string findings;  // the errors, one a line
  std::string failure;   // the verdict could not be had (the CLI could not run, ...)
};

std::string errors_of(const Report& report) {
  std::string out;
  for (const Finding& f : report.findings) {
    if (f.severity != Severity::Error) continue;
    out += code_string(f.code) + " " + std::string(catalogue_entry(f.code).name) + " " + f.path +
           ": " + f.message + "\n";
  }
  return out;
}

Verdict library_verdict(const fs::path& file, Profile profile, const std::string& base = {}) {
  Options options;
  options.profile = profile;
  options.base_model = base;
  const Report report = validate_file(file.string(), options);
  return {report.passed(), errors_of(report), {}};
}

// `ggufcheck --profile P --quiet PATH...`: exit 0 passes, 1 errors, 2 unreadable input.
Verdict cli_verdict(const std::vector<fs::path>& paths, const char* profile) {
  std::vector<std::string> args = {GGUFCHECK_CLI_PATH, "--profile", profile, "--quiet"};
  for (const fs::path& p : paths) args.push_back(p.string());
  child::Run run;
  try {
    run = child::spawn(args, kCliTimeLimitSeconds, kMaxCliOutput);
  } catch (const std::runtime_error& e) {
    Verdict v;
    v.failure = e.what();
    return v;
  }
  Verdict v;
  v.findings = run.output;
  if (run.end != child::Run::End::Exited || run.status > 2) {
    v.failure = "ggufcheck --profile " + std::string(profile) + " ended with " +
                (run.end == child::Run::End::Exited ? "status " : "signal ") +
                std::to_string(run.status) + ": " + run.output;
  }
  v.loads = run.end == child::Run::End::Exited && run.status == 0;
  return v;
}

// general.type of a mutant's (first) file when it names another kind than a model.
std::string declared_kind(const ModelMutant& m) {
  if (m.files.empty()) return {};
  for (const KeyValue& kv : m.files.front().document.metadata) {
    if (kv.key != "general.type" || kv.value.type != ValueType::String) continue;
    const std::string& v = kv.value.text;
    if (v == "adapter" || v == "mmproj" || v == "imatrix") return v;
  }
  return {};
}

struct Comparison {
  bool skipped = false;  // a kind whose loader is not in the prebuilt libraries
  LoaderResult llama;
  Verdict ours;    // the llama.cpp profile
  Verdict strict;  // the strict profile, when llama.cpp does not load the file
  std::string failure;

  [[nodiscard]] bool llama_loads() const { return llama.loads(); }
  [[nodiscard]] bool agree() const { return llama_loads() == ours.loads; }
  // strict must reject whatever llama.cpp does not load
  [[nodiscard]] bool strict_misses() const { return !llama_loads() && strict.loads; }
};

// Writes the mutant's files into `dir` (emptied first) and compares.
Comparison compare(LlamaLoaderReference& reference, const ModelMutant& m, const fs::path& dir) {
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  fs::create_directories(dir);
  Comparison c;
  for (const MutantFile& f : m.files) {
    if (!save_file(dir / f.name, model_bytes(f.document))) {
      c.failure = "cannot write " + (dir / f.name).string();
      return c;
    }
  }
  std::vector<fs::path> load;
  for (const std::string& n : m.load_names) load.push_back(dir / n);
  // A file that says it is another kind is judged by that kind's loader, as ggufcheck judges it:
  // an adapter by llama_adapter_lora_init on its base model. mtmd's clip loader and the imatrix
  // reader are not in the prebuilt libraries: those files are not compared (test_artifacts.cpp
  // tests their judges against the pinned source's rules).
  const std::string kind = declared_kind(m);
  if (kind == "mmproj" || kind == "imatrix") {
    c.skipped = true;
    return c;
  }
  const BaseModel* base = find_base(m.base);
  if (kind == "adapter" && base == nullptr) {
    c.failure = "no base model " + m.base;
    return c;
  }
  c.llama = kind == "adapter"                     ? reference.load_adapter(base->file, load.front())
            : m.load == ModelMutant::Load::Splits ? reference.load_splits(load)
                                                  : reference.load(load.front(), m.vocab_only);
  if (c.llama.outcome == LoaderOutcome::HarnessFailure) {
    c.failure = "llama.cpp could not be run: " + c.llama.message + "\n" + c.llama.log;
    return c;
  }
  if (m.set) {
    std::vector<fs::path> check;
    for (const std::string& n : m.check_names) check.push_back(dir / n);
    c.ours = cli_verdict(check, "llama.cpp");
    if (!c.llama_loads()) c.strict = cli_verdict(check, "strict");
    c.failure = !c.ours.failure.empty() ? c.ours.failure : c.strict.failure;
  } else {
    const std::string with = kind == "adapter" ? base->file.string() : std::string();
    c.ours = library_verdict(dir / m.check_names.front(), Profile::LlamaCpp, with);
    if (!c.llama_loads()) {
      c.strict = library_verdict(dir / m.check_names.front(), Profile::Strict, with);
    }
  }
  return c;
}

std::string describe(const ModelMutant& m, const Comparison& c) {
  std::ostringstream out;
  out << m.kind << " / " << m.base << ": " << m.what << "\n    llama.cpp "
      << to_string(c.llama.outcome);
  if (c.llama.signal != 0) out << " (signal " << c.llama.signal << ")";
  if (!c.llama.message.empty()) out << ": " << c.llama.message;
  out << "\n    ggufcheck --profile llama.cpp " << (c.ours.loads ? "passes" : "fails");
  std::istringstream findings(c.ours.findings);
  int shown = 0;
  for (std::string line; std::getline(findings, line) && shown < 6;) {
    if (line.empty()) continue;
    out << "\n      " << line;
    ++shown;
  }
  if (c.strict_misses()) out << "\n    ggufcheck --profile strict passes";
  return out.str();
}

// --- the documented divergences (docs/llama-cpp-divergences.md, "Model loader") ------------------
//
// A disagreement on purpose: its id (the page's heading), its direction, a predicate that
// recognises it from the mutant and the comparison, and a witness (a mutant of the bases that
// shows it). Exactly the page's list, in its order.
struct ModelDivergence {
  std::string_view id;
  bool llama_loads;  // the direction: llama.cpp loads and ggufcheck fails, or the reverse
  bool (*explains)(const ModelMutant& m, const Comparison& c);
  ModelMutant (*witness)(const std::vector<BaseModel>& bases);
};

// Loading code ggufcheck's interpreter cannot follow (graniteswitch's loop over the
// std::unordered_map it fills from its adapter token ids: the interpreter models no maps):
// ggufcheck does not guess, it fails with GGUF7016 (fail closed), where llama.cpp loads.
bool is_loader_not_followed(const ModelMutant& /*m*/, const Comparison& c) {
  return c.ours.findings.find("GGUF7016") != std::string::npos &&
         c.ours.findings.find("could not follow") != std::string::npos;
}

ModelMutant loader_not_followed_witness(const std::vector<BaseModel>& bases) {
  const BaseModel* granite = &bases.front();
  for (const BaseModel& b : bases) {
    if (b.spec.name == "graniteswitch") granite = &b;
  }
  return base_mutant(*granite);
}

const std::vector<ModelDivergence>& divergences() {
  static const std::vector<ModelDivergence> list = {
      {"loader-not-followed", true, is_loader_not_followed, loader_not_followed_witness},
  };
  return list;
}

const ModelDivergence* explain(const ModelMutant& m, const Comparison& c) {
  for (const ModelDivergence& d : divergences()) {
    if (d.llama_loads == c.llama_loads() && d.explains(m, c)) return &d;
  }
  return nullptr;
}

// --- the figures ---------------------------------------------------------------------------------

struct Tally {
  std::size_t count = 0;
  std::size_t both_refuse = 0;
  std::size_t both_load = 0;
  std::size_t llama_loads_we_fail = 0;
  std::size_t llama_refuses_we_pass = 0;
  std::size_t documented = 0;
  std::size_t strict_misses = 0;
  std::size_t crashes = 0;                   // llama.cpp crashed or hung (a refusal)
  std::map<std::string, std::size_t> codes;  // both refuse: ggufcheck's first error code
  std::vector<std::string> shown;
};

// The first code ggufcheck's findings name (library: "GGUF7011 ..."; CLI: "error[GGUF7011 ...").
std::string first_code(const std::string& findings) {
  static const std::regex code(R"(GGUF[0-9]{4})");
  std::smatch m;
  return std::regex_search(findings, m, code) ? m[0].str() : "(none)";
}

void dump(const fs::path& root, std::size_t index, const ModelMutant& m, const Comparison& c,
          const fs::path& work) {
  const fs::path dir = root / (std::to_string(index) + "-" + m.kind + "-" + m.base);
  std::error_code ignored;
  fs::create_directories(dir, ignored);
  for (const MutantFile& f : m.files) fs::copy_file(work / f.name, dir / f.name, ignored);
  std::ofstream(dir / "what.txt") << describe(m, c) << "\n\nllama.cpp's log:\n" << c.llama.log;
}

// --- tests ---------------------------------------------------------------------------------------

// loader_message reads the reason out of what llama.cpp printed.
TEST(ModelDifferential, LoaderMessagesAreRead) {
  EXPECT_EQ(loader_message("llama_model_loader: loaded meta data\n"
                           "llama_model_load: error loading model: check_tensor_dims: tensor "
                           "'blk.0.attn_q.weight' not found\n"
                           "llama_model_load_from_file_impl: failed to load model\n",
                           false),
            "check_tensor_dims: tensor 'blk.0.attn_q.weight' not found");
  EXPECT_EQ(loader_message("llama_model_load_from_splits: list of splits is empty\n"
                           "llama_model_load_from_file_impl: failed to load model\n",
                           false),
            "llama_model_load_from_splits: list of splits is empty");
  EXPECT_EQ(loader_message("load: warning\n"
                           "/src/llama-vocab.cpp:2539: GGML_ASSERT(id_to_token.size() == "
                           "token_to_id.size()) failed\n",
                           true),
            "/src/llama-vocab.cpp:2539: GGML_ASSERT(id_to_token.size() == token_to_id.size()) "
            "failed");
  EXPECT_EQ(loader_message("", true), "");
}

// The harness: a base loads, a dropped required tensor is refused with llama.cpp's message, a
// duplicated token makes llama.cpp abort (a crash, told apart), a missing file is refused, a
// split set loads both ways. A broken reference cannot make everything agree.
TEST(ModelDifferential, ReferenceDiscriminates) {
  GGUFCHECK_NEED_LLAMA(reference);
  const BaseModel* llama = find_base("llama");
  ASSERT_NE(llama, nullptr) << failures_text();
  const fs::path dir = scratch() / "harness";
  fs::create_directories(dir);

  const LoaderResult base = reference->load(llama->file);
  EXPECT_EQ(base.outcome, LoaderOutcome::Loads) << base.message << "\n" << base.log;

  Document dropped = llama->document;
  const std::string name = dropped.tensors.back().name;
  dropped.tensors.pop_back();
  ASSERT_TRUE(save_file(dir / "dropped.gguf", model_bytes(dropped)));
  const LoaderResult refused = reference->load(dir / "dropped.gguf");
  EXPECT_EQ(refused.outcome, LoaderOutcome::Refuses) << refused.log;
  EXPECT_NE(refused.message.find("tensor '" + name + "' not found"), std::string::npos)
      << refused.message;

  Document duplicated = llama->document;
  std::vector<Value>& tokens = find_pair(duplicated, "tokenizer.ggml.tokens")->value.items;
  tokens.back() = tokens[5];
  ASSERT_TRUE(save_file(dir / "duplicated.gguf", model_bytes(duplicated)));
  const LoaderResult crashed = reference->load(dir / "duplicated.gguf");
  EXPECT_EQ(crashed.outcome, LoaderOutcome::Crashes) << crashed.message << "\n" << crashed.log;
  EXPECT_NE(crashed.message.find("GGML_ASSERT"), std::string::npos) << crashed.message;

  const LoaderResult missing = reference->load(dir / "no-such-file.gguf");
  EXPECT_EQ(missing.outcome, LoaderOutcome::Refuses);
  EXPECT_NE(missing.message.find("no-such-file.gguf"), std::string::npos) << missing.message;

  const std::vector<Document> shards = split_document(llama->document, 2);
  std::vector<fs::path> paths;
  for (std::uint32_t i = 0; i < 2; ++i) {
    paths.push_back(dir / split_file_name("set", i + 1, 2));
    ASSERT_TRUE(save_file(paths.back(), model_bytes(shards[i])));
  }
  const LoaderResult by_name = reference->load(paths.front());
  EXPECT_EQ(by_name.outcome, LoaderOutcome::Loads) << by_name.message;
  const LoaderResult listed = reference->load_splits(paths);
  EXPECT_EQ(listed.outcome, LoaderOutcome::Loads) << listed.message;
  const LoaderResult reversed = reference->load_splits({paths[1], paths[0]});
  EXPECT_EQ(reversed.outcome, LoaderOutcome::Refuses);
  EXPECT_NE(reversed.message.find("must be loaded with the first split"), std::string::npos)
      << reversed.message;
}

// Every architecture of the pinned llama.cpp became a model, but those of the table kUnbuildable
// (exactly them); at least kMinimumArchitectures did. Prints the time and loads it took.
TEST(ModelDifferential, EveryArchitectureHasABase) {
  GGUFCHECK_NEED_LLAMA(reference);
  const std::vector<std::string>& architectures = oracle().architectures;
  ASSERT_FALSE(architectures.empty()) << "no architecture read from the generated table";
  std::set<std::string> built;
  for (const BaseModel& b : bases()) built.insert(b.spec.arch);
  std::set<std::string> missing;
  for (const std::string& arch : architectures) {
    if (built.count(arch) == 0) missing.insert(arch);
  }
  std::set<std::string> expected;
  for (const auto& entry : unbuildable()) expected.insert(entry.first);
  std::printf("bases: %zu of %zu architectures (%zu bases, %u loads) in %.1f s\n", built.size(),
              architectures.size(), bases().size(), oracle().loads, oracle().build_seconds);
  EXPECT_EQ(missing, expected) << "architectures without a base:" << failures_text();
  std::set<std::string> failed;
  for (const auto& entry : oracle().failures) failed.insert(entry.first);
  EXPECT_EQ(failed, expected) << failures_text();
  for (const auto& [arch, u] : unbuildable()) {
    const auto it = oracle().failures.find(arch);
    if (it == oracle().failures.end()) continue;
    EXPECT_NE(it->second.find(u.message), std::string::npos)
        << arch << " stops for another reason than " << u.message << ": " << it->second;
  }
  EXPECT_GE(built.size(), kMinimumArchitectures);
}

// Every architecture of the pinned llama.cpp that the oracle can build has its tensor loading in
// ggufcheck's generated table: none is judged "not modelled" (GGUF7014 is retired).
TEST(ModelDifferential, EveryArchitectureIsModelled) {
  std::set<std::string> unmodelled;
  for (const std::string& arch : oracle().architectures) {
    if (unbuildable().count(arch) == 0 && !ggufcheck_models_tensors_of(arch)) {
      unmodelled.insert(arch);
    }
  }
  EXPECT_GE(oracle().architectures.size(), kMinimumArchitectures);
  EXPECT_TRUE(unmodelled.empty()) << ::testing::PrintToString(unmodelled);
}

// The bases whose loading code ggufcheck's interpreter cannot follow (divergence
// loader-not-followed): they get GGUF7016 in strict and llama.cpp, and nothing else.
const std::set<std::string>& bases_not_followed() {
  static const std::set<std::string> names = {"graniteswitch"};
  return names;
}

// Every base loads in llama.cpp and passes ggufcheck in every profile (spec: but for the keys of an
// architecture named with a '-'), but for bases_not_followed(), exactly: the checks accept real
// models. Prints each base's tensors and keys.
TEST(ModelDifferential, BasesLoadAndPassEveryProfile) {
  GGUFCHECK_NEED_LLAMA(reference);
  ASSERT_FALSE(bases().empty()) << failures_text();
  std::set<std::string> not_followed;
  for (const BaseModel& base : bases()) {
    SCOPED_TRACE(base.spec.name);
    std::printf("base %s\n", base.describe().c_str());
    std::string keys;
    for (const KeyValue& kv : base.document.metadata) {
      if (kv.key.rfind("tokenizer.", 0) == 0) continue;
      keys += " " + kv.key + ":" + gguf_type_name(kv.value.type);
    }
    std::printf("  keys:%s\n  tensors:", keys.c_str());
    for (const Tensor& t : base.document.tensors) {
      std::string dims;
      for (std::uint64_t d : t.dims) dims += (dims.empty() ? "" : ",") + std::to_string(d);
      std::printf(" %s[%s]", t.name.c_str(), dims.c_str());
    }
    std::printf("\n");
    const LoaderResult loaded = reference->load(base.file);
    EXPECT_EQ(loaded.outcome, LoaderOutcome::Loads) << loaded.message;
    for (Profile profile : {Profile::Strict, Profile::Spec, Profile::LlamaCpp}) {
      Options options;
      options.profile = profile;
      const Report report = validate_file(base.file.string(), options);
      // spec holds keys to the specification's lower_snake_case, and an architecture name with
      // a '-' (gpt-oss, command-r) breaks it in every key under it: GGUF2006, an error in spec
      // only, on purpose (docs/format.md, section 7). Nothing else may fail.
      const std::string prefix = base.spec.arch + ".";
      const bool hyphen = base.spec.arch.find('-') != std::string::npos;
      std::string unexpected;
      for (const Finding& f : report.findings) {
        if (f.severity != Severity::Error) continue;
        const bool unconventional_arch_key = profile == Profile::Spec && hyphen &&
                                             f.code == Code::UnconventionalKey &&
                                             f.path.find("\"" + prefix) != std::string::npos;
        if (unconventional_arch_key) continue;
        if (f.code == Code::LoaderNotPredicted && profile != Profile::Spec &&
            f.message.find("could not follow") != std::string::npos) {
          not_followed.insert(base.spec.name);
          continue;
        }
        unexpected += std::string("\n    profile ") + std::string(to_string(profile)) + ": " +
                      code_string(f.code) + " " + f.path + ": " + f.message;
      }
      EXPECT_TRUE(unexpected.empty()) << unexpected;
      const bool lost = bases_not_followed().count(base.spec.name) != 0 && profile != Profile::Spec;
      if ((!hyphen || profile != Profile::Spec) && !lost) {
        EXPECT_TRUE(report.passed()) << "profile " << to_string(profile);
      }
    }
  }
  EXPECT_EQ(not_followed, bases_not_followed());
}

// Every base has at least kMinimumMutantsPerBase mutants, at least kMinimumMutants in all, and
// they are the same for the same seed.
TEST(ModelDifferential, MutantsAreDeterministic) {
  GGUFCHECK_NEED_LLAMA(reference);
  ASSERT_FALSE(bases().empty()) << failures_text();
  const std::uint64_t seed = env_number("GGUFCHECK_MODEL_DIFF_SEED", kDefaultSeed);
  std::size_t total = 0;
  for (const BaseModel& base : bases()) {
    SCOPED_TRACE(base.spec.name);
    const std::vector<ModelMutant> a = base_mutants(base, seed);
    const std::vector<ModelMutant> b = base_mutants(base, seed);
    total += a.size();
    EXPECT_GE(a.size(), kMinimumMutantsPerBase);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].kind + a[i].base + a[i].what, b[i].kind + b[i].base + b[i].what) << i;
      ASSERT_TRUE(a[i].files.size() == b[i].files.size() &&
                  std::equal(a[i].files.begin(), a[i].files.end(), b[i].files.begin(),
                             [](const MutantFile& x, const MutantFile& y) {
                               return x.name == y.name && x.document == y.document;
                             }))
          << i;
    }
  }
  std::printf("mutants: %zu of %zu bases\n", total, bases().size());
  EXPECT_GE(total, kMinimumMutants);
}

// The default run's share of a base's mutants: every stride-th (about kSampledMutantsPerBase,
// spread over the kinds in their order), and of a hand-picked base about
// kSampledMutantsPerHandPickedBase and the first mutant of every kind.
bool sampled(const BaseModel& base, const std::vector<ModelMutant>& mutants, std::size_t index) {
  const std::size_t want =
      base.spec.hand_picked ? kSampledMutantsPerHandPickedBase : kSampledMutantsPerBase;
  const std::size_t stride = std::max<std::size_t>(1, mutants.size() / want);
  if (index % stride == stride / 2) return true;
  return base.spec.hand_picked && (index == 0 || mutants[index].kind != mutants[index - 1].kind);
}

struct ArchTally {
  std::size_t count = 0;
  std::size_t llama_loads_we_fail = 0;
  std::size_t llama_refuses_we_pass = 0;
  std::size_t documented = 0;
  std::size_t strict_misses = 0;
};

// Every base and its mutants (all of them with GGUFCHECK_MODEL_DIFF_FULL=1, else the sample
// above): llama.cpp's outcome against ggufcheck's llama.cpp verdict, and the strict profile
// rejecting whatever llama.cpp does not load. Only the architectures ggufcheck models must agree.
TEST(ModelDifferential, Mutants) {
  GGUFCHECK_NEED_LLAMA(reference);
  ASSERT_FALSE(bases().empty()) << failures_text();
  const bool full = env_text("GGUFCHECK_MODEL_DIFF_FULL") == "1";
  const std::uint64_t seed = env_number("GGUFCHECK_MODEL_DIFF_SEED", kDefaultSeed);
  const std::string only_kind = env_text("GGUFCHECK_MODEL_DIFF_KIND");
  const std::string only_base = env_text("GGUFCHECK_MODEL_DIFF_BASE");
  const std::uint64_t show = env_number("GGUFCHECK_MODEL_DIFF_SHOW", 3);
  const std::string dump_dir = env_text("GGUFCHECK_DIFF_DUMP");
  const bool verbose = env_text("GGUFCHECK_MODEL_DIFF_VERBOSE") == "1";

  const fs::path work = scratch() / "mutant";
  std::map<std::string, Tally> tallies;
  std::map<std::string, ArchTally> archs;
  std::map<std::string, std::size_t> llama_outcomes;
  std::size_t compared = 0, undocumented = 0, strict_misses = 0, index = 0, skipped = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const BaseModel& base : bases()) {
    if (!only_base.empty() && base.spec.name != only_base) continue;
    std::vector<ModelMutant> mutants = base_mutants(base, seed);
    const std::size_t generated = mutants.size();
    std::vector<ModelMutant> chosen;
    chosen.push_back(base_mutant(base));
    for (std::size_t i = 0; i < generated; ++i) {
      if (full || sampled(base, mutants, i)) chosen.push_back(mutants[i]);
    }
    mutants.clear();
    for (const ModelMutant& m : chosen) {
      const std::size_t i = index++;
      if (!only_kind.empty() && m.kind != only_kind) continue;
      const Comparison c = compare(*reference, m, work);
      if (c.skipped) {
        ++skipped;
        continue;
      }
      if (!c.failure.empty()) {
        ADD_FAILURE() << "mutant " << i << " " << m.kind << " / " << m.base << ": " << m.what
                      << ": " << c.failure;
        continue;
      }
      ++compared;
      if (verbose) std::printf("[%zu] %s\n", i, describe(m, c).c_str());
      Tally& t = tallies[m.kind];
      ArchTally& a = archs[base.spec.arch];
      ++t.count;
      ++a.count;
      ++llama_outcomes[to_string(c.llama.outcome)];
      if (c.llama.outcome == LoaderOutcome::Crashes || c.llama.outcome == LoaderOutcome::TimesOut) {
        ++t.crashes;
      }
      if (c.strict_misses()) {
        ++a.strict_misses;
        ++t.strict_misses;
        ++strict_misses;
      }
      if (c.agree()) {
        ++(c.llama_loads() ? t.both_load : t.both_refuse);
        if (!c.llama_loads()) ++t.codes[first_code(c.ours.findings)];
        if (!c.strict_misses()) continue;
      } else if (explain(m, c) != nullptr) {
        ++t.documented;
        ++a.documented;
        continue;
      } else {
        ++(c.llama_loads() ? a.llama_loads_we_fail : a.llama_refuses_we_pass);
        ++(c.llama_loads() ? t.llama_loads_we_fail : t.llama_refuses_we_pass);
        ++undocumented;
      }
      if (t.shown.size() < show) t.shown.push_back("[" + std::to_string(i) + "] " + describe(m, c));
      if (!dump_dir.empty()) dump(dump_dir, i, m, c, work);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::printf(
      "model differential (%s): seed %llu, %zu mutants compared (%zu bases, %zu "
      "architectures) in %.1f s; %zu marked mmproj or imatrix not compared (no prebuilt "
      "judge)\n",
      full ? "full" : "sampled", static_cast<unsigned long long>(seed), compared, bases().size(),
      archs.size(), seconds, skipped);
  std::printf("  llama.cpp:");
  for (const auto& [outcome, n] : llama_outcomes) std::printf(" %s %zu", outcome.c_str(), n);
  std::printf("\n  %-24s %6s %7s %7s %9s %9s %6s %6s %7s\n", "kind", "count", "refuse", "load",
              "llama-ok", "llama-no", "doc", "strict", "crashes");
  for (const auto& [kind, t] : tallies) {
    std::printf("  %-24s %6zu %7zu %7zu %9zu %9zu %6zu %6zu %7zu\n", kind.c_str(), t.count,
                t.both_refuse, t.both_load, t.llama_loads_we_fail, t.llama_refuses_we_pass,
                t.documented, t.strict_misses, t.crashes);
  }
  std::printf(
      "  (refuse/load: both; llama-ok: llama.cpp loads, ggufcheck fails; llama-no: llama.cpp "
      "refuses, ggufcheck passes; doc: documented divergences; strict: llama.cpp refuses and "
      "--profile strict passes)\n");
  std::printf("  where both refuse, ggufcheck's first error:\n");
  for (const auto& [kind, t] : tallies) {
    if (t.codes.empty()) continue;
    std::printf("  %-24s", kind.c_str());
    for (const auto& [code, n] : t.codes) std::printf(" %s %zu", code.c_str(), n);
    std::printf("\n");
  }
  std::printf("  per architecture:\n  %-18s %6s %9s %9s %6s %6s\n", "arch", "count", "llama-ok",
              "llama-no", "doc", "strict");
  for (const auto& [arch, a] : archs) {
    std::printf("  %-18s %6zu %9zu %9zu %6zu %6zu\n", arch.c_str(), a.count, a.llama_loads_we_fail,
                a.llama_refuses_we_pass, a.documented, a.strict_misses);
  }
  for (const auto& [kind, t] : tallies) {
    for (const std::string& s : t.shown) std::printf("  %s\n", s.c_str());
  }
  std::fflush(stdout);
  EXPECT_EQ(undocumented, 0U) << "disagreements with llama.cpp's model loader that "
                                 "docs/llama-cpp-divergences.md does not explain (above)";
  EXPECT_EQ(strict_misses, 0U) << "files llama.cpp does not load that --profile strict passes";
  if (only_kind.empty() && only_base.empty()) {
    EXPECT_GE(archs.size(), kMinimumArchitectures);
    if (full) {
      EXPECT_GE(compared, kMinimumMutants);
    }
  }
}

// The page's "### M<n>. `id`" headings are the table, in its order, numbered from 1, and each
// entry's witness shows it.
TEST(ModelDifferential, DocumentedDivergencesAreTheTable) {
  std::ifstream in(fs::path(GGUFCHECK_SOURCE_DIR) / "docs" / "llama-cpp-divergences.md");
  ASSERT_TRUE(in) << "docs/llama-cpp-divergences.md is missing";
  const std::regex heading(R"(^### M([0-9]+)\. `([a-z0-9-]+)`)");
  std::vector<std::string> documented, tested;
  std::uint64_t expected_number = 1;
  bool section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## Model loader", 0) == 0) section = true;
    std::smatch m;
    if (!std::regex_search(line, m, heading)) continue;
    EXPECT_EQ(std::stoull(m[1].str()), expected_number++) << line;
    documented.push_back(m[2]);
  }
  EXPECT_TRUE(section) << "docs/llama-cpp-divergences.md has no \"## Model loader\" section";
  for (const ModelDivergence& d : divergences()) tested.emplace_back(d.id);
  EXPECT_EQ(documented, tested);
  if (divergences().empty()) return;
  // Each entry still disagrees, in its direction, on its witness, and explains it.
  GGUFCHECK_NEED_LLAMA(reference);
  // The witnesses are mutants of llama (the first base), deepseek2 and graniteswitch.
  std::vector<BaseModel> witness_bases;
  for (const char* name : {"llama", "deepseek2", "graniteswitch"}) {
    const BaseModel* b = find_base(name);
    ASSERT_NE(b, nullptr) << name << failures_text();
    witness_bases.push_back(*b);
  }
  for (const ModelDivergence& d : divergences()) {
    SCOPED_TRACE(std::string(d.id));
    const ModelMutant m = d.witness(witness_bases);
    const Comparison c = compare(*reference, m, scratch() / "witness");
    ASSERT_TRUE(c.failure.empty()) << c.failure;
    EXPECT_EQ(c.llama_loads(), d.llama_loads) << describe(m, c);
    EXPECT_FALSE(c.agree()) << describe(m, c);
    EXPECT_EQ(explain(m, c), &d) << describe(m, c);
  }
}

// --- adapters: llama_adapter_lora_init on the base models
// -----------------------------------------
//
// Every base's adapter and its mutants (validator/testkit/adapter_mutants.hpp), loaded by
// llama.cpp on the base (LlamaLoaderReference::load_adapter: an abort or a signal is a
// refusal) and checked by ggufcheck with --base: the llama.cpp profile's verdict must be
// llama.cpp's, strict must reject what llama.cpp rejects. Without --base, what ggufcheck refuses
// for another reason than the missing base (GGUF7020), llama.cpp must refuse on the base too:
// the base-free checks claim nothing a base could change.

constexpr std::size_t kMinimumAdapterMutants = 200;

struct AdapterComparison {
  LoaderResult llama;
  Verdict ours, strict, alone;
  std::string failure;
};

AdapterComparison compare_adapter(LlamaLoaderReference& reference, const AdapterMutant& m,
                                  const fs::path& file) {
  AdapterComparison c;
  const BaseModel* base = find_base(m.base);
  if (base == nullptr) {
    c.failure = "no base model " + m.base;
    return c;
  }
  if (!save_file(file, model_bytes(m.adapter))) {
    c.failure = "cannot write " + file.string();
    return c;
  }
  c.llama = reference.load_adapter(base->file, file);
  if (c.llama.outcome == LoaderOutcome::HarnessFailure) {
    c.failure = "llama.cpp could not be run: " + c.llama.message + "\n" + c.llama.log;
    return c;
  }
  c.ours = library_verdict(file, Profile::LlamaCpp, base->file.string());
  c.strict = library_verdict(file, Profile::Strict, base->file.string());
  c.alone = library_verdict(file, Profile::LlamaCpp);
  return c;
}

std::string describe(const AdapterMutant& m, const AdapterComparison& c) {
  std::ostringstream out;
  out << m.kind << " / " << m.base << ": " << m.what << "\n    llama_adapter_lora_init "
      << to_string(c.llama.outcome);
  if (!c.llama.message.empty()) out << ": " << c.llama.message;
  out << "\n    ggufcheck --profile llama.cpp --base " << (c.ours.loads ? "passes" : "fails");
  if (!c.ours.findings.empty()) out << "\n      " << c.ours.findings;
  return out.str();
}

// The harness tells an adapter that loads from one llama.cpp refuses.
TEST(AdapterDifferential, ReferenceDiscriminates) {
  GGUFCHECK_NEED_LLAMA(reference);
  const BaseModel* llama = find_base("llama");
  ASSERT_NE(llama, nullptr) << failures_text();
  const fs::path dir = scratch() / "adapter-harness";
  fs::create_directories(dir);
  const Document good = adapter_document(llama->document);
  ASSERT_TRUE(save_file(dir / "good.gguf", model_bytes(good)));
  const LoaderResult loads = reference->load_adapter(llama->file, dir / "good.gguf");
  EXPECT_EQ(loads.outcome, LoaderOutcome::Loads) << loads.message << "\n" << loads.log;
  Document bad = good;
  bad.tensors.pop_back();
  ASSERT_TRUE(save_file(dir / "bad.gguf", model_bytes(bad)));
  const LoaderResult refused = reference->load_adapter(llama->file, dir / "bad.gguf");
  EXPECT_EQ(refused.outcome, LoaderOutcome::Refuses) << refused.log;
  EXPECT_NE(refused.message.find("missing one component"), std::string::npos) << refused.message;
}

TEST(AdapterDifferential, Mutants) {
  GGUFCHECK_NEED_LLAMA(reference);
  ASSERT_FALSE(bases().empty()) << failures_text();
  const std::uint64_t seed = env_number("GGUFCHECK_MODEL_DIFF_SEED", kDefaultSeed);
  const std::uint64_t show = env_number("GGUFCHECK_MODEL_DIFF_SHOW", 3);
  const bool verbose = env_text("GGUFCHECK_MODEL_DIFF_VERBOSE") == "1";
  // By default the adapters of the hand-picked bases (every adapter mutant kind on 13
  // architectures); GGUFCHECK_MODEL_DIFF_FULL=1, those of every base.
  const bool full = env_text("GGUFCHECK_MODEL_DIFF_FULL") == "1";
  std::vector<BaseModel> chosen;
  for (const BaseModel& base : bases()) {
    if (full || base.spec.hand_picked) chosen.push_back(base);
  }
  const std::vector<AdapterMutant> mutants = adapter_mutants(chosen, seed);
  EXPECT_GE(mutants.size(), kMinimumAdapterMutants);
  const fs::path file = scratch() / "adapter.gguf";
  std::map<std::string, Tally> tallies;
  std::size_t compared = 0, disagree = 0, strict_misses = 0, alone_wrong = 0;
  std::size_t loads = 0, refuses = 0, crashes = 0, on_unfollowed_bases = 0;
  for (std::size_t i = 0; i < mutants.size(); ++i) {
    const AdapterMutant& m = mutants[i];
    const AdapterComparison c = compare_adapter(*reference, m, file);
    if (!c.failure.empty()) {
      ADD_FAILURE() << "adapter mutant " << i << " " << m.kind << " / " << m.base << ": " << m.what
                    << ": " << c.failure;
      continue;
    }
    // On a base whose loader ggufcheck does not follow (GGUF7016 on the base: divergence
    // loader-not-followed), an adapter is GGUF7021, base unusable: fail closed, no verdict to
    // compare. Only there (a file there that is not an adapter is compared as any other).
    const bool base_unpredicted = c.ours.findings.find("GGUF7021") != std::string::npos &&
                                  c.ours.findings.find("GGUF7016") != std::string::npos;
    if (base_unpredicted) {
      EXPECT_TRUE(bases_not_followed().contains(m.base) && !c.ours.loads)
          << "[" << i << "] " << describe(m, c);
      ++on_unfollowed_bases;
      continue;
    }
    ++compared;
    if (verbose) std::printf("[%zu] %s\n", i, describe(m, c).c_str());
    Tally& t = tallies[m.kind];
    ++t.count;
    const bool llama_loads = c.llama.loads();
    ++(llama_loads ? loads : refuses);
    if (c.llama.outcome == LoaderOutcome::Crashes || c.llama.outcome == LoaderOutcome::TimesOut) {
      ++t.crashes;
      ++crashes;
    }
    bool shown = false;
    if (llama_loads == c.ours.loads) {
      ++(llama_loads ? t.both_load : t.both_refuse);
      if (!llama_loads) ++t.codes[first_code(c.ours.findings)];
    } else {
      ++(llama_loads ? t.llama_loads_we_fail : t.llama_refuses_we_pass);
      ++disagree;
      shown = true;
    }
    if (!llama_loads && c.strict.loads) {
      ++t.strict_misses;
      ++strict_misses;
      shown = true;
    }
    // Alone: a refusal for another reason than the missing base must be llama.cpp's too.
    const bool alone_refuses =
        !c.alone.loads && c.alone.findings.find("GGUF7020") == std::string::npos;
    if (alone_refuses && llama_loads) {
      ++alone_wrong;
      shown = true;
    }
    if (shown && t.shown.size() < show) {
      t.shown.push_back("[" + std::to_string(i) + "] " + describe(m, c));
    }
  }
  std::printf(
      "adapter differential: seed %llu, %zu adapters compared on %zu bases: llama.cpp "
      "loads %zu, refuses %zu (%zu crashes); %zu disagreements; %zu on a base ggufcheck does "
      "not follow (GGUF7021, not compared)\n",
      static_cast<unsigned long long>(seed), compared, chosen.size(), loads, refuses, crashes,
      disagree, on_unfollowed_bases);
  std::printf("  %-14s %6s %7s %7s %9s %9s %6s %7s\n", "kind", "count", "refuse", "load",
              "llama-ok", "llama-no", "strict", "crashes");
  for (const auto& [kind, t] : tallies) {
    std::printf("  %-14s %6zu %7zu %7zu %9zu %9zu %6zu %7zu\n", kind.c_str(), t.count,
                t.both_refuse, t.both_load, t.llama_loads_we_fail, t.llama_refuses_we_pass,
                t.strict_misses, t.crashes);
  }
  std::printf("  where both refuse, ggufcheck's first error:\n");
  for (const auto& [kind, t] : tallies) {
    if (t.codes.empty()) continue;
    std::printf("  %-14s", kind.c_str());
    for (const auto& [code, n] : t.codes) std::printf(" %s %zu", code.c_str(), n);
    std::printf("\n");
  }
  for (const auto& [kind, t] : tallies) {
    for (const std::string& line : t.shown) std::printf("  %s\n", line.c_str());
  }
  std::fflush(stdout);
  EXPECT_EQ(disagree, 0U) << "adapters on which ggufcheck --base and llama_adapter_lora_init "
                             "disagree (above)";
  EXPECT_EQ(strict_misses, 0U) << "adapters llama.cpp refuses that --profile strict passes";
  EXPECT_EQ(alone_wrong, 0U) << "adapters ggufcheck refuses without --base that llama.cpp loads";
}

}  // namespace
}  // namespace ggufcheck::testing
