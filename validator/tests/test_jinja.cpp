// The Jinja reader of chat templates (templates/jinja.hpp): what it reads, where it says
// llama.cpp's engine stops, and that it agrees with that engine (compiled from the pinned
// llama.cpp tree into llama_jinja_judge) on llama.cpp's own templates, the test set of
// validator/tests/templates/ and thousands of their mutants.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "templates/jinja.hpp"

namespace fs = std::filesystem;
using namespace ggufcheck::detail::jinja;

namespace {

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

bool has_node(const Program& p, NodeKind kind, std::string_view value) {
  return std::any_of(p.nodes.begin(), p.nodes.end(),
                     [&](const Node& n) { return n.kind == kind && n.value == value; });
}

TEST(JinjaReader, ReadsAChatMlTemplateWithoutAProblem) {
  const std::string t =
      "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
      "{{ '<|im_start|>assistant\\n' }}{% endif %}";
  const Program p = parse(t);
  EXPECT_FALSE(p.incompatibility) << p.incompatibility->message;
  EXPECT_FALSE(p.syntax_error);
  EXPECT_TRUE(has_node(p, NodeKind::For, ""));
  EXPECT_TRUE(has_node(p, NodeKind::String, "<|im_start|>assistant\n"));
  EXPECT_TRUE(has_node(p, NodeKind::Identifier, "add_generation_prompt"));
}

TEST(JinjaReader, DecodesEscapesAsJinjaDoesAndSaysLlamaCppRefusesThem) {
  const Program p = parse("{{ x['\\x5f\\x5fclass\\u005f_'] }}");
  EXPECT_TRUE(has_node(p, NodeKind::String, "__class__"));
  ASSERT_TRUE(p.incompatibility);
  EXPECT_EQ(p.incompatibility->position, 6U);
  EXPECT_NE(p.incompatibility->message.find("escape \\x"), std::string::npos);
  EXPECT_FALSE(p.syntax_error);  // Jinja2 reads it
}

TEST(JinjaReader, ResumesAfterASyntaxErrorSoAPayloadBehindItIsRead) {
  const std::string t = "{{ a. }}{{ lipsum.__globals__['os'] }}";
  const Program p = parse(t);
  ASSERT_TRUE(p.syntax_error);
  EXPECT_EQ(p.syntax_error->position, 6U);  // the }} where a name was expected
  EXPECT_TRUE(has_node(p, NodeKind::Member, "__globals__"));
  EXPECT_TRUE(has_node(p, NodeKind::String, "os"));
}

TEST(JinjaReader, BoundsNestingAndReadsOnAfterIt) {
  std::string t = "{{ " + std::string(5000, '(') + "1" + std::string(5000, ')') + " }}";
  t += "{{ x.__class__ }}";
  const Program p = parse(t);
  ASSERT_TRUE(p.too_deep);
  EXPECT_TRUE(has_node(p, NodeKind::Member, "__class__"));
}

TEST(JinjaReader, KeepsLongChainsFlatEnoughToWalkWithoutRecursion) {
  // 100,000 additions: a left-deep tree the reader builds without recursing per operator.
  std::string t = "{{ a";
  for (int i = 0; i < 100'000; ++i) t += " ~ a";
  t += " }}";
  const Program p = parse(t);
  EXPECT_FALSE(p.syntax_error);
  EXPECT_FALSE(p.too_deep);
  EXPECT_GT(p.nodes.size(), 200'000U);
}

TEST(JinjaReader, ReadsRawBlocksAsTextAndSaysLlamaCppHasNone) {
  const Program p = parse("{% raw %}{{ not an expression {% endraw %}");
  ASSERT_TRUE(p.incompatibility);
  EXPECT_NE(p.incompatibility->message.find("raw"), std::string::npos);
  EXPECT_FALSE(p.syntax_error);
  EXPECT_TRUE(has_node(p, NodeKind::Text, "{{ not an expression "));
}

TEST(JinjaReader, NamesTheLineAndColumnOfAnOffset) {
  const std::string t = "a\nbc\n{{ x }}";
  EXPECT_EQ(line_column(t, 0).line, 1U);
  EXPECT_EQ(line_column(t, 3).line, 2U);
  EXPECT_EQ(line_column(t, 3).column, 2U);
  EXPECT_EQ(line_column(t, 8).line, 3U);
  EXPECT_EQ(line_column(t, 8).column, 4U);
}

TEST(JinjaReader, SaysWhatLlamaCppCannotParse) {
  const std::map<std::string, std::string> cases = {
      {"{% include 'x' %}", "include"},
      {"{{ 2 ** 3 }}", "**"},
      {"{{ 7 // 2 }}", "//"},
      {"{% for x in y recursive %}{% endfor %}", "recursive"},
      {"{{ x is divisibleby 3 }}", "test argument"},
      {"{{ () }}", "empty tuple"},
      {"{{ 1e9 }}", "number"},
      {"{{ 99999999999999999999 }}", "64 bits"},
      {"{% with a = 1 %}{% endwith %}", "with"},
      {"{{ 'a\\q' }}", "escape"},
  };
  for (const auto& [text, needle] : cases) {
    const Program p = parse(text);
    ASSERT_TRUE(p.incompatibility) << text;
    EXPECT_NE(p.incompatibility->message.find(needle), std::string::npos)
        << text << ": " << p.incompatibility->message;
  }
}

// ------------------------------------------------------------------- the differential ---

#ifdef GGUFCHECK_LLAMA_JINJA_JUDGE

// Tokens a mutation inserts: the pieces of Jinja's syntax that change how a template parses.
const std::vector<std::string> kInsertions = {"{{",         "}}",
                                              "{%",         "%}",
                                              "{#",         "#}",
                                              "'",          "\"",
                                              "(",          ")",
                                              "[",          "]",
                                              "{",          "}",
                                              "|",          ".",
                                              "~",          "**",
                                              "//",         "-",
                                              "+",          "\\",
                                              "\\x41",      "\\u0041",
                                              "\\q",        "endif",
                                              "endfor",     " if ",
                                              " else ",     "raw",
                                              ":",          ",",
                                              "=",          " not ",
                                              " is ",       "()",
                                              "1e5",        "99999999999999999999",
                                              "\xc3\xa9",   "{% endif %}",
                                              "{% else %}", "{{ x }}",
                                              " in ",       "*",
                                              "%",          "!",
                                              "\n",         "-%}",
                                              "{%-"};

std::string mutate(const std::string& text, std::mt19937_64& rng) {
  std::string out = text;
  const auto pick = [&](std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(rng() % n); };
  // Every draw in its own statement: the order of a call's arguments is the compiler's, and the
  // mutants must be the same whichever compiler built the test.
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    const std::size_t at = pick(out.size() + 1);
    const std::uint64_t kind = rng() % 4;
    if (kind == 0) {
      const std::size_t length = 1 + pick(8);
      out.erase(at, length);
    } else if (kind == 1) {
      out.insert(at, kInsertions[pick(kInsertions.size())]);
    } else if (kind == 2) {
      const std::size_t from = pick(out.size() + 1);
      const std::size_t length = 1 + pick(12);
      out.insert(at, out.substr(from, length));
    } else if (at < out.size()) {
      out[at] = "{}%#'\"()|.-"[pick(11)];
    }
  }
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 300)) {
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x7f) {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", b);
      out += hex;
    }
  }
  return out;
}

