// `ggufcheck hash` (llama-gguf-hash's output and --check, byte for byte; or a JSON manifest) and
// `ggufcheck verify` (files against a JSON manifest). docs/hash.md says what each prints.
#include "ggufcheck/hash.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "ggufcheck/render.hpp"

namespace ggufcheck::cli {

namespace {

struct HashArgs {
  std::vector<std::string> paths;
  bool xxh64 = false, sha1 = false, sha256 = false, uuid = false, all = false;
  bool no_layer = false;
  std::optional<std::string> check;
  std::string format = "text";
  std::string jobs = "0";
};

unsigned threads_of(const std::string& text) {
  const auto n = parse_unsigned(text);
  if (!n || *n > 1024) {
    throw UsageError{fmt::format("--jobs: '{}' is not a number of threads (0..1024)", text)};
  }
  return static_cast<unsigned>(*n);
}

// The files named, directories expanded; '-' is refused (a stream would be read whole).
std::vector<InputPath> hash_inputs(const std::vector<std::string>& paths, const char* command) {
  if (paths.empty()) {
    throw UsageError{fmt::format("{} needs a file (see 'ggufcheck {} --help')", command, command)};
  }
  for (const std::string& p : paths) {
    if (p == "-") {
      throw UsageError{fmt::format(
          "{}: standard input cannot be hashed (its tensor data would be held in memory); give a "
          "file",
          command)};
    }
  }
  return expand_local_inputs(paths, command);
}

void add_jobs_option(CLI::App& cmd, std::string& jobs) {
  take_last(cmd.add_option("-j,--jobs,--threads", jobs,
                           "Threads hashing at once (default 0: one per core)"),
            "N");
}

// Messages name paths from the command line, a directory walk or a manifest: each is escaped
// where it is put in (shown_name), so nothing a file name holds reaches the terminal raw.
void say(const std::string& text) {
  std::fprintf(stderr, "ggufcheck: %s\n", text.c_str());
}

// Nothing partial is shown as a result: the output of an interrupted run is dropped.
int interrupted() {
  std::fputs("ggufcheck: interrupted; nothing was written\n", stderr);
  return kExitInterrupted;
}

// general.uuid against the UUID of the tensor data (hash --uuid): said on stderr, the output
// stays llama-gguf-hash's.
void note_general_uuid(const HashResult& r, const std::string& path) {
  if (r.files.empty()) return;
  const FileHash& f = r.files.front();
  if (!f.general_uuid_problem.empty()) {
    say(fmt::format("{}: warning: {}", shown_name(path), f.general_uuid_problem));
    return;
  }
  if (!f.general_uuid) return;
  const auto declared = parse_uuid(*f.general_uuid);
  if (!declared) {
    say(fmt::format("{}: warning: general.uuid is not a UUID", shown_name(path)));
  } else if (*declared != r.uuid) {
    say(fmt::format("{}: warning: general.uuid is {}, but the UUID of the tensor data is {}",
                    shown_name(path), uuid_text(*declared), uuid_text(r.uuid)));
  }
}

int run_hash(const HashArgs& args) {
  require_one_of("--format", args.format, {"text", "json"}, "a format of 'hash'");
  const bool json = args.format == "json";
  if (json && args.check)
    throw UsageError{"--check compares text manifests: not with --format json"};
  if (json && args.no_layer) {
    throw UsageError{"--no-layer: a JSON manifest always records every tensor"};
  }
  HashOptions options;
  options.algorithms = {args.xxh64 || args.all, args.sha1 || args.all, args.sha256 || args.all,
                        args.uuid};
  options.per_tensor = !args.no_layer;
  options.threads = threads_of(args.jobs);
  options.cancel = &g_interrupted;
  const std::vector<InputPath> inputs = hash_inputs(args.paths, "hash");
  catch_interrupts();

  int status = 0;
  std::string out;
  if (json) {
    options.algorithms.sha256 = true;  // the manifest's Merkle root is over the tensors' sha256
    options.manifest = true;
    std::vector<std::string> models;
    std::vector<std::string> readable;
    for (const InputPath& in : inputs) {
      if (!in.problem.empty()) {
        say(shown_name(in.problem));
        status = std::max(status, 2);
      } else {
        readable.push_back(in.path);
      }
    }
    // A split set's shards, named by one of them, are one model.
    for (const std::vector<std::string>& model : group_inputs(readable)) {
      const HashResult r = hash_model(model, options);
      if (r.status == kExitInterrupted || g_interrupted) return interrupted();
      if (r.status != 0) {
        say(fmt::format("cannot hash: {}", r.error));
        status = std::max(status, r.status);
        continue;
      }
      models.push_back(render_manifest_model(r, options));
    }
    if (g_interrupted) return interrupted();
    if (!models.empty()) emit(render_manifest(models));
    return status;
  }

  // llama-gguf-hash --check MANIFEST: which hashes it holds decides the default.
  std::optional<HashAlgorithms> kinds;
  if (args.check) {
    kinds = LlamaManifest::kinds_of(*args.check);
    if (!kinds) {
      // As llama-gguf-hash prints it (no newline), the path escaped.
      emit(fmt::format("ERROR cannot open manifest {}", shown_name(*args.check)));
      say(fmt::format("cannot open the manifest {}", shown_name(*args.check)));
      return 5;
    }
    if (!kinds->any()) {
      emit(fmt::format("ERROR manifest does not have any known hash format in {}",
                       shown_name(*args.check)));
      say(fmt::format("{} has no line of a known hash (xxh64, sha1, sha256, uuid)",
                      shown_name(*args.check)));
      return 4;
    }
    if (!options.algorithms.any()) {  // the strongest it holds
      if (kinds->sha256) {
        options.algorithms.sha256 = true;
      } else if (kinds->sha1) {
        options.algorithms.sha1 = true;
      } else if (kinds->xxh64) {
        options.algorithms.xxh64 = true;
      } else {
        options.algorithms.uuid = true;
      }
    }
    if (options.algorithms.uuid) {
      say("note: as llama-gguf-hash does, --check compares the uuid line with the manifest's "
          "sha256 line of the file, so it never matches; 'ggufcheck verify' compares UUIDs");
    }
  }
  if (!options.algorithms.any()) options.algorithms.xxh64 = true;
  for (const InputPath& in : inputs) {
    if (!in.problem.empty()) {
      say(shown_name(in.problem));
      status = std::max(status, 2);
      continue;
    }
    const HashResult r = hash_model({in.path}, options);
    if (r.status == kExitInterrupted || g_interrupted) return interrupted();
    if (r.status != 0) {
      say(fmt::format("cannot hash: {}", r.error));
      status = std::max(status, r.status);
      continue;
    }
    if (options.algorithms.uuid) note_general_uuid(r, in.path);
    if (!args.check) {
      out += render_llama_hash(r, options, in.path);
      continue;
    }
    const auto manifest = LlamaManifest::read(*args.check, llama_check_keys(r, options, in.path));
    if (!manifest) {
      say(fmt::format("cannot open the manifest {}", shown_name(*args.check)));
      return 5;
    }
    const LlamaCheck check = render_llama_check(r, options, in.path, *args.check, *manifest);
    out += check.text;
    status = std::max(status, check.status);
  }
  if (g_interrupted) return interrupted();
  emit(out);
  return status;
}

struct VerifyArgs {
  std::string manifest;
  std::vector<std::string> paths;
  bool ignore_header = false;
  std::string jobs = "0";
};

int run_verify(const VerifyArgs& args) {
  if (args.manifest.empty()) {
    throw UsageError{"verify needs a manifest (from 'ggufcheck hash --format json')"};
  }
  const unsigned threads = threads_of(args.jobs);
  if (is_url(args.manifest)) {
    say(fmt::format("cannot verify: {}", local_files_only(args.manifest, "verify")));
    return 2;
  }
  const ManifestRead read = read_manifest(args.manifest);
  if (!read.manifest) {
    say(fmt::format("cannot verify: {}", read.error));
    return 2;
  }
  const Manifest& manifest = *read.manifest;
  // The models and the files to read for each: the files given (one model), or those recorded.
  std::vector<std::vector<std::string>> files;
  if (!args.paths.empty()) {
    if (manifest.models.size() != 1) {
      throw UsageError{
          fmt::format("{} records {} models: give no FILE to verify each at its recorded paths",
                      args.manifest, manifest.models.size())};
    }
    std::vector<std::string> model;
    for (const InputPath& in : hash_inputs(args.paths, "verify")) {
      if (!in.problem.empty()) {
        say(shown_name(in.problem));
        return 2;
      }
      model.push_back(in.path);
    }
    std::vector<std::string> shards;
    for (const auto& group : group_inputs(model))
      shards.insert(shards.end(), group.begin(), group.end());
    files.push_back(shards);
  } else {
    for (const ManifestModel& m : manifest.models) {
      std::vector<std::string> paths;
      for (const ManifestFile& f : m.files) paths.push_back(f.path);
      files.push_back(paths);
    }
  }
  catch_interrupts();
  VerifyOptions verify_options;
  verify_options.ignore_header = args.ignore_header;
  int status = 0;
  std::string out;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const ManifestModel& expected = manifest.models[i];
    HashOptions options = verify_hash_options(expected);
    options.threads = threads;
    options.cancel = &g_interrupted;
    // The paths come from the manifest: escaped (ESC, OSC, bidi overrides), never raw.
    const std::string shown =
        files[i].size() == 1
            ? shown_name(files[i][0])
            : fmt::format("{} ({} files)", shown_name(files[i][0]), files[i].size());
    const HashResult r = hash_model(files[i], options);
    if (r.status == kExitInterrupted || g_interrupted) return interrupted();
    if (r.status != 0) {
      say(fmt::format("cannot verify: {}", r.error));
      status = std::max(status, r.status);
      continue;
    }
    const Verification v = compare(expected, r, verify_options);
    for (const std::string& note : v.notes) out += fmt::format("{}: note: {}\n", shown, note);
    for (const std::string& d : v.differences) out += fmt::format("{}: {}\n", shown, d);
    if (v.differences.empty()) {
      out += fmt::format("{}: OK, {} tensor{} ({} bytes of tensor data) as in the manifest{}\n",
                         shown, r.tensors.size(), r.tensors.size() == 1 ? "" : "s", r.tensor_bytes,
                         args.ignore_header ? " (headers not compared)" : "");
    } else {
      out += fmt::format("{}: {} difference{} from the manifest\n", shown, v.differences.size(),
                         v.differences.size() == 1 ? "" : "s");
      status = std::max(status, 1);
    }
  }
  if (g_interrupted) return interrupted();
  emit(out);
  return status;
}

}  // namespace

