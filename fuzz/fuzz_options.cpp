// The names users give the CLI (--disable, --enable, --severity CODE=LEVEL, --profile,
// `explain`), on arbitrary text: find_code, parse_severity, parse_profile and
// find_tensor_type never fail on any bytes, and whatever they accept names the same thing in
// its canonical spelling; a code's page renders. CI configurations pass these strings in from
// outside, so they are an input like the files.
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "ggufcheck/diagnostic.hpp"
#include "ggufcheck/format.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"
#include "pipeline.hpp"

namespace {

// `--limit NAME=VALUE`: set_limit accepts only the seven names, each into its own field, and a
// depth only within its bounds; a refusal says why and leaves the limits as they were.
std::string limit_problem(std::string_view text) {
  using namespace ggufcheck;
  const std::size_t equals = text.find('=');
  if (equals == std::string_view::npos) return {};
  const std::string_view name = text.substr(0, equals);
  const std::string_view digits = text.substr(equals + 1);
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc{} || end != digits.data() + digits.size()) return {};
  Limits limits;
  const Limits before = limits;
  const std::optional<std::string> refused = set_limit(limits, name, value);
  if (refused) {
    if (refused->empty()) return "a limit refused without a reason";
    if (limits.max_depth != before.max_depth || limits.max_findings != before.max_findings ||
        limits.max_kv_count != before.max_kv_count) {
      return "a refused limit changed the limits";
    }
    return {};
  }
  const std::uint64_t stored = name == "depth"            ? limits.max_depth
                               : name == "kv-count"       ? limits.max_kv_count
                               : name == "tensor-count"   ? limits.max_tensor_count
                               : name == "string-length"  ? limits.max_string_length
                               : name == "array-length"   ? limits.max_array_length
                               : name == "findings"       ? limits.max_findings
                               : name == "template-bytes" ? limits.max_template_bytes
                                                          : ~value;
  if (stored != value) return "a limit accepted under a name that is not one, or not stored";
  return {};
}

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
  return limit_problem(text);
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
