// The compliance report's evidence: the database's users and jobs, and the audit entries that
// bear on each control, sorted in one pass over the log.
#include "compliance_evidence.h"

#include "audited_transaction.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/database.h"
#include "sealtrain/core/reason_codes.h"
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

// The refusal's reason code (reason_codes.h), written by the control plane; never the sentence,
// which may quote what a caller typed (issue #49).
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
    return success();
}

void indexEntries(const std::vector<audit::Entry>& entries, Evidence& evidence)
{
    std::map<std::string, UserFact*> users;
    for (auto& user : evidence.users)
        users[user.name] = &user;
    std::map<std::string, JobFact*> jobs;
    for (auto& job : evidence.jobs)
        jobs[std::to_string(job.id)] = &job;
    LogEvidence& log = evidence.log;
    for (const audit::Entry& e : entries) {
        const std::uint64_t seq = e.sequence;
        const bool ok = e.outcome == audit::Outcome::Ok;
        if (e.outcome == audit::Outcome::Denied) {
            log.denied.push_back(seq);
            const std::string code = reasonCodeOf(e);
            if (reason::isSeparationOfDuties(code))
                log.dutyRefusals.push_back(seq);
            if (code == reason::kSessionExpired.name())
                log.expiredSessions.push_back(seq);
        }
        if (detailText(e, "certificate_serial"))
            log.overMutualTls.push_back(seq);
        if (ok && isAccessChange(e.action))
            log.accessChanges.push_back(seq);
        if (ok && isRemoval(e.action))
            log.removals.push_back(seq);
        if (ok && e.action.ends_with(".approve"))
            log.approvals.push_back(seq);
        const auto user = e.target.kind == "user" ? users.find(e.target.id) : users.end();
        const auto job = e.target.kind == "job" ? jobs.find(e.target.id) : jobs.end();
        if (e.action == "control.init" && ok) {
            log.init.push_back(seq);
            if (user != users.end()) {
                user->second->created = seq;
                user->second->secondFactorIssued = seq;
            }
        } else if (e.action == "user.create" && ok) {
            log.userCreates.push_back(seq);
            if (user != users.end())
                user->second->created = seq;
        } else if ((e.action == "user.complete_reset" || e.action == "user.totp_confirm") && ok) {
            if (user != users.end())
                user->second->secondFactorIssued = seq;
        } else if (e.action == "session.sign_in") {
            if (ok) {
                log.signInsOk.push_back(seq);
                if (e.actor.authMethod != kAuthMethod)
                    log.signInsWithoutMfa.push_back(seq);
            } else if (e.outcome == audit::Outcome::Denied) {
                log.signInsDenied.push_back(seq);
                if (detailText(e, "locked_until")
                    || reasonCodeOf(e) == reason::kAccountLocked.name())
                    log.lockouts.push_back(seq);
            }
        } else if (e.action == "grant.break_glass" && ok) {
            log.breakGlass.push_back({seq, e.actor.id, e.target.id,
                                      detailText(e, "break_glass_reason").value_or(""),
                                      numberOr(detailText(e, "expires_in_s"), -1)});
        } else if (e.action == "worker.revoke" && ok) {
            log.workerRevokes.push_back(seq);
        } else if (e.action == "worker.connect" && e.outcome == audit::Outcome::Denied) {
            log.revokedRefused.push_back(seq);
        } else if (e.action == "keyring.rotate" && ok) {
            log.rotations.push_back(seq);
        } else if (e.action == "dataset.import" && ok) {
            log.sealedImports.push_back(seq);
        } else if (job != jobs.end() && ok) {
            JobFact& fact = *job->second;
            if (e.action == "job.submit" && !fact.submitEntry)
                fact.submitEntry = seq;
            else if (e.action == "job.approve" && e.actor.id == fact.approver) {
                fact.approveEntry = seq;
                fact.approveEntryActor = e.actor.id;
                fact.approvedSha256 = detailText(e, "sha256").value_or("");
            } else if ((e.action == "job.dispatch" || e.action == "job.start") && !fact.runEntry)
                fact.runEntry = seq;
        }
    }
}

}  // namespace sealtrain::core::compliance_internal
