// The compliance report's controls, judged from the evidence (compliance/evidence.h): one
// function per control, each a list of claims with the entries that prove them. A claim is only
// made for what the control plane enforces; a broken rule is a broken claim, never left out.
#include "compliance/evidence.h"

#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/core/access/access.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iterator>

namespace sealtrain::core {

const char* controlVerdictName(ControlVerdict verdict) noexcept
{
    switch (verdict) {
    case ControlVerdict::Passed: return "passed";
    case ControlVerdict::Failed: return "failed";
    case ControlVerdict::NoEvidence: return "no evidence";
    }
    return "no evidence";
}

ControlVerdict verdictOf(const std::vector<ComplianceClaim>& claims)
{
    const bool broken = std::any_of(claims.begin(), claims.end(),
                                    [](const ComplianceClaim& claim) { return claim.broken; });
    if (broken)
        return ControlVerdict::Failed;
    const bool observed = std::any_of(claims.begin(), claims.end(), [](const ComplianceClaim& c) {
        return c.kind == ClaimKind::Observed && !c.sequences.empty();
    });
    return observed ? ControlVerdict::Passed : ControlVerdict::NoEvidence;
}

namespace compliance_internal {
namespace {

using Sequences = std::vector<std::uint64_t>;

Tally tallyOf(const Sequences& all)
{
    Tally t;
    for (const std::uint64_t sequence : all)
        t.add(sequence);
    return t;
}

// " (N in all; the newest 25 cited)" when not every entry is cited.
std::string citedNote(std::uint64_t count)
{
    return count > kMaxCitedPerClaim
               ? fmt::format(" ({} in all; the newest {} cited)", count, kMaxCitedPerClaim)
               : std::string();
}

std::string plural(std::uint64_t count, std::string_view one, std::string_view many)
{
    return fmt::format("{} {}", count, count == 1 ? one : many);
}

struct Builder {
    const Evidence& evidence;
    ControlResult control;

    Builder(const Evidence& e, std::string framework, std::string id, std::string title,
            std::vector<std::string> tests)
        : evidence(e)
    {
        control.framework = std::move(framework);
        control.id = std::move(id);
        control.title = std::move(title);
        control.tests = std::move(tests);
    }

    // What the running control plane is set to enforce, recorded in the report's own entry.
    void configured(std::string text, bool broken = false)
    {
        control.claims.push_back(
            {ClaimKind::Configured, std::move(text), {evidence.reportEntry}, broken, 1});
    }

    // What the period's log shows: how many entries show it, the newest of them cited.
    void observed(const std::string& text, const Tally& shown, bool broken = false)
    {
        control.claims.push_back({ClaimKind::Observed, text + citedNote(shown.count), shown.newest,
                                  broken, shown.count});
    }

    void observed(const std::string& text, const Sequences& all, bool broken = false)
    {
        observed(text, tallyOf(all), broken);
    }

    void brokenRule(std::string text, Sequences sequences = {})
    {
        const auto count = static_cast<std::uint64_t>(sequences.size());
        control.claims.push_back(
            {ClaimKind::Observed, std::move(text), std::move(sequences), true, count});
    }

