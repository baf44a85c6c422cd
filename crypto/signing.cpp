// Ed25519 over libsodium (signing, strict verification); PEM import and export over OpenSSL,
// which is what other tools read and write.
#include "sealtrain/crypto/signing.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/random.h"

#include "openssl_handles.h"
#include "pem_input.h"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <sodium.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace sealtrain::crypto {
namespace {

static_assert(crypto_sign_PUBLICKEYBYTES == kEd25519PublicKeySize);
static_assert(crypto_sign_SEEDBYTES == kEd25519SeedSize);
static_assert(crypto_sign_BYTES == kEd25519SignatureSize);

using openssl::BioPtr;
using openssl::bioText;
using openssl::PkeyPtr;

}  // namespace

Result<PublicKey> PublicKey::fromRaw(std::span<const std::uint8_t> bytes)
{
    ensureInitialized();
    if (bytes.size() != kEd25519PublicKeySize) {
        return Error(ErrorCode::InvalidArgument, "An Ed25519 public key has 32 bytes, this one has "
                                                     + std::to_string(bytes.size())
                                                     + "; check that the right file was given.");
    }
    if (crypto_core_ed25519_is_valid_point(bytes.data()) != 1) {
        return Error(ErrorCode::InvalidArgument,
                     "The Ed25519 public key is not a valid curve point; check that the key was "
                     "copied intact.");
    }
    std::array<std::uint8_t, kEd25519PublicKeySize> raw{};
    std::copy(bytes.begin(), bytes.end(), raw.begin());
    return PublicKey(raw);
}

Result<PublicKey> PublicKey::fromPemFile(const std::filesystem::path& path)
{
    const auto pem = readWholeFile(path);
    if (!pem) {
        return Error(ErrorCode::NotFound,
                     "Cannot read the public key '" + path.string() + "'; check the path.");
    }
    auto key = fromPem(*pem);
    if (!key)
        return key.error().withContext("In '" + path.string() + "'");
    return key;
}

Result<PublicKey> PublicKey::fromPem(std::string_view pem)
{
    auto bio = pem::singleBlock(pem, "public key");
    if (!bio)
        return bio.error();
    PkeyPtr key(PEM_read_bio_PUBKEY(bio->get(), nullptr, pem::refusePassword, nullptr));
    if (!key) {
        return Error(ErrorCode::InvalidArgument,
                     "The text is not a PEM public key; give a 'BEGIN PUBLIC KEY' block as "
                     "'openssl pkey -pubout' writes it.");
    }
    if (EVP_PKEY_get_id(key.get()) != EVP_PKEY_ED25519) {
        return Error(
            ErrorCode::Unsupported,
            "The PEM public key is not an Ed25519 key; Sealtrain signs with Ed25519 only.");
    }
    std::array<std::uint8_t, kEd25519PublicKeySize> raw{};
    std::size_t length = raw.size();
    if (EVP_PKEY_get_raw_public_key(key.get(), raw.data(), &length) != 1 || length != raw.size()) {
        return Error(ErrorCode::InvalidArgument,
                     "The Ed25519 public key in the PEM block is malformed; export it again.");
    }
    return fromRaw(raw);
}

std::string PublicKey::toPem() const
{
    PkeyPtr key(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, raw_.data(), raw_.size()));
    const BioPtr bio(BIO_new(BIO_s_mem()));
    if (!key || !bio || PEM_write_bio_PUBKEY(bio.get(), key.get()) != 1) {
        std::fputs("sealtrain: OpenSSL could not write an Ed25519 public key.\n", stderr);
        std::abort();
    }
    return bioText(bio.get());
}

std::string PublicKey::keyId() const
{
    return "sha256:" + toHex(sha256(raw_));
}

bool PublicKey::verify(std::span<const std::uint8_t> message,
                       std::span<const std::uint8_t> signature) const
{
    ensureInitialized();
    if (signature.size() != kEd25519SignatureSize)
        return false;
    return crypto_sign_verify_detached(signature.data(), message.data(), message.size(),
                                       raw_.data())
           == 0;
}

Result<SigningKey> SigningKey::generate()
{
    auto seed = SecretBytes::random(kEd25519SeedSize);
    if (!seed)
        return seed.error();
    return fromSeed(*seed);
}

Result<SigningKey> SigningKey::fromSeed(const SecretBytes& seed32)
{
    ensureInitialized();
    if (seed32.size() != kEd25519SeedSize) {
        return Error(ErrorCode::InvalidArgument,
                     "An Ed25519 private key seed has 32 bytes; check the key file.");
    }
    auto seed = seed32.copy();
    if (!seed)
        return seed.error();
    auto expanded = SecretBytes::allocate(crypto_sign_SECRETKEYBYTES);
    if (!expanded)
        return expanded.error();
    std::array<std::uint8_t, kEd25519PublicKeySize> raw{};
    if (crypto_sign_seed_keypair(raw.data(), expanded->mutableBytes().data(), seed->bytes().data())
        != 0) {
        return Error(ErrorCode::Internal,
                     "The libsodium library could not derive an Ed25519 key pair.");
    }
    return SigningKey(std::move(*seed), std::move(*expanded), PublicKey(raw));
}

Result<SigningKey> SigningKey::fromPrivatePem(std::string_view pem)
{
    auto key = pem::readPrivateKey(pem, "private key",
                                   "The text is not an unencrypted PEM private key; give a 'BEGIN "
                                   "PRIVATE KEY' block as 'openssl genpkey -algorithm ed25519' "
                                   "writes it.");
    if (!key)
        return key.error();
    if (EVP_PKEY_get_id(key->get()) != EVP_PKEY_ED25519) {
        return Error(
            ErrorCode::Unsupported,
            "The PEM private key is not an Ed25519 key; Sealtrain signs with Ed25519 only.");
    }
    auto seed = SecretBytes::allocate(kEd25519SeedSize);
    if (!seed)
        return seed.error();
    std::size_t length = seed->size();
    if (EVP_PKEY_get_raw_private_key(key->get(), seed->mutableBytes().data(), &length) != 1
        || length != kEd25519SeedSize) {
        return Error(ErrorCode::InvalidArgument,
                     "The Ed25519 private key in the PEM block is malformed; export it again.");
    }
    return fromSeed(*seed);
}

Ed25519Signature SigningKey::sign(std::span<const std::uint8_t> message) const
{
    Ed25519Signature signature{};
    crypto_sign_detached(signature.data(), nullptr, message.data(), message.size(),
                         expanded_.bytes().data());
    return signature;
}

Result<std::string> SigningKey::toPrivatePem() const
{
    PkeyPtr key(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed_.bytes().data(),
                                             seed_.size()));
    // The secure-memory BIO is cleansed when freed, so no copy of the key stays behind in it.
    const BioPtr bio(BIO_new(BIO_s_secmem()));
    if (!key || !bio
        || PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr)
               != 1) {
        return Error(ErrorCode::Internal,
                     "OpenSSL could not write the Ed25519 private key as PEM.");
    }
    return bioText(bio.get());
}

}  // namespace sealtrain::crypto
