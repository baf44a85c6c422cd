// Export bundles as text: writing, and strict reading line by line (docs/formats/audit.md,
// "Export bundle").
#include "bundle_text.h"

#include "sealtrain/audit/proof.h"
#include "sealtrain/base/encoding.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sealtrain::audit {
namespace {

constexpr std::size_t kHashBase64Length = 44;

std::vector<std::string_view> splitWords(std::string_view line)
{
    std::vector<std::string_view> words;
    std::size_t start = 0;
    while (start <= line.size()) {
        const auto space = line.find(' ', start);
        const auto end = space == std::string_view::npos ? line.size() : space;
        words.push_back(line.substr(start, end - start));
        start = end + 1;
    }
    return words;
}

std::string hashesText(const std::vector<Hash>& hashes)
{
    std::string out;
    for (const auto& hash : hashes)
        out += " " + toBase64(hash);
    return out;
}

Error malformedLine(std::size_t lineNumber, const std::string& what)
{
    return Error(ErrorCode::Integrity, "Line " + std::to_string(lineNumber)
                                           + " of the bundle is malformed (" + what
                                           + "); the file was altered or truncated.");
}

bool isDigitOrSeparator(char c) noexcept
{
    return base64DigitValue(c) >= 0 || c == '=' || c == ' ';
}

struct CharacterCounts {
    bool allAllowed = true;      // every character a base64 digit, '=' or a space
    std::size_t separators = 0;  // '=' and spaces
};

// A complete bundle's proofs are most of its text and are checked only for their form, so this
// runs sixteen characters at a time where SSE2 is there (every x86-64); the loop after it is the
// reference and does the rest.
CharacterCounts countDigitsAndSeparators(std::string_view text) noexcept
{
    CharacterCounts counts;
    std::size_t i = 0;
#if defined(__SSE2__)
    const auto inRange = [](__m128i v, char low, char high) {
        // Signed compares: the ranges lie in 0x20..0x7a and bytes >= 0x80 are negative.
        return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(low - 1))),
                             _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(high + 1))));
    };
    __m128i separatorSums = _mm_setzero_si128();  // two 64-bit lanes of byte sums
    for (; i + 16 <= text.size(); i += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
        const __m128i separators = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('=')),
                                                _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
        const __m128i digits =
            _mm_or_si128(_mm_or_si128(inRange(v, 'A', 'Z'), inRange(v, 'a', 'z')),
                         _mm_or_si128(inRange(v, '/', '9'), _mm_cmpeq_epi8(v, _mm_set1_epi8('+'))));
        counts.allAllowed &= _mm_movemask_epi8(_mm_or_si128(digits, separators)) == 0xFFFF;
        separatorSums =
            _mm_add_epi64(separatorSums, _mm_sad_epu8(_mm_and_si128(separators, _mm_set1_epi8(1)),
                                                      _mm_setzero_si128()));
    }
    counts.separators += static_cast<std::size_t>(_mm_cvtsi128_si64(separatorSums))
                         + static_cast<std::size_t>(
                             _mm_cvtsi128_si64(_mm_unpackhi_epi64(separatorSums, separatorSums)));
#endif
    for (; i < text.size(); ++i) {
        counts.allAllowed &= isDigitOrSeparator(text[i]);
        counts.separators += static_cast<std::size_t>(text[i] == '=' || text[i] == ' ');
    }
    return counts;
}

// "<sequence> <head size>|- <base64 bytes> <hash>..." after the word "entry".
Result<internal::EntryLine> scanEntryLine(std::string_view rest, std::size_t lineNumber)
{
    internal::EntryLine e;
    e.line = lineNumber;
    const auto first = rest.find(' ');
    const auto second = first == std::string_view::npos ? first : rest.find(' ', first + 1);
    if (second == std::string_view::npos)
        return malformedLine(lineNumber, "entry sequence number");
    const auto sequence = parseDecimal(rest.substr(0, first));
    if (!sequence)
        return malformedLine(lineNumber, "entry sequence number");
    e.sequence = *sequence;
    const auto head = rest.substr(first + 1, second - first - 1);
    if (head != "-") {
        e.headSize = parseDecimal(head);
        if (!e.headSize)
            return malformedLine(lineNumber, "entry head size");
    }
    rest.remove_prefix(second + 1);
    const auto bytesEnd = rest.find(' ');
    e.bytes = rest.substr(0, bytesEnd);
    if (e.bytes.empty() || e.bytes.size() > (kMaxEntrySize + 2) / 3 * 4)
        return malformedLine(lineNumber, "entry bytes are not base64");
    if (bytesEnd != std::string_view::npos) {
        e.proof = rest.substr(bytesEnd + 1);
        // k hashes of 44 characters and k - 1 spaces between them.
        if ((e.proof.size() + 1) % (kHashBase64Length + 1) != 0)
            return malformedLine(lineNumber, "entry proof hash");
        e.proofLength = (e.proof.size() + 1) / (kHashBase64Length + 1);
        for (std::size_t i = kHashBase64Length; i < e.proof.size(); i += kHashBase64Length + 1)
            if (e.proof[i] != ' ')
                return malformedLine(lineNumber, "entry proof hash");
    }
    if (!e.headSize && e.proofLength != 0)
        return malformedLine(lineNumber, "an unsigned entry carries a proof");
    return e;
}

}  // namespace

