#include "ggufcheck/render.hpp"

#include <fmt/color.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "render/pages.hpp"
#include "report/sink.hpp"
#include "util/utf8.hpp"

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

// A file name for the terminal. Names are untrusted bytes like keys: a name with a control byte
// (C0, DEL or C1), invalid UTF-8 or a backslash goes through the same escape() as keys (\xNN,
// \\, \"), whole and unshortened; any other name, UTF-8 included, is shown as it is. Only an
// escaped name contains a backslash, so the shown form is never ambiguous.
bool needs_escape(std::string_view name) {
  if (!detail::is_valid_utf8(name)) return true;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const auto b = static_cast<unsigned char>(name[i]);
    if (b < 0x20 || b == 0x7f || b == '\\') return true;
    // U+0080..U+009F (C2 80..C2 9F): the C1 controls, CSI among them.
    if (b == 0xc2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) <= 0x9f) {
      return true;
    }
    // U+202A..U+202E (E2 80 AA..AE) and U+2066..U+2069 (E2 81 A6..A9): bidi overrides, which
    // reorder what a terminal shows.
    if (b == 0xe2 && i + 2 < name.size()) {
      const auto b1 = static_cast<unsigned char>(name[i + 1]);
      const auto b2 = static_cast<unsigned char>(name[i + 2]);
      if ((b1 == 0x80 && b2 >= 0xaa && b2 <= 0xae) || (b1 == 0x81 && b2 >= 0xa6 && b2 <= 0xa9)) {
        return true;
      }
    }
  }
  return false;
}

// The path as an absolute, lexically normal path ("." and ".." folded, symlinks not resolved).
std::filesystem::path absolute_path(std::string_view path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(std::filesystem::path(path), ec);
  if (ec) p = std::filesystem::path(path);
  p = p.lexically_normal();
  // "/a/b/" normalises to "/a/b/" (an empty last component): drop it.
  if (!p.has_filename() && p.has_relative_path()) p = p.parent_path();
  return p;
}

// file:///abs/path, percent-encoded.
std::string file_uri(const std::filesystem::path& absolute) {
  return "file://" + uri_encode(absolute.generic_string());
}

constexpr std::string_view kStdin = "<stdin>";

struct ArtifactUri {
  std::string uri;        // empty for standard input
  bool relative = false;  // relative to SRCROOT
};

ArtifactUri artifact_uri(std::string_view path, const std::optional<std::filesystem::path>& root) {
  if (path == kStdin) return {};
  if (is_url(path)) return {std::string(path), false};  // a remote file is named by its URL
  const std::filesystem::path p = absolute_path(path);
  if (root) {
    auto r = root->begin();
    auto q = p.begin();
    while (r != root->end() && q != p.end() && *r == *q) {
      ++r;
      ++q;
    }
    if (r == root->end() && q != p.end()) {
      std::string rel;
      for (; q != p.end(); ++q) {
        if (!rel.empty()) rel += '/';
        rel += q->string();
      }
      return {uri_encode(rel), true};
    }
  }
  return {file_uri(p), false};
}

json artifact_location(const ArtifactUri& a) {
  if (a.uri.empty()) return {{"description", {{"text", "standard input"}}}};
  json loc = {{"uri", a.uri}};
  if (a.relative) loc["uriBaseId"] = "SRCROOT";
  return loc;
}

// The blocks of a Markdown section: paragraphs, lists and fenced code blocks, split at blank
// lines outside fences.
std::vector<std::string_view> markdown_blocks(std::string_view body) {
  std::vector<std::string_view> blocks;
  std::size_t start = std::string_view::npos;
  bool fenced = false;
  std::size_t pos = 0;
  const auto close = [&](std::size_t end) {
    std::string_view block = body.substr(start, end - start);
    while (!block.empty() && (block.back() == '\n' || block.back() == ' ')) block.remove_suffix(1);
    if (!block.empty()) blocks.push_back(block);
    start = std::string_view::npos;
  };
  while (pos < body.size()) {
    std::size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view line = body.substr(pos, end - pos);
    const bool blank = line.find_first_not_of(" \t") == std::string_view::npos;
    if (line.substr(0, 3) == "```") fenced = !fenced;
    if (blank && !fenced) {
      if (start != std::string_view::npos) close(pos);
    } else if (start == std::string_view::npos) {
      start = pos;
    }
    pos = end + 1;
  }
  if (start != std::string_view::npos) close(body.size());
  return blocks;
}

