// Finding the conformance vectors Debian installs with python3-cryptography-vectors (NIST CAVP,
// RFCs, Ed25519 sign.input). Like the shared Wycheproof vectors, a test skips with a message when
// they are absent, unless $SEALTRAIN_REQUIRE_TEST_VECTORS=1 makes that a failure.
#pragma once

#include "testvectors.h"

#include <cstdlib>
#include <filesystem>
#include <optional>

namespace sealtrain::testing {

// $SEALTRAIN_CRYPTOGRAPHY_VECTORS, else Debian's install location, else nullopt.
[[nodiscard]] inline std::optional<std::filesystem::path> findCryptographyVectors()
{
    if (const char* dir = std::getenv("SEALTRAIN_CRYPTOGRAPHY_VECTORS");
        dir != nullptr && *dir != '\0') {
        if (std::filesystem::is_directory(dir))
            return std::filesystem::path(dir);
        return std::nullopt;
    }
    const std::filesystem::path debian = "/usr/lib/python3/dist-packages/cryptography_vectors";
    if (std::filesystem::is_directory(debian))
        return debian;
    return std::nullopt;
}

}  // namespace sealtrain::testing

// In a Qt Test function: sets `dir` to the cryptography_vectors folder, or skips (fails when
// vectors are required).
#define SEALTRAIN_REQUIRE_CRYPTOGRAPHY_VECTORS(dir)                                                \
    std::filesystem::path dir;                                                                     \
    do {                                                                                           \
        const auto sealtrainFound_ = ::sealtrain::testing::findCryptographyVectors();              \
        if (!sealtrainFound_) {                                                                    \
            const char* sealtrainMessage_ =                                                        \
                "python3-cryptography-vectors not found: run scripts/setup or set "                \
                "SEALTRAIN_CRYPTOGRAPHY_VECTORS to its cryptography_vectors folder.";              \
            if (::sealtrain::testing::testVectorsRequired())                                       \
                QFAIL(sealtrainMessage_);                                                          \
            QSKIP(sealtrainMessage_);                                                              \
        }                                                                                          \
        dir = *sealtrainFound_;                                                                    \
    } while (false)
