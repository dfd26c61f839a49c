// The hashing engine: the bytes of a model's segments (each file's header, each tensor's data),
// read once each with pread into a ring of fixed buffers, and fed to the digests that read them:
// the whole-model digests over every tensor in order, and each tensor's (or header's) own. A
// digest reads its bytes in order, so one digest runs on one thread at a time; the digests of
// different tensors, and the whole-model ones beside them, run on every core at once. Memory is
// the ring (at most 64 MiB), whatever the size of the file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ggufcheck/hash.hpp"
#include "input/cursor.hpp"
#include "util/digest.hpp"

namespace ggufcheck::detail {

struct Segment {
  // A file's header (its sha256 into FileHash::header_sha256), a tensor's data, or a gap: bytes
  // of the data section outside every tensor (all of a file's gaps, in order, make one sha256:
  // FileHash::gaps_sha256).
  enum class Kind : std::uint8_t { Header, Tensor, Gap };
  std::uint64_t begin = 0;   // file offset
  std::uint64_t length = 0;  // bytes
  Kind kind = Kind::Tensor;
  std::size_t index = 0;  // its tensor in HashResult::tensors, or its file
};

class HashEngine {
 public:
  // The size of one buffer of the ring.
  static constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;

  // `uuid`: compute the whole-model UUID (options.algorithms.uuid, or verify's general.uuid).
  HashEngine(const HashOptions& options, bool uuid);
  ~HashEngine();
  HashEngine(const HashEngine&) = delete;
  HashEngine& operator=(const HashEngine&) = delete;

  // Hashes one file's segments (read from `input`, a file mapped with its descriptor), writing
  // each tensor's and header's digests
  // into `result`; the whole-model digests go on from the previous file's. Returns an error
  // ("cannot read ...") or nullopt; stops early, with nullopt, when cancelled.
  [[nodiscard]] std::optional<std::string> run(const Input& input, const std::string& path,
                                               const std::vector<Segment>& segments,
                                               HashResult& result);
  [[nodiscard]] bool cancelled() const;
  // The whole-model digests into `result`, once, after the last file.
  void finish(HashResult& result);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ggufcheck::detail