Command add_hash_command(CLI::App& app) {
  auto args = std::make_shared<HashArgs>();
  HashArgs& a = *args;
  auto* cmd = app.add_subcommand(
      "hash",
      "Digests of the tensor data, per tensor and of the whole model, in tensor-info order: the "
      "output of llama.cpp's llama-gguf-hash byte for byte, or a JSON manifest (docs/hash.md)");
  cmd->allow_extras();
  cmd->add_option("paths", a.paths,
                  "GGUF files (directories: their *.gguf files). A file whose tensor layout does "
                  "not resolve is not hashed (exit 1; 'ggufcheck check' says why). A name "
                  "holding a space, control bytes or a backslash is printed escaped (\\xNN)")
      ->type_name("FILE");
  cmd->add_flag("--xxh64", a.xxh64, "xxh64 (the default)");
  cmd->add_flag("--sha1", a.sha1, "SHA-1");
  cmd->add_flag("--sha256", a.sha256, "SHA-256");
  cmd->add_flag("--uuid", a.uuid,
                "The UUIDv5 of the model's tensor data in llama.cpp's namespace (one line); a "
                "general.uuid that differs is said on stderr");
  cmd->add_flag("--all", a.all, "xxh64, sha1 and sha256 (not uuid, as llama-gguf-hash)");
  cmd->add_flag("--no-layer", a.no_layer, "The whole-model lines only, no per-tensor line");
  take_last(cmd->add_option("-c,--check", a.check,
                            "Check against a manifest of llama-gguf-hash lines, as llama-gguf-hash "
                            "--check does: its output and exit status (0 ok, 1 mismatch, 3 "
                            "missing entry, 4 no known hash in the manifest, 5 manifest "
                            "unreadable); by default the strongest hash the manifest holds"),
            "MANIFEST");
  take_last(cmd->add_option("--format", a.format,
                            "text (default: llama-gguf-hash's lines) or json (a manifest for "
                            "'ggufcheck verify': sizes, header digest, per tensor name, type, "
                            "shape, offset, size and sha256, a Merkle root; a split set's shards "
                            "as one model)"),
            "FORMAT");
  add_jobs_option(*cmd, a.jobs);
  cmd->footer(
      "Exit status: 0 hashed, 1 a file whose structure cannot be hashed, 2 unreadable, 3 usage, "
      "130 interrupted (nothing is printed); with --check, llama-gguf-hash's codes.\n"
      "Example: ggufcheck hash --all model.gguf > model.manifest; "
      "ggufcheck hash --check model.manifest model.gguf");
  return {cmd, [args] { return run_hash(*args); }};
}

