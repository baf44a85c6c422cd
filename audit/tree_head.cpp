// Signed tree heads as C2SP checkpoints and signed notes (c2sp.org/tlog-checkpoint,
// c2sp.org/signed-note), Ed25519 only. The C2SP format calls a signed tree head a checkpoint;
// in this codebase "checkpoint" means a trainer checkpoint, so the type is TreeHead.
#include "sealtrain/audit/tree_head.h"

#include "sealtrain/audit/proof.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include <fmt/format.h>

#include <charconv>
#include <chrono>

namespace sealtrain::audit {
namespace {

constexpr std::string_view kEmDash = "\xE2\x80\x94";
constexpr std::uint8_t kEd25519SignatureType = 0x01;
constexpr std::size_t kMaxSignatures = 16;
constexpr std::size_t kMaxNoteSize = std::size_t{64} * 1024;

Error malformedNote(const std::string& what)
{
    return Error(ErrorCode::Integrity, "The signed tree head is malformed (" + what
                                           + "); it was altered or not written by a log.");
}

bool hasForbiddenControl(std::string_view text)
{
    for (const char c : text)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n')
            return true;
    return false;
}

bool isValidKeyName(std::string_view name)
{
    if (name.empty())
        return false;
    for (const char c : name)
        if (c == ' ' || c == '+' || static_cast<unsigned char>(c) < 0x21)
            return false;
    return true;
}

std::vector<std::string_view> splitLines(std::string_view text)
{
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        const auto end = text.find('\n');
        lines.push_back(text.substr(0, end));
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    }
    return lines;
}

}  // namespace

std::string formatUtcSeconds(std::int64_t seconds)
{
    using namespace std::chrono;
    const sys_seconds time{std::chrono::seconds{seconds}};
    const auto day = floor<days>(time);
    const year_month_day date{day};
    const hh_mm_ss clock{time - day};
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", int{date.year()},
                       unsigned{date.month()}, unsigned{date.day()}, clock.hours().count(),
                       clock.minutes().count(), clock.seconds().count());
}

Result<std::int64_t> parseUtcSeconds(std::string_view text)
{
    const Error bad(ErrorCode::InvalidArgument,
                    "A time is not in the form 2026-11-30T09:00:00Z (UTC, whole seconds).");
    if (text.size() != 20 || text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':'
        || text[16] != ':' || text[19] != 'Z')
        return bad;
    auto number = [&](std::size_t at, std::size_t width) -> std::optional<unsigned> {
        unsigned value = 0;
        const auto* first = text.data() + at;
        const auto [end, error] = std::from_chars(first, first + width, value);
        if (error != std::errc() || end != first + width || *first == '+' || *first == '-')
            return std::nullopt;
        return value;
    };
    const auto y = number(0, 4), mo = number(5, 2), d = number(8, 2), h = number(11, 2),
               mi = number(14, 2), s = number(17, 2);
    if (!y || !mo || !d || !h || !mi || !s || *h > 23 || *mi > 59 || *s > 59)
        return bad;
    using namespace std::chrono;
    const year_month_day date{year{static_cast<int>(*y)}, month{*mo}, day{*d}};
    if (!date.ok())
        return bad;
    const auto time = sys_days{date} + hours{*h} + minutes{*mi} + seconds{*s};
    return static_cast<std::int64_t>(time.time_since_epoch().count());
}

std::string treeHeadText(const TreeHead& treeHead)
{
    return treeHead.origin + "\n" + std::to_string(treeHead.size) + "\n" + toBase64(treeHead.root)
           + "\ntime " + formatUtcSeconds(treeHead.timeSeconds) + "\n";
}