std::string fmt_divergence(std::size_t index, const std::string& text, const std::string& verdict,
                           const Program& p) {
  std::string ours = "parses it";
  std::size_t around = 0;
  if (p.incompatibility) {
    ours = "refuses it: " + p.incompatibility->message;
    around = p.incompatibility->position;
  }
  const std::size_t from = around > 80 ? around - 80 : 0;
  return "text " + std::to_string(index) + ": llama.cpp " + verdict + "; ggufcheck " + ours +
         "; near: " + printable(std::string_view(text).substr(from, 200));
}

struct Verdicts {
  std::vector<std::string> lines;  // "ok", "fail ...", "crash N" per file
};

Verdicts judge(const std::vector<fs::path>& files) {
  const fs::path list = fs::temp_directory_path() / ("jinja-judge-" + std::to_string(getpid()));
  {
    std::ofstream out(list);
    for (const fs::path& f : files) out << f.string() << '\n';
  }
  const std::string command =
      std::string(GGUFCHECK_LLAMA_JINJA_JUDGE) + " < '" + list.string() + "'";
  FILE* pipe = popen(command.c_str(), "r");
  Verdicts v;
  if (pipe == nullptr) return v;
  char buffer[4096];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) {
    std::string line(buffer);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    v.lines.push_back(line);
  }
  pclose(pipe);
  fs::remove(list);
  return v;
}

