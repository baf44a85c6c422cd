// The fixed, public keys the fuzz targets and their seed generator share. They protect nothing:
// they only let seeds be valid objects, so that mutations reach the chunk-reading code.
#pragma once

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

}  // namespace sealtrain::fuzz
