// AES-256-GCM over EVP. One context per direction, keyed once; each message only sets its nonce.
#include "sealtrain/crypto/aead.h"

#include "openssl_handles.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>

#include <limits>
#include <utility>

namespace sealtrain::crypto {

namespace {

using CipherContext = openssl::CipherContextPtr;

Error openSslFailure()
{
    return Error(ErrorCode::Internal,
                 "OpenSSL refused an AES-256-GCM operation; check the OpenSSL installation with "
                 "'sealtrainctl doctor'.");
}

bool fitsInt(std::size_t size)
{
    return size <= static_cast<std::size_t>(std::numeric_limits<int>::max());
}

}  // namespace

struct Aes256Gcm::State {
    CipherContext encrypt;
    CipherContext decrypt;
};

Aes256Gcm::Aes256Gcm(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}

Aes256Gcm::Aes256Gcm(Aes256Gcm&& other) noexcept = default;
Aes256Gcm& Aes256Gcm::operator=(Aes256Gcm&& other) noexcept = default;
Aes256Gcm::~Aes256Gcm() = default;  // EVP_CIPHER_CTX_free wipes the key schedule

Result<Aes256Gcm> Aes256Gcm::create(const SecretBytes& key)
{
    if (key.size() != kAes256KeySize) {
        return Error(ErrorCode::InvalidArgument,
                     "An AES-256-GCM key must be 32 bytes; use a key made for AES-256.");
    }
    auto state = std::make_unique<State>();
    state->encrypt.reset(EVP_CIPHER_CTX_new());
    state->decrypt.reset(EVP_CIPHER_CTX_new());
    if (!state->encrypt || !state->decrypt)
        return openSslFailure();
    const int ivLength = static_cast<int>(kGcmNonceSize);
    // Key first (no nonce yet); each message sets its own nonce.
    if (EVP_EncryptInit_ex(state->encrypt.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1
        || EVP_CIPHER_CTX_ctrl(state->encrypt.get(), EVP_CTRL_GCM_SET_IVLEN, ivLength, nullptr) != 1
        || EVP_EncryptInit_ex(state->encrypt.get(), nullptr, nullptr, key.bytes().data(), nullptr)
               != 1)
        return openSslFailure();
    if (EVP_DecryptInit_ex(state->decrypt.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) != 1
        || EVP_CIPHER_CTX_ctrl(state->decrypt.get(), EVP_CTRL_GCM_SET_IVLEN, ivLength, nullptr) != 1
        || EVP_DecryptInit_ex(state->decrypt.get(), nullptr, nullptr, key.bytes().data(), nullptr)
               != 1)
        return openSslFailure();
    return Aes256Gcm(std::move(state));
}

Result<void> Aes256Gcm::seal(const GcmNonce& nonce, std::span<const std::uint8_t> aad,
                             std::span<const std::uint8_t> plaintext, std::span<std::uint8_t> out)
{
    if (out.size() != plaintext.size() + kGcmTagSize || !fitsInt(plaintext.size())
        || !fitsInt(aad.size())) {
        return Error(ErrorCode::InvalidArgument,
                     "The AES-256-GCM output buffer must be the plaintext size plus 16 bytes.");
    }
    EVP_CIPHER_CTX* context = state_->encrypt.get();
    int written = 0;
    if (EVP_EncryptInit_ex(context, nullptr, nullptr, nullptr, nonce.data()) != 1)
        return openSslFailure();
    if (!aad.empty()
        && EVP_EncryptUpdate(context, nullptr, &written, aad.data(), static_cast<int>(aad.size()))
               != 1)
        return openSslFailure();
    int total = 0;
    if (!plaintext.empty()) {
        if (EVP_EncryptUpdate(context, out.data(), &written, plaintext.data(),
                              static_cast<int>(plaintext.size()))
            != 1)
            return openSslFailure();
        total = written;
    }
    // GCM writes nothing at final; the pointer only has to be valid.
    if (EVP_EncryptFinal_ex(context, out.data() + total, &written) != 1)
        return openSslFailure();
    total += written;
    if (static_cast<std::size_t>(total) != plaintext.size())
        return openSslFailure();
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kGcmTagSize),
                            out.data() + plaintext.size())
        != 1)
        return openSslFailure();
    return success();
}

