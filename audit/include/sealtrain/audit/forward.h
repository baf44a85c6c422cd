// Audit forwarding (docs/formats/audit-forward.md): each committed entry also written as one JSON
// line, to a file or to the systemd journal, for a team's SIEM. A line carries the entry's exact
// bytes and its leaf hash beside a readable summary, so that the forwarded copy can be checked
// against the signed log (checkForwarded) rather than trusted. The signed log stays the record:
// a target that refuses writes costs the forwarded copy, never a change or an entry.
#pragma once

#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::audit {

inline constexpr std::string_view kForwardFormat = "sealtrain-audit-forward-1";
// The longest line checkForwarded reads: an entry's bytes in base64 with its summary.
inline constexpr std::size_t kMaxForwardedLine = 3U * kMaxEntrySize;

// What the log hands a forwarder after each commit: that commit's entries, in sequence order.
class EntryForwarder {
public:
    virtual ~EntryForwarder() = default;
    virtual void forward(std::span<const StoredEntry> entries) noexcept = 0;
};

// The JSON line of one entry ("type": "entry"), without the newline. The entry must decode.
[[nodiscard]] Result<std::string> forwardedEntryLine(std::string_view origin,
                                                     const StoredEntry& entry);
// The line that stands for entries the target did not take ("type": "gap").
[[nodiscard]] std::string forwardedGapLine(std::string_view origin, std::uint64_t first,
                                           std::uint64_t last);

// Where lines go: returns false when the target refused the write (nothing partial is written
// to a file; a journal datagram is whole or absent).
using LineWriter = std::function<bool(std::string_view line, const StoredEntry* entry)>;

struct ForwarderLimits {
    // Lines kept while the target refuses writes; beyond it the oldest entries become a gap.
    std::size_t maxBacklogLines = 10000;
    std::size_t maxBacklogBytes = std::size_t{64} << 20U;
};

// Turns entries into lines and hands them to a writer, keeping a bounded backlog while the
// writer fails and writing a gap line for whatever the bound dropped, before the next line.
class LineForwarder final : public EntryForwarder {
public:
    LineForwarder(std::string origin, LineWriter writer, ForwarderLimits limits = {});
    void forward(std::span<const StoredEntry> entries) noexcept override;

    [[nodiscard]] std::size_t backlog() const noexcept { return backlog_.size(); }

private:
    struct Pending {
        StoredEntry entry;
        std::string line;
    };
    void flush() noexcept;

    std::string origin_;
    LineWriter writer_;
    ForwarderLimits limits_;
    std::deque<Pending> backlog_;
    std::size_t backlogBytes_ = 0;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> dropped_;
    bool warned_ = false;
};

// "file:/absolute/path" (appended, created mode 0600) or "journal" (the systemd journal's native
// socket, each line its MESSAGE with the sequence and leaf hash as fields). InvalidArgument with
// a sentence for anything else; Io when the file can not be opened.
[[nodiscard]] Result<std::unique_ptr<EntryForwarder>>
openForwarder(std::string_view target, std::string origin,
              const std::filesystem::path& journalSocket = "/run/systemd/journal/socket");

// The result of checking a forwarded copy against a bundle.
struct ForwardCheck {
    std::vector<std::string> errors;  // the first error first; empty when the copy is sound
    std::uint64_t lines = 0;
    std::uint64_t entriesMatched = 0;       // equal, byte for byte, to the bundle's entry
    std::uint64_t entriesBeyondBundle = 0;  // after the bundle's newest signed head
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;  // missing sequences, inclusive
    std::optional<std::uint64_t> firstSequence;
    std::optional<std::uint64_t> lastSequence;

    [[nodiscard]] bool ok() const noexcept { return errors.empty() && gaps.empty(); }
};

// Checks every line of `forwarded` (JSON lines as forwardedEntryLine writes them; gap lines are
// counted as gaps): its bytes decode, its leaf hash and summary match its bytes, each entry
// chains to the one before it, and every entry the bundle holds under a signed head is the
// same bytes. The bundle is verified first (verifyBundle with `options`); a bundle that fails
// is an error. Lines may come from several runs of the daemon (a sequence seen twice must be
// the same entry).
[[nodiscard]] ForwardCheck checkForwarded(std::string_view forwarded, std::string_view bundleText,
                                          const VerifyOptions& options);

}  // namespace sealtrain::audit
