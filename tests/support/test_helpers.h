// Small helpers the unit tests share: bytes from hex test data, secrets from test values, JSON
// vector files. Header-only; a test that includes it links what it uses (crypto, nlohmann).
#pragma once

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <QtGlobal>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::testing {

// Test data is trusted: malformed hex is a broken test, so it stops the run. (std::string, not
// std::string_view, so that JSON vector fields convert implicitly.)
inline std::vector<std::uint8_t> hex(const std::string& text)
{
    auto bytes = fromHex(text);
    if (!bytes)
        qFatal("bad hex in test data: %s", text.c_str());
    return *bytes;
}

inline crypto::SecretBytes secret(std::span<const std::uint8_t> bytes)
{
    auto result = crypto::SecretBytes::fromBytes(bytes);
    if (!result)
        qFatal("cannot allocate a test secret");
    return std::move(result).value();
}

inline crypto::SecretBytes secret(const std::vector<std::uint8_t>& bytes)
{
    return secret(std::span<const std::uint8_t>(bytes));
}

inline crypto::SecretBytes secret(std::string_view text)
{
    return secret(asBytes(text));
}

inline nlohmann::json loadJson(const std::filesystem::path& path)
{
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

}  // namespace sealtrain::testing
