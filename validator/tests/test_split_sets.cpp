// Split sets (GGUF8001-GGUF8007): the test model written as shards the way gguf-split writes
// them (the first with every model key, each with split.no, split.count and split.tensors.count,
// the tensors dealt out in order) into temporary directories, checked through validate_set and
// through the built CLI, as llama.cpp's model loader reads such a set.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "splits/names.hpp"
#include "splits/shards.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;

namespace ggufcheck::testing {
namespace {

using json = nlohmann::json;

constexpr Profile kProfiles[] = {Profile::Strict, Profile::Spec, Profile::LlamaCpp};

Options options_for(Profile profile) {
  Options options;
  options.profile = profile;
  return options;
}

KeyValue* find_key(Document& doc, std::string_view key) {
  for (KeyValue& kv : doc.metadata) {
    if (kv.key == key) return &kv;
  }
  return nullptr;
}

void set_key(Document& doc, const std::string& key, Value value) {
  if (KeyValue* kv = find_key(doc, key)) {
    kv->value = std::move(value);
  } else {
    doc.metadata.push_back({key, std::move(value), {}});
  }
}

void drop_key(Document& doc, std::string_view key) {
  std::erase_if(doc.metadata, [&](const KeyValue& kv) { return kv.key == key; });
}

// The test model (model_document(): a one-block llama llama.cpp loads) as n shards.
std::vector<Document> shards_of_model(std::size_t n) {
  return model_shards(n);
}

std::string shard_name(const std::string& prefix, std::size_t k, std::size_t n) {
  return detail::shard_path(prefix, static_cast<std::uint32_t>(k + 1),
                            static_cast<std::uint32_t>(n));
}

// Writes the shards as <dir>/<names[k]> (default: model-0000k-of-0000n.gguf); returns the paths.
std::vector<std::string> write_set(const TempDir& dir, const std::vector<Document>& shards,
                                   std::vector<std::string> names = {}) {
  std::vector<std::string> paths;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const std::string name = k < names.size() ? names[k] : shard_name("model", k, shards.size());
    paths.push_back(dir.write(name, write_bytes(shards[k])).string());
  }
  return paths;
}

std::vector<std::string> codes_of(const Report& report) {
  std::vector<std::string> out;
  for (const Finding& f : report.findings) out.push_back(code_string(f.code));
  return out;
}

std::string describe(const std::vector<Report>& reports) {
  std::string out;
  for (const Report& r : reports) {
    out += "\n  " + r.path + ":";
    for (const Finding& f : r.findings) {
      out += "\n    " + code_string(f.code) + " " + std::string(to_string(f.severity)) + " " +
             f.path + ": " + f.message;
    }
  }
  return out;
}

const Finding* finding(const Report& report, Code code) {
  return find(report, code);
}

// --- names ---------------------------------------------------------------------------------------

TEST(SplitNames, ParsedAsLlamaCppDerivesThem) {
  const auto name = detail::parse_shard_name("dir/model-00002-of-00003.gguf");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->prefix, "dir/model");
  EXPECT_EQ(name->number, 2u);
  EXPECT_EQ(name->count, 3u);
  EXPECT_EQ(detail::shard_path(name->prefix, 1, 3), "dir/model-00001-of-00003.gguf");
  // llama_split_prefix wants a prefix of at least a byte: a directory is one.
  EXPECT_FALSE(detail::parse_shard_name("-00001-of-00003.gguf"));
  EXPECT_TRUE(detail::parse_shard_name("dir/-00001-of-00003.gguf"));
  // Numbers llama.cpp never writes: 0, past the count, a count of 0 or above a u16.
  for (const char* bad : {"m-00000-of-00003.gguf", "m-00004-of-00003.gguf", "m-00001-of-00000.gguf",
                          "m-00001-of-65536.gguf", "m-0001-of-00003.gguf", "m-00001-of-00003.GGUF",
                          "m-00001-of-0000x.gguf", "m-00001_of-00003.gguf"}) {
    EXPECT_FALSE(detail::parse_shard_name(bad)) << bad;
  }
  EXPECT_TRUE(detail::parse_shard_name("m-65535-of-65535.gguf"));
  EXPECT_TRUE(detail::names_first_shard("m-00001-of-00004.gguf", 4));
  EXPECT_FALSE(detail::names_first_shard("m-00001-of-00004.gguf", 3));
  EXPECT_FALSE(detail::names_first_shard("m-00002-of-00004.gguf", 4));
}

