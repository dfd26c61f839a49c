// The chat-template reader and checks (validator/src/templates/) on any bytes as a template: the
// reader's syntax tree is well formed (every kid a node, every position inside the template,
// the root a block) and the same on a second read, also when its work budget runs out halfway
// (it then stops within a unit or two of the limit); then the bytes go into a GGUF file as
// tokenizer.chat_template and through the whole pipeline (fuzz::check_pipeline: every profile,
// every output format, the report's invariants). Seeds: the test set of templates
// (validator/tests/templates/) and the payload shapes of fuzz/seeds/templates/ (both listed in
// fuzz/fuzz_template.seeds) besides the corpus.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ggufcheck/writer.hpp"
#include "pipeline.hpp"
#include "templates/jinja.hpp"

namespace {

using namespace ggufcheck;

std::string check_tree(std::string_view text, const detail::jinja::Program& p) {
  if (p.root >= p.nodes.size()) return "the root is no node";
  if (p.nodes[p.root].kind != detail::jinja::NodeKind::Block) return "the root is not a block";
  for (const detail::jinja::Node& n : p.nodes) {
    if (n.position > text.size()) return "a node past the template's end";
    if (std::uint64_t{n.first_kid} + n.kid_count > p.kids.size()) return "kids past the table";
  }
  for (const std::uint32_t kid : p.kids) {
    if (kid >= p.nodes.size()) return "a kid that is no node";
  }
  for (const auto& problem : {p.incompatibility, p.syntax_error}) {
    if (problem && problem->position > text.size()) return "a problem past the template's end";
  }
  return {};
}

std::string check_program(std::string_view text) {
  detail::jinja::Work whole;
  const detail::jinja::Program p = detail::jinja::parse(text, &whole);
  if (std::string failure = check_tree(text, p); !failure.empty()) return failure;
  if (p.stopped) return "stopped without a budget";
  detail::jinja::Work half(whole.used() / 2);
  const detail::jinja::Program part = detail::jinja::parse(text, &half);
  if (std::string failure = check_tree(text, part); !failure.empty()) return "half: " + failure;
  if (half.used() > half.limit() + 2) return "the reader ran past its budget";
  const detail::jinja::Program again = detail::jinja::parse(text);
  if (again.nodes.size() != p.nodes.size() || again.kids != p.kids) {
    return "a second read differs";
  }
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Bytes bytes{data, size};
  fuzz::fail_if(check_program(text), bytes);
  Document doc;
  doc.metadata.push_back({"general.architecture", Value::string("llama"), {}});
  doc.metadata.push_back({"tokenizer.chat_template", Value::string(std::string(text)), {}});
  const std::vector<std::uint8_t> file = write_bytes(doc);
  fuzz::fail_if(fuzz::check_pipeline({file.data(), file.size()}), {file.data(), file.size()});
  return 0;
}
