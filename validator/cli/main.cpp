// ggufcheck: validate GGUF files. Exit status: 0 no error, 1 errors, 2 unreadable input,
// 3 usage error, 4 internal error; with several files the worst wins.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "ggufcheck/dump.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"

namespace fs = std::filesystem;
using namespace ggufcheck;

namespace {

constexpr int kExitUsage = 3;
constexpr int kExitInternal = 4;

struct UsageError {
  std::string message;
};

struct CheckArgs {
  std::vector<std::string> paths;
  std::string profile = "strict";
  std::string format = "text";
  bool werror = false;
  std::vector<std::string> disable, enable, severity, limits;
  unsigned jobs = 1;
  bool quiet = false;
  std::string color = "auto";
};

Code parse_code(const std::string& text) {
  const auto code = find_code(text);
  if (!code) throw UsageError{fmt::format("unknown diagnostic '{}' (see 'ggufcheck list')", text)};
  return *code;
}

std::uint64_t parse_number(const std::string& name, const std::string& text) {
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || text[0] == '-') {
    throw UsageError{fmt::format("--limit {}: '{}' is not a non-negative number", name, text)};
  }
  return v;
}

void apply_limit(Limits& limits, const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos)
    throw UsageError{fmt::format("--limit '{}': expected NAME=VALUE", spec)};
  const std::string name = spec.substr(0, eq);
  const std::uint64_t value = parse_number(name, spec.substr(eq + 1));
  if (name == "depth") {
    if (value < 1 || value > kMaxDepthLimit) {
      throw UsageError{fmt::format("--limit depth must be between 1 and {}", kMaxDepthLimit)};
    }
    limits.max_depth = static_cast<std::uint32_t>(value);
  } else if (name == "kv-count") {
    limits.max_kv_count = value;
  } else if (name == "tensor-count") {
    limits.max_tensor_count = value;
  } else if (name == "string-length") {
    limits.max_string_length = value;
  } else if (name == "array-length") {
    limits.max_array_length = value;
  } else if (name == "findings") {
    limits.max_findings = value;
  } else {
    throw UsageError{
        fmt::format("--limit: unknown limit '{}' (depth, kv-count, tensor-count, string-length, "
                    "array-length, findings)",
                    name)};
  }
}

Options make_options(const CheckArgs& args) {
  Options options;
  const auto profile = parse_profile(args.profile);
  if (!profile)
    throw UsageError{fmt::format("unknown profile '{}' (strict, spec, llama.cpp)", args.profile)};
  options.profile = *profile;
  options.werror = args.werror;
  for (const auto& c : args.disable) options.severity_overrides[parse_code(c)] = Severity::Silent;
  for (const auto& c : args.enable) {
    const Code code = parse_code(c);
    if (options.severity(code) == Severity::Silent)
      options.severity_overrides[code] = Severity::Warning;
  }
  for (const auto& spec : args.severity) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos)
      throw UsageError{fmt::format("--severity '{}': expected CODE=LEVEL", spec)};
    const auto level = parse_severity(spec.substr(eq + 1));
    if (!level) {
      throw UsageError{
          fmt::format("--severity '{}': level must be error, warning, note or off", spec)};
    }
    options.severity_overrides[parse_code(spec.substr(0, eq))] = *level;
  }
  for (const auto& spec : args.limits) apply_limit(options.limits, spec);
  return options;
}

// Expands directories into their *.gguf files (recursively, sorted). A directory without one
// becomes an entry that reports why.
struct Input {
  std::string path;
  std::string problem;  // non-empty: not validated, reported as unreadable
};

std::vector<Input> expand_inputs(const std::vector<std::string>& paths) {
  std::vector<Input> inputs;
  for (const std::string& path : paths) {
    std::error_code ec;
    if (path == "-" || !fs::is_directory(path, ec)) {
      inputs.push_back({path, ""});
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const fs::path& p = it->path();
      std::error_code type_ec;
      if (p.extension() == ".gguf" && it->is_regular_file(type_ec)) found.push_back(p.string());
    }
    if (ec) {
      inputs.push_back({path, fmt::format("cannot search directory {}: {}", path, ec.message())});
      continue;
    }
    if (found.empty()) {
      inputs.push_back({path, fmt::format("no *.gguf files found under directory {}", path)});
      continue;
    }
    std::sort(found.begin(), found.end());
    for (auto& f : found) inputs.push_back({std::move(f), ""});
  }
  return inputs;
}

bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const char* term = std::getenv("TERM");
  return ::isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr &&
         !(term != nullptr && std::string_view(term) == "dumb");
}

int run_check(const CheckArgs& args) {
  const Options options = make_options(args);
  const std::vector<Input> inputs = expand_inputs(args.paths);
  std::vector<Report> reports(inputs.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < inputs.size(); i = next++) {
      reports[i] = inputs[i].problem.empty() ? validate_file(inputs[i].path, options)
                                             : unreadable_report(inputs[i].path, inputs[i].problem);
    }
  };
  const unsigned jobs =
      std::clamp<unsigned>(args.jobs == 0 ? std::thread::hardware_concurrency() : args.jobs, 1,
                           static_cast<unsigned>(std::max<std::size_t>(inputs.size(), 1)));
  std::vector<std::thread> threads;
  for (unsigned j = 1; j < jobs; ++j) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();

  int status = 0;
  for (const Report& r : reports) status = std::max(status, r.exit_status());

  if (args.format == "json") {
    std::fputs(render_json(reports, options, status).c_str(), stdout);
  } else if (args.format == "sarif") {
    std::fputs(render_sarif(reports, options).c_str(), stdout);
  } else {
    const TextStyle style{use_color(args.color), args.quiet};
    for (const Report& r : reports) std::fputs(render_text(r, style).c_str(), stdout);
  }
  for (const Report& r : reports) {
    if (r.unreadable() && args.format != "text") {
      for (const Finding& f : r.findings) {
        if (f.code == Code::UnreadableFile)
          std::fprintf(stderr, "ggufcheck: %s\n", f.message.c_str());
      }
    }
  }
  return status;
}

// `ggufcheck FILE` means `ggufcheck check FILE`.
std::vector<std::string> with_default_subcommand(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  static const std::vector<std::string> kFirst = {"check", "list", "explain", "dump",
                                                  "help",  "-h",   "--help",  "--version"};
  if (args.empty() || std::find(kFirst.begin(), kFirst.end(), args[0]) == kFirst.end()) {
    args.insert(args.begin(), "check");
  }
  if (args[0] == "help") args[0] = "--help";
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
  return args;
}

