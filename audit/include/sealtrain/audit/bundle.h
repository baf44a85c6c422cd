// Export bundles: one text file a reviewer verifies offline, with `sealtrainctl audit verify`
// or with standard tools following docs/formats/audit.md ("Export bundle").
//
// A bundle holds the selected entries (all, or a filtered subset), every signed head up to the
// export, the log's public key, a consistency proof between each two successive heads and an
// inclusion proof for every entry against the first head that covers it. Nothing in it is
// secret: sensitive values are keyed hashes already.
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/tree_head.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::audit {

inline constexpr std::string_view kBundleMagic = "sealtrain-audit-bundle 1";

// Which entries an export carries. Empty fields match everything; `action` ending in ".*"
// matches a namespace ("job.*").
struct ExportFilter {
    std::optional<std::uint64_t> fromTimeNs;  // inclusive
    std::optional<std::uint64_t> toTimeNs;    // exclusive
    std::string actor;
    std::string action;
    std::string targetKind;
    std::string targetId;

    [[nodiscard]] bool selectsAll() const;
    [[nodiscard]] bool matches(const Entry& entry) const;
    // "actor=alice action=job.*" or "all", for the bundle's filter line and the report.
    [[nodiscard]] std::string describe() const;
};

// Signs a head over the whole log (the export head), then writes the bundle.
[[nodiscard]] Result<std::string> exportBundle(AuditLog& log, const ExportFilter& filter);

// A parsed bundle: every line is checked for form, nothing is trusted yet.
struct BundleEntry {
    std::uint64_t sequence = 0;
    std::optional<std::uint64_t> headSize;  // nullopt: unsigned tail, no proof
    std::vector<std::uint8_t> bytes;
    std::vector<Hash> proof;
    std::size_t line = 0;
};

struct BundleConsistency {
    std::uint64_t size1 = 0;
    std::uint64_t size2 = 0;
    std::vector<Hash> proof;
    std::size_t line = 0;
};

struct Bundle {
    std::string origin;
    bool selectionAll = false;
    std::string filter;
    std::vector<NoteVerifier> keys;
    std::vector<std::string> heads;  // signed notes, in order of increasing size
    std::vector<BundleConsistency> consistency;
    std::vector<BundleEntry> entries;
};

[[nodiscard]] Result<Bundle> parseBundle(std::string_view text);
[[nodiscard]] std::string formatBundle(const Bundle& bundle);
// A new bundle with only the entries of `bundle` that `filter` selects, their proofs unchanged.
// The entries must decode (verify the bundle first).
[[nodiscard]] Result<Bundle> subsetBundle(const Bundle& bundle, const ExportFilter& filter);

struct VerifyOptions {
    // The key the reviewer trusts: a PEM public key, a key id ("sha256:<hex>", as
    // PublicKey::keyId()) or a signed-note verifier key. Empty: the bundle's own key, which only
    // shows the bundle is self-consistent (a warning says so).
    std::string trustedKey;
    // Signed heads from the log's witness file (readWitness()).
    std::optional<std::vector<std::string>> witnessHeads;
};

struct VerifyReport {
    std::vector<std::string> errors;  // the first error first; empty when the bundle verified
    std::vector<std::string> warnings;
    std::optional<std::uint64_t> firstBadEntry;
    std::string origin;
    std::string filter;
    bool selectionAll = false;
    std::string keyId;        // the key the signatures were checked with
    bool keyTrusted = false;  // given by the reviewer rather than taken from the bundle
    std::vector<TreeHead> heads;
    std::vector<Entry> entries;  // every entry that decoded, in bundle order
    std::uint64_t entriesVerified = 0;
    std::uint64_t witnessHeadsChecked = 0;

    [[nodiscard]] bool ok() const noexcept { return errors.empty(); }
};

// Parses `text` strictly, recomputes every leaf hash, inclusion proof, consistency proof and
// (for a complete export) the root of every head from the entries, checks the heads'
// signatures and the entries' chain, and compares with the witness heads when given.
[[nodiscard]] VerifyReport verifyBundle(std::string_view text, const VerifyOptions& options);

// Streams a complete log from entry 0, in bounded memory: decodes each entry, checks its
// sequence number and chain link, and keeps the tree's frontier. For whole-log verification of
// a store and for complete bundles.
class LogVerifier final {
public:
    // Integrity (naming the entry) when the entry does not follow the previous one.
    [[nodiscard]] Result<Hash> add(std::span<const std::uint8_t> entryBytes);
    [[nodiscard]] std::uint64_t size() const noexcept { return range_.size(); }
    [[nodiscard]] Hash root() const { return range_.root(); }

private:
    CompactRange range_;
    Hash previous_{};
};

}  // namespace sealtrain::audit
