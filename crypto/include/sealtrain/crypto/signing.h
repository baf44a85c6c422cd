// Ed25519 signatures (RFC 8032): signing keys kept in SecretBytes, public keys exchangeable as
// raw bytes or PEM (SubjectPublicKeyInfo, what `openssl pkey -pubin` reads). docs/formats/keys.md
// specifies key ids and the PEM forms, and the openssl commands that check each.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace sealtrain::crypto {

inline constexpr std::size_t kEd25519PublicKeySize = 32;
inline constexpr std::size_t kEd25519SeedSize = 32;
inline constexpr std::size_t kEd25519SignatureSize = 64;

using Ed25519Signature = std::array<std::uint8_t, kEd25519SignatureSize>;

class PublicKey final {
public:
    // 32 bytes; refused (InvalidArgument) unless they encode a canonical point of the prime-order
    // subgroup, so a key that could never verify anything is caught at import.
    [[nodiscard]] static Result<PublicKey> fromRaw(std::span<const std::uint8_t> bytes);
    // A PEM "PUBLIC KEY" block (SubjectPublicKeyInfo) holding an Ed25519 key.
    [[nodiscard]] static Result<PublicKey> fromPem(std::string_view pem);
    // A PEM file: NotFound naming the file when it can not be read, fromPem's refusals with the
    // file's name in front.
    [[nodiscard]] static Result<PublicKey> fromPemFile(const std::filesystem::path& path);

    [[nodiscard]] std::string toPem() const;
    [[nodiscard]] std::span<const std::uint8_t> raw() const { return raw_; }
    // "sha256:" + lowercase hex of SHA-256 over the 32 raw public key bytes.
    [[nodiscard]] std::string keyId() const;

    // Strict RFC 8032 verification (libsodium): a 64-byte signature with canonical S, no
    // small-order R; anything else, including a wrong size, is false.
    [[nodiscard]] bool verify(std::span<const std::uint8_t> message,
                              std::span<const std::uint8_t> signature) const;

    [[nodiscard]] bool operator==(const PublicKey& other) const = default;

private:
    friend class SigningKey;

    explicit PublicKey(const std::array<std::uint8_t, kEd25519PublicKeySize>& raw)
        : raw_(raw)
    {
    }

    std::array<std::uint8_t, kEd25519PublicKeySize> raw_{};
};

class SigningKey final {
public:
    [[nodiscard]] static Result<SigningKey> generate();
    // The 32-byte RFC 8032 private key (the seed).
    [[nodiscard]] static Result<SigningKey> fromSeed(const SecretBytes& seed32);
    // A PEM "PRIVATE KEY" block (unencrypted PKCS#8) holding an Ed25519 key, e.g. from
    // `openssl genpkey -algorithm ed25519`.
    [[nodiscard]] static Result<SigningKey> fromPrivatePem(std::string_view pem);

    SigningKey(SigningKey&&) noexcept = default;
    SigningKey& operator=(SigningKey&&) noexcept = default;
    SigningKey(const SigningKey&) = delete;
    SigningKey& operator=(const SigningKey&) = delete;
    ~SigningKey() = default;

    [[nodiscard]] const PublicKey& publicKey() const { return publicKey_; }
    [[nodiscard]] Ed25519Signature sign(std::span<const std::uint8_t> message) const;
    // The seed, for sealing the key at rest.
    [[nodiscard]] const SecretBytes& seed() const { return seed_; }
    // Unencrypted PKCS#8 PEM for interop tests and explicit exports only; never log it.
    [[nodiscard]] Result<std::string> toPrivatePem() const;

private:
    SigningKey(SecretBytes seed, SecretBytes expanded, PublicKey publicKey)
        : seed_(std::move(seed))
        , expanded_(std::move(expanded))
        , publicKey_(publicKey)
    {
    }

    SecretBytes seed_;      // 32 bytes
    SecretBytes expanded_;  // libsodium's 64-byte secret key (seed || public key)
    PublicKey publicKey_;
};

}  // namespace sealtrain::crypto
