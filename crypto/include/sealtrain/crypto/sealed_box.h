// Sealed boxes: hand a secret (a DEK) to one worker, anonymously, under its X25519 public key
// (libsodium crypto_box_seal: an ephemeral X25519 key, XSalsa20-Poly1305). Only the holder of
// the worker's secret key can open it; the sender can not, and nothing says who sent it, so
// whoever needs to know the sender signs the box separately.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace sealtrain::crypto {

inline constexpr std::size_t kX25519KeySize = 32;
// What crypto_box_seal adds to the plaintext: the ephemeral public key and the Poly1305 tag.
inline constexpr std::size_t kSealedBoxOverhead = 48;

using BoxPublicKey = std::array<std::uint8_t, kX25519KeySize>;

class BoxKeyPair final {
public:
    [[nodiscard]] static Result<BoxKeyPair> generate();
    // From a stored 32-byte secret key; the public key is derived from it.
    [[nodiscard]] static Result<BoxKeyPair> fromSecretKey(const SecretBytes& secretKey);

    BoxKeyPair(BoxKeyPair&&) noexcept = default;
    BoxKeyPair& operator=(BoxKeyPair&&) noexcept = default;
    BoxKeyPair(const BoxKeyPair&) = delete;
    BoxKeyPair& operator=(const BoxKeyPair&) = delete;
    ~BoxKeyPair() = default;

    [[nodiscard]] const BoxPublicKey& publicKey() const { return publicKey_; }
    [[nodiscard]] const SecretBytes& secretKey() const { return secretKey_; }

private:
    BoxKeyPair(const BoxPublicKey& publicKey, SecretBytes secretKey)
        : publicKey_(publicKey)
        , secretKey_(std::move(secretKey))
    {
    }

    BoxPublicKey publicKey_{};
    SecretBytes secretKey_;
};

// plaintext.size() + kSealedBoxOverhead bytes. InvalidArgument for a public key that is a
// low-order point (nothing could be kept secret under it).
[[nodiscard]] Result<std::vector<std::uint8_t>>
sealToPublicKey(const BoxPublicKey& publicKey, std::span<const std::uint8_t> plaintext);

// The plaintext, in protected memory. Unauthenticated when the box was not sealed to this key
// pair or was altered.
[[nodiscard]] Result<SecretBytes> openSealedBox(const BoxKeyPair& keyPair,
                                                std::span<const std::uint8_t> ciphertext);

// Raw X25519 (RFC 7748) of a 32-byte scalar and a 32-byte u-coordinate, for conformance tests
// and protocols built on it. InvalidArgument when the result is all zero (a low-order point),
// which libsodium refuses rather than return.
[[nodiscard]] Result<SecretBytes> x25519(const SecretBytes& scalar, const BoxPublicKey& point);

}  // namespace sealtrain::crypto
