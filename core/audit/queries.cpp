// Reading and exporting the audit log, each read audited first.
#include "sealtrain/core/audit/queries.h"

#include "store/audited_transaction.h"

#include "sealtrain/audit/witness.h"
#include "sealtrain/core/access/permissions.h"

#include <algorithm>
#include <filesystem>

namespace sealtrain::core {
namespace {

// The entry that records a look at the log, committed before anything is read.
Result<void> recordLook(AuditedTransactions& gate, const std::string& session,
                        const std::string& action, std::string_view permission,
                        const std::vector<audit::Detail>& details)
{
    return gate.perform(session, {action, permission, {}, {"audit", "log"}},
                        [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
                            draft.details = details;
                            return success();
                        });
}

// The entries of `query` from the store, looking at no more than kMaxAuditScan of them.
Result<AuditPage> readPage(const audit::AuditStore& store, const AuditQuery& query,
                           std::optional<audit::Outcome> outcome)
{
    AuditPage page;
    auto size = store.entryCount();
    if (!size)
        return size.error();
    page.logSize = *size;
    constexpr std::uint64_t kRead = 1024;
    std::uint64_t scanned = 0;
    const auto wanted = [&](const audit::Entry& entry) {
        return query.filter.matches(entry) && (!outcome || entry.outcome == *outcome);
    };
    // `at` is where the scan goes on: oldest first, the next sequence to look at; newest first,
    // the one below which to look.
    std::uint64_t at = query.oldestFirst
                           ? query.cursor
                           : (query.cursor == 0 ? *size : std::min(query.cursor, *size));
    const auto more = [&] { return query.oldestFirst ? at < *size : at > 0; };
    while (more() && page.entries.size() < query.limit && scanned < kMaxAuditScan) {
        const std::uint64_t room = query.oldestFirst ? *size - at : at;
        const std::uint64_t count = std::min({kRead, room, kMaxAuditScan - scanned});
        auto stored = store.readEntries(query.oldestFirst ? at : at - count, count);
        if (!stored)
            return stored.error();
        if (stored->empty())
            break;
        if (!query.oldestFirst)
            std::reverse(stored->begin(), stored->end());
        for (const auto& s : *stored) {
            at = query.oldestFirst ? s.sequence + 1 : s.sequence;
            ++scanned;
            auto entry = audit::decodeEntry(s.bytes);
            if (!entry)
                return entry.error();
            if (wanted(*entry))
                page.entries.push_back(std::move(*entry));
            if (page.entries.size() == query.limit)
                break;
        }
    }
    page.nextCursor = more() ? at : 0;
    return page;
}

}  // namespace

Result<std::vector<audit::Entry>> decodeStoredEntries(const std::vector<audit::StoredEntry>& stored)
{
    std::vector<audit::Entry> entries;
    entries.reserve(stored.size());
    for (const auto& s : stored) {
        auto entry = audit::decodeEntry(s.bytes);
        if (!entry)
            return entry.error();
        entries.push_back(std::move(*entry));
    }
    return entries;
}

audit::StoreVerification verifyLiveLog(const audit::AuditLog& log,
                                       const std::function<void()>& betweenPages)
{
    std::vector<std::string> witness;
    if (const auto& file = log.witnessFile(); file && std::filesystem::exists(*file)) {
        auto heads = audit::readWitness(*file);
        if (!heads) {
            audit::StoreVerification failed;
            failed.failure = heads.error();
            return failed;
        }
        witness = std::move(*heads);
    }
    return audit::verifyStore(log.store(), log.verifier(), witness, betweenPages);
}

AuditQueries::AuditQueries(AuditedTransactions& gate)
    : gate_(gate)
{
}

Result<std::vector<audit::Entry>> AuditQueries::read(const std::string& session,
                                                     std::uint64_t first, std::uint64_t count)
{
    if (auto looked = recordLook(gate_, session, "audit.read", permission::kAuditRead,
                                 {audit::textDetail("first", std::to_string(first)),
                                  audit::textDetail("count", std::to_string(count))});
        !looked)
        return looked.error();
    auto stored = gate_.log().store().readEntries(first, count);
    if (!stored)
        return stored.error();
    return decodeStoredEntries(*stored);
}

Result<AuditPage> AuditQueries::query(const std::string& session, const AuditQuery& query)
{
    std::optional<audit::Outcome> outcome;
    // The caller first; a malformed query is then a failure in the same entry.
    if (auto looked = gate_.perform(
            session, {"audit.read", permission::kAuditRead, {}, {"audit", "log"}},
            [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
                draft.details.push_back(audit::textDetail("filter", query.filter.describe()));
                for (const audit::Outcome known :
                     {audit::Outcome::Ok, audit::Outcome::Denied, audit::Outcome::Failed})
                    if (query.outcome == audit::outcomeName(known))
                        outcome = known;
                if (!query.outcome.empty() && !outcome)
                    return Error(ErrorCode::InvalidArgument,
                                 "An outcome filter is ok, denied or failed; leave it empty for "
                                 "all.");
                if (outcome)
                    draft.details.push_back(
                        audit::textDetail("outcome", audit::outcomeName(*outcome)));
                draft.details.push_back(audit::textDetail("cursor", std::to_string(query.cursor)));
                draft.details.push_back(
                    audit::textDetail("order", query.oldestFirst ? "oldest" : "newest"));
                if (query.limit < 1 || query.limit > kMaxAuditPage)
                    return Error(ErrorCode::InvalidArgument,
                                 "A page holds 1 to 1000 audit entries; ask for fewer.");
                return success();
            });
        !looked)
        return looked.error();
    return readPage(gate_.log().store(), query, outcome);
}

Result<audit::StoreVerification> AuditQueries::verifyLog(const std::string& session)
{
    if (auto looked = recordLook(gate_, session, "audit.verify", permission::kAuditRead, {});
        !looked)
        return looked.error();
    return verifyLiveLog(gate_.log());
}

Result<std::string> AuditQueries::newestHead(const std::string& session)
{
    if (auto looked = recordLook(gate_, session, "audit.head", permission::kAuditRead, {}); !looked)
        return looked.error();
    return gate_.log().store().readNewestHead();
}

Result<std::string> AuditQueries::exportBundle(const std::string& session,
                                               const audit::ExportFilter& filter)
{
    if (auto looked = recordLook(gate_, session, "audit.export", permission::kAuditExport,
                                 {audit::textDetail("filter", filter.describe())});
        !looked)
        return looked.error();
    return audit::exportBundle(gate_.log(), filter);
}

}  // namespace sealtrain::core
