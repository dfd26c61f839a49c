// `ggufcheck dump`: the canonical JSON of docs/dump.md, rule by rule, on files from the writer.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "ggufcheck/dump.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

using nlohmann::json;

Dump dump_of(const ByteVector& bytes, DumpLevel level = DumpLevel::Structure,
             Profile profile = Profile::Strict) {
  Options options;
  options.profile = profile;
  return dump(Bytes(bytes.data(), bytes.size()), options, level);
}

json parsed(const Dump& d) {
  return json::parse(d.json);
}

// The canonical entry of the second pair (the first is general.architecture).
json entry_of(const Value& value, Profile profile = Profile::Strict) {
  const Dump d =
      dump_of(write_bytes(document({pair("test.value", value)})), DumpLevel::Structure, profile);
  EXPECT_EQ(d.exit_status, 0) << d.json;
  return parsed(d)["metadata"][1];
}

TEST(Dump, EveryScalarIsAStringInDecimal) {
  EXPECT_EQ(entry_of(Value::u8(255))["value"], "255");
  EXPECT_EQ(entry_of(Value::i8(-128))["value"], "-128");
  EXPECT_EQ(entry_of(Value::u16(65535))["value"], "65535");
  EXPECT_EQ(entry_of(Value::i16(-32768))["value"], "-32768");
  EXPECT_EQ(entry_of(Value::u32(0xFFFFFFFF))["value"], "4294967295");
  EXPECT_EQ(entry_of(Value::i32(-1))["value"], "-1");
  EXPECT_EQ(entry_of(Value::u64(UINT64_MAX))["value"], "18446744073709551615");
  EXPECT_EQ(entry_of(Value::i64(INT64_MIN))["value"], "-9223372036854775808");
  EXPECT_EQ(entry_of(Value::boolean(true))["value"], "true");
  EXPECT_EQ(entry_of(Value::boolean(false))["value"], "false");
  EXPECT_EQ(entry_of(Value::u32(7))["type"], "uint32");
  EXPECT_EQ(entry_of(Value::i64(7))["type"], "int64");
}

TEST(Dump, FloatsAreTheShortestTextThatReadsBackAtTheirWidth) {
  EXPECT_EQ(entry_of(Value::f32(0.1f))["value"], "0.1");  // not 0.10000000149011612
  EXPECT_EQ(entry_of(Value::f64(0.1))["value"], "0.1");
  EXPECT_EQ(entry_of(Value::f32(-1.5f))["value"], "-1.5");
  EXPECT_EQ(entry_of(Value::f32(-1000.0f))["value"], "-1000");
  EXPECT_EQ(entry_of(Value::f64(-0.0))["value"], "-0");
  EXPECT_EQ(entry_of(Value::f32(std::numeric_limits<float>::infinity()))["value"], "inf");
  EXPECT_EQ(entry_of(Value::f64(-std::numeric_limits<double>::infinity()))["value"], "-inf");
  EXPECT_EQ(entry_of(Value::f32(std::nanf("")))["value"], "nan");
  EXPECT_EQ(entry_of(Value::f32(3.4028235e38f))["value"], "3.4028235e+38");
}

TEST(Dump, ANonCanonicalBoolShowsItsByte) {
  // Accepted by the llama.cpp profile only (the spec says 0 or 1).
  const json entry = entry_of(Value::bool_byte(2), Profile::LlamaCpp);
  EXPECT_EQ(entry["value"], "true");
  EXPECT_EQ(entry["raw"], "2");
}

TEST(Dump, StringsKeepEveryByteAndInvalidUtf8GoesToHex) {
  EXPECT_EQ(entry_of(Value::string(""))["value"], "");
  EXPECT_EQ(entry_of(Value::string(std::string("a\0b", 3)))["value"], std::string("a\0b", 3));
  EXPECT_EQ(entry_of(Value::string("\xef\xbb\xbf"
                                   "bom"))["value"],
            "\xef\xbb\xbf"
            "bom");
  const json invalid = entry_of(Value::string("ok\xff"));
  EXPECT_FALSE(invalid.contains("value"));
  EXPECT_EQ(invalid["value_bytes_hex"], "6f6bff");
}

