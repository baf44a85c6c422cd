// SHA-256 and HMAC-SHA-256, one-shot and streaming, over OpenSSL's EVP (SHA extensions where the
// CPU has them). Audit hashes, key ids and keyed hashes of sensitive values all go through here.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace sealtrain::crypto {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Streaming SHA-256: update() any number of times, then finish(). finish() leaves the object
// ready to hash a new message from the start.
class Sha256 final {
public:
    Sha256();
    ~Sha256();
    Sha256(Sha256&& other) noexcept;
    Sha256& operator=(Sha256&& other) noexcept;
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;

    void update(std::span<const std::uint8_t> data);
    [[nodiscard]] Sha256Digest finish();

private:
    struct State;
    std::unique_ptr<State> state_;
};

[[nodiscard]] Sha256Digest sha256(std::span<const std::uint8_t> data);

// Streaming HMAC-SHA-256 (RFC 2104) under a key of any length. finish() leaves the object ready
// for a new message under the same key.
class HmacSha256 final {
public:
    explicit HmacSha256(const SecretBytes& key);
    ~HmacSha256();
    HmacSha256(HmacSha256&& other) noexcept;
    HmacSha256& operator=(HmacSha256&& other) noexcept;
    HmacSha256(const HmacSha256&) = delete;
    HmacSha256& operator=(const HmacSha256&) = delete;

    void update(std::span<const std::uint8_t> data);
    [[nodiscard]] Sha256Digest finish();

private:
    struct State;
    std::unique_ptr<State> state_;
};

[[nodiscard]] Sha256Digest hmacSha256(const SecretBytes& key, std::span<const std::uint8_t> data);

// Hashes a file in fixed-size blocks (memory stays bounded whatever its size).
// NotFound when the file does not exist, Io when it can not be read.
[[nodiscard]] Result<Sha256Digest> sha256File(const std::filesystem::path& path);

// Compares two digests in constant time.
[[nodiscard]] bool digestsEqual(const Sha256Digest& a, const Sha256Digest& b) noexcept;

}  // namespace sealtrain::crypto
