// UTF-8 decoding and validation by the well-formed byte sequences of Unicode's table 3-7.
#include "sealtrain/base/utf8.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace sealtrain {

std::size_t decodeUtf8(std::string_view text, std::size_t pos, char32_t& cp)
{
    const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[pos + i]); };
    const std::size_t left = text.size() - pos;
    const std::uint8_t b0 = byte(0);
    if (b0 < 0x80) {
        cp = b0;
        return 1;
    }
    const auto continuation = [](std::uint8_t b) { return (b & 0xC0U) == 0x80U; };
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        if (left < 2 || !continuation(byte(1)))
            return 0;
        cp = (static_cast<char32_t>(b0 & 0x1FU) << 6U) | (byte(1) & 0x3FU);
        return 2;
    }
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (left < 3)
            return 0;
        const std::uint8_t b1 = byte(1);
        const std::uint8_t low = b0 == 0xE0 ? 0xA0 : 0x80;
        const std::uint8_t high = b0 == 0xED ? 0x9F : 0xBF;
        if (b1 < low || b1 > high || !continuation(byte(2)))
            return 0;
        cp = (static_cast<char32_t>(b0 & 0x0FU) << 12U) | (static_cast<char32_t>(b1 & 0x3FU) << 6U)
             | (byte(2) & 0x3FU);
        return 3;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (left < 4)
            return 0;
        const std::uint8_t b1 = byte(1);
        const std::uint8_t low = b0 == 0xF0 ? 0x90 : 0x80;
        const std::uint8_t high = b0 == 0xF4 ? 0x8F : 0xBF;
        if (b1 < low || b1 > high || !continuation(byte(2)) || !continuation(byte(3)))
            return 0;
        cp = (static_cast<char32_t>(b0 & 0x07U) << 18U) | (static_cast<char32_t>(b1 & 0x3FU) << 12U)
             | (static_cast<char32_t>(byte(2) & 0x3FU) << 6U) | (byte(3) & 0x3FU);
        return 4;
    }
    return 0;
}

std::size_t firstInvalidUtf8(std::string_view text)
{
    std::size_t pos = 0;
    while (pos < text.size()) {
        // ASCII runs dominate real text; skip them eight bytes at a time.
        while (pos + 8 <= text.size()) {
            std::uint64_t word = 0;
            for (std::size_t i = 0; i < 8; ++i)
                word |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(text[pos + i]))
                        << (8U * i);
            if ((word & 0x8080808080808080ULL) != 0)
                break;
            pos += 8;
        }
        if (pos >= text.size())
            break;
        // Short fields (an audit entry's are mostly under eight bytes) end in single ASCII bytes.
        if (static_cast<std::uint8_t>(text[pos]) < 0x80) {
            ++pos;
            continue;
        }
        char32_t cp = 0;
        const std::size_t length = decodeUtf8(text, pos, cp);
        if (length == 0)
            return pos;
        pos += length;
    }
    return text.size();
}

bool isValidUtf8(std::string_view text)
{
    return firstInvalidUtf8(text) == text.size();
}

bool isValidUtf8(std::span<const std::uint8_t> bytes)
{
    return isValidUtf8(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

bool isInvisibleFormatCharacter(char32_t codePoint) noexcept
{
    // Unicode 15.0's general category Cf, as ranges.
    struct Range {
        char32_t first;
        char32_t last;
    };
    static constexpr Range kFormat[] = {{0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},
                                        {0x06DD, 0x06DD},   {0x070F, 0x070F},   {0x0890, 0x0891},
                                        {0x08E2, 0x08E2},   {0x180E, 0x180E},   {0x200B, 0x200F},
                                        {0x202A, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},
                                        {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
                                        {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3},
                                        {0x1D173, 0x1D17A}, {0xE0001, 0xE0001}, {0xE0020, 0xE007F}};
    return std::any_of(std::begin(kFormat), std::end(kFormat), [&](const Range& range) {
        return codePoint >= range.first && codePoint <= range.last;
    });
}

bool hasInvisibleFormatCharacter(std::string_view text)
{
    for (std::size_t pos = 0; pos < text.size();) {
        char32_t cp = 0;
        const std::size_t length = decodeUtf8(text, pos, cp);
        if (length != 0 && isInvisibleFormatCharacter(cp))
            return true;
        pos += length == 0 ? 1 : length;
    }
    return false;
}

std::string escapeControls(std::string_view text)
{
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (std::size_t pos = 0; pos < text.size();) {
        char32_t cp = 0;
        const std::size_t length = decodeUtf8(text, pos, cp);
        const bool control = length == 0 || cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F);
        if (!control && isInvisibleFormatCharacter(cp)) {
            out += fmt::format("\\u{{{:04X}}}", static_cast<std::uint32_t>(cp));
            pos += length;
            continue;
        }
        if (!control) {
            out.append(text.substr(pos, length));
            pos += length;
            continue;
        }
        const std::size_t bytes = length == 0 ? 1 : length;
        for (std::size_t i = 0; i < bytes; ++i) {
            const auto byte = static_cast<std::uint8_t>(text[pos + i]);
            if (byte == '\n')
                out += "\\n";
            else if (byte == '\r')
                out += "\\r";
            else if (byte == '\t')
                out += "\\t";
            else
                out += {'\\', 'x', kHex[byte >> 4U], kHex[byte & 0xFU]};
        }
        pos += bytes;
    }
    return out;
}

}  // namespace sealtrain
