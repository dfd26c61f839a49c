// The writer writes correct files by default: every value type, every tensor type, every
// alignment, v2/v3 and both byte orders validate with no error and no warning.
#include <gtest/gtest.h>

#include <bit>

#include "ggufcheck/document.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

std::vector<Value> one_of_each_scalar() {
  return {Value::u8(255),         Value::i8(-128),       Value::u16(65535), Value::i16(-32768),
          Value::u32(0xFFFFFFFF), Value::i32(-1),        Value::f32(1.5f),  Value::boolean(true),
          Value::u64(UINT64_MAX), Value::i64(INT64_MIN), Value::f64(-0.0)};
}

Value sample_of(ValueType type) {
  for (const Value& v : one_of_each_scalar()) {
    if (v.type == type) return v;
  }
  if (type == ValueType::String) return Value::string("caf\xc3\xa9 \xe4\xb8\xad");
  return Value::array(ValueType::Uint8, {Value::u8(1)});
}

void expect_clean(const ByteVector& bytes, const std::string& what) {
  const Report report = check(bytes);
  EXPECT_EQ(report.errors + report.warnings + report.notes, 0U) << what;
  for (const Finding& f : report.findings) {
    ADD_FAILURE() << what << ": " << code_string(f.code) << " at 0x" << std::hex << f.offset << " "
                  << f.path << ": " << f.message;
  }
}

TEST(Writer, EveryValueTypeAsAScalarAndAsArrayElementsIsClean) {
  for (std::uint32_t t = 0; t < kValueTypeCount; ++t) {
    const auto type = static_cast<ValueType>(t);
    if (type == ValueType::Array) continue;
    Document doc = minimal_document();
    doc.metadata.push_back({"test.scalar", sample_of(type), {}});
    doc.metadata.push_back(
        {"test.array", Value::array(type, {sample_of(type), sample_of(type)}), {}});
    doc.metadata.push_back({"test.empty_array", Value::array(type, {}), {}});
    for (Endian endian : {Endian::Little, Endian::Big}) {
      doc.endian = endian;
      const ByteVector bytes = write_bytes(doc);
      if (endian == Endian::Little) {
        expect_clean(bytes, std::string(to_string(type)));
      } else {
        // Big-endian is one finding at the version, then everything else checks clean.
        const Report report = check(bytes);
        ASSERT_EQ(report.findings.size(), 1U) << to_string(type);
        EXPECT_EQ(report.findings[0].code, Code::ByteSwappedFile);
        EXPECT_EQ(report.facts.kv_read, 4U);
      }
    }
  }
}

TEST(Writer, EmptyStringsAndEmptyArraysAreClean) {
  Document doc = minimal_document();
  doc.metadata.push_back({"test.empty", Value::string(""), {}});
  doc.metadata.push_back(
      {"test.empty_strings", Value::array(ValueType::String, {Value::string("")}), {}});
  expect_clean(write_bytes(doc), "empty values");
}

TEST(Writer, EveryTensorTypeIsCleanOnceQuantizationVersionIsSet) {
  for (std::uint32_t id = 0; id < kTensorTypeCount; ++id) {
    const TensorTypeInfo* type = tensor_type(id);
    ASSERT_NE(type, nullptr);
    if (type->removed()) continue;
    Document doc = minimal_document();
    doc.metadata.push_back({"general.quantization_version", Value::u32(2), {}});
    doc.tensors.push_back({"a", {type->block_size * 2, 3}, id, {}, {}});
    doc.tensors.push_back({"b", {type->block_size}, id, {}, {}});
    const Report report = check(write_bytes(doc));
    EXPECT_EQ(report.errors + report.warnings, 0U) << type->name;
    // Ids 39..42 are valid but recent: a note says older runtimes reject them.
    EXPECT_EQ(report.notes, type->recent() ? 2U : 0U) << type->name;
  }
}

TEST(Writer, PowerOfTwoAlignmentsFrom8To4096AreClean) {
  for (std::uint32_t alignment = 8; alignment <= 4096; alignment *= 2) {
    Document doc = model_document();
    doc.metadata.push_back({"general.alignment", Value::u32(alignment), {}});
    const Written written = write(doc);
    EXPECT_EQ(written.layout.data_start % alignment, 0U);
    expect_clean(written.bytes, "alignment " + std::to_string(alignment));
    EXPECT_EQ(check(written.bytes).facts.alignment, alignment);
  }
}

TEST(Writer, VersionTwoIsValidWithANote) {
  Document doc = model_document();
  doc.version = 2;
  const Report report = check(write_bytes(doc));
  ASSERT_EQ(report.findings.size(), 1U);
  EXPECT_EQ(report.findings[0].code, Code::OldVersion);
  EXPECT_EQ(report.findings[0].severity, Severity::Note);
}

