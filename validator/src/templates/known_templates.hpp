// The chat templates of the pinned llama.cpp (its models/templates/*.jinja and every
// tokenizer.chat_template* of its models/ggml-vocab-*.gguf, generated into
// generated/known_templates.inc by validator/tools/known_templates/generate.py) and the matcher
// the template checks use: a file's template identical to one of them (GGUF9015) or near one
// (GGUF9016).
//
// Templates are input: a hostile file may carry megabytes. find_identical costs at most one
// comparison of the text's bytes per template of the same length; find_near reads a text only
// when its size is within the near bound of some template's, so a large text is dismissed without
// being read, and each candidate's diff stops at the bound (see find_near).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ggufcheck::detail {

struct KnownTemplate {
  // The file name without ".jinja", or a vocabulary file's name without ".gguf" and, for a
  // named template, ".<name>": "ggml-vocab-command-r.tool_use".
  std::string_view name;
  // Where it is in llama.cpp's tree: "models/templates/NAME.jinja", or
  // "models/ggml-vocab-command-r.gguf, tokenizer.chat_template.tool_use".
  std::string_view source;
  std::string_view text;                // its exact bytes
  std::array<std::uint8_t, 32> sha256;  // of text
};

// Every template, sorted by name. Three pairs have the same text (Hermes 2 Pro / Hermes 3
// tool_use, Llama 3.1 / 3.3 Instruct, the qwen2 / qwen35 vocabularies).
[[nodiscard]] std::span<const KnownTemplate> known_templates();

// Where the table comes from: "llama.cpp de3ff815ea7d (node-llama-cpp 3.22.1)", and the full
// llama.cpp commit.
[[nodiscard]] std::string_view known_templates_version();
[[nodiscard]] std::string_view known_templates_commit();

// SHA-256 of any text (OpenSSL), as the table stores it.
[[nodiscard]] std::array<std::uint8_t, 32> template_sha256(std::string_view text);

// The first template (by name) whose text is exactly `text`, or null. O(text.size()): compares
// bytes only with the templates of the same length.
[[nodiscard]] const KnownTemplate* find_identical(std::string_view text);
// All of them (the same text is in the table under two names twice).
[[nodiscard]] std::vector<const KnownTemplate*> find_all_identical(std::string_view text);

// A template near `text`: the edit script between the two as lines (each line with its '\n',
// the last one without when the text does not end in one), the fewest lines deleted and
// inserted (Myers' diff).
struct NearMatch {
  const KnownTemplate* known = nullptr;
  std::size_t lines_removed = 0;  // lines of the known template the text does not have
  std::size_t lines_added = 0;    // lines of the text the known template does not have
  std::size_t bytes_removed = 0;  // their bytes, '\n' included
  std::size_t bytes_added = 0;
  std::size_t first_known_line = 0;  // the first line that differs (1-based), in the template
  std::size_t first_text_line = 0;   // and in the text (the same number: the lines before agree)
  // At most kDiffHeadLines lines of a unified diff around the first difference: one line of
  // context (" "), the first hunk's removed ("-", at most two when it also adds) and added ("+")
  // lines, one line of context after, as room allows; "\ No newline at end of file" after a line
  // that has none. Each line is cut to kDiffLineBytes bytes (at a UTF-8 boundary, "..." marking
  // the cut), the prefix apart.
  std::vector<std::string> diff_head;

  // The distance: lines removed + lines added (a changed line counts two).
  [[nodiscard]] std::size_t line_edits() const { return lines_removed + lines_added; }
};

inline constexpr std::size_t kDiffHeadLines = 6;
inline constexpr std::size_t kDiffLineBytes = 120;

// The near bound of a template of `lines` lines and `bytes` bytes. A text is near it when
//   line edits <= max_line_edits: a tenth of its lines, so about 5% of the lines changed (each
//     change is a removal and an addition), at least 2 (one changed line, in the shortest
//     templates) and at most 20 (ten changed lines: past that the text is derived from the
//     template, not a copy with an edit, and a diff head would not show what differs);
//   bytes removed + added <= max_changed_bytes: a tenth of its bytes, at least 1024 (an added
//     default system prompt), so one huge inserted line is not "near";
//   bytes removed <= bytes / 2: most of the template is still there (an empty text is near
//     nothing).
// |text size - template size| <= max_changed_bytes and |text lines - template lines| <=
// max_line_edits follow, so texts outside them are not diffed at all, and a diff stops after
// max_line_edits rounds: O((N + M) * 20) line comparisons for a candidate whose text is at most
// about 1.1 times the largest template (17 KB).
struct NearBound {
  std::size_t max_line_edits = 0;
  std::size_t max_changed_bytes = 0;
};
[[nodiscard]] NearBound near_bound(std::size_t lines, std::size_t bytes);

// What find_near did, for the tests' bounds.
struct NearSearchWork {
  std::size_t candidates = 0;        // templates diffed (passed the size and line-count filters)
  std::size_t line_comparisons = 0;  // line equality tests, over all candidates
  bool text_read = false;            // the text was split into lines at all
};

// The nearest template (fewest line edits, then fewest bytes changed, then by name) within its
// near bound, or nullopt, also when the text is identical to a template (find_identical).
[[nodiscard]] std::optional<NearMatch> find_near(std::string_view text,
                                                 NearSearchWork* work = nullptr);

}  // namespace ggufcheck::detail
