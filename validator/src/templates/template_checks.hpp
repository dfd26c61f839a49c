// The chat-template stage (template_checks.cpp): tokenizer.chat_template* read as Jinja, and its
// work budget.
//
// Every step of the stage is counted in work units (jinja::Work: a token, a node, a step of a
// walk, 16 bytes of a text search, ...). The stage is linear in the templates' bytes, and one
// budget per file makes that a bound whatever the file holds: kTemplateBaseUnits, plus
// kTemplateUnitsPerByte per byte of its template values, counting at most
// kTemplateBytesPerFile times the template-bytes limit of them (8 MiB by default). Past it the
// stage stops where it is and reports GGUF0002 limit-exceeded; the templates after that point
// are not read, so a file is never passed with a template unread.
#pragma once

#include <cstdint>

#include "index/file_index.hpp"
#include "index/layout.hpp"
#include "report/sink.hpp"

namespace ggufcheck::detail {

// Every chat template of the pinned llama.cpp costs under 2 units per byte, and every hostile
// shape of the tests under 4 at any size (test_jinja.cpp, TemplateWork): 16 per byte leaves a
// wide margin, and the cap bounds a file's stage at 132 Mi units by default (a few seconds).
inline constexpr std::uint64_t kTemplateUnitsPerByte = 16;
// What a file with little template text may spend whatever its size (the near-known search of
// one template can cost a few hundred thousand line comparisons; an edit of a pinned template
// costs under 40,000 units in all).
inline constexpr std::uint64_t kTemplateBaseUnits = std::uint64_t{1} << 22;
// The bytes of templates the budget counts: this many times the template-bytes limit.
inline constexpr std::uint64_t kTemplateBytesPerFile = 2;

// The budget of a file whose tokenizer.chat_template* values take `template_bytes` bytes, under
// a template-bytes limit of `max_template_bytes`.
[[nodiscard]] std::uint64_t template_work_budget(std::uint64_t template_bytes,
                                                 std::uint64_t max_template_bytes);

// What the stage did on one file (the tests' measure of its cost).
struct TemplateStageWork {
  std::uint64_t template_bytes = 0;  // the bytes of the template values (what the budget counts)
  std::uint64_t budget = 0;
  std::uint64_t used = 0;       // units spent
  std::uint64_t templates = 0;  // templates read to the end
  bool exhausted = false;       // the budget ran out: GGUF0002, the rest not read
};

// The stage the pipeline runs.
void check_templates(const FileIndex& index, const DataLayout& layout, Sink& sink);
// check_templates, returning its work.
TemplateStageWork check_templates_work(const FileIndex& file_index, Sink& sink);

}  // namespace ggufcheck::detail
