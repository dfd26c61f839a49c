// No finding silently switches off another stage: the data check and the model checks run
// whenever what they need was read (the tensor layout, the metadata), whatever else the file
// has; where one cannot run, GGUF0003 says which and why. The shapes found by a red-team pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

constexpr std::uint32_t kF32 = 0;

bool reports(const Report& report, Code code) {
  return std::any_of(report.findings.begin(), report.findings.end(),
                     [code](const Finding& f) { return f.code == code; });
}

std::string codes_of(const Report& report) {
  std::string out;
  for (const Finding& f : report.findings) out += code_string(f.code) + " " + f.message + "\n";
  return out;
}

// Two f32 tensors: "a" of 3 elements, the second of them NaN (12 bytes, then 20 bytes of padding
// up to "b"), and "b" of 8 ones.
Written nan_then_padding(const Document& base) {
  Document doc = base;
  std::vector<std::uint8_t> a(12, 0), b(32, 0);
  const float nan = __builtin_nanf("");
  const float one = 1.0F;
  std::memcpy(a.data() + 4, &nan, 4);
  std::memcpy(a.data(), &one, 4);
  std::memcpy(a.data() + 8, &one, 4);
  for (std::size_t i = 0; i < 8; ++i) std::memcpy(b.data() + 4 * i, &one, 4);
  Tensor ta = tensor("a", {3}, kF32);
  ta.data = a;
  Tensor tb = tensor("b", {8}, kF32);
  tb.data = b;
  doc.tensors = {ta, tb};
  return write(doc);
}

// The padding byte right after tensor "a"'s data set to 0x01.
ByteVector with_padding_byte(const Written& written) {
  ByteVector bytes = written.bytes;
  const WrittenTensor& a = written.layout.tensors.at(0);
  bytes.at(a.data_position + a.nbytes) = 0x01;
  return bytes;
}

Report check(const ByteVector& bytes, Options options) {
  return validate(Bytes(bytes.data(), bytes.size()), options);
}

// A NaN tensor and one non-zero padding byte: ggml's data check finds the tensor; so must --data,
// in every profile (the llama.cpp profile does not even report the padding).
TEST(Stages, NonZeroPaddingDoesNotSwitchOffTheDataCheck) {
  const Written written = nan_then_padding(minimal_document());
  const ByteVector bytes = with_padding_byte(written);
  for (const Profile profile : kAllProfiles) {
    Options options = container_options(profile);
    options.data.enabled = true;
    const Report clean = check(written.bytes, options);
    ASSERT_TRUE(reports(clean, Code::NonFiniteElement)) << codes_of(clean);
    const Report report = check(bytes, options);
    EXPECT_TRUE(reports(report, Code::NonFiniteElement)) << to_string(profile) << "\n"
                                                         << codes_of(report);
    EXPECT_FALSE(report.passed()) << to_string(profile);
    EXPECT_EQ(reports(report, Code::NonzeroPadding), profile != Profile::LlamaCpp);
    EXPECT_FALSE(reports(report, Code::StageNotRun)) << codes_of(report);
  }
}

// A gap between tensors (GGUF4004; the spec profile keeps it silent) hides nothing either.
TEST(Stages, AGapBetweenTensorsDoesNotSwitchOffTheDataCheck) {
  Document doc = minimal_document();
  Written plain = nan_then_padding(doc);
  // "b" moved 64 bytes further: a gap of zeros after "a"'s padding.
  Document moved = minimal_document();
  std::vector<std::uint8_t> a(
      plain.bytes.begin() + static_cast<std::ptrdiff_t>(plain.layout.tensors[0].data_position),
      plain.bytes.begin() +
          static_cast<std::ptrdiff_t>(plain.layout.tensors[0].data_position + 12));
  Tensor ta = tensor("a", {3}, kF32);
  ta.data = a;
  Tensor tb = tensor("b", {8}, kF32, 96);
  tb.data = std::vector<std::uint8_t>(32, 0x3f);
  moved.tensors = {ta, tb};
  const Written gapped = write(moved);
  for (const Profile profile : kAllProfiles) {
    Options options = container_options(profile);
    options.data.enabled = true;
    const Report report = check(gapped.bytes, options);
    EXPECT_TRUE(reports(report, Code::NonContiguousLayout) || profile == Profile::Spec)
        << codes_of(report);
    EXPECT_TRUE(reports(report, Code::NonFiniteElement)) << to_string(profile) << "\n"
                                                         << codes_of(report);
  }
}

// A llama file without its hyperparameters and one non-zero padding byte: llama.cpp refuses it
// ("key not found in model: llama.context_length"), and so does the llama.cpp profile.
TEST(Stages, NonZeroPaddingDoesNotSwitchOffTheModelChecks) {
  const Written written = nan_then_padding(minimal_document());
  const ByteVector bytes = with_padding_byte(written);
  for (const Profile profile : {Profile::LlamaCpp, Profile::Strict}) {
    Options options;
    options.profile = profile;
    const Report report = check(bytes, options);
    EXPECT_TRUE(reports(report, Code::MissingModelKey)) << codes_of(report);
    EXPECT_FALSE(report.passed());
  }
}

// Where the data check cannot run, the report says so, and the file does not pass.
TEST(Stages, ADataCheckThatCannotRunIsAnError) {
  Document doc = document({}, {tensor("w", {4}, kF32)});
  doc.endian = Endian::Big;
  const Written written = write(doc);
  Options options = container_options(Profile::Spec);
  options.data.enabled = true;
  const Report report = check(written.bytes, options);
  ASSERT_TRUE(reports(report, Code::StageNotRun)) << codes_of(report);
  EXPECT_FALSE(report.passed());
  options.data.enabled = false;
  EXPECT_TRUE(check(written.bytes, options).passed()) << codes_of(check(written.bytes, options));
}

// Model checks on a file cut inside its metadata: they cannot run, and say so.
TEST(Stages, ModelChecksThatCannotRunSaySo) {
  const Written written = write(model_document());
  const ByteVector cut(written.bytes.begin(),
                       written.bytes.begin() +
                           static_cast<std::ptrdiff_t>(written.layout.pairs.back().value_offset));
  Options options;
  options.profile = Profile::LlamaCpp;
  const Report report = check(cut, options);
  EXPECT_TRUE(reports(report, Code::StageNotRun)) << codes_of(report);
  EXPECT_FALSE(report.passed());
}

}  // namespace
}  // namespace ggufcheck::testing