Result<void> Aes256Gcm::open(const GcmNonce& nonce, std::span<const std::uint8_t> aad,
                             std::span<const std::uint8_t> ciphertextAndTag,
                             std::span<std::uint8_t> out)
{
    if (ciphertextAndTag.size() < kGcmTagSize) {
        return Error(ErrorCode::Unauthenticated,
                     "The AES-256-GCM ciphertext is shorter than its tag, so it was truncated.");
    }
    const std::size_t ciphertextSize = ciphertextAndTag.size() - kGcmTagSize;
    if (out.size() != ciphertextSize || !fitsInt(ciphertextSize) || !fitsInt(aad.size())) {
        return Error(ErrorCode::InvalidArgument,
                     "The AES-256-GCM output buffer must be the ciphertext size minus 16 bytes.");
    }
    EVP_CIPHER_CTX* context = state_->decrypt.get();
    int written = 0;
    if (EVP_DecryptInit_ex(context, nullptr, nullptr, nullptr, nonce.data()) != 1)
        return openSslFailure();
    if (!aad.empty()
        && EVP_DecryptUpdate(context, nullptr, &written, aad.data(), static_cast<int>(aad.size()))
               != 1)
        return openSslFailure();
    int total = 0;
    if (ciphertextSize != 0) {
        if (EVP_DecryptUpdate(context, out.data(), &written, ciphertextAndTag.data(),
                              static_cast<int>(ciphertextSize))
            != 1) {
            wipeMemory(out);
            return openSslFailure();
        }
        total = written;
    }
    // OpenSSL's GCM tag control takes a non-const pointer but only reads from it.
    std::array<std::uint8_t, kGcmTagSize> tag{};
    std::copy_n(ciphertextAndTag.begin() + static_cast<std::ptrdiff_t>(ciphertextSize), kGcmTagSize,
                tag.begin());
    if (EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kGcmTagSize),
                            tag.data())
        != 1) {
        wipeMemory(out);
        return openSslFailure();
    }
    std::array<std::uint8_t, 16> finalBlock{};
    if (EVP_DecryptFinal_ex(context, finalBlock.data(), &written) != 1) {
        // Plaintext was produced before the tag could be checked: it must not survive.
        wipeMemory(out);
        return Error(ErrorCode::Unauthenticated,
                     "The AES-256-GCM tag does not verify: the key is wrong or the data was "
                     "altered.");
    }
    total += written;
    if (static_cast<std::size_t>(total) != ciphertextSize) {
        wipeMemory(out);
        return openSslFailure();
    }
    return success();
}

Result<std::vector<std::uint8_t>> aes256GcmSeal(const SecretBytes& key, const GcmNonce& nonce,
                                                std::span<const std::uint8_t> aad,
                                                std::span<const std::uint8_t> plaintext)
{
    auto cipher = Aes256Gcm::create(key);
    if (!cipher)
        return cipher.error();
    std::vector<std::uint8_t> out(plaintext.size() + kGcmTagSize);
    SEALTRAIN_TRY(cipher->seal(nonce, aad, plaintext, out));
    return out;
}

Result<std::vector<std::uint8_t>> aes256GcmOpen(const SecretBytes& key, const GcmNonce& nonce,
                                                std::span<const std::uint8_t> aad,
                                                std::span<const std::uint8_t> ciphertextAndTag)
{
    auto cipher = Aes256Gcm::create(key);
    if (!cipher)
        return cipher.error();
    if (ciphertextAndTag.size() < kGcmTagSize) {
        return Error(ErrorCode::Unauthenticated,
                     "The AES-256-GCM ciphertext is shorter than its tag, so it was truncated.");
    }
    std::vector<std::uint8_t> out(ciphertextAndTag.size() - kGcmTagSize);
    SEALTRAIN_TRY(cipher->open(nonce, aad, ciphertextAndTag, out));
    return out;
}

Result<SecretBytes> aes256GcmOpenSecret(const SecretBytes& key, const GcmNonce& nonce,
                                        std::span<const std::uint8_t> aad,
                                        std::span<const std::uint8_t> ciphertextAndTag)
{
    auto cipher = Aes256Gcm::create(key);
    if (!cipher)
        return cipher.error();
    if (ciphertextAndTag.size() < kGcmTagSize) {
        return Error(ErrorCode::Unauthenticated,
                     "The AES-256-GCM ciphertext is shorter than its tag, so it was truncated.");
    }
    auto out = SecretBytes::allocate(ciphertextAndTag.size() - kGcmTagSize);
    if (!out)
        return out.error();
    SEALTRAIN_TRY(cipher->open(nonce, aad, ciphertextAndTag, out->mutableBytes()));
    return out;
}

}  // namespace sealtrain::crypto
