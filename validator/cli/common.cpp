// The command line's shared pieces (cli.hpp).
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "cli.hpp"

namespace ggufcheck::cli {

namespace {
int g_write_error = 0;  // the first errno of a failed write to standard output
}  // namespace

void emit(std::string_view text) {
  if (text.empty()) return;
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() && g_write_error == 0) {
    g_write_error = errno != 0 ? errno : EIO;
  }
}

// Flushes and closes standard output; returns the errno of the first failure, 0 if none.
int finish_stdout() {
  errno = 0;
  if (std::fflush(stdout) != 0 && g_write_error == 0) g_write_error = errno != 0 ? errno : EIO;
  if (std::ferror(stdout) != 0 && g_write_error == 0) g_write_error = EIO;
  errno = 0;
  if (std::fclose(stdout) != 0 && g_write_error == 0) g_write_error = errno != 0 ? errno : EIO;
  return g_write_error;
}

// A closed standard stream would let the next open() take its descriptor: a report then lands in
// (or fails against) a model file. Each closed one gets /dev/null opened the wrong way round, so
// using it fails (EBADF) instead of succeeding silently: a closed stdout is a write error, a
// closed stdin an unreadable '-'.
void occupy_closed_standard_descriptors() {
  const int modes[3] = {O_WRONLY, O_RDONLY, O_RDONLY};
  for (int fd = 0; fd < 3; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int opened = ::open("/dev/null", modes[fd]);
    if (opened >= 0 && opened != fd) {
      ::dup2(opened, fd);
      ::close(opened);
    }
  }
}

bool output_failed() {
  return g_write_error != 0;
}

// "--profile: 'foo' is not a profile (strict, spec, llama.cpp)"
void require_one_of(const std::string& option, const std::string& value,
                    const std::vector<std::string>& allowed, const std::string& what) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  throw UsageError{
      fmt::format("{}: '{}' is not {} ({})", option, value, what, fmt::join(allowed, ", "))};
}

Code parse_code(const std::string& text) {
  const auto code = find_code(text);
  if (!code) throw UsageError{fmt::format("unknown diagnostic '{}' (see 'ggufcheck list')", text)};
  return *code;
}

std::optional<std::uint64_t> parse_unsigned(const std::string& text) {
  if (text.empty() || text[0] == '-' || text[0] == '+' || text[0] == ' ') return std::nullopt;
  std::size_t used = 0;
  unsigned long long v = 0;
  try {
    v = std::stoull(text, &used, 0);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size()) return std::nullopt;
  return v;
}

std::uint64_t parse_number(const std::string& name, const std::string& text) {
  const auto v = parse_unsigned(text);
  if (!v)
    throw UsageError{fmt::format("--limit {}: '{}' is not a non-negative number", name, text)};
  return *v;
}

void apply_limit(Limits& limits, const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos)
    throw UsageError{fmt::format("--limit '{}': expected NAME=VALUE", spec)};
  const std::string name = spec.substr(0, eq);
  const std::uint64_t value = parse_number(name, spec.substr(eq + 1));
  if (const auto problem = set_limit(limits, name, value)) throw UsageError{"--limit: " + *problem};
}

std::string checked_base(const std::string& path) {
  if (path.empty()) return path;
  if (path == "-" || is_url(path)) {
    throw UsageError{fmt::format(
        "--base '{}': the base model is a local file (not standard input or a URL)", path)};
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    throw UsageError{fmt::format("--base: cannot open {}: {}", path, std::strerror(errno))};
  }
  ::close(fd);
  return path;
}

const std::vector<std::string> kProfiles = {"strict", "spec", "llama.cpp"};

// A single-value option: given twice, the last one wins.
CLI::Option* take_last(CLI::Option* option, const std::string& type_name) {
  return option->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)->type_name(type_name);
}

// --color auto: FORCE_COLOR or CLICOLOR_FORCE (non-empty, not "0") colour even a pipe; else
// NO_COLOR (non-empty) or TERM=dumb turn colour off; else colour when stdout is a terminal.
bool use_color(const std::string& mode) {
  if (mode == "always") return true;
  if (mode == "never") return false;
  const auto set = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
  };
  if (set("FORCE_COLOR") || set("CLICOLOR_FORCE")) return true;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && *no_color != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return false;
  return ::isatty(STDOUT_FILENO) != 0;
}

std::atomic<bool> g_interrupted{false};

namespace {
extern "C" void on_interrupt(int) {
  if (g_interrupted.exchange(true)) ::_exit(kExitInterrupted);
}
}  // namespace

void catch_interrupts() {
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  (void)::sigaction(SIGINT, &action, nullptr);
}

}  // namespace ggufcheck::cli
