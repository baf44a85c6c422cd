// Hand-written PII scanners (pii.h): one pass over the text, no regular expressions, so that
// screening keeps up with import.
#include "sealtrain/dataset/pii.h"

#include <optional>

namespace sealtrain::dataset {

const char* piiKindName(PiiKind kind) noexcept
{
    switch (kind) {
    case PiiKind::Email: return "email";
    case PiiKind::Phone: return "phone";
    case PiiKind::Ssn: return "ssn";
    case PiiKind::Card: return "card";
    case PiiKind::IpAddress: return "ip";
    }
    return "unknown";
}

const char* piiPlaceholder(PiiKind kind) noexcept
{
    switch (kind) {
    case PiiKind::Email: return "[EMAIL]";
    case PiiKind::Phone: return "[PHONE]";
    case PiiKind::Ssn: return "[SSN]";
    case PiiKind::Card: return "[CARD]";
    case PiiKind::IpAddress: return "[IP]";
    }
    return "[PII]";
}

bool luhnValid(std::string_view digits) noexcept
{
    int sum = 0;
    bool doubled = false;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
        int d = *it - '0';
        if (doubled) {
            d *= 2;
            if (d > 9)
                d -= 9;
        }
        sum += d;
        doubled = !doubled;
    }
    return !digits.empty() && sum % 10 == 0;
}

