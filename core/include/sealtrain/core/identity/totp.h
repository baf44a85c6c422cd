// Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP, HMAC-SHA-1): the second factor.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace sealtrain::audit {
class Clock;
}

namespace sealtrain::core {

struct ControlPlaneOptions;

inline constexpr std::chrono::seconds kTotpStep{30};
inline constexpr int kTotpDigits = 6;
inline constexpr std::size_t kTotpSecretSize = 20;  // 160 bits, as RFC 4226 recommends

// The step number of `time`: floor(unix seconds / 30).
[[nodiscard]] std::uint64_t totpStep(std::chrono::system_clock::time_point time);
// The step a code is checked at now: from `options.totpClock` where a test set one, else from
// the control plane's `clock`.
[[nodiscard]] std::uint64_t currentTotpStep(const ControlPlaneOptions& options,
                                            const audit::Clock& clock);
// HOTP(secret, step) as a zero-padded decimal string of `digits` (6 to 8) digits.
[[nodiscard]] std::string totpCode(const crypto::SecretBytes& secret, std::uint64_t step,
                                   int digits = kTotpDigits);
// The step in [step - 1, step + 1] (clock drift) whose code equals `code`; 0 when none does.
// Compares in constant time per candidate.
[[nodiscard]] std::uint64_t matchTotp(const crypto::SecretBytes& secret, std::uint64_t step,
                                      std::string_view code);

// RFC 4648 base32 without padding, as authenticator apps expect.
[[nodiscard]] std::string base32(std::span<const std::uint8_t> bytes);
// otpauth://totp/<issuer>:<account>?secret=...&issuer=...&algorithm=SHA1&digits=6&period=30
[[nodiscard]] std::string otpauthUri(std::string_view issuer, std::string_view account,
                                     const crypto::SecretBytes& secret);

}  // namespace sealtrain::core
