// Audit forwarding (docs/formats/audit-forward.md): each committed entry also written as one JSON
// line for a team's SIEM, and the log's signed heads beside them. A line carries the entry's
// exact bytes and its leaf hash beside a readable summary, so that the forwarded copy can be
// checked (checkForwarded) rather than trusted: against a bundle of the signed log, or on its own
// through the signed heads it carries. The signed log stays the record; delivery is
// forward_spool.h's (at least once, from the log itself).
#pragma once

#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::audit {

inline constexpr std::string_view kForwardFormat = "sealtrain-audit-forward-1";
// The longest line checkForwarded reads: an entry's bytes in base64 with its summary.
inline constexpr std::size_t kMaxForwardedLine = 3U * kMaxEntrySize;

// What the log tells a forwarder after each commit: how many entries it now holds. The
// forwarder reads them from the store itself (forward_spool.h), so nothing here waits on it.
class EntryForwarder {
public:
    virtual ~EntryForwarder() = default;
    virtual void committed(std::uint64_t entryCount) noexcept = 0;
};

// What `doctor`, the desktop's audit screen and the compliance report show.
struct ForwardHealth {
    std::string target;
    std::uint64_t delivered = 0;                   // entries 0 to delivered-1 are at the target
    std::uint64_t logSize = 0;                     // entries in the log when it last looked
    std::uint64_t headSize = 0;                    // the newest signed head the target has
    std::optional<std::int64_t> lastDeliveryUnix;  // when the target last took lines
    std::string lastError;                         // empty while deliveries succeed
    std::optional<std::int64_t> failingSinceUnix;  // the first failure of the current run
    std::uint64_t failures = 0;                    // failed deliveries since the start
    std::uint64_t restarts = 0;  // times it began again from 0 (another log, another target)

    [[nodiscard]] std::uint64_t lag() const noexcept
    {
        return logSize > delivered ? logSize - delivered : 0;
    }
};

// The JSON line of one entry ("type": "entry"), without the newline. The entry must decode.
[[nodiscard]] Result<std::string> forwardedEntryLine(std::string_view origin,
                                                     const StoredEntry& entry);
// The line of a signed tree head ("type": "head"): the note as the log stores it, with its size,
// root and time readable beside it. The note must parse as a tree head.
[[nodiscard]] Result<std::string> forwardedHeadLine(std::string_view origin,
                                                    std::string_view signedNote);
// The line that stood for entries an older daemon's bounded backlog dropped ("type": "gap");
// today's forwarders write none, checkForwarded still reads them.
[[nodiscard]] std::string forwardedGapLine(std::string_view origin, std::uint64_t first,
                                           std::uint64_t last);

// The result of checking a forwarded copy.
struct ForwardCheck {
    std::vector<std::string> errors;    // the first error first; empty when the copy is sound
    std::vector<std::string> warnings;  // what is not proven (no key given)
    std::uint64_t lines = 0;
    std::uint64_t entriesMatched = 0;     // equal, byte for byte, to the bundle's entry
    std::uint64_t headsVerified = 0;      // the copy's own signed heads that verified
    std::uint64_t entriesUnderHeads = 0;  // entries a verified head of the copy covers
    std::uint64_t entriesUnsigned = 0;    // under no signed head (bundle's or the copy's)
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;  // missing sequences, inclusive
    std::optional<std::uint64_t> firstSequence;
    std::optional<std::uint64_t> lastSequence;

    [[nodiscard]] bool ok() const noexcept { return errors.empty() && gaps.empty(); }
};

// Checks every line of `forwarded` (JSON lines as the forward*Line functions write them; gap
// lines are counted as gaps): its bytes decode, its leaf hash and summary match its bytes, each
// entry chains to the one before it, a sequence seen twice is the same entry, the copy begins at
// entry 0 (a missing prefix is an error), and every head line is signed by the trusted key
// (options.trustedKey: a PEM public key or a verifier key; a fingerprint only with a bundle,
// which holds the key) over the root of the copy's own first entries. With a bundle (not empty),
// the bundle is verified first (verifyBundle with `options`; one that fails is an error) and
// every entry it holds under a signed head must be the same bytes. Lines may come from several
// runs of the daemon.
[[nodiscard]] ForwardCheck checkForwarded(std::string_view forwarded, std::string_view bundleText,
                                          const VerifyOptions& options);

}  // namespace sealtrain::audit
