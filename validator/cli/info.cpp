// `ggufcheck info FILE...`: what is in a model, for people (text) or machines (--format json).
#include "ggufcheck/info.hpp"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"

namespace ggufcheck::cli {

namespace {

struct InfoArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string profile = "strict";
  bool full = false;
  bool model_checks = true;
  bool data = false;
  std::string color = "auto";
  std::vector<std::string> limits;
  std::string base;  // --base: a LoRA adapter's base model
};

int run_info(const InfoArgs& args) {
  require_one_of("--format", args.format, {"text", "json"}, "a format of 'info'");
  require_one_of("--profile", args.profile, kProfiles, "a profile");
  require_one_of("--color", args.color, {"auto", "always", "never"}, "a colour mode");
  if (args.paths.empty()) {
    throw UsageError{
        "info needs a file: give GGUF files or directories (see 'ggufcheck info "
        "--help')"};
  }
  Options options;
  options.profile = *parse_profile(args.profile);
  options.model_checks = args.model_checks;
  options.data.enabled = args.data;
  options.base_model = checked_base(args.base);
  for (const std::string& spec : args.limits) apply_limit(options.limits, spec);
  InfoOptions info_options;
  info_options.full = args.full;
  // Each file is written while it is read, so that memory stays what validation needs (a file of
  // millions of pairs, or a value shown whole with --full, is never held as text).
  const bool json = args.format == "json";
  InfoWriter writer(json, !json && use_color(args.color), [](std::string_view text) {
    emit(text);
    return !output_failed();
  });
  int status = 0;
  for (const InputPath& input : expand_local_inputs(args.paths, "info")) {
    if (output_failed()) break;
    if (!input.problem.empty()) {
      Info info;
      info.path = input.path;
      info.report = unreadable_report(input.path, input.problem);
      status = std::max(status, info.report.exit_status());
      writer.write(info);
    } else {
      status = std::max(status, writer.file(input.path, options, info_options));
    }
  }
  (void)writer.finish();
  return status;
}

}  // namespace

Command add_info_command(CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  auto* cmd = app.add_subcommand(
      "info",
      "Show what is in a model: architecture, size, hyperparameters, vocabulary, chat "
      "templates, tensors by type, split set, every metadata pair (long values elided), and the "
      "verdict line. Exit status as 'check': 0 pass, 1 errors, 2 unreadable");
  cmd->allow_extras();
  cmd->add_option("paths", args->paths,
                  "GGUF files or directories (searched for *.gguf as 'check' does); '-' reads "
                  "standard input. A rejected file is shown as far as it could be read")
      ->type_name("PATH");
  take_last(cmd->add_option("--format", args->format,
                            "text (default) or json (the schema is docs/info.schema.json)"),
            "FORMAT");
  cmd->add_flag("--full", args->full,
                "Print arrays and strings whole and list every tensor (default: the first 8 "
                "elements of an array, the first 120 bytes of a string)");
  take_last(cmd->add_option("--profile", args->profile,
                            "The profile of the verdict line: strict (default), spec or llama.cpp"),
            "PROFILE");
  cmd->add_flag("--data,--check-tensors", args->data,
                "Include the tensor data check in the verdict line, as 'check --data' (reads "
                "every tensor's bytes)");
  cmd->add_flag("!--no-model-checks", args->model_checks,
                "The verdict of the container only, as 'check --no-model-checks'");
  take_last(cmd->add_option("--base", args->base,
                            "A LoRA adapter's base model, for the verdict line, as for 'check'"),
            "MODEL");
  cmd->add_option("--limit", args->limits, "Resource limit NAME=VALUE, as for 'check'")
      ->type_name("NAME=VALUE")
      ->allow_extra_args(false);
  take_last(cmd->add_option("--color", args->color,
                            "Colour the verdict line: auto (default), always, never"),
            "WHEN");
  return {cmd, [args] { return run_info(*args); }};
}

}  // namespace ggufcheck::cli
