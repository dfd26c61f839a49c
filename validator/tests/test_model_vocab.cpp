// The vocabulary as llama.cpp's llama_vocab::load reads it (validator/src/llama_loader/vocab.cpp,
// GGUF7006-7010): one case per rule, each built with the writer, each verdict one the pinned
// llama.cpp gives (checked with its loader on the same shapes: see the report of issue 15).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "llama_loader/token_index.hpp"
#include "test_support.hpp"

namespace ggufcheck::testing {
namespace {

constexpr std::int32_t kNormal = 1;
constexpr std::int32_t kControl = 3;
constexpr std::int32_t kUserDefined = 4;
constexpr std::int32_t kByte = 6;

Value strings(const std::vector<std::string>& texts) {
  std::vector<Value> items;
  for (const std::string& t : texts) items.push_back(Value::string(t));
  return Value::array(ValueType::String, std::move(items));
}
Value int32s(const std::vector<std::int32_t>& values) {
  std::vector<Value> items;
  for (const std::int32_t v : values) items.push_back(Value::i32(v));
  return Value::array(ValueType::Int32, std::move(items));
}
Value float32s(std::size_t n) {
  return Value::array(ValueType::Float32, std::vector<Value>(n, Value::f32(0)));
}
Value bytes_array(const std::string& bytes) {
  std::vector<Value> items;
  for (const char c : bytes) items.push_back(Value::u8(static_cast<std::uint8_t>(c)));
  return Value::array(ValueType::Uint8, std::move(items));
}

// A vocabulary-only file (no tensors): general.architecture "llama", tokenizer.ggml.model
// `model`, the tokens, and `extra` pairs.
Document vocabulary(const std::string& model, const std::vector<std::string>& tokens,
                    std::vector<KeyValue> extra = {}) {
  std::vector<KeyValue> pairs = {pair("tokenizer.ggml.model", Value::string(model)),
                                 pair("tokenizer.ggml.tokens", strings(tokens))};
  for (KeyValue& kv : extra) pairs.push_back(std::move(kv));
  return document(std::move(pairs));
}
Document gpt2(const std::vector<std::string>& tokens, std::vector<KeyValue> extra = {}) {
  extra.push_back(pair("tokenizer.ggml.merges", strings({"a b"})));
  return vocabulary("gpt2", tokens, std::move(extra));
}

Report run(const Document& doc, Profile profile = Profile::LlamaCpp) {
  Options options;
  options.profile = profile;
  return check(write_bytes(doc), options);
}

std::vector<const Finding*> findings_of(const Report& report, Code code) {
  std::vector<const Finding*> out;
  for (const Finding& f : report.findings) {
    if (f.code == code) out.push_back(&f);
  }
  return out;
}

std::size_t model_findings(const Report& report) {
  std::size_t n = 0;
  for (const Finding& f : report.findings) {
    if (catalogue_entry(f.code).area == Area::Model) ++n;
  }
  return n;
}

// The code is an error in strict and llama.cpp and silent in spec, and the only Model finding.
void expect_only(const Document& doc, Code code, const std::string& message_part = {}) {
  for (const Profile profile : {Profile::Strict, Profile::LlamaCpp, Profile::Spec}) {
    SCOPED_TRACE(std::string(to_string(profile)));
    const Report report = run(doc, profile);
    const auto found = findings_of(report, code);
    if (profile == Profile::Spec) {
      EXPECT_TRUE(found.empty());
      continue;
    }
    ASSERT_EQ(found.size(), 1U);
    EXPECT_EQ(found[0]->severity, Severity::Error);
    EXPECT_EQ(model_findings(report), 1U);
    if (!message_part.empty()) {
      EXPECT_NE(found[0]->message.find(message_part), std::string::npos) << found[0]->message;
    }
  }
}

void expect_no_model_finding(const Document& doc, Profile profile = Profile::LlamaCpp) {
  const Report report = run(doc, profile);
  for (const Finding& f : report.findings) {
    EXPECT_NE(catalogue_entry(f.code).area, Area::Model) << f.path << ": " << f.message;
  }
}

// --- duplicate tokens (GGUF7010) ----------------------------------------------------------------

TEST(Vocabulary, DuplicateTokenIsReportedAtTheSecondNamingTheFirst) {
  const Document doc = vocabulary("llama", {"<unk>", "a", "a"});
  // A container ggufcheck accepted before the model checks; llama.cpp aborts on it
  // (GGML_ASSERT(id_to_token.size() == token_to_id.size())).
  EXPECT_EQ(check(write_bytes(doc)).errors, 0U);
  expect_only(doc, Code::DuplicateToken, "token 2 \"a\" repeats token 1");
  const Report report = run(doc);
  const Finding& f = *find(report, Code::DuplicateToken);
  EXPECT_EQ(f.path, "kv[2] \"tokenizer.ggml.tokens\"[2]");
  const Written w = write(doc);
  // The second "a": element type (4), count (8), "<unk>" (8 + 5), "a" (8 + 1), then the length.
  EXPECT_EQ(f.offset, w.layout.pairs[2].value_offset + 4 + 8 + 13 + 9);
  EXPECT_EQ(f.length, 9U);
}

TEST(Vocabulary, EveryRepeatIsReported) {
  const Report report = run(vocabulary("llama", {"a", "b", "a", "b", "a"}));
  const auto found = findings_of(report, Code::DuplicateToken);
  ASSERT_EQ(found.size(), 3U);
  EXPECT_NE(found[0]->message.find("token 2 \"a\" repeats token 0"), std::string::npos);
  EXPECT_NE(found[1]->message.find("token 3 \"b\" repeats token 1"), std::string::npos);
  EXPECT_NE(found[2]->message.find("token 4 \"a\" repeats token 0"), std::string::npos);
}

TEST(Vocabulary, TokensEqualUpToANulAreDuplicates) {
  const Document doc = vocabulary("llama", {"x", std::string("a\0x", 3), std::string("a\0y", 3)});
  expect_only(doc, Code::DuplicateToken, "is \"a\" up to its NUL as llama.cpp reads it");
  // "a" and "a\0x" too: llama.cpp reads both as "a".
  EXPECT_EQ(
      findings_of(run(vocabulary("llama", {"a", std::string("a\0", 2)})), Code::DuplicateToken)
          .size(),
      1U);
}

TEST(Vocabulary, AnEmptyTokenIsNamedByItsIndex) {
  // Token 2 is empty: llama.cpp names it "[EMPTY_2]", the text of token 0.
  const Document first = vocabulary("llama", {"[EMPTY_2]", "x", ""});
  expect_only(first, Code::DuplicateToken,
              "token 2 is empty, which llama.cpp reads as \"[EMPTY_2]\"");
  EXPECT_EQ(run(first).findings[0].path, "kv[2] \"tokenizer.ggml.tokens\"[2]");
  // The other order: token 1 has the name of the empty token 0.
  expect_only(vocabulary("llama", {"", "[EMPTY_0]"}), Code::DuplicateToken,
              "token 1 \"[EMPTY_0]\" is the name llama.cpp gives the empty token 0");
  // A token empty up to its NUL is empty.
  expect_only(vocabulary("llama", {"[EMPTY_1]", std::string("\0z", 2)}), Code::DuplicateToken);
  // Not the same name: another index, leading zeros, a suffix; empty tokens among themselves.
  expect_no_model_finding(
      vocabulary("llama", {"[EMPTY_1]x", "", "[EMPTY_01]", "[EMPTY_3]", "", ""}));
}

TEST(Vocabulary, ANoVocabModelReadsNoTokens) {
  // load() returns before the tokens for "no_vocab" and "none": duplicates do not matter.
  expect_no_model_finding(vocabulary("no_vocab", {"a", "a"}));
  expect_no_model_finding(document({pair("tokenizer.ggml.model", Value::string("none"))}));
  // Its one key, {arch}.vocab_size, is read as uint32.
  expect_only(document({pair("tokenizer.ggml.model", Value::string("none")),
                        pair("llama.vocab_size", Value::u64(8))}),
              Code::VocabularyUnreadable, "llama.vocab_size is uint64");
}

TEST(Vocabulary, ALargeVocabularyIsCheckedInOnePass) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 262144; ++i) tokens.push_back("t" + std::to_string(i));
  expect_no_model_finding(vocabulary("llama", tokens));
  tokens[262143] = "t17";  // one repeat at the end
  const Report report = run(vocabulary("llama", tokens));
  const auto found = findings_of(report, Code::DuplicateToken);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_NE(found[0]->message.find("token 262143 \"t17\" repeats token 17"), std::string::npos);
}

