// HKDF through EVP_KDF "HKDF" in its three modes (extract+expand, extract only, expand only).
#include "sealtrain/crypto/hkdf.h"

#include "openssl_handles.h"

#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#include <array>
#include <memory>

namespace sealtrain::crypto {

namespace {

const char* digestName(HkdfHash hash)
{
    return hash == HkdfHash::Sha512 ? "SHA512" : "SHA256";
}

// OSSL_PARAM takes non-const pointers for octet strings it only reads.
void* paramPointer(std::span<const std::uint8_t> bytes)
{
    static std::uint8_t empty = 0;
    return bytes.empty() ? &empty : const_cast<std::uint8_t*>(bytes.data());  // NOLINT
}

Result<SecretBytes> derive(HkdfHash hash, int mode, std::span<const std::uint8_t> key,
                           std::span<const std::uint8_t> salt, std::span<const std::uint8_t> info,
                           std::size_t length)
{
    if (length == 0 || length > 255 * hkdfHashSize(hash)) {
        return Error(ErrorCode::InvalidArgument,
                     "HKDF can make between 1 and 255 times the hash size in bytes; ask for a "
                     "length in that range.");
    }
    const openssl::KdfPtr kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
    if (!kdf) {
        return Error(ErrorCode::Internal,
                     "OpenSSL offers no HKDF; check the OpenSSL installation with 'sealtrainctl "
                     "doctor'.");
    }
    const openssl::KdfContextPtr context(EVP_KDF_CTX_new(kdf.get()));
    if (!context) {
        return Error(ErrorCode::ResourceExhausted,
                     "Cannot allocate an HKDF context; free some memory and try again.");
    }
    std::array<OSSL_PARAM, 6> params{};
    std::size_t count = 0;
    params[count++] = OSSL_PARAM_construct_utf8_string(
        OSSL_KDF_PARAM_DIGEST, const_cast<char*>(digestName(hash)), 0);  // NOLINT
    params[count++] = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
    params[count++] =
        OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, paramPointer(key), key.size());
    if (mode != EVP_KDF_HKDF_MODE_EXPAND_ONLY) {
        params[count++] =
            OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, paramPointer(salt), salt.size());
    }
    if (mode != EVP_KDF_HKDF_MODE_EXTRACT_ONLY) {
        params[count++] =
            OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, paramPointer(info), info.size());
    }
    params[count] = OSSL_PARAM_construct_end();

    auto out = SecretBytes::allocate(length);
    if (!out)
        return out.error();
    if (EVP_KDF_derive(context.get(), out->mutableBytes().data(), length, params.data()) != 1) {
        return Error(ErrorCode::Internal,
                     "OpenSSL refused an HKDF derivation; check the OpenSSL installation with "
                     "'sealtrainctl doctor'.");
    }
    return out;
}

}  // namespace

std::size_t hkdfHashSize(HkdfHash hash) noexcept
{
    return hash == HkdfHash::Sha512 ? 64 : 32;
}

Result<SecretBytes> hkdf(HkdfHash hash, std::span<const std::uint8_t> ikm,
                         std::span<const std::uint8_t> salt, std::span<const std::uint8_t> info,
                         std::size_t length)
{
    return derive(hash, EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND, ikm, salt, info, length);
}

Result<SecretBytes> hkdfExtract(HkdfHash hash, std::span<const std::uint8_t> ikm,
                                std::span<const std::uint8_t> salt)
{
    return derive(hash, EVP_KDF_HKDF_MODE_EXTRACT_ONLY, ikm, salt, {}, hkdfHashSize(hash));
}

Result<SecretBytes> hkdfExpand(HkdfHash hash, std::span<const std::uint8_t> prk,
                               std::span<const std::uint8_t> info, std::size_t length)
{
    if (prk.empty()) {
        return Error(ErrorCode::InvalidArgument,
                     "HKDF-Expand needs a non-empty pseudorandom key; pass the key to expand.");
    }
    return derive(hash, EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, {}, info, length);
}

}  // namespace sealtrain::crypto
