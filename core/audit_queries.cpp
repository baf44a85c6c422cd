// Reading and exporting the audit log, each read audited first.
#include "sealtrain/core/audit_queries.h"

#include "audited_transaction.h"

#include "sealtrain/core/permissions.h"

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

}  // namespace

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
    std::vector<audit::Entry> entries;
    for (const auto& s : *stored) {
        auto entry = audit::decodeEntry(s.bytes);
        if (!entry)
            return entry.error();
        entries.push_back(std::move(*entry));
    }
    return entries;
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
