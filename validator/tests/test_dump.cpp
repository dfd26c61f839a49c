// `ggufcheck dump`: the canonical JSON of docs/dump.md, rule by rule, on files from the writer.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "dump/json_writer.hpp"
#include "ggufcheck/dump.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

using nlohmann::json;

Dump dump_of(const ByteVector& bytes, DumpLevel level = DumpLevel::Structure,
             Profile profile = Profile::Strict) {
  Options options = container_options();
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
  // A leading U+FEFF fails strict (GGUF9505, a portability error): dumped under spec.
  EXPECT_EQ(entry_of(Value::string("\xef\xbb\xbf"
                                   "bom"),
                     Profile::Spec)["value"],
            "\xef\xbb\xbf"
            "bom");
  const json invalid = entry_of(Value::string("ok\xff"));
  EXPECT_FALSE(invalid.contains("value"));
  EXPECT_EQ(invalid["value_bytes_hex"], "6f6bff");
}

TEST(Dump, OutputIsAsciiWithUnicodeSeparatorsAndBomEscaped) {
  const Dump d = dump_of(write_bytes(document({pair("test.value", Value::string("\xef\xbb\xbf"
                                                                                "a\xe2\x80\xa8"
                                                                                "b\xc2\x85"))})),
                         DumpLevel::Structure, Profile::Spec);  // GGUF9505 fails strict
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

// Pieces of streamed output, as a caller of dump_file receives them.
struct Pieces {
  std::vector<std::string> pieces;
  [[nodiscard]] std::string joined() const {
    std::string out;
    for (const std::string& piece : pieces) out += piece;
    return out;
  }
};

TEST(Dump, TheStreamedOutputIsTheStringApisOutputInBoundedPieces) {
  // A vocabulary-sized array and a long string: an output of several writer buffers.
  std::vector<Value> tokens;
  for (int i = 0; i < 20000; ++i)
    tokens.push_back(Value::string("tok\"\n\xc3\xa9" + std::to_string(i)));
  Document doc = document({pair("tokenizer.ggml.tokens", Value::array(ValueType::String, tokens)),
                           pair("test.long", Value::string(std::string(300000, 'x') + "\x01"))});
  doc.tensors.push_back(with_data(tensor("t", {4}, 0), 16));
  ByteVector rejected = write_bytes(minimal_document());
  rejected.resize(rejected.size() - 1);
  const TempDir dir;
  const auto valid_path = dir.write("valid.gguf", write_bytes(doc));
  const auto rejected_path = dir.write("rejected.gguf", rejected);
  for (const auto& [path, bytes] :
       {std::pair{valid_path, write_bytes(doc)}, std::pair{rejected_path, rejected}}) {
    for (const DumpLevel level :
         {DumpLevel::Verdict, DumpLevel::Header, DumpLevel::Structure, DumpLevel::Data}) {
      const Dump whole = dump_of(bytes, level);
      Pieces streamed;
      const int status = dump_file(path.string(), Options{}, level, [&](std::string_view text) {
        streamed.pieces.emplace_back(text);
        return true;
      });
      EXPECT_EQ(status, whole.exit_status);
      EXPECT_EQ(status, path == valid_path ? 0 : 1) << whole.json;
      EXPECT_EQ(streamed.joined(), whole.json) << path;
      for (const std::string& piece : streamed.pieces) {
        EXPECT_LE(piece.size(), detail::JsonWriter::kBufferSize);
      }
      if (level >= DumpLevel::Structure && path == valid_path) {
        EXPECT_GT(streamed.pieces.size(), 4U);
      }
    }
  }
}

TEST(Dump, AWriteThatFailsStopsTheOutput) {
  std::vector<Value> many(200000, Value::u32(7));
  const TempDir dir;
  const auto path =
      dir.write("big.gguf",
                write_bytes(document({pair("test.many", Value::array(ValueType::Uint32, many))})));
  int writes = 0;
  const int status =
      dump_file(path.string(), Options{}, DumpLevel::Structure, [&](std::string_view) {
        ++writes;
        return false;
      });
  EXPECT_EQ(writes, 1);
  EXPECT_EQ(status, 0);  // the verdict; the caller knows its output failed
}

TEST(Dump, AnUnreadableFileGivesItsErrorAndExitsTwo) {
  Pieces streamed;
  const int status =
      dump_file("/nonexistent/x.gguf", Options{}, DumpLevel::Data, [&](std::string_view text) {
        streamed.pieces.emplace_back(text);
        return true;
      });
  EXPECT_EQ(status, 2);
  const json out = json::parse(streamed.joined());
  EXPECT_EQ(out["ok"], false);
  EXPECT_NE(out["error"].get<std::string>().find("/nonexistent/x.gguf"), std::string::npos);
  EXPECT_EQ(out["errors"], json::array());
}

// The writer's JSON text of one string value, and nlohmann's (which the output followed before
// the writer existed).
std::string written(std::string_view text) {
  std::string out;
  const detail::JsonWriter::Output append = [&](std::string_view piece) {
    out.append(piece);
    return true;
  };
  detail::JsonWriter writer(append);
  writer.string(text);
  writer.flush();
  return out;
}
std::string nlohmann_text(const std::string& text) {
  return json(text).dump(-1, ' ', true);
}

TEST(JsonWriter, EscapesEveryByteClassAsNlohmannDoes) {
  std::string ascii;
  for (int c = 0; c < 0x80; ++c) ascii += static_cast<char>(c);  // controls, quote, backslash, DEL
  EXPECT_EQ(written(ascii), nlohmann_text(ascii));
  const std::vector<std::string> samples = {
      "",
      "plain text / with a slash",
      "\xc2\x80\xc2\x85\xc3\xa9\xdf\xbf",  // two bytes: U+0080, U+0085, U+00E9, U+07FF
      "\xe0\xa0\x80\xe2\x80\xa8\xed\x9f\xbf\xee\x80\x80",  // three: U+0800, U+2028, U+D7FF, U+E000
      "\xef\xbb\xbf\xef\xbf\xbd\xef\xbf\xbf",              // U+FEFF (BOM), U+FFFD, U+FFFF
      "\xf0\x90\x80\x80\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf",  // four: U+10000, U+1F600, U+10FFFF
      std::string("a\0b\x1f\x7f\"\\\b\f\n\r\t", 12),
  };
  for (const std::string& sample : samples) EXPECT_EQ(written(sample), nlohmann_text(sample));
}

TEST(JsonWriter, ALongStringIsWrittenInBoundedPiecesAsNlohmannWritesIt) {
  std::string text;
  while (text.size() < 3 * detail::JsonWriter::kBufferSize)
    text += "ab\n\xe2\x80\xa8\xf0\x9f\x98\x80\"";
  std::vector<std::size_t> sizes;
  std::string out;
  const detail::JsonWriter::Output append = [&](std::string_view piece) {
    sizes.push_back(piece.size());
    out.append(piece);
    return true;
  };
  detail::JsonWriter writer(append);
  writer.string(text);
  writer.flush();
  EXPECT_EQ(out, nlohmann_text(text));
  EXPECT_GT(sizes.size(), 3U);
  for (const std::size_t size : sizes) EXPECT_LE(size, detail::JsonWriter::kBufferSize);
}

TEST(JsonWriter, InvalidUtf8InAMessageBecomesReplacementCharacters) {
  // nlohmann throws here; dump gives invalid strings as hex, so only a message (a path) has such
  // bytes, and it is still written.
  EXPECT_EQ(written("a\xff"
                    "b\xc3"),
            "\"a\\ufffdb\\ufffd\"");
  EXPECT_EQ(written("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // a surrogate
}

TEST(JsonWriter, MembersAndElementsAreSeparatedByCommas) {
  std::string out;
  const detail::JsonWriter::Output append = [&](std::string_view piece) {
    out.append(piece);
    return true;
  };
  detail::JsonWriter writer(append);
  writer.begin_object();
  writer.key("a");
  writer.begin_array();
  writer.string("x");
  writer.begin_array();
  writer.end_array();
  writer.begin_object();
  writer.end_object();
  writer.hex_string("\x01\xab");
  writer.end_array();
  writer.key("b");
  writer.boolean(false);
  writer.end_object();
  writer.flush();
  EXPECT_EQ(out, R"({"a":["x",[],{},"01ab"],"b":false})");
  EXPECT_EQ(json::parse(out).dump(), out);
}

TEST(Dump, TheCliPrintsTheDumpAndExitsWithItsStatus) {
  const std::string cli = GGUFCHECK_CLI_PATH;
  const std::string valid = std::string(GGUFCHECK_SOURCE_DIR) + "/examples/valid/tiny-llama.gguf";
  const std::string broken =
      std::string(GGUFCHECK_SOURCE_DIR) + "/examples/broken/three-problems.gguf";
  EXPECT_EQ(std::system((cli + " dump --level 3 " + valid + " > /dev/null").c_str()), 0);
  EXPECT_EQ(WEXITSTATUS(std::system((cli + " dump " + broken + " > /dev/null").c_str())), 1);
  EXPECT_EQ(WEXITSTATUS(std::system((cli + " dump /nonexistent > /dev/null").c_str())), 2);
  // Output that cannot be written is exit 4, as for every report.
  EXPECT_EQ(WEXITSTATUS(std::system((cli + " dump --level 3 " + valid + " > /dev/full").c_str())),
            4);
  EXPECT_EQ(WEXITSTATUS(std::system((cli + " dump --level 9 " + valid + " 2>/dev/null").c_str())),
            3);
}

}  // namespace
}  // namespace ggufcheck::testing