TEST(Dump, OutputIsAsciiWithUnicodeSeparatorsAndBomEscaped) {
  const Dump d = dump_of(write_bytes(document({pair("test.value", Value::string("\xef\xbb\xbf"
                                                                                "a\xe2\x80\xa8"
                                                                                "b\xc2\x85"))})));
  for (const char c : d.json) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << d.json;
  EXPECT_NE(d.json.find("\\ufeff"), std::string::npos);
  EXPECT_NE(d.json.find("\\u2028"), std::string::npos);
  EXPECT_NE(d.json.find("\\u0085"), std::string::npos);
}

TEST(Dump, ArraysAreTypedAndNestedArraysNest) {
  const json scores = entry_of(
      Value::array(ValueType::Float32, {Value::f32(0), Value::f32(-1000), Value::f32(-1.5f)}));
  EXPECT_EQ(scores["type"], "array");
  EXPECT_EQ(scores["element_type"], "float32");
  EXPECT_EQ(scores["value"], json::array({"0", "-1000", "-1.5"}));
  const json empty = entry_of(Value::array(ValueType::String, {}));
  EXPECT_EQ(empty["element_type"], "string");
  EXPECT_EQ(empty["value"], json::array());
  // Nested arrays are valid in the spec profile only.
  const json nested = entry_of(
      Value::array(ValueType::Array, {Value::array(ValueType::Uint8, {Value::u8(1)}),
                                      Value::array(ValueType::String, {Value::string("x")})}),
      Profile::Spec);
  EXPECT_EQ(nested["element_type"], "array");
  EXPECT_EQ(nested["value"][0],
            json({{"type", "array"}, {"element_type", "uint8"}, {"value", {"1"}}}));
  EXPECT_EQ(nested["value"][1]["value"], json::array({"x"}));
  // Invalid UTF-8 in a string value is an error in the spec profile, not in llama.cpp's.
  const json strings =
      entry_of(Value::array(ValueType::String, {Value::string("a"), Value::string("\xff")}),
               Profile::LlamaCpp);
  EXPECT_EQ(strings["value"], json::array({"a", {{"bytes_hex", "ff"}}}));
}

TEST(Dump, MetadataIsAnOrderedListInFileOrder) {
  const Dump d =
      dump_of(write_bytes(document({pair("z.last", Value::u8(1)), pair("a.first", Value::u8(2))})));
  const json metadata = parsed(d)["metadata"];
  ASSERT_EQ(metadata.size(), 3U);
  EXPECT_EQ(metadata[0]["key"], "general.architecture");
  EXPECT_EQ(metadata[1]["key"], "z.last");
  EXPECT_EQ(metadata[2]["key"], "a.first");
}

TEST(Dump, TensorsInFileOrderWithDimsNeZeroFirst) {
  Document doc = minimal_document();
  doc.tensors.push_back(tensor("b", {32, 2}, 2));  // Q4_0
  doc.tensors.push_back(tensor("a", {3}, 0));      // F32
  const json out = parsed(dump_of(write_bytes(doc)));
  EXPECT_EQ(out["tensor_count"], "2");
  EXPECT_EQ(out["data_offset"], "160");
  ASSERT_EQ(out["tensors"].size(), 2U);
  EXPECT_EQ(out["tensors"][0], json({{"name", "b"},
                                     {"type", "Q4_0"},
                                     {"type_id", "2"},
                                     {"dims", {"32", "2"}},
                                     {"offset", "0"}}));
  EXPECT_EQ(out["tensors"][1]["name"], "a");
  EXPECT_EQ(out["tensors"][1]["offset"], "64");  // 36 bytes of Q4_0, padded to 32
}

TEST(Dump, NoDataOffsetWithoutTensors) {
  const json out = parsed(dump_of(write_bytes(minimal_document())));
  EXPECT_FALSE(out.contains("data_offset"));
  EXPECT_EQ(out["tensors"], json::array());
}

