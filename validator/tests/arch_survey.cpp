// A diagnostic of the model checks across every architecture of the pinned llama.cpp, against
// llama.cpp itself (not part of the test suite: it prints figures and takes minutes):
//
//   build/dev/validator/tests/ggufcheck_arch_survey [ARCH...]
//
// For each architecture (all of them by default) it builds a generic model with the oracle loop
// of model_builder.hpp (2 layers, n_embd 64, 4 heads, a gpt2 vocabulary; the loop adds what
// llama.cpp asks for) and compares ggufcheck's llama.cpp-profile verdict with libllama's on the
// file the loop ends with (a model, or the file llama.cpp refused or crashed on) and on a few
// mutants of a model: a tensor dropped, a tensor added, a tensor reshaped, the head count 0, the
// block count dropped. A line per architecture, then the totals; a disagreement names both
// verdicts. GGUF7016 (ggufcheck could not follow the code) counts as a refusal, as the llama.cpp
// profile reports it, and is counted apart.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/validate.hpp"
#include "llama_loader/interpreter.hpp"
#include "llama_loader_reference.hpp"
#include "model_builder.hpp"
#include "models.hpp"

namespace {

using namespace ggufcheck;
using namespace ggufcheck::testing;
namespace fs = std::filesystem;

struct Ours {
  bool model = false;  // it has tensors (a file without is checked as a vocabulary-only one)
  bool passes = false;
  bool lost = false;  // GGUF7016
  std::string first_error;
};

Ours ours(const fs::path& file) {
  Options options;
  options.profile = Profile::LlamaCpp;
  const Report report = validate_file(file.string(), options);
  Ours out;
  out.model = report.facts.tensor_count.value_or(0) > 0;
  out.passes = report.passed();
  for (const Finding& f : report.findings) {
    if (f.severity != Severity::Error) continue;
    if (f.code == Code::LoaderNotPredicted) out.lost = true;
    if (out.first_error.empty()) out.first_error = code_string(f.code) + " " + f.message;
  }
  return out;
}

struct Tally {
  unsigned files = 0;
  unsigned agree = 0;
  unsigned lost = 0;
};

std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text.size() > 220 ? text.substr(0, 220) + "..." : text;
}

// Compares on `file`; prints a disagreement.
void compare(LlamaLoaderReference& reference, const fs::path& file, const std::string& what,
             Tally& tally) {
  const Ours us = ours(file);
  if (!us.model) return;  // llama.cpp would be asked to load it as a vocabulary
  const LoaderResult llama = reference.load(file);
  ++tally.files;
  if (us.lost) ++tally.lost;
  if (llama.loads() == us.passes) {
    ++tally.agree;
    return;
  }
  std::printf("    DISAGREE %s: llama.cpp %s%s%s; ggufcheck %s%s\n", what.c_str(),
              to_string(llama.outcome), llama.loads() ? "" : ": ", one_line(llama.message).c_str(),
              us.passes ? "passes" : "fails: ", one_line(us.first_error).c_str());
}

void set_u32(Document& doc, const std::string& key, std::uint32_t value) {
  if (KeyValue* kv = find_pair(doc, key)) {
    kv->value = Value::u32(value);
  } else {
    doc.metadata.push_back(pair(key, Value::u32(value)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string library = reference_llama_library_path();
  if (!fs::exists(library)) {
    std::fprintf(stderr, "no libllama at %s\n", library.c_str());
    return 2;
  }
  LlamaLoaderReference reference(library);
  reference.start();
  const fs::path dir =
      fs::temp_directory_path() / ("ggufcheck-arch-survey-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::string> archs;
  for (int i = 1; i < argc; ++i) archs.emplace_back(argv[i]);
  if (archs.empty()) {
    for (const std::string_view a : detail::architecture_names()) archs.emplace_back(a);
  }
  Tally total;
  unsigned built = 0;
  for (const std::string& arch : archs) {
    BaseSpec spec;
    spec.name = arch;
    spec.arch = arch;
    spec.pre = "gpt-2";
    spec.hparams = {pair("context_length", Value::u32(256)),
                    pair("embedding_length", Value::u32(64)),
                    pair("block_count", Value::u32(2)),
                    pair("feed_forward_length", Value::u32(128)),
                    pair("attention.head_count", Value::u32(4)),
                    pair("attention.head_count_kv", Value::u32(4)),
                    pair("attention.layer_norm_rms_epsilon", Value::f32(1e-5F)),
                    pair("attention.layer_norm_epsilon", Value::f32(1e-5F))};
    const fs::path file = dir / (arch + ".gguf");
    Tally tally;
    std::string base_note;
    try {
      const BaseModel base = [&] {
        try {
          return build_base(reference, spec, file);
        } catch (const std::runtime_error& e) {
          // an architecture of experts only: again with four experts, two used
          if (std::string(e.what()).find("expert") == std::string::npos) throw;
          spec.hparams.push_back(pair("expert_count", Value::u32(4)));
          spec.hparams.push_back(pair("expert_used_count", Value::u32(2)));
          spec.hparams.push_back(pair("expert_feed_forward_length", Value::u32(64)));
          return build_base(reference, spec, file);
        }
      }();
      ++built;
      base_note = "model in " + std::to_string(base.loads) + " loads";
      compare(reference, file, "base", tally);
      const Document& doc = base.document;
      const auto mutant = [&](const std::string& what, Document d) {
        const fs::path m = dir / (arch + "-mutant.gguf");
        if (!save_file(m, model_bytes(d))) return;
        compare(reference, m, what, tally);
      };
      if (!doc.tensors.empty()) {
        for (const std::size_t t :
             {std::size_t{0}, doc.tensors.size() / 2, doc.tensors.size() - 1}) {
          Document d = doc;
          d.tensors.erase(d.tensors.begin() + static_cast<std::ptrdiff_t>(t));
          mutant("without " + doc.tensors[t].name, d);
          if (doc.tensors[t].dims.empty()) continue;
          Document r = doc;
          r.tensors[t].dims[0] += 1;
          mutant("reshaped " + doc.tensors[t].name, r);
        }
      }
      Document extra = doc;
      extra.tensors.push_back(tensor("blk.0.bogus.weight", {64}, 0));
      mutant("with blk.0.bogus.weight", extra);
      Document heads = doc;
      set_u32(heads, arch + ".attention.head_count", 0);
      mutant("head_count 0", heads);
      Document no_blocks = doc;
      std::erase_if(no_blocks.metadata,
                    [&](const KeyValue& kv) { return kv.key == arch + ".block_count"; });
      mutant("without block_count", no_blocks);
    } catch (const std::runtime_error& e) {
      base_note = std::string("no model: ") + one_line(e.what());
      if (fs::exists(file)) compare(reference, file, "last file", tally);
    }
    std::printf("%-20s %u/%u agree, %u GGUF7016 (%s)\n", arch.c_str(), tally.agree, tally.files,
                tally.lost, base_note.c_str());
    std::fflush(stdout);
    total.files += tally.files;
    total.agree += tally.agree;
    total.lost += tally.lost;
  }
  std::printf("TOTAL: %zu architectures, %u built into a model; %u/%u files agree, %u GGUF7016\n",
              archs.size(), built, total.agree, total.files, total.lost);
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return 0;
}