    ControlResult done()
    {
        control.verdict = verdictOf(control.claims);
        // A period without the activity a control rests on is said to be one, not left blank.
        if (control.verdict == ControlVerdict::NoEvidence && evidence.period.bounded())
            control.claims.push_back({ClaimKind::Observed,
                                      "No activity this control rests on in the period ("
                                          + evidence.period.describe() + ").",
                                      {},
                                      false,
                                      0});
        return std::move(control);
    }
};

std::string daysOld(const std::string& created)
{
    std::tm tm{};
    if (created.size() < 19 || ::strptime(created.c_str(), "%Y-%m-%dT%H:%M:%S", &tm) == nullptr)
        return "age unknown";
    const auto then = std::chrono::system_clock::from_time_t(::timegm(&tm));
    const auto days =
        std::chrono::duration_cast<std::chrono::hours>(std::chrono::system_clock::now() - then)
            .count()
        / 24;
    return fmt::format("{} days old", days);
}

// A job is judged in a period when one of its entries (submission, approval, first run) lies in
// it, or when it has none at all: a job past approval with no entries is a fact of the present.
bool judgedInPeriod(const JobFact& job)
{
    return job.activeInPeriod || (!job.submitEntry && !job.approveEntry && !job.runEntry);
}

// With fewer than two admins one person can make an account, grant it any role and act as it:
// separated duties are not guaranteed, and the controls that rest on them say so and fail
// (issue #54).
void requireTwoAdmins(Builder& b)
{
    if (auto warning = fourEyesWarning(b.evidence.admins))
        b.brokenRule(*warning);
}

// Users that were not made through the control plane (no audited creation).
void requireCreation(Builder& b)
{
    Sequences created;
    for (const UserFact& user : b.evidence.users) {
        if (user.created) {
            if (user.createdInPeriod)
                created.push_back(*user.created);
        } else
            b.brokenRule("User '" + user.name
                         + "' has no audited creation (control.init or user.create): it was not "
                           "made through the control plane.");
    }
    std::sort(created.begin(), created.end());
    b.observed(plural(b.evidence.users.size(), "user exists", "users exist")
                   + ", each created by an audited entry that names who created it; the "
                     "creations in the period",
               created);
}

// The log's verification is a fact of the moment the report is made, recorded in its own entry:
// a configured claim, which never makes a control pass alone (issue #49).
void logVerified(Builder& b)
{
    const audit::StoreVerification& v = b.evidence.verification;
    if (!v.ok()) {
        b.configured("The live audit log failed verification: " + v.failure->message(), true);
        return;
    }
    b.configured(fmt::format("The live audit log verified when this report was made: {} entries "
                             "chained, {} signed heads checked against the log's key, {} witness "
                             "heads found in the log.",
                             v.entries, v.heads, v.witnessHeads));
}

// A head verified outside the data directory (issue #49): the log verifying proves only that
// the directory agrees with itself, and a copy of the whole directory put back brings its own
// witness file with it.
void witnessedOutside(Builder& b)
{
    const auto& witnesses = b.evidence.facts.witnessesOutside;
    if (witnesses.empty()) {
        b.configured("No witness outside the data directory keeps the log's signed heads, so a "
                     "copy of the whole directory put back in its place would go unnoticed; "
                     "attach one with sealtrain-control --audit-witness "
                     "(docs/operations/data-directory.md, \"Witnesses\").",
                     true);
        return;
    }
    std::string names;
    for (const auto& witness : witnesses)
        names += (names.empty() ? "" : ", ") + witness;
    b.configured(fmt::format("The serving process checked the log against {} outside the data "
                             "directory when it opened it, and gives them every signed head: {}.",
                             plural(witnesses.size(), "witness", "witnesses"), names));
    b.observed(
        plural(b.evidence.log.witnessAttaches.count, "witness attached", "witnesses attached"),
        b.evidence.log.witnessAttaches);
}

// Where the entries leave the platform as they are written (issue #49): said as it stands when
// the report is made, never breaking a claim, since the signed log stays the record.
void forwardedCopy(Builder& b)
{
    const auto& forwarding = b.evidence.facts.forwarding;
    if (!forwarding) {
        b.configured("No SIEM receives the audit entries as they are written "
                     "(sealtrain-control --audit-forward); the signed log is the only copy "
                     "until it is exported.");
        return;
    }
    const auto& f = *forwarding;
    std::string state =
        f.lastError.empty()
            ? "its last delivery succeeded"
            : fmt::format("it has refused lines since {} ({} failed deliveries; they wait in the "
                          "signed log)",
                          f.failingSinceUnix ? audit::formatUtcSeconds(*f.failingSinceUnix)
                                             : std::string("the start"),
                          f.failures);
    b.configured(fmt::format(
        "Every entry and signed head is delivered at least once, in order, "
        "to {} (docs/formats/audit-forward.md): when this report was made it "
        "held entries 0 to {} of {} and the signed head of {}, and {}.",
        f.target, f.delivered == 0 ? std::string("none") : std::to_string(f.delivered - 1),
        f.logSize, f.headSize, state));
}

void transport(Builder& b)
{
    const ComplianceFacts& f = b.evidence.facts;
    b.configured("The control plane's TLS stack accepts " + f.minimumTls
                     + " and newer only (tested live on the serving process's OpenSSL).",
                 f.minimumTls != "TLSv1.3");
    b.configured(f.clientCertificatesVerified
                     ? fmt::format("Every call after sign-in presents a client certificate that "
                                   "chains to the platform CA, is bound to the caller's session "
                                   "and is not revoked; the serving process checked {} at the "
                                   "handshake since it started and refused {} as revoked.",
                                   f.certificatesVerified, f.certificatesRefused)
                     : "The serving process does not check client certificates against the "
                       "platform CA and the revocation list.",
                 !f.clientCertificatesVerified);
}

ControlResult uniqueUsers(const Evidence& e)
{
    Builder b(e, "HIPAA", "164.312(a)(2)(i)", "Unique user identification",
              {"test_core_identity", "test_core_access", "test_api_rbac"});
    b.configured("Every user has a name no other user has (the database refuses a second), and "
                 "every audit entry names its actor and, for a person, their session.");
    requireCreation(b);
    return b.done();
}

ControlResult emergencyAccess(const Evidence& e)
{
    Builder b(e, "HIPAA", "164.312(a)(2)(ii)", "Emergency access procedure",
              {"test_core_access", "test_api_rbac"});
    const auto max = e.options.maxBreakGlass.count();
    b.configured(fmt::format("A break-glass grant lasts at most {} s, needs a reason, and every "
                             "entry made under it carries break_glass = true.",
                             max));
    if (e.log.breakGlass.empty())
        b.observed("No break-glass use is recorded in the log.", Sequences{});
    std::uint64_t listedOutside = 0;
    for (const BreakGlassUse& use : e.log.breakGlass) {
        const bool broken = outsidePolicy(use, e.options);
        listedOutside += broken ? 1U : 0U;
        b.observed(fmt::format("{} granted break-glass access to {} for {} s, reason: \"{}\"{}",
                               use.actor, use.grantee, use.expiresInSeconds, use.reason,
                               broken ? " (outside the policy: no reason or too long)" : ""),
                   Sequences{use.sequence}, broken);
    }
    // Older uses than the newest kMaxBreakGlassListed still count when they broke the policy.
    if (e.log.breakGlassOutsidePolicy.count > listedOutside)
        b.brokenRule(fmt::format("{} break-glass grants in all were outside the policy ({} of "
                                 "{} grants listed above).",
                                 e.log.breakGlassOutsidePolicy.count, listedOutside,
                                 e.log.breakGlassCount),
                     e.log.breakGlassOutsidePolicy.newest);
    return b.done();
}

ControlResult automaticLogoff(const Evidence& e)
{
    Builder b(e, "HIPAA", "164.312(a)(2)(iii)", "Automatic logoff",
              {"test_core_audited_transaction", "test_core_totp_change", "test_api_desktop"});
    b.configured(fmt::format("A session expires after {} s without use and {} s after sign-in "
                             "whatever its use.",
                             e.options.sessionIdle.count(), e.options.sessionMax.count()));
    b.observed(plural(e.log.expiredSessions.count, "call", "calls")
                   + " with an expired session refused and audited",
               e.log.expiredSessions);
    return b.done();
}

ControlResult encryption(const Evidence& e)
{
    Builder b(e, "HIPAA", "164.312(a)(2)(iv)", "Encryption and decryption",
              {"test_crypto_keyring", "test_crypto_key_rotation", "test_crypto_sealed_object",
               "test_core_store", "test_ctl_keyring"});
    std::string keks;
    for (const crypto::KekInfo& kek : e.facts.keks)
        keks += fmt::format("{}{} v{} ({}, created {}, {})", keks.empty() ? "" : "; ", kek.id,
                            kek.version, crypto::kekStateName(kek.state), kek.created,
                            daysOld(kek.created));
    b.configured("The keyring's KEKs: " + (keks.empty() ? std::string("none reported") : keks)
                 + ". The database is SQLCipher under the database KEK; datasets and "
                   "checkpoints are sealed objects (AES-256-GCM) under theirs.");
    for (const std::string& purpose : crypto::defaultKekPurposes()) {
        const bool active =
            std::any_of(e.facts.keks.begin(), e.facts.keks.end(), [&](const crypto::KekInfo& k) {
                return k.id == purpose && k.state == crypto::KekState::Active;
            });
        if (!active)
            b.brokenRule("The keyring has no active version of the '" + purpose + "' KEK.",
                         {e.reportEntry});
    }
    b.observed("The keyring and the encrypted database were created by control.init", e.log.init);
    b.observed(plural(e.log.rotations.count, "KEK rotation", "KEK rotations") + " audited",
               e.log.rotations);
    b.observed(plural(e.log.sealedImports.count, "dataset import", "dataset imports")
                   + " sealed under the datasets KEK",
               e.log.sealedImports);
    return b.done();
}

ControlResult auditControls(const Evidence& e)
{
    Builder b(e, "HIPAA", "164.312(b)", "Audit controls",
              {"test_audit_log", "test_audit_store_verify", "test_audit_bundle",
               "test_core_audited_transaction", "test_core_crash", "test_core_witnesses"});
    b.configured("Every change and every refusal appends an entry in the same database "
                 "transaction (fail closed); reads of the log are audited too.");
    logVerified(b);
    witnessedOutside(b);
    forwardedCopy(b);
    b.observed(plural(e.log.denied.count, "refusal", "refusals") + " recorded in the log",
               e.log.denied);
    return b.done();
}

ControlResult integrity(const Evidence& e)
{
    Builder b(e, "HIPAA", "164.312(c)(1)", "Integrity",
              {"test_audit_merkle_proofs", "test_audit_store_verify", "test_core_submissions",
               "test_core_jobs", "test_core_witnesses"});
    logVerified(b);
    witnessedOutside(b);
    // A witness reset is a loss accepted: entries it kept may be gone from the log.
    if (e.log.witnessResets.count != 0)
        b.observed(plural(e.log.witnessResets.count, "witness was", "witnesses were")
                       + " reset after the log lost what they kept (audit.witness_reset)",
                   e.log.witnessResets, true);
    // A detach (an operator's, or a restore's) is no loss, but less protection from then on:
    // cited for the reviewer, the serving process's witnesses judged above.
    if (e.log.witnessDetaches.count != 0)
        b.observed(plural(e.log.witnessDetaches.count, "witness was", "witnesses were")
                       + " detached in the period and no longer kept heads from then on "
                         "(audit.witness_detach)",
                   e.log.witnessDetaches);
    b.observed(plural(e.log.approvals.count, "approval", "approvals")
                   + " recorded, each bound to the SHA-256 of what was approved",
               e.log.approvals);
    // The spec as stored now, re-hashed, against the SHA-256 its approver's signed job.approve
    // entry holds (issue #49): an edit of the spec, or of both hash columns, shows.
    for (const JobFact& job : e.jobs) {
        if (!job.pastApproval || job.approver.empty() || job.approvedSha256 == job.specSha256
            || !judgedInPeriod(job))
            continue;
        if (job.approveEntry)
            b.brokenRule(fmt::format("Job {} ({}) is {} although its spec differs from the one "
                                     "that was approved: it hashes to {}, the approval entry "
                                     "names {}.",
                                     job.id, job.name, job.state, job.specSha256,
                                     job.approvedSha256),
                         {*job.approveEntry});
        else
            b.brokenRule(fmt::format("Job {} ({}) is {} although no job.approve entry by its "
                                     "approver {} names the spec that was approved.",
                                     job.id, job.name, job.state, job.approver));
    }
    return b.done();
}

ControlResult personAuthentication(const Evidence& e)
{
    Builder b(e, "HIPAA", "164.312(d)", "Person or entity authentication",
              {"test_core_identity", "test_core_credentials", "test_core_totp_change"});
    b.configured(fmt::format("Sign-in needs a password (Argon2id) and a TOTP code; {} failures "
                             "in a row lock the account for {} s, doubling up to {} s.",
                             e.options.maxFailedSignIns, e.options.lockout.count(),
                             e.options.maxLockout.count()));
    Sequences issued;
    std::size_t enabled = 0;
    for (const UserFact& user : e.users) {
        if (user.disabled)
            continue;
        ++enabled;
        if (!user.hasTotp && !user.inReset)
            b.brokenRule("User '" + user.name + "' may sign in without a TOTP second factor.");
        if (user.secondFactorIssued && user.secondFactorInPeriod)
            issued.push_back(*user.secondFactorIssued);
    }
    std::sort(issued.begin(), issued.end());
    b.observed(plural(enabled, "enabled user holds", "enabled users hold")
                   + " a TOTP second factor or a one-time enrolment code (no sign-in until it is "
                     "used); the entries that issued the factors",
               issued);
    if (!e.log.signInsWithoutMfa.empty())
        b.brokenRule(plural(e.log.signInsWithoutMfa.count, "sign-in", "sign-ins")
                         + " succeeded without password and TOTP",
                     e.log.signInsWithoutMfa.newest);
    b.observed(plural(e.log.signInsOk.count, "sign-in", "sign-ins")
                   + " succeeded, every one "
                     "with password and TOTP",
               e.log.signInsOk);
    b.observed(plural(e.log.signInsDenied.count, "failed sign-in", "failed sign-ins")
                   + " refused and audited, " + std::to_string(e.log.lockouts.count)
                   + " of them while or when locked out",
               e.log.signInsDenied);
    return b.done();
}

ControlResult transmission(const Evidence& e)
{
    Builder b(e, "HIPAA", "164.312(e)(1)", "Transmission security",
              {"test_api_transport", "test_api_daemon", "test_api_hardening"});
    transport(b);
    b.observed(plural(e.log.overMutualTls.count, "call", "calls")
                   + " recorded with the client certificate they presented",
               e.log.overMutualTls);
    return b.done();
}

ControlResult cc61(const Evidence& e)
{
    Builder b(e, "SOC 2", "CC6.1", "Logical access security",
              {"test_core_access", "test_api_rbac", "test_api_hardening"});
    b.configured("Every call is authorised on the server by one permission check against the "
                 "caller's authenticated session; roles are sets of permissions.");
    b.observed(plural(e.log.denied.count, "call", "calls") + " refused and audited", e.log.denied);
    if (!e.log.signInsWithoutMfa.empty())
        b.brokenRule("Sign-ins succeeded without password and TOTP",
                     e.log.signInsWithoutMfa.newest);
    b.observed(plural(e.log.signInsOk.count, "sign-in", "sign-ins") + " with password and TOTP",
               e.log.signInsOk);
    return b.done();
}

ControlResult cc62(const Evidence& e)
{
    Builder b(e, "SOC 2", "CC6.2", "Registration and authorisation of users",
              {"test_core_identity", "test_core_credentials", "test_ctl_workstation"});
    b.configured("Only a holder of user.manage creates a user; the user sets their own password "
                 "and receives their TOTP secret with a one-time enrolment code.");
    requireCreation(b);
    requireTwoAdmins(b);
    return b.done();
}

ControlResult cc63(const Evidence& e)
{
    Builder b(e, "SOC 2", "CC6.3", "Role-based access, changes and removal",
              {"test_core_access", "test_core_submissions", "test_api_rbac"});
    b.configured("Grants, revocations, role changes and account disabling are audited; duties "
                 "that must stay apart are refused together.");
    b.observed(plural(e.log.accessChanges.count, "access change", "access changes") + " audited",
               e.log.accessChanges);
    b.observed(plural(e.log.removals.count, "removal", "removals")
                   + " of access (disabled users, revoked grants and sessions)",
               e.log.removals);
    b.observed(plural(e.log.dutyRefusals.count, "refusal", "refusals")
                   + " by a separation-of-duties rule",
               e.log.dutyRefusals);
    requireTwoAdmins(b);
    return b.done();
}

ControlResult cc66(const Evidence& e)
{
    Builder b(
        e, "SOC 2", "CC6.6", "Protection against threats from outside",
        {"test_api_transport", "test_core_workers", "test_api_hardening", "test_core_identity"});
    transport(b);
    b.configured(fmt::format("{} revoked certificates are refused at the handshake.",
                             e.facts.revokedCertificates));
    b.observed(plural(e.log.workerRevokes.count, "worker certificate", "worker certificates")
                   + " revoked",
               e.log.workerRevokes);
    b.observed(plural(e.log.revokedRefused.count, "connection", "connections")
                   + " with a revoked certificate refused",
               e.log.revokedRefused);
    b.observed(plural(e.log.signInsDenied.count, "failed sign-in", "failed sign-ins") + ", "
                   + std::to_string(e.log.lockouts.count) + " of them under lockout",
               e.log.signInsDenied);
    return b.done();
}

ControlResult cc67(const Evidence& e)
{
    Builder b(e, "SOC 2", "CC6.7", "Restricted transmission of information",
              {"test_api_transport", "test_core_key_release"});
    transport(b);
    b.configured("Data keys leave the control plane only sealed to an enrolled worker's key, for "
                 "the job that worker was dispatched.");
    b.observed(plural(e.log.overMutualTls.count, "call", "calls")
                   + " recorded with the client certificate they presented",
               e.log.overMutualTls);
    return b.done();
}

ControlResult cc72(const Evidence& e)
{
    Builder b(e, "SOC 2", "CC7.2", "Monitoring for anomalies",
              {"test_core_audited_transaction", "test_audit_forward", "test_api_audit_forward",
               "test_audit_store_verify", "test_core_witnesses"});
    logVerified(b);
    witnessedOutside(b);
    forwardedCopy(b);
    b.observed(plural(e.log.signInsDenied.count, "failed sign-in", "failed sign-ins") + " recorded",
               e.log.signInsDenied);
    b.observed(plural(e.log.denied.count, "refusal", "refusals") + " recorded", e.log.denied);
    return b.done();
}

// Segregation of duties (COSO principle 10, under SOC 2's CC5.1): four eyes on every job, every
// promotion and every export.
ControlResult cc51(const Evidence& e)
{
    Builder b(
        e, "SOC 2", "CC5.1", "Segregation of duties (four eyes on jobs, promotions, exports)",
        {"test_core_jobs", "test_core_job_states", "test_core_submissions", "test_core_registry"});
    b.configured("A job runs only once someone other than its submitter approved its exact "
                 "spec (SHA-256); an edit voids the approval. A model's promotion or export "
                 "takes effect only once someone other than its requester approved it.");
    requireTwoAdmins(b);
    for (const DecisionFact& decision : e.approvedDecisions)
        if (decision.requester == decision.decider)
            b.brokenRule(decision.what + " was approved by its own requester, " + decision.decider
                         + ".");
    Sequences proof;
    std::size_t checked = 0;
    for (const JobFact& job : e.jobs) {
        if (!job.pastApproval || !judgedInPeriod(job))
            continue;
        ++checked;
        const std::string which = fmt::format("Job {} ({}, {})", job.id, job.name, job.state);
        Sequences cited;
        for (const auto& seq : {job.submitEntry, job.approveEntry, job.runEntry})
            if (seq)
                cited.push_back(*seq);
        std::sort(cited.begin(), cited.end());
        if (job.approver.empty())
            b.brokenRule(which + " went past approval without an approval.", cited);
        else if (job.approver == job.submitter)
            b.brokenRule(which + " was approved by its own submitter, " + job.submitter + ".",
                         cited);
        else if (!job.approveEntry)
            b.brokenRule(which + " names " + job.approver
                             + " as approver, but the log has no such approval.",
                         cited);
        else
            proof.insert(proof.end(), cited.begin(), cited.end());
    }
    std::sort(proof.begin(), proof.end());
    b.observed(plural(checked, "job", "jobs")
                   + " went past approval; the submissions, approvals by someone other than the "
                     "submitter, and first dispatches or starts",
               proof);
    return b.done();
}

// Change management: the platform's own changes (its starts with their release and
// configuration, its schema migrations, its upgrades) are audited entries.
ControlResult cc81(const Evidence& e)
{
    Builder b(e, "SOC 2", "CC8.1", "Change management (releases, configuration, schema)",
              {"test_core_platform_changes", "test_core_compliance", "test_ctl_compliance"});
    b.configured("The control plane audits each start with its release and the SHA-256 of its "
                 "effective configuration, each upgrade of its release and each schema "
                 "migration of its database, before it serves a call.");
    for (const SchemaMigrationFact& row : e.schema) {
        if (row.version < kFirstAuditedMigration
            || !e.period.contains(
                static_cast<std::uint64_t>(std::max<std::int64_t>(row.appliedUnix, 0))
                * 1000000000U))
            continue;
        if (!e.log.migrationAudited(row.version))
            b.brokenRule(fmt::format("Schema version {}, applied at {}, has no audited "
                                     "platform.migrate entry: the database was changed outside "
                                     "the control plane.",
                                     row.version, audit::formatUtcSeconds(row.appliedUnix)));
    }
    b.observed(plural(e.log.starts.count, "start", "starts")
                   + " of the control plane, each with its release and configuration digest",
               e.log.starts);
    b.observed(plural(e.log.upgrades.count, "upgrade", "upgrades") + " of the release",
               e.log.upgrades);
    b.observed(plural(e.log.migrations.count, "schema migration", "schema migrations") + " audited",
               e.log.migrations);
    return b.done();
}

}  // namespace

std::vector<ControlResult> evaluateControls(const Evidence& e)
{
    return {uniqueUsers(e),
            emergencyAccess(e),
            automaticLogoff(e),
            encryption(e),
            auditControls(e),
            integrity(e),
            personAuthentication(e),
            transmission(e),
            cc51(e),
            cc61(e),
            cc62(e),
            cc63(e),
            cc66(e),
            cc67(e),
            cc72(e),
            cc81(e)};
}

}  // namespace compliance_internal
}  // namespace sealtrain::core
