// CSPRNG wrapper over libsodium.
#include "sealtrain/crypto/random.h"

#include <sodium.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace sealtrain::crypto {

void ensureInitialized()
{
    static std::once_flag once;
    std::call_once(once, [] {
        if (sodium_init() < 0) {
            std::fputs("sealtrain: libsodium could not initialise; reinstall libsodium23.\n",
                       stderr);
            std::abort();
        }
    });
}

void fillRandom(std::span<std::uint8_t> out)
{
    ensureInitialized();
    if (!out.empty())
        randombytes_buf(out.data(), out.size());
}

std::vector<std::uint8_t> randomBytes(std::size_t size)
{
    std::vector<std::uint8_t> bytes(size);
    fillRandom(bytes);
    return bytes;
}

std::uint32_t randomUniform(std::uint32_t upperBound)
{
    ensureInitialized();
    return randombytes_uniform(upperBound);
}

}  // namespace sealtrain::crypto
