#include "ggufcheck/render.hpp"

#include <fmt/color.h>
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "pages.hpp"

namespace ggufcheck {
namespace {

using nlohmann::json;

std::string sarif_level(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
    case Severity::Silent: break;
  }
  return "none";
}

fmt::text_style severity_style(Severity s) {
  switch (s) {
    case Severity::Error: return fmt::fg(fmt::terminal_color::bright_red) | fmt::emphasis::bold;
    case Severity::Warning:
      return fmt::fg(fmt::terminal_color::bright_yellow) | fmt::emphasis::bold;
    default: return fmt::fg(fmt::terminal_color::bright_cyan) | fmt::emphasis::bold;
  }
}

std::string styled(bool color, const fmt::text_style& style, std::string_view text) {
  return color ? fmt::format(style, "{}", text) : std::string(text);
}

template <typename T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// artifactLocation.uri is a URI reference: percent-encode all but unreserved bytes and '/'.
std::string uri_encode(std::string_view path) {
  std::string out;
  for (char c : path) {
    const auto b = static_cast<unsigned char>(c);
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || c == '-' ||
        c == '_' || c == '.' || c == '~' || c == '/') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", b);
    }
  }
  return out;
}

std::string severities_line(const CatalogueEntry& e) {
  return fmt::format("strict {}, spec {}, llama.cpp {}", to_string(e.severity(Profile::Strict)),
                     to_string(e.severity(Profile::Spec)),
                     to_string(e.severity(Profile::LlamaCpp)));
}

}  // namespace

std::string_view tool_version() {
  return GGUFCHECK_VERSION;
}

std::string render_text(const Report& report, const TextStyle& style) {
  std::string out;
  if (report.unreadable()) {
    // Nothing was validated: one line says why, with the code scripts can match.
    for (const Finding& f : report.findings) {
      out += fmt::format("{}: {}: {}\n", report.path,
                         styled(style.color, severity_style(f.severity),
                                fmt::format("{}[{} {}]", to_string(f.severity), code_string(f.code),
                                            catalogue_entry(f.code).name)),
                         f.message);
    }
    return out;
  }
  for (const Finding& f : report.findings) {
    if (style.quiet && f.severity != Severity::Error) continue;
    const CatalogueEntry& entry = catalogue_entry(f.code);
    out += fmt::format(
        "{}:0x{:x}: {}: {}\n", report.path, f.offset,
        styled(style.color, severity_style(f.severity),
               fmt::format("{}[{} {}]", to_string(f.severity), code_string(f.code), entry.name)),
        f.message);
    out += fmt::format("  --> {}\n", f.path);
    if (!f.hint.empty()) out += fmt::format("  = hint: {}\n", f.hint);
  }
  if (report.findings_dropped != 0 && !style.quiet) {
    out += fmt::format("{}: {} more findings not shown (--limit findings=N)\n", report.path,
                       report.findings_dropped);
  }
  if (!style.quiet) {
    const Facts& facts = report.facts;
    std::string shape;
    if (facts.version) {
      shape = fmt::format(" (v{}{}, {} kv, {} tensors, {} bytes)", *facts.version,
                          facts.endian == Endian::Big ? " big-endian" : "", facts.kv_read,
                          facts.tensors_read, facts.file_size);
    }
    const std::string verdict =
        report.unreadable() ? styled(style.color, severity_style(Severity::Error), "unreadable")
        : report.passed()
            ? styled(style.color, fmt::fg(fmt::terminal_color::bright_green) | fmt::emphasis::bold,
                     "pass")
            : styled(style.color, severity_style(Severity::Error), "FAIL");
    out += fmt::format("{}: {}: {} error{}, {} warning{}, {} note{}{}\n", report.path, verdict,
                       report.errors, report.errors == 1 ? "" : "s", report.warnings,
                       report.warnings == 1 ? "" : "s", report.notes, report.notes == 1 ? "" : "s",
                       shape);
  }
  return out;
}

