// ggufcheck: validate GGUF files. Exit status: 0 no error, 1 errors, 2 unreadable input,
// 3 usage error, 4 internal error (a report that could not be written among them); with several
// files the worst wins. The subcommands live beside this file (cli.hpp).
#include <fmt/format.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"
#include "ggufcheck/dump.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"

using namespace ggufcheck;
using namespace ggufcheck::cli;

namespace {

// ---------------------------------------------------------------------------------------------
// The command line

const std::vector<std::string> kSubcommands = {"check", "info",    "hash", "verify",
                                               "list",  "explain", "dump", "help"};

// Optimal string alignment distance (Levenshtein with adjacent transpositions).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// `ggufcheck FILE` (or URL) means `ggufcheck check FILE`; a first word that is neither a path nor a
// subcommand but is close to one is a usage error with a suggestion.
std::vector<std::string> with_default_subcommand(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  static const std::vector<std::string> kFirst = {"check", "info",    "hash",     "verify",
                                                  "list",  "explain", "dump",     "help",
                                                  "-h",    "--help",  "--version"};
  if (args.empty() || std::find(kFirst.begin(), kFirst.end(), args[0]) == kFirst.end()) {
    struct stat st {};
    if (!args.empty() && !args[0].empty() && args[0][0] != '-' && args[0].size() <= 64 &&
        !is_url(args[0]) && ::lstat(args[0].c_str(), &st) != 0) {
      std::size_t best = 3;
      std::string suggestion;
      for (const std::string& sub : kSubcommands) {
        const std::size_t d = edit_distance(args[0], sub);
        if (d < best) {
          best = d;
          suggestion = sub;
        }
      }
      if (!suggestion.empty()) {
        throw UsageError{fmt::format("'{}' is neither a file nor a subcommand; did you mean '{}'?",
                                     args[0], suggestion)};
      }
    }
    args.insert(args.begin(), "check");
  }
  if (args[0] == "help") args[0] = "--help";
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
  return args;
}

// CLI11's exceptions in ggufcheck's own words.
std::string usage_message(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    const std::size_t colon = what.find(':');
    const std::size_t space = what.find(' ');
    if (!what.empty() && what[0] == '-' && colon != std::string::npos && colon < space) {
      return fmt::format("{} needs a value", what.substr(0, colon));
    }
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    if (what.rfind("code ", 0) == 0) return "explain needs a code or a name (see 'ggufcheck list')";
    if (what.rfind("file ", 0) == 0) return "dump needs a file";
  }
  return fmt::format("{} (see 'ggufcheck --help')", what);
}

// Arguments no option or positional took.
void reject_leftovers(const CLI::App& app) {
  for (const std::string& arg : app.remaining(true)) {
    if (arg == "--") continue;  // the end of the options, kept by CLI11 among the extras
    if (arg.size() > 1 && arg[0] == '-') {
      const std::string name = arg.substr(0, arg.find('='));
      throw UsageError{fmt::format("unknown option '{}' (see 'ggufcheck --help')", name)};
    }
    throw UsageError{fmt::format("unexpected argument '{}' (see 'ggufcheck --help')", arg)};
  }
}

// CLI11's help, without the "{false}" it writes after a spelling that turns an option off
// ("--progress,--no-progress{false}"): the description says what each spelling does.
class HelpFormatter : public CLI::Formatter {
 public:
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override {
    std::string name = CLI::Formatter::make_option_name(opt, is_positional);
    for (std::size_t open = name.find('{'); open != std::string::npos; open = name.find('{')) {
      const std::size_t close = name.find('}', open);
      if (close == std::string::npos) break;
      name.erase(open, close - open + 1);
    }
    return name;
  }
};

