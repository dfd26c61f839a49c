// The committed corpus against its manifest (corpus/manifest.json): every file's size and
// sha256, the codes and verdict of every file under every profile, the coverage of the catalogue
// and of the threat rows of docs/threat-model.md, the valid/ files, the memory hostile files may
// cost, and the writer-diagnosis notes on files that must not get them (on valid/ and on the
// real files of validator/tests/data/real-gguf/).
//
// This program includes the counting global allocator (support/counting_allocator.hpp; the .cpp
// is compiled into it) to measure what validate() allocates.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "counting_allocator.hpp"
#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/validate.hpp"
#include "sha256.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

namespace fs = std::filesystem;

const fs::path& corpus_dir() {
  static const fs::path dir = std::getenv("GGUFCHECK_CORPUS") != nullptr
                                  ? fs::path(std::getenv("GGUFCHECK_CORPUS"))
                                  : fs::path(GGUFCHECK_CORPUS_DIR);
  return dir;
}

const nlohmann::json& manifest() {
  static const nlohmann::json m = [] {
    std::ifstream in(corpus_dir() / "manifest.json");
    if (!in) return nlohmann::json::object();
    return nlohmann::json::parse(in);
  }();
  return m;
}

const nlohmann::json& files() {
  static const nlohmann::json empty = nlohmann::json::array();
  const nlohmann::json& m = manifest();
  return m.contains("files") ? m["files"] : empty;
}

std::string group_of(const nlohmann::json& entry) {
  return entry.at("group").get<std::string>();
}

std::set<std::string> code_set(const Report& report) {
  std::set<std::string> out;
  for (const Finding& f : report.findings) out.insert(code_string(f.code));
  return out;
}

std::string join(const std::set<std::string>& codes) {
  std::string out = "[";
  for (const std::string& c : codes) out += (out.size() > 1 ? ", " : "") + c;
  return out + "]";
}

std::string describe(const Report& report) {
  std::ostringstream out;
  for (const Finding& f : report.findings) {
    out << "\n    " << code_string(f.code) << " " << to_string(f.severity) << " @0x" << std::hex
        << f.offset << std::dec << " " << f.path << ": " << f.message;
  }
  return out.str();
}

// Whether the manifest entry's expectations are those of the data check (check --data).
bool data_checked(const nlohmann::json& entry) {
  return entry.value("data", false);
}

// The file's codes are the model checks' (manifest "model": true); the others are containers.
bool model_checked(const nlohmann::json& entry) {
  return entry.value("model", false);
}

// With the model checks, a file's report as the CLI gives it: with the split set it belongs to
// (validate_set; a file alone is a set of one), the split-set codes' examples in folders.
Report report_in_set(const std::string& path, const Options& options) {
  SetReports set = validate_set({path}, options);
  for (Report& report : set.reports) {
    if (report.path == path) return std::move(report);
  }
  ADD_FAILURE() << path << " has no report of its own in its set";
  return {};
}

// validate_file() (validate_set() with the model checks) results, computed once per file,
// profile, data check and model checks.
const Report& report_of(const std::string& path, Profile profile, bool data = false,
                        bool model = false, const std::string& base = {}) {
  static std::map<std::tuple<std::string, Profile, bool, bool>, Report> cache;
  auto it = cache.find({path, profile, data, model});
  if (it == cache.end()) {
    Options options = container_options();
    options.profile = profile;
    options.data.enabled = data;
    options.data.threads = 1;
    options.model_checks = model;
    if (!base.empty()) options.base_model = (corpus_dir() / base).string();
    it = cache
             .emplace(std::tuple{path, profile, data, model},
                      model ? report_in_set((corpus_dir() / path).string(), options)
                            : validate_file((corpus_dir() / path).string(), options))
             .first;
  }
  return it->second;
}

// The report the manifest's expectations describe.
const Report& report_of(const nlohmann::json& entry, Profile profile) {
  return report_of(entry.at("path").get<std::string>(), profile, data_checked(entry),
                   model_checked(entry), entry.value("base", std::string()));
}

