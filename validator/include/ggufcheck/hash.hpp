// Digests of the tensor data (`ggufcheck hash`, `ggufcheck verify`; docs/hash.md): per tensor and
// over the whole model, in tensor-info order, as llama.cpp's llama-gguf-hash computes them
// (xxh64, sha1, sha256, and its UUIDv5), plus a JSON manifest (header digest, per-tensor records,
// a Merkle root over the per-tensor sha256 digests) and the check of files against one.
//
// A file is validated first (the llama.cpp profile's layout); only a file whose every tensor has
// a byte range inside it, no two overlapping, is hashed. The data is read with pread into a few
// fixed buffers shared by every thread, so memory stays bounded whatever the file's size.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ggufcheck {

using Sha1Digest = std::array<std::uint8_t, 20>;
using Sha256Digest = std::array<std::uint8_t, 32>;
using Uuid = std::array<std::uint8_t, 16>;

// llama-gguf-hash's UUIDv5 namespace: uuid5(NAMESPACE_URL, "en.wikipedia.org/wiki/Llama.cpp").
inline constexpr Uuid kLlamaCppUuidNamespace = {0xef, 0x00, 0x12, 0x06, 0xda, 0xdc, 0x5f, 0x6d,
                                                0xa1, 0x5f, 0x33, 0x59, 0xe5, 0x77, 0xd4, 0xe5};

struct HashAlgorithms {
  bool xxh64 = false;
  bool sha1 = false;
  bool sha256 = false;
  bool uuid = false;  // whole model only: UUIDv5 over the tensor bytes
  [[nodiscard]] bool any() const { return xxh64 || sha1 || sha256 || uuid; }
};

struct HashOptions {
  HashAlgorithms algorithms;
  bool per_tensor = true;  // per-tensor digests (llama-gguf-hash without --no-layer)
  // The SHA-256 of each file's bytes before its tensor data, and the Merkle root (needs
  // per-tensor sha256): what the JSON manifest records.
  bool manifest = false;
  // The whole-model digests of `algorithms` (verify needs the per-tensor ones only).
  bool whole_model = true;
  // Compute the UUID also when the first file carries general.uuid (verify compares them).
  bool uuid_if_declared = false;
  unsigned threads = 0;  // 0: one per core
  // Set (by a SIGINT handler) to stop: the result is then status 130 and holds no digest.
  const std::atomic<bool>* cancel = nullptr;
};

struct TensorHash {
  std::string name;  // the bytes as stored
  std::uint32_t type = 0;
  std::vector<std::uint64_t> shape;  // n_dims dims, ne[0] first
  std::uint64_t offset = 0;          // as stored: relative to the data section
  std::uint64_t nbytes = 0;
  std::size_t file = 0;  // the index of its file in HashResult::files
  // The digests asked for (per_tensor), else zero.
  std::uint64_t xxh64 = 0;
  Sha1Digest sha1{};
  Sha256Digest sha256{};
};

struct FileHash {
  std::string path;  // as given
  std::uint64_t size = 0;
  std::uint64_t data_start = 0;  // where the tensor data starts; the size without tensors
  Sha256Digest header_sha256{};  // of [0, data_start), with HashOptions::manifest
  // The bytes of [data_start, size) outside every tensor (padding, gaps, trailing bytes): their
  // ranges (offset, length) in file order, their total, and (HashOptions::manifest) the SHA-256
  // of them all in that order.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;
  std::uint64_t gap_bytes = 0;
  Sha256Digest gaps_sha256{};
  std::size_t tensor_count = 0;
  // general.uuid: its text when it is a string; else general_uuid_problem says what it is.
  std::optional<std::string> general_uuid;
  std::string general_uuid_problem;
};

struct HashResult {
  // 0 hashed; 1 a file whose tensor layout does not resolve (error says why); 2 a file that
  // cannot be read; 130 cancelled. Anything but 0 holds no digest.
  int status = 0;
  std::string error;
  std::vector<FileHash> files;
  std::vector<TensorHash> tensors;  // every file's, in order
  std::uint64_t tensor_bytes = 0;
  // Over every tensor's bytes in order, those asked for.
  std::uint64_t xxh64 = 0;
  Sha1Digest sha1{};
  Sha256Digest sha256{};
  Uuid uuid{};
  Sha256Digest merkle_root{};  // with HashOptions::manifest
};

// Hashes a file alone, or the files of one model in order (a split set's shards) as one model:
// their tensors one after another.
[[nodiscard]] HashResult hash_model(const std::vector<std::string>& paths,
                                    const HashOptions& options);

// --- text -----------------------------------------------------------------------------------
[[nodiscard]] std::string hex(const std::uint8_t* bytes, std::size_t size);
template <std::size_t N>
[[nodiscard]] std::string hex(const std::array<std::uint8_t, N>& bytes) {
  return hex(bytes.data(), N);
}
[[nodiscard]] std::string xxh64_text(std::uint64_t value);  // 16 hex digits, big-endian
[[nodiscard]] std::string uuid_text(const Uuid& uuid);      // 8-4-4-4-12, lower case
// A UUID's 16 bytes from its text (any case, with the four hyphens), or nullopt.
[[nodiscard]] std::optional<Uuid> parse_uuid(std::string_view text);

// The RFC 6962 Merkle tree hash of these leaves (docs/hash.md): leaf = SHA-256(0x00 || d),
// node = SHA-256(0x01 || left || right), split at the largest power of two below the count;
// SHA-256("") for none.
[[nodiscard]] Sha256Digest merkle_root(const std::vector<Sha256Digest>& leaves);

