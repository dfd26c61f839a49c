// The table of the pinned llama.cpp's chat templates (templates/generated/known_templates.inc)
// survives compilation byte for byte, and the matcher finds a template when it is copied exactly
// or with a small edit, reports the edit, and does bounded work on anything else.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include "templates/known_templates.hpp"

namespace ggufcheck::testing {
namespace {

using detail::find_all_identical;
using detail::find_identical;
using detail::find_near;
using detail::known_templates;
using detail::KnownTemplate;
using detail::NearMatch;
using detail::NearSearchWork;

const KnownTemplate& named(std::string_view name) {
  for (const KnownTemplate& known : known_templates()) {
    if (known.name == name) return known;
  }
  throw std::logic_error("no template " + std::string(name));
}

std::string replaced(std::string_view text, std::string_view from, std::string_view to) {
  const std::size_t at = text.find(from);
  if (at == std::string_view::npos) throw std::logic_error("no " + std::string(from));
  return std::string(text.substr(0, at)) + std::string(to) +
         std::string(text.substr(at + from.size()));
}

// Each line with its '\n' (the last one without, when the text does not end in one).
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t end = std::min(text.find('\n', begin), text.size() - 1) + 1;
    lines.push_back(text.substr(begin, end - begin));
    begin = end;
  }
  return lines;
}

std::size_t most_lines() {
  std::size_t most = 0;
  for (const KnownTemplate& known : known_templates()) {
    most = std::max(most, split_lines(known.text).size());
  }
  return most;
}

// Myers with at most 20 rounds: the trimmed ends plus, per round, every diagonal's furthest
// reach (each diagonal's snakes together advance at most N lines), per candidate.
void expect_bounded(const NearSearchWork& work, std::size_t text_lines) {
  const std::size_t per_candidate = (2 * 20 + 3) * (text_lines + most_lines() + 2);
  EXPECT_LE(work.line_comparisons, work.candidates * per_candidate);
}

TEST(KnownTemplates, TableIsThePinnedLlamaCpp) {
  // 70 models/templates/*.jinja and 7 templates of the vocabulary files (command-r's default,
  // tool_use and rag; gemma-4, phi-3, qwen2 and qwen35).
  EXPECT_EQ(known_templates().size(), 77U);
  EXPECT_EQ(detail::known_templates_version(), "llama.cpp de3ff815ea7d (node-llama-cpp 3.22.1)");
  EXPECT_EQ(detail::known_templates_commit(), "de3ff815ea7d559ee917f063901b8986f038abc6");
  EXPECT_TRUE(std::is_sorted(
      known_templates().begin(), known_templates().end(),
      [](const KnownTemplate& a, const KnownTemplate& b) { return a.name < b.name; }));
  std::size_t from_vocabularies = 0;
  for (const KnownTemplate& known : known_templates()) {
    const std::string name(known.name);
    if (name.rfind("ggml-vocab-", 0) != 0) {
      EXPECT_EQ(known.source, "models/templates/" + name + ".jinja");
      continue;
    }
    // ggml-vocab-command-r.tool_use: models/ggml-vocab-command-r.gguf's
    // tokenizer.chat_template.tool_use
    ++from_vocabularies;
    const std::size_t dot = name.find('.');
    const std::string file = name.substr(0, dot);
    const std::string key =
        "tokenizer.chat_template" + (dot == std::string::npos ? "" : name.substr(dot));
    EXPECT_EQ(known.source, "models/" + file + ".gguf, " + key);
  }
  EXPECT_EQ(from_vocabularies, 7U);
  EXPECT_NE(find_identical(std::string(named("ggml-vocab-command-r.tool_use").text)), nullptr);
  EXPECT_NE(find_identical(std::string(named("ggml-vocab-command-r.rag").text)), nullptr);
}

