// `ggufcheck info`: what it shows of a file, how it elides and escapes, and that a rejected or
// unreadable file still gets an answer (ggufcheck/info.hpp, docs/info.md).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "ggufcheck/info.hpp"
#include "templates/known_templates.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

using nlohmann::json;

Info info_of(const TempDir& dir, const std::string& name, const ByteVector& bytes,
             const InfoOptions& info_options = {}) {
  return info_file(dir.write(name, bytes).string(), Options{}, info_options);
}

Value strings(std::size_t n) {
  std::vector<Value> items;
  for (std::size_t i = 0; i < n; ++i) items.push_back(Value::string("t" + std::to_string(i)));
  return Value::array(ValueType::String, std::move(items));
}

const InfoPair* pair_named(const Info& info, const std::string& key) {
  for (const InfoPair& p : info.metadata) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

TEST(Info, TheSampleModel) {
  const std::string path = std::string(GGUFCHECK_SOURCE_DIR) + "/examples/valid/tiny-llama.gguf";
  const Info info = info_file(path, Options{});
  EXPECT_EQ(info.report.exit_status(), 0);
  EXPECT_EQ(info.architecture, "llama");
  EXPECT_EQ(info.name, "tiny-llama example");
  EXPECT_EQ(info.file_type, 2u);
  EXPECT_EQ(info.file_type_name, "Q4_0");  // llama.cpp's own word for LLAMA_FTYPE_MOSTLY_Q4_0
  EXPECT_EQ(info.parameters, 66496u);
  EXPECT_EQ(info.tokens, 12u);
  ASSERT_EQ(info.special_tokens.size(), 2u);
  EXPECT_EQ(info.special_tokens[0].role, "bos");
  EXPECT_EQ(info.special_tokens[0].text, "<s>");
  EXPECT_EQ(info.special_tokens[1].text, "</s>");
  ASSERT_FALSE(info.hyperparameters.empty());
  EXPECT_EQ(info.hyperparameters[0].name, "context_length");
  EXPECT_EQ(info.hyperparameters[0].value.text, "2048");
  std::uint64_t tensors = 0, bytes = 0;
  for (const InfoTypeRow& row : info.tensor_types) {
    tensors += row.tensors;
    bytes += row.bytes;
  }
  EXPECT_EQ(tensors, 11u);
  EXPECT_EQ(info.tensor_bytes, bytes);
  EXPECT_EQ(info.metadata.size(), 17u);
  const std::string text = render_info_text(info, false);
  EXPECT_NE(text.find("file type       Q4_0 (2)"), std::string::npos) << text;
  EXPECT_NE(text.find("parameters      66.5K (66,496)"), std::string::npos) << text;
  EXPECT_NE(text.find(": pass: 0 errors"), std::string::npos) << text;
}

TEST(Info, ArraysShowTheirHeadUnlessFull) {
  TempDir dir;
  const ByteVector bytes = write_bytes(document({pair("test.tokens", strings(100))}));
  const Info elided = info_of(dir, "a.gguf", bytes);
  const InfoPair* p = pair_named(elided, "test.tokens");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->value.type, "array[string]");
  EXPECT_EQ(p->value.count, 100u);
  EXPECT_TRUE(p->value.elided);
  EXPECT_EQ(p->value.text, R"(["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", ... 92 more])");
  EXPECT_EQ(json::parse(p->value.json).size(), kInfoArrayHead);

  const Info full = info_of(dir, "a.gguf", bytes, InfoOptions{true});
  p = pair_named(full, "test.tokens");
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->value.elided);
  EXPECT_EQ(json::parse(p->value.json).size(), 100u);
  EXPECT_EQ(json::parse(p->value.json)[99], "t99");
}

TEST(Info, NestedArraysAreElidedAtEveryLevel) {
  TempDir dir;
  std::vector<Value> outer;
  for (int i = 0; i < 10; ++i) {
    std::vector<Value> inner;
    for (int k = 0; k < 9; ++k) inner.push_back(Value::u8(static_cast<std::uint8_t>(k)));
    outer.push_back(Value::array(ValueType::Uint8, std::move(inner)));
  }
  const Info info = info_of(
      dir, "n.gguf",
      write_bytes(
          document({pair("test.nested", Value::array(ValueType::Array, std::move(outer)))})));
  const InfoPair* p = pair_named(info, "test.nested");
  ASSERT_NE(p, nullptr);
  const std::string row = "[0, 1, 2, 3, 4, 5, 6, 7, ... 1 more]";
  EXPECT_EQ(p->value.text.substr(0, row.size() + 1), "[" + row);
  EXPECT_NE(p->value.text.find("], ... 2 more]"), std::string::npos) << p->value.text;
  const json parsed = json::parse(p->value.json);
  ASSERT_EQ(parsed.size(), 8u);
  EXPECT_EQ(parsed[0].size(), 8u);
}

