// Every prefix of a valid file is rejected with a truncation-class error (Wuffs-style: cut the
// input at every byte); cutting only the final padding is a warning.
#include <gtest/gtest.h>

#include <set>

#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

const std::set<Code> kTruncationClass = {
    Code::TruncatedHeader,      Code::TruncatedMetadata,   Code::TruncatedString,
    Code::TruncatedTensorInfo,  Code::TruncatedBeforeData, Code::ImpossibleCount,
    Code::ImpossibleArrayCount, Code::TensorOutOfBounds,
};

bool has_truncation_error(const Report& report) {
  return std::any_of(report.findings.begin(), report.findings.end(), [](const Finding& f) {
    return f.severity == Severity::Error && kTruncationClass.count(f.code) != 0;
  });
}

Options profile_options(Profile profile) {
  Options options = container_options();
  options.profile = profile;
  // Big-endian and version 1 files are errors in themselves; the prefixes add the truncation.
  // GGUF1004 obsolete-version cannot be silenced (it ends the reading): errors_besides_version
  // leaves it out instead.
  options.severity_overrides[Code::ByteSwappedFile] = Severity::Silent;
  return options;
}

// The errors of a report but GGUF1004, which every version 1 file has.
std::size_t errors_besides_version(const Report& report) {
  return static_cast<std::size_t>(
      std::count_if(report.findings.begin(), report.findings.end(), [](const Finding& f) {
        return f.severity == Severity::Error && f.code != Code::ObsoleteVersion;
      }));
}

// The model plus a last tensor whose size (60 bytes) needs final padding.
Document padded_model() {
  Document doc = model_document();
  doc.tensors.push_back({"padded.weight", {15}, 0, {}, {}});
  return doc;
}

// Every cut in the header, metadata, tensor infos and padding, and near each tensor's data
// edges; inside a tensor's data, where every cut is the same case (its bytes run past the end),
// one in 61: the model's weights are most of its bytes.
bool cut_tested(const Written& written, std::uint64_t cut) {
  for (const WrittenTensor& t : written.layout.tensors) {
    if (cut < t.data_position || cut >= t.data_position + t.nbytes) continue;
    const std::uint64_t into = cut - t.data_position;
    return into < 64 || t.nbytes - into <= 64 || into % 61 == 0;
  }
  return true;
}

void walk_prefixes(const Document& doc, const std::string& what) {
  const Written written = write(doc);
  const ByteVector& full = written.bytes;
  ASSERT_EQ(errors_besides_version(check(full, profile_options(Profile::Strict))), 0U) << what;
  // The end of the last tensor's data: cuts past it only remove the final padding.
  const WrittenTensor& last = written.layout.tensors.back();
  const std::uint64_t data_end = last.data_position + last.nbytes;
  ASSERT_LT(data_end, full.size()) << what << ": the last tensor needs padding for this test";
  for (std::size_t cut = 0; cut < full.size(); ++cut) {
    if (!cut_tested(written, cut)) continue;
    const ByteVector prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut));
    for (Profile profile : kAllProfiles) {
      const Report report = check(prefix, profile_options(profile));
      for (const Finding& f : report.findings) {
        ASSERT_LE(f.offset, cut) << what << " cut " << cut;
        ASSERT_LE(f.length, cut - f.offset) << what << " cut " << cut;
      }
      if (cut >= data_end) {
        // Only padding is missing: a warning where the profile reports it, never an error.
        ASSERT_EQ(errors_besides_version(report), 0U)
            << what << " cut " << cut << " " << to_string(profile);
        if (profile != Profile::LlamaCpp) {
          ASSERT_TRUE(has(report, Code::MissingFinalPadding)) << what << " cut " << cut;
        }
      } else {
        ASSERT_TRUE(has_truncation_error(report))
            << what << " cut " << cut << " of " << full.size() << " " << to_string(profile)
            << ": first finding "
            << (report.findings.empty() ? "none" : code_string(report.findings[0].code));
      }
    }
  }
}

TEST(Prefixes, EveryPrefixOfAModelIsATruncationError) {
  walk_prefixes(padded_model(), "v3 little-endian");
}

TEST(Prefixes, EveryPrefixOfABigEndianModelIsATruncationError) {
  Document doc = padded_model();
  doc.endian = Endian::Big;
  walk_prefixes(doc, "v3 big-endian");
}

TEST(Prefixes, EveryPrefixOfAVersionOneModelIsATruncationError) {
  Document doc = padded_model();
  doc.version = 1;
  walk_prefixes(doc, "v1");
}

TEST(Prefixes, EveryPrefixWithNestedArraysIsATruncationError) {
  Document doc = padded_model();
  doc.metadata.push_back(
      {"test.nested",
       Value::array(ValueType::Array,
                    {Value::array(ValueType::String, {Value::string("x"), Value::string("yz")}),
                     Value::array(ValueType::Uint16, {Value::u16(7)})}),
       {}});
  // Nested arrays are an error in strict (the reference rejects them): walk under spec.
  const Written written = write(doc);
  const std::uint64_t data_end =
      written.layout.tensors.back().data_position + written.layout.tensors.back().nbytes;
  for (std::size_t cut = 0; cut < written.bytes.size(); ++cut) {
    if (!cut_tested(written, cut)) continue;
    const ByteVector prefix(written.bytes.begin(),
                            written.bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    const Report report = check(prefix, Profile::Spec);
    if (cut >= data_end) {
      ASSERT_EQ(report.errors, 0U) << "cut " << cut;
      ASSERT_TRUE(has(report, Code::MissingFinalPadding)) << "cut " << cut;
    } else {
      ASSERT_TRUE(has_truncation_error(report)) << "cut " << cut;
    }
  }
}

}  // namespace
}  // namespace ggufcheck::testing
