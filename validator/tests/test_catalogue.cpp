// The catalogue is the contract: codes, names and severities as design.md section 3 lists them,
// and the per-code columns (area, breaks structure, explains garbage).
#include <gtest/gtest.h>

#include <set>

#include "ggufcheck/diagnostic.hpp"

namespace ggufcheck {
namespace {

// Lower-case words of letters and digits joined by single dashes.
bool is_kebab_case(std::string_view name) {
  if (name.empty() || name.front() == '-' || name.back() == '-') return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool word_char = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!word_char && !(c == '-' && name[i - 1] != '-')) return false;
  }
  return true;
}

TEST(Catalogue, CodesAndNamesAreUniqueAndWellFormed) {
  std::set<Code> codes;
  std::set<std::string_view> names;
  for (const CatalogueEntry& e : catalogue()) {
    EXPECT_TRUE(codes.insert(e.code).second) << code_string(e.code);
    EXPECT_TRUE(names.insert(e.name).second) << e.name;
    EXPECT_TRUE(is_kebab_case(e.name)) << e.name;
    EXPECT_FALSE(e.meaning.empty()) << e.name;
    EXPECT_NE(e.meaning.back(), '.') << e.name << ": meanings have no trailing period";
  }
  // 116, then GGUF7017-7024 for the kinds of GGUF file (adapters, projectors, matrices)
  EXPECT_EQ(catalogue().size(), 124U);
}

TEST(Catalogue, LookupByCodeNameAndNumber) {
  EXPECT_EQ(find_code("GGUF4001"), Code::MisalignedOffset);
  EXPECT_EQ(find_code("gguf4001"), Code::MisalignedOffset);
  EXPECT_EQ(find_code("misaligned-offset"), Code::MisalignedOffset);
  EXPECT_EQ(find_code("4001"), Code::MisalignedOffset);
  EXPECT_EQ(find_code("GGUF0001"), Code::UnreadableFile);
  EXPECT_FALSE(find_code("GGUF9999").has_value());
  EXPECT_FALSE(find_code("").has_value());
  EXPECT_EQ(code_string(Code::LimitExceeded), "GGUF0002");
  EXPECT_EQ(catalogue_entry(Code::TokenIdOutOfRange).name, "token-id-out-of-range");
}

// A sample of rows of the design's table, copied from it, so an edit of catalogue.def that
// changes the contract fails here.
TEST(Catalogue, SeveritiesFollowTheDesignTable) {
  using enum Severity;
  struct Row {
    const char* code;
    const char* name;
    Severity strict, spec, llama;
  };
  const Row rows[] = {
      {"GGUF1005", "old-version", Note, Warning, Silent},
      {"GGUF1006", "byte-swapped-file", Error, Note, Error},
      {"GGUF2005", "invalid-key-bytes", Error, Error, Warning},
      {"GGUF2006", "unconventional-key", Warning, Error, Silent},
      {"GGUF2010", "nested-array", Error, Silent, Error},
      {"GGUF2012", "non-canonical-bool", Error, Error, Silent},
      {"GGUF2013", "invalid-utf8", Warning, Error, Silent},
      {"GGUF2016", "nul-in-string", Warning, Silent, Silent},
      {"GGUF3003", "empty-tensor-name", Warning, Silent, Silent},
      {"GGUF3008", "zero-dim", Error, Silent, Note},
      {"GGUF3014", "new-tensor-type", Note, Silent, Silent},
      {"GGUF4004", "non-contiguous-layout", Error, Silent, Error},
      {"GGUF4005", "nonzero-padding", Error, Error, Silent},
      {"GGUF4007", "missing-final-padding", Warning, Warning, Silent},
      {"GGUF4008", "trailing-bytes", Warning, Note, Silent},
      {"GGUF5004", "alignment-not-multiple-of-8", Warning, Error, Silent},
      {"GGUF5005", "alignment-too-large", Warning, Silent, Silent},
      {"GGUF5006", "missing-architecture", Error, Error, Warning},
      {"GGUF5007", "missing-quantization-version", Warning, Error, Silent},
      {"GGUF5010", "token-id-out-of-range", Error, Silent, Warning},
  };
  for (const Row& row : rows) {
    const auto code = find_code(row.code);
    ASSERT_TRUE(code.has_value()) << row.code;
    const CatalogueEntry& e = catalogue_entry(*code);
    EXPECT_EQ(e.name, row.name);
    EXPECT_EQ(e.severity(Profile::Strict), row.strict) << row.code;
    EXPECT_EQ(e.severity(Profile::Spec), row.spec) << row.code;
    EXPECT_EQ(e.severity(Profile::LlamaCpp), row.llama) << row.code;
  }
}

