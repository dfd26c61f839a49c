#include "util/digest.hpp"

#include <openssl/evp.h>

#include <stdexcept>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace ggufcheck::detail {

namespace {

// Fetched once per process: an implicit fetch in every EVP_DigestInit_ex takes a global lock.
const EVP_MD* fetched(DigestKind kind) {
  static EVP_MD* const sha1 = EVP_MD_fetch(nullptr, "SHA1", nullptr);
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  const EVP_MD* md = kind == DigestKind::Sha1 ? sha1 : sha256;
  if (md == nullptr) throw std::runtime_error("OpenSSL has no SHA-1 or SHA-256");
  return md;
}

}  // namespace

struct Digest::State {
  XXH64_state_t xxh{};
  EVP_MD_CTX* evp = nullptr;
  ~State() { EVP_MD_CTX_free(evp); }
};

Digest::Digest(DigestKind kind) : kind_(kind), state_(std::make_unique<State>()) {
  if (kind == DigestKind::Xxh64) {
    (void)XXH64_reset(&state_->xxh, 0);
    return;
  }
  state_->evp = EVP_MD_CTX_new();
  if (state_->evp == nullptr || EVP_DigestInit_ex(state_->evp, fetched(kind), nullptr) != 1) {
    throw std::runtime_error("cannot start a SHA digest (OpenSSL)");
  }
}

Digest::~Digest() = default;
Digest::Digest(Digest&&) noexcept = default;
Digest& Digest::operator=(Digest&&) noexcept = default;

void Digest::update(const void* data, std::size_t size) {
  if (size == 0) return;
  if (kind_ == DigestKind::Xxh64) {
    (void)XXH64_update(&state_->xxh, data, size);
  } else if (EVP_DigestUpdate(state_->evp, data, size) != 1) {
    throw std::runtime_error("SHA digest failed (OpenSSL)");
  }
}

std::uint64_t Digest::xxh64() {
  return XXH64_digest(&state_->xxh);
}

Sha1Digest Digest::sha1() {
  Sha1Digest out{};
  unsigned size = 0;
  if (EVP_DigestFinal_ex(state_->evp, out.data(), &size) != 1 || size != out.size()) {
    throw std::runtime_error("SHA-1 failed (OpenSSL)");
  }
  return out;
}

Sha256Digest Digest::sha256() {
  Sha256Digest out{};
  unsigned size = 0;
  if (EVP_DigestFinal_ex(state_->evp, out.data(), &size) != 1 || size != out.size()) {
    throw std::runtime_error("SHA-256 failed (OpenSSL)");
  }
  return out;
}

Sha256Digest sha256_of(const void* data, std::size_t size) {
  Digest d(DigestKind::Sha256);
  d.update(data, size);
  return d.sha256();
}

Uuid uuid_v5(const Sha1Digest& sha1) {
  Uuid uuid{};
  for (std::size_t i = 0; i < uuid.size(); ++i) uuid[i] = sha1[i];
  uuid[6] = static_cast<std::uint8_t>((uuid[6] & 0x0f) | 0x50);  // version 5
  uuid[8] = static_cast<std::uint8_t>((uuid[8] & 0x3f) | 0x80);  // variant 10xx
  return uuid;
}

}  // namespace ggufcheck::detail