TEST(SplitNames, InputsGroupedBySetOnceInOrder) {
  const TempDir dir;
  const std::vector<std::string> set = write_set(dir, shards_of_model(3));
  const std::string alone = dir.write("alone.gguf", write_bytes(model_document())).string();
  const std::vector<std::vector<std::string>> groups =
      group_inputs({alone, set[2], set[0], alone, set[1]});
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0], std::vector<std::string>{alone});
  EXPECT_EQ(groups[1], set);  // where its first-named shard is, in the shards' order
  EXPECT_EQ(groups[2], std::vector<std::string>{alone});
  // A shard name none of whose set is there stays a path alone.
  const std::string nowhere = (dir.path() / "gone-00002-of-00009.gguf").string();
  EXPECT_EQ(group_inputs({nowhere}), std::vector<std::vector<std::string>>{{nowhere}});
  // A set of one is a file alone.
  const std::string one = (dir.path() / "one-00001-of-00001.gguf").string();
  EXPECT_EQ(group_inputs({one}), std::vector<std::vector<std::string>>{{one}});
}

// --- the set as a whole ------------------------------------------------------------------------

TEST(SplitSet, GoodSetPassesCleanInEveryProfile) {
  const TempDir dir;
  const std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  for (const Profile profile : kProfiles) {
    SCOPED_TRACE(std::string(to_string(profile)));
    const SetReports set = validate_set(paths, options_for(profile));
    ASSERT_EQ(set.reports.size(), 3u) << describe(set.reports);
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(set.reports[k].path, paths[k]);
      // The later shards hold no general.architecture, as gguf-split writes them: no GGUF5006.
      EXPECT_TRUE(set.reports[k].findings.empty()) << describe(set.reports);
    }
    EXPECT_FALSE(set.lone_shard);
  }
  // The later shard alone, without the set, is no model (no general.architecture).
  EXPECT_TRUE(has(validate_file(paths[1], Options{}), Code::MissingArchitecture));
}

// Found by fuzz_sets: under a tight findings limit (--limit findings=N), a later shard's model
// findings (no general.architecture: they do not apply to a later shard) were kept up to the
// limit, the rest dropped but counted, and then the kept ones removed: a sound later shard failed
// with errors it did not show. A later shard's model checks are now not reported at all.
TEST(SplitSet, GoodSetPassesUnderATightFindingsLimit) {
  const TempDir dir;
  const std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  for (const Profile profile : kProfiles) {
    SCOPED_TRACE(std::string(to_string(profile)));
    Options options = options_for(profile);
    options.limits.max_findings = 1;
    const SetReports set = validate_set(paths, options);
    ASSERT_EQ(set.reports.size(), 3u) << describe(set.reports);
    for (const Report& report : set.reports) {
      EXPECT_TRUE(report.passed()) << report.path << describe(set.reports);
      EXPECT_EQ(report.findings_dropped, 0u) << report.path;
      EXPECT_EQ(report.errors + report.warnings + report.notes, report.findings.size());
    }
  }
}

TEST(SplitSet, NamingAnyShardChecksTheWholeSet) {
  const TempDir dir;
  const std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  for (const std::string& named : paths) {
    const SetReports set = validate_set({named}, Options{});
    ASSERT_EQ(set.reports.size(), 3u) << named;
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(set.reports[k].path, paths[k]);
      EXPECT_TRUE(set.reports[k].passed()) << describe(set.reports);
    }
  }
}

TEST(SplitSet, MissingMiddleShardIsInTheFirstShardsReport) {
  const TempDir dir;
  std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  fs::remove(paths[1]);
  for (const Profile profile : kProfiles) {
    const SetReports set = validate_set({paths[0]}, options_for(profile));
    ASSERT_EQ(set.reports.size(), 2u) << describe(set.reports);
    EXPECT_EQ(codes_of(set.reports[0]), std::vector<std::string>{"GGUF8001"});
    EXPECT_TRUE(set.reports[1].findings.empty()) << describe(set.reports);
    const Finding* f = finding(set.reports[0], Code::SplitShardMissing);
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->message.find(paths[1]), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("shard 2 of 3"), std::string::npos) << f->message;
    EXPECT_EQ(f->severity, profile == Profile::Spec ? Severity::Warning : Severity::Error);
  }
}

TEST(SplitSet, MissingShardsInARunAreOneFinding) {
  const TempDir dir;
  std::vector<std::string> paths = write_set(dir, shards_of_model(6));
  for (std::size_t k = 1; k <= 3; ++k) fs::remove(paths[k]);
  const SetReports set = validate_set({paths[5]}, Options{});
  ASSERT_EQ(set.reports.size(), 3u);
  EXPECT_EQ(codes_of(set.reports[0]), std::vector<std::string>{"GGUF8001"})
      << describe(set.reports);
  EXPECT_NE(set.reports[0].findings[0].message.find("shards 2 to 4 of 6"), std::string::npos)
      << set.reports[0].findings[0].message;
}

