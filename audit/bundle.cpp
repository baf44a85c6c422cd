// Export bundles: what an export selects, making one from the log (with its signed selection
// statement), cutting a subset, and the streaming whole-log verifier.
#include "bundle_text.h"

#include "sealtrain/audit/proof.h"
#include "sealtrain/base/encoding.h"

#include <algorithm>

namespace sealtrain::audit {
namespace {

using internal::coveringHead;
using internal::seqText;

constexpr std::uint64_t kExportPage = 4096;

// What the export selected and wrote, for the log to sign.
SelectionStatement selectionOf(const Bundle& bundle, const TreeHead& exportHead)
{
    SelectionStatement statement{bundle.origin, exportHead.size, exportHead.root,
                                 bundle.selectionAll, bundle.filter};
    SequenceDigest digest;
    for (const auto& entry : bundle.entries)
        digest.add(entry.sequence);
    statement.entryCount = digest.count();
    statement.sequencesDigest = digest.finish();
    return statement;
}

// "3,7-9,12": ascending numbers, each run of consecutive ones as a range.
std::string sequenceRanges(const std::vector<std::uint64_t>& sequences)
{
    std::string out;
    for (std::size_t i = 0; i < sequences.size();) {
        std::size_t last = i;
        while (last + 1 < sequences.size() && sequences[last + 1] == sequences[last] + 1)
            ++last;
        out += (out.empty() ? "" : ",") + std::to_string(sequences[i]);
        if (last > i)
            out += "-" + std::to_string(sequences[last]);
        i = last + 1;
    }
    return out;
}

}  // namespace

bool ExportFilter::selectsAll() const
{
    return !fromTimeNs && !toTimeNs && actor.empty() && action.empty() && targetKind.empty()
           && targetId.empty() && sequences.empty();
}

bool ExportFilter::matches(const Entry& entry) const
{
    if (fromTimeNs && entry.timeNs < *fromTimeNs)
        return false;
    if (toTimeNs && entry.timeNs >= *toTimeNs)
        return false;
    if (!actor.empty() && entry.actor.id != actor)
        return false;
    if (!action.empty()) {
        if (action.size() > 2 && action.ends_with(".*")) {
            const std::string_view prefix(action.data(), action.size() - 1);
            if (!std::string_view(entry.action).starts_with(prefix))
                return false;
        } else if (entry.action != action) {
            return false;
        }
    }
    if (!targetKind.empty() && entry.target.kind != targetKind)
        return false;
    if (!sequences.empty()
        && !std::binary_search(sequences.begin(), sequences.end(), entry.sequence))
        return false;
    return targetId.empty() || entry.target.id == targetId;
}

std::string ExportFilter::describe() const
{
    if (selectsAll())
        return "all";
    std::string out;
    auto add = [&out](const std::string& key, const std::string& value) {
        if (!value.empty())
            out += (out.empty() ? "" : " ") + key + "=" + value;
    };
    if (fromTimeNs)
        add("from", formatUtcSeconds(static_cast<std::int64_t>(*fromTimeNs / 1000000000U)));
    if (toTimeNs)
        add("to", formatUtcSeconds(static_cast<std::int64_t>(*toTimeNs / 1000000000U)));
    add("actor", actor);
    add("action", action);
    add("target-kind", targetKind);
    add("target-id", targetId);
    add("sequences", sequenceRanges(sequences));
    return out;
}

namespace {

// What an export reads, as [first, end) runs: the whole log, or only the runs of the sequences
// the filter names (the compliance report's cited entries), so that a small selection of a long
// log reads only itself (issue #49: the report's bundle held the global lock for a whole pass).
std::vector<std::pair<std::uint64_t, std::uint64_t>> spansToRead(const ExportFilter& filter,
                                                                 std::uint64_t size)
{
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
    if (filter.sequences.empty()) {
        spans.emplace_back(0, size);
        return spans;
    }
    for (const std::uint64_t sequence : filter.sequences) {
        if (sequence >= size)
            break;
        if (!spans.empty() && spans.back().second == sequence)
            ++spans.back().second;
        else
            spans.emplace_back(sequence, sequence + 1);
    }
    return spans;
}

}  // namespace

Result<std::string> exportBundle(AuditLog& log, const ExportFilter& filter)
{
    auto exportHead = log.signHead();
    if (!exportHead)
        return exportHead.error();
    auto notes = log.store().readHeads();
    if (!notes)
        return notes.error();

    Bundle bundle;
    bundle.origin = log.origin();
    bundle.selectionAll = filter.selectsAll();
    bundle.filter = filter.describe();
    if (!std::is_sorted(filter.sequences.begin(), filter.sequences.end())
        || std::adjacent_find(filter.sequences.begin(), filter.sequences.end())
               != filter.sequences.end())
        return Error(ErrorCode::InvalidArgument,
                     "The sequence numbers to export must ascend without repeats; sort them.");
    if (!isValidFilterText(bundle.filter))
        return Error(ErrorCode::InvalidArgument,
                     "A filter value holds a control character or starts or ends with a space; "
                     "give the filter as plain text.");
    bundle.keys.push_back(log.verifier());
    // One head per size, the latest signed; sizes only grow.
    std::vector<std::uint64_t> sizes;
    for (const auto& note : *notes) {
        auto head = verifyTreeHead(note, log.verifier());
        if (!head)
            return head.error();
        if (!sizes.empty() && sizes.back() == head->size) {
            bundle.heads.back() = note;
        } else {
            sizes.push_back(head->size);
            bundle.heads.push_back(note);
        }
    }
    for (std::size_t i = 1; i < sizes.size(); ++i) {
        if (sizes[i - 1] == 0)
            continue;
        auto proof = log.tree().consistencyProof(sizes[i - 1], sizes[i]);
        if (!proof)
            return proof.error();
        bundle.consistency.push_back({sizes[i - 1], sizes[i], std::move(*proof), 0});
    }
    const auto spans = spansToRead(filter, exportHead->size);
    for (const auto& [from, end] : spans) {
        for (std::uint64_t first = from; first < end; first += kExportPage) {
            auto page = log.store().readEntries(first, std::min(kExportPage, end - first));
            if (!page)
                return page.error();
            for (auto& stored : *page) {
                auto entry = decodeEntry(stored.bytes);
                if (!entry)
                    return entry.error().withContext(seqText(stored.sequence));
                if (!filter.matches(*entry))
                    continue;
                const auto headSize = coveringHead(sizes, stored.sequence);
                if (!headSize)
                    return Error(ErrorCode::Internal, "An exported entry has no covering head.");
                auto proof = log.tree().inclusionProof(stored.sequence, *headSize);
                if (!proof)
                    return proof.error();
                bundle.entries.push_back(
                    {stored.sequence, headSize, std::move(stored.bytes), std::move(*proof), 0});
            }
        }
    }
    bundle.statement = log.signSelection(selectionOf(bundle, *exportHead));
    return formatBundle(bundle);
}

Result<Bundle> subsetBundle(const Bundle& bundle, const ExportFilter& filter)
{
    Bundle subset = bundle;
    subset.entries.clear();
    subset.selectionAll = bundle.selectionAll && filter.selectsAll();
    if (!filter.selectsAll()) {
        subset.filter = bundle.filter == "all" ? filter.describe()
                                               : bundle.filter + " then " + filter.describe();
        subset.statement.reset();  // cut offline: nobody with the key signs what was left out
    }
    for (const auto& e : bundle.entries) {
        auto entry = decodeEntry(e.bytes);
        if (!entry)
            return entry.error().withContext(seqText(e.sequence));
        if (filter.matches(*entry))
            subset.entries.push_back(e);
    }
    return subset;
}

Result<Hash> LogVerifier::add(std::span<const std::uint8_t> entryBytes)
{
    auto entry = checkEntry(entryBytes);
    if (!entry)
        return entry.error().withContext(seqText(range_.size()));
    return follow(entry->sequence, entry->previousLeafHash, entryBytes);
}

Result<Hash> LogVerifier::add(std::span<const std::uint8_t> entryBytes, Entry& decoded)
{
    auto entry = decodeEntry(entryBytes);
    if (!entry)
        return entry.error().withContext(seqText(range_.size()));
    auto leaf = follow(entry->sequence, entry->previousLeafHash, entryBytes);
    if (leaf)
        decoded = std::move(*entry);
    return leaf;
}

Result<Hash> LogVerifier::follow(std::uint64_t sequence, const Hash& previousLeafHash,
                                 std::span<const std::uint8_t> entryBytes)
{
    const std::uint64_t expected = range_.size();
    if (sequence != expected)
        return Error(ErrorCode::Integrity, seqText(expected) + " is missing or out of place: "
                                               + "the next entry says it is number "
                                               + std::to_string(sequence) + ".");
    if (previousLeafHash != previous_)
        return Error(ErrorCode::Integrity,
                     seqText(expected)
                         + " does not chain to the entry before it; one of the two "
                           "was altered.");
    previous_ = leafHash(entryBytes);
    range_.append(previous_);
    return previous_;
}

}  // namespace sealtrain::audit
