// Signed tree heads: C2SP tlog-checkpoint note text inside a C2SP signed note, signed with
// Ed25519 (signature type 0x01). docs/formats/audit.md, "Signed tree heads", has the bytes.
//
//     sealtrain.local/audit/3f2a…      origin (also the signing key's name)
//     1024                             tree size
//     <base64 root hash>
//     time 2026-11-30T09:00:00Z        extension line: when the head was signed
//
//     — sealtrain.local/audit/3f2a… <base64(key id || Ed25519 signature)>
#pragma once

#include "sealtrain/audit/merkle_hash.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/signing.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::audit {

struct TreeHead {
    std::string origin;
    std::uint64_t size = 0;
    Hash root{};
    std::int64_t timeSeconds = 0;  // UTC seconds since the Unix epoch, from the "time" line

    bool operator==(const TreeHead&) const = default;
};

// The note text: four lines, each ending in a newline.
[[nodiscard]] std::string treeHeadText(const TreeHead& head);
// Strict: exactly the four lines above, a canonical decimal size, a 32-byte root.
[[nodiscard]] Result<TreeHead> parseTreeHeadText(std::string_view text);

struct NoteSignature {
    std::string keyName;
    std::uint32_t keyId = 0;
    std::vector<std::uint8_t> signature;
};

struct SignedNote {
    std::string text;  // includes its final newline
    std::vector<NoteSignature> signatures;
};

[[nodiscard]] Result<SignedNote> parseSignedNote(std::string_view note);
[[nodiscard]] std::string formatSignedNote(const SignedNote& note);

// A key the reviewer trusts, under the name it signs with.
struct NoteVerifier {
    std::string name;
    crypto::PublicKey key;

    // SHA-256(name || 0x0A || 0x01 || public key)[:4], big-endian (signed-note, Ed25519).
    [[nodiscard]] std::uint32_t keyId() const;
    // The signed-note verifier key: "<name>+<hex key id>+<base64(0x01 || public key)>".
    [[nodiscard]] std::string vkey() const;
    [[nodiscard]] static Result<NoteVerifier> fromVkey(std::string_view vkey);
};

// Signs `text` (lines ending in newlines) with `key` under `keyName`; returns the signed note.
// Callers give texts that can not be mistaken for one another (a tree head's first line is an
// origin, which has no space; other notes start with a line that has one).
[[nodiscard]] std::string signNote(const std::string& text, const std::string& keyName,
                                   const crypto::SigningKey& key);
// Parses `signedNote` and checks the signature of `trusted` on it; returns the note's text.
[[nodiscard]] Result<std::string> verifyNote(std::string_view signedNote,
                                             const NoteVerifier& trusted);

// Signs `head` with `key` under the name `head.origin`; returns the signed note text.
[[nodiscard]] std::string signTreeHead(const TreeHead& head, const crypto::SigningKey& key);

// Parses `signedNote`, checks the signature of `trusted` on it and returns its tree head.
// Unauthenticated when the trusted key did not sign it or its signature does not verify.
[[nodiscard]] Result<TreeHead> verifyTreeHead(std::string_view signedNote,
                                              const NoteVerifier& trusted);

// "2026-11-30T09:00:00Z" for UTC seconds since the epoch, and back (strict).
[[nodiscard]] std::string formatUtcSeconds(std::int64_t seconds);
[[nodiscard]] Result<std::int64_t> parseUtcSeconds(std::string_view text);

}  // namespace sealtrain::audit