// A vocabulary of 16,384 tokens or more is indexed on a thread of its own while the reader reads
// on (llama_loader/token_index.hpp); the findings must be the ones of the index made inline.
TEST(Vocabulary, TheTokenIndexThreadFindsWhatTheInlineIndexFinds) {
  constexpr int kTokens = 20000;
  std::vector<std::string> tokens;
  std::vector<std::int32_t> types;
  for (int i = 0; i < kTokens; ++i) {
    // Texts of every length up to 40 bytes: both hashes of the index, and the copy at the end.
    tokens.push_back(std::string(static_cast<std::size_t>(i % 40), 'x') + std::to_string(i));
    types.push_back(kNormal);
  }
  tokens[19998] = tokens[5];      // repeats token 5
  tokens[19000] = tokens[18999];  // repeats token 18999
  tokens[300] = "";               // empty: llama.cpp names it [EMPTY_300]
  tokens[12000] = "[EMPTY_300]";
  tokens[7] = "ab";  // a byte token too short to read
  types[7] = kByte;
  const auto file = [&](const std::vector<std::string>& texts) {
    return write_bytes(vocabulary("llama", texts,
                                  {pair("tokenizer.ggml.token_type", int32s(types)),
                                   pair("general.name", Value::string("phi3"))}));
  };
  const auto findings = [](const ByteVector& bytes, bool thread) {
    Options options;
    options.profile = Profile::LlamaCpp;
    options.helper_thread = thread;
    std::vector<std::string> out;
    for (const Finding& f : check(bytes, options).findings) {
      out.push_back(
          fmt::format("GGUF{} {} {} {}", static_cast<int>(f.code), f.offset, f.path, f.message));
    }
    return out;
  };
  const ByteVector bytes = file(tokens);
  const std::vector<std::string> threaded = findings(bytes, true);
  EXPECT_EQ(threaded, findings(bytes, false));
  // The repeats, the empty token's name, the short byte token and phi3's special tokens.
  const auto has = [&](const std::vector<std::string>& all, const std::string& part) {
    return std::count_if(all.begin(), all.end(),
                         [&](const std::string& f) { return f.find(part) != std::string::npos; });
  };
  EXPECT_EQ(has(threaded, "token 19998 \"xxxxx5\" repeats token 5"), 1);
  EXPECT_EQ(has(threaded, "token 19000 \"" + tokens[18999] + "\" repeats token 18999"), 1);
  EXPECT_EQ(has(threaded, "token 12000 \"[EMPTY_300]\" is the name llama.cpp gives"), 1);
  EXPECT_EQ(has(threaded, "token 7 \"ab\" is a byte token"), 1);
  EXPECT_EQ(has(threaded, "looks up the token \"<s>\""), 1);
  EXPECT_EQ(has(threaded, "GGUF70"), static_cast<long>(threaded.size()));
  // A text with a NUL makes the array unclean: the check indexes it inline, as llama.cpp cuts it.
  std::vector<std::string> cut = tokens;
  cut[15000] = tokens[5] + std::string(1, '\0') + "tail";
  const ByteVector unclean = file(cut);
  const std::vector<std::string> unclean_threaded = findings(unclean, true);
  EXPECT_EQ(unclean_threaded, findings(unclean, false));
  EXPECT_EQ(has(unclean_threaded, "token 15000 \"xxxxx5\\x00tail\" is \"xxxxx5\" up to its NUL"),
            1);
  // Cut inside the tokens: the thread walked bytes the reader then refused; only the cut is
  // reported, and nothing is read past the input.
  for (const std::size_t keep : {bytes.size() / 2, bytes.size() / 5, bytes.size() - 3}) {
    const ByteVector part = prefix(bytes, keep);
    EXPECT_EQ(findings(part, true), findings(part, false));
    EXPECT_EQ(model_findings(check(part, Options{})), 0U);
  }
}