TEST(JinjaDifferential, AgreesWithLlamaCppsEngineOnTemplatesAndTheirMutants) {
  const fs::path source = GGUFCHECK_SOURCE_DIR;
  const fs::path llama_templates = source / ".deps/conformance/llama.cpp/models/templates";
  std::vector<std::string> seeds;
  for (const fs::path& dir : {llama_templates, source / "validator/tests/templates"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".jinja") seeds.push_back(read_file(entry.path()));
    }
  }
  ASSERT_GE(seeds.size(), 150U);
  std::sort(seeds.begin(), seeds.end());
  std::mt19937_64 rng(20261203);
  constexpr int kMutantsPerSeed = 30;
  std::vector<std::string> texts = seeds;
  for (const std::string& seed : seeds) {
    for (int m = 0; m < kMutantsPerSeed; ++m) texts.push_back(mutate(seed, rng));
  }
  const fs::path dir = fs::temp_directory_path() / ("jinja-mutants-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<fs::path> files;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    files.push_back(dir / (std::to_string(i) + ".jinja"));
    std::ofstream(files.back(), std::ios::binary) << texts[i];
  }
  const Verdicts verdicts = judge(files);
  fs::remove_all(dir);
  ASSERT_EQ(verdicts.lines.size(), texts.size());

  std::size_t parsed = 0, refused = 0, crashed = 0, too_deep = 0;
  std::vector<std::string> divergences;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::string& verdict = verdicts.lines[i];
    const bool llama_parses = verdict == "ok";
    parsed += llama_parses ? 1U : 0U;
    refused += verdict.rfind("fail", 0) == 0 ? 1U : 0U;
    crashed += verdict.rfind("crash", 0) == 0 ? 1U : 0U;
    const Program p = parse(texts[i]);
    // Nesting past kMaxNesting is GGUF9008 (the reader stops there); whether llama.cpp's
    // recursive parser gets through is not predicted.
    if (p.too_deep) {
      ++too_deep;
      continue;
    }
    const bool we_refuse = p.incompatibility.has_value();
    if (llama_parses == we_refuse) {
      divergences.push_back(fmt_divergence(i, texts[i], verdict, p));
      // GGUFCHECK_JINJA_DIVERGENCES=DIR keeps each divergent text, to look at.
      if (const char* keep = std::getenv("GGUFCHECK_JINJA_DIVERGENCES")) {
        std::ofstream(fs::path(keep) / (std::to_string(i) + ".jinja"), std::ios::binary)
            << texts[i];
      }
    }
  }
  std::cout << "templates and mutants: " << texts.size() << "; llama.cpp parses " << parsed
            << ", refuses " << refused << ", crashes on " << crashed << "; too deep for ggufcheck "
            << too_deep << "; divergences: " << divergences.size() << '\n';
  for (std::size_t i = 0; i < std::min<std::size_t>(divergences.size(), 20); ++i) {
    ADD_FAILURE() << divergences[i];
  }
}

#endif

}  // namespace
