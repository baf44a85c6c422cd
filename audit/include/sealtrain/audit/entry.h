// Audit entries and their v1 binary encoding (docs/formats/audit.md, "Entries").
//
// An entry is stored as the exact bytes that are hashed into the Merkle tree; a verifier decodes
// those bytes and never re-encodes them. The encoding is fixed and versioned: big-endian integers,
// length-prefixed UTF-8 strings, fields in one order, nothing optional left out.
//
// Sensitive values (an e-mail address, a file name, a patient id) are never stored: the entry
// holds HMAC-SHA-256 of the value under the audit key instead, so a report can be shared and an
// authorised person who holds the key can still find the entries about a value they know.
#pragma once

#include "sealtrain/audit/merkle_hash.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::audit {

inline constexpr std::uint8_t kEntryFormatVersion = 1;
// Limits that keep a hostile bundle from making the verifier allocate without bound.
inline constexpr std::size_t kMaxEntrySize = 1U << 20U;
inline constexpr std::size_t kMaxFieldSize = 1U << 16U;
inline constexpr std::size_t kMaxListLength = 1024;

enum class ActorKind : std::uint8_t { User = 1, Worker = 2, System = 3 };
enum class Outcome : std::uint8_t { Ok = 1, Denied = 2, Failed = 3 };

[[nodiscard]] const char* actorKindName(ActorKind kind) noexcept;
[[nodiscard]] const char* outcomeName(Outcome outcome) noexcept;

struct Actor {
    ActorKind kind = ActorKind::System;
    std::string id;          // user name, worker id, or the system component
    std::string session;     // session id; empty for system actors
    std::string authMethod;  // e.g. "password+totp", "mtls", "internal"

    bool operator==(const Actor&) const = default;
};

struct Target {
    std::string kind;  // e.g. "dataset", "job", "user"
    std::string id;

    bool operator==(const Target&) const = default;
};

// A detail is plain text, or the keyed hash of a sensitive value (32 bytes).
struct Detail {
    enum class Kind : std::uint8_t { Text = 0, KeyedHash = 1 };
    std::string name;
    Kind kind = Kind::Text;
    std::vector<std::uint8_t> value;

    bool operator==(const Detail&) const = default;
};

struct Entry {
    std::uint64_t sequence = 0;
    std::uint64_t timeNs = 0;  // UTC, nanoseconds since the Unix epoch
    Hash previousLeafHash{};   // leaf hash of entry sequence - 1; zeros for entry 0
    Actor actor;
    std::string action;  // namespaced verb: dataset.import, job.approve
    Target target;
    Outcome outcome = Outcome::Ok;
    std::string reason;  // why it was denied or failed; empty when ok
    std::string requestId;
    std::vector<std::string> approvalIds;
    std::string keyedHashKeyId;  // which audit key made the keyed hashes; empty when none
    std::vector<Detail> details;

    bool operator==(const Entry&) const = default;
};

// True for lowercase dot-separated words of [a-z0-9_-], at least two: "job.approve".
[[nodiscard]] bool isValidAction(std::string_view action) noexcept;

// What whole-log verification needs of an entry.
struct EntryHeader {
    std::uint64_t sequence = 0;
    std::uint64_t timeNs = 0;
    Hash previousLeafHash{};
};

// The v1 bytes of `entry`; InvalidArgument when a field breaks the format's rules.
[[nodiscard]] Result<std::vector<std::uint8_t>> encodeEntry(const Entry& entry);
// Strict: refuses an unknown version, bad enums, invalid UTF-8, over-long fields and trailing
// bytes, each with an Integrity error naming the field.
[[nodiscard]] Result<Entry> decodeEntry(std::span<const std::uint8_t> bytes);
// The same checks as decodeEntry without building the Entry (no allocation).
[[nodiscard]] Result<EntryHeader> checkEntry(std::span<const std::uint8_t> bytes);

// The audit key: HMAC-SHA-256 of sensitive values. Never logged, never exported.
class AuditKey final {
public:
    // `key` must be at least 32 bytes; `keyId` names it in entries (e.g. "audit-hmac-v1").
    [[nodiscard]] static Result<AuditKey> create(crypto::SecretBytes key, std::string keyId);

    [[nodiscard]] const std::string& keyId() const noexcept { return keyId_; }
    // The detail `name` holding the keyed hash of `value` (keyedHash below).
    [[nodiscard]] Detail keyedDetail(std::string name, std::string_view value) const;
    // True when `entry` holds a detail named `name` that is the keyed hash of `value` under this
    // key. The comparison takes the same time whatever the bytes, and the same value under
    // another field name does not match.
    [[nodiscard]] bool matches(const Entry& entry, std::string_view name,
                               std::string_view value) const;

private:
    // The one keyed hash of the log: HMAC-SHA-256(key, u32 length of name || name || value), so
    // that a value is bound to the field it was recorded under (docs/formats/audit.md).
    [[nodiscard]] Hash keyedHash(std::string_view name, std::string_view value) const;

    AuditKey(crypto::SecretBytes key, std::string keyId)
        : key_(std::move(key))
        , keyId_(std::move(keyId))
    {
    }

    crypto::SecretBytes key_;
    std::string keyId_;
};

[[nodiscard]] Detail textDetail(std::string name, std::string_view value);

}  // namespace sealtrain::audit