// A fenced code block, a list or a table rather than a paragraph.
bool is_structure(std::string_view block) {
  return block.substr(0, 3) == "```" || block.substr(0, 2) == "- " || block.substr(0, 2) == "| ";
}

struct Section {
  std::string_view heading;
  std::string_view body;
};

// The "## " sections of a page, in order.
std::vector<Section> page_sections(std::string_view page) {
  std::vector<Section> sections;
  std::size_t pos = page.find("\n## ");
  while (pos != std::string_view::npos) {
    const std::size_t heading_start = pos + 4;
    const std::size_t heading_end = std::min(page.find('\n', heading_start), page.size());
    const std::size_t next = page.find("\n## ", heading_end);
    const std::size_t body_end = next == std::string_view::npos ? page.size() : next;
    sections.push_back({page.substr(heading_start, heading_end - heading_start),
                        heading_end < body_end
                            ? page.substr(heading_end + 1, body_end - heading_end - 1)
                            : std::string_view{}});
    pos = next;
  }
  return sections;
}

struct Help {
  std::string text;
  std::string markdown;
};

// What a SARIF rule shows of a code's page (rule_help).
struct RuleText {
  std::string what;
  std::string fix_heading;
  std::string fix;
};

RuleText read_rule_text(Code code) {
  const std::string page = render_explanation(code);
  const std::vector<Section> sections = page_sections(page);
  std::string what;
  for (const Section& s : sections) {
    if (s.heading != "What it means") continue;
    const std::vector<std::string_view> blocks = markdown_blocks(s.body);
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const std::string_view block = blocks[i];
      if (!what.empty()) what += "\n\n";
      what += block;
      if (!is_structure(block)) {
        if (block.back() == '.' || block.back() == ')') break;  // a sentence ends the paragraph
        continue;  // "... is:" or "... A pair is": what follows belongs to it
      }
      // After a list or code block, a paragraph that starts in lower case goes on the sentence.
      const std::string_view next = i + 1 < blocks.size() ? blocks[i + 1] : std::string_view{};
      if (next.empty() || !((next[0] >= 'a' && next[0] <= 'z') || next[0] == '(')) break;
    }
    break;
  }
  if (what.empty()) what = fmt::format("{}.", catalogue_entry(code).meaning);
  std::string fix_heading;
  std::string fix;
  if (!sections.empty() && sections.back().heading != "What it means") {
    fix_heading = sections.back().heading;
    for (std::string_view block : markdown_blocks(sections.back().body)) {
      if (!fix.empty()) fix += "\n\n";
      fix += block;
    }
  }
  return {std::move(what), std::move(fix_heading), std::move(fix)};
}

// The short form of a code's page for a SARIF rule: the first paragraph of "What it means"
// (with the list or code block it introduces, and the end of its sentence after that), then the
// page's last section, the fix ("How to fix the writer", "How to fix the file", ...), then the
// page's URL.
Help rule_help(Code code, const std::string& help_uri) {
  // The pages are read once per process, for every code of the catalogue: every SARIF report
  // read the Markdown of each code it used again. (A code without a page, which the build
  // refuses, is read here and throws as before.)
  static const std::map<Code, RuleText> kTexts = [] {
    std::map<Code, RuleText> out;
    for (const CatalogueEntry& entry : catalogue()) {
      try {
        out.emplace(entry.code, read_rule_text(entry.code));
      } catch (const std::logic_error&) {
      }
    }
    return out;
  }();
  const auto cached = kTexts.find(code);
  const RuleText uncached = cached == kTexts.end() ? read_rule_text(code) : RuleText{};
  const RuleText& t = cached != kTexts.end() ? cached->second : uncached;
  const std::string& what = t.what;
  const std::string& fix_heading = t.fix_heading;
  const std::string& fix = t.fix;
  const CatalogueEntry& e = catalogue_entry(code);
  Help help;
  help.text = what;
  help.markdown = what;
  if (!fix.empty()) {
    help.text += fmt::format("\n\n{}:\n{}", fix_heading, fix);
    help.markdown += fmt::format("\n\n**{}**\n\n{}", fix_heading, fix);
  }
  help.text += fmt::format("\n\nThe whole page: {}", help_uri);
  help.markdown +=
      fmt::format("\n\nThe whole page: [{} {}]({})", code_string(code), e.name, help_uri);
  return help;
}

