#include "mmproj_reference.hpp"

#include <string_view>
#include <vector>

#include "child_process.hpp"

namespace ggufcheck::testing {

namespace {

constexpr int kLoads = 0;
constexpr int kRefuses = 10;
constexpr std::size_t kMaxLog = 16384;

std::string_view trimmed(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r' || line.back() == ' ')) {
    line.remove_suffix(1);
  }
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  return line;
}

}  // namespace

std::string mmproj_refusal(const std::string& log, bool crashed) {
  std::vector<std::string_view> lines;
  std::string_view rest = log;
  while (!rest.empty()) {
    const std::size_t end = rest.find('\n');
    const std::string_view line = trimmed(rest.substr(0, end));
    if (!line.empty()) lines.push_back(line);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  // clip_init's "failed to load model 'FILE': <what it threw>", else what mtmd_context threw
  // after clip_init (the judge's "ggufcheck-refused: ").
  static constexpr std::string_view kClip = "': ";
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->find("failed to load model '") == std::string_view::npos) continue;
    const std::size_t at = it->rfind(kClip);
    if (at != std::string_view::npos) return std::string(trimmed(it->substr(at + kClip.size())));
  }
  static constexpr std::string_view kJudge = "ggufcheck-refused: ";
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->starts_with(kJudge)) return std::string(it->substr(kJudge.size()));
  }
  if (crashed) {
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
      if (it->find("GGML_ASSERT") != std::string_view::npos ||
          it->find("what():") != std::string_view::npos) {
        return std::string(*it);
      }
    }
  }
  return lines.empty() ? std::string() : std::string(lines.back());
}

MmprojReference::MmprojReference(std::filesystem::path judge, std::filesystem::path backends)
    : judge_(std::move(judge)), backends_(std::move(backends)) {}

LoaderResult MmprojReference::load(const std::filesystem::path& file) const {
  LoaderResult result;
  child::Run run;
  try {
    run = child::spawn({judge_.string(), backends_.string(), file.string()}, kTimeLimitSeconds,
                       kMaxLog);
  } catch (const std::runtime_error& e) {
    result.message = std::string("llama_mtmd_judge could not be run: ") + e.what();
    return result;
  }
  result.log = run.output;
  switch (run.end) {
    case child::Run::End::Exited:
      if (run.status == kLoads) {
        result.outcome = LoaderOutcome::Loads;
      } else if (run.status == kRefuses) {
        result.outcome = LoaderOutcome::Refuses;
        result.message = mmproj_refusal(run.output, false);
      } else {
        result.message = "llama_mtmd_judge exited with status " + std::to_string(run.status) +
                         ": " + mmproj_refusal(run.output, false);
      }
      break;
    case child::Run::End::Signalled:
      result.outcome = LoaderOutcome::Crashes;
      result.signal = run.status;
      result.message = mmproj_refusal(run.output, true);
      if (result.message.empty()) result.message = "signal " + std::to_string(run.status);
      break;
    case child::Run::End::TimedOut:
      result.outcome = LoaderOutcome::TimesOut;
      result.signal = run.status;
      result.message = "the load ran longer than " + std::to_string(kTimeLimitSeconds) + " s";
      break;
  }
  return result;
}

}  // namespace ggufcheck::testing
