// Files against buffers: the bytes written to a file whose all-zero pages are holes, then
// validated and dumped by path (mapped, its holes skipped or read as zeros by the input's bulk
// reads, the pages they pass given back), must give exactly the report and the dump of the same
// bytes given as a buffer. This is the path a CI gate takes (validate_file, dump_file) and the
// one the in-memory targets cannot reach: the mapping, the SIGBUS guard, the descriptor's holes.
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "ggufcheck/dump.hpp"
#include "ggufcheck/info.hpp"
#include "ggufcheck/render.hpp"
#include "ggufcheck/validate.hpp"
#include "pipeline.hpp"

namespace {

using namespace ggufcheck;

constexpr std::size_t kPage = 4096;

// A memory-backed file holding `bytes`, its all-zero pages left as holes; -1 when the system
// refuses one.
int sparse_file(Bytes bytes) {
  const int fd = ::memfd_create("fuzz_mapped", MFD_CLOEXEC);
  if (fd < 0) return -1;
  for (std::size_t at = 0; at < bytes.size(); at += kPage) {
    const std::size_t n = std::min(kPage, bytes.size() - at);
    bool zero = true;
    for (std::size_t i = 0; i < n && zero; ++i) zero = bytes[at + i] == 0;
    if (zero) continue;
    if (::pwrite(fd, bytes.data() + at, n, static_cast<off_t>(at)) != static_cast<ssize_t>(n)) {
      ::close(fd);
      return -1;
    }
  }
  if (::ftruncate(fd, static_cast<off_t>(bytes.size())) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool same_findings(const Report& a, const Report& b) {
  if (a.findings.size() != b.findings.size() || a.exit_status() != b.exit_status() ||
      a.findings_dropped != b.findings_dropped) {
    return false;
  }
  for (std::size_t i = 0; i < a.findings.size(); ++i) {
    const Finding& x = a.findings[i];
    const Finding& y = b.findings[i];
    if (x.code != y.code || x.severity != y.severity || x.offset != y.offset ||
        x.length != y.length || x.message != y.message || x.path != y.path) {
      return false;
    }
  }
  return true;
}

// `whole_json`: the two reports compared as JSON (facts, hints and all), else by their findings
// and verdicts (a JSON rendering of each cost a fifth of an execution).
std::string check_mapped(Bytes bytes, const std::string& path, Profile profile, bool every_level,
                         DumpLevel chosen, bool whole_json) {
  Options options;
  options.profile = profile;
  const Report reports[] = {validate_file(path, options), validate(bytes, options, path)};
  if (!whole_json && !same_findings(reports[0], reports[1])) whole_json = true;  // to show them
  const std::string mapped = whole_json ? render_json(std::span(reports, 1), options, 0) : "";
  const std::string whole = whole_json ? render_json(std::span(reports + 1, 1), options, 0) : "";
  if (mapped != whole) {
    return "the file's report differs from the buffer's:\nfile:   " + mapped + "\nbuffer: " + whole;
  }
  for (const DumpLevel level : {DumpLevel::Structure, DumpLevel::Data}) {
    if (!every_level && level != chosen) continue;
    const Dump from_file = dump_file(path, options, level);
    const Dump from_buffer = dump(bytes, options, level);
    if (from_file.json != from_buffer.json || from_file.exit_status != from_buffer.exit_status) {
      return "the file's dump differs from the buffer's:\nfile:   " + from_file.json +
             "\nbuffer: " + from_buffer.json;
    }
  }
  return "";
}

// `ggufcheck info` by path (the command's streaming writer, which reads the file itself): the
// report's exit status, and JSON that parses.
std::string check_info_file(const std::string& path, Profile profile, bool as_json) {
  Options options;
  options.profile = profile;
  // The verdict of check, which reads a file named as a shard with its set (group_inputs).
  int expected = validate_file(path, options).exit_status();
  for (const auto& group : group_inputs({path})) {
    for (const Report& report : validate_set(group, options).reports) {
      if (report.path == path) expected = report.exit_status();
    }
  }
  std::string out;
  InfoWriter writer(as_json, !as_json, [&](std::string_view part) {
    out += part;
    return true;
  });
  const int status = writer.file(path, options);
  if (!writer.finish() || out.empty()) return "info: nothing written";
  if (status != expected) {
    return fmt::format("info by path: exit status {} where check's is {}", status, expected);
  }
  if (as_json && nlohmann::json::parse(out, nullptr, false).is_discarded()) {
    return "info by path: the JSON does not parse";
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Bytes bytes(data, size);
  const int fd = sparse_file(bytes);
  if (fd < 0) return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  // Fuzzing, each input gets one profile and one dump level, chosen by its bytes (both profiles
  // and levels held the target to a few hundred executions a second); a replay checks all.
  const std::size_t hash = fuzz::choice_hash(bytes);
  const DumpLevel level = hash / 2 % 2 == 0 ? DumpLevel::Structure : DumpLevel::Data;
  for (const Profile profile : {Profile::Strict, Profile::LlamaCpp}) {
    if (!fuzz::every_run && (profile == Profile::Strict) != (hash % 2 == 0)) continue;
    std::string problem =
        check_mapped(bytes, path, profile, fuzz::every_run, level,
                     fuzz::every_run || hash / 32 % 4 == 0);  // as JSON: one input in four
    // info by path: one input in four (a replay: every one), in the format its bytes choose.
    if (problem.empty() && (fuzz::every_run || hash / 4 % 4 == 0)) {
      problem = check_info_file(path, profile, hash / 16 % 2 == 0);
    }
    if (!problem.empty()) {
      ::close(fd);
      fuzz::fail_if(problem, bytes);
    }
  }
  ::close(fd);
  return 0;
}
