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

// The duplicate-key case: a valid file of general.architecture and `count` more uint8 pairs
// whose keys are either ordinary ("key.000001", ...) or chosen to collide in the table the
// duplicate check once used: libstdc++'s unseeded std::hash<std::string_view>, masked to the
// smallest power of two >= 2x the keys, with linear probing. Their masked hashes all fall in the
// lowest 1/256 of that table (slots [0, 1024) for 10^5 keys), so there they made one primary
// cluster and cost count^2/2 probes. Same key length (10 bytes) in both files; deterministic.
enum class KeyShape { Ordinary, Colliding };
[[nodiscard]] std::vector<std::uint8_t> keys_file(std::size_t count, KeyShape shape);

// A small file whose header or one array claims an absurd count (threats.md).
struct HostileFile {
  std::string name;  // what it claims, for the report
  std::vector<std::uint8_t> bytes;
};
[[nodiscard]] std::vector<HostileFile> hostile_files();

}  // namespace ggufcheck::bench
