// The v1 entry encoding: a writer and a strict reader that mirror each other field by field.
#include "sealtrain/audit/entry.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/utf8.h"
#include "sealtrain/crypto/hash.h"

#include <algorithm>

namespace sealtrain::audit {
namespace {

Error malformed(const std::string& field)
{
    return Error(ErrorCode::Integrity, "The entry's " + field
                                           + " field is malformed; the entry was altered or "
                                             "was not written by Sealtrain.");
}

// RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF.
class Writer {
public:
    void u8(std::uint8_t value) { out_.push_back(value); }
    void u16(std::uint16_t value) { be(value, 2); }
    void u32(std::uint32_t value) { be(value, 4); }
    void u64(std::uint64_t value) { be(value, 8); }
    void raw(std::span<const std::uint8_t> bytes)
    {
        out_.insert(out_.end(), bytes.begin(), bytes.end());
    }
    void bytes(std::span<const std::uint8_t> value)
    {
        u32(static_cast<std::uint32_t>(value.size()));
        raw(value);
    }
    void text(std::string_view value) { bytes(asBytes(value)); }
    [[nodiscard]] std::vector<std::uint8_t> take() { return std::move(out_); }

private:
    void be(std::uint64_t value, unsigned width)
    {
        for (unsigned i = width; i-- > 0;)
            out_.push_back(static_cast<std::uint8_t>(value >> (8U * i)));
    }
    std::vector<std::uint8_t> out_;
};

class Reader {
public:
    explicit Reader(std::span<const std::uint8_t> in)
        : in_(in)
    {
    }

