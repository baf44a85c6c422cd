// Opening the control plane: the audit log over the store, the audited transaction over both,
// and the services that walk through it.
#include "sealtrain/core/control_plane.h"

#include "store/audited_transaction.h"

#include <fmt/format.h>

#include <optional>

namespace sealtrain::core {

ControlPlane::ControlPlane(Database& database, const audit::AuditKey* auditKey,
                           const audit::Clock& clock, ControlPlaneOptions options,
                           std::unique_ptr<audit::AuditLog> log)
    : options_(std::move(options))
    , log_(std::move(log))
    , gate_(std::make_unique<AuditedTransactions>(database, *log_, auditKey, clock, options_))
    , access_(*gate_, options_)
    , identity_(*gate_, access_, options_)
    , submissions_(*gate_)
    , datasets_(*gate_)
    , jobs_(*gate_, models_, parseJobPolicy(defaultJobPolicyText()).value())
    , workers_(*gate_)
    , scheduler_(*gate_, models_, parseJobPolicy(defaultJobPolicyText()).value())
    , jobWatches_(*gate_, scheduler_)
    , jobCheckpoints_(*gate_, scheduler_)
    , runs_(*gate_, scheduler_)
    , registry_(*gate_, scheduler_)
    , policyReads_(*gate_, jobs_)
    , auditQueries_(*gate_)
    , keyringChanges_(*gate_)
    , compliance_(*gate_)
    , backups_(*gate_)
{
}

ControlPlane::~ControlPlane() = default;

Result<std::unique_ptr<ControlPlane>>
ControlPlane::open(Database& database, audit::AuditStore& store,
                   const crypto::SigningKey& signingKey, const audit::AuditKey* auditKey,
                   const audit::Clock& clock, ControlPlaneOptions options,
                   audit::LogOptions logOptions)
{
    if (options.passwordHashing.opsLimit < crypto::kArgon2Floor.opsLimit
        || options.passwordHashing.memLimitBytes < crypto::kArgon2Floor.memLimitBytes)
        return Error(ErrorCode::InvalidArgument,
                     "The password hashing parameters are below the Argon2id floor; raise them.");
    if (logOptions.origin.empty())
        logOptions.origin = "sealtrain.local/control";
    auto log = audit::AuditLog::open(store, signingKey, auditKey, clock, std::move(logOptions));
    if (!log)
        return log.error();
    std::unique_ptr<ControlPlane> plane(
        new ControlPlane(database, auditKey, clock, std::move(options), std::move(*log)));
    // Change management (issue #49): the schema migrations this open applied, audited before
    // anything else is done with the database.
    if (const auto migrated = database.takeMigrationRun())
        SEALTRAIN_TRY(plane->recordPlatformChange(
            "platform.migrate", {audit::textDetail("from_version", std::to_string(migrated->from)),
                                 audit::textDetail("to_version", std::to_string(migrated->to))}));
    return plane;
}

Result<JobInfo> ControlPlane::approveJob(const std::string& session, std::int64_t id,
                                         const std::string& specSha256)
{
    JobInfo approved;
    SEALTRAIN_ASSIGN(approved, jobs_.approve(session, id, specSha256));
    return scheduler_.enqueue(approved.id);
}

Result<WorkerInfo>
ControlPlane::revokeWorker(const std::string& session, const std::string& name,
                           const std::string& reason,
                           const std::function<Result<void>(const std::string& serial)>& publish)
{
    WorkerInfo revoked;
    SEALTRAIN_ASSIGN(revoked, workers_.revoke(session, name, reason));
    SEALTRAIN_TRY(publish(revoked.serial));
    SEALTRAIN_TRY(
        scheduler_.releaseWorker(revoked.id, fmt::format("worker {} was revoked", revoked.name)));
    return revoked;
}

Result<void> ControlPlane::flushAnonymousRefusals(bool all)
{
    return gate_->flushAnonymousRefusals(all);
}

Result<void> ControlPlane::recordBusyRefusal(const std::string& action,
                                             const std::string& targetKind, const Error& why)
{
    return gate_->recordAnonymousRefusal({action, {}, {}, {targetKind, "*"}}, why);
}

Result<void> ControlPlane::recordRefusedHandshakes(const std::string& serial,
                                                   const std::string& owner, std::uint64_t count,
                                                   std::int64_t first, std::int64_t last)
{
    const std::string shown = serial.substr(0, 64);
    return gate_->performWithoutSession(
        {"certificate.refuse", {}, {}, {"certificate", shown}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            std::optional<std::string> worker;
            SEALTRAIN_TRY(
                gate_->database().queryOne("SELECT name FROM workers WHERE serial = ?", {shown},
                                           [&](const Statement& row) { worker = row.text(0); }));
            if (worker)
                draft.actor = {audit::ActorKind::Worker, *worker, "", "mtls"};
            else if (!owner.empty())
                draft.actor = {audit::ActorKind::User, owner.substr(0, 64), "",
                               std::string(kAuthMethod)};
            else
                draft.actor = {audit::ActorKind::User, "unknown", "", std::string(kAuthMethod)};
            draft.outcome = audit::Outcome::Denied;
            draft.reason =
                fmt::format("{} TLS handshake{} presenting the client certificate {} "
                            "{} refused: it is revoked or could not be read",
                            count, count == 1 ? "" : "s", shown, count == 1 ? "was" : "were");
            draft.details.push_back(audit::textDetail("certificate_serial", shown));
            draft.details.push_back(audit::textDetail("repeated", std::to_string(count)));
            draft.details.push_back(audit::textDetail("window_start", std::to_string(first)));
            draft.details.push_back(audit::textDetail("last", std::to_string(last)));
            return success();
        });
}

Result<void> ControlPlane::recordPlatformChange(const std::string& action,
                                                std::vector<audit::Detail> details,
                                                const std::function<Result<void>()>& alongside)
{
    return platformChanges().record(action, std::move(details), alongside);
}

PlatformChanges ControlPlane::platformChanges() noexcept
{
    return {*gate_, *log_};
}

void ControlPlane::setCallOrigin(std::optional<CallOrigin> origin)
{
    gate_->setOrigin(std::move(origin));
}

}  // namespace sealtrain::core
