// Export bundles: one text file a reviewer verifies offline, with `sealtrainctl audit verify`
// or with standard tools following docs/formats/audit.md ("Export bundle").
//
// A bundle holds the selected entries (all, or a filtered subset), every signed head up to the
// export, the log's public key, a consistency proof between each two successive heads, an
// inclusion proof for every entry against the first head that covers it, and the selection
// statement (selection_statement.h) the log signed over what was exported. Nothing in it is
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

inline constexpr std::string_view kBundleMagic = "sealtrain-audit-bundle 2";
// Version 1 had no selection statement; it is still read, its selection unsigned.
inline constexpr std::string_view kBundleMagicVersion1 = "sealtrain-audit-bundle 1";

// Which entries an export carries. Empty fields match everything; `action` ending in ".*"
// matches a namespace ("job.*"); `sequences` selects exactly the entries with those numbers (the
// evidence a compliance report cites).
struct ExportFilter {
    std::optional<std::uint64_t> fromTimeNs;  // inclusive
    std::optional<std::uint64_t> toTimeNs;    // exclusive
    std::string actor;
    std::string action;
    std::string targetKind;
    std::string targetId;
    std::vector<std::uint64_t> sequences;  // ascending, no repeats; empty: any

    [[nodiscard]] bool selectsAll() const;
    [[nodiscard]] bool matches(const Entry& entry) const;
    // "actor=alice action=job.*" or "all", for the bundle's filter line and the report; a
    // selection of sequences reads "sequences=3,7-9,12" (runs of consecutive numbers as ranges).
    [[nodiscard]] std::string describe() const;
};

// Signs a head over the whole log (the export head), then writes the bundle with a selection
// statement signed over the filter and the exported entries. InvalidArgument when the filter's
// description is not valid filter text (a control character in a value).
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
    int version = 2;
    std::string origin;
    bool selectionAll = false;  // "all" exactly when filter is "all"
    std::string filter;
    // The signed selection statement (a signed note); absent in version 1 and in bundles cut
    // offline from another (subsetBundle), whose selection nobody with the key signed.
    std::optional<std::string> statement;
    std::vector<NoteVerifier> keys;
    std::vector<std::string> heads;  // signed notes, in order of increasing size
    std::vector<BundleConsistency> consistency;
    std::vector<BundleEntry> entries;
};

[[nodiscard]] Result<Bundle> parseBundle(std::string_view text);
[[nodiscard]] std::string formatBundle(const Bundle& bundle);
// A new bundle with only the entries of `bundle` that `filter` selects, their proofs unchanged.
// The entries must decode (verify the bundle first). Unless `filter` selects everything, the
// subset drops the selection statement: nothing signed says which entries it left out.
[[nodiscard]] Result<Bundle> subsetBundle(const Bundle& bundle, const ExportFilter& filter);

struct VerifyOptions {
    // The key the reviewer trusts: a PEM public key, a key id ("sha256:<hex>", as
    // PublicKey::keyId()) or a signed-note verifier key. Empty: the bundle's own key, which only
    // shows the bundle is self-consistent (a warning says so).
    std::string trustedKey;
    // Signed heads from the log's witness file (readWitness()).
    std::optional<std::vector<std::string>> witnessHeads;
    // Hand back the decoded entries (VerifyReport::entries), as a report needs; `audit verify`
    // only counts them and saves the time.
    bool keepEntries = true;
};

// VERIFIED: every check passed and nothing is left unproven. UNCONFIRMED: nothing failed, but
// something the reviewer needs is not proven (no trusted key, entries beyond the newest signed
// head, a filtered selection nobody signed); the warnings say what. FAILED: a check failed.
enum class Verdict { Verified, Unconfirmed, Failed };

[[nodiscard]] const char* verdictName(Verdict verdict) noexcept;

struct VerifyReport {
    std::vector<std::string> errors;  // the first error first; empty when nothing failed
    // Each warning names something the bundle does not prove; any makes the verdict Unconfirmed.
    std::vector<std::string> warnings;
    std::optional<std::uint64_t> firstBadEntry;
    std::string origin;
    std::string filter;
    bool selectionAll = false;     // what the bundle claims; complete() says whether it holds
    bool selectionSigned = false;  // a selection statement verified under the key
    std::string keyId;             // the key the signatures were checked with
    bool keyTrusted = false;       // given by the reviewer rather than taken from the bundle
    std::vector<TreeHead> heads;
    std::vector<Entry> entries;  // every entry that decoded, in bundle order (keepEntries)
    std::uint64_t entriesInBundle = 0;
    std::uint64_t entriesVerified = 0;
    std::uint64_t witnessHeadsChecked = 0;

    // Nothing failed (the verdict may still be Unconfirmed).
    [[nodiscard]] bool ok() const noexcept { return errors.empty(); }
    [[nodiscard]] Verdict verdict() const noexcept;
    // Every entry up to the newest signed head is present and proven.
    [[nodiscard]] bool complete() const noexcept { return selectionAll && ok(); }
    // For people: "all entries" only for a complete bundle, else "filtered: <filter>" with
    // whether the selection was signed, or a note that entries are missing.
    [[nodiscard]] std::string selectionText() const;
};

// Parses `text` strictly, checks the heads' signatures, the consistency proofs, the selection
// statement and the entries' chain, and compares with the witness heads when given. A complete
// bundle is proven by recomputing every head's root from all its entries (the per-entry
// inclusion proofs are then redundant: their form and length are checked, not their hashes); a
// filtered bundle by each entry's inclusion proof.
[[nodiscard]] VerifyReport verifyBundle(std::string_view text, const VerifyOptions& options);

// Streams a complete log from entry 0, in bounded memory: decodes each entry, checks its
// sequence number and chain link, and keeps the tree's frontier. For whole-log verification of
// a store and for complete bundles.
class LogVerifier final {
public:
    // Integrity (naming the entry) when the entry does not follow the previous one.
    [[nodiscard]] Result<Hash> add(std::span<const std::uint8_t> entryBytes);
    // The same, handing back the decoded entry (one strict decode, not two).
    [[nodiscard]] Result<Hash> add(std::span<const std::uint8_t> entryBytes, Entry& decoded);
    [[nodiscard]] std::uint64_t size() const noexcept { return range_.size(); }
    [[nodiscard]] Hash root() const { return range_.root(); }

private:
    Result<Hash> follow(std::uint64_t sequence, const Hash& previousLeafHash,
                        std::span<const std::uint8_t> entryBytes);

    CompactRange range_;
    Hash previous_{};
};

}  // namespace sealtrain::audit
