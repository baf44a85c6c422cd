// Argon2id password hashes through libsodium's crypto_pwhash_str, and the password policy.
#include "sealtrain/core/identity/password.h"

#include "sealtrain/crypto/random.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>

namespace sealtrain::core {
namespace {

// The most common passwords of public breach corpora that are long enough to pass the length
// rule; the length rule already refuses the shorter ones.
constexpr std::array<std::string_view, 16> kCommonPasswords{
    "123456789012",     "password1234", "qwertyuiopas", "iloveyou1234",
    "passwordpassword", "111111111111", "000000000000", "abc123456789",
    "qwerty123456",     "password123!", "letmein12345", "welcome12345",
    "administrator",    "changeme1234", "1q2w3e4r5t6y", "trustno1trustno1"};

std::atomic<std::uint64_t> computations{0};

std::string lowered(std::string_view text)
{
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

}  // namespace

namespace {

// The one policy for every secret a person chooses; `noun` ("password", "passphrase") names it in
// the refusal.
Result<void> checkSecretPolicy(std::string_view noun, std::string_view userName,
                               const crypto::SecretBytes& secret)
{
    const std::string the = "The " + std::string(noun);
    if (secret.size() < kMinPasswordLength)
        return Error(ErrorCode::InvalidArgument, the + " is shorter than "
                                                     + std::to_string(kMinPasswordLength)
                                                     + " characters; choose a longer one.");
    if (secret.size() > kMaxPasswordLength)
        return Error(ErrorCode::InvalidArgument, the + " is longer than "
                                                     + std::to_string(kMaxPasswordLength)
                                                     + " characters; choose a shorter one.");
    // The comparisons below need the text; it lives in a wiped buffer for as long as they run.
    auto text = secret.copy();
    if (!text)
        return text.error();
    for (auto& byte : text->mutableBytes())
        byte = static_cast<std::uint8_t>(std::tolower(byte));
    const std::string_view view(reinterpret_cast<const char*>(text->bytes().data()), text->size());
    const std::string name = lowered(userName);
    if (!name.empty() && view.find(name) != std::string_view::npos)
        return Error(ErrorCode::InvalidArgument,
                     the + " contains the user name; choose one that does not.");
    for (const auto common : kCommonPasswords)
        if (view == common)
            return Error(ErrorCode::InvalidArgument,
                         the + " is one of the most common passwords; choose another.");
    return success();
}

}  // namespace

Result<void> checkPasswordPolicy(std::string_view userName, const crypto::SecretBytes& password)
{
    return checkSecretPolicy("password", userName, password);
}

Result<void> checkPassphrasePolicy(const crypto::SecretBytes& passphrase)
{
    return checkSecretPolicy("keyring passphrase", {}, passphrase);
}

Result<std::string> hashPassword(const crypto::SecretBytes& password, crypto::Argon2Params params)
{
    if (params.opsLimit < crypto::kArgon2Floor.opsLimit
        || params.memLimitBytes < crypto::kArgon2Floor.memLimitBytes)
        return Error(ErrorCode::InvalidArgument,
                     "The Argon2id parameters are below the floor of 2 passes over 64 MiB; "
                     "raise them.");
    crypto::ensureInitialized();
    computations.fetch_add(1, std::memory_order_relaxed);
    std::array<char, crypto_pwhash_STRBYTES> out{};
    if (crypto_pwhash_str(out.data(), reinterpret_cast<const char*>(password.bytes().data()),
                          password.size(), params.opsLimit,
                          static_cast<std::size_t>(params.memLimitBytes))
        != 0)
        return Error(ErrorCode::ResourceExhausted,
                     "Hashing the password ran out of memory; lower the Argon2id memory or free "
                     "memory.");
    return std::string(out.data());
}

bool verifyPassword(const std::string& hash, const crypto::SecretBytes& password)
{
    crypto::ensureInitialized();
    if (hash.starts_with("$argon2id$"))
        computations.fetch_add(1, std::memory_order_relaxed);
    return crypto_pwhash_str_verify(hash.c_str(),
                                    reinterpret_cast<const char*>(password.bytes().data()),
                                    password.size())
           == 0;
}

std::uint64_t argon2idComputations() noexcept
{
    return computations.load(std::memory_order_relaxed);
}

}  // namespace sealtrain::core
