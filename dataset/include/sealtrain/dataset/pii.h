// PII screening for dataset import (issue #6): e-mail addresses, phone numbers, US social
// security numbers, payment card numbers (Luhn-checked) and IPv4 and IPv6 addresses. The import
// report keeps only counts and locations; the matched values never leave this function's caller.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::dataset {

enum class PiiKind { Email, Phone, Ssn, Card, IpAddress };
inline constexpr std::size_t kPiiKindCount = 5;
inline constexpr std::array<PiiKind, kPiiKindCount> kAllPiiKinds{
    PiiKind::Email, PiiKind::Phone, PiiKind::Ssn, PiiKind::Card, PiiKind::IpAddress};

// "email", "phone", "ssn", "card", "ip"
[[nodiscard]] const char* piiKindName(PiiKind kind) noexcept;
// What redaction puts in place of a match: "[EMAIL]", "[PHONE]", "[SSN]", "[CARD]", "[IP]".
[[nodiscard]] const char* piiPlaceholder(PiiKind kind) noexcept;

struct PiiMatch {
    PiiKind kind = PiiKind::Email;
    std::size_t offset = 0;  // bytes into the text
    std::size_t length = 0;
};

// The matches in `text`, in order and not overlapping. The rules (docs/formats/dataset.md):
// e-mail  local@domain.tld, local of [A-Za-z0-9._%+-], a domain of labels and a letter TLD;
// ssn     ddd-dd-dddd, area not 000, 666 or 9xx, group not 00, serial not 0000;
// card    13-19 digits, single spaces or hyphens between groups, passing the Luhn check;
// ip      four dotted decimal numbers 0-255, or an IPv6 address (RFC 4291 text forms: eight
//         groups of 1-4 hex digits, or fewer with one "::", optionally ending in a dotted IPv4
//         address) holding at least one decimal digit;
// phone   an optional '+', then 10-15 digits with spaces, hyphens, dots or parentheses between
//         (an 11-digit number without '+' must start with 1, as in +1 North America).
// A match must not touch a letter or digit on either side.
[[nodiscard]] std::vector<PiiMatch> findPii(std::string_view text);

// `text` with each match replaced by its placeholder.
[[nodiscard]] std::string redactPii(std::string_view text, const std::vector<PiiMatch>& matches);

[[nodiscard]] bool luhnValid(std::string_view digits) noexcept;

}  // namespace sealtrain::dataset