// The index's answers do not depend on its hash: with every text hashed alike it falls back to
// its ordered map after 256 probes, and with every text dealt to one partition that partition
// spills past its buffer; each finds the same repeats, lookalikes, texts and token offsets.
TEST(Vocabulary, TheTokenIndexAnswersTheSameWhateverItsHash) {
  constexpr int kTokens = 20000;  // more than one partition's worth
  std::vector<std::string> texts;
  for (int i = 0; i < kTokens; ++i) texts.push_back("t" + std::to_string(i % 15000));
  texts[10] = "";
  texts[kTokens - 1] = "[EMPTY_10]";
  texts[kTokens - 2] = std::string(40, 'y');  // past the short hash
  ByteVector bytes(100, 'z');                 // the array starts past the input's start
  std::vector<std::uint64_t> offsets;
  for (const std::string& t : texts) {
    offsets.push_back(bytes.size());
    append_u64(bytes, t.size());
    bytes.insert(bytes.end(), t.begin(), t.end());
  }
  const detail::Input input(Bytes(bytes.data(), bytes.size()));
  using detail::IndexHash;
  const auto make_index = [&](IndexHash mode) {
    return std::make_unique<detail::TokenIndex>(input, 100, texts.size(), 8, Endian::Little, false,
                                                nullptr, mode);
  };
  const auto hashed = make_index(IndexHash::Seeded);
  const auto colliding = make_index(IndexHash::AllCollide);
  const auto crowded = make_index(IndexHash::OnePartition);
  // Whether a seeded index spills depends on the process's seed (a partition that draws a few
  // percent more than its share): not asserted; the answers below are the same either way.
  EXPECT_FALSE(hashed->ordered());
  EXPECT_TRUE(colliding->ordered());
  EXPECT_FALSE(crowded->ordered());
  EXPECT_TRUE(crowded->spilled());
  for (const auto* index : {hashed.get(), colliding.get(), crowded.get()}) {
    EXPECT_TRUE(index->complete);
    ASSERT_EQ(index->walked(), texts.size());
    // t0..t4997 again at 15000..19997, but for t10 (token 10 is empty)
    ASSERT_EQ(index->duplicates.size(), 4997U);
    EXPECT_EQ(index->duplicates.front(), std::make_pair(std::uint64_t{15000}, std::uint64_t{0}));
    EXPECT_EQ(index->duplicates.back(), std::make_pair(std::uint64_t{19997}, std::uint64_t{4997}));
    EXPECT_EQ(index->lookalikes,
              (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{kTokens - 1, 10}}));
    EXPECT_TRUE(index->empty(10));
    EXPECT_FALSE(index->empty(11));
    EXPECT_EQ(index->find("t14999"), std::optional<std::uint64_t>(14999));
    EXPECT_EQ(index->find("t10"), std::optional<std::uint64_t>(15010));
    EXPECT_EQ(index->find(std::string(40, 'y')), std::optional<std::uint64_t>(kTokens - 2));
    EXPECT_EQ(index->find("t15000"), std::nullopt);
  }
  // Offsets in order, backwards, and jumping about (from the offsets of every 64th token).
  for (std::uint64_t j = 0; j < texts.size(); ++j) ASSERT_EQ(hashed->offset(j), offsets[j]) << j;
  for (std::uint64_t j = texts.size(); j-- > 0;) ASSERT_EQ(hashed->offset(j), offsets[j]) << j;
  std::mt19937 engine(20261203);
  for (int i = 0; i < 1000; ++i) {
    const std::uint64_t j = engine() % texts.size();
    ASSERT_EQ(hashed->offset(j), offsets[j]) << j;
  }
}

