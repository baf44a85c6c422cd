// RFC 6238 TOTP with HMAC-SHA-1 (what authenticator apps implement) through OpenSSL's EVP_Q_mac.
#include "sealtrain/core/identity/totp.h"

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/core/control_plane_options.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>

namespace sealtrain::core {
namespace {

std::string percentEncoded(std::string_view text)
{
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        const bool plain = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z')
                           || (byte >= '0' && byte <= '9') || c == '-' || c == '.' || c == '_'
                           || c == '~';
        if (plain) {
            out += c;
        } else {
            out += '%';
            out += kHex[byte >> 4U];
            out += kHex[byte & 0x0fU];
        }
    }
    return out;
}

}  // namespace

std::uint64_t totpStep(std::chrono::system_clock::time_point time)
{
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
    return seconds < 0 ? 0 : static_cast<std::uint64_t>(seconds) / kTotpStep.count();
}

std::uint64_t currentTotpStep(const ControlPlaneOptions& options, const audit::Clock& clock)
{
    return totpStep((options.totpClock != nullptr ? *options.totpClock : clock).now());
}

std::string totpCode(const crypto::SecretBytes& secret, std::uint64_t step, int digits)
{
    std::array<std::uint8_t, 8> counter{};
    for (std::size_t i = 0; i < counter.size(); ++i)
        counter[counter.size() - 1 - i] = static_cast<std::uint8_t>(step >> (8U * i));
    std::array<std::uint8_t, 20> mac{};
    std::size_t macSize = 0;
    if (EVP_Q_mac(nullptr, "HMAC", nullptr, "SHA1", nullptr, secret.bytes().data(), secret.size(),
                  counter.data(), counter.size(), mac.data(), mac.size(), &macSize)
            == nullptr
        || macSize != mac.size())
        return {};  // never matches a code a person typed
    const std::size_t offset = mac[19] & 0x0fU;
    const std::uint32_t binary = (static_cast<std::uint32_t>(mac[offset] & 0x7fU) << 24U)
                                 | (static_cast<std::uint32_t>(mac[offset + 1]) << 16U)
                                 | (static_cast<std::uint32_t>(mac[offset + 2]) << 8U)
                                 | static_cast<std::uint32_t>(mac[offset + 3]);
    std::uint32_t modulus = 1;
    const int clamped = digits < 6 ? 6 : (digits > 8 ? 8 : digits);
    for (int i = 0; i < clamped; ++i)
        modulus *= 10;
    std::string code = std::to_string(binary % modulus);
    return std::string(static_cast<std::size_t>(clamped) - code.size(), '0') + code;
}

std::uint64_t matchTotp(const crypto::SecretBytes& secret, std::uint64_t step,
                        std::string_view code)
{
    if (code.size() != static_cast<std::size_t>(kTotpDigits))
        return 0;
    std::uint64_t matched = 0;
    for (std::uint64_t candidate = step == 0 ? 0 : step - 1; candidate <= step + 1; ++candidate) {
        const std::string expected = totpCode(secret, candidate);
        if (expected.size() == code.size()
            && CRYPTO_memcmp(expected.data(), code.data(), code.size()) == 0)
            matched = candidate;
    }
    return matched;
}

std::string base32(std::span<const std::uint8_t> bytes)
{
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    std::string out;
    std::uint32_t buffer = 0;
    unsigned bits = 0;
    for (const std::uint8_t byte : bytes) {
        buffer = (buffer << 8U) | byte;
        bits += 8;
        while (bits >= 5) {
            out += kAlphabet[(buffer >> (bits - 5)) & 0x1fU];
            bits -= 5;
        }
    }
    if (bits > 0)
        out += kAlphabet[(buffer << (5 - bits)) & 0x1fU];
    return out;
}

std::string otpauthUri(std::string_view issuer, std::string_view account,
                       const crypto::SecretBytes& secret)
{
    return "otpauth://totp/" + percentEncoded(issuer) + ":" + percentEncoded(account)
           + "?secret=" + base32(secret.bytes()) + "&issuer=" + percentEncoded(issuer)
           + "&algorithm=SHA1&digits=" + std::to_string(kTotpDigits)
           + "&period=" + std::to_string(kTotpStep.count());
}

}  // namespace sealtrain::core
