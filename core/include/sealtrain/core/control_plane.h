// The control plane's service layer: the API the gRPC server will expose one to one. It opens
// the audit log over the database and owns one service per concept, all walking through one
// audited transaction (core/store/audited_transaction.h): every call but init and sign-in takes the
// caller's session, is authorised by one check, and every decision, allowed or denied, is
// appended to the audit log in the same database transaction as the change it allows. When the
// entry can not be written the change is rolled back and the caller gets the error (fail closed).
#pragma once

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/access/access.h"
#include "sealtrain/core/audit/queries.h"
#include "sealtrain/core/compliance/compliance.h"
#include "sealtrain/core/control_plane_options.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/identity/identity.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/jobs/runs/checkpoints.h"
#include "sealtrain/core/jobs/runs/runs.h"
#include "sealtrain/core/jobs/scheduling/budgets.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/jobs/submissions.h"
#include "sealtrain/core/jobs/watch.h"
#include "sealtrain/core/keys/keyring_changes.h"
#include "sealtrain/core/platform/backup_audit.h"
#include "sealtrain/core/registry/registry.h"
#include "sealtrain/core/registry/starting_model.h"
#include "sealtrain/core/store/call_origin.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/platform_changes.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/signing.h"

#include <functional>
#include <memory>
#include <optional>

namespace sealtrain::core {

class AuditedTransactions;

class ControlPlane final {
public:
    // `database`, `store`, `signingKey`, `auditKey` (may be null) and `clock` must outlive the
    // control plane. `store` is normally a SqlAuditStore over `database`.
    [[nodiscard]] static Result<std::unique_ptr<ControlPlane>>
    open(Database& database, audit::AuditStore& store, const crypto::SigningKey& signingKey,
         const audit::AuditKey* auditKey, const audit::Clock& clock,
         ControlPlaneOptions options = {}, audit::LogOptions logOptions = {});

    ControlPlane(const ControlPlane&) = delete;
    ControlPlane& operator=(const ControlPlane&) = delete;
    ~ControlPlane();

    // Users, credentials, sign-in and sessions.
    [[nodiscard]] Identity& identity() noexcept { return identity_; }
    // Roles, grants, break-glass and separation of duties.
    [[nodiscard]] Access& access() noexcept { return access_; }
    // Submissions that need a second person's approval.
    [[nodiscard]] Submissions& submissions() noexcept { return submissions_; }
    // Sealed datasets: import, listing, read grants, the read-key release check.
    [[nodiscard]] Datasets& datasets() noexcept { return datasets_; }
    // Training jobs: submission, vetting, approval and the runs' transitions.
    [[nodiscard]] Jobs& jobs() noexcept { return jobs_; }
    // Enrolled workers: enrolment tokens, enrolment, revocation, heartbeats.
    [[nodiscard]] Workers& workers() noexcept { return workers_; }
    // The queue and the runs on workers: dispatch, fencing, metrics, checkpoints, restarts.
    [[nodiscard]] Scheduler& scheduler() noexcept { return scheduler_; }
    // Following a job as it runs (one audited opening, then reads).
    [[nodiscard]] JobWatches& jobWatches() noexcept { return jobWatches_; }
    // A job's checkpoints: the list, and one chosen to download (each audited).
    [[nodiscard]] JobCheckpointReads& jobCheckpoints() noexcept { return jobCheckpoints_; }
    // Runs: jobs' attempts and metrics histories (runs.h).
    [[nodiscard]] RunReads& runs() noexcept { return runs_; }
    // The model registry: versions, aliases, approved promotions, lineage (registry.h).
    [[nodiscard]] Registry& registry() noexcept { return registry_; }
    // The job policy and the callers' projects' budget use (each call audited).
    [[nodiscard]] PolicyReads& policyReads() noexcept { return policyReads_; }
    // Reading and exporting the audit log.
    [[nodiscard]] AuditQueries& auditQueries() noexcept { return auditQueries_; }
    // Rotating, retiring and re-wrapping KEKs, the passphrase, the keyring's generation.
    [[nodiscard]] KeyringChanges& keyringChanges() noexcept { return keyringChanges_; }
    // The compliance report: controls judged from live evidence, and its signed bundle.
    [[nodiscard]] Compliance& compliance() noexcept { return compliance_; }
    // Who may take a backup, and the entries of backups and restores (platform/backup_audit.h).
    [[nodiscard]] BackupAudit& backups() noexcept { return backups_; }