// The repeats found later, by two threads taking partitions at once (as the reader's thread helps
// the index's once it is done reading), are the ones found at once by one.
TEST(Vocabulary, TheTokenIndexFindsTheSameRepeatsOnTwoThreads) {
  std::vector<std::string> texts;
  for (int i = 0; i < 60000; ++i) texts.push_back("w" + std::to_string(i % 40000));
  texts[20] = "";
  texts[59999] = "[EMPTY_20]";
  ByteVector bytes(7, 'z');
  for (const std::string& t : texts) {
    append_u64(bytes, t.size());
    bytes.insert(bytes.end(), t.begin(), t.end());
  }
  const detail::Input input(Bytes(bytes.data(), bytes.size()));
  using detail::IndexFinish;
  using detail::IndexHash;
  for (const IndexHash mode : {IndexHash::Seeded, IndexHash::AllCollide, IndexHash::OnePartition}) {
    const detail::TokenIndex at_once(input, 7, texts.size(), 8, Endian::Little, false, nullptr,
                                     mode);
    detail::TokenIndex later(input, 7, texts.size(), 8, Endian::Little, false, nullptr, mode,
                             IndexFinish::Later);
    std::thread helper([&] { later.dedupe(1); });
    later.dedupe(0);
    helper.join();
    later.finish();
    EXPECT_EQ(later.ordered(), at_once.ordered());
    EXPECT_EQ(later.duplicates, at_once.duplicates);
    EXPECT_EQ(later.lookalikes, at_once.lookalikes);
    ASSERT_EQ(later.duplicates.size(), 19998U);  // w0..w19998 again, but w20 (token 20 is empty)
    EXPECT_EQ(later.lookalikes,
              (std::vector<std::pair<std::uint64_t, std::uint64_t>>{{59999, 20}}));
    EXPECT_EQ(later.find("w39999"), std::optional<std::uint64_t>(39999));
  }
}

