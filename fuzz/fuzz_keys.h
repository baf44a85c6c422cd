// What the fuzz targets and their seed generator share: fixed, public keys that protect nothing
// (they only let seeds be valid objects, so that mutations reach the chunk-reading code) and a
// sink that counts what a reader releases.
#pragma once

#include "sealtrain/base/byte_io.h"
#include "sealtrain/crypto/kek.h"

#include <array>
#include <cstdint>
#include <cstdlib>

namespace sealtrain::fuzz {

inline constexpr std::array<std::uint8_t, 32> kFuzzKeyBytes{
    0x66, 0x75, 0x7a, 0x7a, 0x2d, 0x6f, 0x6e, 0x6c, 0x79, 0x2d, 0x6e, 0x6f, 0x74, 0x2d, 0x61, 0x2d,
    0x73, 0x65, 0x63, 0x72, 0x65, 0x74, 0x2d, 0x6b, 0x65, 0x79, 0x2d, 0x30, 0x31, 0x32, 0x33, 0x34};

inline crypto::Kek fuzzKek()
{
    auto key = crypto::SecretBytes::fromBytes(kFuzzKeyBytes);
    if (!key)
        std::abort();
    return crypto::Kek{"fuzz", 1, std::move(key).value()};
}

// Counts the plaintext a reader releases and keeps none of it.
class DiscardSink final : public ByteSink {
public:
    Result<void> write(std::span<const std::uint8_t> bytes) override
    {
        total += bytes.size();
        return success();
    }
    std::uint64_t total = 0;
};

}  // namespace sealtrain::fuzz
