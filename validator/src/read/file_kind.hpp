// What a file that is not GGUF is, from its first bytes: the message and hint of GGUF1002
// bad-magic for a Git LFS pointer, a web page or API answer, an archive, a safetensors, PyTorch
// or ONNX model, or a legacy ggml file, so a CI gate tells the user what to do.
//
// The identification reads only the bytes that exist, through the cursor: at most the first
// kIdentifyWindow bytes, plus at most 8 bytes at one offset the file holds (the end of a
// safetensors header). Its cost is linear in the bytes it looks at, whatever the file claims.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "input/cursor.hpp"

namespace ggufcheck::detail {

inline constexpr std::uint64_t kIdentifyWindow = 4096;

enum class FileKind : std::uint8_t {
  Unknown,
  ByteSwappedGguf,  // "FUGG": the magic written as a u32 in the wrong byte order
  LegacyGgml,       // GGML, GGMF, GGJT, GGLA, GGSA, spelled out or as stored (reversed)
  GitLfsPointer,
  Html,
  Json,
  Gzip,
  Zstd,
  Xz,
  Bzip2,
  Zip,
  Tar,
  Safetensors,
  PytorchZip,     // torch.save's zip format (first entry .../data.pkl or .../version)
  PytorchLegacy,  // torch.save's legacy format (a pickled magic number first)
  Pickle,
  Onnx,
};

[[nodiscard]] std::string_view to_string(FileKind kind);

struct Identification {
  FileKind kind = FileKind::Unknown;
  std::string what;  // "this is a Git LFS pointer, ...": follows the message; empty if unknown
  std::string hint;  // what to do; the generic hint if unknown
};

// See above for what it reads.
[[nodiscard]] Identification identify_file(const Input& input);

// The fixed byte signatures the identification starts from (a signature alone is not always
// enough: a zip is a PyTorch checkpoint by its first entry's name, bzip2 needs its block magic
// too), for a fuzz dictionary or a test.
struct FileSignature {
  FileKind kind;
  std::string_view name;  // an identifier: "gzip", "zip_local_header", "legacy_ggjt_stored"
  std::uint64_t offset;
  std::string_view bytes;
};
[[nodiscard]] std::span<const FileSignature> file_signatures();

}  // namespace ggufcheck::detail