TEST(KnownTemplates, EveryTextHasItsDigest) {
  // SHA-256("abc"), FIPS 180-2's example: the digest function itself.
  const std::array<std::uint8_t, 32> abc = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea,
                                            0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
                                            0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c,
                                            0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
  EXPECT_EQ(detail::template_sha256("abc"), abc);
  for (const KnownTemplate& known : known_templates()) {
    EXPECT_EQ(detail::template_sha256(known.text), known.sha256) << known.name;
  }
}

TEST(KnownTemplates, FindsEachTemplateByItsText) {
  for (const KnownTemplate& known : known_templates()) {
    const std::string copy(known.text);  // elsewhere in memory: found by its bytes
    const KnownTemplate* found = find_identical(copy);
    ASSERT_NE(found, nullptr) << known.name;
    EXPECT_EQ(found->text, known.text);
    EXPECT_LE(found->name, known.name);  // the first of the names with this text
    EXPECT_FALSE(find_near(copy).has_value()) << known.name << ": identical is not near";
  }
  const std::vector<const KnownTemplate*> llama =
      find_all_identical(std::string(named("meta-llama-Llama-3.3-70B-Instruct").text));
  ASSERT_EQ(llama.size(), 2U);
  EXPECT_EQ(llama[0]->name, "meta-llama-Llama-3.1-8B-Instruct");
  EXPECT_EQ(llama[1]->name, "meta-llama-Llama-3.3-70B-Instruct");
}

TEST(KnownTemplates, AnEditedTemplateIsNotIdentical) {
  const std::string_view qwen = named("Qwen-Qwen2.5-7B-Instruct").text;
  std::string edited(qwen);
  edited[edited.size() / 2] ^= 0x20;
  EXPECT_EQ(find_identical(edited), nullptr);
  EXPECT_EQ(find_identical(std::string(qwen) + "\n"), nullptr);
  EXPECT_EQ(find_identical(qwen.substr(0, qwen.size() - 1)), nullptr);
  EXPECT_EQ(find_identical(""), nullptr);
  EXPECT_TRUE(find_all_identical("").empty());
}

TEST(KnownTemplates, NearWithOneChangedLine) {
  const KnownTemplate& qwen = named("Qwen-Qwen2.5-7B-Instruct");
  const std::string text =
      replaced(qwen.text, "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
               "You are a pirate.");
  NearSearchWork work;
  const std::optional<NearMatch> near = find_near(text, &work);
  ASSERT_TRUE(near.has_value());
  EXPECT_EQ(near->known, &qwen);
  EXPECT_EQ(near->lines_removed, 1U);
  EXPECT_EQ(near->lines_added, 1U);
  EXPECT_EQ(near->line_edits(), 2U);
  EXPECT_EQ(near->bytes_removed, 86U);
  EXPECT_EQ(near->bytes_added, 35U);
  EXPECT_EQ(near->first_known_line, 6U);
  EXPECT_EQ(near->first_text_line, 6U);
  const std::vector<std::string> head = {
      "     {%- else %}",
      "-        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}",
      "+        {{- 'You are a pirate.' }}",
      "     {%- endif %}",
  };
  EXPECT_EQ(near->diff_head, head);
  EXPECT_TRUE(work.text_read);
  expect_bounded(work, 54);
}

TEST(KnownTemplates, NearWithAnInsertedSystemPromptLine) {
  const KnownTemplate& qwen = named("Qwen-Qwen2.5-7B-Instruct");
  const std::string text = replaced(qwen.text, "{%- if tools %}\n",
                                    "{%- if tools %}\n    {{- 'Always answer in French.' }}\n");
  const std::optional<NearMatch> near = find_near(text);
  ASSERT_TRUE(near.has_value());
  EXPECT_EQ(near->known, &qwen);
  EXPECT_EQ(near->lines_removed, 0U);
  EXPECT_EQ(near->lines_added, 1U);
  EXPECT_EQ(near->first_known_line, 2U);
  EXPECT_EQ(near->first_text_line, 2U);
  const std::vector<std::string> head = {
      " {%- if tools %}",
      "+    {{- 'Always answer in French.' }}",
      "     {{- '<|im_start|>system\\n' }}",
  };
  EXPECT_EQ(near->diff_head, head);
}