TEST(SplitSet, MissingFirstShardIsInTheNextShardsReport) {
  const TempDir dir;
  std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  fs::remove(paths[0]);
  const SetReports set = validate_set({paths[2]}, options_for(Profile::LlamaCpp));
  ASSERT_EQ(set.reports.size(), 2u);
  EXPECT_EQ(set.reports[0].path, paths[1]);
  EXPECT_EQ(codes_of(set.reports[0]), std::vector<std::string>{"GGUF8001"})
      << describe(set.reports);
  EXPECT_NE(set.reports[0].findings[0].message.find("first shard"), std::string::npos);
  EXPECT_FALSE(set.reports[0].passed());
}

TEST(SplitSet, MisnumberedShardIsReportedAtItsSplitNo) {
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(3);
  set_key(shards[1], "split.no", Value::u16(2));
  const std::vector<std::string> paths = write_set(dir, shards);
  const Written written = write(shards[1]);
  for (const Profile profile : kProfiles) {
    const SetReports set = validate_set(paths, options_for(profile));
    ASSERT_EQ(set.reports.size(), 3u);
    EXPECT_TRUE(set.reports[0].findings.empty()) << describe(set.reports);
    ASSERT_EQ(codes_of(set.reports[1]), std::vector<std::string>{"GGUF8004"})
        << describe(set.reports);
    const Finding& f = set.reports[1].findings[0];
    EXPECT_EQ(f.offset, written.layout.pairs[0].value_offset);
    EXPECT_EQ(f.length, 2u);
    EXPECT_EQ(f.path, "kv[0] \"split.no\"");
    EXPECT_NE(f.message.find("split.no is 2 but this is shard 2 of 3"), std::string::npos)
        << f.message;
  }
}

TEST(SplitSet, SwappedShardsAreBothMisnumbered) {
  const TempDir dir;
  const std::vector<Document> shards = shards_of_model(3);
  const std::vector<std::string> paths =
      write_set(dir, {shards[0], shards[2], shards[1]},
                {shard_name("model", 0, 3), shard_name("model", 1, 3), shard_name("model", 2, 3)});
  const SetReports set = validate_set({paths[0]}, options_for(Profile::LlamaCpp));
  ASSERT_EQ(set.reports.size(), 3u);
  EXPECT_EQ(codes_of(set.reports[1]), std::vector<std::string>{"GGUF8004"})
      << describe(set.reports);
  EXPECT_EQ(codes_of(set.reports[2]), std::vector<std::string>{"GGUF8004"})
      << describe(set.reports);
}

TEST(SplitSet, FirstShardThatSaysItIsNotTheFirstIsMisnumbered) {
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(2);
  set_key(shards[0], "split.no", Value::u16(1));
  const SetReports set = validate_set(write_set(dir, shards), options_for(Profile::LlamaCpp));
  ASSERT_EQ(set.reports.size(), 2u);
  EXPECT_EQ(codes_of(set.reports[0]), std::vector<std::string>{"GGUF8004"})
      << describe(set.reports);
}

TEST(SplitSet, DuplicateTensorAcrossShardsIsInTheLaterShardsReport) {
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(3);
  shards[2].tensors.push_back(shards[0].tensors[0]);
  set_key(shards[0], "split.tensors.count",
          Value::i32(static_cast<std::int32_t>(model_document().tensors.size())));
  const std::vector<std::string> paths = write_set(dir, shards);
  const Written third = write(shards[2]);
  for (const Profile profile : kProfiles) {
    const SetReports set = validate_set(paths, options_for(profile));
    ASSERT_EQ(set.reports.size(), 3u);
    EXPECT_TRUE(set.reports[0].findings.empty()) << describe(set.reports);
    ASSERT_EQ(codes_of(set.reports[2]), std::vector<std::string>{"GGUF8005"})
        << describe(set.reports);
    const Finding& f = set.reports[2].findings[0];
    const std::size_t i = shards[2].tensors.size() - 1;
    EXPECT_EQ(f.offset, third.layout.tensors[i].name_offset);
    EXPECT_EQ(f.path, "tensor[" + std::to_string(i) + "] \"" + shards[0].tensors[0].name + "\"");
    EXPECT_NE(f.message.find(paths[0]), std::string::npos) << f.message;
  }
}

TEST(SplitSet, TensorNamesAreComparedAsCStrings) {
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(2);
  // "output_norm.weight\0x": llama.cpp's loader knows tensors by their C-string names.
  Tensor shadow = shards[0].tensors[0];
  shadow.name += std::string("\0x", 2);
  shards[1].tensors.push_back(shadow);
  const SetReports set = validate_set(write_set(dir, shards), options_for(Profile::LlamaCpp));
  ASSERT_EQ(set.reports.size(), 2u);
  EXPECT_TRUE(has(set.reports[1], Code::SplitDuplicateTensor)) << describe(set.reports);
}