// GitHub code scanning's problem.severity for a level.
std::string_view problem_severity(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    default: return "recommendation";
  }
}

// The catalogue in code order, whatever the order of catalogue.def.
std::vector<CatalogueEntry> sorted_catalogue() {
  std::vector<CatalogueEntry> entries(catalogue().begin(), catalogue().end());
  std::sort(entries.begin(), entries.end(), [](const CatalogueEntry& a, const CatalogueEntry& b) {
    return static_cast<unsigned>(a.code) < static_cast<unsigned>(b.code);
  });
  return entries;
}

// "160 bytes", "14.2 KiB", "1.2 GiB": a size for a summary line (exact below 1 KiB).
std::string size_text(std::uint64_t bytes) {
  if (bytes < 1024) return detail::byte_count(bytes);
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  // 1023.95 and above would print as "1024.0": that is the next unit.
  while (value >= 1023.95 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string severities_line(const CatalogueEntry& e) {
  return fmt::format("strict {}, spec {}, llama.cpp {}", to_string(e.severity(Profile::Strict)),
                     to_string(e.severity(Profile::Spec)),
                     to_string(e.severity(Profile::LlamaCpp)));
}

}  // namespace

std::string shown_name(std::string_view name) {
  return needs_escape(name) ? detail::escape(name, name.size()) : std::string(name);
}

std::string render_text(const Report& report, const TextStyle& style) {
  std::string out;
  const std::string name = shown_name(report.path);
  if (report.unreadable()) {
    // Nothing was validated: one line says why, with the code scripts can match.
    for (const Finding& f : report.findings) {
      // The message names the path too (cannot open PATH: ...): shown the same way.
      out += fmt::format("{}: {}: {}\n", name,
                         styled(style.color, severity_style(f.severity),
                                fmt::format("{}[{} {}]", to_string(f.severity), code_string(f.code),
                                            catalogue_entry(f.code).name)),
                         f.code == Code::UnreadableFile ? shown_name(f.message) : f.message);
    }
    return out;
  }
  for (const Finding& f : report.findings) {
    if (style.quiet && f.severity != Severity::Error) continue;
    const CatalogueEntry& entry = catalogue_entry(f.code);
    out += fmt::format(
        "{}:0x{:x}: {}: {}\n", name, f.offset,
        styled(style.color, severity_style(f.severity),
               fmt::format("{}[{} {}]", to_string(f.severity), code_string(f.code), entry.name)),
        f.message);
    out += fmt::format("  --> {}\n", f.path);
    if (!f.hint.empty()) out += fmt::format("  = hint: {}\n", f.hint);
  }
  if (report.findings_dropped != 0 && !style.quiet) {
    out += fmt::format("{}: {} more findings not shown (--limit findings=N)\n", name,
                       report.findings_dropped);
  }
  if (!style.quiet) out += render_summary_line(report, style);
  return out;
}

std::string render_summary_line(const Report& report, const TextStyle& style) {
  const std::string name = shown_name(report.path);
  const Facts& facts = report.facts;
  std::string shape;
  if (facts.version) {
    // With --data, how much tensor data the scan read (absent when it could not run).
    const std::string data_checked =
        facts.data_checked ? ", data checked: " + size_text(*facts.data_checked) : "";
    shape = fmt::format(" (v{}{}, {} kv, {} tensors, {} bytes{})", *facts.version,
                        facts.endian == Endian::Big ? " big-endian" : "", facts.kv_read,
                        facts.tensors_read, facts.file_size, data_checked);
  }
  const std::string verdict =
      report.unreadable() ? styled(style.color, severity_style(Severity::Error), "unreadable")
      : report.passed()
          ? styled(style.color, fmt::fg(fmt::terminal_color::bright_green) | fmt::emphasis::bold,
                   "pass")
          : styled(style.color, severity_style(Severity::Error), "FAIL");
  return fmt::format("{}: {}: {} error{}, {} warning{}, {} note{}{}\n", name, verdict,
                     report.errors, report.errors == 1 ? "" : "s", report.warnings,
                     report.warnings == 1 ? "" : "s", report.notes, report.notes == 1 ? "" : "s",
                     shape);
}

namespace {

// GitHub's workflow-command escaping: the message may hold no raw line breaks or '%'; a
// property value also no ':' or ',' (they end the property).
std::string github_data(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      default: out += c;
    }
  }
  return out;
}
std::string github_property(std::string_view text) {
  std::string out;
  for (const char c : github_data(text)) {
    switch (c) {
      case ':': out += "%3A"; break;
      case ',': out += "%2C"; break;
      default: out += c;
    }
  }
  return out;
}
std::string_view github_level(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    default: return "notice";
  }
}

}  // namespace