TEST(KnownTemplates, NearWithANewlineAddedAtTheEnd) {
  const KnownTemplate& gemma = named("google-gemma-2-2b-it");
  const std::optional<NearMatch> near = find_near(std::string(gemma.text) + "\n");
  ASSERT_TRUE(near.has_value());
  EXPECT_EQ(near->known, &gemma);
  EXPECT_EQ(near->first_known_line, 4U);
  const std::vector<std::string> head = {
      " ' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model",
      "-'}}{% endif %}",
      "\\ No newline at end of file",
      "+'}}{% endif %}",
  };
  EXPECT_EQ(near->diff_head, head);
}

TEST(KnownTemplates, DiffHeadCutsLongLines) {
  const KnownTemplate& gemma = named("google-gemma-2-2b-it");
  const std::string text = replaced(gemma.text, "| trim + '<end_of_turn>\n", "+ '<end_of_turn>\n");
  const std::optional<NearMatch> near = find_near(text);
  ASSERT_TRUE(near.has_value());
  EXPECT_EQ(near->known, &gemma);
  ASSERT_EQ(near->diff_head.size(), 4U);
  const std::string_view first_line = gemma.text.substr(0, gemma.text.find('\n'));
  ASSERT_GT(first_line.size(), detail::kDiffLineBytes);
  EXPECT_EQ(near->diff_head[0], " " + std::string(first_line.substr(0, 117)) + "...");
  EXPECT_EQ(near->diff_head[1], "-' + message['content'] | trim + '<end_of_turn>");
  EXPECT_EQ(near->diff_head[2], "+' + message['content'] + '<end_of_turn>");
  EXPECT_EQ(near->diff_head[3].substr(0, 20), " ' }}{% endfor %}{% ");
}

TEST(KnownTemplates, NothingNearADifferentTemplate) {
  const std::string chatml =
      "{% for message in messages %}\n"
      "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}\n"
      "{% endfor %}\n"
      "{% if add_generation_prompt %}\n"
      "{{ '<|im_start|>assistant\\n' }}\n"
      "{% endif %}\n";
  NearSearchWork work;
  EXPECT_FALSE(find_near(chatml, &work).has_value());
  expect_bounded(work, 6);
  // A known template with half its lines replaced is too far from it.
  const KnownTemplate& qwen = named("Qwen-Qwen2.5-7B-Instruct");
  const std::vector<std::string_view> lines = split_lines(qwen.text);
  std::string far;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    far += i % 2 == 0 ? std::string(lines[i]) : "{# other #}\n";
  }
  EXPECT_FALSE(find_near(far, &work).has_value());
  expect_bounded(work, lines.size());
}

TEST(KnownTemplates, NothingNearAnEmptyText) {
  NearSearchWork work;
  EXPECT_FALSE(find_near("", &work).has_value());
  EXPECT_EQ(work.candidates, 0U);
}

TEST(KnownTemplates, ALargeTextIsNotRead) {
  std::mt19937_64 random(20261203);
  std::string text(5 << 20, '\0');
  for (char& c : text) c = static_cast<char>(random());
  NearSearchWork work;
  EXPECT_FALSE(find_near(text, &work).has_value());
  EXPECT_FALSE(work.text_read);
  EXPECT_EQ(work.line_comparisons, 0U);
  EXPECT_EQ(find_identical(text), nullptr);
}