TEST(SplitSet, WrongTensorTotalIsAtTheFirstShardsCount) {
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(3);
  const auto total = static_cast<std::int32_t>(model_document().tensors.size());
  set_key(shards[0], "split.tensors.count", Value::i32(total + 1));
  const std::vector<std::string> paths = write_set(dir, shards);
  const Written first = write(shards[0]);
  for (const Profile profile : kProfiles) {
    const SetReports set = validate_set(paths, options_for(profile));
    ASSERT_EQ(set.reports.size(), 3u);
    ASSERT_EQ(codes_of(set.reports[0]), std::vector<std::string>{"GGUF8006"})
        << describe(set.reports);
    const Finding& f = set.reports[0].findings[0];
    EXPECT_EQ(f.offset, first.layout.pairs.back().value_offset);
    EXPECT_EQ(f.length, 4u);
    EXPECT_NE(f.message.find(std::to_string(total + 1)), std::string::npos) << f.message;
    // The later shards' own split.tensors.count now differ from the first's: the convention's.
    const bool convention = profile != Profile::LlamaCpp;
    EXPECT_EQ(has(set.reports[1], Code::SplitTensorCountMismatch), convention)
        << describe(set.reports);
  }
}

TEST(SplitSet, U32SplitNoInALaterShardIsWhatLlamaCppAbortsOn) {
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(3);
  set_key(shards[1], "split.no", Value::u32(1));
  const std::vector<std::string> paths = write_set(dir, shards);
  const Written second = write(shards[1]);
  for (const Profile profile : kProfiles) {
    const SetReports set = validate_set(paths, options_for(profile));
    ASSERT_EQ(set.reports.size(), 3u);
    const Finding* f = finding(set.reports[1], Code::SplitKeyWrongType);
    ASSERT_NE(f, nullptr) << describe(set.reports);
    EXPECT_EQ(f->offset, second.layout.pairs[0].type_offset);
    EXPECT_EQ(f->length, 4u);
    EXPECT_NE(f->message.find("aborts"), std::string::npos) << f->message;
    EXPECT_EQ(f->severity, profile == Profile::Spec ? Severity::Warning : Severity::Error);
  }
}

TEST(SplitSet, ArrayOfOneU16SplitNoIsReadByLlamaCpp) {
  // gguf_get_val_u16 checks the element type and count, not that the value is a scalar.
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(2);
  set_key(shards[1], "split.no", Value::array(ValueType::Uint16, {Value::u16(1)}));
  const std::vector<std::string> paths = write_set(dir, shards);
  EXPECT_TRUE(validate_set(paths, options_for(Profile::LlamaCpp)).reports[1].passed());
  const SetReports strict = validate_set(paths, options_for(Profile::Strict));
  EXPECT_TRUE(has(strict.reports[1], Code::SplitKeyWrongType)) << describe(strict.reports);
  // Misnumbered all the same when its element is not the shard's index.
  set_key(shards[1], "split.no", Value::array(ValueType::Uint16, {Value::u16(0)}));
  const SetReports wrong = validate_set(write_set(dir, shards), options_for(Profile::LlamaCpp));
  EXPECT_TRUE(has(wrong.reports[1], Code::SplitShardMisnumbered)) << describe(wrong.reports);
  EXPECT_FALSE(wrong.reports[1].passed());
}

// A change to one shard's split keys and the code it must bring.
struct KeyCase {
  const char* label;
  void (*edit)(Document&);
  Code code;
};

TEST(SplitSet, LaterShardsKeysLlamaCppDoesNotReadAreTheConventions) {
  const KeyCase cases[] = {
      {"no split.count", [](Document& d) { drop_key(d, "split.count"); }, Code::SplitKeyMissing},
      {"no split.tensors.count", [](Document& d) { drop_key(d, "split.tensors.count"); },
       Code::SplitKeyMissing},
      {"u32 split.count", [](Document& d) { set_key(d, "split.count", Value::u32(3)); },
       Code::SplitKeyWrongType},
      {"other split.count", [](Document& d) { set_key(d, "split.count", Value::u16(4)); },
       Code::SplitShardMisnumbered},
      {"other split.tensors.count",
       [](Document& d) { set_key(d, "split.tensors.count", Value::i32(1)); },
       Code::SplitTensorCountMismatch},
  };
  for (const KeyCase& c : cases) {
    SCOPED_TRACE(c.label);
    const TempDir dir;
    std::vector<Document> shards = shards_of_model(3);
    c.edit(shards[2]);
    const std::vector<std::string> paths = write_set(dir, shards);
    const SetReports llama = validate_set(paths, options_for(Profile::LlamaCpp));
    ASSERT_EQ(llama.reports.size(), 3u);
    EXPECT_FALSE(has(llama.reports[2], c.code)) << describe(llama.reports);
    EXPECT_TRUE(llama.reports[2].passed()) << describe(llama.reports);
    const SetReports strict = validate_set(paths, options_for(Profile::Strict));
    EXPECT_TRUE(has(strict.reports[2], c.code)) << describe(strict.reports);
    EXPECT_FALSE(strict.reports[2].passed());
    const SetReports spec = validate_set(paths, options_for(Profile::Spec));
    const Finding* f = finding(spec.reports[2], c.code);
    ASSERT_NE(f, nullptr) << describe(spec.reports);
    EXPECT_EQ(f->severity, Severity::Warning);
  }
}