namespace {

bool isDigit(char c)
{
    return c >= '0' && c <= '9';
}
bool isAlpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool isAlnum(char c)
{
    return isDigit(c) || isAlpha(c);
}
bool isEmailLocal(char c)
{
    return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-';
}

// A match may not continue a word or number: the characters around it are no letter or digit.
bool standsAlone(std::string_view text, std::size_t begin, std::size_t end)
{
    return (begin == 0 || !isAlnum(text[begin - 1])) && (end >= text.size() || !isAlnum(text[end]));
}

// local@domain.tld around the '@' at `at`; returns [begin, end).
std::optional<std::pair<std::size_t, std::size_t>> emailAround(std::string_view text,
                                                               std::size_t at)
{
    std::size_t begin = at;
    while (begin > 0 && isEmailLocal(text[begin - 1]))
        --begin;
    while (begin < at && text[begin] == '.')
        ++begin;
    if (begin == at)
        return std::nullopt;
    std::size_t end = at + 1;
    std::size_t lastDot = std::string_view::npos;
    while (end < text.size() && (isAlnum(text[end]) || text[end] == '-' || text[end] == '.')) {
        if (text[end] == '.') {
            if (end + 1 >= text.size() || !isAlnum(text[end + 1]))
                break;  // a full stop that ends the sentence
            lastDot = end;
        }
        ++end;
    }
    if (lastDot == std::string_view::npos || lastDot == at + 1)
        return std::nullopt;
    std::size_t tldLetters = 0;
    for (std::size_t i = lastDot + 1; i < end; ++i) {
        if (!isAlpha(text[i]))
            return std::nullopt;
        ++tldLetters;
    }
    if (tldLetters < 2)
        return std::nullopt;
    return std::make_pair(begin, end);
}

std::size_t digitsAt(std::string_view text, std::size_t pos, std::size_t most)
{
    std::size_t n = 0;
    while (pos + n < text.size() && n < most && isDigit(text[pos + n]))
        ++n;
    return n;
}

std::size_t ipv4At(std::string_view text, std::size_t pos)
{
    std::size_t end = pos;
    for (int part = 0; part < 4; ++part) {
        if (part > 0) {
            if (end >= text.size() || text[end] != '.')
                return 0;
            ++end;
        }
        const std::size_t n = digitsAt(text, end, 4);
        if (n == 0 || n > 3)
            return 0;
        int value = 0;
        for (std::size_t i = 0; i < n; ++i)
            value = value * 10 + (text[end + i] - '0');
        if (value > 255)
            return 0;
        end += n;
    }
    // "1.2.3.4.5" is a version number, not an address.
    if (end + 1 < text.size() && text[end] == '.' && isDigit(text[end + 1]))
        return 0;
    return end - pos;
}

bool isHex(char c)
{
    return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// An IPv6 address in RFC 4291's text forms: eight groups of 1-4 hex digits separated by ':', or
// fewer with one "::" standing for the missing zero groups, optionally ending in a dotted IPv4
// address that stands for the last two groups. The match needs a decimal digit somewhere, so
// that words like "dead::beef" or C++'s "a::b" are not taken for addresses; times ("12:30:45")
// and MAC addresses (six groups) have too few groups without "::".
std::size_t ipv6At(std::string_view text, std::size_t pos)
{
    if (pos > 0 && (text[pos - 1] == ':' || text[pos - 1] == '.' || isAlnum(text[pos - 1])))
        return 0;
    const auto doubleColonAt = [&](std::size_t at) {
        return at + 1 < text.size() && text[at] == ':' && text[at + 1] == ':';
    };
    std::size_t end = pos;
    int groups = 0;
    bool compressed = false;
    bool anyDigit = false;
    if (doubleColonAt(end)) {
        compressed = true;
        end += 2;
    }
    while (end < text.size()) {
        if (groups > 0 || compressed) {
            if (const std::size_t v4 = ipv4At(text, end); v4 > 0) {
                groups += 2;
                end += v4;
                anyDigit = true;
                break;
            }
        }
        std::size_t n = 0;
        while (end + n < text.size() && n < 5 && isHex(text[end + n])) {
            anyDigit = anyDigit || isDigit(text[end + n]);
            ++n;
        }
        if (n == 0)
            break;  // only after "::", which may end the address
        if (n > 4)
            return 0;
        end += n;
        if (++groups > 8)
            return 0;
        if (doubleColonAt(end)) {
            if (compressed)
                return 0;
            compressed = true;
            end += 2;
            continue;
        }
        if (end + 1 < text.size() && text[end] == ':' && isHex(text[end + 1])) {
            ++end;
            continue;
        }
        break;
    }
    if (!anyDigit || (compressed ? groups > 7 : groups != 8))
        return 0;
    // "fe80::1.5" or "1::2x" continue into something else.
    if (end < text.size()
        && (isAlnum(text[end])
            || (text[end] == '.' && end + 1 < text.size() && isDigit(text[end + 1]))))
        return 0;
    return end - pos;
}

std::size_t ssnAt(std::string_view text, std::size_t pos)
{
    if (digitsAt(text, pos, 4) != 3 || pos + 11 > text.size() || text[pos + 3] != '-'
        || digitsAt(text, pos + 4, 3) != 2 || text[pos + 6] != '-'
        || digitsAt(text, pos + 7, 5) != 4)
        return 0;
    const std::string_view area = text.substr(pos, 3);
    if (area == "000" || area == "666" || area[0] == '9' || text.substr(pos + 4, 2) == "00"
        || text.substr(pos + 7, 4) == "0000")
        return 0;
    return 11;
}

// Digits with single separators from `separators` between them, starting at a digit (or at
// '+'/'(' for phones); returns the length and collects the digits.
std::size_t numberRun(std::string_view text, std::size_t pos, std::string_view separators,
                      std::string& digits)
{
    digits.clear();
    std::size_t end = pos;
    std::size_t lastDigitEnd = pos;
    bool lastWasSeparator = false;
    while (end < text.size()) {
        const char c = text[end];
        if (isDigit(c)) {
            digits.push_back(c);
            lastWasSeparator = false;
            lastDigitEnd = end + 1;
        } else if (separators.find(c) != std::string_view::npos && !lastWasSeparator) {
            lastWasSeparator = c != ')' && c != '(';
        } else {
            break;
        }
        ++end;
        if (digits.size() > 19)
            return 0;
    }
    return lastDigitEnd - pos;
}

}  // namespace

std::vector<PiiMatch> findPii(std::string_view text)
{
    std::vector<PiiMatch> matches;
    std::string digits;
    std::size_t pos = 0;
    // E-mail addresses first (their local parts may hold digits that look like numbers).
    std::vector<std::pair<std::size_t, std::size_t>> emails;
    for (std::size_t at = text.find('@'); at != std::string_view::npos;
         at = text.find('@', at + 1)) {
        if (const auto email = emailAround(text, at);
            email && (emails.empty() || email->first >= emails.back().second))
            emails.push_back(*email);
    }
    std::size_t nextEmail = 0;
    while (pos < text.size()) {
        if (nextEmail < emails.size() && pos == emails[nextEmail].first) {
            const auto [begin, end] = emails[nextEmail++];
            matches.push_back({PiiKind::Email, begin, end - begin});
            pos = end;
            continue;
        }
        const char c = text[pos];
        const bool boundary = pos == 0 || !isAlnum(text[pos - 1]);
        if (boundary && (isHex(c) || c == ':')) {
            if (const std::size_t v6 = ipv6At(text, pos);
                v6 > 0 && !(nextEmail < emails.size() && pos + v6 > emails[nextEmail].first)) {
                matches.push_back({PiiKind::IpAddress, pos, v6});
                pos += v6;
                continue;
            }
        }
        if (!boundary || !(isDigit(c) || c == '+' || c == '(')) {
            ++pos;
            continue;
        }
        const auto accept = [&](PiiKind kind, std::size_t length) {
            if (length == 0 || !standsAlone(text, pos, pos + length))
                return false;
            if (nextEmail < emails.size() && pos + length > emails[nextEmail].first)
                return false;
            matches.push_back({kind, pos, length});
            pos += length;
            return true;
        };
        if (isDigit(c)) {
            if (accept(PiiKind::IpAddress, ipv4At(text, pos))
                || accept(PiiKind::Ssn, ssnAt(text, pos)))
                continue;
            const std::size_t card = numberRun(text, pos, " -", digits);
            if (digits.size() >= 13 && digits.size() <= 19 && luhnValid(digits)
                && accept(PiiKind::Card, card))
                continue;
        }
        const bool plus = c == '+';
        const std::size_t phone = numberRun(text, plus ? pos + 1 : pos, " -.()", digits);
        const bool phoneShape =
            plus ? digits.size() >= 8 && digits.size() <= 15
                 : digits.size() == 10 || (digits.size() == 11 && digits[0] == '1');
        if (phoneShape && accept(PiiKind::Phone, phone + (plus ? 1U : 0U)))
            continue;
        // Skip the rest of this number (dots and hyphens between digits included) so that its
        // tail is not read as a number of its own.
        ++pos;
        while (pos < text.size()
               && (isAlnum(text[pos])
                   || ((text[pos] == '.' || text[pos] == '-') && pos + 1 < text.size()
                       && isDigit(text[pos + 1]))))
            ++pos;
    }
    return matches;
}

std::string redactPii(std::string_view text, const std::vector<PiiMatch>& matches)
{
    std::string out;
    out.reserve(text.size());
    std::size_t pos = 0;
    for (const PiiMatch& match : matches) {
        out.append(text.substr(pos, match.offset - pos));
        out.append(piiPlaceholder(match.kind));
        pos = match.offset + match.length;
    }
    out.append(text.substr(pos));
    return out;
}

}  // namespace sealtrain::dataset
