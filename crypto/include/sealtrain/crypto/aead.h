// AES-256-GCM with a 12-byte nonce and a 16-byte tag, over OpenSSL 3's EVP interface (AES-NI
// and carry-less multiply where the CPU has them). The one AEAD every Sealtrain format uses:
// wrapped keys, and each chunk of a sealed object's payload.
//
// Opening verifies the tag before it reports success; when the tag does not verify, whatever
// was written to the output is wiped and the result is ErrorCode::Unauthenticated.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace sealtrain::crypto {

inline constexpr std::size_t kAes256KeySize = 32;
inline constexpr std::size_t kGcmNonceSize = 12;
inline constexpr std::size_t kGcmTagSize = 16;

using GcmNonce = std::array<std::uint8_t, kGcmNonceSize>;

// An AES-256-GCM key schedule kept ready for many messages (the per-chunk cost is then only
// setting the nonce). Not thread-safe: one instance per thread.
class Aes256Gcm final {
public:
    // Refuses a key that is not 32 bytes.
    [[nodiscard]] static Result<Aes256Gcm> create(const SecretBytes& key);

    Aes256Gcm(Aes256Gcm&& other) noexcept;
    Aes256Gcm& operator=(Aes256Gcm&& other) noexcept;
    Aes256Gcm(const Aes256Gcm&) = delete;
    Aes256Gcm& operator=(const Aes256Gcm&) = delete;
    ~Aes256Gcm();

    // Writes ciphertext || tag to `out`, which must be exactly plaintext.size() + 16 bytes.
    // `plaintext` and the first bytes of `out` may be the same memory.
    [[nodiscard]] Result<void> seal(const GcmNonce& nonce, std::span<const std::uint8_t> aad,
                                    std::span<const std::uint8_t> plaintext,
                                    std::span<std::uint8_t> out);

    // Verifies and decrypts ciphertext || tag into `out` (exactly ciphertext.size() - 16 bytes).
    // Unauthenticated, with `out` wiped, when the tag does not verify.
    [[nodiscard]] Result<void> open(const GcmNonce& nonce, std::span<const std::uint8_t> aad,
                                    std::span<const std::uint8_t> ciphertextAndTag,
                                    std::span<std::uint8_t> out);

private:
    struct State;
    explicit Aes256Gcm(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// One-shot forms. A nonce must never repeat under one key; pick it at random (fillRandom) or
// derive it so that it can not repeat.
[[nodiscard]] Result<std::vector<std::uint8_t>>
aes256GcmSeal(const SecretBytes& key, const GcmNonce& nonce, std::span<const std::uint8_t> aad,
              std::span<const std::uint8_t> plaintext);

[[nodiscard]] Result<std::vector<std::uint8_t>>
aes256GcmOpen(const SecretBytes& key, const GcmNonce& nonce, std::span<const std::uint8_t> aad,
              std::span<const std::uint8_t> ciphertextAndTag);

// Opens straight into protected memory, for unwrapping keys: the plaintext never exists
// outside SecretBytes.
[[nodiscard]] Result<SecretBytes>
aes256GcmOpenSecret(const SecretBytes& key, const GcmNonce& nonce,
                    std::span<const std::uint8_t> aad,
                    std::span<const std::uint8_t> ciphertextAndTag);

}  // namespace sealtrain::crypto
