// The audit side of backups: platform.backup decided and recorded, platform.restore recorded.
#include "sealtrain/core/platform/backup_audit.h"

#include "sealtrain/core/access/permissions.h"
#include "store/audited_transaction.h"

#include <utility>

namespace sealtrain::core {

BackupAudit::BackupAudit(AuditedTransactions& gate)
    : gate_(gate)
{
}

namespace {

AuditedRequest backupRequest()
{
    return {std::string(kBackupAction),
            permission::kPlatformBackup,
            {},
            {"platform", "data-directory"}};
}

}  // namespace

Result<void> BackupAudit::admit(const std::string& session)
{
    auto caller = gate_.admit(session, backupRequest(),
                              [](const Caller&, audit::EntryDraft&) { return success(); });
    if (!caller)
        return caller.error();
    return success();
}

Result<void> BackupAudit::record(const std::string& session,
                                 Result<std::vector<audit::Detail>> facts)
{
    return gate_.perform(session, backupRequest(), [&](const Caller&, audit::EntryDraft& draft) {
        if (!facts)
            return Result<void>(facts.error());
        for (auto& detail : *facts)
            draft.details.push_back(std::move(detail));
        return success();
    });
}

Result<void> BackupAudit::recordRestore(const std::string& operatorName,
                                        std::vector<audit::Detail> details, bool lossPossible)
{
    return gate_.performWithoutSession(
        {std::string(kRestoreAction), {}, {}, {"platform", "data-directory"}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            draft.actor = {audit::ActorKind::System, "restore:" + operatorName, "", "local"};
            // Every session the backup brings back ends here: one revoked after the backup must
            // not live again, and everyone signs in anew.
            SEALTRAIN_TRY(
                gate_.database().run("UPDATE sessions SET revoked = 1 WHERE revoked = 0"));
            draft.details.push_back(
                audit::textDetail("sessions_revoked", std::to_string(gate_.database().changes())));
            // A worker revoked, a token used or a code spent after the backup would come back
            // with it: when that span may be lost, none of them is trusted again.
            const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                                 gate_.clock().now().time_since_epoch())
                                 .count();
            const auto changed = [&](std::string_view sql,
                                     SqlValues arguments) -> Result<std::string> {
                if (!lossPossible)
                    return std::string("0");
                SEALTRAIN_TRY(gate_.database().run(sql, arguments));
                return std::to_string(gate_.database().changes());
            };
            auto workers =
                changed("UPDATE workers SET state = 'revoked' WHERE state = 'active'", {});
            if (!workers)
                return workers.error();
            auto tokens =
                changed("UPDATE worker_tokens SET expires = ? WHERE used IS NULL AND expires > ?",
                        {now, now});
            if (!tokens)
                return tokens.error();
            auto codes = changed("UPDATE users SET reset_code_expires = ? WHERE reset_code_hash "
                                 "IS NOT NULL AND reset_code_expires > ?",
                                 {now, now});
            if (!codes)
                return codes.error();
            draft.details.push_back(audit::textDetail("workers_revoked", *workers));
            draft.details.push_back(audit::textDetail("worker_tokens_voided", *tokens));
            draft.details.push_back(audit::textDetail("codes_voided", *codes));
            for (auto& detail : details)
                draft.details.push_back(std::move(detail));
            return success();
        });
}

}  // namespace sealtrain::core