TEST(Vocabulary, ManyEqualTokensAreNotQuadratic) {
  // 100,000 tokens "a": every one after the first repeats token 0 (reported up to the findings
  // limit, all counted).
  const Report report = run(vocabulary("llama", std::vector<std::string>(100000, "a")));
  EXPECT_EQ(report.errors, 99999U);
}

// --- the tokenizer model and pre-tokenizer (GGUF7006, GGUF7007) -----------------------------

TEST(Vocabulary, UnknownOrMissingTokenizerModel) {
  expect_only(vocabulary("llamax", {"a"}), Code::UnknownTokenizerModel,
              "tokenizer \"llamax\" is not one llama.cpp knows");
  expect_only(document({pair("tokenizer.ggml.tokens", strings({"a"}))}),
              Code::UnknownTokenizerModel, "no tokenizer.ggml.model");
  // Read as a C string.
  expect_no_model_finding(vocabulary(std::string("llama\0x", 7), {"a"}));
  for (const char* known : {"llama", "bert", "t5", "rwkv", "test"}) {
    SCOPED_TRACE(known);
    expect_no_model_finding(vocabulary(known, {"a", "b", "c"}));
  }
}

TEST(Vocabulary, TokenizerModelOfAnotherTypeIsRefused) {
  // llama.cpp profile: GGUF5008 warns, GGUF7009 says llama.cpp refuses. Strict: GGUF5008 fails
  // the container, and the model checks say what llama.cpp makes of it too.
  const Document doc = document(
      {pair("tokenizer.ggml.model", Value::u32(1)), pair("tokenizer.ggml.tokens", strings({"a"}))});
  const Report lc = run(doc);
  ASSERT_NE(find(lc, Code::VocabularyUnreadable), nullptr);
  EXPECT_NE(find(lc, Code::VocabularyUnreadable)->message.find("tokenizer.ggml.model is uint32"),
            std::string::npos);
  EXPECT_EQ(find(lc, Code::KeyWrongType)->severity, Severity::Warning);
  const Report strict = run(doc, Profile::Strict);
  EXPECT_EQ(find(strict, Code::KeyWrongType)->severity, Severity::Error);
  EXPECT_EQ(model_findings(strict), 1U);
  ASSERT_NE(find(strict, Code::VocabularyUnreadable), nullptr);
}

TEST(Vocabulary, PreTokenizerOfABpeVocabulary) {
  expect_only(gpt2({"a", "b"}, {pair("tokenizer.ggml.pre", Value::string("nonsense"))}),
              Code::UnknownPreTokenizer, "pre-tokenizer \"nonsense\" is not one llama.cpp knows");
  for (const char* known : {"default", "gpt-2", "llama-bpe", "qwen2", "deepseek-v3", ""}) {
    SCOPED_TRACE(known);
    expect_no_model_finding(gpt2({"a", "b"}, {pair("tokenizer.ggml.pre", Value::string(known))}));
  }
  expect_no_model_finding(gpt2({"a", "b"}));  // missing: "default"
  expect_no_model_finding(
      gpt2({"a", "b"}, {pair("tokenizer.ggml.pre", Value::string(std::string("qwen2\0z", 7)))}));
  // Only BPE vocabularies have one: llama ignores it; gemma4 sets its own.
  expect_no_model_finding(
      vocabulary("llama", {"a"}, {pair("tokenizer.ggml.pre", Value::string("nonsense"))}));
  expect_no_model_finding(vocabulary("gemma4", {"a"},
                                     {pair("tokenizer.ggml.pre", Value::string("nonsense")),
                                      pair("tokenizer.ggml.merges", strings({}))}));
  // But its type is read for every vocabulary.
  const Report typed = run(vocabulary("llama", {"a"}, {pair("tokenizer.ggml.pre", Value::u32(1))}));
  ASSERT_NE(find(typed, Code::VocabularyUnreadable), nullptr);
}

// --- merges (GGUF7008) ------------------------------------------------------------------------

