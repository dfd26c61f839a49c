// The inputs of a run: directories expanded into their *.gguf files, split sets grouped.
#include <dirent.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli.hpp"

namespace ggufcheck::cli {

namespace {

// ---------------------------------------------------------------------------------------------
// Inputs: the directory walk. Nothing that could be a GGUF file is skipped without a report.
//
// - Every entry is looked at, hidden ones too; each directory's entries in byte order, and the
//   files of one command-line directory come out sorted by path.
// - A candidate is an entry whose name ends in ".gguf" (any case), or a symbolic link whose
//   target (resolved to the end of its chain) has such a name.
// - A regular-file candidate, directly or through a link, is validated (an open or read failure
//   is a GGUF0001 report). A candidate that cannot be stat'ed (a dangling link, a link loop,
//   EACCES) or that is not a regular file (a FIFO, socket or device: reading it could block
//   forever) is a GGUF0001 report, never opened.
// - Directories, and links to directories, are walked; each directory once, by (st_dev,
//   st_ino), so a link loop ends and a tree reached twice is reported once. A directory that
//   cannot be listed, and an entry that cannot be stat'ed whatever its name, is a GGUF0001
//   report with the OS error.
// - Dangling links and other entries whose names do not end in ".gguf" are not candidates.

bool has_gguf_name(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  constexpr std::string_view kSuffix = ".gguf";
  if (name.size() < kSuffix.size()) return false;
  const std::string_view tail = name.substr(name.size() - kSuffix.size());
  return std::equal(tail.begin(), tail.end(), kSuffix.begin(), [](char a, char b) {
    return (a >= 'A' && a <= 'Z' ? static_cast<char>(a - 'A' + 'a') : a) == b;
  });
}

std::string join_path(const std::string& dir, const std::string& name) {
  return !dir.empty() && dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string errno_problem(const char* what, const std::string& path, int error) {
  return fmt::format("cannot {} {}: {}", what, path, std::strerror(error));
}

const char* file_type_name(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "of an unknown type";
}

// Whether the link at `path` names a *.gguf file: its resolved target, or, when it does not
// resolve, the last component of what it points to.
bool link_target_has_gguf_name(const std::string& path) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) != nullptr) return has_gguf_name(resolved);
  char target[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
  if (n <= 0) return false;
  return has_gguf_name(std::string_view(target, static_cast<std::size_t>(n)));
}

void walk_directory(const std::string& root, std::vector<InputPath>& found) {
  std::set<std::pair<dev_t, ino_t>> walked;
  struct stat st {};
  if (::stat(root.c_str(), &st) == 0) walked.emplace(st.st_dev, st.st_ino);
  std::vector<std::string> pending = {root};
  while (!pending.empty()) {
    const std::string dir = std::move(pending.back());
    pending.pop_back();
    DIR* handle = ::opendir(dir.c_str());
    if (handle == nullptr) {
      found.push_back({dir, errno_problem("list directory", dir, errno)});
      continue;
    }
    std::vector<std::string> names;
    for (;;) {
      errno = 0;
      const dirent* entry = ::readdir(handle);
      if (entry == nullptr) {
        if (errno != 0) found.push_back({dir, errno_problem("list directory", dir, errno)});
        break;
      }
      const std::string_view name = entry->d_name;
      if (name != "." && name != "..") names.emplace_back(name);
    }
    ::closedir(handle);
    std::sort(names.begin(), names.end());

    std::vector<std::string> subdirectories;
    for (const std::string& name : names) {
      const std::string path = join_path(dir, name);
      struct stat entry_st {};
      if (::lstat(path.c_str(), &entry_st) != 0) {
        const int error = errno;
        // Gone since the listing and not a candidate: nothing left to check.
        if (error != ENOENT || has_gguf_name(name)) {
          found.push_back({path, errno_problem("stat", path, error)});
        }
        continue;
      }
      bool candidate = has_gguf_name(name);
      if (S_ISLNK(entry_st.st_mode)) {
        candidate = candidate || link_target_has_gguf_name(path);
        if (::stat(path.c_str(), &entry_st) != 0) {
          if (candidate) found.push_back({path, errno_problem("open", path, errno)});
          continue;
        }
      }
      if (S_ISDIR(entry_st.st_mode)) {
        if (walked.emplace(entry_st.st_dev, entry_st.st_ino).second) {
          subdirectories.push_back(path);
        }
      } else if (!candidate) {
        continue;
      } else if (S_ISREG(entry_st.st_mode)) {
        found.push_back({path, ""});
      } else {
        found.push_back({path, fmt::format("cannot read {}: not a regular file ({}); "
                                           "give it directly to read it",
                                           path, file_type_name(entry_st.st_mode))});
      }
    }
    for (auto it = subdirectories.rbegin(); it != subdirectories.rend(); ++it) {
      pending.push_back(std::move(*it));
    }
  }
}

}  // namespace

