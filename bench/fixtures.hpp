// The files the benchmark reads, written with the library's writer into a temporary directory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace ggufcheck::bench {

// Any failure of the benchmark's own machinery; main prints the message and stops.
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A fresh directory under the system's temporary directory, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes);

// A vocabulary-only file shaped like a large tokenizer: tokens, scores, token types and merges,
// each vocab_size long, and the usual general.* and tokenizer.* scalars; no tensors.
[[nodiscard]] std::vector<std::uint8_t> tokenizer_file(std::size_t vocab_size);

// A small file whose header or one array claims an absurd count (threats.md).
struct HostileFile {
  std::string name;  // what it claims, for the report
  std::vector<std::uint8_t> bytes;
};
[[nodiscard]] std::vector<HostileFile> hostile_files();

}  // namespace ggufcheck::bench
