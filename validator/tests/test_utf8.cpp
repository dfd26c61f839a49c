// The three UTF-8 validators agree: the byte-by-byte reference (which also locates the error),
// the shift DFA, and the region scan (AVX2 where available), on every short sequence and on
// random text; and string arrays report exactly the strings that are wrong.
#include <gtest/gtest.h>

#include <random>

#include "test_support.hpp"
#include "util/utf8.hpp"

namespace ggufcheck::testing {
namespace {

using detail::find_invalid_utf8;
using detail::is_valid_utf8;
using detail::scan_region;

void expect_agreement(const std::string& text) {
  const bool reference = find_invalid_utf8(text) == std::string_view::npos;
  ASSERT_EQ(is_valid_utf8(text), reference) << ::testing::PrintToString(text);
  const detail::RegionScan scan = scan_region(text);
  ASSERT_EQ(scan.valid_utf8, reference) << ::testing::PrintToString(text);
  ASSERT_EQ(scan.zero_bytes,
            static_cast<std::uint64_t>(std::count(text.begin(), text.end(), '\0')));
}

TEST(Utf8, KnownSequences) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("caf\xc3\xa9 \xe2\x96\x81 \xf0\x9f\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xc0\x80"));          // overlong
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe2\x96"));          // cut short
  EXPECT_FALSE(is_valid_utf8("\x80"));              // lone continuation
  EXPECT_EQ(find_invalid_utf8("ab\xff"), 2U);
}

// Every sequence of up to three arbitrary bytes, at every position of a 32-byte block and
// across the block boundary, so the SIMD carry between blocks is covered.
TEST(Utf8, AllValidatorsAgreeOnEveryShortSequence) {
  for (int prefix : {0, 29, 30, 31, 33}) {
    for (std::uint32_t v = 0; v < (1U << 16); ++v) {
      std::string text(static_cast<std::size_t>(prefix), 'a');
      text += static_cast<char>(v & 0xFF);
      text += static_cast<char>(v >> 8);
      expect_agreement(text);
    }
  }
  for (std::uint32_t v = 0; v < (1U << 24); v += 7) {
    const std::string text{static_cast<char>(v & 0xFF), static_cast<char>((v >> 8) & 0xFF),
                           static_cast<char>(v >> 16)};
    expect_agreement(std::string(30, 'x') + text);
  }
}

TEST(Utf8, AllValidatorsAgreeOnRandomText) {
  std::mt19937_64 rng(20261129);
  const std::vector<std::string> pieces = {
      "a",    "\xc3\xa9", "\xe2\x96\x81", "\xf0\x9f\x98\x80", std::string(1, '\0'),
      "\x80", "\xe0",     "\xf4\x8f",     "\xed\x9f\xbf",     "\xc2"};
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 80);
    for (int i = 0; i < n; ++i) {
      // Mostly valid pieces, sometimes a broken one.
      text += pieces[rng() % 100 < 90 ? rng() % 5 : rng() % pieces.size()];
    }
    expect_agreement(text);
  }
}

// A string array is checked as one region when it can be; the string-by-string fallback must
// still name the right element.
TEST(Utf8, StringArraysReportTheFirstBadElementAndTheCount) {
  std::vector<Value> tokens;
  for (int i = 0; i < 300; ++i)
    tokens.push_back(Value::string("tok\xe2\x96\x81" + std::to_string(i)));
  tokens[7] = Value::string(std::string(200, 'x'));  // a length byte >= 0x80: no region shortcut
  tokens[120] = Value::string("bad\xff");
  tokens[250] = Value::string("bad\xc3");
  tokens[260] = Value::string(std::string("nul\0here", 8));
  Document doc = minimal_document();
  doc.metadata.push_back({"test.tokens", Value::array(ValueType::String, tokens), {}});
  const Report report = check(write_bytes(doc));
  const Finding* utf8 = find(report, Code::InvalidUtf8);
  ASSERT_NE(utf8, nullptr);
  EXPECT_EQ(utf8->path, "kv[1] \"test.tokens\"[120]");
  EXPECT_NE(utf8->message.find("2 string(s) not UTF-8"), std::string::npos) << utf8->message;
  const Finding* nul = find(report, Code::NulInString);
  ASSERT_NE(nul, nullptr);
  EXPECT_EQ(nul->path, "kv[1] \"test.tokens\"[260]");

  // Without the long string the region shortcut applies and must find the same problems.
  tokens[7] = Value::string("short");
  doc.metadata[1].value = Value::array(ValueType::String, tokens);
  const Report fast = check(write_bytes(doc));
  ASSERT_NE(find(fast, Code::InvalidUtf8), nullptr);
  EXPECT_EQ(find(fast, Code::InvalidUtf8)->path, "kv[1] \"test.tokens\"[120]");
  ASSERT_NE(find(fast, Code::NulInString), nullptr);
  EXPECT_EQ(find(fast, Code::NulInString)->path, "kv[1] \"test.tokens\"[260]");
}

TEST(Utf8, CleanStringArraysOfEveryLengthClassPass) {
  for (std::size_t length : {0U, 1U, 127U, 128U, 255U, 256U, 70000U}) {
    Document doc = minimal_document();
    doc.metadata.push_back(
        {"test.strings",
         Value::array(ValueType::String,
                      {Value::string(std::string(length, 'a')), Value::string("\xe4\xb8\xad")}),
         {}});
    EXPECT_EQ(check(write_bytes(doc)).findings.size(), 0U) << length;
  }
}

}  // namespace
}  // namespace ggufcheck::testing