TEST(Info, TextThatCouldDeceiveATerminalIsEscaped) {
  TempDir dir;
  // A right-to-left override, a zero-width space, an escape sequence, a newline and a byte that is
  // not UTF-8; and letters of another script, which stay readable.
  const std::string name =
      "a\xE2\x80\xAE"
      "b\xE2\x80\x8B"
      "c\x1B[31m\n\xFF \xE4\xB8\xAD";
  const Info info =
      info_of(dir, "e.gguf", write_bytes(document({pair("general.name", Value::string(name))})));
  ASSERT_EQ(info.name, name);  // kept as the bytes
  const std::string text = render_info_text(info, false);
  EXPECT_NE(text.find(R"("a\u{202e}b\u{200b}c\x1b[31m\n\xff 中")"), std::string::npos) << text;
  const json doc = json::parse(render_info_json({info}));
  EXPECT_EQ(doc["files"][0]["model"]["name"],
            "a\xE2\x80\xAE"
            "b\xE2\x80\x8B"
            "c\x1B[31m\n\xEF\xBF\xBD \xE4\xB8\xAD");  // invalid UTF-8 becomes U+FFFD in JSON
}

TEST(Info, LongStringsAreCutUnlessFull) {
  TempDir dir;
  const ByteVector bytes =
      write_bytes(document({pair("test.long", Value::string(std::string(5000, 'x')))}));
  const Info info = info_of(dir, "l.gguf", bytes);
  const InfoPair* p = pair_named(info, "test.long");
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->value.elided);
  EXPECT_EQ(p->value.count, 5000u);
  EXPECT_EQ(p->value.text, "\"" + std::string(kInfoStringHead, 'x') + "...(5000 bytes)\"");
  const Info full = info_of(dir, "l.gguf", bytes, InfoOptions{true});
  EXPECT_EQ(pair_named(full, "test.long")->value.text, "\"" + std::string(5000, 'x') + "\"");
}

TEST(Info, ChatTemplatesAreMatchedWithLlamaCppsOwn) {
  TempDir dir;
  const detail::KnownTemplate& known = detail::known_templates().front();
  std::string edited(known.text);
  edited.insert(edited.size() / 2, "{# a note #}\n");
  const Info info = info_of(
      dir, "t.gguf",
      write_bytes(document({pair("tokenizer.chat_template", Value::string(std::string(known.text))),
                            pair("tokenizer.chat_template.tool_use", Value::string(edited)),
                            pair("tokenizer.chat_template.rag", Value::u32(1))})));
  ASSERT_EQ(info.chat_templates.size(), 3u);
  EXPECT_EQ(info.chat_templates[0].key, "tokenizer.chat_template");
  EXPECT_EQ(info.chat_templates[0].bytes, known.text.size());
  EXPECT_EQ(info.chat_templates[0].known, detail::find_identical(known.text)->name);
  EXPECT_EQ(info.chat_templates[1].near, known.name);
  EXPECT_TRUE(info.chat_templates[1].known.empty());
  EXPECT_EQ(info.chat_templates[2].bytes, 0u);  // not a string: listed, nothing matched
}

TEST(Info, SpecialTokensOutsideTheVocabularyHaveNoText) {
  TempDir dir;
  const Info info =
      info_of(dir, "s.gguf",
              write_bytes(document({pair("tokenizer.ggml.tokens", strings(3)),
                                    pair("tokenizer.ggml.bos_token_id", Value::u32(2)),
                                    pair("tokenizer.ggml.eos_token_id", Value::u32(7)),
                                    pair("tokenizer.ggml.padding_token_id", Value::i32(-1))})));
  ASSERT_EQ(info.special_tokens.size(), 2u);  // a negative id is not an id
  EXPECT_EQ(info.special_tokens[0].text, "t2");
  EXPECT_EQ(info.special_tokens[1].id, 7u);
  EXPECT_FALSE(info.special_tokens[1].text.has_value());
}

TEST(Info, AShardNamesItsSet) {
  TempDir dir;
  const std::vector<Document> shards = model_shards(3);
  std::string first;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const std::string name = "m-0000" + std::to_string(i + 1) + "-of-00003.gguf";
    const std::string path = dir.write(name, write_bytes(shards[i])).string();
    if (i == 0) first = path;
  }
  const Info info = info_file(first, Options{});
  EXPECT_EQ(info.split_no, 0u);
  EXPECT_EQ(info.split_count, 3u);
  ASSERT_EQ(info.shards.size(), 3u);
  EXPECT_EQ(info.shards[2], (dir.path() / "m-00003-of-00003.gguf").string());
  EXPECT_EQ(info.report.exit_status(), 0);
  EXPECT_NE(render_info_text(info, false).find("shard 1 of 3"), std::string::npos);
}

