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

// Reads the file through once and drops the bytes: the first of several commands measured on it
// then does not pay alone for reading it from disk, or for the page cache's zeros of a hole.
void read_through(const std::filesystem::path& path);

// A vocabulary-only file shaped like a large tokenizer: tokens, scores, token types and merges,
// each vocab_size long, and the usual general.* and tokenizer.* scalars; no tensors.
[[nodiscard]] std::vector<std::uint8_t> tokenizer_file(std::size_t vocab_size);

// A file whose tokenizer.chat_template is at least `bytes` long: the pinned llama.cpp's
// templates one after the other (real Jinja, every construct they use), no other content.
[[nodiscard]] std::vector<std::uint8_t> template_file(std::size_t bytes);

// The duplicate-key case: a valid file of general.architecture and `count` more uint8 pairs
// whose keys are either ordinary ("key.000001", ...) or chosen to collide in the table the
// duplicate check once used: libstdc++'s unseeded std::hash<std::string_view>, masked to the
// smallest power of two >= 2x the keys, with linear probing. Their masked hashes all fall in the
// lowest 1/256 of that table (slots [0, 1024) for 10^5 keys), so there they made one primary
// cluster and cost count^2/2 probes. Same key length (10 bytes) in both files; deterministic.
enum class KeyShape { Ordinary, Colliding };
[[nodiscard]] std::vector<std::uint8_t> keys_file(std::size_t count, KeyShape shape);

// The scale files (issue 13: a compact model, a streaming dump).

// general.architecture and `count` tensor infos "t000000", "t000001", ... of 8 F32 each (32 bytes,
// the alignment: no padding between them), with their zero data. 71 bytes a tensor with its data:
// 71 MB for 10^6.
[[nodiscard]] std::vector<std::uint8_t> tensors_file(std::size_t count);

// A valid file of general.architecture, general.alignment = `alignment` (a power of two) and one
// tensor of `alignment` bytes whose data starts at `alignment`: 2 * alignment bytes long, of which
// only the header is written; the padding and the data are a hole (ftruncate), so with 2^31 the
// file is 4 GiB long and a few KiB on disk.
void write_sparse_alignment_file(const std::filesystem::path& path, std::uint32_t alignment);

// general.architecture and one pair bench.long_string whose value is `length` bytes of ASCII
// text, written in chunks: the string is never in memory whole.
void write_long_string_file(const std::filesystem::path& path, std::uint64_t length);

// What the file takes on disk (st_blocks), to show that a sparse file is one.
[[nodiscard]] std::uint64_t allocated_bytes(const std::filesystem::path& path);

// A small file whose header or one array claims an absurd count (threats.md).
struct HostileFile {
  std::string name;  // what it claims, for the report
  std::vector<std::uint8_t> bytes;
};
[[nodiscard]] std::vector<HostileFile> hostile_files();

}  // namespace ggufcheck::bench
