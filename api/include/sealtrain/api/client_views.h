// What the client library hands back for the calls a desktop client needs beyond the CLI's
// (issue #29): the audit log browsed page by page and verified where it is kept. Plain values,
// no gRPC type; included by client.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::api {

// A detail of an audit entry: plain text, or a sensitive value's keyed hash (hex).
struct AuditDetailView {
    std::string name;
    std::string text;
    std::string keyedHash;
};

// An audit entry as the control plane decoded it (docs/formats/audit.md, "Entries").
struct AuditEntryView {
    std::uint64_t sequence = 0;
    std::uint64_t timeNs = 0;
    std::string actorKind;  // user, worker, system
    std::string actor;
    std::string actorSession;
    std::string authMethod;
    std::string action;
    std::string targetKind;
    std::string targetId;
    std::string outcome;  // ok, denied, failed
    std::string reason;
    std::string requestId;
    std::vector<std::string> approvalIds;
    std::vector<AuditDetailView> details;
};

// The audit entries an export or a page selects (audit/bundle.h's ExportFilter, without the
// audit layer).
struct AuditSelection {
    std::optional<std::uint64_t> fromTimeNs;  // inclusive, Unix nanoseconds
    std::optional<std::uint64_t> toTimeNs;    // exclusive
    std::string actor;
    std::string action;  // an action or a namespace such as "job.*"
    std::string targetKind;
    std::string targetId;
};

// Which entries a page holds: the export's selection, an outcome, and where to go on from.
struct AuditQueryOptions {
    AuditSelection selection;
    std::string outcome;       // "", ok, denied, failed
    std::uint64_t cursor = 0;  // the previous page's nextCursor; 0: from the end
    std::uint32_t limit = 200;
    bool oldestFirst = false;
};

struct AuditPageView {
    std::vector<AuditEntryView> entries;
    std::uint64_t nextCursor = 0;  // 0: nothing more in that direction
    std::uint64_t logSize = 0;
};

// A checkpoint the control plane recorded for a job (Jobs.WatchJob).
struct JobCheckpointView {
    std::int64_t step = 0;
    std::int64_t attempt = 0;
    std::string worker;  // whose key signed it
    std::string sealedSha256;
    std::string plaintextSha256;
    std::int64_t recordedUnix = 0;
};

// The job policy and the caller's projects' GPU-hour budget use (Jobs.ShowPolicy).
struct PolicySummary {
    struct Pool {
        std::string name;
        std::vector<std::string> classifications;  // what data its workers may see
        double maxParameters = 0.0;                // what one job in it may cost
        double maxMemoryGib = 0.0;
        double maxStepTflop = 0.0;
    };
    struct Budget {
        std::string project;
        double gpuHours = 0.0;   // the budget
        double alertAt = 0.8;    // share at which vetting warns
        double usedHours = 0.0;  // used by the project's jobs
        double heldHours = 0.0;  // used, plus the limits of the jobs that may still run
        double cpuHours = 0.0;   // the CPU-hour budget, and the same two figures for it
        double cpuUsedHours = 0.0;
        double cpuHeldHours = 0.0;
    };
    std::vector<Pool> pools;
    std::vector<std::pair<std::string, double>> caps;  // policy-file names, in its order
    std::int64_t sampleMaxLength = 0;
    std::int64_t sampleMaxPromptBytes = 0;
    std::int64_t sampleMaxSeconds = 0;
    std::vector<Budget> budgets;  // only the caller's projects
};

// A reset waiting for a second admin (Users.ListPendingResets).
struct PendingResetView {
    std::string user;
    std::string requestedBy;
    std::int64_t requestedUnix = 0;
};

// A new TOTP secret waiting for a code from it (Sessions.StartTotpChange): its otpauth:// URI
// holds the secret, to be shown once and never stored.
struct PendingTotpView {
    std::string otpauthUri;
    std::int64_t expiresUnix = 0;
};

// What a signed-in client may know of the control plane (Platform.GetServerInfo).
// The audit forwarder's health (GetServerInfo; docs/formats/audit-forward.md, "Delivery").
struct AuditForwardingView {
    std::string kind;  // "file", "journal" or "syslog-tls"
    std::uint64_t delivered = 0;
    std::uint64_t logSize = 0;
    std::uint64_t headSize = 0;
    std::int64_t lastDeliveryUnix = 0;  // 0: never
    std::int64_t failingSinceUnix = 0;  // 0: not failing
    std::uint64_t failures = 0;

    [[nodiscard]] std::uint64_t lag() const noexcept
    {
        return logSize > delivered ? logSize - delivered : 0;
    }
};

struct ServerInfoView {
    std::string version;
    std::string apiVersion;  // "sealtrain.v1"
    std::int64_t sessionIdleSeconds = 0;
    std::int64_t sessionMaxSeconds = 0;
    std::uint32_t maxUploads = 0;
    std::uint64_t maxImportBytes = 0;
    std::uint32_t maxWatches = 0;
    std::uint32_t maxAuditPage = 0;
    std::uint32_t maxPasswordChecks = 0;
    std::uint64_t maxSpecBytes = 0;
    std::int64_t enrolmentCodeLifetimeSeconds = 0;  // enrolment and reset codes expire after it
    std::uint32_t auditWitnessesOutside = 0;  // witnesses outside the data directory (a count)
    // How far the audit forward target has the log; nullopt when nothing is forwarded.
    std::optional<AuditForwardingView> auditForwarding;
};

// A permission of the catalogue (Access.ListPermissions).
struct PermissionView {
    std::string name;
    std::string description;
    std::string duty;  // its duty class, e.g. "infrastructure" (docs/operations/access-control.md)
};

// The control plane's check of its live log (Audit.VerifyLog).
struct LogVerificationView {
    bool ok = false;
    std::string error;  // the first failure; empty when ok
    std::uint64_t entries = 0;
    std::uint64_t heads = 0;
    std::uint64_t witnessHeads = 0;
    std::uint64_t newestHeadSize = 0;
    std::int64_t newestHeadUnix = 0;
    std::string newestHeadRoot;
    std::string keyId;
};

}  // namespace sealtrain::api