std::string render_github(std::span<const Report> reports) {
  std::string out;
  for (const Report& r : reports) {
    const std::string file = github_property(shown_name(r.path));
    for (const Finding& f : r.findings) {
      const std::string title =
          github_property(fmt::format("{} {}", code_string(f.code), catalogue_entry(f.code).name));
      std::string message =
          f.code == Code::UnreadableFile ? shown_name(f.message) : std::string(f.message);
      if (!r.unreadable()) message += fmt::format(" (at 0x{:x}, {})", f.offset, f.path);
      if (!f.hint.empty()) message += "\nhint: " + f.hint;
      out += fmt::format("::{} file={},title={}::{}\n", github_level(f.severity), file, title,
                         github_data(message));
    }
    if (r.findings_dropped != 0) {
      out += fmt::format(
          "::warning file={},title=findings not shown::{} more findings not shown "
          "(--limit findings=N)\n",
          file, r.findings_dropped);
    }
    // The runner reads any line that starts with "::" (after blanks) as a command: a summary
    // line names the file first, so a relative name such as "::warning::x.gguf" is shown as
    // "./::warning::x.gguf", the same file.
    std::string summary = render_summary_line(r, TextStyle{});
    const std::size_t first = summary.find_first_not_of(" \t");
    if (first != std::string::npos && summary.compare(first, 2, "::") == 0) {
      summary.insert(first, "./");
    }
    out += summary;
  }
  if (reports.size() > 1) out += render_text_total(reports, TextStyle{});
  return out;
}

std::string human_size(std::uint64_t bytes) {
  return size_text(bytes);
}