TEST(SplitSet, FirstShardsSplitKeysAreWhatLlamaCppRefuses) {
  const KeyCase cases[] = {
      {"no split.no", [](Document& d) { drop_key(d, "split.no"); }, Code::SplitKeyMissing},
      {"no split.tensors.count", [](Document& d) { drop_key(d, "split.tensors.count"); },
       Code::SplitKeyMissing},
      {"u8 split.no", [](Document& d) { set_key(d, "split.no", Value::u8(0)); },
       Code::SplitKeyWrongType},
      {"u32 split.count", [](Document& d) { set_key(d, "split.count", Value::u32(2)); },
       Code::SplitKeyWrongType},
      {"u32 split.tensors.count",
       [](Document& d) { set_key(d, "split.tensors.count", Value::u32(13)); },
       Code::SplitKeyWrongType},
  };
  for (const KeyCase& c : cases) {
    SCOPED_TRACE(c.label);
    const TempDir dir;
    std::vector<Document> shards = shards_of_model(2);
    c.edit(shards[0]);
    const SetReports set = validate_set(write_set(dir, shards), options_for(Profile::LlamaCpp));
    ASSERT_EQ(set.reports.size(), 2u);
    EXPECT_TRUE(has(set.reports[0], c.code)) << describe(set.reports);
    EXPECT_FALSE(set.reports[0].passed());
  }
}

TEST(SplitSet, FirstShardWithoutSplitCountIsLoadedAlone) {
  // llama.cpp reads a first shard without split.count (or with 1) as a whole model: the set's
  // other shards are never read, and its tensors are missing.
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(2);
  drop_key(shards[0], "split.count");
  const std::vector<std::string> paths = write_set(dir, shards);
  const SetReports llama = validate_set(paths, options_for(Profile::LlamaCpp));
  ASSERT_EQ(llama.reports.size(), 2u);
  EXPECT_FALSE(has(llama.reports[0], Code::SplitKeyMissing)) << describe(llama.reports);
  EXPECT_TRUE(has(llama.reports[0], Code::MissingTensor)) << describe(llama.reports);
  const SetReports strict = validate_set(paths, options_for(Profile::Strict));
  EXPECT_TRUE(has(strict.reports[0], Code::SplitKeyMissing)) << describe(strict.reports);
}

TEST(SplitSet, SplitCountOtherThanTheNamesIsTheFileName) {
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(3);
  for (Document& d : shards) set_key(d, "split.count", Value::u16(4));
  const SetReports set = validate_set(write_set(dir, shards), options_for(Profile::LlamaCpp));
  ASSERT_EQ(set.reports.size(), 3u);
  EXPECT_EQ(codes_of(set.reports[0]), std::vector<std::string>{"GGUF8007"})
      << describe(set.reports);
  EXPECT_NE(set.reports[0].findings[0].message.find("-00001-of-00004.gguf"), std::string::npos);
}

TEST(SplitSet, LaterShardsModelKeysAreNotTheSets) {
  // A later shard with model keys of its own: llama.cpp never reads them.
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(2);
  shards[1].metadata.insert(shards[1].metadata.begin(),
                            {"general.architecture", Value::string("lama"), {}});
  const SetReports set = validate_set(write_set(dir, shards), options_for(Profile::LlamaCpp));
  ASSERT_EQ(set.reports.size(), 2u);
  EXPECT_TRUE(set.reports[1].findings.empty()) << describe(set.reports);
  // Alone, the same file is an unknown architecture.
  EXPECT_TRUE(has(validate_file(set.reports[1].path, options_for(Profile::LlamaCpp)),
                  Code::UnknownArchitecture));
}

// --- files alone ---------------------------------------------------------------------------------