    Result<std::uint64_t> be(unsigned width, const char* field)
    {
        if (in_.size() - at_ < width)
            return malformed(field);
        std::uint64_t value = 0;
        for (unsigned i = 0; i < width; ++i)
            value = (value << 8U) | in_[at_++];
        return value;
    }
    Result<std::span<const std::uint8_t>> bytes(const char* field)
    {
        auto length = be(4, field);
        if (!length || *length > kMaxFieldSize || in_.size() - at_ < *length)
            return malformed(field);
        auto value = in_.subspan(at_, static_cast<std::size_t>(*length));
        at_ += static_cast<std::size_t>(*length);
        return value;
    }
    Result<std::string_view> view(const char* field)
    {
        auto value = bytes(field);
        if (!value || !isValidUtf8(*value))
            return malformed(field);
        return std::string_view(reinterpret_cast<const char*>(value->data()), value->size());
    }
    Result<Hash> hash(const char* field)
    {
        Hash value{};
        if (in_.size() - at_ < value.size())
            return malformed(field);
        std::copy_n(in_.begin() + static_cast<std::ptrdiff_t>(at_), value.size(), value.begin());
        at_ += value.size();
        return value;
    }
    [[nodiscard]] bool atEnd() const { return at_ == in_.size(); }

private:
    std::span<const std::uint8_t> in_;
    std::size_t at_ = 0;
};

bool isValidText(std::string_view text)
{
    return text.size() <= kMaxFieldSize && isValidUtf8(asBytes(text));
}

// Rules shared by the writer and the reader, so nothing is written that could not be read.
Result<void> checkRules(const Entry& entry)
{
    if (entry.actor.kind != ActorKind::User && entry.actor.kind != ActorKind::Worker
        && entry.actor.kind != ActorKind::System)
        return malformed("actor kind");
    if (entry.actor.id.empty())
        return malformed("actor id");
    if (!isValidAction(entry.action))
        return malformed("action");
    if (entry.outcome != Outcome::Ok && entry.outcome != Outcome::Denied
        && entry.outcome != Outcome::Failed)
        return malformed("outcome");
    if ((entry.outcome == Outcome::Ok) != entry.reason.empty())
        return malformed("reason");
    if (entry.approvalIds.size() > kMaxListLength || entry.details.size() > kMaxListLength)
        return malformed("list length");
    bool anyKeyed = false;
    for (const auto& detail : entry.details) {
        if (detail.name.empty() || !isValidText(detail.name))
            return malformed("detail name");
        if (detail.kind == Detail::Kind::KeyedHash) {
            anyKeyed = true;
            if (detail.value.size() != Hash{}.size())
                return malformed("keyed hash");
        } else if (detail.kind != Detail::Kind::Text
                   || !isValidText(
                       {reinterpret_cast<const char*>(detail.value.data()), detail.value.size()})) {
            return malformed("detail value");
        }
    }
    if (anyKeyed == entry.keyedHashKeyId.empty())
        return malformed("keyed-hash key id");
    for (const auto* text :
         {&entry.actor.id, &entry.actor.session, &entry.actor.authMethod, &entry.target.kind,
          &entry.target.id, &entry.reason, &entry.requestId, &entry.keyedHashKeyId})
        if (!isValidText(*text))
            return malformed("text");
    for (const auto& id : entry.approvalIds)
        if (id.empty() || !isValidText(id))
            return malformed("approval id");
    return success();
}

}  // namespace

const char* actorKindName(ActorKind kind) noexcept
{
    switch (kind) {
    case ActorKind::User: return "user";
    case ActorKind::Worker: return "worker";
    case ActorKind::System: return "system";
    }
    return "unknown";
}

const char* outcomeName(Outcome outcome) noexcept
{
    switch (outcome) {
    case Outcome::Ok: return "ok";
    case Outcome::Denied: return "denied";
    case Outcome::Failed: return "failed";
    }
    return "unknown";
}

bool isValidAction(std::string_view action) noexcept
{
    if (action.empty() || action.size() > 128 || action.front() == '.' || action.back() == '.')
        return false;
    bool sawDot = false;
    char previous = '\0';
    for (const char c : action) {
        const bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (c == '.') {
            if (previous == '.')
                return false;
            sawDot = true;
        } else if (!word) {
            return false;
        }
        previous = c;
    }
    return sawDot;
}

Result<std::vector<std::uint8_t>> encodeEntry(const Entry& entry)
{
    if (auto rules = checkRules(entry); !rules)
        return Error(ErrorCode::InvalidArgument, rules.error().message());
    Writer w;
    w.u8(kEntryFormatVersion);
    w.u64(entry.sequence);
    w.u64(entry.timeNs);
    w.raw(entry.previousLeafHash);
    w.u8(static_cast<std::uint8_t>(entry.actor.kind));
    w.text(entry.actor.id);
    w.text(entry.actor.session);
    w.text(entry.actor.authMethod);
    w.text(entry.action);
    w.text(entry.target.kind);
    w.text(entry.target.id);
    w.u8(static_cast<std::uint8_t>(entry.outcome));
    w.text(entry.reason);
    w.text(entry.requestId);
    w.u16(static_cast<std::uint16_t>(entry.approvalIds.size()));
    for (const auto& id : entry.approvalIds)
        w.text(id);
    w.text(entry.keyedHashKeyId);
    w.u16(static_cast<std::uint16_t>(entry.details.size()));
    for (const auto& detail : entry.details) {
        w.text(detail.name);
        w.u8(static_cast<std::uint8_t>(detail.kind));
        w.bytes(detail.value);
    }
    auto bytes = w.take();
    if (bytes.size() > kMaxEntrySize)
        return Error(ErrorCode::InvalidArgument,
                     "The entry is larger than 1 MiB; keep large data out of the audit log.");
    return bytes;
}

namespace {

#define SEALTRAIN_READ(target, expr)                                                               \
    do {                                                                                           \
        auto value_ = (expr);                                                                      \
        if (!value_)                                                                               \
            return value_.error();                                                                 \
        (target) = *value_;                                                                        \
    } while (false)

// Reads the v1 fields in order, checks each against the format's rules, and hands them to
// `sink` as views into `bytes`: nothing is allocated, so whole-log verification stays fast.
template <typename Sink>
Result<void> walkEntry(std::span<const std::uint8_t> bytes, Sink& sink)
{
    if (bytes.size() > kMaxEntrySize)
        return malformed("size");
    Reader r(bytes);
    std::uint64_t version = 0;
    SEALTRAIN_READ(version, r.be(1, "version"));
    if (version != kEntryFormatVersion)
        return Error(ErrorCode::Unsupported,
                     "The entry has format version " + std::to_string(version)
                         + ", which this build does not read; update Sealtrain.");
    EntryHeader header;
    SEALTRAIN_READ(header.sequence, r.be(8, "sequence"));
    SEALTRAIN_READ(header.timeNs, r.be(8, "time"));
    SEALTRAIN_READ(header.previousLeafHash, r.hash("previous leaf hash"));
    sink.header(header);

    std::uint64_t actorKind = 0;
    SEALTRAIN_READ(actorKind, r.be(1, "actor kind"));
    if (actorKind < 1 || actorKind > 3)
        return malformed("actor kind");
    std::string_view text[9];  // actor id, session, auth, action, target kind, id, -, reason, req
    SEALTRAIN_READ(text[0], r.view("actor id"));
    SEALTRAIN_READ(text[1], r.view("actor session"));
    SEALTRAIN_READ(text[2], r.view("actor auth method"));
    SEALTRAIN_READ(text[3], r.view("action"));
    SEALTRAIN_READ(text[4], r.view("target kind"));
    SEALTRAIN_READ(text[5], r.view("target id"));
    if (text[0].empty())
        return malformed("actor id");
    if (!isValidAction(text[3]))
        return malformed("action");
    std::uint64_t outcome = 0;
    SEALTRAIN_READ(outcome, r.be(1, "outcome"));
    if (outcome < 1 || outcome > 3)
        return malformed("outcome");
    SEALTRAIN_READ(text[7], r.view("reason"));
    SEALTRAIN_READ(text[8], r.view("request id"));
    if ((outcome == static_cast<std::uint64_t>(Outcome::Ok)) != text[7].empty())
        return malformed("reason");
    sink.fields(static_cast<ActorKind>(actorKind), text, static_cast<Outcome>(outcome));

    std::uint64_t count = 0;
    SEALTRAIN_READ(count, r.be(2, "approval count"));
    if (count > kMaxListLength)
        return malformed("approval count");
    for (std::uint64_t i = 0; i < count; ++i) {
        std::string_view id;
        SEALTRAIN_READ(id, r.view("approval id"));
        if (id.empty())
            return malformed("approval id");
        sink.approval(id);
    }
    std::string_view keyId;
    SEALTRAIN_READ(keyId, r.view("keyed-hash key id"));
    sink.keyedHashKeyId(keyId);
    SEALTRAIN_READ(count, r.be(2, "detail count"));
    if (count > kMaxListLength)
        return malformed("detail count");
    bool anyKeyed = false;
    for (std::uint64_t i = 0; i < count; ++i) {
        std::string_view name;
        SEALTRAIN_READ(name, r.view("detail name"));
        std::uint64_t kind = 0;
        SEALTRAIN_READ(kind, r.be(1, "detail kind"));
        std::span<const std::uint8_t> value;
        SEALTRAIN_READ(value, r.bytes("detail value"));
        if (name.empty())
            return malformed("detail name");
        if (kind == static_cast<std::uint64_t>(Detail::Kind::KeyedHash)) {
            anyKeyed = true;
            if (value.size() != Hash{}.size())
                return malformed("keyed hash");
        } else if (kind != static_cast<std::uint64_t>(Detail::Kind::Text) || !isValidUtf8(value)) {
            return malformed("detail value");
        }
        sink.detail(name, static_cast<Detail::Kind>(kind), value);
    }
    if (anyKeyed == keyId.empty())
        return malformed("keyed-hash key id");
    if (!r.atEnd())
        return malformed("length (bytes follow the last field)");
    return success();
}

#undef SEALTRAIN_READ

struct EntrySink {
    Entry entry;
    void header(const EntryHeader& h)
    {
        entry.sequence = h.sequence;
        entry.timeNs = h.timeNs;
        entry.previousLeafHash = h.previousLeafHash;
    }
    void fields(ActorKind kind, const std::string_view* text, Outcome outcome)
    {
        entry.actor = {kind, std::string(text[0]), std::string(text[1]), std::string(text[2])};
        entry.action = text[3];
        entry.target = {std::string(text[4]), std::string(text[5])};
        entry.outcome = outcome;
        entry.reason = text[7];
        entry.requestId = text[8];
    }
    void approval(std::string_view id) { entry.approvalIds.emplace_back(id); }
    void keyedHashKeyId(std::string_view id) { entry.keyedHashKeyId = id; }
    void detail(std::string_view name, Detail::Kind kind, std::span<const std::uint8_t> value)
    {
        entry.details.push_back({std::string(name), kind, {value.begin(), value.end()}});
    }
};

}  // namespace

Result<Entry> decodeEntry(std::span<const std::uint8_t> bytes)
{
    EntrySink sink;
    SEALTRAIN_TRY(walkEntry(bytes, sink));
    return std::move(sink.entry);
}

Result<EntryHeader> checkEntry(std::span<const std::uint8_t> bytes)
{
    struct Sink {
        EntryHeader result;
        void header(const EntryHeader& h) { result = h; }
        void fields(ActorKind, const std::string_view*, Outcome) {}
        void approval(std::string_view) {}
        void keyedHashKeyId(std::string_view) {}
        void detail(std::string_view, Detail::Kind, std::span<const std::uint8_t>) {}
    } sink;
    SEALTRAIN_TRY(walkEntry(bytes, sink));
    return sink.result;
}

Result<AuditKey> AuditKey::create(crypto::SecretBytes key, std::string keyId)
{
    if (key.size() < 32)
        return Error(ErrorCode::InvalidArgument,
                     "The audit key must be at least 32 bytes; generate it with the key store.");
    if (keyId.empty() || !isValidText(keyId))
        return Error(ErrorCode::InvalidArgument, "The audit key needs a non-empty key id.");
    return AuditKey(std::move(key), std::move(keyId));
}

Hash AuditKey::keyedHash(std::string_view name, std::string_view value) const
{
    crypto::HmacSha256 mac(key_);
    const auto length = static_cast<std::uint32_t>(name.size());
    const std::uint8_t lengthBytes[] = {
        static_cast<std::uint8_t>(length >> 24U), static_cast<std::uint8_t>(length >> 16U),
        static_cast<std::uint8_t>(length >> 8U), static_cast<std::uint8_t>(length)};
    mac.update(lengthBytes);
    mac.update(asBytes(name));
    mac.update(asBytes(value));
    return mac.finish();
}

Detail AuditKey::keyedDetail(std::string name, std::string_view value) const
{
    const auto mac = keyedHash(name, value);
    return Detail{std::move(name), Detail::Kind::KeyedHash, {mac.begin(), mac.end()}};
}

bool AuditKey::matches(const Entry& entry, std::string_view name, std::string_view value) const
{
    if (entry.keyedHashKeyId != keyId_)
        return false;
    const auto mac = keyedHash(name, value);
    // Every candidate is compared in full (digestsEqual is constant-time) and the results are
    // combined without an early exit, so the time does not tell how close a guess came.
    bool found = false;
    for (const auto& detail : entry.details) {
        if (detail.kind != Detail::Kind::KeyedHash || detail.name != name
            || detail.value.size() != mac.size())
            continue;
        Hash stored{};
        std::copy(detail.value.begin(), detail.value.end(), stored.begin());
        found |= crypto::digestsEqual(stored, mac);
    }
    return found;
}

Detail textDetail(std::string name, std::string_view value)
{
    return Detail{std::move(name), Detail::Kind::Text, {value.begin(), value.end()}};
}

}  // namespace sealtrain::audit
