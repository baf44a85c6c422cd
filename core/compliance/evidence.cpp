// The compliance report's evidence: the database's users and jobs, and the audit entries that
// bear on each control, sorted in one pass over the log.
#include "compliance/evidence.h"

#include "store/audited_transaction.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/access/users.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/reason_codes.h"
#include "sealtrain/crypto/hash.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace sealtrain::core::compliance_internal {
namespace {

std::optional<std::string> detailText(const audit::Entry& entry, std::string_view name)
{
    for (const auto& detail : entry.details)
        if (detail.name == name && detail.kind == audit::Detail::Kind::Text)
            return std::string(detail.value.begin(), detail.value.end());
    return std::nullopt;
}

std::int64_t numberOr(const std::optional<std::string>& text, std::int64_t fallback)
{
    if (!text)
        return fallback;
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
    return error == std::errc() && end == text->data() + text->size() ? value : fallback;
}

bool isAccessChange(const std::string& action)
{
    return action.starts_with("grant.") || action == "role.create" || action == "role.delete"
           || action == "user.disable" || action == "user.enable" || action == "user.reset"
           || action == "user.reset_approve";
}

bool isRemoval(const std::string& action)
{
    return action == "user.disable" || action == "grant.revoke" || action == "session.revoke";
}

// The refusal's reason code (store/reason_codes.h), written by the control plane; never the
// sentence, which may quote what a caller typed (issue #49).
std::string reasonCodeOf(const audit::Entry& entry)
{
    return detailText(entry, "reason_code").value_or("");
}

}  // namespace

Result<void> readDatabaseFacts(const Database& database, Evidence& evidence)
{
    SEALTRAIN_TRY(database.query(
        "SELECT name, disabled, length(totp_secret), reset_code_hash IS NOT NULL FROM users "
        "ORDER BY name",
        {}, [&](const Statement& row) {
            UserFact user;
            user.name = row.text(0);
            user.disabled = row.integer(1) != 0;
            user.hasTotp = !row.isNull(2) && row.integer(2) > 0;
            user.inReset = row.integer(3) != 0;
            evidence.users.push_back(std::move(user));
        }));
    auto admins = enabledAdminNames(database);
    if (!admins)
        return admins.error();
    evidence.admins = std::move(*admins);
    SEALTRAIN_TRY(database.query(
        "SELECT j.id, j.name, j.state, s.name, COALESCE(a.name, ''), j.spec, "
        "j.state IN ('approved', 'queued', 'running', 'succeeded') "
        "OR EXISTS (SELECT 1 FROM job_attempts t WHERE t.job_id = j.id) "
        "FROM jobs j JOIN users s ON s.id = j.submitter LEFT JOIN users a ON a.id = j.approver "
        "ORDER BY j.id",
        {}, [&](const Statement& row) {
            JobFact job;
            job.id = row.integer(0);
            job.name = row.text(1);
            job.state = row.text(2);
            job.submitter = row.text(3);
            job.approver = row.text(4);
            // Re-hashed here, not read from a column an edit could keep in step (issue #49).
            const std::string spec = row.text(5);
            job.specSha256 = toHex(
                crypto::sha256({reinterpret_cast<const std::uint8_t*>(spec.data()), spec.size()}));
            job.pastApproval = row.integer(6) != 0;
            evidence.jobs.push_back(std::move(job));
        }));
    SEALTRAIN_TRY(database.query(
        "SELECT version, applied FROM schema_version ORDER BY version", {},
        [&](const Statement& row) {
            evidence.schema.push_back({static_cast<int>(row.integer(0)), row.integer(1)});
        }));
    SEALTRAIN_TRY(database.query(
        "SELECT 'Promotion ' || p.id || ' (' || v.name || '@' || v.version || ' to ' || p.alias "
        "|| ')', r.name, d.name FROM model_promotions p JOIN model_versions v ON v.id = "
        "p.version_id JOIN users r ON r.id = p.requested_by JOIN users d ON d.id = p.decided_by "
        "WHERE p.state = 'approved' "
        "UNION ALL SELECT 'Export ' || e.id || ' (' || v.name || '@' || v.version || ')', r.name, "
        "d.name FROM model_exports e JOIN model_versions v ON v.id = e.version_id JOIN users r ON "
        "r.id = e.requested_by JOIN users d ON d.id = e.decided_by WHERE e.state = 'approved'",
        {}, [&](const Statement& row) {
            evidence.approvedDecisions.push_back({row.text(0), row.text(1), row.text(2)});
        }));
    return success();
}

bool outsidePolicy(const BreakGlassUse& use, const ControlPlaneOptions& options)
{
    return use.reason.empty() || use.expiresInSeconds < 0
           || use.expiresInSeconds > options.maxBreakGlass.count();
}

void Tally::add(std::uint64_t sequence)
{
    ++count;
    newest.push_back(sequence);
    if (newest.size() > kMaxCitedPerClaim)
        newest.erase(newest.begin());
}

EvidenceIndex::EvidenceIndex(Evidence& evidence)
    : evidence_(evidence)
{
    for (auto& user : evidence.users)
        users_[user.name] = &user;
    for (auto& job : evidence.jobs)
        jobs_[std::to_string(job.id)] = &job;
}

void EvidenceIndex::add(const std::vector<audit::Entry>& entries)
{
    for (const audit::Entry& entry : entries)
        addEntry(entry);
}

