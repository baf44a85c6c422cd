// HKDF (RFC 5869) with SHA-512 or SHA-256 over OpenSSL 3's EVP_KDF. Output goes straight into
// SecretBytes because what HKDF makes is key material.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstddef>
#include <cstdint>
#include <span>

namespace sealtrain::crypto {

enum class HkdfHash { Sha256, Sha512 };

// The digest length of `hash` in bytes (32 or 64); HKDF-Expand makes at most 255 times that.
[[nodiscard]] std::size_t hkdfHashSize(HkdfHash hash) noexcept;

// Extract then expand: `length` bytes from input keying material `ikm`, `salt` (may be empty,
// which RFC 5869 treats as HashLen zero bytes) and `info`. InvalidArgument when `length` is 0 or
// above 255 * HashLen.
[[nodiscard]] Result<SecretBytes> hkdf(HkdfHash hash, std::span<const std::uint8_t> ikm,
                                       std::span<const std::uint8_t> salt,
                                       std::span<const std::uint8_t> info, std::size_t length);

// HKDF-Extract alone: the pseudorandom key, HashLen bytes.
[[nodiscard]] Result<SecretBytes> hkdfExtract(HkdfHash hash, std::span<const std::uint8_t> ikm,
                                              std::span<const std::uint8_t> salt);

// HKDF-Expand alone, from a pseudorandom key of at least HashLen bytes (or, as C2SP chunked
// encryption does, any uniformly random key).
[[nodiscard]] Result<SecretBytes> hkdfExpand(HkdfHash hash, std::span<const std::uint8_t> prk,
                                             std::span<const std::uint8_t> info,
                                             std::size_t length);

}  // namespace sealtrain::crypto