TEST(KnownTemplates, ManyIdenticalShortLines) {
  // Too many lines for any template: dismissed by the line count.
  NearSearchWork work;
  std::string many;
  for (int i = 0; i < 4000; ++i) many += "{{ x }}\n";
  EXPECT_FALSE(find_near(many, &work).has_value());
  EXPECT_EQ(work.candidates, 0U);
  // The size and line count of a template, every line the same: diffed, and each diff gives up
  // after its bound.
  const KnownTemplate& apertus = named("Apertus-8B-Instruct");
  const std::size_t count = split_lines(apertus.text).size();
  const std::size_t width = apertus.text.size() / count;
  std::string same;
  for (std::size_t i = 0; i < count; ++i) same += std::string(width - 1, ' ') + "\n";
  same.resize(apertus.text.size(), ' ');
  work = {};
  EXPECT_FALSE(find_near(same, &work).has_value());
  EXPECT_GE(work.candidates, 1U);
  expect_bounded(work, count);
  // The template's own lines, sorted: the same size, count and lines, its many repeated lines
  // (blank, "{%- endif %}") side by side, so equal lines meet all over the diff; still bounded.
  std::vector<std::string_view> apertus_lines = split_lines(apertus.text);
  std::sort(apertus_lines.begin(), apertus_lines.end());
  std::string sorted;
  for (std::string_view line : apertus_lines) sorted += line;
  work = {};
  EXPECT_FALSE(find_near(sorted, &work).has_value());
  EXPECT_GE(work.candidates, 1U);
  expect_bounded(work, count);
}

// The generator's table of hostile templates (known_templates_fixture.py), compiled here: each
// text as long as the generator counted, with the digest it computed, and the file's bytes.
struct FixtureTemplate {
  std::string_view name;
  std::string_view source;
  std::size_t size;
  std::string_view sha256_hex;
  std::string_view text;
};

#define GGUFCHECK_KNOWN_TEMPLATES_VERSION(version, commit)
#define GGUFCHECK_KNOWN_TEMPLATE(name, source, size, sha256, text) \
  FixtureTemplate{name, source, size, sha256, std::string_view(text, sizeof(text) - 1)},
constexpr FixtureTemplate kFixtureTemplates[] = {
#include "generated/known_templates.inc"
};
#undef GGUFCHECK_KNOWN_TEMPLATE
#undef GGUFCHECK_KNOWN_TEMPLATES_VERSION

std::string hex(const std::array<std::uint8_t, 32>& digest) {
  std::string out;
  for (std::uint8_t byte : digest) {
    out += "0123456789abcdef"[byte >> 4];
    out += "0123456789abcdef"[byte & 15];
  }
  return out;
}

TEST(KnownTemplates, HostileTextsSurviveTheTable) {
  // 10 .jinja files and the 2 templates of a vocabulary file (its other pairs skipped).
  ASSERT_EQ(std::size(kFixtureTemplates), 12U);
  for (const FixtureTemplate& entry : kFixtureTemplates) {
    const bool vocabulary =
        entry.source.find(".gguf, tokenizer.chat_template") != std::string::npos;
    const std::string path =
        std::string(GGUFCHECK_TEMPLATE_FIXTURE_DIR) +
        (vocabulary ? "/vocab/" + std::string(entry.name)
                    : "/tree/models/templates/" + std::string(entry.name) + ".jinja");
    std::ifstream file(path, std::ios::binary);
    ASSERT_TRUE(file) << path;
    const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    EXPECT_EQ(entry.text, bytes) << entry.name;
    EXPECT_EQ(entry.text.size(), entry.size) << entry.name;
    EXPECT_EQ(hex(detail::template_sha256(entry.text)), entry.sha256_hex) << entry.name;
  }
}

TEST(KnownTemplates, NearBoundGrowsWithTheTemplate) {
  EXPECT_EQ(detail::near_bound(3, 591).max_line_edits, 2U);
  EXPECT_EQ(detail::near_bound(54, 2500).max_line_edits, 5U);
  EXPECT_EQ(detail::near_bound(326, 14190).max_line_edits, 20U);
  EXPECT_EQ(detail::near_bound(54, 2500).max_changed_bytes, 1024U);
  EXPECT_EQ(detail::near_bound(326, 14190).max_changed_bytes, 1419U);
}

}  // namespace
}  // namespace ggufcheck::testing