namespace internal {

bool isProofText(std::string_view proof) noexcept
{
    // Every character a base64 digit, '=' or a space; then exactly one '=' per hash and the
    // spaces between them (scanEntryLine checked where the spaces are), each '=' last in its
    // hash, and each last digit with the two low bits that a canonical 32-byte encoding leaves
    // clear.
    const auto [allAllowed, separators] = countDigitsAndSeparators(proof);
    const std::size_t hashes = (proof.size() + 1) / (kHashBase64Length + 1);
    if (!allAllowed || (hashes > 0 && separators != 2 * hashes - 1))
        return false;
    for (std::size_t at = 0; at < proof.size(); at += kHashBase64Length + 1) {
        const int last = base64DigitValue(proof[at + kHashBase64Length - 2]);
        if (proof[at + kHashBase64Length - 1] != '=' || last < 0 || (last & 3) != 0)
            return false;
    }
    return true;
}

Result<BundleEntry> decodeEntryLine(const EntryLine& line)
{
    BundleEntry e;
    e.sequence = line.sequence;
    e.headSize = line.headSize;
    e.line = line.line;
    auto bytes = fromBase64(line.bytes);
    if (!bytes || bytes->empty() || bytes->size() > kMaxEntrySize)
        return malformedLine(line.line, "entry bytes are not base64");
    e.bytes = std::move(*bytes);
    e.proof.reserve(line.proofLength);
    for (std::size_t at = 0; at < line.proof.size(); at += kHashBase64Length + 1) {
        auto hash = hashFromBase64(line.proof.substr(at, kHashBase64Length));
        if (!hash)
            return malformedLine(line.line, "entry proof hash");
        e.proof.push_back(*hash);
    }
    return e;
}

// Over 100 lines: one branch per line kind of the bundle format
// (docs/formats/audit.md), in the format's order, sharing the line counter.
Result<BundleText> scanBundle(std::string_view text)
{
    std::size_t lineNumber = 0;
    auto bad = [&lineNumber](const std::string& what) { return malformedLine(lineNumber, what); };
    if (!text.ends_with('\n'))
        return Error(ErrorCode::Integrity,
                     "The bundle does not end with a newline; the file was truncated.");
    // Sections in their fixed order: 0 header, 1 statement or keys, 2 heads, 3 consistency,
    // 4 entries, 5 end.
    int section = 0;
    BundleText scanned;
    Bundle& bundle = scanned.header;
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto newline = rest.find('\n');
        const auto line = rest.substr(0, newline);
        rest.remove_prefix(newline + 1);
        ++lineNumber;
        if (section == 5)
            return bad("text after the end line");
        const auto space = line.find(' ');
        const auto kind = line.substr(0, space);
        // An entry line's every field refuses a carriage return or tab itself (numbers, base64
        // when the line is decoded or its proof checked), which spares most of the text a scan.
        if (kind == "entry" && section >= 2 && section <= 4) {
            section = 4;
            auto entry = scanEntryLine(space == std::string_view::npos ? std::string_view{}
                                                                       : line.substr(space + 1),
                                       lineNumber);
            if (!entry)
                return entry.error();
            scanned.entries.push_back(*entry);
            continue;
        }
        // Two memchr scans: find_first_of would call memchr once per character.
        if (line.find('\r') != std::string_view::npos || line.find('\t') != std::string_view::npos)
            return bad("a carriage return or tab");
        const auto words = splitWords(line);
        if (lineNumber == 1) {
            if (line == kBundleMagic)
                bundle.version = 2;
            else if (line == kBundleMagicVersion1)
                bundle.version = 1;
            else
                return Error(ErrorCode::Unsupported,
                             "The file is not a version 1 or 2 Sealtrain audit bundle.");
            continue;
        }
        if (lineNumber == 2 || lineNumber == 3 || lineNumber == 4) {
            const char* expected = lineNumber == 2   ? "origin"
                                   : lineNumber == 3 ? "selection"
                                                     : "filter";
            if (kind != expected || words.size() < 2)
                return bad(std::string("expected the ") + expected + " line");
            const auto value = line.substr(kind.size() + 1);
            if (lineNumber == 2) {
                if (words.size() != 2 || value.empty())
                    return bad("origin");
                bundle.origin = std::string(value);
            } else if (lineNumber == 3) {
                if (value != "all" && value != "filtered")
                    return bad("selection is neither all nor filtered");
                bundle.selectionAll = value == "all";
            } else {
                if (!isValidFilterText(value) || (value == "all") != bundle.selectionAll)
                    return bad(bundle.selectionAll ? "selection all with a filter other than all"
                                                   : "selection filtered with the filter all");
                bundle.filter = std::string(value);
            }
            section = 1;
            continue;
        }
        if (kind == "statement" && lineNumber == 5 && bundle.version >= 2) {
            const auto note = words.size() == 2 ? fromBase64(words[1]) : std::nullopt;
            if (!note)
                return bad("statement is not base64");
            bundle.statement = std::string(note->begin(), note->end());
        } else if (kind == "key" && section == 1) {
            if (words.size() != 2)
                return bad("key");
            auto key = NoteVerifier::fromVkey(words[1]);
            if (!key)
                return bad(key.error().message().substr(0, key.error().message().size() - 1));
            bundle.keys.push_back(std::move(*key));
        } else if (kind == "head" && (section == 1 || section == 2) && !bundle.keys.empty()) {
            section = 2;
            const auto note = words.size() == 2 ? fromBase64(words[1]) : std::nullopt;
            if (!note)
                return bad("head is not base64");
            bundle.heads.emplace_back(note->begin(), note->end());
        } else if (kind == "consistency" && (section == 2 || section == 3)
                   && !bundle.heads.empty()) {
            section = 3;
            BundleConsistency c;
            c.line = lineNumber;
            const auto size1 = words.size() >= 3 ? parseDecimal(words[1]) : std::nullopt;
            const auto size2 = words.size() >= 3 ? parseDecimal(words[2]) : std::nullopt;
            if (!size1 || !size2)
                return bad("consistency sizes");
            c.size1 = *size1;
            c.size2 = *size2;
            for (std::size_t i = 3; i < words.size(); ++i) {
                auto hash = hashFromBase64(words[i]);
                if (!hash)
                    return bad("consistency proof hash");
                c.proof.push_back(*hash);
            }
            bundle.consistency.push_back(std::move(c));
        } else if (line == "end" && section >= 2) {
            section = 5;
        } else {
            return bad("unexpected '" + std::string(kind.substr(0, 20)) + "' line here");
        }
    }
    if (section != 5)
        return Error(ErrorCode::Integrity,
                     "The bundle has no end line or no signed head; the file was truncated.");
    return scanned;
}

}  // namespace internal

