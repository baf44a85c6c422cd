// SHA-256 and HMAC-SHA-256 over OpenSSL 3's EVP_MD and EVP_MAC interfaces.
//
// The OpenSSL calls here fail only when memory runs out or the library is broken; an unhashed
// value must never be mistaken for a hash, so such a failure aborts rather than returning junk.
#include "sealtrain/crypto/hash.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace sealtrain::crypto {
namespace {

[[noreturn]] void opensslFailed(const char* what)
{
    std::fprintf(stderr, "sealtrain: OpenSSL failed in %s; the library is unusable.\n", what);
    std::abort();
}

void check(int ok, const char* what)
{
    if (ok != 1)
        opensslFailed(what);
}

EVP_MAC* hmacAlgorithm()
{
    // Fetched once: the provider lookup is far costlier than an HMAC of a short message.
    static EVP_MAC* const mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (mac == nullptr)
        opensslFailed("EVP_MAC_fetch(HMAC)");
    return mac;
}

}  // namespace

struct Sha256::State {
    EVP_MD_CTX* ctx = nullptr;
    ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256()
    : state_(std::make_unique<State>())
{
    state_->ctx = EVP_MD_CTX_new();
    if (state_->ctx == nullptr)
        opensslFailed("EVP_MD_CTX_new");
    check(EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr), "EVP_DigestInit_ex");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&& other) noexcept = default;
Sha256& Sha256::operator=(Sha256&& other) noexcept = default;

void Sha256::update(std::span<const std::uint8_t> data)
{
    if (!data.empty())
        check(EVP_DigestUpdate(state_->ctx, data.data(), data.size()), "EVP_DigestUpdate");
}

Sha256Digest Sha256::finish()
{
    Sha256Digest digest{};
    unsigned int length = 0;
    check(EVP_DigestFinal_ex(state_->ctx, digest.data(), &length), "EVP_DigestFinal_ex");
    if (length != digest.size())
        opensslFailed("EVP_DigestFinal_ex length");
    check(EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr), "EVP_DigestInit_ex");
    return digest;
}

Sha256Digest sha256(std::span<const std::uint8_t> data)
{
    Sha256Digest digest{};
    unsigned int length = 0;
    check(EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha256(), nullptr),
          "EVP_Digest");
    return digest;
}

struct HmacSha256::State {
    EVP_MAC_CTX* ctx = nullptr;
    ~State() { EVP_MAC_CTX_free(ctx); }
};

HmacSha256::HmacSha256(const SecretBytes& key)
    : state_(std::make_unique<State>())
{
    state_->ctx = EVP_MAC_CTX_new(hmacAlgorithm());
    if (state_->ctx == nullptr)
        opensslFailed("EVP_MAC_CTX_new");
    char digestName[] = "SHA256";
    const OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digestName, 0),
        OSSL_PARAM_construct_end(),
    };
    // OpenSSL wants a non-null pointer even for an empty key.
    static const std::uint8_t emptyKey = 0;
    const std::uint8_t* keyData = key.empty() ? &emptyKey : key.bytes().data();
    check(EVP_MAC_init(state_->ctx, keyData, key.size(), params), "EVP_MAC_init");
}

HmacSha256::~HmacSha256() = default;
HmacSha256::HmacSha256(HmacSha256&& other) noexcept = default;
HmacSha256& HmacSha256::operator=(HmacSha256&& other) noexcept = default;

void HmacSha256::update(std::span<const std::uint8_t> data)
{
    if (!data.empty())
        check(EVP_MAC_update(state_->ctx, data.data(), data.size()), "EVP_MAC_update");
}

Sha256Digest HmacSha256::finish()
{
    Sha256Digest digest{};
    std::size_t length = 0;
    check(EVP_MAC_final(state_->ctx, digest.data(), &length, digest.size()), "EVP_MAC_final");
    if (length != digest.size())
        opensslFailed("EVP_MAC_final length");
    // Re-initialising with no key keeps the key already set, ready for the next message.
    check(EVP_MAC_init(state_->ctx, nullptr, 0, nullptr), "EVP_MAC_init");
    return digest;
}

Sha256Digest hmacSha256(const SecretBytes& key, std::span<const std::uint8_t> data)
{
    HmacSha256 mac(key);
    mac.update(data);
    return mac.finish();
}

Result<Sha256Digest> sha256File(const std::filesystem::path& path)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        if (error == ENOENT) {
            return Error(ErrorCode::NotFound, "Cannot hash '" + path.string()
                                                  + "' because it does not exist; check the path.");
        }
        return Error(ErrorCode::Io, "Cannot open '" + path.string() + "' to hash it ("
                                        + std::strerror(error) + "); check its permissions.");
    }
    Sha256 hasher;
    std::array<std::uint8_t, 1 << 16> buffer{};
    for (;;) {
        const ssize_t got = ::read(fd, buffer.data(), buffer.size());
        if (got == 0)
            break;
        if (got < 0) {
            const int error = errno;
            if (error == EINTR)
                continue;
            ::close(fd);
            return Error(ErrorCode::Io, "Cannot read '" + path.string() + "' to hash it ("
                                            + std::strerror(error) + "); check the disk.");
        }
        hasher.update(std::span<const std::uint8_t>(buffer.data(), static_cast<std::size_t>(got)));
    }
    ::close(fd);
    return hasher.finish();
}

bool digestsEqual(const Sha256Digest& a, const Sha256Digest& b) noexcept
{
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace sealtrain::crypto
