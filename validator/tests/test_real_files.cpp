// Real files written by llama.cpp's converter must pass every profile with no noise.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

std::vector<std::filesystem::path> real_files() {
  std::vector<std::filesystem::path> files;
  const auto dir = real_gguf_dir();
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".gguf") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(RealFiles, AllSixArePresent) {
  EXPECT_EQ(real_files().size(), 6U);
}

// No finding but the note that names a chat template of the pinned llama.cpp (GGUF9015): the
// phi-3 vocabulary's is one.
TEST(RealFiles, PassStrictWithNoFindingAtAll) {
  for (const auto& path : real_files()) {
    const Report report = validate_file(path.string(), Options{});
    const bool templated = path.filename() == "ggml-vocab-phi-3.gguf";
    EXPECT_EQ(report.findings.size(), templated ? 1U : 0U) << path;
    for (const Finding& f : report.findings) {
      if (templated && f.code == Code::KnownTemplate && f.severity == Severity::Note) continue;
      ADD_FAILURE() << path << ": " << code_string(f.code) << " " << f.path << ": " << f.message;
    }
    ASSERT_TRUE(report.facts.version.has_value());
    EXPECT_EQ(*report.facts.version, 3U);
    EXPECT_EQ(report.facts.tensor_count, 0U);
    EXPECT_GE(report.facts.kv_read, 16U) << path;
  }
}

TEST(RealFiles, PassSpecAndLlamaCppWithoutErrorsOrWarnings) {
  for (Profile profile : {Profile::Spec, Profile::LlamaCpp}) {
    for (const auto& path : real_files()) {
      Options options;
      options.profile = profile;
      const Report report = validate_file(path.string(), options);
      EXPECT_EQ(report.errors, 0U) << path << " " << to_string(profile);
      EXPECT_EQ(report.warnings, 0U) << path << " " << to_string(profile);
    }
  }
}

// The memory-mapped path and the buffer path see the same bytes and must agree.
TEST(RealFiles, BufferAndMappedFileGiveTheSameReport) {
  for (const auto& path : real_files()) {
    const ByteVector bytes = read_file(path);
    const Report mapped = validate_file(path.string(), Options{});
    const Report buffered = check(bytes);
    EXPECT_EQ(mapped.facts.kv_read, buffered.facts.kv_read);
    EXPECT_EQ(mapped.facts.file_size, bytes.size());
    EXPECT_EQ(codes(mapped), codes(buffered));
  }
}

}  // namespace
}  // namespace ggufcheck::testing
