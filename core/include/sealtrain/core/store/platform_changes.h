// The control plane's own changes to the platform (a start, an upgrade, a witness attached, reset
// or detached, a migration, a signing certificate issued anew), audited with the control plane as
// the actor and the data directory as the target. What a concept that records such a change is
// given, rather than the whole control plane (issue #50: the concepts below the control plane do
// not reach up to it).
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/base/result.h"

#include <functional>
#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

class PlatformChanges final {
public:
    // `gate` and `log` (the control plane's) must outlive this object.
    PlatformChanges(AuditedTransactions& gate, audit::AuditLog& log) noexcept
        : gate_(&gate)
        , log_(&log)
    {
    }

    // Audits `action` with `details`. `alongside`, when given, runs in the entry's transaction:
    // the entry and what it writes commit together or not at all.
    [[nodiscard]] Result<void> record(const std::string& action, std::vector<audit::Detail> details,
                                      const std::function<Result<void>()>& alongside = {}) const;

    // The audit log, for what it knows of its witnesses.
    [[nodiscard]] audit::AuditLog& auditLog() const noexcept { return *log_; }

private:
    AuditedTransactions* gate_;
    audit::AuditLog* log_;
};

}  // namespace sealtrain::core
