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

std::optional<std::vector<std::uint8_t>> decode64(std::string_view text, const char* alphabet,
                                                  bool padded)
{
    std::array<int, 256> values{};
    values.fill(-1);
    for (int i = 0; i < 64; ++i)
        values[static_cast<unsigned char>(alphabet[i])] = i;

    std::size_t padding = 0;
    if (padded) {
        if (text.size() % 4 != 0)
            return std::nullopt;
        while (padding < 2 && !text.empty() && text.back() == '=') {
            text.remove_suffix(1);
            ++padding;
        }
    } else if (text.size() % 4 == 1) {
        return std::nullopt;
    }
    std::vector<std::uint8_t> out;
    out.reserve(text.size() * 3 / 4);
    std::uint32_t buffer = 0;
    int bits = 0;
    for (char c : text) {
        const int v = values[static_cast<unsigned char>(c)];
        if (v < 0)
            return std::nullopt;
        buffer = (buffer << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.push_back(static_cast<std::uint8_t>((buffer >> bits) & 0xff));
        }
    }
    // Canonical encodings leave no set bits behind.
    if (bits > 0 && (buffer & ((1u << bits) - 1)) != 0)
        return std::nullopt;
    if (padded && padding != (3 - out.size() % 3) % 3)
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
    return decode64(text, kBase64Alphabet, true);
}

std::string toBase64Url(std::span<const std::uint8_t> bytes)
{
    return encode64(bytes, kBase64UrlAlphabet, false);
}

std::optional<std::vector<std::uint8_t>> fromBase64Url(std::string_view text)
{
    return decode64(text, kBase64UrlAlphabet, false);
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
