// Passwords: Argon2id hashes in libsodium's self-describing string form, and the policy every
// new password must meet.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace sealtrain::core {

inline constexpr std::size_t kMinPasswordLength = 12;
inline constexpr std::size_t kMaxPasswordLength = 1024;

// Refuses a password shorter than kMinPasswordLength, one that contains the user name, and one
// of a small built-in list of common passwords (compared without case), each in one sentence.
[[nodiscard]] Result<void> checkPasswordPolicy(std::string_view userName,
                                               const crypto::SecretBytes& password);

// The same policy for a keyring passphrase (it protects every key of a data directory): refused
// when shorter than kMinPasswordLength or one of the common passwords.
[[nodiscard]] Result<void> checkPassphrasePolicy(const crypto::SecretBytes& passphrase);

// "$argon2id$v=19$m=...,t=...,p=1$salt$hash". Parameters below crypto::kArgon2Floor are refused.
[[nodiscard]] Result<std::string> hashPassword(const crypto::SecretBytes& password,
                                               crypto::Argon2Params params);
// True when `password` matches `hash`; false for a wrong password or a malformed hash.
[[nodiscard]] bool verifyPassword(const std::string& hash, const crypto::SecretBytes& password);

// How many Argon2id computations (hashes and verifications of an Argon2id hash) this process has
// run. Only tests read it: every sign-in, whatever the account's state, must cost exactly one.
[[nodiscard]] std::uint64_t argon2idComputations() noexcept;

}  // namespace sealtrain::core
