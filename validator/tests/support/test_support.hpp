// Helpers shared by the unit tests: build files with the writer, validate them, query reports.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "documents.hpp"
#include "ggufcheck/validate.hpp"
#include "ggufcheck/writer.hpp"

namespace ggufcheck::testing {

using ByteVector = std::vector<std::uint8_t>;

inline Report check(const ByteVector& bytes, Profile profile = Profile::Strict) {
  Options options;
  options.profile = profile;
  return validate(Bytes(bytes.data(), bytes.size()), options);
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

// Six vocabulary files written by llama.cpp's converter (validator/tests/data/real-gguf/).
inline std::filesystem::path real_gguf_dir() {
  return std::filesystem::path(GGUFCHECK_SOURCE_DIR) / "validator" / "tests" / "data" / "real-gguf";
}

}  // namespace ggufcheck::testing