bool is_data_code(const std::string& code) {
  const std::optional<Code> found = find_code(code);
  return found && catalogue_entry(*found).area == Area::TensorData;
}

TEST(Corpus, ManifestIsWellFormed) {
  const nlohmann::json& m = manifest();
  ASSERT_TRUE(m.contains("schema_version")) << "cannot read " << corpus_dir() / "manifest.json";
  EXPECT_EQ(m["schema_version"], 1);
  ASSERT_FALSE(files().empty());
  std::string previous;
  for (const nlohmann::json& entry : files()) {
    const std::string id = entry.at("id");
    EXPECT_LT(previous, id) << "files are not sorted by id";
    previous = id;
    EXPECT_EQ(entry.at("path").get<std::string>(), id + ".gguf");
    EXPECT_EQ(group_of(entry), id.substr(0, id.find('/')));
    EXPECT_FALSE(entry.at("description").get<std::string>().empty()) << id;
    if (entry.contains("data")) {
      EXPECT_EQ(entry["data"], true) << id << ": data is true or absent";
    }
    if (entry.contains("model")) {
      EXPECT_EQ(entry["model"], true) << id << ": model is true or absent";
    }
    if (entry.contains("base")) {
      EXPECT_TRUE(std::filesystem::is_regular_file(corpus_dir() / entry["base"].get<std::string>()))
          << id << ": its base model " << entry["base"] << " is not a corpus file";
    }
    for (const Profile profile : kAllProfiles) {
      const nlohmann::json& e = entry.at("expect").at(std::string(to_string(profile)));
      const std::string verdict = e.at("verdict");
      EXPECT_TRUE(verdict == "pass" || verdict == "fail") << id;
      const std::vector<std::string> codes = e.at("codes");
      EXPECT_TRUE(std::is_sorted(codes.begin(), codes.end())) << id;
      EXPECT_EQ(std::adjacent_find(codes.begin(), codes.end()), codes.end()) << id;
    }
  }
}

TEST(Corpus, FilesMatchSizeAndSha256) {
  std::set<std::string> listed;
  for (const nlohmann::json& entry : files()) {
    const std::string path = entry.at("path");
    listed.insert(path);
    const ByteVector bytes = read_file(corpus_dir() / path);
    EXPECT_EQ(bytes.size(), entry.at("size").get<std::size_t>()) << path;
    EXPECT_EQ(corpus::sha256_hex(bytes), entry.at("sha256").get<std::string>()) << path;
  }
  // No .gguf file in the corpus that the manifest does not list.
  for (const auto& item : fs::recursive_directory_iterator(corpus_dir())) {
    if (item.path().extension() != ".gguf") continue;
    const std::string relative = fs::relative(item.path(), corpus_dir()).generic_string();
    EXPECT_TRUE(listed.count(relative) == 1) << relative << " is not in manifest.json";
  }
}