TEST(Info, ARejectedFileShowsWhatWasRead) {
  TempDir dir;
  const Written whole = write(model_document());  // cut inside the second tensor info
  const Info info =
      info_of(dir, "cut.gguf", prefix(whole.bytes, whole.layout.tensors[1].name_offset + 3));
  EXPECT_EQ(info.report.exit_status(), 1);
  EXPECT_EQ(info.architecture, "llama");
  EXPECT_FALSE(info.parameters.has_value());  // not every tensor was read
  EXPECT_NE(render_info_text(info, false).find(": FAIL: "), std::string::npos);
}

TEST(Info, AnUnreadableInputIsExitTwo) {
  const Info info = info_file("/nonexistent/model.gguf", Options{});
  EXPECT_EQ(info.report.exit_status(), 2);
  EXPECT_TRUE(info.metadata.empty());
  const json doc = json::parse(render_info_json({info}));
  EXPECT_EQ(doc["files"][0]["verdict"]["status"], "unreadable");
  EXPECT_FALSE(doc["files"][0].contains("model"));
}

TEST(Info, TheCommandLine) {
  TempDir dir;
  const std::string good = dir.write("good.gguf", write_bytes(model_document())).string();
  const CliRun ok = run_cli({"info", good});
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("model           llama \"test model\""), std::string::npos) << ok.out;
  const CliRun both =
      run_cli({"info", "--format", "json", good, dir.path().string() + "/none.gguf"});
  EXPECT_EQ(both.status, 2);  // the worst of the files
  EXPECT_EQ(json::parse(both.out)["files"].size(), 2u);
  const CliRun bad = run_cli({"info", "--format", "yaml", good});
  EXPECT_EQ(bad.status, 3);  // a usage error (the message goes to stderr)
  EXPECT_TRUE(bad.out.empty());
  const CliRun none = run_cli({"info"});
  EXPECT_EQ(none.status, 3);
}

// C1 controls (CSI U+009B, OSC U+009D) and bidi overrides are escaped in JSON strings too
// (\u009b, \u202e): a tool that prints a value cannot be made to move the cursor or reorder a
// line; a JSON reader still gets the same text.
TEST(Info, JsonEscapesC1AndBidiControls) {
  TempDir dir;
  const std::string name =
      "csi\xC2\x9B"
      "31m osc\xC2\x9D"
      "0;t rlo\xE2\x80\xAE"
      "x lri\xE2\x81\xA6"
      "y del\x7F";
  const std::string path =
      dir.write("c1.gguf", write_bytes(document({pair("general.name", Value::string(name))})))
          .string();
  const Info info = info_file(path, Options{});
  for (const std::string& text :
       {render_info_json({info}), run_cli({"info", "--format", "json", path}).out}) {
    for (const char* raw : {"\xC2\x9B", "\xC2\x9D", "\xE2\x80\xAE", "\xE2\x81\xA6", "\x7F"}) {
      EXPECT_EQ(text.find(raw), std::string::npos) << text;
    }
    EXPECT_NE(text.find(R"("csi\u009b31m osc\u009d0;t rlo\u202ex lri\u2066y del\u007f")"),
              std::string::npos)
        << text;
    EXPECT_EQ(json::parse(text)["files"][0]["model"]["name"], name);
  }
}

