// The audit side of backups (docs/operations/backup.md): who may take one (platform.backup), the
// entry that records each backup with its head and digest, and the first entry of a restored
// control plane. The archive itself is written and read by core/backup/backup.h; this is the part
// the control plane owns, so that the decision and its entry walk through the audited transaction
// (in platform/, below the control plane: platform.backup and platform.restore are the platform's
// actions).
#pragma once

#include "sealtrain/audit/entry.h"
#include "sealtrain/base/result.h"

#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

// The audit actions.
inline constexpr std::string_view kBackupAction = "platform.backup";
inline constexpr std::string_view kRestoreAction = "platform.restore";

class BackupAudit final {
public:
    // `gate` must outlive this object.
    explicit BackupAudit(AuditedTransactions& gate);

    // platform.backup, checked before anything is done: a refusal is audited as denied. A
    // success appends nothing yet (record does, once the archive is made).
    [[nodiscard]] Result<void> admit(const std::string& session);
    // The backup's entry: with `facts` as its details, or, when they are an error, that error
    // audited as failed (and returned).
    [[nodiscard]] Result<void> record(const std::string& session,
                                      Result<std::vector<audit::Detail>> facts);

    // platform.restore: appended by the restore into the restored database, as its first entry
    // after the backup's head; the actor is the operator's account on the machine. Every session
    // the backup holds is revoked in the same transaction (detail `sessions_revoked`). When
    // entries after the backup may be lost (`lossPossible`: no witness, or a loss accepted),
    // what they may have ended stays ended: every active worker is revoked, every unused worker
    // enrolment token and open enrolment or reset code expires (details `workers_revoked`,
    // `worker_tokens_voided`, `codes_voided`).
    [[nodiscard]] Result<void> recordRestore(const std::string& operatorName,
                                             std::vector<audit::Detail> details, bool lossPossible);

private:
    AuditedTransactions& gate_;
};

}  // namespace sealtrain::core
