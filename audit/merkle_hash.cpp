// RFC 6962 leaf and node hashes over OpenSSL's one-shot SHA-256.
#include "sealtrain/audit/merkle_hash.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace sealtrain::audit {
namespace {

// One context per thread and one fetched SHA-256 implementation: creating a context and
// fetching the algorithm on every call cost more than hashing a log entry.
class Sha256Context {
public:
    Sha256Context()
        : md_(EVP_MD_fetch(nullptr, "SHA256", nullptr))
        , ctx_(EVP_MD_CTX_new())
    {
    }
    ~Sha256Context()
    {
        EVP_MD_CTX_free(ctx_);
        EVP_MD_free(md_);
    }
    Sha256Context(const Sha256Context&) = delete;
    Sha256Context& operator=(const Sha256Context&) = delete;

    Hash hash(std::initializer_list<std::span<const std::uint8_t>> parts)
    {
        Hash out{};
        bool ok = md_ != nullptr && ctx_ != nullptr && EVP_DigestInit_ex2(ctx_, md_, nullptr) == 1;
        for (const auto& part : parts)
            ok = ok && EVP_DigestUpdate(ctx_, part.data(), part.size()) == 1;
        unsigned int length = 0;
        ok = ok && EVP_DigestFinal_ex(ctx_, out.data(), &length) == 1 && length == out.size();
        if (!ok)
            throw std::runtime_error("OpenSSL SHA-256 failed");  // only when OpenSSL is broken
        return out;
    }

private:
    EVP_MD* md_;
    EVP_MD_CTX* ctx_;
};

Hash sha256Parts(std::initializer_list<std::span<const std::uint8_t>> parts)
{
    thread_local Sha256Context context;
    return context.hash(parts);
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
