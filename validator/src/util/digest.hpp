// One running digest of a byte sequence: xxh64 (seed 0, libxxhash inlined), SHA-1 or SHA-256
// (OpenSSL EVP, which uses the CPU's SHA extensions where it has them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "ggufcheck/hash.hpp"

namespace ggufcheck::detail {

enum class DigestKind : std::uint8_t { Xxh64, Sha1, Sha256 };

class Digest {
 public:
  explicit Digest(DigestKind kind);
  ~Digest();
  Digest(Digest&&) noexcept;
  Digest& operator=(Digest&&) noexcept;
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;

  [[nodiscard]] DigestKind kind() const { return kind_; }
  void update(const void* data, std::size_t size);
  // The result; once only.
  [[nodiscard]] std::uint64_t xxh64();
  [[nodiscard]] Sha1Digest sha1();
  [[nodiscard]] Sha256Digest sha256();

 private:
  struct State;
  DigestKind kind_;
  std::unique_ptr<State> state_;
};

// SHA-256 of one buffer.
[[nodiscard]] Sha256Digest sha256_of(const void* data, std::size_t size);

// UUIDv5 from the SHA-1 over the namespace and the name: its first 16 bytes with the version
// (5) and the RFC 4122 variant bits set.
[[nodiscard]] Uuid uuid_v5(const Sha1Digest& sha1);

}  // namespace ggufcheck::detail
