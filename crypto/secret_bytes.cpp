// SecretBytes over sodium_malloc / sodium_free, which zero, unlock and unmap.
#include "sealtrain/crypto/secret_bytes.h"

#include "sealtrain/crypto/random.h"

#include <sodium.h>

#include <cstring>
#include <utility>

namespace sealtrain::crypto {

SecretBytes::~SecretBytes()
{
    wipe();
}

Result<SecretBytes> SecretBytes::allocate(std::size_t size)
{
    ensureInitialized();
    if (size == 0)
        return SecretBytes{};
    void* memory = sodium_malloc(size);
    if (memory == nullptr) {
        return Error(ErrorCode::ResourceExhausted,
                     "Cannot allocate protected memory for key material; raise the locked-memory "
                     "limit (ulimit -l) or free memory.");
    }
    // sodium_malloc fills with a canary pattern; callers expect zeroes. It already locks the
    // pages and marks them MADV_DONTDUMP, which keeps them out of core dumps.
    std::memset(memory, 0, size);
    return SecretBytes(static_cast<std::uint8_t*>(memory), size);
}

Result<SecretBytes> SecretBytes::fromBytes(std::span<const std::uint8_t> bytes)
{
    auto secret = allocate(bytes.size());
    if (!secret)
        return secret;
    if (!bytes.empty())
        std::memcpy(secret->data_, bytes.data(), bytes.size());
    return secret;
}

Result<SecretBytes> SecretBytes::random(std::size_t size)
{
    auto secret = allocate(size);
    if (!secret)
        return secret;
    fillRandom(secret->mutableBytes());
    return secret;
}

SecretBytes::SecretBytes(SecretBytes&& other) noexcept
    : data_(std::exchange(other.data_, nullptr))
    , size_(std::exchange(other.size_, 0))
{
}

SecretBytes& SecretBytes::operator=(SecretBytes&& other) noexcept
{
    if (this != &other) {
        wipe();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

Result<SecretBytes> SecretBytes::copy() const
{
    return fromBytes(bytes());
}

bool SecretBytes::equals(const SecretBytes& other) const noexcept
{
    if (size_ != other.size_)
        return false;
    if (size_ == 0)
        return true;
    return sodium_memcmp(data_, other.data_, size_) == 0;
}

void SecretBytes::wipe() noexcept
{
    if (data_ != nullptr)
        sodium_free(data_);  // zeroes before unmapping
    data_ = nullptr;
    size_ = 0;
}

}  // namespace sealtrain::crypto