std::string render_json(std::span<const Report> reports, const Options& options, int exit_status) {
  json files = json::array();
  std::size_t passed = 0, failed = 0, unreadable = 0;
  for (const Report& r : reports) {
    json findings = json::array();
    for (const Finding& f : r.findings) {
      findings.push_back({{"code", code_string(f.code)},
                          {"name", catalogue_entry(f.code).name},
                          {"severity", to_string(f.severity)},
                          {"offset", f.offset},
                          {"length", f.length},
                          {"path", f.path},
                          {"message", f.message},
                          {"hint", f.hint.empty() ? json(nullptr) : json(f.hint)}});
    }
    const Facts& facts = r.facts;
    const char* status = r.unreadable() ? "unreadable" : r.passed() ? "pass" : "fail";
    (r.unreadable() ? unreadable : r.passed() ? passed : failed)++;
    files.push_back({{"path", r.path},
                     {"status", status},
                     {"facts",
                      {{"file_size", facts.file_size},
                       {"version", optional_json(facts.version)},
                       {"endianness", facts.endian == Endian::Big ? "big" : "little"},
                       {"tensor_count", optional_json(facts.tensor_count)},
                       {"kv_count", optional_json(facts.kv_count)},
                       {"kv_read", facts.kv_read},
                       {"tensors_read", facts.tensors_read},
                       {"alignment", facts.alignment},
                       {"data_start", optional_json(facts.data_start)},
                       {"tensor_data_size", optional_json(facts.tensor_data_size)}}},
                     {"summary",
                      {{"errors", r.errors},
                       {"warnings", r.warnings},
                       {"notes", r.notes},
                       {"findings_dropped", r.findings_dropped}}},
                     {"findings", std::move(findings)}});
  }
  json doc = {{"schema_version", kJsonSchemaVersion},
              {"tool", {{"name", "ggufcheck"}, {"version", tool_version()}}},
              {"profile", to_string(options.profile)},
              {"werror", options.werror},
              {"files", std::move(files)},
              {"summary",
               {{"files", reports.size()},
                {"passed", passed},
                {"failed", failed},
                {"unreadable", unreadable},
                {"exit_status", exit_status}}}};
  // File names need not be UTF-8; JSON text must be: invalid bytes become U+FFFD.
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_text_total(std::span<const Report> reports, const TextStyle& style) {
  std::size_t passed = 0, failed = 0, unreadable = 0;
  for (const Report& r : reports) {
    switch (r.exit_status()) {
      case 0: ++passed; break;
      case 1: ++failed; break;
      default: ++unreadable; break;
    }
  }
  const auto part = [&](std::size_t n, std::string_view word, const fmt::text_style& colour) {
    const std::string text = fmt::format("{} {}", n, word);
    return n == 0 ? text : styled(style.color, colour, text);
  };
  return fmt::format(
      "{} file{}: {}, {}, {}\n", reports.size(), reports.size() == 1 ? "" : "s",
      part(passed, "passed", fmt::fg(fmt::terminal_color::bright_green) | fmt::emphasis::bold),
      part(failed, "failed", severity_style(Severity::Error)),
      part(unreadable, "unreadable", severity_style(Severity::Error)));
}

std::string render_sarif(std::span<const Report> reports, const Options& options,
                         const SarifOptions& /*sarif*/) {
  // One rule per code used, in code order, so rule indices are stable within a run.
  std::map<Code, std::size_t> rule_index;
  for (const Report& r : reports) {
    for (const Finding& f : r.findings) rule_index.emplace(f.code, 0);
  }
  json rules = json::array();
  for (auto& [code, index] : rule_index) {
    const CatalogueEntry& e = catalogue_entry(code);
    index = rules.size();
    const Severity level = options.severity(code);
    rules.push_back(
        {{"id", code_string(code)},
         {"name", e.name},
         {"shortDescription", {{"text", e.meaning}}},
         {"fullDescription",
          {{"text", fmt::format("{} (severity: {})", e.meaning, severities_line(e))}}},
         {"defaultConfiguration",
          {{"level", sarif_level(level == Severity::Silent ? Severity::Error : level)}}},
         {"properties", {{"tags", json::array({"gguf", to_string(options.profile)})}}}});
  }
  json artifacts = json::array();
  json results = json::array();
  for (const Report& r : reports) {
    const std::size_t artifact = artifacts.size();
    const std::string uri = uri_encode(r.path);
    artifacts.push_back({{"location", {{"uri", uri}}}, {"length", r.facts.file_size}});
    for (const Finding& f : r.findings) {
      json result = {
          {"ruleId", code_string(f.code)},
          {"ruleIndex", rule_index.at(f.code)},
          {"level", sarif_level(f.severity)},
          {"message",
           {{"text",
             f.hint.empty() ? f.message : fmt::format("{} (hint: {})", f.message, f.hint)}}},
          {"locations",
           json::array(
               {{{"physicalLocation",
                  {{"artifactLocation", {{"uri", uri}, {"index", artifact}}},
                   {"region",
                    {{"startLine", 1}, {"byteOffset", f.offset}, {"byteLength", f.length}}}}},
                 {"logicalLocations",
                  json::array({{{"fullyQualifiedName", f.path}, {"kind", "member"}}})}}})},
          {"properties", {{"name", catalogue_entry(f.code).name}, {"fieldPath", f.path}}}};
      results.push_back(std::move(result));
    }
  }
  json run = {{"tool",
               {{"driver",
                 {{"name", "ggufcheck"},
                  {"version", tool_version()},
                  {"semanticVersion", tool_version()},
                  {"rules", std::move(rules)}}}}},
              {"artifacts", std::move(artifacts)},
              {"results", std::move(results)},
              {"properties", {{"profile", to_string(options.profile)}}}};
  json doc = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", json::array({std::move(run)})}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_catalogue_text() {
  std::string out = fmt::format("{:<9} {:<29} {:<8} {:<8} {:<9} {}\n", "code", "name", "strict",
                                "spec", "llama.cpp", "meaning");
  for (const CatalogueEntry& e : catalogue()) {
    out += fmt::format("{:<9} {:<29} {:<8} {:<8} {:<9} {}\n", code_string(e.code), e.name,
                       to_string(e.severity(Profile::Strict)), to_string(e.severity(Profile::Spec)),
                       to_string(e.severity(Profile::LlamaCpp)), e.meaning);
  }
  return out;
}

std::string render_catalogue_json() {
  json list = json::array();
  for (const CatalogueEntry& e : catalogue()) {
    list.push_back({{"code", code_string(e.code)},
                    {"name", e.name},
                    {"meaning", e.meaning},
                    {"severity",
                     {{"strict", to_string(e.severity(Profile::Strict))},
                      {"spec", to_string(e.severity(Profile::Spec))},
                      {"llama.cpp", to_string(e.severity(Profile::LlamaCpp))}}}});
  }
  return json({{"schema_version", kJsonSchemaVersion}, {"diagnostics", std::move(list)}}).dump(2) +
         "\n";
}

// The code's page, docs/diagnostics/GGUFnnnn.md, as embedded at build time. The build fails
// when a catalogue code has no page, so the lookup cannot miss.
std::string render_explanation(Code code) {
  for (const detail::DiagnosticPage& page : detail::diagnostic_pages()) {
    if (page.number == static_cast<unsigned>(code)) return std::string(page.text);
  }
  throw std::logic_error(fmt::format("{} has no embedded page", code_string(code)));
}

}  // namespace ggufcheck