TEST(SplitAlone, FileWithoutSplitKeysOrOfOneIsNoSet) {
  const TempDir dir;
  Document one = model_document();
  one.metadata.push_back({"split.no", Value::u16(0), {}});
  one.metadata.push_back({"split.count", Value::u16(1), {}});
  for (const std::string name : {"model.gguf", "model-00001-of-00001.gguf"}) {
    const std::string path = dir.write(name, write_bytes(one)).string();
    for (const Profile profile : kProfiles) {
      const SetReports set = validate_set({path}, options_for(profile));
      ASSERT_EQ(set.reports.size(), 1u);
      EXPECT_TRUE(set.reports[0].findings.empty()) << describe(set.reports);
      EXPECT_FALSE(set.lone_shard);
    }
  }
}

TEST(SplitAlone, U32SplitCountIsRefusedEvenAlone) {
  const TempDir dir;
  Document doc = model_document();
  doc.metadata.push_back({"split.count", Value::u32(1), {}});
  const std::string path = dir.write("model.gguf", write_bytes(doc)).string();
  const SetReports set = validate_set({path}, options_for(Profile::LlamaCpp));
  ASSERT_EQ(set.reports.size(), 1u);
  EXPECT_TRUE(has(set.reports[0], Code::SplitKeyWrongType)) << describe(set.reports);
  EXPECT_FALSE(set.reports[0].passed());
}

TEST(SplitAlone, FirstShardNamedOutsideThePatternCannotBeFound) {
  const TempDir dir;
  const std::vector<Document> shards = shards_of_model(2);
  const std::string path = dir.write("model.gguf", write_bytes(shards[0])).string();
  const SetReports set = validate_set({path}, options_for(Profile::LlamaCpp));
  ASSERT_EQ(set.reports.size(), 1u);
  EXPECT_EQ(codes_of(set.reports[0]), std::vector<std::string>{"GGUF8007"})
      << describe(set.reports);
  EXPECT_TRUE(set.lone_shard);
}

// --- shards given as a list (llama_model_load_from_splits) -------------------------------------

TEST(SplitListed, NamesOutsideThePatternInTheOrderGiven) {
  const TempDir dir;
  const std::vector<std::string> paths =
      write_set(dir, shards_of_model(3), {"a.gguf", "b.gguf", "c.gguf"});
  // llama_model_load_from_splits loads them: the llama.cpp profile passes.
  const SetReports llama = validate_set(paths, options_for(Profile::LlamaCpp));
  ASSERT_EQ(llama.reports.size(), 3u);
  for (const Report& r : llama.reports) EXPECT_TRUE(r.findings.empty()) << describe(llama.reports);
  // From one path llama.cpp cannot find them: strict and spec say so (GGUF8007).
  const SetReports strict = validate_set(paths, options_for(Profile::Strict));
  EXPECT_EQ(codes_of(strict.reports[0]), std::vector<std::string>{"GGUF8007"})
      << describe(strict.reports);
  // The order given is the shards' order.
  const SetReports swapped =
      validate_set({paths[0], paths[2], paths[1]}, options_for(Profile::LlamaCpp));
  ASSERT_EQ(swapped.reports.size(), 3u);
  EXPECT_EQ(codes_of(swapped.reports[1]), std::vector<std::string>{"GGUF8004"})
      << describe(swapped.reports);
  // Fewer than split.count: the missing shards, in the first one's report.
  const SetReports short_list = validate_set({paths[0], paths[1]}, options_for(Profile::LlamaCpp));
  EXPECT_EQ(codes_of(short_list.reports[0]), std::vector<std::string>{"GGUF8001"})
      << describe(short_list.reports);
}

// --- memory
// ----------------------------------------------------------------------------------------

TEST(SplitMemory, ALaterShardKeepsOnlyItsTensorInfos) {
  // A later shard with 32 MiB of metadata before its tensor infos: what the set keeps of it is
  // its tensor infos, at their file offsets, in memory of which only their pages are resident.
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(2);
  shards[1].metadata.push_back({"filler", Value::string(std::string(32u << 20, 'x')), {}});
  const std::string path = dir.write("big.gguf", write_bytes(shards[1])).string();
  const Written written = write(shards[1]);
  detail::SetShard shard;
  shard.path = path;
  detail::visit_shard(shard, false, Options{}, {}, [&](detail::FileIndex* index) {
    ASSERT_NE(index, nullptr);
    shard.skeleton = detail::TensorSkeleton::of(*index);
  });
  const detail::FileIndex& kept = shard.skeleton.index();
  ASSERT_EQ(kept.tensors.size(), shards[1].tensors.size());
  for (std::size_t i = 0; i < kept.tensors.size(); ++i) {
    EXPECT_EQ(kept.name(i), shards[1].tensors[i].name);
    EXPECT_EQ(kept.tensors[i].name_offset, written.layout.tensors[i].name_offset);
    EXPECT_EQ(kept.dims(i)[0], shards[1].tensors[i].dims[0]);
  }
  std::string_view all;
  ASSERT_TRUE(kept.input.view(0, kept.input.size(), all));
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t pages = (all.size() + page - 1) / page;
  std::vector<unsigned char> resident(pages);
  ASSERT_EQ(::mincore(const_cast<char*>(all.data()), all.size(), resident.data()), 0);
  const auto in_core =
      std::count_if(resident.begin(), resident.end(), [](unsigned char c) { return (c & 1) != 0; });
  EXPECT_LE(in_core, 4) << "of " << pages << " pages";
}