std::string formatBundle(const Bundle& bundle)
{
    std::string out;
    out += std::string(bundle.version == 1 ? kBundleMagicVersion1 : kBundleMagic) + "\n";
    out += "origin " + bundle.origin + "\n";
    out += std::string("selection ") + (bundle.selectionAll ? "all" : "filtered") + "\n";
    out += "filter " + bundle.filter + "\n";
    if (bundle.statement)
        out += "statement " + toBase64(asBytes(*bundle.statement)) + "\n";
    for (const auto& key : bundle.keys)
        out += "key " + key.vkey() + "\n";
    for (const auto& head : bundle.heads)
        out += "head " + toBase64(asBytes(head)) + "\n";
    for (const auto& c : bundle.consistency)
        out += "consistency " + std::to_string(c.size1) + " " + std::to_string(c.size2)
               + hashesText(c.proof) + "\n";
    for (const auto& e : bundle.entries)
        out += "entry " + std::to_string(e.sequence) + " "
               + (e.headSize ? std::to_string(*e.headSize) : std::string("-")) + " "
               + toBase64(e.bytes) + hashesText(e.proof) + "\n";
    out += "end\n";
    return out;
}

Result<Bundle> parseBundle(std::string_view text)
{
    auto scanned = internal::scanBundle(text);
    if (!scanned)
        return scanned.error();
    Bundle bundle = std::move(scanned->header);
    bundle.entries.reserve(scanned->entries.size());
    for (const auto& line : scanned->entries) {
        auto entry = internal::decodeEntryLine(line);
        if (!entry)
            return entry.error();
        bundle.entries.push_back(std::move(*entry));
    }
    return bundle;
}

}  // namespace sealtrain::audit
