// Text encodings of bytes: lowercase hex, standard base64 (RFC 4648 section 4, padded) and
// base64url (section 5, unpadded); of a time, as RFC 3339; and of a count, as canonical decimal.
// Decoders are strict: they refuse anything non-canonical.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain {

[[nodiscard]] std::string toHex(std::span<const std::uint8_t> bytes);
// Accepts upper- or lowercase digits; nullopt on odd length or a non-hex character.
[[nodiscard]] std::optional<std::vector<std::uint8_t>> fromHex(std::string_view text);

[[nodiscard]] std::string toBase64(std::span<const std::uint8_t> bytes);
// nullopt on a wrong alphabet, length, padding, or non-zero trailing bits.
[[nodiscard]] std::optional<std::vector<std::uint8_t>> fromBase64(std::string_view text);
// The same into `out`, whose capacity is reused across calls (a loop over many values); false
// where fromBase64 gives nullopt, `out` then unspecified.
[[nodiscard]] bool fromBase64Into(std::string_view text, std::vector<std::uint8_t>& out);
namespace internal {
// Digit values, -1 outside the alphabet, built at compile time.
constexpr std::array<std::int8_t, 256> base64DigitValues(std::string_view alphabet)
{
    std::array<std::int8_t, 256> values{};
    values.fill(-1);
    for (std::size_t i = 0; i < alphabet.size(); ++i)
        values[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
    return values;
}
inline constexpr auto kBase64DigitValues =
    base64DigitValues("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/");
}  // namespace internal

// The value of one digit of standard base64 (0 to 63), or -1 for any other character.
[[nodiscard]] constexpr int base64DigitValue(char c) noexcept
{
    return internal::kBase64DigitValues[static_cast<unsigned char>(c)];
}

[[nodiscard]] std::string toBase64Url(std::span<const std::uint8_t> bytes);
[[nodiscard]] std::optional<std::vector<std::uint8_t>> fromBase64Url(std::string_view text);

// A time in seconds since the Unix epoch as RFC 3339 in UTC, to the second:
// "2026-11-30T09:00:00Z".
[[nodiscard]] std::string toRfc3339(std::int64_t unixSeconds);

// Canonical decimal: digits only, no sign, no leading zero unless the text is "0", and a value
// that fits in 64 bits; nullopt otherwise.
[[nodiscard]] std::optional<std::uint64_t> parseDecimal(std::string_view text);

// The bytes of a string, for hashing and signing text.
[[nodiscard]] inline std::span<const std::uint8_t> asBytes(std::string_view text)
{
    return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

}  // namespace sealtrain