// --- the command line ----------------------------------------------------------------------------

json report_json(const CliRun& run) {
  return json::parse(run.out);
}

std::vector<std::string> reported_paths(const json& doc) {
  std::vector<std::string> out;
  for (const json& file : doc["files"]) out.push_back(file["path"]);
  return out;
}

TEST(SplitCli, NamingShardTwoChecksTheSet) {
  const TempDir dir;
  const std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  const CliRun run = run_cli({"--format", "json", paths[1]});
  EXPECT_EQ(run.status, 0) << run.out;
  EXPECT_EQ(reported_paths(report_json(run)), paths);
}

TEST(SplitCli, ShardsGivenTogetherOrFoundInADirectoryAreCheckedOnce) {
  const TempDir dir;
  const std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  const std::string other = dir.write("sub/other.gguf", write_bytes(model_document())).string();
  const CliRun given = run_cli({"--format", "json", paths[2], paths[0], paths[1], paths[0]});
  EXPECT_EQ(given.status, 0) << given.out;
  EXPECT_EQ(reported_paths(report_json(given)), paths);
  const CliRun found = run_cli({"--format", "json", dir.path().string()});
  EXPECT_EQ(found.status, 0) << found.out;
  std::vector<std::string> expected = paths;
  expected.push_back(other);
  EXPECT_EQ(reported_paths(report_json(found)), expected);
  const CliRun text = run_cli({dir.path().string()});
  EXPECT_NE(text.out.find("4 files: 4 passed, 0 failed, 0 unreadable"), std::string::npos)
      << text.out;
}

TEST(SplitCli, ExitStatusOfAFaultySetPerProfile) {
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(3);
  set_key(shards[1], "split.no", Value::u32(1));  // llama.cpp aborts on it
  const std::vector<std::string> paths = write_set(dir, shards);
  EXPECT_EQ(run_cli({"--quiet", "--profile", "llama.cpp", paths[0]}).status, 1);
  EXPECT_EQ(run_cli({"--quiet", "--profile", "strict", paths[0]}).status, 1);
  // spec: warnings (GGUF8003, GGUF5008 is an error there).
  fs::remove(paths[1]);
  const CliRun missing = run_cli({"--format", "json", "--profile", "spec", paths[0]});
  EXPECT_EQ(missing.status, 0) << missing.out;  // GGUF8001 is a warning in spec
  const json doc = report_json(missing);
  ASSERT_EQ(doc["files"].size(), 2u);
  EXPECT_EQ(doc["files"][0]["findings"][0]["code"], "GGUF8001") << missing.out;
}

TEST(SplitCli, NamesOutsideThePatternGivenTogetherAreOneList) {
  const TempDir dir;
  const std::vector<std::string> paths =
      write_set(dir, shards_of_model(3), {"c.gguf", "a.gguf", "b.gguf"});
  // In the order given, as llama_model_load_from_splits takes them: it loads them.
  EXPECT_EQ(run_cli({"--quiet", "--profile", "llama.cpp", paths[0], paths[1], paths[2]}).status, 0);
  // In another order, shard 1 is not the first file: misnumbered.
  const CliRun swapped = run_cli({"--profile", "llama.cpp", paths[1], paths[0], paths[2]});
  EXPECT_EQ(swapped.status, 1) << swapped.out;
  EXPECT_NE(swapped.out.find("GGUF8004"), std::string::npos) << swapped.out;
  // One alone cannot be loaded: llama.cpp derives the others' names from it.
  const CliRun alone = run_cli({"--profile", "llama.cpp", paths[0]});
  EXPECT_EQ(alone.status, 1) << alone.out;
  EXPECT_NE(alone.out.find("GGUF8007"), std::string::npos) << alone.out;
  // strict: the names are the convention's finding.
  EXPECT_EQ(run_cli({"--quiet", paths[0], paths[1], paths[2]}).status, 1);
}

