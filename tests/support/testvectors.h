// Finding the official conformance vectors (../shared/testvectors, or $SEALTRAIN_TEST_VECTORS).
// They are not part of the project; a test that needs them skips with a clear message when
// they are absent, unless $SEALTRAIN_REQUIRE_TEST_VECTORS=1 (CI sets it) makes that a failure.
#pragma once

#include <QtTest/QtTest>

#include <filesystem>
#include <optional>
#include <string>

namespace sealtrain::testing {

// The testvectors folder, or nullopt. Looks at $SEALTRAIN_TEST_VECTORS first, then at
// shared/testvectors beside the source tree.
[[nodiscard]] std::optional<std::filesystem::path> findTestVectors();

// True when missing vectors must fail the test instead of skipping it.
[[nodiscard]] bool testVectorsRequired();

[[nodiscard]] std::string missingTestVectorsMessage(const std::string& subfolder);

}  // namespace sealtrain::testing

// In a Qt Test function: sets `dir` to <testvectors>/<subfolder>, or skips (or fails when
// required) with a message saying how to provide them.
#define SEALTRAIN_REQUIRE_TEST_VECTORS(dir, subfolder)                                             \
    std::filesystem::path dir;                                                                     \
    do {                                                                                           \
        const auto sealtrainVectors_ = ::sealtrain::testing::findTestVectors();                    \
        if (!sealtrainVectors_ || !std::filesystem::exists(*sealtrainVectors_ / (subfolder))) {    \
            const auto sealtrainMessage_ =                                                         \
                ::sealtrain::testing::missingTestVectorsMessage(subfolder);                        \
            if (::sealtrain::testing::testVectorsRequired())                                       \
                QFAIL(sealtrainMessage_.c_str());                                                  \
            QSKIP(sealtrainMessage_.c_str());                                                      \
        }                                                                                          \
        dir = *sealtrainVectors_ / (subfolder);                                                    \
    } while (false)