// The heart of it: what the validator reports is what the manifest declares.
TEST(Corpus, EveryFileGivesItsDeclaredCodesAndVerdict) {
  std::size_t mismatches = 0;
  for (const nlohmann::json& entry : files()) {
    const std::string id = entry.at("id");
    for (const Profile profile : kAllProfiles) {
      const std::string name(to_string(profile));
      const nlohmann::json& e = entry.at("expect").at(name);
      const std::vector<std::string> listed = e.at("codes");
      const std::set<std::string> expected(listed.begin(), listed.end());
      const Report& report = report_of(entry, profile);
      const std::set<std::string> got = code_set(report);
      const std::string verdict = report.passed() ? "pass" : "fail";
      if (got != expected || verdict != e.at("verdict").get<std::string>()) {
        ++mismatches;
        ADD_FAILURE() << id << " [" << name << "]: expected " << e.at("verdict").get<std::string>()
                      << " " << join(expected) << ", got " << verdict << " " << join(got)
                      << describe(report);
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(Corpus, EveryCatalogueCodeIsTriggered) {
  std::set<std::string> seen;
  for (const nlohmann::json& entry : files()) {
    for (const Profile profile : kAllProfiles) {
      for (const std::string& code : code_set(report_of(entry, profile))) {
        seen.insert(code);
      }
    }
  }
  for (const CatalogueEntry& c : catalogue()) {
    if (c.code == Code::UnreadableFile || c.retired()) continue;  // not a file; never reported
    EXPECT_EQ(seen.count(code_string(c.code)), 1u)
        << code_string(c.code) << " " << c.name << " is reported on no corpus file";
  }
}

TEST(Corpus, EveryCatalogueCodeHasItsCodesFile) {
  std::set<std::string> ids;
  for (const nlohmann::json& entry : files()) ids.insert(entry.at("id"));
  for (const CatalogueEntry& c : catalogue()) {
    if (c.code == Code::UnreadableFile || c.retired()) continue;
    const std::string id = "codes/" + code_string(c.code) + "-" + std::string(c.name);
    // A split set's example is a folder of its files: codes/GGUFnnnn-<name>/<file>.
    const auto in_folder = ids.lower_bound(id + "/");
    const bool folder = in_folder != ids.end() && in_folder->rfind(id + "/", 0) == 0;
    EXPECT_TRUE(ids.count(id) == 1 || folder) << id << " is missing";
  }
}

// The tensor-data codes (6xxx) come from the data check only, and only their files need it: a
// file marked "data" is a valid container, so without the check it reports its declared codes
// minus the 6xxx ones (and passes); every 6xxx code has its file so marked. The one other file
// marked "data" is GGUF0003's, whose data the check cannot read: with the check it says so,
// without it the code is gone, and no data was checked either way.
TEST(Corpus, DataCodesComeFromTheDataCheckOnly) {
  std::set<std::string> data_ids;
  for (const nlohmann::json& entry : files()) {
    const std::string id = entry.at("id");
    bool declares_data_code = false;
    bool declares_stage_not_run = false;
    for (const Profile profile : kAllProfiles) {
      const nlohmann::json& e = entry.at("expect").at(std::string(to_string(profile)));
      const std::vector<std::string> listed = e.at("codes");
      std::set<std::string> without;
      for (const std::string& code : listed) {
        if (is_data_code(code)) {
          declares_data_code = true;
        } else if (code == "GGUF0003") {
          declares_stage_not_run = true;
        } else {
          without.insert(code);
        }
      }
      if (!data_checked(entry)) continue;
      if (declares_stage_not_run) {
        const Report& plain = report_of(entry.at("path").get<std::string>(), profile, false);
        EXPECT_EQ(code_set(plain), without) << id << describe(plain);
        EXPECT_FALSE(plain.facts.data_checked.has_value()) << id;
        EXPECT_FALSE(report_of(entry, profile).facts.data_checked.has_value()) << id;
        continue;
      }
      const Report& plain = report_of(entry.at("path").get<std::string>(), profile, false);
      EXPECT_EQ(code_set(plain), without)
          << id << " [" << to_string(profile) << "] without the data check" << describe(plain);
      EXPECT_TRUE(plain.passed()) << id << " [" << to_string(profile) << "]" << describe(plain);
      EXPECT_FALSE(plain.facts.data_checked.has_value()) << id;
      EXPECT_TRUE(report_of(entry, profile).facts.data_checked.has_value()) << id;
    }
    EXPECT_EQ(declares_data_code || declares_stage_not_run, data_checked(entry))
        << id << ": a file declares a 6xxx code (or GGUF0003) exactly when it is marked \"data\"";
    if (data_checked(entry)) data_ids.insert(id);
  }
  for (const CatalogueEntry& c : catalogue()) {
    if (c.area != Area::TensorData) continue;
    const std::string id = "codes/" + code_string(c.code) + "-" + std::string(c.name);
    EXPECT_EQ(data_ids.count(id), 1u) << id << " is not marked \"data\"";
  }
}

// The rows of the project's threat model, docs/threat-model.md: lines "| A1 | ...".
TEST(Corpus, EveryThreatRowHasAFile) {
  const fs::path threat_model = fs::path(GGUFCHECK_SOURCE_DIR) / "docs" / "threat-model.md";
  std::ifstream in(threat_model);
  ASSERT_TRUE(in) << "cannot read " << threat_model;
  const std::regex row(R"(^\| ([A-Z][0-9]+) \|)");
  std::vector<std::string> rows;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) rows.push_back(m[1]);
  }
  EXPECT_GE(rows.size(), 48u) << threat_model << ": rows A1..H3";
  for (const std::string& id : rows) {
    const bool found = std::any_of(files().begin(), files().end(), [&](const nlohmann::json& e) {
      const std::string path = e.at("path");
      return path.rfind("threats/" + id + "-", 0) == 0 && e.value("threat", "") == id;
    });
    EXPECT_TRUE(found) << "no threats/" << id << "-*.gguf for row " << id << " of " << threat_model;
  }
}

// valid/ holds files the spec profile passes. The exceptions are the files the corpus keeps
// there by convention although the spec profile's catalogue severities make them errors: the
// alignments below 8 (GGUF5004: the spec says "a multiple of 8") and the header without
// general.architecture (GGUF5006: the spec requires it). llama.cpp loads those.
TEST(Corpus, ValidFilesPassTheSpecProfile) {
  const std::set<std::string> spec_errors_by_design = {"valid/alignment-1", "valid/alignment-2",
                                                       "valid/alignment-4", "valid/no-metadata"};
  std::size_t count = 0;
  for (const nlohmann::json& entry : files()) {
    if (group_of(entry) != "valid") continue;
    ++count;
    const std::string id = entry.at("id");
    const Profile profile =
        spec_errors_by_design.count(id) != 0 ? Profile::LlamaCpp : Profile::Spec;
    const Report& report = report_of(entry, profile);
    EXPECT_TRUE(report.passed()) << id << " fails " << to_string(profile) << describe(report);
  }
  EXPECT_GE(count, 50u);
}

// What validate() allocates for a hostile or threats file stays under 1 MiB, whatever the file
// claims (the file itself is read before the measurement).
TEST(Corpus, HostileFilesAllocateLittle) {
  constexpr std::size_t kBound = std::size_t{1} << 20;
  for (const nlohmann::json& entry : files()) {
    const std::string group = group_of(entry);
    if (group != "hostile" && group != "threats") continue;
    const ByteVector bytes = read_file(corpus_dir() / entry.at("path").get<std::string>());
    for (const Profile profile : kAllProfiles) {
      Options options = container_options();
      options.profile = profile;
      std::size_t peak = 0;
      {
        const PeakProbe probe;
        const Report report = validate(Bytes(bytes.data(), bytes.size()), options);
        peak = probe.peak();
      }
      EXPECT_LE(peak, kBound) << entry.at("id").get<std::string>() << " [" << to_string(profile)
                              << "]: validate() allocated " << peak << " bytes";
    }
  }
}

bool is_writer_note(Code code) {
  const std::string c = code_string(code);
  return c.rfind("GGUF190", 0) == 0;
}

TEST(Corpus, NoWriterNoteOnValidOrRealFiles) {
  std::vector<fs::path> paths;
  for (const nlohmann::json& entry : files()) {
    if (group_of(entry) == "valid")
      paths.push_back(corpus_dir() / entry.at("path").get<std::string>());
  }
  const fs::path real = real_gguf_dir();
  ASSERT_TRUE(fs::is_directory(real)) << real;
  std::size_t real_files = 0;
  for (const auto& item : fs::directory_iterator(real)) {
    if (item.path().extension() == ".gguf") {
      paths.push_back(item.path());
      ++real_files;
    }
  }
  EXPECT_GT(real_files, 0u);
  std::sort(paths.begin(), paths.end());
  for (const fs::path& path : paths) {
    for (const Profile profile : kAllProfiles) {
      Options options = container_options();
      options.profile = profile;
      const Report report = validate_file(path.string(), options);
      for (const Finding& f : report.findings) {
        EXPECT_FALSE(is_writer_note(f.code)) << path << " [" << to_string(profile)
                                             << "]: " << code_string(f.code) << " " << f.message;
      }
    }
  }
}

// Every writers/ file carries the note of its mistake (one per mistake in the all-four file).
TEST(Corpus, WriterFilesCarryTheirNote) {
  const std::map<std::string, std::string> notes = {{"nul-terminated-strings", "GGUF1901"},
                                                    {"header-alignment-field", "GGUF1902"},
                                                    {"offset-before-type", "GGUF1903"},
                                                    {"v1-field-widths", "GGUF1904"}};
  for (const nlohmann::json& entry : files()) {
    if (group_of(entry) != "writers") continue;
    const std::string id = entry.at("id");
    const std::set<std::string> got = code_set(report_of(entry, Profile::Strict));
    for (const auto& [slug, code] : notes) {
      if (id.find(slug) != std::string::npos || id.find("all-four") != std::string::npos) {
        EXPECT_EQ(got.count(code), 1u) << id << ": no " << code << ", got " << join(got);
      }
    }
  }
}

// Each codes/GGUF1002-bad-magic-<kind> file is a file that is not GGUF: its one finding is
// GGUF1002 and the message says what the file is (a new kind file needs its line here).
TEST(Corpus, NonGgufFilesAreNamedInTheMessage) {
  const std::map<std::string, std::string> kinds = {
      {"bzip2", "this is a bzip2-compressed file"},
      {"git-lfs-pointer", "this is a Git LFS pointer, not the model (the pointer names "},
      {"gzip", "this is a gzip-compressed file (of \"model.gguf\")"},
      {"html-page", "this is an HTML page, not the model (title \"404 Not Found\")"},
      {"json-2-bytes", "(a 2-byte file), expected \"GGUF\": this is a JSON document"},
      {"json-error", "this is a JSON document, not the model (error \"Not Found\")"},
      {"onnx", "this looks like an ONNX model (producer \"pytorch 2.1.0\")"},
      {"pickle", "this looks like a Python pickle (protocol 2)"},
      {"pytorch-legacy", "this is a PyTorch checkpoint (torch.save's legacy format)"},
      {"pytorch-zip",
       "this is a PyTorch checkpoint (torch.save's zip format, first entry "
       "\"archive/data.pkl\")"},
      {"safetensors", "this is a safetensors file"},
      {"tar", "this is a tar archive (first entry \"model.gguf\")"},
      {"xz", "this is an xz-compressed file"},
      {"zip", "this is a zip archive (first entry \"model.gguf\")"},
      {"zstd", "this is a zstd-compressed file"},
  };
  const std::string prefix = "codes/GGUF1002-bad-magic-";
  std::set<std::string> seen;
  for (const nlohmann::json& entry : files()) {
    const std::string id = entry.at("id");
    if (id.rfind(prefix, 0) != 0) continue;
    const std::string kind = id.substr(prefix.size());
    seen.insert(kind);
    const auto want = kinds.find(kind);
    ASSERT_NE(want, kinds.end()) << id << ": add the kind's expected message to this test";
    for (const Profile profile : kAllProfiles) {
      const Report& report = report_of(entry, profile);
      ASSERT_EQ(report.findings.size(), 1u) << id << describe(report);
      const Finding& f = report.findings[0];
      EXPECT_EQ(code_string(f.code), "GGUF1002") << id;
      EXPECT_NE(f.message.find(want->second), std::string::npos) << id << ": " << f.message;
      EXPECT_EQ(f.hint.find("this is not a GGUF file"), std::string::npos) << id << ": " << f.hint;
    }
  }
  for (const auto& [kind, message] : kinds) {
    EXPECT_EQ(seen.count(kind), 1u) << prefix << kind << " is missing";
  }
}

}  // namespace
}  // namespace ggufcheck::testing
