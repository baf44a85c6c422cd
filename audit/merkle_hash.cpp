// RFC 6962 leaf and node hashes over OpenSSL's one-shot SHA-256.
#include "sealtrain/audit/merkle_hash.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace sealtrain::audit {
namespace {

Hash sha256Parts(std::initializer_list<std::span<const std::uint8_t>> parts)
{
    Hash out{};
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1;
    for (const auto& part : parts)
        ok = ok && EVP_DigestUpdate(ctx, part.data(), part.size()) == 1;
    unsigned int length = 0;
    ok = ok && EVP_DigestFinal_ex(ctx, out.data(), &length) == 1 && length == out.size();
    EVP_MD_CTX_free(ctx);
    if (!ok)
        throw std::runtime_error("OpenSSL SHA-256 failed");  // only when OpenSSL is broken
    return out;
}

}  // namespace

Hash leafHash(std::span<const std::uint8_t> entry)
{
    static constexpr std::uint8_t kLeafPrefix[] = {0x00};
    return sha256Parts({kLeafPrefix, entry});
}

Hash nodeHash(const Hash& left, const Hash& right)
{
    static constexpr std::uint8_t kNodePrefix[] = {0x01};
    return sha256Parts({kNodePrefix, left, right});
}

Hash emptyTreeRoot()
{
    return sha256Parts({});
}

}  // namespace sealtrain::audit
