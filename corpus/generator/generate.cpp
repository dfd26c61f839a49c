// Writes the seed corpus: DIR/<group>/<name>.gguf for every recipe and DIR/manifest.json.
// Usage: ggufcheck_make_corpus DIR. The output is the same bytes on every run (no time, no
// unordered iteration, fixed seeds); corpus/ in the repository is its committed output, and
// the ctest corpus_is_reproducible checks that it still is.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/writer.hpp"
#include "recipes.hpp"
#include "sha256.hpp"

namespace fs = std::filesystem;
using ggufcheck::Profile;
using ggufcheck::corpus::Recipe;

namespace {

// The manifest's format version: bump it when a field changes meaning.
constexpr int kSchemaVersion = 1;

nlohmann::ordered_json expect(const Recipe& recipe) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const Profile profile : ggufcheck::kAllProfiles) {
    const ggufcheck::corpus::Expectation e = ggufcheck::corpus::expectation(recipe, profile);
    nlohmann::ordered_json entry;
    entry["verdict"] = e.pass ? "pass" : "fail";
    entry["codes"] = e.codes;
    out[std::string(ggufcheck::to_string(profile))] = entry;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const auto usage = [&](std::FILE* out) {
    std::fprintf(
        out,
        "usage: %s OUTPUT_DIR\n\nWrites every corpus recipe as OUTPUT_DIR/<group>/<id>.gguf "
        "and their expectations as OUTPUT_DIR/manifest.json.\n",
        argv[0]);
  };
  if (argc == 2 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
    usage(stdout);
    return 0;
  }
  // An option is never taken for a directory (a run with --help once wrote a copy named "--help").
  if (argc != 2 || argv[1][0] == '-') {
    usage(stderr);
    return 3;
  }
  try {
    const fs::path dir = argv[1];
    nlohmann::ordered_json files = nlohmann::ordered_json::array();
    for (const Recipe& recipe : ggufcheck::corpus::recipes()) {
      const std::vector<std::uint8_t> bytes = recipe.build();
      const std::string path = recipe.id + ".gguf";
      if (!ggufcheck::save_file(dir / path, bytes)) {
        std::fprintf(stderr, "cannot write %s\n", (dir / path).c_str());
        return 1;
      }
      nlohmann::ordered_json entry;
      entry["id"] = recipe.id;
      entry["path"] = path;
      entry["group"] = recipe.group();
      if (!recipe.threat().empty()) entry["threat"] = recipe.threat();
      entry["description"] = recipe.description;
      entry["size"] = bytes.size();
      entry["sha256"] = ggufcheck::corpus::sha256_hex(bytes);
      if (recipe.data) entry["data"] = true;
      if (recipe.model) entry["model"] = true;
      if (!recipe.base.empty()) entry["base"] = recipe.base;
      entry["expect"] = expect(recipe);
      if (!recipe.pending.empty()) entry["pending"] = recipe.pending;
      files.push_back(std::move(entry));
    }
    nlohmann::ordered_json manifest;
    manifest["schema_version"] = kSchemaVersion;
    manifest["files"] = std::move(files);
    std::ofstream out(dir / "manifest.json", std::ios::binary | std::ios::trunc);
    out << manifest.dump(2) << '\n';
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", (dir / "manifest.json").c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufcheck_make_corpus: %s\n", e.what());
    return 1;
  }
  return 0;
}