Result<TreeHead> parseTreeHeadText(std::string_view text)
{
    if (text.empty() || text.back() != '\n')
        return malformedNote("the text does not end in a newline");
    const auto lines = splitLines(text);
    if (lines.size() != 4)
        return malformedNote("it does not have exactly four lines");
    TreeHead treeHead;
    if (!isValidKeyName(lines[0]))
        return malformedNote("bad origin line");
    treeHead.origin = std::string(lines[0]);
    const auto size = parseDecimal(lines[1]);
    if (!size)
        return malformedNote("bad tree size line");
    treeHead.size = *size;
    auto root = hashFromBase64(lines[2]);
    if (!root)
        return malformedNote("bad root hash line");
    treeHead.root = *root;
    constexpr std::string_view kTimePrefix = "time ";
    if (lines[3].substr(0, kTimePrefix.size()) != kTimePrefix)
        return malformedNote("bad time line");
    auto time = parseUtcSeconds(lines[3].substr(kTimePrefix.size()));
    if (!time)
        return malformedNote("bad time line");
    treeHead.timeSeconds = *time;
    return treeHead;
}

Result<SignedNote> parseSignedNote(std::string_view note)
{
    if (note.size() > kMaxNoteSize)
        return malformedNote("it is too large");
    if (hasForbiddenControl(note))
        return malformedNote("it holds control characters");
    const auto separator = note.rfind("\n\n");
    if (separator == std::string_view::npos || note.back() != '\n')
        return malformedNote("no blank line before the signatures");
    SignedNote parsed;
    parsed.text = std::string(note.substr(0, separator + 1));
    for (const auto line : splitLines(note.substr(separator + 2))) {
        if (parsed.signatures.size() == kMaxSignatures)
            return malformedNote("too many signatures");
        if (line.substr(0, kEmDash.size()) != kEmDash || line.size() <= kEmDash.size() + 1
            || line[kEmDash.size()] != ' ')
            return malformedNote("a signature line does not start with an em dash");
        const auto rest = line.substr(kEmDash.size() + 1);
        const auto space = rest.find(' ');
        if (space == std::string_view::npos)
            return malformedNote("a signature line has no signature");
        const auto name = rest.substr(0, space);
        const auto signature = fromBase64(rest.substr(space + 1));
        if (!isValidKeyName(name) || !signature || signature->size() < 5)
            return malformedNote("a signature line is malformed");
        NoteSignature entry;
        entry.keyName = std::string(name);
        entry.keyId = (std::uint32_t{(*signature)[0]} << 24U)
                      | (std::uint32_t{(*signature)[1]} << 16U)
                      | (std::uint32_t{(*signature)[2]} << 8U) | std::uint32_t{(*signature)[3]};
        entry.signature.assign(signature->begin() + 4, signature->end());
        parsed.signatures.push_back(std::move(entry));
    }
    if (parsed.signatures.empty())
        return malformedNote("it has no signature");
    return parsed;
}

std::string formatSignedNote(const SignedNote& note)
{
    std::string out = note.text + "\n";
    for (const auto& signature : note.signatures) {
        std::vector<std::uint8_t> blob = {static_cast<std::uint8_t>(signature.keyId >> 24U),
                                          static_cast<std::uint8_t>(signature.keyId >> 16U),
                                          static_cast<std::uint8_t>(signature.keyId >> 8U),
                                          static_cast<std::uint8_t>(signature.keyId)};
        blob.insert(blob.end(), signature.signature.begin(), signature.signature.end());
        out += std::string(kEmDash) + " " + signature.keyName + " " + toBase64(blob) + "\n";
    }
    return out;
}

std::uint32_t NoteVerifier::keyId() const
{
    crypto::Sha256 hash;
    hash.update(asBytes(name));
    const std::uint8_t separator[] = {'\n', kEd25519SignatureType};
    hash.update(separator);
    hash.update(key.raw());
    const auto digest = hash.finish();
    return (std::uint32_t{digest[0]} << 24U) | (std::uint32_t{digest[1]} << 16U)
           | (std::uint32_t{digest[2]} << 8U) | std::uint32_t{digest[3]};
}