TEST(Catalogue, EveryCodeLooksUpItsOwnEntry) {
  for (const CatalogueEntry& e : catalogue()) {
    EXPECT_EQ(&catalogue_entry(e.code), &e) << code_string(e.code);
  }
}

// The area is the code's number range (catalogue.def's header, the SARIF tags of
// docs/sarif-output.md).
Area area_of_number(unsigned number) {
  if (number < 1000) return Area::Input;
  if (number >= 1900 && number < 2000) return Area::WriterDiagnosis;
  if (number < 2000) return Area::Header;
  if (number < 3000) return Area::Metadata;
  if (number < 4000) return Area::TensorInfo;
  if (number < 5000) return Area::DataLayout;
  if (number < 6000) return Area::StandardKeys;
  if (number < 7000) return Area::TensorData;
  if (number < 8000) return Area::Model;
  if (number < 9000) return Area::SplitSet;
  if (number < 9500) return Area::ChatTemplate;
  return Area::Portability;
}

TEST(Catalogue, AreaFollowsTheNumberRange) {
  std::set<Area> used;
  for (const CatalogueEntry& e : catalogue()) {
    EXPECT_EQ(e.area, area_of_number(static_cast<unsigned>(e.code)))
        << code_string(e.code) << " is in area " << to_string(e.area);
    used.insert(e.area);
  }
  EXPECT_EQ(used.size(), 12U) << "every area has a code";
  std::set<std::string_view> names;
  for (Area area : used) EXPECT_TRUE(names.insert(to_string(area)).second) << to_string(area);
  EXPECT_EQ(to_string(Area::DataLayout), "data-layout");
  EXPECT_EQ(to_string(Area::WriterDiagnosis), "writer-diagnosis");
}

TEST(Catalogue, StructuralCodesExplainGarbage) {
  for (const CatalogueEntry& e : catalogue()) {
    EXPECT_TRUE(!e.breaks_structure || e.explains_garbage) << code_string(e.code);
    // A writer-diagnosis note is the explanation, never what a hypothesis must explain.
    if (e.area == Area::WriterDiagnosis) {
      EXPECT_FALSE(e.breaks_structure || e.explains_garbage) << code_string(e.code);
    }
  }
}

// The two sets copied from the code they replaced (sink.hpp's and diagnose_writer.cpp's
// switches), so an edit of a flag column in catalogue.def fails here.
TEST(Catalogue, StructureAndGarbageSetsAreTheContract) {
  using enum Code;
  const std::set<Code> structure = {
      LimitExceeded,       TruncatedHeader,     ImpossibleCount,     TruncatedMetadata,
      TruncatedString,     UnknownValueType,    UnknownArrayType,    ImpossibleArrayCount,
      TruncatedTensorInfo, TooManyDims,         NegativeDim,         ElementCountOverflow,
      UnknownTensorType,   RemovedTensorType,   RowNotBlockMultiple, ByteSizeOverflow,
      MisalignedOffset,    OverlappingTensors,  TensorOutOfBounds,   NonContiguousLayout,
      NonzeroPadding,      TruncatedBeforeData,
  };
  const std::set<Code> garbage_only = {EmptyKey, InvalidKeyBytes, InvalidTensorNameBytes,
                                       TrailingBytes};
  for (const CatalogueEntry& e : catalogue()) {
    EXPECT_EQ(e.breaks_structure, structure.contains(e.code)) << code_string(e.code);
    EXPECT_EQ(e.explains_garbage, structure.contains(e.code) || garbage_only.contains(e.code))
        << code_string(e.code);
  }
}

TEST(Catalogue, ProfileAndSeverityNamesRoundTrip) {
  for (Profile p : kAllProfiles) EXPECT_EQ(parse_profile(to_string(p)), p);
  EXPECT_FALSE(parse_profile("llama").has_value());
  EXPECT_EQ(parse_severity("off"), Severity::Silent);
  EXPECT_EQ(parse_severity("Warning"), Severity::Warning);
  EXPECT_FALSE(parse_severity("fatal").has_value());
}

}  // namespace
}  // namespace ggufcheck