Command add_verify_command(CLI::App& app) {
  auto args = std::make_shared<VerifyArgs>();
  VerifyArgs& a = *args;
  auto* cmd = app.add_subcommand(
      "verify",
      "Check files against a JSON manifest of 'ggufcheck hash --format json': name each tensor "
      "that is missing, extra, or of another type, shape or digest, and a header, padding (the "
      "bytes outside the tensors), size or general.uuid that differs. A manifest that disagrees "
      "with itself (counts, offsets, digests) is refused");
  cmd->allow_extras();
  cmd->add_option("manifest", a.manifest, "The JSON manifest")->type_name("MANIFEST");
  cmd->add_option("paths", a.paths,
                  "The model's files, in order (a split set: its first shard); default: the "
                  "paths the manifest records, relative to the current directory")
      ->type_name("FILE");
  cmd->add_flag("--ignore-header", a.ignore_header,
                "Compare the tensors only, not the file sizes and headers (metadata that was "
                "edited on purpose)");
  add_jobs_option(*cmd, a.jobs);
  cmd->footer(
      "Exit status: 0 identical, 1 differences, 2 a file or the manifest unreadable (or not a "
      "consistent manifest), 3 usage, 130 interrupted (nothing is printed).\n"
      "Example: ggufcheck hash --format json model.gguf > model.json; "
      "ggufcheck verify model.json");
  return {cmd, [args] { return run_verify(*args); }};
}

}  // namespace ggufcheck::cli
