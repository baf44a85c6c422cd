// The audit side of backups (docs/operations/backup.md): who may take one (platform.backup), the
// entry that records each backup with its head and digest, and the first entry of a restored
// control plane. The archive itself is written and read by core/backup.h; this is the part the
// control plane owns, so that the decision and its entry walk through the audited transaction.
#pragma once

#include "sealtrain/audit/entry.h"
#include "sealtrain/base/result.h"

#include <functional>
#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

// The audit actions.
inline constexpr std::string_view kBackupAction = "platform.backup";
inline constexpr std::string_view kRestoreAction = "platform.restore";

class BackupAudit final {
public:
    // The archive's facts, as the entry's details.
    using Make = std::function<Result<std::vector<audit::Detail>>()>;

    // `gate` must outlive this object.
    explicit BackupAudit(AuditedTransactions& gate);

    // platform.backup: checks the caller first (a refusal is audited as denied, and `make` never
    // runs), then runs `make` outside any transaction, then appends the entry with its details;
    // a failure of `make` is audited as failed.
    [[nodiscard]] Result<void> take(const std::string& session, const Make& make);

    // platform.restore: appended by the restore into the restored database, as its first entry
    // after the backup's head; the actor is the operator's account on the machine.
    [[nodiscard]] Result<void> recordRestore(const std::string& operatorName,
                                             std::vector<audit::Detail> details);

private:
    AuditedTransactions& gate_;
};

}  // namespace sealtrain::core