// A file written pair by pair, straight to disk (the test holds none of it): `count` pairs
// "k.NNNNNNNN" = u8, then, when `array` is non-zero, one u8 array of that many elements.
std::string raw_file(const TempDir& dir, const std::string& name, std::uint64_t count,
                     std::uint64_t array) {
  const std::filesystem::path path = dir.path() / name;
  std::ofstream out(path, std::ios::binary);
  const auto u32 = [&](std::uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  const auto u64 = [&](std::uint64_t v) { out.write(reinterpret_cast<const char*>(&v), 8); };
  const auto str = [&](const std::string& t) {
    u64(t.size());
    out.write(t.data(), static_cast<std::streamsize>(t.size()));
  };
  out.write("GGUF", 4);
  u32(3);
  u64(0);                            // tensors
  u64(count + (array > 0 ? 1 : 0));  // pairs
  char key[32];
  for (std::uint64_t i = 0; i < count; ++i) {
    std::snprintf(key, sizeof key, "k.%08llu", static_cast<unsigned long long>(i));
    str(key);
    u32(0);  // u8
    out.put(static_cast<char>(i & 0x7f));
  }
  if (array > 0) {
    str("test.bytes");
    u32(9);  // array
    u32(0);  // of u8
    u64(array);
    std::vector<char> block(1 << 20);
    for (std::size_t k = 0; k < block.size(); ++k) block[k] = static_cast<char>(k % 251);
    for (std::uint64_t left = array; left > 0;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
      out.write(block.data(), static_cast<std::streamsize>(n));
      left -= n;
    }
  }
  return path.string();
}

// info streams what it shows: a file of a million pairs costs it about what it costs `check`,
// not its text and a JSON tree of every pair (2.5 GB where check used 252 MB, for 4M pairs).
// Peak RSS of the children, measured by the kernel; no timing.
TEST(Info, AMillionPairsCostWhatCheckCosts) {
#ifdef GGUFCHECK_TESTS_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine make peak memory no measure";
#endif
  TempDir dir;
  const std::string path = raw_file(dir, "pairs.gguf", 1000000, 0);
  const CliRun check = run_cli({"check", "--no-model-checks", path});
  ASSERT_EQ(check.signal, 0);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"info", "--no-model-checks", "--format", "json", path},
        std::vector<std::string>{"info", "--no-model-checks", path}}) {
    long rss = 0;
    {  // the output dropped before the next run (see AnArrayShownWholeIsStreamed)
      const CliRun info = run_cli(args);
      EXPECT_EQ(info.status, check.status) << args[3];
      EXPECT_GT(info.out.size(), std::size_t{1000000} * 20);
      EXPECT_NE(info.out.find("k.00999999"), std::string::npos);
      rss = info.max_rss_kib;
    }
    RecordProperty("check_rss_kib", static_cast<int>(check.max_rss_kib));
    RecordProperty("info_rss_kib", static_cast<int>(rss));
    EXPECT_LT(rss, check.max_rss_kib * 3 / 2 + 16 * 1024)
        << "info " << rss << " KiB, check " << check.max_rss_kib << " KiB";
  }
}

// --full shows an array whole, written as it is walked: 16 MiB of u8 cost the mapping's pages,
// not 5 bytes of text and a JSON node per element (5.25 GB for 100 MB). The outputs are checked
// and dropped before the next run: a child's peak RSS counts what it shares with this process
// until it execs.
TEST(Info, AnArrayShownWholeIsStreamed) {
#ifdef GGUFCHECK_TESTS_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine make peak memory no measure";
#endif
  TempDir dir;
  constexpr std::uint64_t kElements = std::uint64_t{16} << 20;
  const std::string path = raw_file(dir, "array.gguf", 0, kElements);
  const CliRun check = run_cli({"check", "--no-model-checks", path});
  ASSERT_EQ(check.signal, 0);
  const long bound_kib = check.max_rss_kib + static_cast<long>(kElements / 1024) + 32 * 1024;
  long json_rss = 0;
  {
    const CliRun run = run_cli({"info", "--no-model-checks", "--full", "--format", "json", path});
    EXPECT_EQ(run.status, check.status);
    json_rss = run.max_rss_kib;
    EXPECT_TRUE(json::accept(run.out));  // valid JSON, checked without building a tree
    EXPECT_NE(run.out.find("\"count\": 16777216"), std::string::npos);
    EXPECT_EQ(run.out.find("\"elided\""), std::string::npos);
  }
  EXPECT_LT(json_rss, bound_kib) << "check " << check.max_rss_kib << " KiB";
  long text_rss = 0;
  {
    const CliRun run = run_cli({"info", "--no-model-checks", "--full", path});
    EXPECT_EQ(run.status, check.status);
    text_rss = run.max_rss_kib;
    EXPECT_NE(run.out.find("test.bytes array[uint8]   [0, 1, 2, "), std::string::npos)
        << run.out.substr(0, 2000);
    EXPECT_NE(run.out.find(", 249, 250, 0, 1, "), std::string::npos);
    EXPECT_EQ(run.out.find("more]"), std::string::npos);
  }
  EXPECT_LT(text_rss, bound_kib) << "check " << check.max_rss_kib << " KiB";
  RecordProperty("check_rss_kib", static_cast<int>(check.max_rss_kib));
  RecordProperty("info_full_json_rss_kib", static_cast<int>(json_rss));
  RecordProperty("info_full_text_rss_kib", static_cast<int>(text_rss));
}

}  // namespace
}  // namespace ggufcheck::testing