TEST(Dump, LevelsAddFieldsInOrder) {
  Document doc = minimal_document();
  doc.tensors.push_back(with_data(tensor("t", {4}, 0), 16));  // 16 zero bytes
  const ByteVector bytes = write_bytes(doc);
  EXPECT_EQ(parsed(dump_of(bytes, DumpLevel::Verdict)), json({{"ok", true}}));
  const json header = parsed(dump_of(bytes, DumpLevel::Header));
  EXPECT_EQ(header, json({{"ok", true},
                          {"version", "3"},
                          {"endianness", "little"},
                          {"alignment", "32"},
                          {"tensor_count", "1"},
                          {"kv_count", "1"}}));
  EXPECT_FALSE(parsed(dump_of(bytes))["tensors"][0].contains("data_sha256"));
  // sha256 of 16 zero bytes
  EXPECT_EQ(parsed(dump_of(bytes, DumpLevel::Data))["tensors"][0]["data_sha256"],
            "374708fff7719dd5979ec875d56cd2286f6d3cf7ec317a3b25632aab28ec37bb");
}

TEST(Dump, BigEndianFilesGiveTheSameValues) {
  Document doc = document({pair("test.value", Value::i32(-7)), pair("test.f", Value::f64(2.5))});
  doc.tensors.push_back(tensor("t", {4, 2}, 0));
  // Big-endian files are accepted by the spec profile only (a note there).
  const json little = parsed(dump_of(write_bytes(doc), DumpLevel::Structure, Profile::Spec));
  doc.endian = Endian::Big;
  json big = parsed(dump_of(write_bytes(doc), DumpLevel::Structure, Profile::Spec));
  EXPECT_EQ(big["endianness"], "big");
  big["endianness"] = "little";
  EXPECT_EQ(big, little);
}

TEST(Dump, ARejectedFileGivesOkFalseWithItsErrorsAndExitsOne) {
  ByteVector bytes = write_bytes(minimal_document());
  bytes.resize(bytes.size() - 1);
  const Dump d = dump_of(bytes, DumpLevel::Data);
  EXPECT_EQ(d.exit_status, 1);
  const json out = parsed(d);
  EXPECT_EQ(out["ok"], false);
  ASSERT_FALSE(out["errors"].empty());
  EXPECT_EQ(out["errors"][0]["code"], "GGUF2002");
  EXPECT_NE(out["error"].get<std::string>().find("GGUF2002"), std::string::npos);
  EXPECT_FALSE(out.contains("metadata"));
}

TEST(Dump, TheProfileDecidesAcceptance) {
  // Alignment 24: valid in the spec (a multiple of 8), rejected by llama.cpp (not a power of 2).
  const ByteVector bytes = write_bytes(document({pair("general.alignment", Value::u32(24))}));
  EXPECT_EQ(dump_of(bytes, DumpLevel::Structure, Profile::Spec).exit_status, 0);
  EXPECT_EQ(dump_of(bytes, DumpLevel::Structure, Profile::LlamaCpp).exit_status, 1);
}

TEST(Dump, InvalidUtf8KeysAndNamesGoToHex) {
  Document doc = document({pair("test.\xc0", Value::u8(1))});
  doc.tensors.push_back(tensor("t\xff", {1}, 0));
  // Invalid key and name bytes are errors in the strict profile, not in llama.cpp's.
  const json out = parsed(dump_of(write_bytes(doc), DumpLevel::Structure, Profile::LlamaCpp));
  EXPECT_EQ(out["metadata"][1]["key_bytes_hex"], "746573742ec0");
  EXPECT_FALSE(out["metadata"][1].contains("key"));
  EXPECT_EQ(out["tensors"][0]["name_bytes_hex"], "74ff");
}

TEST(Dump, TheCliPrintsTheDumpAndExitsWithItsStatus) {
  const std::string cli = GGUFCHECK_CLI_PATH;
  const std::string valid = std::string(GGUFCHECK_SOURCE_DIR) + "/examples/valid/tiny-llama.gguf";
  const std::string broken =
      std::string(GGUFCHECK_SOURCE_DIR) + "/examples/broken/three-problems.gguf";
  EXPECT_EQ(std::system((cli + " dump --level 3 " + valid + " > /dev/null").c_str()), 0);
  EXPECT_EQ(WEXITSTATUS(std::system((cli + " dump " + broken + " > /dev/null").c_str())), 1);
  EXPECT_EQ(WEXITSTATUS(std::system((cli + " dump /nonexistent > /dev/null").c_str())), 2);
  EXPECT_EQ(WEXITSTATUS(std::system((cli + " dump --level 9 " + valid + " 2>/dev/null").c_str())),
            3);
}

}  // namespace
}  // namespace ggufcheck::testing