TEST(Writer, VersionOneUses32BitWidths) {
  Document doc = model_document();
  doc.version = 1;
  const Written v1 = write(doc);
  doc.version = 3;
  const Written v3 = write(doc);
  // Header 16 bytes instead of 24; each key length 4 bytes instead of 8.
  EXPECT_EQ(v1.layout.pairs[0].key_offset, 16U);
  EXPECT_EQ(v3.layout.pairs[0].key_offset, 24U);
  const Report report = check(v1.bytes);
  ASSERT_EQ(report.findings.size(), 1U) << code_string(report.findings[0].code);
  EXPECT_EQ(report.findings[0].code, Code::ObsoleteVersion);
  EXPECT_EQ(report.facts.tensors_read, doc.tensors.size());
}

TEST(Writer, LayoutMatchesWhatTheValidatorReads) {
  const Written written = write(model_document());
  const Report report = check(written.bytes);
  ASSERT_TRUE(report.facts.data_start.has_value());
  EXPECT_EQ(*report.facts.data_start, written.layout.data_start);
  EXPECT_EQ(written.layout.data_start % 32, 0U);
  // Tensors back to back, each padded: the last one ends the file exactly at a multiple of 32.
  EXPECT_EQ(written.bytes.size() % 32, 0U);
  EXPECT_EQ(written.layout.tensors[1].data_position - written.layout.data_start, 512U);
}

TEST(Writer, ScalarsAreStoredInTheRequestedByteOrder) {
  Document doc;
  doc.metadata.push_back({"k", Value::u32(0x01020304), {}});
  doc.endian = Endian::Big;
  const Written big = write(doc);
  const std::uint64_t at = big.layout.pairs[0].value_offset;
  EXPECT_EQ(big.bytes[at], 0x01);
  EXPECT_EQ(big.bytes[at + 3], 0x04);
  EXPECT_EQ(big.bytes[4], 0x00);  // version 3, big-endian: 00 00 00 03
  EXPECT_EQ(big.bytes[7], 0x03);
}

// Reading a written file gives back the document: values, types, order, tensor infos, data.
TEST(Writer, ReadDocumentInvertsWrite) {
  for (std::uint32_t version : {1U, 2U, 3U}) {
    for (Endian endian : {Endian::Little, Endian::Big}) {
      Document doc = model_document();
      doc.version = version;
      doc.endian = endian;
      if (version > 1) doc.metadata.push_back({"test.u64", Value::u64(UINT64_MAX - 1), {}});
      doc.metadata.push_back(
          {"test.nested",
           Value::array(ValueType::Array, {Value::array(ValueType::String, {Value::string("x")}),
                                           Value::array(ValueType::Int8, {})}),
           {}});
      const Written written = write(doc);
      for (std::size_t i = 0; i < doc.tensors.size(); ++i) {
        Tensor& t = doc.tensors[i];
        t.offset = written.layout.tensors[i].data_position - written.layout.data_start;
        t.data = std::vector<std::uint8_t>(written.layout.tensors[i].nbytes, 0);
      }
      const auto read = read_document(Bytes(written.bytes.data(), written.bytes.size()));
      ASSERT_TRUE(read.has_value());
      EXPECT_EQ(*read, doc) << "version " << version << (endian == Endian::Big ? " big" : "");
    }
  }
}

TEST(Writer, ReadDocumentRefusesWhatCannotBeRead) {
  const ByteVector bytes = write_bytes(model_document());
  const ByteVector cut(bytes.begin(), bytes.begin() + 40);
  EXPECT_FALSE(read_document(Bytes(cut.data(), cut.size())).has_value());
}

TEST(Writer, TensorNbytesIsOverflowChecked) {
  EXPECT_EQ(tensor_nbytes(0, {4, 2}), 32U);
  EXPECT_EQ(tensor_nbytes(2, {64}), 36U);                                // two Q4_0 blocks
  EXPECT_FALSE(tensor_nbytes(2, {33}).has_value());                      // not a block multiple
  EXPECT_FALSE(tensor_nbytes(4, {32}).has_value());                      // removed type
  EXPECT_FALSE(tensor_nbytes(0, {1ULL << 32, 1ULL << 32}).has_value());  // wraps to 0
  EXPECT_FALSE(tensor_nbytes(0, {1ULL << 62, 4}).has_value());
  EXPECT_FALSE(tensor_nbytes(0, {1, 1, 1, 1, 1}).has_value());  // five dims
}

// Found by fuzz_validate (fuzz/regressions/fuzz_validate/zero-dim-beside-dims-whose-product-
// overflows.gguf): a zero dim makes the size 0 even when the other dims' product overflows, as
// the validator computes it; the writer's rule used to call it undefined, so `dump` found no
// data for a tensor the file validly holds.
TEST(Writer, TensorNbytesOfAZeroDimIsZeroWhateverTheOtherDims) {
  EXPECT_EQ(tensor_nbytes(0, {1ULL << 59, 1ULL << 33, 0}), 0U);
  EXPECT_EQ(tensor_nbytes(12, {0, 1ULL << 62}), 0U);            // Q4_K
  EXPECT_FALSE(tensor_nbytes(0, {1ULL << 63, 0}).has_value());  // a negative dim still is not
  EXPECT_FALSE(tensor_nbytes(2, {33, 0}).has_value());          // nor a row off the block size
}

}  // namespace
}  // namespace ggufcheck::testing
