// The selection statement of an export bundle (docs/formats/audit.md, "Selection statement"):
// which entries the export selected (all, or a filter) and exactly which it wrote, signed with
// the log's key when the bundle is made. Deleting entries from a bundle, or relabelling its
// selection or filter, then breaks a signature instead of going unnoticed.
//
//     sealtrain-audit-selection 1              (has a space: never a tree head's origin line)
//     origin sealtrain.local/audit
//     head 1024 <base64 root of the export head>
//     selection all|filtered
//     filter all|<the filter's description>
//     entries 1024 <base64 SHA-256 of the exported sequence numbers, u64 big-endian each>
#pragma once

#include "sealtrain/audit/merkle_hash.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/signing.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::audit {

inline constexpr std::string_view kSelectionStatementMagic = "sealtrain-audit-selection 1";

struct SelectionStatement {
    std::string origin;
    std::uint64_t headSize = 0;  // the export head: the newest head of the bundle
    Hash headRoot{};
    bool selectionAll = false;
    std::string filter;  // "all" exactly when selectionAll
    std::uint64_t entryCount = 0;
    Hash sequencesDigest{};

    bool operator==(const SelectionStatement&) const = default;
};

// The digest over the sequence numbers of the entries a bundle holds, in bundle order: SHA-256
// of each as u64 big-endian. Buffered, so that a million entries cost a few bulk hash calls.
class SequenceDigest final {
public:
    void add(std::uint64_t sequence);
    [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
    // The digest; the object then starts over.
    [[nodiscard]] Hash finish();

private:
    crypto::Sha256 hash_;
    std::vector<std::uint8_t> buffer_;
    std::uint64_t count_ = 0;
};

// A filter description as the statement and the bundle carry it: non-empty UTF-8 without control
// characters or spaces at either end.
[[nodiscard]] bool isValidFilterText(std::string_view filter);

[[nodiscard]] std::string selectionStatementText(const SelectionStatement& statement);
// Strict: exactly the six lines above, canonical numbers, 32-byte hashes, a filter without
// control characters that is "all" exactly when the selection is.
[[nodiscard]] Result<SelectionStatement> parseSelectionStatementText(std::string_view text);

// A signed note under the key name `statement.origin`.
[[nodiscard]] std::string signSelectionStatement(const SelectionStatement& statement,
                                                 const crypto::SigningKey& key);
// Checks the signature of `trusted` and parses the statement.
[[nodiscard]] Result<SelectionStatement> verifySelectionStatement(std::string_view signedNote,
                                                                  const NoteVerifier& trusted);

}  // namespace sealtrain::audit