int run(int argc, char** argv) {
  CLI::App app{
      "ggufcheck: a strict, bounds-checked validator for GGUF model files.\n"
      "Exit status: 0 no error, 1 errors found, 2 an input could not be read, 3 usage error,\n"
      "4 internal error; with several files the worst wins.",
      "ggufcheck"};
  app.set_version_flag("--version", std::string("ggufcheck ") + std::string(tool_version()));
  app.require_subcommand(1);
  app.footer("Run 'ggufcheck SUBCOMMAND --help' for the options of each subcommand.");

  CheckArgs check;
  auto* cmd_check = app.add_subcommand(
      "check", "Validate files (the default subcommand: 'ggufcheck model.gguf' works too)");
  cmd_check->add_option("paths", check.paths,
                        "GGUF files; directories are searched recursively for *.gguf; '-' reads "
                        "standard input");
  cmd_check
      ->add_option("--profile", check.profile,
                   "strict (default: the CI gate), spec (what docs/gguf.md requires) or "
                   "llama.cpp (errors exactly where llama.cpp fails to load)")
      ->check(CLI::IsMember({"strict", "spec", "llama.cpp"}));
  cmd_check->add_option("--format", check.format, "Output: text (default), json or sarif")
      ->check(CLI::IsMember({"text", "json", "sarif"}));
  cmd_check->add_flag("--werror", check.werror, "Treat warnings as errors");
  cmd_check
      ->add_option("--disable", check.disable, "Silence a diagnostic (code or name); repeatable")
      ->allow_extra_args(false);
  cmd_check
      ->add_option("--enable", check.enable,
                   "Report a diagnostic the profile keeps silent, as a warning; repeatable")
      ->allow_extra_args(false);
  cmd_check
      ->add_option("--severity", check.severity,
                   "Set a diagnostic's severity: CODE=error|warning|note|off; repeatable")
      ->allow_extra_args(false);
  cmd_check
      ->add_option("--limit", check.limits,
                   "Resource limit NAME=VALUE: depth (array nesting, default 64, max 1024), "
                   "kv-count, tensor-count, string-length, array-length (default unlimited; "
                   "exceeding one reports GGUF0002), findings (kept per file, default 10000)")
      ->allow_extra_args(false);
  cmd_check->add_option("-j,--jobs", check.jobs, "Validate N files in parallel (0: one per core)")
      ->check(CLI::Range(0, 1024));
  cmd_check->add_flag("-q,--quiet", check.quiet, "Text output: print errors only, no summaries");
  cmd_check->add_option("--color", check.color, "Colour text output: auto (default), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));

  std::string list_format = "text";
  auto* cmd_list =
      app.add_subcommand("list", "List every diagnostic with its severity per profile");
  cmd_list->add_option("--format", list_format, "text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));

  std::string explain_what;
  auto* cmd_explain = app.add_subcommand(
      "explain",
      "Print a diagnostic's page (docs/diagnostics/): what it means, why it matters, an example, "
      "how to fix the writer");
  cmd_explain->add_option("code", explain_what, "A code or a name: GGUF4001 or misaligned-offset")
      ->required();

  std::string dump_path;
  std::string dump_level = "2";
  std::string dump_profile = "strict";
  auto* cmd_dump = app.add_subcommand(
      "dump",
      "Print the canonical JSON of a file (the conformance suite's output, docs/dump.md): "
      "exit 0 accepted, 1 rejected ({\"ok\": false} with the errors), 2 unreadable");
  cmd_dump->add_option("file", dump_path, "A GGUF file; '-' reads standard input")->required();
  cmd_dump
      ->add_option("--level", dump_level,
                   "0 verdict, 1 + header and counts, 2 + metadata and tensor infos (default), "
                   "3 + SHA-256 of each tensor's data; L0..L3 work too")
      ->check(CLI::IsMember({"0", "1", "2", "3", "L0", "L1", "L2", "L3"}));
  cmd_dump
      ->add_option("--profile", dump_profile,
                   "The profile whose verdict decides acceptance: strict (default), spec or "
                   "llama.cpp")
      ->check(CLI::IsMember({"strict", "spec", "llama.cpp"}));

  std::vector<std::string> args = with_default_subcommand(argc, argv);
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    const auto subcommands = app.get_subcommands();
    std::fputs((subcommands.empty() ? app.help() : subcommands.front()->help("ggufcheck")).c_str(),
               stdout);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    std::puts(e.what());
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ggufcheck: %s (see 'ggufcheck --help')\n", e.what());
    return kExitUsage;
  }

  if (cmd_list->parsed()) {
    std::fputs((list_format == "json" ? render_catalogue_json() : render_catalogue_text()).c_str(),
               stdout);
    return 0;
  }
  if (cmd_explain->parsed()) {
    std::fputs(render_explanation(parse_code(explain_what)).c_str(), stdout);
    return 0;
  }
  if (cmd_dump->parsed()) {
    Options options;
    options.profile = *parse_profile(dump_profile);
    const auto level = static_cast<DumpLevel>(dump_level.back() - '0');
    const Dump result = dump_file(dump_path, options, level);
    std::fputs(result.json.c_str(), stdout);
    return result.exit_status;
  }
  if (check.paths.empty()) {
    throw UsageError{"no input: give GGUF files or directories (see 'ggufcheck --help')"};
  }
  return run_check(check);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ggufcheck: %s\n", e.message.c_str());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ggufcheck: internal error: %s\n", e.what());
    return kExitInternal;
  } catch (...) {
    std::fprintf(stderr, "ggufcheck: internal error\n");
    return kExitInternal;
  }
}