// Expands directories into their *.gguf files. A directory without one becomes an entry that
// reports why.
std::vector<InputPath> expand_inputs(const std::vector<std::string>& paths) {
  std::vector<InputPath> inputs;
  for (const std::string& path : paths) {
    struct stat st {};
    // A URL is never a local file: not stat'ed, even if a directory "https:" exists.
    if (path == "-" || is_url(path) || ::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      inputs.push_back({path, ""});
      continue;
    }
    std::vector<InputPath> found;
    walk_directory(path, found);
    if (found.empty()) {
      inputs.push_back({path, fmt::format("no *.gguf files found under directory {}", path)});
      continue;
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const InputPath& a, const InputPath& b) { return a.path < b.path; });
    for (auto& f : found) inputs.push_back(std::move(f));
  }
  return inputs;
}

std::string local_files_only(const std::string& url, std::string_view command) {
  return fmt::format(
      "cannot read {}: 'ggufcheck {}' reads local files only (download the file{})", url, command,
      remote_supported() ? ", or check it where it is with 'ggufcheck check URL'" : "");
}

std::vector<InputPath> expand_local_inputs(const std::vector<std::string>& paths,
                                           std::string_view command) {
  std::vector<InputPath> inputs;
  std::vector<std::string> local;
  // In the order given: the local paths between two URLs expanded together.
  const auto flush = [&] {
    for (InputPath& in : expand_inputs(local)) inputs.push_back(std::move(in));
    local.clear();
  };
  for (const std::string& path : paths) {
    if (!is_url(path)) {
      local.push_back(path);
      continue;
    }
    flush();
    inputs.push_back({path, local_files_only(path, command)});
  }
  flush();
  return inputs;
}

std::vector<Job> jobs_of(const std::vector<InputPath>& inputs, bool sets) {
  std::vector<Job> jobs;
  if (!sets) {
    for (const InputPath& input : inputs) jobs.push_back({{input.path}, input.problem});
    return jobs;
  }
  std::vector<std::string> readable;
  for (const InputPath& input : inputs) {
    if (input.problem.empty()) readable.push_back(input.path);
  }
  std::vector<std::vector<std::string>> groups = group_inputs(readable);
  std::set<std::string> in_sets;
  for (const auto& group : groups) {
    if (group.size() > 1) in_sets.insert(group.begin(), group.end());
  }
  // group_inputs keeps the order of first mention: each readable input either starts the next
  // group or belongs to a set listed before.
  std::size_t next = 0;
  for (const InputPath& input : inputs) {
    if (!input.problem.empty()) {
      if (in_sets.count(input.path) == 0) jobs.push_back({{input.path}, input.problem});
      continue;
    }
    if (next < groups.size() &&
        std::find(groups[next].begin(), groups[next].end(), input.path) != groups[next].end()) {
      jobs.push_back({std::move(groups[next++]), ""});
    }
  }
  return jobs;
}

}  // namespace ggufcheck::cli
