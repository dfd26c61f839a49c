// Helpers shared by the unit tests: build files with the writer, validate them, query reports.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "container_options.hpp"
#include "documents.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"

// Whether the tests run under AddressSanitizer (GCC says __SANITIZE_ADDRESS__, clang
// __has_feature(address_sanitizer)): its shadow memory and quarantine make peak-memory ratios
// and address-space limits meaningless, so tests of those skip there.
#if defined(__SANITIZE_ADDRESS__)
#define GGUFCHECK_TESTS_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GGUFCHECK_TESTS_UNDER_ASAN 1
#endif
#endif

namespace ggufcheck::testing {

// The environment variable `name`, empty when unset (the differential tests' switches).
inline std::string env_text(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr ? text : "";
}

// Tests that run the command once per item of a large set (every sample and corpus file, every
// override of every fixed code) take every item in the dev run and a deterministic part of them
// under ASan (every kCommandRunStride-th), where each run of the instrumented command costs
// several times more (CI's time budget): they check the same code path per item, which the dev
// run covers whole.
#ifdef GGUFCHECK_TESTS_UNDER_ASAN
inline constexpr std::size_t kCommandRunStride = 4;
#else
inline constexpr std::size_t kCommandRunStride = 1;
#endif

inline Report check(const ByteVector& bytes, Profile profile = Profile::Strict) {
  return validate(Bytes(bytes.data(), bytes.size()), container_options(profile));
}

inline Report check(const ByteVector& bytes, const Options& options) {
  return validate(Bytes(bytes.data(), bytes.size()), options);
}

inline std::vector<Code> codes(const Report& report) {
  std::vector<Code> out;
  for (const Finding& f : report.findings) out.push_back(f.code);
  return out;
}

inline const Finding* find(const Report& report, Code code) {
  for (const Finding& f : report.findings) {
    if (f.code == code) return &f;
  }
  return nullptr;
}

inline bool has(const Report& report, Code code) {
  return find(report, code) != nullptr;
}

// The severity the code gets in each profile for these bytes (Silent when not reported).
inline Severity severity_in(const ByteVector& bytes, Code code, Profile profile) {
  const Report report = check(bytes, profile);
  const Finding* f = find(report, code);
  return f == nullptr ? Severity::Silent : f->severity;
}

inline ByteVector read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return ByteVector(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Whether another user can reach what is in `dir`: every directory from the root down to it
// lets others search it (o+x). A clone in root's home (mode 0700) or a TMPDIR under it is not.
inline bool searchable_by_others(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::path at = std::filesystem::absolute(dir, ec);
  if (ec) return false;
  for (;;) {
    const auto status = std::filesystem::status(at, ec);
    if (ec || (status.permissions() & std::filesystem::perms::others_exec) ==
                  std::filesystem::perms::none) {
      return false;
    }
    if (at == at.root_path() || !at.has_parent_path() || at.parent_path() == at) return true;
    at = at.parent_path();
  }
}

// Where tests stage what another user runs or reads (runs as "nobody" when the tests run as
// root): the temp dir when others can reach it, else /tmp, /var/tmp or /dev/shm; nothing when
// none is (the test then skips, saying why).
inline std::optional<std::filesystem::path> shared_temp_root() {
  std::error_code ec;
  std::vector<std::filesystem::path> candidates;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
  if (!ec) candidates.push_back(temp);
  for (const char* dir : {"/tmp", "/var/tmp", "/dev/shm"}) candidates.emplace_back(dir);
  for (const auto& dir : candidates) {
    if (std::filesystem::is_directory(dir, ec) && searchable_by_others(dir) &&
        ::access(dir.c_str(), W_OK | X_OK) == 0) {
      return dir;
    }
  }
  return std::nullopt;
}

// A unique directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() : TempDir(std::filesystem::temp_directory_path()) {}
  // Under `base` (shared_temp_root() for a directory another user must reach).
  explicit TempDir(const std::filesystem::path& base) {
    std::string pattern = (base / "ggufcheck-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  // Lets every user enter the directory (mkdtemp makes it 0700), for runs as "nobody"; the
  // files in it are written with the umask's modes.
  const TempDir& share() const {
    std::filesystem::permissions(
        path_, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                   std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                   std::filesystem::perms::others_exec);
    return *this;
  }

  std::filesystem::path write(const std::filesystem::path& relative,
                              const ByteVector& bytes) const {
    const std::filesystem::path full = path_ / relative;
    std::filesystem::create_directories(full.parent_path());
    std::ofstream out(full, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + full.string());
    return full;
  }

 private:
  std::filesystem::path path_;
};

// Six vocabulary files written by llama.cpp's converter (validator/tests/data/real-gguf/).
inline std::filesystem::path real_gguf_dir() {
  return std::filesystem::path(GGUFCHECK_SOURCE_DIR) / "validator" / "tests" / "data" / "real-gguf";
}

}  // namespace ggufcheck::testing
