// Hex and base64 codecs, strict on input, RFC 3339 times and canonical decimals.
#include "sealtrain/base/encoding.h"

#include <array>
#include <charconv>
#include <ctime>

namespace sealtrain {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";
constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kBase64UrlAlphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int hexValue(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

std::string encode64(std::span<const std::uint8_t> bytes, const char* alphabet, bool pad)
{
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 3 <= bytes.size(); i += 3) {
        const std::uint32_t n =
            (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8) | bytes[i + 2];
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += alphabet[(n >> 6) & 63];
        out += alphabet[n & 63];
    }
    const std::size_t rest = bytes.size() - i;
    if (rest == 1) {
        const std::uint32_t n = std::uint32_t{bytes[i]} << 16;
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        if (pad)
            out += "==";
    } else if (rest == 2) {
        const std::uint32_t n =
            (std::uint32_t{bytes[i]} << 16) | (std::uint32_t{bytes[i + 1]} << 8);
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += alphabet[(n >> 6) & 63];
        if (pad)
            out += '=';
    }
    return out;
}

constexpr auto kBase64UrlValues = internal::base64DigitValues(kBase64UrlAlphabet);

// Four digits at a time into three bytes; a digit outside the alphabet makes `bad` negative.
bool decode64(std::string_view text, const std::array<std::int8_t, 256>& values, bool padded,
              std::vector<std::uint8_t>& out)
{
    std::size_t padding = 0;
    if (padded) {
        if (text.size() % 4 != 0)
            return false;
        while (padding < 2 && !text.empty() && text.back() == '=') {
            text.remove_suffix(1);
            ++padding;
        }
    }
    const std::size_t rest = text.size() % 4;
    if (rest == 1)
        return false;
    out.resize(text.size() / 4 * 3 + (rest == 0 ? 0 : rest - 1));
    // Raw pointers: byte stores through the vector would make the compiler reload its data
    // pointer after each one (a byte may alias anything).
    const char* const source = text.data();
    std::uint8_t* const target = out.data();
    // The table holds small numbers (-1 for "not a digit"), not characters.
    auto digit = [&](std::size_t at) {
        return static_cast<int>(values[static_cast<unsigned char>(source[at])]);
    };
    int bad = 0;
    std::size_t o = 0;
    std::size_t i = 0;
    for (; i + 4 <= text.size(); i += 4) {
        const int a = digit(i), b = digit(i + 1), c = digit(i + 2), d = digit(i + 3);
        bad |= a | b | c | d;
        const auto n = (static_cast<std::uint32_t>(a) << 18U)
                       | (static_cast<std::uint32_t>(b) << 12U)
                       | (static_cast<std::uint32_t>(c) << 6U) | static_cast<std::uint32_t>(d);
        target[o] = static_cast<std::uint8_t>(n >> 16U);
        target[o + 1] = static_cast<std::uint8_t>(n >> 8U);
        target[o + 2] = static_cast<std::uint8_t>(n);
        o += 3;
    }
    // Canonical encodings leave no set bits behind in the last digit.
    if (rest >= 2) {
        const int a = digit(i), b = digit(i + 1), c = rest == 3 ? digit(i + 2) : 0;
        bad |= a | b | c;
        if (bad >= 0 && (rest == 2 ? (b & 0xF) : (c & 0x3)) != 0)
            return false;
        target[o] = static_cast<std::uint8_t>((static_cast<unsigned>(a) << 2U)
                                              | (static_cast<unsigned>(b) >> 4U));
        if (rest == 3)
            target[o + 1] = static_cast<std::uint8_t>(((static_cast<unsigned>(b) & 0xFU) << 4U)
                                                      | (static_cast<unsigned>(c) >> 2U));
    }
    return bad >= 0 && (!padded || padding == (3 - out.size() % 3) % 3);
}

std::optional<std::vector<std::uint8_t>>
decode64(std::string_view text, const std::array<std::int8_t, 256>& values, bool padded)
{
    std::vector<std::uint8_t> out;
    if (!decode64(text, values, padded, out))
        return std::nullopt;
    return out;
}

}  // namespace

std::string toHex(std::span<const std::uint8_t> bytes)
{
    std::string out;
    out.reserve(bytes.size() * 2);
    for (auto b : bytes) {
        out += kHexDigits[b >> 4];
        out += kHexDigits[b & 0x0f];
    }
    return out;
}

std::optional<std::vector<std::uint8_t>> fromHex(std::string_view text)
{
    if (text.size() % 2 != 0)
        return std::nullopt;
    std::vector<std::uint8_t> out(text.size() / 2);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const int high = hexValue(text[2 * i]);
        const int low = hexValue(text[2 * i + 1]);
        if (high < 0 || low < 0)
            return std::nullopt;
        out[i] = static_cast<std::uint8_t>((high << 4) | low);
    }
    return out;
}

std::string toBase64(std::span<const std::uint8_t> bytes)
{
    return encode64(bytes, kBase64Alphabet, true);
}

std::optional<std::vector<std::uint8_t>> fromBase64(std::string_view text)
{
    return decode64(text, internal::kBase64DigitValues, true);
}

bool fromBase64Into(std::string_view text, std::vector<std::uint8_t>& out)
{
    return decode64(text, internal::kBase64DigitValues, true, out);
}

std::string toBase64Url(std::span<const std::uint8_t> bytes)
{
    return encode64(bytes, kBase64UrlAlphabet, false);
}

std::optional<std::vector<std::uint8_t>> fromBase64Url(std::string_view text)
{
    return decode64(text, kBase64UrlValues, false);
}

std::string toRfc3339(std::int64_t unixSeconds)
{
    const auto t = static_cast<std::time_t>(unixSeconds);
    std::tm utc{};
    gmtime_r(&t, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

std::optional<std::uint64_t> parseDecimal(std::string_view text)
{
    if (text.empty() || (text.size() > 1 && text.front() == '0'))
        return std::nullopt;
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

}  // namespace sealtrain