TEST(SplitCli, ALaterShardOfAListIsOneWhateverItsSplitCount) {
  // llama.cpp never reads a later shard's split.count: one of another type still joins the list.
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(2);
  set_key(shards[1], "split.count", Value::u8(2));
  const std::vector<std::string> paths = write_set(dir, shards, {"a.gguf", "b.gguf"});
  const CliRun listed = run_cli({"--profile", "llama.cpp", "--format", "json", paths[0], paths[1]});
  EXPECT_EQ(listed.status, 0) << listed.out;
  EXPECT_EQ(reported_paths(report_json(listed)), paths);
  // Alone, it is a file whose split.count llama.cpp refuses.
  EXPECT_EQ(run_cli({"--quiet", "--profile", "llama.cpp", paths[1]}).status, 1);
  // A whole model beside them is a file alone, not a shard of the list.
  const std::string whole = dir.write("whole.gguf", write_bytes(model_document())).string();
  const CliRun beside =
      run_cli({"--profile", "llama.cpp", "--format", "json", paths[0], whole, paths[1]});
  EXPECT_EQ(beside.status, 0) << beside.out;
  EXPECT_EQ(reported_paths(report_json(beside)),
            (std::vector<std::string>{paths[0], paths[1], whole}));
}

TEST(SplitCli, WithoutModelChecksEveryFileIsAlone) {
  const TempDir dir;
  const std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  const CliRun run = run_cli({"--no-model-checks", "--format", "json", paths[1]});
  const json doc = report_json(run);
  ASSERT_EQ(doc["files"].size(), 1u) << run.out;
  EXPECT_EQ(doc["files"][0]["path"], paths[1]);
}

// A later shard holds only the split keys (gguf-split's way): alone, without the model checks,
// it is judged as that shard, so it lacks neither general.architecture (GGUF5006) nor
// general.quantization_version (GGUF5007, its tensors are Q8_0), in any profile.
TEST(SplitCli, WithoutModelChecksALaterShardNeedsNoArchitecture) {
  const TempDir dir;
  const std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  for (const char* profile : {"strict", "spec", "llama.cpp"}) {
    for (std::size_t k = 0; k < paths.size(); ++k) {
      const CliRun run =
          run_cli({"--no-model-checks", "--profile", profile, "--format", "json", paths[k]});
      EXPECT_EQ(run.status, 0) << profile << " " << paths[k] << "\n" << run.out;
      const json doc = report_json(run);
      ASSERT_EQ(doc["files"].size(), 1u) << run.out;
      for (const json& f : doc["files"][0]["findings"]) {
        EXPECT_NE(f["code"], "GGUF5006") << profile << " " << paths[k] << "\n" << run.out;
        EXPECT_NE(f["code"], "GGUF5007") << profile << " " << paths[k] << "\n" << run.out;
      }
    }
  }
  // The same through the library, which the Python and C interfaces call.
  Options options;
  options.model_checks = false;
  EXPECT_EQ(find(validate_file(paths[1], options), Code::MissingArchitecture), nullptr);
  // With the model checks on, the set judges it: clean as a shard of its set.
  EXPECT_EQ(run_cli({"--quiet", paths[1]}).status, 0);
}

// What is not a later shard still needs general.architecture without the model checks: a first
// shard (split.no 0), a split.no of another type than gguf-split's uint16, a file with none.
TEST(SplitCli, WithoutModelChecksOnlyALaterShardIsExcused) {
  const TempDir dir;
  std::vector<Document> shards = shards_of_model(2);
  drop_key(shards[0], "general.architecture");
  Document u32_no = shards[1];
  set_key(u32_no, "split.no", Value::u32(1));
  Document none = shards[1];
  drop_key(none, "split.no");
  const std::vector<std::string> paths =
      write_set(dir, {shards[0], u32_no, none}, {"first.gguf", "u32.gguf", "none.gguf"});
  Options options;
  options.model_checks = false;
  for (const std::string& path : paths) {
    EXPECT_NE(find(validate_file(path, options), Code::MissingArchitecture), nullptr) << path;
  }
}

TEST(SplitCli, AFifoNamedAsAShardIsReportedNotOpened) {
  const TempDir dir;
  std::vector<std::string> paths = write_set(dir, shards_of_model(3));
  fs::remove(paths[1]);
  ASSERT_EQ(::mkfifo(paths[1].c_str(), 0600), 0);
  const CliRun run = run_cli({"--format", "json", dir.path().string()});
  EXPECT_EQ(run.status, 2) << run.out;
  const json doc = report_json(run);
  EXPECT_EQ(reported_paths(doc), paths);  // the FIFO once, as the set's shard
  EXPECT_EQ(doc["files"][1]["findings"][0]["code"], "GGUF0001");
}

}  // namespace
}  // namespace ggufcheck::testing