TEST(Vocabulary, BpeVocabulariesNeedMerges) {
  for (const char* model : {"gpt2", "hybriddna", "whitespace", "gemma4"}) {
    SCOPED_TRACE(model);
    expect_only(vocabulary(model, {"a", "b"}), Code::MissingMerges, "no tokenizer.ggml.merges");
  }
  // Kimi-K2's pre-tokenizer does without them, except under gemma4.
  expect_no_model_finding(
      vocabulary("gpt2", {"a"}, {pair("tokenizer.ggml.pre", Value::string("kimi-k2"))}));
  expect_only(vocabulary("gemma4", {"a"}, {pair("tokenizer.ggml.pre", Value::string("kimi-k2"))}),
              Code::MissingMerges);
  // Others do not read them; an empty list is fine.
  expect_no_model_finding(vocabulary("llama", {"a"}));
  expect_no_model_finding(vocabulary("gpt2", {"a"}, {pair("tokenizer.ggml.merges", strings({}))}));
  // Not a string array: llama.cpp refuses (GGUF5008 fails strict first).
  const Report typed = run(vocabulary(
      "gpt2", {"a"},
      {pair("tokenizer.ggml.merges", Value::array(ValueType::Uint32, {Value::u32(1)}))}));
  ASSERT_NE(find(typed, Code::MissingMerges), nullptr);
  EXPECT_NE(find(typed, Code::MissingMerges)->message.find("uint32[]"), std::string::npos);
}

// --- the token arrays (GGUF7009) ----------------------------------------------------------------

TEST(Vocabulary, TokensAreRequiredAsAStringArray) {
  expect_only(document({pair("tokenizer.ggml.model", Value::string("llama"))}),
              Code::VocabularyUnreadable, "no tokenizer.ggml.tokens");
  const Report typed = run(document({pair("tokenizer.ggml.model", Value::string("llama")),
                                     pair("tokenizer.ggml.tokens", int32s({1, 2}))}));
  EXPECT_NE(find(typed, Code::VocabularyUnreadable), nullptr);
}

TEST(Vocabulary, ScoresAsLlamaCppReadsThem) {
  const auto with_scores = [](Value scores) {
    return vocabulary("llama", {"a", "b", "c"}, {pair("tokenizer.ggml.scores", std::move(scores))});
  };
  // int32 scores are read as integers (GGUF5008 warns in the llama.cpp profile).
  const Report ints = run(with_scores(int32s({0, -1, -2})));
  EXPECT_EQ(model_findings(ints), 0U);
  EXPECT_EQ(ints.errors, 0U);
  // Any other type is refused.
  EXPECT_NE(find(run(with_scores(Value::array(ValueType::Float64, {Value::f64(0)}))),
                 Code::VocabularyUnreadable),
            nullptr);
  EXPECT_NE(find(run(with_scores(Value::f32(0))), Code::VocabularyUnreadable), nullptr);
  // Fewer than the tokens: refused. More: fine (GGUF5009 warns).
  const Report short_scores = run(with_scores(float32s(2)));
  ASSERT_NE(find(short_scores, Code::VocabularyUnreadable), nullptr);
  EXPECT_NE(find(short_scores, Code::VocabularyUnreadable)
                ->message.find("tokenizer.ggml.scores has 2 entries, fewer than the 3 tokens"),
            std::string::npos);
  const Report long_scores = run(with_scores(float32s(4)));
  EXPECT_EQ(long_scores.errors, 0U);
  EXPECT_EQ(find(long_scores, Code::TokenizerLengthMismatch)->severity, Severity::Warning);
}

TEST(Vocabulary, TokenTypesAsLlamaCppReadsThem) {
  const auto with_types = [](Value types) {
    return vocabulary("llama", {"a", "b", "c"},
                      {pair("tokenizer.ggml.token_type", std::move(types))});
  };
  EXPECT_NE(find(run(with_types(Value::array(ValueType::Uint32,
                                             {Value::u32(1), Value::u32(1), Value::u32(1)}))),
                 Code::VocabularyUnreadable),
            nullptr);
  EXPECT_NE(find(run(with_types(int32s({1, 1}))), Code::VocabularyUnreadable), nullptr);
  // Any value is read (outside 1..6: undefined).
  expect_no_model_finding(with_types(int32s({0, 99, -7})));
}

// --- the scalar keys load() reads (GGUF7009) -----------------------------------------------------

