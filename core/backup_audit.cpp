// The audit side of backups: platform.backup decided and recorded, platform.restore recorded.
#include "sealtrain/core/backup_audit.h"

#include "audited_transaction.h"
#include "sealtrain/core/permissions.h"

#include <utility>

namespace sealtrain::core {

BackupAudit::BackupAudit(AuditedTransactions& gate)
    : gate_(gate)
{
}

Result<void> BackupAudit::take(const std::string& session, const Make& make)
{
    const AuditedRequest request{std::string(kBackupAction),
                                 permission::kPlatformBackup,
                                 {},
                                 {"platform", "data-directory"}};
    auto caller =
        gate_.admit(session, request, [](const Caller&, audit::EntryDraft&) { return success(); });
    if (!caller)
        return caller.error();
    auto details = make();
    if (!details) {
        (void)gate_.recordRefusal(*caller, request, audit::Outcome::Failed, details.error());
        return details.error();
    }
    return gate_.perform(session, request, [&](const Caller&, audit::EntryDraft& draft) {
        for (auto& detail : *details)
            draft.details.push_back(std::move(detail));
        return success();
    });
}

Result<void> BackupAudit::recordRestore(const std::string& operatorName,
                                        std::vector<audit::Detail> details)
{
    return gate_.performWithoutSession(
        {std::string(kRestoreAction), {}, {}, {"platform", "data-directory"}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            draft.actor = {audit::ActorKind::System, "restore:" + operatorName, "", "local"};
            for (auto& detail : details)
                draft.details.push_back(std::move(detail));
            return success();
        });
}

}  // namespace sealtrain::core
