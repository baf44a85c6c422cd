// Sealed boxes and raw X25519 over libsodium.
#include "sealtrain/crypto/sealed_box.h"

#include "sealtrain/crypto/random.h"

#include <sodium.h>

namespace sealtrain::crypto {

static_assert(crypto_box_PUBLICKEYBYTES == kX25519KeySize);
static_assert(crypto_box_SECRETKEYBYTES == kX25519KeySize);
static_assert(crypto_box_SEALBYTES == kSealedBoxOverhead);
static_assert(crypto_scalarmult_BYTES == kX25519KeySize);

Result<BoxKeyPair> BoxKeyPair::generate()
{
    auto secretKey = SecretBytes::random(kX25519KeySize);
    if (!secretKey)
        return secretKey.error();
    return fromSecretKey(*secretKey);
}

Result<BoxKeyPair> BoxKeyPair::fromSecretKey(const SecretBytes& secretKey)
{
    ensureInitialized();
    if (secretKey.size() != kX25519KeySize) {
        return Error(ErrorCode::InvalidArgument,
                     "An X25519 secret key has 32 bytes; check the worker's key file.");
    }
    auto copy = secretKey.copy();
    if (!copy)
        return copy.error();
    BoxPublicKey publicKey{};
    if (crypto_scalarmult_base(publicKey.data(), copy->bytes().data()) != 0)
        return Error(ErrorCode::Internal,
                     "The libsodium library could not derive an X25519 public key.");
    return BoxKeyPair(publicKey, std::move(*copy));
}

Result<std::vector<std::uint8_t>> sealToPublicKey(const BoxPublicKey& publicKey,
                                                  std::span<const std::uint8_t> plaintext)
{
    ensureInitialized();
    std::vector<std::uint8_t> ciphertext(plaintext.size() + kSealedBoxOverhead);
    if (crypto_box_seal(ciphertext.data(), plaintext.data(), plaintext.size(), publicKey.data())
        != 0) {
        return Error(ErrorCode::InvalidArgument,
                     "The worker's X25519 public key is a low-order point; enroll the worker "
                     "again with a freshly generated key.");
    }
    return ciphertext;
}

Result<SecretBytes> openSealedBox(const BoxKeyPair& keyPair,
                                  std::span<const std::uint8_t> ciphertext)
{
    ensureInitialized();
    if (ciphertext.size() < kSealedBoxOverhead) {
        return Error(ErrorCode::Integrity,
                     "The sealed box is shorter than its fixed overhead; it was truncated.");
    }
    auto plaintext = SecretBytes::allocate(ciphertext.size() - kSealedBoxOverhead);
    if (!plaintext)
        return plaintext.error();
    // crypto_box_seal_open wants a valid output pointer even for an empty plaintext.
    std::uint8_t empty = 0;
    std::uint8_t* out = plaintext->empty() ? &empty : plaintext->mutableBytes().data();
    if (crypto_box_seal_open(out, ciphertext.data(), ciphertext.size(), keyPair.publicKey().data(),
                             keyPair.secretKey().bytes().data())
        != 0) {
        return Error(ErrorCode::Unauthenticated,
                     "The sealed box does not open with this worker's key; it was sealed to "
                     "another key or altered.");
    }
    return plaintext;
}

Result<SecretBytes> x25519(const SecretBytes& scalar, const BoxPublicKey& point)
{
    ensureInitialized();
    if (scalar.size() != kX25519KeySize)
        return Error(ErrorCode::InvalidArgument,
                     "An X25519 scalar has 32 bytes; pass a 32-byte secret key.");
    auto shared = SecretBytes::allocate(kX25519KeySize);
    if (!shared)
        return shared.error();
    if (crypto_scalarmult(shared->mutableBytes().data(), scalar.bytes().data(), point.data())
        != 0) {
        return Error(ErrorCode::InvalidArgument,
                     "The X25519 point has low order and gives an all-zero shared secret; refuse "
                     "the peer's key.");
    }
    return shared;
}

}  // namespace sealtrain::crypto