TEST(Vocabulary, KeysLlamaCppReadsMustHaveItsType) {
  struct Case {
    const char* key;
    Value value;
    bool refused;
  };
  const Case cases[] = {
      {"tokenizer.ggml.add_bos_token", Value::u8(1), true},
      {"tokenizer.ggml.add_sep_token", Value::u8(1), true},
      {"tokenizer.ggml.add_space_prefix", Value::u8(1), true},
      {"tokenizer.ggml.remove_extra_whitespaces", Value::u8(1), true},
      {"tokenizer.ggml.normalizer.lowercase", Value::u8(1), true},
      {"tokenizer.ggml.token_type_count", Value::u64(1), true},
      {"tokenizer.ggml.bos_token_id", Value::u64(1), true},
      {"tokenizer.ggml.seperator_token_id", Value::i32(1), true},  // llama.cpp's spelling
      {"tokenizer.ggml.middle_token_id", Value::u64(1), true},     // deprecated, still read
      {"general.name", Value::u32(1), true},
      {"tokenizer.ggml.cls_token_id", Value::u64(1), false},    // not read by load()
      {"tokenizer.ggml.bos_token_id", Value::u32(100), false},  // out of range: ignored
      {"tokenizer.ggml.suppress_tokens", int32s({1, 99, -3}), false},
      {"tokenizer.ggml.suppress_tokens", Value::array(ValueType::Uint32, {Value::u32(1)}), true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.key);
    const Report report = run(vocabulary("llama", {"a", "b"}, {pair(c.key, c.value)}));
    EXPECT_EQ(find(report, Code::VocabularyUnreadable) != nullptr, c.refused);
    EXPECT_EQ(report.errors != 0, c.refused);
  }
}

// --- what the tokenizer does with the tokens (GGUF7009) ------------------------------------------

TEST(Vocabulary, ByteTokensLlamaCppCannotRead) {
  // A byte token's byte is read from its characters 3-4: shorter than 3 bytes throws.
  for (const char* model : {"llama", "t5", "gpt2"}) {
    SCOPED_TRACE(model);
    std::vector<KeyValue> extra = {
        pair("tokenizer.ggml.token_type", int32s({kNormal, kByte, kByte}))};
    if (std::strcmp(model, "gpt2") == 0)
      extra.push_back(pair("tokenizer.ggml.merges", strings({})));
    expect_only(vocabulary(model, {"<0x41>", "ab", "c"}, std::move(extra)),
                Code::VocabularyUnreadable,
                "token 1 \"ab\" (and 1 more token) is a byte token (token_type 6) shorter");
  }
  expect_no_model_finding(vocabulary("llama", {"abc", "<0x41>"},
                                     {pair("tokenizer.ggml.token_type", int32s({kByte, kByte}))}));
  expect_no_model_finding(
      vocabulary("rwkv", {"a"}, {pair("tokenizer.ggml.token_type", int32s({kByte}))}));
  // bert (WPM) aborts on any byte token, unless llama.cpp marks it control by its text.
  expect_only(vocabulary("bert", {"a", "<0x41>"},
                         {pair("tokenizer.ggml.token_type", int32s({kNormal, kByte}))}),
              Code::VocabularyUnreadable, "in a bert (WPM) vocabulary: llama.cpp aborts");
  expect_no_model_finding(vocabulary(
      "bert", {"a", "<|im_end|>"}, {pair("tokenizer.ggml.token_type", int32s({kNormal, kByte}))}));
}

TEST(Vocabulary, BpeTokensAboveUnicodeAreRefused) {
  const std::string above = "\xF4\x90\x80\x80";  // U+110000 as llama.cpp decodes it
  expect_only(gpt2({"a", above}), Code::VocabularyUnreadable, "above U+10FFFF");
  expect_only(gpt2({"a", "\xF7\xBF\xBF\xBF"}), Code::VocabularyUnreadable);
  // Other invalid bytes become U+FFFD; control tokens are not decoded; gemma4's pre-tokenizer
  // keeps the text; SPM does not decode.
  expect_no_model_finding(gpt2({"a", "\xF8\x80\x80\x80", "\xFF"}));
  expect_no_model_finding(
      gpt2({"a", above}, {pair("tokenizer.ggml.token_type", int32s({kNormal, kControl}))}));
  expect_no_model_finding(
      gpt2({"a", above}, {pair("tokenizer.ggml.pre", Value::string("gemma4"))}));
  expect_no_model_finding(vocabulary("llama", {"a", above}));
}

TEST(Vocabulary, Plamo2NeedsEveryByteToken) {
  std::vector<std::string> tokens = {"<unk>"};
  std::vector<std::int32_t> types = {2};
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    types.push_back(kByte);
  }
  tokens.push_back("a");
  types.push_back(kNormal);
  expect_no_model_finding(
      vocabulary("plamo2", tokens, {pair("tokenizer.ggml.token_type", int32s(types))}));
  types[1 + 0x41] = kNormal;  // <0x41> is not a byte token any more
  expect_only(vocabulary("plamo2", tokens, {pair("tokenizer.ggml.token_type", int32s(types))}),
              Code::VocabularyUnreadable, "no byte token <0x41>");
  expect_only(vocabulary("plamo2", {"a"}), Code::VocabularyUnreadable, "(256 bytes missing)");
}