std::string NoteVerifier::vkey() const
{
    const std::uint32_t id = keyId();
    const std::uint8_t idBytes[] = {
        static_cast<std::uint8_t>(id >> 24U), static_cast<std::uint8_t>(id >> 16U),
        static_cast<std::uint8_t>(id >> 8U), static_cast<std::uint8_t>(id)};
    std::vector<std::uint8_t> typed = {kEd25519SignatureType};
    typed.insert(typed.end(), key.raw().begin(), key.raw().end());
    return name + "+" + toHex(idBytes) + "+" + toBase64(typed);
}

Result<NoteVerifier> NoteVerifier::fromVkey(std::string_view vkey)
{
    const Error bad(ErrorCode::InvalidArgument,
                    "The verifier key is not of the form name+keyid+base64 for Ed25519.");
    const auto first = vkey.find('+');
    const auto second = vkey.find('+', first == std::string_view::npos ? first : first + 1);
    if (first == std::string_view::npos || second == std::string_view::npos)
        return bad;
    const auto name = vkey.substr(0, first);
    const auto id = fromHex(vkey.substr(first + 1, second - first - 1));
    const auto typed = fromBase64(vkey.substr(second + 1));
    if (!isValidKeyName(name) || !id || id->size() != 4 || !typed || typed->size() != 33
        || typed->front() != kEd25519SignatureType)
        return bad;
    auto key = crypto::PublicKey::fromRaw(std::span(*typed).subspan(1));
    if (!key)
        return key.error();
    NoteVerifier verifier{std::string(name), *key};
    const std::uint32_t expected = (std::uint32_t{(*id)[0]} << 24U)
                                   | (std::uint32_t{(*id)[1]} << 16U)
                                   | (std::uint32_t{(*id)[2]} << 8U) | std::uint32_t{(*id)[3]};
    if (verifier.keyId() != expected)
        return Error(ErrorCode::Integrity,
                     "The verifier key's id does not match its name and key; it was altered.");
    return verifier;
}

std::string signNote(const std::string& text, const std::string& keyName,
                     const crypto::SigningKey& key)
{
    SignedNote note;
    note.text = text;
    const NoteVerifier signer{keyName, key.publicKey()};
    const auto signature = key.sign(asBytes(note.text));
    note.signatures.push_back(
        NoteSignature{keyName, signer.keyId(), {signature.begin(), signature.end()}});
    return formatSignedNote(note);
}

Result<std::string> verifyNote(std::string_view signedNote, const NoteVerifier& trusted)
{
    auto note = parseSignedNote(signedNote);
    if (!note)
        return note.error();
    const std::uint32_t trustedId = trusted.keyId();
    bool verified = false;
    for (const auto& signature : note->signatures) {
        if (signature.keyName != trusted.name || signature.keyId != trustedId)
            continue;  // signed-note: ignore signatures from keys we do not know
        if (!trusted.key.verify(asBytes(note->text), signature.signature))
            return Error(ErrorCode::Unauthenticated,
                         "The signature by the trusted key does not verify; the signed note was "
                         "forged or altered.");
        verified = true;
    }
    if (!verified)
        return Error(ErrorCode::Unauthenticated, "The signed note is not signed by the trusted key "
                                                     + trusted.key.keyId()
                                                     + "; it was signed by another key.");
    return std::move(note->text);
}

std::string signTreeHead(const TreeHead& treeHead, const crypto::SigningKey& key)
{
    return signNote(treeHeadText(treeHead), treeHead.origin, key);
}

Result<TreeHead> verifyTreeHead(std::string_view signedNote, const NoteVerifier& trusted)
{
    auto text = verifyNote(signedNote, trusted);
    if (!text)
        return text.error();
    auto treeHead = parseTreeHeadText(*text);
    if (!treeHead)
        return treeHead.error();
    if (treeHead->origin != trusted.name)
        return Error(ErrorCode::Unauthenticated,
                     "The tree head's origin differs from the trusted key's name.");
    return treeHead;
}

}  // namespace sealtrain::audit