void EvidenceIndex::addJobEntry(const audit::Entry& e, JobFact& fact, bool inPeriod)
{
    bool named = false;
    if (e.action == "job.submit" && !fact.submitEntry) {
        fact.submitEntry = e.sequence;
        named = true;
    } else if (e.action == "job.approve" && e.actor.id == fact.approver) {
        fact.approveEntry = e.sequence;
        fact.approveEntryActor = e.actor.id;
        fact.approvedSha256 = detailText(e, "sha256").value_or("");
        named = true;
    } else if ((e.action == "job.dispatch" || e.action == "job.start") && !fact.runEntry) {
        fact.runEntry = e.sequence;
        named = true;
    }
    if (named && inPeriod)
        fact.activeInPeriod = true;
}

// One entry sorted by what it shows: the period's tallies, and the entries users and jobs name
// (whatever their time: the facts of the present state need them).
bool LogEvidence::migrationAudited(std::int64_t version) const
{
    return std::any_of(auditedMigrations.begin(), auditedMigrations.end(), [&](const auto& run) {
        return run.first < version && version <= run.second;
    });
}

// The control plane's own changes (change management, CC8.1): only entries it wrote itself, as
// the system actor, count.
void EvidenceIndex::addPlatformEntry(const audit::Entry& e, bool inPeriod)
{
    LogEvidence& log = evidence_.log;
    Tally* tally = nullptr;
    if (e.action == "platform.start") {
        tally = &log.starts;
    } else if (e.action == "platform.upgrade") {
        tally = &log.upgrades;
    } else if (e.action == "platform.migrate") {
        tally = &log.migrations;
        const std::int64_t from = numberOr(detailText(e, "from_version"), -1);
        const std::int64_t to = numberOr(detailText(e, "to_version"), -1);
        if (from >= 0 && to > from)
            log.auditedMigrations.emplace_back(from, to);
    }
    if (tally != nullptr && inPeriod)
        tally->add(e.sequence);
}

void EvidenceIndex::addEntry(const audit::Entry& e)
{
    const std::uint64_t seq = e.sequence;
    const bool ok = e.outcome == audit::Outcome::Ok;
    const bool in = evidence_.period.contains(e.timeNs);
    LogEvidence& log = evidence_.log;
    const auto tally = [&](Tally& t) {
        if (in)
            t.add(seq);
    };
    if (in)
        ++log.entries;
    if (e.actor.kind == audit::ActorKind::System && ok && e.action.starts_with("platform."))
        addPlatformEntry(e, in);
    if (e.actor.kind == audit::ActorKind::System && ok && e.action == "audit.witness_attach")
        tally(log.witnessAttaches);
    if (e.actor.kind == audit::ActorKind::System && ok && e.action == "audit.witness_reset")
        tally(log.witnessResets);
    if (e.actor.kind == audit::ActorKind::System && ok && e.action == "audit.witness_detach")
        tally(log.witnessDetaches);
    if (e.outcome == audit::Outcome::Denied) {
        tally(log.denied);
        const std::string code = reasonCodeOf(e);
        if (reason::isSeparationOfDuties(code))
            tally(log.dutyRefusals);
        if (code == reason::kSessionExpired.name())
            tally(log.expiredSessions);
    }
    if (detailText(e, "certificate_serial"))
        tally(log.overMutualTls);
    if (ok && isAccessChange(e.action))
        tally(log.accessChanges);
    if (ok && isRemoval(e.action))
        tally(log.removals);
    if (ok && e.action.ends_with(".approve"))
        tally(log.approvals);
    const auto user = e.target.kind == "user" ? users_.find(e.target.id) : users_.end();
    UserFact* const named = user != users_.end() ? user->second : nullptr;
    if (e.action == "control.init" && ok) {
        tally(log.init);
        if (named != nullptr) {
            named->created = named->secondFactorIssued = seq;
            named->createdInPeriod = named->secondFactorInPeriod = in;
        }
    } else if (e.action == "user.create" && ok) {
        tally(log.userCreates);
        if (named != nullptr) {
            named->created = seq;
            named->createdInPeriod = in;
        }
    } else if ((e.action == "user.complete_reset" || e.action == "user.totp_confirm") && ok) {
        if (named != nullptr) {
            named->secondFactorIssued = seq;
            named->secondFactorInPeriod = in;
        }
    } else if (e.action == "session.sign_in") {
        if (ok) {
            tally(log.signInsOk);
            if (e.actor.authMethod != kAuthMethod)
                tally(log.signInsWithoutMfa);
        } else if (e.outcome == audit::Outcome::Denied) {
            tally(log.signInsDenied);
            if (detailText(e, "locked_until") || reasonCodeOf(e) == reason::kAccountLocked.name())
                tally(log.lockouts);
        }
    } else if (e.action == "grant.break_glass" && ok) {
        if (in) {
            ++log.breakGlassCount;
            BreakGlassUse use{seq, e.actor.id, e.target.id,
                              detailText(e, "break_glass_reason").value_or(""),
                              numberOr(detailText(e, "expires_in_s"), -1)};
            if (outsidePolicy(use, evidence_.options))
                log.breakGlassOutsidePolicy.add(seq);
            log.breakGlass.push_back(std::move(use));
            if (log.breakGlass.size() > kMaxBreakGlassListed)
                log.breakGlass.erase(log.breakGlass.begin());
        }
    } else if (e.action == "worker.revoke" && ok) {
        tally(log.workerRevokes);
    } else if (e.action == "worker.connect" && e.outcome == audit::Outcome::Denied) {
        tally(log.revokedRefused);
    } else if (e.action == "keyring.rotate" && ok) {
        tally(log.rotations);
    } else if (e.action == "dataset.import" && ok) {
        tally(log.sealedImports);
    } else if (ok && e.target.kind == "job") {
        if (const auto job = jobs_.find(e.target.id); job != jobs_.end())
            addJobEntry(e, *job->second, in);
    }
}

}  // namespace sealtrain::core::compliance_internal
