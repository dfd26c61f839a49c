// The names users give the CLI (--disable, --enable, --severity CODE=LEVEL, --profile,
// `explain`), on arbitrary text: find_code, parse_severity, parse_profile and
// find_tensor_type never fail on any bytes, and whatever they accept names the same thing in
// its canonical spelling; a code's page renders. CI configurations pass these strings in from
// outside, so they are an input like the files.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/format.hpp"
#include "ggufcheck/render.hpp"
#include "pipeline.hpp"

namespace {

std::string check_names(std::string_view text) {
  using namespace ggufcheck;
  if (const auto code = find_code(text)) {
    if (find_code(code_string(*code)) != code) return "a code's string does not name it";
    if (find_code(catalogue_entry(*code).name) != code) return "a code's name does not name it";
    if (render_explanation(*code).empty()) return "a code without its page";
  }
  if (const auto severity = parse_severity(text)) {
    if (parse_severity(to_string(*severity)) != severity) return "a severity's name";
  }
  if (const auto profile = parse_profile(text)) {
    if (parse_profile(to_string(*profile)) != profile) return "a profile's name";
  }
  if (const auto id = find_tensor_type(text)) {
    const TensorTypeInfo* type = tensor_type(*id);
    if (type == nullptr || find_tensor_type(type->name) != id) return "a tensor type's name";
  }
  return {};
}

// `ggufcheck list` in text and JSON: every code, once per process (they do not depend on the
// input). The JSON parses to one entry per catalogue code.
std::string check_catalogue() {
  using namespace ggufcheck;
  if (render_catalogue_text().empty()) return "an empty catalogue";
  const auto json = nlohmann::json::parse(render_catalogue_json(), nullptr, false);
  if (json.is_discarded()) return "the catalogue's JSON does not parse";
  if (json["diagnostics"].size() != catalogue().size())
    return "the catalogue's JSON has another size";
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const ggufcheck::Bytes bytes(data, size);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const std::string catalogue_problem = check_catalogue();
  ggufcheck::fuzz::fail_if(catalogue_problem, bytes);
  ggufcheck::fuzz::fail_if(check_names(text), bytes);
  return 0;
}
