// Owning handles for OpenSSL objects, for crypto/'s .cpp files only: OpenSSL types never appear
// in a public header (docs/development.md). Each handle frees its object with OpenSSL's own free
// function; memory BIOs come with a reader and a writer's text.
#pragma once

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace sealtrain::crypto::openssl {

template <typename T, void (*Free)(T*)>
struct Deleter {
    void operator()(T* object) const noexcept { Free(object); }
};
template <typename T, void (*Free)(T*)>
using Owned = std::unique_ptr<T, Deleter<T, Free>>;

inline void freeBio(BIO* bio) noexcept
{
    BIO_free(bio);
}
inline void freeCertificateStack(STACK_OF(X509) * stack) noexcept
{
    sk_X509_pop_free(stack, X509_free);
}

using BioPtr = Owned<BIO, freeBio>;
using PkeyPtr = Owned<EVP_PKEY, EVP_PKEY_free>;
using CipherContextPtr = Owned<EVP_CIPHER_CTX, EVP_CIPHER_CTX_free>;
using KdfPtr = Owned<EVP_KDF, EVP_KDF_free>;
using KdfContextPtr = Owned<EVP_KDF_CTX, EVP_KDF_CTX_free>;
using X509Ptr = Owned<X509, X509_free>;
using ReqPtr = Owned<X509_REQ, X509_REQ_free>;
using CrlPtr = Owned<X509_CRL, X509_CRL_free>;
using NamePtr = Owned<X509_NAME, X509_NAME_free>;
using ExtPtr = Owned<X509_EXTENSION, X509_EXTENSION_free>;
using StorePtr = Owned<X509_STORE, X509_STORE_free>;
using StoreCtxPtr = Owned<X509_STORE_CTX, X509_STORE_CTX_free>;
using CertificateStackPtr = Owned<STACK_OF(X509), freeCertificateStack>;
using NamesPtr = Owned<GENERAL_NAMES, GENERAL_NAMES_free>;
using BnPtr = Owned<BIGNUM, BN_free>;
using Asn1IntPtr = Owned<ASN1_INTEGER, ASN1_INTEGER_free>;
using RevokedPtr = Owned<X509_REVOKED, X509_REVOKED_free>;
using TimePtr = Owned<ASN1_TIME, ASN1_TIME_free>;

// A read-only memory BIO over `bytes` (which must outlive it); null when OpenSSL is out of memory.
inline BioPtr readBio(std::span<const std::uint8_t> bytes)
{
    return BioPtr(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}
inline BioPtr readBio(std::string_view text)
{
    return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Everything written to a memory BIO, as a string.
inline std::string bioText(BIO* bio)
{
    char* data = nullptr;
    const long length = BIO_get_mem_data(bio, &data);
    if (length <= 0 || data == nullptr)
        return {};
    return {data, static_cast<std::size_t>(length)};
}

}  // namespace sealtrain::crypto::openssl