namespace {

// The options in force, as JSON and SARIF record them: a report says what it was checked
// against. Limits left unlimited are null.
json options_json(const Options& options) {
  const auto limit = [](std::uint64_t v) { return v == UINT64_MAX ? json(nullptr) : json(v); };
  json overrides = json::object();
  for (const auto& [code, severity] : options.severity_overrides) {
    // As --severity spells it: "off", not the catalogue's "silent".
    overrides[std::string(code_string(code))] =
        severity == Severity::Silent ? "off" : std::string(to_string(severity));
  }
  return {{"profile", to_string(options.profile)},
          {"werror", options.werror},
          {"severity_overrides", std::move(overrides)},
          {"limits",
           {{"depth", options.limits.max_depth},
            {"kv-count", limit(options.limits.max_kv_count)},
            {"tensor-count", limit(options.limits.max_tensor_count)},
            {"string-length", limit(options.limits.max_string_length)},
            {"array-length", limit(options.limits.max_array_length)},
            {"findings", limit(options.limits.max_findings)},
            {"template-bytes", limit(options.limits.max_template_bytes)}}},
          {"data", options.data.enabled},
          {"model_checks", options.model_checks},
          {"template_checks", options.template_checks}};
}

json tool_json() {
  return {{"name", "ggufcheck"},
          {"version", tool_version()},
          {"commit", tool_commit()},
          {"llama_cpp", llama_cpp_version()}};
}

}  // namespace

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
    json facts_json = {{"file_size", facts.file_size},
                       {"version", optional_json(facts.version)},
                       {"endianness", facts.endian == Endian::Big ? "big" : "little"},
                       {"tensor_count", optional_json(facts.tensor_count)},
                       {"kv_count", optional_json(facts.kv_count)},
                       {"kv_read", facts.kv_read},
                       {"tensors_read", facts.tensors_read},
                       {"alignment", facts.alignment},
                       {"data_start", optional_json(facts.data_start)},
                       {"tensor_data_size", optional_json(facts.tensor_data_size)}};
    // Only with --data, and only when the scan ran: its absence says the values were not read.
    if (facts.data_checked) facts_json["data_checked"] = *facts.data_checked;
    files.push_back({{"path", r.path},
                     {"status", status},
                     {"facts", std::move(facts_json)},
                     {"summary",
                      {{"errors", r.errors},
                       {"warnings", r.warnings},
                       {"notes", r.notes},
                       {"findings_dropped", r.findings_dropped}}},
                     {"findings", std::move(findings)}});
  }
  json doc = {{"schema_version", kJsonSchemaVersion},
              {"tool", tool_json()},
              {"profile", to_string(options.profile)},
              {"werror", options.werror},
              {"options", options_json(options)},
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
                         const SarifOptions& sarif) {
  const std::string help_base = sarif.help_base.empty() ? GGUFCHECK_HELP_BASE_URL : sarif.help_base;
  std::optional<std::filesystem::path> root;
  if (sarif.root) root = absolute_path(*sarif.root);

  // One rule per code used, in code order, so rule indices are stable within a run.
  std::map<Code, std::size_t> rule_index;
  for (const Report& r : reports) {
    for (const Finding& f : r.findings) rule_index.emplace(f.code, 0);
  }
  json rules = json::array();
  for (auto& [code, index] : rule_index) {
    const CatalogueEntry& e = catalogue_entry(code);
    index = rules.size();
    Severity level = options.severity(code);
    if (level == Severity::Silent) level = Severity::Error;  // only GGUF0001 can be here
    const std::string help_uri = help_base + code_string(code) + ".md";
    Help help = rule_help(code, help_uri);
    const std::string_view group = to_string(e.area);
    rules.push_back(
        {{"id", code_string(code)},
         {"name", e.name},
         {"shortDescription", {{"text", e.meaning}}},
         {"fullDescription",
          {{"text", fmt::format("{} (severity: {})", e.meaning, severities_line(e))}}},
         {"helpUri", help_uri},
         {"help", {{"text", std::move(help.text)}, {"markdown", std::move(help.markdown)}}},
         {"defaultConfiguration", {{"level", sarif_level(level)}}},
         {"properties",
          {{"tags", json::array({"gguf", to_string(options.profile), group})},
           {"precision", group == "writer-diagnosis" ? "high" : "very-high"},
           {"problem.severity", problem_severity(level)}}}});
  }

  json artifacts = json::array();
  json results = json::array();
  json notifications = json::array();
  int exit_code = 0;
  bool successful = true;
  for (const Report& r : reports) {
    const std::size_t artifact = artifacts.size();
    const json location = artifact_location(artifact_uri(r.path, root));
    json indexed = location;
    indexed["index"] = artifact;
    json entry = {{"location", location}, {"roles", json::array({"analysisTarget"})}};
    if (!r.unreadable()) entry["length"] = r.facts.file_size;
    artifacts.push_back(std::move(entry));
    exit_code = std::max(exit_code, r.exit_status());
    for (const Finding& f : r.findings) {
      if (f.code == Code::UnreadableFile) {
        successful = false;
        notifications.push_back(
            {{"level", "error"},
             {"message", {{"text", f.message}}},
             {"locations", json::array({{{"physicalLocation", {{"artifactLocation", indexed}}}}})},
             {"associatedRule", {{"id", code_string(f.code)}, {"index", rule_index.at(f.code)}}}});
      }
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
                  {{"artifactLocation", indexed},
                   {"region",
                    {{"startLine", 1}, {"byteOffset", f.offset}, {"byteLength", f.length}}}}},
                 {"logicalLocations",
                  json::array({{{"fullyQualifiedName", f.path}, {"kind", "member"}}})}}})},
          {"properties", {{"name", catalogue_entry(f.code).name}, {"fieldPath", f.path}}}};
      results.push_back(std::move(result));
    }
    if (r.findings_dropped != 0) {
      const std::uint64_t n = r.findings_dropped;
      const std::uint64_t limit = options.limits.max_findings;
      notifications.push_back(
          {{"level", "warning"},
           {"message",
            {{"text", fmt::format("{} finding{} beyond the limit of {} {} counted but not listed",
                                  n, n == 1 ? "" : "s", limit, n == 1 ? "was" : "were")}}},
           {"locations", json::array({{{"physicalLocation", {{"artifactLocation", indexed}}}}})},
           {"properties", {{"findingsDropped", n}, {"limit", limit}}}});
    }
  }
  json invocation = {{"executionSuccessful", successful},
                     {"exitCode", exit_code},
                     {"toolExecutionNotifications", std::move(notifications)}};
  json run = {{"tool",
               {{"driver",
                 {{"name", "ggufcheck"},
                  {"version", tool_version()},
                  {"semanticVersion", tool_version()},
                  {"rules", std::move(rules)}}}}},
              {"invocations", json::array({std::move(invocation)})},
              {"artifacts", std::move(artifacts)},
              {"results", std::move(results)},
              {"properties",
               {{"profile", to_string(options.profile)},
                {"options", options_json(options)},
                {"commit", tool_commit()},
                {"llama_cpp", llama_cpp_version()}}}};
  if (root) {
    std::string root_uri = file_uri(*root);
    if (root_uri.back() != '/') root_uri += '/';
    run["originalUriBaseIds"] = {{"SRCROOT", {{"uri", root_uri}}}};
  }
  json doc = {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
              {"version", "2.1.0"},
              {"runs", json::array({std::move(run)})}};
  return doc.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_catalogue_text() {
  std::string out = fmt::format("{:<9} {:<29} {:<16} {:<5} {:<8} {:<8} {:<9} {}\n", "code", "name",
                                "area", "fixed", "strict", "spec", "llama.cpp", "meaning");
  for (const CatalogueEntry& e : sorted_catalogue()) {
    out += fmt::format("{:<9} {:<29} {:<16} {:<5} {:<8} {:<8} {:<9} {}\n", code_string(e.code),
                       e.name, to_string(e.area), e.ends_reading ? "yes" : "",
                       to_string(e.severity(Profile::Strict)), to_string(e.severity(Profile::Spec)),
                       to_string(e.severity(Profile::LlamaCpp)), e.meaning);
  }
  out +=
      "\nfixed: the code means the file cannot be read as GGUF; --disable and --severity cannot "
      "silence or downgrade it\n";
  return out;
}

std::string render_catalogue_json() {
  json list = json::array();
  for (const CatalogueEntry& e : sorted_catalogue()) {
    list.push_back({{"code", code_string(e.code)},
                    {"name", e.name},
                    {"area", to_string(e.area)},
                    {"breaks_structure", e.breaks_structure},
                    {"explains_garbage", e.explains_garbage},
                    {"ends_reading", e.ends_reading},
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