int run(int argc, char** argv) {
  CLI::App app{
      "ggufcheck: a strict, bounds-checked validator for GGUF model files.\n"
      "Exit status: 0 no error, 1 errors found, 2 an input could not be read, 3 usage error,\n"
      "4 internal error (or the report could not be written); with several files the worst "
      "wins.",
      "ggufcheck"};
  app.set_version_flag("--version", version_text(),
                       "Print the version, the git commit and the llama.cpp the llama.cpp "
                       "profile follows, and exit");
  app.formatter(std::make_shared<HelpFormatter>());  // before the subcommands, which inherit it
  app.require_subcommand(1);
  app.allow_extras();
  const Command check = add_check_command(app);
  const std::vector<Command> commands = {add_info_command(app), add_hash_command(app),
                                         add_verify_command(app)};

  std::string list_format = "text";
  auto* cmd_list =
      app.add_subcommand("list", "List every diagnostic with its severity per profile");
  cmd_list->allow_extras();
  take_last(cmd_list->add_option("--format", list_format, "text (default) or json"), "FORMAT");

  std::string explain_what;
  auto* cmd_explain = app.add_subcommand(
      "explain",
      "Print a diagnostic's page (docs/diagnostics/): what it means, why it matters, an example, "
      "how to fix the writer");
  cmd_explain->allow_extras();
  cmd_explain->add_option("code", explain_what, "A code or a name: GGUF4001 or misaligned-offset")
      ->required();

  std::string dump_path;
  std::string dump_level = "2";
  std::string dump_profile = "strict";
  auto* cmd_dump = app.add_subcommand(
      "dump",
      "Print the canonical JSON of a file (the conformance suite's output, docs/dump.md): "
      "exit 0 accepted, 1 rejected ({\"ok\": false} with the errors), 2 unreadable");
  cmd_dump->allow_extras();
  cmd_dump->add_option("file", dump_path, "A GGUF file; '-' reads standard input")->required();
  take_last(cmd_dump->add_option("--level", dump_level,
                                 "0 verdict, 1 + header and counts, 2 + metadata and tensor "
                                 "infos (default), 3 + SHA-256 of each tensor's data; L0..L3 "
                                 "work too"),
            "LEVEL");
  take_last(cmd_dump->add_option("--profile", dump_profile,
                                 "The profile whose verdict decides acceptance: strict "
                                 "(default), spec or llama.cpp"),
            "PROFILE");

  // After the subcommands, which would inherit it.
  app.footer(
      "'ggufcheck FILE...' is 'ggufcheck check FILE...'. Run 'ggufcheck SUBCOMMAND --help' for "
      "the options of each subcommand.");

  std::vector<std::string> args = with_default_subcommand(argc, argv);
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    const auto subcommands = app.get_subcommands();
    if (subcommands.empty()) {
      // The top level: the subcommands, then the options of the default one.
      emit(app.help());
      emit("\n");
      emit(check.app->help("ggufcheck"));
    } else {
      emit(subcommands.front()->help("ggufcheck"));
    }
    return 0;
  } catch (const CLI::CallForVersion& e) {
    emit(e.what());
    emit("\n");
    return 0;
  } catch (const CLI::ParseError& e) {
    throw UsageError{usage_message(e)};
  }
  reject_leftovers(app);

  if (cmd_list->parsed()) {
    require_one_of("--format", list_format, {"text", "json"}, "a format of 'list'");
    emit(list_format == "json" ? render_catalogue_json() : render_catalogue_text());
    return 0;
  }
  if (cmd_explain->parsed()) {
    emit(render_explanation(parse_code(explain_what)));
    return 0;
  }
  if (cmd_dump->parsed()) {
    require_one_of("--level", dump_level, {"0", "1", "2", "3", "L0", "L1", "L2", "L3"}, "a level");
    require_one_of("--profile", dump_profile, kProfiles, "a profile");
    Options options;
    options.profile = *parse_profile(dump_profile);
    const auto level = static_cast<DumpLevel>(dump_level.back() - '0');
    if (is_url(dump_path)) {  // the failure object of an unreadable file (docs/dump.md)
      emit(nlohmann::ordered_json{{"ok", false},
                                  {"error", local_files_only(dump_path, "dump")},
                                  {"errors", nlohmann::ordered_json::array()}}
               .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
      emit("\n");
      return 2;
    }
    // Streamed as it is rendered; a write that fails stops it, and main() makes that exit 4.
    return dump_file(dump_path, options, level, [](std::string_view text) {
      emit(text);
      return !output_failed();
    });
  }
  for (const Command& command : commands) {
    if (command.app->parsed()) return command.run();
  }
  return check.run();
}

int run_guarded(int argc, char** argv) {
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

}  // namespace

int ggufcheck::cli::cli_main(int argc, char** argv) {
  // A reader that goes away is a write error (EPIPE, exit 4), not a silent death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  occupy_closed_standard_descriptors();
  const int status = run_guarded(argc, argv);
  if (const int error = finish_stdout(); error != 0) {
    std::fprintf(stderr, "ggufcheck: cannot write the report: %s\n", std::strerror(error));
    return kExitInternal;
  }
  return status;
}