TEST(Vocabulary, VocabulariesWithoutTokens) {
  expect_only(vocabulary("test", {}), Code::VocabularyUnreadable, "SIGFPE");
  expect_only(vocabulary("bert", {}), Code::VocabularyUnreadable);
  expect_only(vocabulary("t5", {}), Code::VocabularyUnreadable);
  for (const char* model : {"llama", "rwkv"}) {
    SCOPED_TRACE(model);
    expect_no_model_finding(vocabulary(model, {}));
  }
  expect_no_model_finding(gpt2({}));
  // t5 tokenizes "\n" to its unknown token 2 when no token starts it.
  expect_only(vocabulary("t5", {"a", "b"}), Code::VocabularyUnreadable, "unknown token 2");
  expect_no_model_finding(vocabulary("t5", {"a", "b", "c"}));
  expect_no_model_finding(vocabulary("t5", {"\n", "b"}));
}

TEST(Vocabulary, T5Charsmap) {
  const auto t5 = [](Value charsmap) {
    return vocabulary("t5", {"a", "b", "c"},
                      {pair("tokenizer.ggml.precompiled_charsmap", std::move(charsmap))});
  };
  const std::string blob0("\0\0\0\0\0", 5);  // blob size 0, then one byte
  expect_no_model_finding(t5(bytes_array(blob0)));
  expect_only(t5(bytes_array(std::string("\0\0\0", 3))), Code::VocabularyUnreadable,
              "fewer than its 4-byte blob size");
  expect_only(t5(bytes_array(std::string("\4\0\0\0\0\0\0\0", 8))), Code::VocabularyUnreadable,
              "says its blob has 4 bytes but the array has 8 bytes");
  expect_only(t5(Value::array(ValueType::Uint16, {Value::u16(0)})), Code::VocabularyUnreadable);
  // One XCDA entry (the root, base 0): "\n" walks to entry 10, past the array.
  expect_only(t5(bytes_array(std::string("\4\0\0\0\0\0\0\0\0", 9))), Code::VocabularyUnreadable,
              "maps the newline through an XCDA index past its entries");
  // ... unless a user-defined token "\n" is matched first.
  expect_no_model_finding(
      vocabulary("t5", {"a", "\n", "c"},
                 {pair("tokenizer.ggml.precompiled_charsmap",
                       bytes_array(std::string("\4\0\0\0\0\0\0\0\0", 9))),
                  pair("tokenizer.ggml.token_type", int32s({kNormal, kUserDefined, kNormal}))}));
  // Other vocabularies do not read it.
  expect_no_model_finding(
      vocabulary("llama", {"a"}, {pair("tokenizer.ggml.precompiled_charsmap", bytes_array("x"))}));
}

TEST(Vocabulary, ModelsNamedPhi3NeedTheirSpecialTokens) {
  const auto named = [](std::vector<std::string> tokens, const std::string& name) {
    return vocabulary("llama", tokens, {pair("general.name", Value::string(name))});
  };
  expect_no_model_finding(named({"</s>", "<unk>", "<s>", "<|endoftext|>"}, "phi3"));
  expect_only(named({"</s>", "<unk>", "x", "<|endoftext|>"}, "My-PHI-3 mini"),
              Code::VocabularyUnreadable, "looks up the token \"<s>\"");
  expect_no_model_finding(named({"a"}, "other"));
  expect_no_model_finding(named({"a"}, std::string("x\0phi3", 6)));  // a C string
}

// --- real files
// -----------------------------------------------------------------------------------

TEST(Vocabulary, RealVocabularyFilesHaveNoModelFinding) {
  std::vector<std::filesystem::path> files;
  for (const auto& dir : {real_gguf_dir(), std::filesystem::path(GGUFCHECK_SOURCE_DIR) / ".deps" /
                                               "conformance" / "llama.cpp" / "models"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() == ".gguf") files.push_back(entry.path());
    }
  }
  ASSERT_GE(files.size(), 6U);  // the six committed ones at least (19 with conformance/setup)
  for (const auto& path : files) {
    for (const Profile profile : {Profile::Strict, Profile::Spec, Profile::LlamaCpp}) {
      Options options;
      options.profile = profile;
      const Report report = validate_file(path.string(), options);
      for (const Finding& f : report.findings) {
        EXPECT_NE(catalogue_entry(f.code).area, Area::Model)
            << path << " " << to_string(profile) << ": " << f.path << ": " << f.message;
      }
    }
  }
}

}  // namespace
}  // namespace ggufcheck::testing