    // Approves job `id` as it is (Jobs::approve: its spec's SHA-256 `specSha256`, another
    // person than its submitter) and puts it into the workers' queue at once
    // (Scheduler::enqueue), in the caller's one transaction.
    [[nodiscard]] Result<JobInfo> approveJob(const std::string& session, std::int64_t id,
                                             const std::string& specSha256);

    // Revokes worker `name` (Workers::revoke), then has `publish` refuse its certificate's serial
    // at every later handshake, then queues its job again for another worker, in the caller's
    // one transaction.
    [[nodiscard]] Result<WorkerInfo>
    revokeWorker(const std::string& session, const std::string& name, const std::string& reason,
                 const std::function<Result<void>(const std::string& serial)>& publish);

    // Where the call being served came from (store/call_origin.h); recorded in every entry written
    // until it is cleared (nullopt). Set it only where the control plane is used by one thread
    // at a time: in a group commit, or under the server's lock.
    void setCallOrigin(std::optional<CallOrigin> origin);
    // Writes the anonymous refusals counted instead of written one by one: those whose window
    // has passed, or all (at shutdown). Same threading rule as setCallOrigin.
    [[nodiscard]] Result<void> flushAnonymousRefusals(bool all);
    // Audits `action` turned away before the caller could be known (the server too busy to
    // check a password, a sign-in's CSR the CA would refuse), counted like the other anonymous
    // refusals.
    [[nodiscard]] Result<void> recordBusyRefusal(const std::string& action,
                                                 const std::string& targetKind, const Error& why);
    // Audits `count` TLS handshakes refused between Unix seconds `first` and `last` because the
    // client certificate with `serial` was revoked or could not be read (issue #54: the server
    // counts them per serial and window; gRPC's verifier does not say the peer). One denied
    // entry, `certificate.refuse`: its actor the worker whose certificate it is, else `owner`
    // (the user whose session it was, as the server knew it), else nobody; details
    // `certificate_serial`, `repeated`, `window_start`, `last`.
    [[nodiscard]] Result<void> recordRefusedHandshakes(const std::string& serial,
                                                       const std::string& owner,
                                                       std::uint64_t count, std::int64_t first,
                                                       std::int64_t last);
    // Audits a change the control plane made to itself when it opened (a trust root made, a
    // signing certificate issued anew, a migration, a start): actor the control plane, target
    // the data directory. `alongside`, when given, runs in the entry's transaction: the entry
    // and what it writes commit together or not at all.
    [[nodiscard]] Result<void>
    recordPlatformChange(const std::string& action, std::vector<audit::Detail> details,
                         const std::function<Result<void>()>& alongside = {});
    // The same, as given to the concepts that record such changes (witnesses, starts).
    [[nodiscard]] PlatformChanges platformChanges() noexcept;

    [[nodiscard]] const audit::AuditLog& auditLog() const noexcept { return *log_; }
    [[nodiscard]] const ControlPlaneOptions& options() const noexcept { return options_; }
    // For signing heads (DataDirectory::signPendingEntries); appending goes through the services.
    [[nodiscard]] audit::AuditLog& auditLog() noexcept { return *log_; }

private:
    ControlPlane(Database& database, const audit::AuditKey* auditKey, const audit::Clock& clock,
                 ControlPlaneOptions options, std::unique_ptr<audit::AuditLog> log);

    ControlPlaneOptions options_;
    std::unique_ptr<audit::AuditLog> log_;
    std::unique_ptr<AuditedTransactions> gate_;
    Access access_;
    Identity identity_;
    Submissions submissions_;
    Datasets datasets_;
    // What the jobs read of the registry above them (jobs/model_lookup.h): before jobs_ and
    // scheduler_, which hold it.
    RegistryModelLookup models_;
    Jobs jobs_;
    Workers workers_;
    Scheduler scheduler_;
    JobWatches jobWatches_;
    JobCheckpointReads jobCheckpoints_;
    RunReads runs_;
    Registry registry_;
    PolicyReads policyReads_;
    AuditQueries auditQueries_;
    KeyringChanges keyringChanges_;
    Compliance compliance_;
    BackupAudit backups_;
};

}  // namespace sealtrain::core