// --- llama-gguf-hash's output -------------------------------------------------------------
// What llama-gguf-hash prints for one file: per-tensor lines (unless !per_tensor), then the
// whole-model lines; `name` is the file name as given.
[[nodiscard]] std::string render_llama_hash(const HashResult& result, const HashOptions& options,
                                            std::string_view name);

// llama-gguf-hash --check: its manifest (lines "TYPE  HASH  NAME"), read the way it reads one.
class LlamaManifest {
 public:
  // What each line's first word says the manifest holds.
  HashAlgorithms kinds;
  // Reads the file: nullopt when it cannot be opened. `wanted` names the (type, name) pairs
  // looked up later; only the first line of each is kept, so memory follows them, not the file.
  [[nodiscard]] static std::optional<LlamaManifest> read(
      const std::string& path, const std::vector<std::pair<std::string, std::string>>& wanted);
  // The kinds alone (the first pass llama-gguf-hash makes); nullopt when it cannot be opened.
  [[nodiscard]] static std::optional<HashAlgorithms> kinds_of(const std::string& path);
  enum class Match : std::uint8_t { NotFound, Mismatch, Ok };
  [[nodiscard]] Match match(std::string_view type, std::string_view name,
                            std::string_view digest) const;

 private:
  // The first line of each wanted (type, name): type + '\0' + name -> hash.
  std::map<std::string, std::string> first_;
};

// What llama-gguf-hash --check prints for one hashed file: its "manifest" line (the kinds the
// manifest holds), every line with its verdict, the "Verification results" line; and its exit
// status: 0 success, 1 failure, 3 missing entry.
struct LlamaCheck {
  std::string text;
  int status = 0;
};
[[nodiscard]] LlamaCheck render_llama_check(const HashResult& result, const HashOptions& options,
                                            std::string_view name, const std::string& manifest_path,
                                            const LlamaManifest& manifest);
// "manifest  PATH  sha256  sha1  xxh64  uuid" (the kinds it holds), and a newline.
[[nodiscard]] std::string llama_manifest_line(const std::string& manifest_path,
                                              const HashAlgorithms& kinds);
// The (type, name) pairs render_llama_check looks up, for LlamaManifest::read.
[[nodiscard]] std::vector<std::pair<std::string, std::string>> llama_check_keys(
    const HashResult& result, const HashOptions& options, std::string_view name);

// --- the JSON manifest --------------------------------------------------------------------
// One model's record (docs/hash.md, "JSON manifest"), without a trailing newline.
[[nodiscard]] std::string render_manifest_model(const HashResult& result,
                                                const HashOptions& options);
// A whole manifest: {"format": ..., "version": 1, "models": [...]}, and a newline.
[[nodiscard]] std::string render_manifest(const std::vector<std::string>& models);

struct ManifestTensor {
  std::string name;  // bytes
  std::size_t file = 0;
  std::string type;  // the type's name
  std::optional<std::uint32_t> type_id;
  std::vector<std::uint64_t> shape;
  std::uint64_t offset = 0;
  std::uint64_t nbytes = 0;
  std::optional<std::uint64_t> xxh64;
  std::optional<Sha1Digest> sha1;
  std::optional<Sha256Digest> sha256;
};
struct ManifestFile {
  std::string path;  // never holds a NUL (parse_manifest refuses one)
  std::uint64_t size = 0;
  std::optional<Sha256Digest> header_sha256;
  std::uint64_t tensor_count = 0;
  // Where the tensor data starts, and the bytes of the data section outside the tensors
  // (FileHash::gap_bytes, gaps_sha256); absent from the manifests of earlier builds.
  std::optional<std::uint64_t> data_start;
  std::optional<std::uint64_t> gap_bytes;
  std::optional<Sha256Digest> gaps_sha256;
};
struct ManifestModel {
  std::vector<ManifestFile> files;
  std::vector<ManifestTensor> tensors;
  std::uint64_t tensor_count = 0;  // equals tensors.size() (parse_manifest checks it)
  std::uint64_t tensor_bytes = 0;
  std::optional<std::uint64_t> xxh64;
  std::optional<Sha1Digest> sha1;
  std::optional<Sha256Digest> sha256;
  std::optional<Uuid> uuid;
  std::optional<Sha256Digest> merkle_root;
  std::optional<std::string> general_uuid;
};
struct Manifest {
  std::vector<ManifestModel> models;
};
// The manifest in `text`, or the reason it is not one (with where). Never throws on bad input.
// A manifest is refused unless it is consistent with itself (docs/hash.md, "A consistent
// manifest"): every member the writer writes is present, the counts and sums agree with the
// records, each tensor lies inside its file and overlaps no other, the digests the model
// declares are on every tensor, and the Merkle root is that of the tensors' sha256.
struct ManifestRead {
  std::optional<Manifest> manifest;
  std::string error;
};
[[nodiscard]] ManifestRead parse_manifest(std::string_view text);
// The file's manifest; a file over kMaxManifestBytes is refused.
inline constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{256} << 20;
[[nodiscard]] ManifestRead read_manifest(const std::string& path);

// --- verify -------------------------------------------------------------------------------
// What the files hold against what the manifest recorded: one line per difference, each naming
// the tensor or the file (untrusted names escaped), and notes that change nothing.
struct Verification {
  std::vector<std::string> differences;
  std::vector<std::string> notes;
};
struct VerifyOptions {
  bool ignore_header = false;  // compare the tensors only (metadata may have been edited)
};
// The algorithms hash_model must compute for compare(): sha256 and whatever the model records.
[[nodiscard]] HashOptions verify_hash_options(const ManifestModel& model);
[[nodiscard]] Verification compare(const ManifestModel& expected, const HashResult& actual,
                                   const VerifyOptions& options = {});

}  // namespace ggufcheck
