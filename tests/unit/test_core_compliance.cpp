// The compliance report in core (core/compliance/compliance.h, issue #31): on a healthy platform
// the controls with evidence pass and cite it; a rule broken on purpose in the database (a job
// approved by its own submitter, a job that ran unapproved, a user without a second factor, an
// old TLS floor) shows as failed; a control without evidence is never passed; the bundle holds
// exactly the cited entries and verifies; and whoever lacks the auditor's permissions is refused
// and audited. Issue #48 adds a test for each "fails when" rule of docs/operations/compliance.md
// that none guarded (each with its mutation in tests/mutations/compliance-*.txt).
#include "core_fixture.h"
#include "jobs_world.h"

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/bundle.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/audit/queries.h"
#include "sealtrain/core/compliance/compliance.h"
#include "sealtrain/core/store/reason_codes.h"
#include "sealtrain/crypto/hash.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

using namespace sealtrain;
using core::ClaimKind;
using core::ComplianceClaim;
using core::ControlVerdict;

namespace {

core::ComplianceFacts healthyFacts()
{
    core::ComplianceFacts facts;
    facts.minimumTls = "TLSv1.3";
    facts.clientCertificatesVerified = true;
    for (const std::string& purpose : crypto::defaultKekPurposes())
        facts.keks.push_back({purpose, 1, crypto::KekState::Active, "2026-11-01T00:00:00Z", ""});
    facts.witnessesOutside = {"file:/mnt/worm/sealtrain.witness"};
    return facts;
}

const core::ControlResult& control(const core::ComplianceReport& report, const std::string& id)
{
    const auto found = std::find_if(report.controls.begin(), report.controls.end(),
                                    [&](const core::ControlResult& c) { return c.id == id; });
    if (found == report.controls.end())
        qFatal("no control %s", id.c_str());
    return *found;
}

std::string claimsText(const core::ControlResult& control)
{
    std::string text;
    for (const auto& claim : control.claims)
        text += claim.text + "\n";
    return text;
}

// A job of eve's, approved by ann.
core::JobInfo approvedJob(testing::JobsWorld& w, const std::string& name)
{
    auto job = w.jobs().submit(w.session("eve"), testing::spec(name, "notes", "cpu"));
    if (!job)
        qFatal("submit: %s", job.error().message().c_str());
    auto approved = w.jobs().approve(w.session("ann"), job->id, job->specSha256);
    if (!approved)
        qFatal("approve: %s", approved.error().message().c_str());
    return *approved;
}

// Appends `draft` to the control plane's log in a transaction of its own, as a service that
// broke a rule would have recorded it, for the report to judge; returns its sequence number.
std::uint64_t appendEntry(testing::JobsWorld& w, const audit::EntryDraft& draft)
{
    auto transaction = w.t.database->begin();
    if (!transaction)
        qFatal("begin: %s", transaction.error().message().c_str());
    auto sequence = w.t.plane->auditLog().append(**transaction, draft);
    if (!sequence)
        qFatal("append: %s", sequence.error().message().c_str());
    if (!(*transaction)->commit().ok())
        qFatal("the appended entry did not commit");
    return *sequence;
}

// alice's break-glass grant to sam as the access service records it, with `details`.
audit::EntryDraft breakGlassGrant(std::vector<audit::Detail> details)
{
    audit::EntryDraft grant;
    grant.actor = {audit::ActorKind::User, "alice", "session-of-alice", "password+totp"};
    grant.action = "grant.break_glass";
    grant.target = {"user", "sam"};
    grant.details = std::move(details);
    return grant;
}

// The claims of `judged` that show its rule broken.
std::vector<ComplianceClaim> brokenClaims(const core::ControlResult& judged)
{
    std::vector<ComplianceClaim> broken;
    std::copy_if(judged.claims.begin(), judged.claims.end(), std::back_inserter(broken),
                 [](const ComplianceClaim& claim) { return claim.broken; });
    return broken;
}

}  // namespace

class TestCoreCompliance : public QObject {
    Q_OBJECT

private slots:
    void healthyPlatformPassesWithCitedEvidence()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();
        const auto job = approvedJob(w, "first");
        // A refusal, for audit controls and monitoring to cite (the log's verification alone,
        // a configured claim, passes neither).
        QVERIFY(!w.t.plane->access().grantRole(w.session("eve"), "eve", "admin", "").ok());
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY2(report.ok(), report ? "" : report.error().message().c_str());
        QCOMPARE(report->controls.size(), std::size_t{16});
        QCOMPARE(report->auditor, std::string("rita"));
        for (const char* id :
             {"164.312(a)(2)(i)", "164.312(a)(2)(iv)", "164.312(b)", "164.312(c)(1)", "164.312(d)",
              "CC5.1", "CC6.1", "CC6.2", "CC6.3", "CC7.2", "CC8.1"})
            QVERIFY2(control(*report, id).verdict == ControlVerdict::Passed,
                     (std::string(id) + ": " + claimsText(control(*report, id))).c_str());
        // Nobody used break-glass and no session expired: said, not passed.
        QCOMPARE(control(*report, "164.312(a)(2)(ii)").verdict, ControlVerdict::NoEvidence);
        QCOMPARE(control(*report, "164.312(a)(2)(iii)").verdict, ControlVerdict::NoEvidence);
        // Called in-process, no call came over mutual TLS: the transport is configured only.
        QCOMPARE(control(*report, "164.312(e)(1)").verdict, ControlVerdict::NoEvidence);

        // CC5.1 cites the job's submission and approval.
        const auto& cc51 = control(*report, "CC5.1");
        const auto entries = audit::verifyBundle(report->bundle, {}).entries;
        std::vector<std::uint64_t> cc51Cited;
        for (const auto& claim : cc51.claims)
            cc51Cited.insert(cc51Cited.end(), claim.sequences.begin(), claim.sequences.end());
        for (const std::string action : {"job.submit", "job.approve"})
            QVERIFY2(
                std::any_of(entries.begin(), entries.end(),
                            [&](const audit::Entry& e) {
                                return e.action == action && e.target.id == std::to_string(job.id)
                                       && std::count(cc51Cited.begin(), cc51Cited.end(), e.sequence)
                                              == 1;
                            }),
                action.c_str());

        // The bundle holds exactly the cited entries, signed; the report's own entry is one.
        audit::VerifyOptions options;
        options.trustedKey = w.t.signingKey.publicKey().keyId();
        const auto verified = audit::verifyBundle(report->bundle, options);
        QCOMPARE(verified.verdict(), audit::Verdict::Verified);
        std::vector<std::uint64_t> inBundle;
        for (const auto& entry : verified.entries)
            inBundle.push_back(entry.sequence);
        QCOMPARE(inBundle, report->cited);
        QVERIFY(
            std::binary_search(report->cited.begin(), report->cited.end(), report->reportEntry));
        const auto own =
            std::find_if(verified.entries.begin(), verified.entries.end(),
                         [&](const audit::Entry& e) { return e.sequence == report->reportEntry; });
        QCOMPARE(own->action, std::string("compliance.report"));
        QCOMPARE(testing::detailOf(*own, "tls_minimum"), std::string("TLSv1.3"));
        QCOMPARE(testing::detailOf(*own, "session_idle_s"), std::string("900"));
        QVERIFY(testing::detailOf(*own, "log_verification").starts_with("verified"));
    }

    // Issue #49 item 4: the audit controls and monitoring say where the entries leave the
    // platform and how far the target has them, from the serving process's forwarder; a target
    // that refuses is said, and breaks nothing (the signed log stays the record).
    void theLogControlsSayHowFarTheSiemHasTheLog()
    {
        testing::JobsWorld w;
        approvedJob(w, "first");
        auto facts = healthyFacts();
        auto report = w.t.plane->compliance().report(w.session("rita"), facts);
        QVERIFY(report.ok());
        for (const char* id : {"164.312(b)", "CC7.2"})
            QVERIFY2(claimsText(control(*report, id)).find("No SIEM receives the audit entries")
                         != std::string::npos,
                     claimsText(control(*report, id)).c_str());
        audit::ForwardHealth health;
        health.target = "syslog-tls://siem.example:6514";
        health.delivered = 40;
        health.logSize = 42;
        health.headSize = 32;
        health.lastError = "The syslog receiver did not answer in time.";
        health.failingSinceUnix = 1796029200;  // 2026-11-30T09:00:00Z
        health.failures = 3;
        facts.forwarding = health;
        report = w.t.plane->compliance().report(w.session("rita"), facts);
        QVERIFY(report.ok());
        for (const char* id : {"164.312(b)", "CC7.2"}) {
            const auto text = claimsText(control(*report, id));
            QVERIFY2(text.find("to syslog-tls://siem.example:6514 (docs/formats/audit-forward.md): "
                               "when this report was made it held entries 0 to 39 of 42 and the "
                               "signed head of 32, and it has refused lines since "
                               "2026-11-30T09:00:00Z (3 failed deliveries")
                         != std::string::npos,
                     text.c_str());
            QVERIFY2(control(*report, id).verdict != ControlVerdict::Failed, text.c_str());
        }
    }

    // Issue #49: the log verifying proves only that the data directory agrees with itself. With
    // no witness outside it, audit controls, integrity and monitoring fail; an accepted witness
    // loss (audit.witness_reset, the control plane's own entry) fails integrity, and the same
    // action written by a person is not taken for it.
    void theLogControlsNeedAWitnessOutsideTheDirectory()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();
        approvedJob(w, "first");
        QVERIFY(!w.t.plane->access().grantRole(w.session("eve"), "eve", "admin", "").ok());
        auto facts = healthyFacts();
        facts.witnessesOutside.clear();
        auto report = w.t.plane->compliance().report(w.session("rita"), facts);
        QVERIFY(report.ok());
        for (const char* id : {"164.312(b)", "164.312(c)(1)", "CC7.2"}) {
            QVERIFY2(control(*report, id).verdict == ControlVerdict::Failed,
                     (std::string(id) + ": " + claimsText(control(*report, id))).c_str());
            QVERIFY(claimsText(control(*report, id)).find("No witness outside the data directory")
                    != std::string::npos);
        }

        audit::EntryDraft reset;
        reset.actor = {audit::ActorKind::User, "alice", "session-of-alice", "password+totp"};
        reset.action = "audit.witness_reset";
        reset.target = {"platform", "data-directory"};
        reset.details = {audit::textDetail("found", "witness_ahead")};
        appendEntry(w, reset);
        report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        QVERIFY2(control(*report, "164.312(c)(1)").verdict == ControlVerdict::Passed,
                 claimsText(control(*report, "164.312(c)(1)")).c_str());

        reset.actor = {audit::ActorKind::System, "control-plane", "", "internal"};
        const auto sequence = appendEntry(w, reset);
        report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        const auto& integrity = control(*report, "164.312(c)(1)");
        QCOMPARE(integrity.verdict, ControlVerdict::Failed);
        const auto broken = brokenClaims(integrity);
        QCOMPARE(broken.size(), std::size_t{1});
        QCOMPARE(broken.front().sequences, std::vector<std::uint64_t>{sequence});
        QCOMPARE(control(*report, "164.312(b)").verdict, ControlVerdict::Passed);

        // A witness detached by an operator (issue #49) is cited, and fails nothing by itself.
        audit::EntryDraft detach = reset;
        detach.action = "audit.witness_detach";
        detach.details = {audit::textDetail("reason", "operator")};
        const auto detached = appendEntry(w, detach);
        report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        const auto& cited = control(*report, "164.312(c)(1)");
        QCOMPARE(brokenClaims(cited).size(), std::size_t{1});  // the reset's, as before
        const auto claim =
            std::find_if(cited.claims.begin(), cited.claims.end(), [](const auto& c) {
                return c.text.find("detached in the period") != std::string::npos;
            });
        QVERIFY2(claim != cited.claims.end(), claimsText(cited).c_str());
        QVERIFY(!claim->broken);
        QCOMPARE(claim->sequences, std::vector<std::uint64_t>{detached});
    }

    // Issue #31: a control whose rule is broken on purpose shows as failed, never passed.
    void jobApprovedByItsOwnSubmitterFails()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();  // the failure is this rule's, not a single admin's
        const auto job = approvedJob(w, "mine");
        QVERIFY(
            w.t.database->run("UPDATE jobs SET approver = submitter WHERE id = ?", {job.id}).ok());
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        const auto& cc51 = control(*report, "CC5.1");
        QCOMPARE(cc51.verdict, ControlVerdict::Failed);
        QVERIFY2(claimsText(cc51).find("approved by its own submitter, eve") != std::string::npos,
                 claimsText(cc51).c_str());
    }

    void jobThatRanWithoutApprovalFails()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();  // the failure is this rule's, not a single admin's
        approvedJob(w, "fine");
        auto unapproved = w.jobs().submit(w.session("eve"), testing::spec("sly", "notes", "cpu"));
        QVERIFY(unapproved.ok());
        QVERIFY(
            w.t.database->run("UPDATE jobs SET state = 'succeeded' WHERE id = ?", {unapproved->id})
                .ok());
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        const auto& cc51 = control(*report, "CC5.1");
        QCOMPARE(cc51.verdict, ControlVerdict::Failed);
        QVERIFY2(claimsText(cc51).find("without an approval") != std::string::npos,
                 claimsText(cc51).c_str());
    }

    void userWithoutSecondFactorFails()
    {
        testing::JobsWorld w;
        const std::string rita = w.session("rita");
        QVERIFY(w.t.database->run("UPDATE users SET totp_secret = x'' WHERE name = 'eve'").ok());
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        const auto& d = control(*report, "164.312(d)");
        QCOMPARE(d.verdict, ControlVerdict::Failed);
        QVERIFY(claimsText(d).find("'eve' may sign in without a TOTP") != std::string::npos);
    }

    void oldTlsFloorFailsTransmissionSecurity()
    {
        testing::JobsWorld w;
        auto facts = healthyFacts();
        facts.minimumTls = "TLSv1.2";
        auto report = w.t.plane->compliance().report(w.session("rita"), facts);
        QVERIFY(report.ok());
        for (const char* id : {"164.312(e)(1)", "CC6.6", "CC6.7"})
            QCOMPARE(control(*report, id).verdict, ControlVerdict::Failed);
        // Issue #49: client certificates are claimed only as the serving process reports them.
        facts = healthyFacts();
        facts.clientCertificatesVerified = false;
        report = w.t.plane->compliance().report(w.session("rita"), facts);
        QVERIFY(report.ok());
        QCOMPARE(control(*report, "164.312(e)(1)").verdict, ControlVerdict::Failed);
        QVERIFY(claimsText(control(*report, "164.312(e)(1)")).find("does not check client")
                != std::string::npos);
        facts.clientCertificatesVerified = true;
        facts.certificatesVerified = 12;
        facts.certificatesRefused = 3;
        report = w.t.plane->compliance().report(w.session("rita"), facts);
        QVERIFY(report.ok());
        QVERIFY2(claimsText(control(*report, "164.312(e)(1)"))
                         .find("checked 12 at the handshake since it started and refused 3")
                     != std::string::npos,
                 claimsText(control(*report, "164.312(e)(1)")).c_str());
    }

    void breakGlassUseIsCitedWithItsReason()
    {
        testing::JobsWorld w;
        QVERIFY(w.t.plane->access()
                    .grantBreakGlass(w.session("alice"), "sam", "engineer", "",
                                     "ward 3 outage, ticket 1234", std::chrono::hours(1))
                    .ok());
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        const auto& a = control(*report, "164.312(a)(2)(ii)");
        QCOMPARE(a.verdict, ControlVerdict::Passed);
        QVERIFY(claimsText(a).find("ward 3 outage, ticket 1234") != std::string::npos);
    }

    // A control with no observed evidence is never passed, whatever its configured claims say.
    void noEvidenceIsNeverPassed()
    {
        std::vector<ComplianceClaim> claims{{ClaimKind::Configured, "set so", {4}, false, 1}};
        QCOMPARE(core::verdictOf(claims), ControlVerdict::NoEvidence);
        claims.push_back({ClaimKind::Observed, "none seen", {}, false, 0});
        QCOMPARE(core::verdictOf(claims), ControlVerdict::NoEvidence);
        claims.push_back({ClaimKind::Observed, "seen", {7}, false, 1});
        QCOMPARE(core::verdictOf(claims), ControlVerdict::Passed);
        claims.push_back({ClaimKind::Observed, "broken", {}, true, 0});
        QCOMPARE(core::verdictOf(claims), ControlVerdict::Failed);

        // No job went past approval: CC5.1 has no evidence.
        testing::JobsWorld w;
        w.addSecondAdmin();  // the failure is this rule's, not a single admin's
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        QCOMPARE(control(*report, "CC5.1").verdict, ControlVerdict::NoEvidence);
        QCOMPARE(std::string(core::controlVerdictName(ControlVerdict::NoEvidence)),
                 std::string("no evidence"));
    }

    // Issue #49: the report's own entry (the settings it records, the log's verification at that
    // moment) never makes a control pass: every passed control cites other observed evidence.
    void theReportsOwnEntryPassesNoControl()
    {
        testing::JobsWorld w;
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        for (const auto& judged : report->controls) {
            if (judged.verdict != ControlVerdict::Passed)
                continue;
            const bool other =
                std::any_of(judged.claims.begin(), judged.claims.end(), [&](const auto& claim) {
                    return claim.kind == ClaimKind::Observed
                           && std::any_of(claim.sequences.begin(), claim.sequences.end(),
                                          [&](auto s) { return s != report->reportEntry; });
                });
            QVERIFY2(other, (judged.id + ": " + claimsText(judged)).c_str());
        }
        // The log verified, but nothing was refused yet: audit controls and monitoring have
        // the verification as a configured claim only.
        for (const char* id : {"164.312(b)", "CC7.2"}) {
            QVERIFY2(control(*report, id).verdict == ControlVerdict::NoEvidence,
                     (std::string(id) + ": " + claimsText(control(*report, id))).c_str());
            QVERIFY(claimsText(control(*report, id)).find("verified when this report was made")
                    != std::string::npos);
        }
    }

    // Issue #49: over a period, observed claims count and cite only the period's entries; a
    // control whose activity all lies before it says so instead of passing on old evidence.
    void aPeriodJudgesOnlyItsOwnActivity()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();
        const auto old = approvedJob(w, "old");
        w.t.clock.advance(std::chrono::hours(24 * 400));
        w.sessions.clear();  // a year on, every session has expired
        const std::int64_t now =
            std::chrono::duration_cast<std::chrono::seconds>(w.t.clock.now().time_since_epoch())
                .count();
        const core::CompliancePeriod lastDay{now - 86'400, std::nullopt};
        auto& compliance = w.t.plane->compliance();

        auto whole = compliance.report(w.session("rita"), healthyFacts());
        QVERIFY(whole.ok());
        QCOMPARE(control(*whole, "CC5.1").verdict, ControlVerdict::Passed);
        QCOMPARE(whole->inPeriod, whole->logSize);

        auto recent = compliance.report(w.session("rita"), healthyFacts(), lastDay);
        QVERIFY2(recent.ok(), recent ? "" : recent.error().message().c_str());
        QVERIFY(recent->inPeriod < recent->logSize / 2);
        for (const char* id : {"CC5.1", "164.312(a)(2)(i)", "CC6.2"}) {
            const auto& judged = control(*recent, id);
            QVERIFY2(judged.verdict == ControlVerdict::NoEvidence,
                     (std::string(id) + ": " + claimsText(judged)).c_str());
            QVERIFY(claimsText(judged).find("No activity this control rests on in the period")
                    != std::string::npos);
        }
        // The sign-ins counted are the period's: rita's one, not the set-up's.
        const auto& cc61 = control(*recent, "CC6.1");
        const auto signIns = std::find_if(cc61.claims.begin(), cc61.claims.end(), [](auto& c) {
            return c.text.find("with password and TOTP") != std::string::npos && !c.broken;
        });
        QVERIFY(signIns != cc61.claims.end());
        QCOMPARE(signIns->count, std::uint64_t{1});
        QCOMPARE(signIns->sequences.size(), std::size_t{1});

        // A job approved in the period passes CC5.1 on its own entries, never the old job's.
        const auto fresh = approvedJob(w, "fresh");
        recent = compliance.report(w.session("rita"), healthyFacts(), lastDay);
        QVERIFY(recent.ok());
        const auto& cc51 = control(*recent, "CC5.1");
        QCOMPARE(cc51.verdict, ControlVerdict::Passed);
        const auto entries = audit::verifyBundle(recent->bundle, {}).entries;
        for (const std::uint64_t cited : cc51.claims.back().sequences) {
            const auto entry = std::find_if(entries.begin(), entries.end(),
                                            [&](const auto& e) { return e.sequence == cited; });
            QVERIFY(entry != entries.end());
            QCOMPARE(entry->target.id, std::to_string(fresh.id));
            QVERIFY(entry->target.id != std::to_string(old.id));
        }
    }

    // Issue #54: with a single admin, who can make an account, grant it any role and act as it,
    // the controls that rest on separated duties fail and say why; a second admin clears it.
    void aSingleAdminFailsTheSeparatedDuties()
    {
        testing::JobsWorld w;
        approvedJob(w, "first");
        const std::vector<std::string> separated{"CC6.2", "CC6.3", "CC5.1"};
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        for (const std::string& id : separated) {
            const auto& judged = control(*report, id);
            QCOMPARE(judged.verdict, ControlVerdict::Failed);
            QVERIFY2(claimsText(judged).find("Four eyes is not guaranteed: this control plane has "
                                             "a single admin (alice)")
                         != std::string::npos,
                     claimsText(judged).c_str());
        }
        w.addSecondAdmin();
        report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        for (const std::string& id : separated)
            QVERIFY2(control(*report, id).verdict != ControlVerdict::Failed,
                     claimsText(control(*report, id)).c_str());
    }

    // A period that ends before it begins is refused once the caller is known to be an auditor;
    // anyone else is refused for who they are, whatever the period says.
    void aBackwardPeriodIsRefusedAfterTheCaller()
    {
        testing::JobsWorld w;
        const core::CompliancePeriod backward{2'000'000'000, 1'000'000'000};
        auto eve = w.t.plane->compliance().report(w.session("eve"), healthyFacts(), backward);
        QVERIFY(!eve.ok());
        QCOMPARE(eve.error().code(), ErrorCode::PermissionDenied);
        auto rita = w.t.plane->compliance().report(w.session("rita"), healthyFacts(), backward);
        QVERIFY(!rita.ok());
        QCOMPARE(rita.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(rita.error().message().find("--from before the --to") != std::string::npos);
    }

    // The caller first: an engineer, and an admin without audit.read, are refused and audited.
    void wrongRoleIsRefusedAndAudited()
    {
        testing::JobsWorld w;
        auto refused = w.t.plane->compliance().report(w.session("eve"), healthyFacts());
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
        auto entry = w.last();
        QCOMPARE(entry.action, std::string("compliance.report"));
        QCOMPARE(entry.outcome, audit::Outcome::Denied);
        QCOMPARE(entry.actor.id, std::string("eve"));

        QVERIFY(w.t.plane->access()
                    .createRole(w.session("alice"), "exporter",
                                {std::string(core::permission::kAuditExport)})
                    .ok());
        QVERIFY(w.t.plane->access().grantRole(w.session("alice"), "sam", "exporter", "").ok());
        refused = w.t.plane->compliance().report(w.session("sam"), healthyFacts());
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(refused.error().message().find("audit.read") != std::string::npos);
        entry = w.last();
        QCOMPARE(entry.action, std::string("compliance.report"));
        QCOMPARE(entry.outcome, audit::Outcome::Denied);
        QCOMPARE(entry.actor.id, std::string("sam"));

        auto anonymous = w.t.plane->compliance().report("", healthyFacts());
        QVERIFY(!anonymous);
    }

    // Every test the report names as a control's guard is a test of the suite.
    void namedTestsExist()
    {
        std::ifstream in(SEALTRAIN_TESTS_CMAKELISTS);
        const std::string registered{std::istreambuf_iterator<char>(in), {}};
        QVERIFY(!registered.empty());
        testing::JobsWorld w;
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        for (const auto& c : report->controls) {
            QVERIFY2(!c.tests.empty(), c.id.c_str());
            for (const auto& test : c.tests)
                QVERIFY2(registered.find("add_sealtrain_test(" + test + " ") != std::string::npos,
                         test.c_str());
        }
    }

    // CC5.1: a job whose recorded approver has no job.approve entry of their own fails; another
    // person's approval of it does not stand in (issue #48).
    void approverWithoutTheirOwnApprovalEntryFails()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();  // the failure is this rule's, not a single admin's
        const auto job = approvedJob(w, "borrowed");
        QVERIFY(w.t.database
                    ->run("UPDATE jobs SET approver = (SELECT id FROM users WHERE name = 'ivy') "
                          "WHERE id = ?",
                          {job.id})
                    .ok());
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        const auto& cc51 = control(*report, "CC5.1");
        QCOMPARE(cc51.verdict, ControlVerdict::Failed);
        QVERIFY2(claimsText(cc51).find("names ivy as approver, but the log has no such approval")
                     != std::string::npos,
                 claimsText(cc51).c_str());
    }

    // CC5.1, "past approval": a job that started an attempt is checked whatever its state now,
    // so one that ran unapproved and then failed fails the control (issue #48).
    void jobThatStartedAnAttemptWithoutApprovalFails()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();  // the failure is this rule's, not a single admin's
        approvedJob(w, "fine");
        auto tried = w.jobs().submit(w.session("eve"), testing::spec("tried", "notes", "cpu"));
        QVERIFY(tried.ok());
        QVERIFY(
            w.t.database->run("UPDATE jobs SET state = 'failed' WHERE id = ?", {tried->id}).ok());
        QVERIFY(w.t.database
                    ->run("INSERT INTO job_attempts (job_id, attempt, started, resumed_step, "
                          "outcome) VALUES (?, 1, 0, 0, 'failed')",
                          {tried->id})
                    .ok());
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        const auto& cc51 = control(*report, "CC5.1");
        QCOMPARE(cc51.verdict, ControlVerdict::Failed);
        QVERIFY2(claimsText(cc51).find("went past approval without an approval")
                     != std::string::npos,
                 claimsText(cc51).c_str());
    }

    // 164.312(c)(1) integrity: a job past approval whose spec differs from the approved one
    // fails (issue #48).
    void specThatDiffersFromTheApprovedOneFailsIntegrity()
    {
        testing::JobsWorld w;
        const auto job = approvedJob(w, "edited");
        auto report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        QCOMPARE(control(*report, "164.312(c)(1)").verdict, ControlVerdict::Passed);
        // Issue #49: the spec edited after its approval with both hash columns kept in step
        // (as a database edit would) still fails, since the report re-hashes the spec and
        // compares it with the SHA-256 of the signed job.approve entry, which it cites.
        const std::string edited = R"({"edited":true})";
        const auto hash =
            crypto::sha256({reinterpret_cast<const std::uint8_t*>(edited.data()), edited.size()});
        QVERIFY(w.t.database
                    ->run("UPDATE jobs SET spec = ?, spec_hash = ?, approved_hash = ? WHERE id = ?",
                          {edited, core::SqlValue::blob(hash), core::SqlValue::blob(hash), job.id})
                    .ok());
        report = w.t.plane->compliance().report(w.session("rita"), healthyFacts());
        QVERIFY(report.ok());
        const auto& integrity = control(*report, "164.312(c)(1)");
        QCOMPARE(integrity.verdict, ControlVerdict::Failed);
        QVERIFY2(claimsText(integrity).find("differs from the one that was approved")
                     != std::string::npos,
                 claimsText(integrity).c_str());
        const auto broken = brokenClaims(integrity);
        QCOMPARE(broken.size(), std::size_t{1});
        QCOMPARE(broken.front().sequences.size(), std::size_t{1});
        const auto cited =
            w.t.plane->auditLog().store().readEntries(broken.front().sequences.front(), 1);
        QVERIFY(cited && cited->size() == 1);
        QCOMPARE(audit::decodeEntry(cited->front().bytes).value().action,
                 std::string("job.approve"));
    }

    // 164.312(a)(2)(iv) encryption: a KEK purpose with no active version fails (issue #48).
    void kekPurposeWithoutAnActiveVersionFailsEncryption()
    {
        testing::JobsWorld w;
        auto facts = healthyFacts();
        facts.keks.front().state = crypto::KekState::DecryptOnly;
        const std::string purpose = facts.keks.front().id;
        auto report = w.t.plane->compliance().report(w.session("rita"), facts);
        QVERIFY(report.ok());
        const auto& encryption = control(*report, "164.312(a)(2)(iv)");
        QCOMPARE(encryption.verdict, ControlVerdict::Failed);
        QVERIFY2(claimsText(encryption).find("no active version of the '" + purpose + "' KEK")
                     != std::string::npos,
                 claimsText(encryption).c_str());
    }

    // 164.312(b), 164.312(c)(1) and CC7.2: the live log failing verification fails them, and the
    // report's entry records the failure (issue #48).
    void liveLogFailingVerificationFails()
    {
        testing::JobsWorld w;
        approvedJob(w, "first");
        const std::string rita = w.session("rita");
        // An early entry's recorded leaf hash altered in the store: the live log no longer
        // verifies, while the entries still decode and the bundle can still be made.
        QVERIFY(w.t.database
                    ->run("UPDATE audit_entries SET leaf_hash = zeroblob(32) WHERE sequence = 1")
                    .ok());
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY2(report.ok(), report ? "" : report.error().message().c_str());
        for (const char* id : {"164.312(b)", "164.312(c)(1)", "CC7.2"}) {
            const auto& judged = control(*report, id);
            QCOMPARE(judged.verdict, ControlVerdict::Failed);
            QVERIFY2(claimsText(judged).find("failed verification") != std::string::npos,
                     (std::string(id) + ": " + claimsText(judged)).c_str());
        }
        const auto entries = audit::verifyBundle(report->bundle, {}).entries;
        const auto own = std::find_if(entries.begin(), entries.end(), [&](const audit::Entry& e) {
            return e.sequence == report->reportEntry;
        });
        QVERIFY(own != entries.end());
        QVERIFY(testing::detailOf(*own, "log_verification").starts_with("failed"));
    }

    // 164.312(a)(2)(i) and CC6.2: a user with no audited creation (control.init or user.create)
    // fails both (issue #48).
    void userWithoutAnAuditedCreationFails()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();  // the failure is this rule's, not a single admin's
        const std::string rita = w.session("rita");
        // Renamed behind the control plane's back: no entry created a user of this name.
        QVERIFY(w.t.database->run("UPDATE users SET name = 'ghost' WHERE name = 'ivy'").ok());
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        for (const char* id : {"164.312(a)(2)(i)", "CC6.2"}) {
            const auto& judged = control(*report, id);
            QCOMPARE(judged.verdict, ControlVerdict::Failed);
            QVERIFY2(claimsText(judged).find("User 'ghost' has no audited creation")
                         != std::string::npos,
                     (std::string(id) + ": " + claimsText(judged)).c_str());
        }
    }

    // 164.312(d) and CC6.1: a sign-in that succeeded without password and TOTP fails both, and
    // the broken claim cites it (issue #48).
    void signInWithoutPasswordAndTotpFails()
    {
        testing::JobsWorld w;
        const std::string rita = w.session("rita");
        audit::EntryDraft signIn;
        signIn.actor = {audit::ActorKind::User, "eve", "session-without-mfa", "password"};
        signIn.action = "session.sign_in";
        signIn.target = {"user", "eve"};
        const std::uint64_t sequence = appendEntry(w, signIn);
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        for (const char* id : {"164.312(d)", "CC6.1"}) {
            const auto& judged = control(*report, id);
            QCOMPARE(judged.verdict, ControlVerdict::Failed);
            const auto broken = brokenClaims(judged);
            QCOMPARE(broken.size(), std::size_t{1});
            QVERIFY2(broken.front().text.find("succeeded without password and TOTP")
                         != std::string::npos,
                     broken.front().text.c_str());
            QCOMPARE(broken.front().sequences, std::vector<std::uint64_t>{sequence});
        }
    }

    // 164.312(a)(2)(ii) emergency access: a break-glass grant longer than the limit fails
    // (issue #48).
    void breakGlassLongerThanTheLimitFails()
    {
        testing::JobsWorld w;
        const std::string rita = w.session("rita");
        const auto limit = w.t.plane->options().maxBreakGlass.count();
        const std::uint64_t sequence = appendEntry(
            w, breakGlassGrant(
                   {audit::textDetail("expires_in_s", std::to_string(limit + 3600)),
                    audit::textDetail("break_glass_reason", "ward 3 outage, ticket 1234")}));
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        const auto& emergency = control(*report, "164.312(a)(2)(ii)");
        QCOMPARE(emergency.verdict, ControlVerdict::Failed);
        const auto broken = brokenClaims(emergency);
        QCOMPARE(broken.size(), std::size_t{1});
        QCOMPARE(broken.front().sequences, std::vector<std::uint64_t>{sequence});
        QVERIFY2(broken.front().text.find("outside the policy") != std::string::npos,
                 broken.front().text.c_str());
    }

    // Issue #49: the report keeps the newest kMaxBreakGlass uses to list, but an older use
    // outside the policy still fails the control, and is cited.
    void breakGlassOutsideThePolicyBeyondTheListedStillFails()
    {
        testing::JobsWorld w;
        const std::string rita = w.session("rita");
        // No reason: outside the policy.
        const std::uint64_t outside =
            appendEntry(w, breakGlassGrant({audit::textDetail("expires_in_s", "600")}));
        const auto within = breakGlassGrant({audit::textDetail("expires_in_s", "600"),
                                             audit::textDetail("break_glass_reason", "ward 3")});
        for (std::size_t i = 0; i < core::kMaxBreakGlassListed; ++i)
            (void)appendEntry(w, within);
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        const auto& emergency = control(*report, "164.312(a)(2)(ii)");
        QCOMPARE(emergency.verdict, ControlVerdict::Failed);
        const auto broken = brokenClaims(emergency);
        QCOMPARE(broken.size(), std::size_t{1});
        QCOMPARE(broken.front().sequences, std::vector<std::uint64_t>{outside});
        QVERIFY2(broken.front().text.find("1 break-glass grants in all were outside the policy")
                     != std::string::npos,
                 broken.front().text.c_str());
    }

    // Issue #49: a claim's count is its whole population; only the newest 25 are cited, and
    // the text says how many there are.
    void populationsAreCountedBeyondTheCited()
    {
        testing::JobsWorld w;
        const std::string rita = w.session("rita");
        audit::EntryDraft refused;
        refused.actor = {audit::ActorKind::User, "eve", "session-of-eve", "password+totp"};
        refused.action = "role.create";
        refused.target = {"role", "mine"};
        refused.outcome = audit::Outcome::Denied;
        refused.reason = "no permission";
        refused.details = {audit::textDetail("reason_code", "no_permission")};
        std::vector<std::uint64_t> appended;
        appended.reserve(40);
        for (int i = 0; i < 40; ++i)
            appended.push_back(appendEntry(w, refused));
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        const auto& audit = control(*report, "164.312(b)");
        const auto refusals =
            std::find_if(audit.claims.begin(), audit.claims.end(), [](const auto& claim) {
                return claim.text.find("recorded in the log") != std::string::npos;
            });
        QVERIFY(refusals != audit.claims.end());
        QVERIFY(refusals->count >= 40);
        QCOMPARE(refusals->sequences.size(), core::kMaxCitedPerClaim);
        QCOMPARE(refusals->sequences.back(), appended.back());
        QVERIFY2(refusals->text.find(std::to_string(refusals->count) + " in all; the newest 25")
                     != std::string::npos,
                 refusals->text.c_str());
    }

    // Issue #49, CC8.1 change management: the control plane's own starts, upgrades and schema
    // migrations are the evidence, read only from entries it wrote itself (the system actor). A
    // schema version the database holds without an audited migration (the database changed
    // outside the control plane) fails the control; a promotion or export approved by its own
    // requester fails CC5.1.
    void changeManagementRestsOnThePlatformsOwnEntries()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();
        const std::string rita = w.session("rita");
        QVERIFY(w.t.plane->recordPlatformChange(
            "platform.start", {audit::textDetail("version", "0.1.0"),
                               audit::textDetail("config_sha256", std::string(64, 'c'))}));
        QVERIFY(w.t.plane->recordPlatformChange("platform.upgrade",
                                                {audit::textDetail("from_version", "0.1.0"),
                                                 audit::textDetail("to_version", "0.2.0")}));
        // A user's entry with a platform action is not the platform's.
        audit::EntryDraft forged;
        forged.actor = {audit::ActorKind::User, "eve", "session-of-eve", "password+totp"};
        forged.action = "platform.migrate";
        forged.target = {"platform", "data-directory"};
        forged.details = {audit::textDetail("from_version", "17"),
                          audit::textDetail("to_version", "18")};
        appendEntry(w, forged);
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        const auto& cc81 = control(*report, "CC8.1");
        QVERIFY2(cc81.verdict == ControlVerdict::Passed, claimsText(cc81).c_str());
        const auto claimCounting = [&](const char* text) {
            const auto found = std::find_if(cc81.claims.begin(), cc81.claims.end(), [&](auto& c) {
                return c.text.find(text) != std::string::npos;
            });
            return found == cc81.claims.end() ? std::uint64_t{999} : found->count;
        };
        QCOMPARE(claimCounting("start of the control plane"), std::uint64_t{1});
        QCOMPARE(claimCounting("upgrade of the release"), std::uint64_t{1});
        // The database's own migration at creation (0 to the newest), not eve's entry.
        QCOMPARE(claimCounting("schema migration audited"), std::uint64_t{1});

        // A schema version newer than any appears with no audited migration: eve's entry does
        // not cover it.
        const int unaudited = core::latestSchemaVersion() + 1;
        QVERIFY(w.t.database
                    ->run("INSERT INTO schema_version (version, applied) VALUES (?, "
                          "strftime('%s', 'now'))",
                          {unaudited})
                    .ok());
        report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        QCOMPARE(control(*report, "CC8.1").verdict, ControlVerdict::Failed);
        QVERIFY2(claimsText(control(*report, "CC8.1"))
                         .find("Schema version " + std::to_string(unaudited))
                     != std::string::npos,
                 claimsText(control(*report, "CC8.1")).c_str());
    }

    // CC5.1: a promotion or an export approved by the person who asked for it breaks the
    // separation of duties (the rows as the registry keeps them); one approved by another passes.
    void aPromotionOrExportApprovedByItsRequesterFails()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();
        approvedJob(w, "model");
        const std::string rita = w.session("rita");
        QVERIFY(w.t.database
                    ->run("INSERT INTO model_versions (id, name, version, project, description, "
                          "source, step, digest, sealed_sha256, worker, dataset_id, "
                          "registered_by, registered, statement) VALUES (1, 'gpt', 2, 'p', '', "
                          "'import', 0, 'sha256:00', '00', '', '', (SELECT id FROM users WHERE "
                          "name = 'eve'), 0, '')")
                    .ok());
        const auto promote = [&](const char* requester, const char* decider) {
            return w.t.database->run(
                "INSERT INTO model_promotions (version_id, alias, digest, reason, requested_by, "
                "requested, state, decided_by, decided) VALUES (1, 'prod', 'sha256:00', 'r', "
                "(SELECT id FROM users WHERE name = ?), 0, 'approved', (SELECT id FROM users "
                "WHERE name = ?), 0)",
                {std::string(requester), std::string(decider)});
        };
        QVERIFY(promote("eve", "ann").ok());
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        QVERIFY2(control(*report, "CC5.1").verdict == ControlVerdict::Passed,
                 claimsText(control(*report, "CC5.1")).c_str());

        QVERIFY(promote("ann", "ann").ok());
        report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        QCOMPARE(control(*report, "CC5.1").verdict, ControlVerdict::Failed);
        QVERIFY2(claimsText(control(*report, "CC5.1"))
                         .find("Promotion 2 (gpt@2 to prod) was approved by its own requester, ann")
                     != std::string::npos,
                 claimsText(control(*report, "CC5.1")).c_str());
        QVERIFY(w.t.database->run("DELETE FROM model_promotions WHERE id = 2").ok());
        QVERIFY(w.t.database
                    ->run("INSERT INTO model_exports (version_id, digest, reason, requested_by, "
                          "requested, state, decided_by, decided) VALUES (1, 'sha256:00', 'r', "
                          "(SELECT id FROM users WHERE name = 'sam'), 0, 'approved', (SELECT id "
                          "FROM users WHERE name = 'sam'), 0)")
                    .ok());
        report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        QCOMPARE(control(*report, "CC5.1").verdict, ControlVerdict::Failed);
        QVERIFY2(claimsText(control(*report, "CC5.1"))
                         .find("Export 1 (gpt@2) was approved by its own requester, sam")
                     != std::string::npos,
                 claimsText(control(*report, "CC5.1")).c_str());
    }

    // Issue #49: the report reads the whole log (minutes at ten million entries), and the API
    // lets other calls run after each page it reads (betweenPages). What they write is left to
    // the next report: this one judges the log's first logSize entries, as it stood when it
    // began, its verification still holds, and its own entry comes after theirs. The caller is
    // checked again when that entry is written: rita's role taken away during a pause refuses
    // the report.
    void aLongReportLetsOtherCallsRunBetweenItsPages()
    {
        testing::JobsWorld w;
        w.addSecondAdmin();
        const std::string rita = w.session("rita");
        const std::string alice = w.session("alice");
        {
            // More than two of the report's pages (4,096 entries each), in one transaction.
            auto transaction = w.t.database->begin();
            QVERIFY(transaction.ok());
            audit::EntryDraft filler;
            filler.actor = {audit::ActorKind::User, "eve", "session-of-eve", "password+totp"};
            filler.action = "role.list";
            filler.target = {"role", "*"};
            for (int i = 0; i < 9000; ++i)
                QVERIFY(w.t.plane->auditLog().append(**transaction, filler).ok());
            QVERIFY((*transaction)->commit().ok());
        }
        const std::uint64_t before = *w.t.plane->auditLog().store().entryCount();
        int pauses = 0;
        std::uint64_t madeMeanwhile = 0;
        auto report = w.t.plane->compliance().report(rita, healthyFacts(), {}, [&] {
            if (++pauses == 1) {
                QVERIFY(w.t.plane->identity().createUser(alice, "pat").ok());
                madeMeanwhile = w.last().sequence;
            }
        });
        QVERIFY2(report.ok(), report.ok() ? "" : report.error().message().c_str());
        // The verification's pages and the index's: three each.
        QVERIFY2(pauses >= 6, std::to_string(pauses).c_str());
        QCOMPARE(report->logSize, before);
        QVERIFY(madeMeanwhile >= before);
        QVERIFY(report->reportEntry > madeMeanwhile);
        const auto own = w.t.plane->auditLog().store().readEntries(report->reportEntry, 1);
        QVERIFY(own.ok() && own->size() == 1);
        const auto decoded = core::decodeStoredEntries(*own);
        QVERIFY(decoded.ok());
        QCOMPARE(decoded->front().action, std::string("compliance.report"));
        QCOMPARE(testing::detailOf(decoded->front(), "log_size"), std::to_string(before));
        QVERIFY(testing::detailOf(decoded->front(), "log_verification").starts_with("verified"));

        // rita loses the auditor role while the report pauses: its entry is refused.
        bool revoked = false;
        auto refused = w.t.plane->compliance().report(rita, healthyFacts(), {}, [&] {
            if (!revoked) {
                revoked = true;
                const std::string bea = w.session("bea");
                QVERIFY(w.t.plane->access().revokeRole(bea, "rita", "auditor", "").ok());
            }
        });
        QVERIFY(revoked);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
        QCOMPARE(w.last().action, std::string("compliance.report"));
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
    }

    // Issue #49, item 1: evidence is read from the reason code the control plane writes
    // (reason_code), never from the sentence, which may quote caller text. An engineer's refused
    // grants whose project imitates every reason the report looks for, and entries whose very
    // sentences are the platform's own words but carry no code, leave automatic logoff with no
    // evidence and count as no duty refusal and no lockout; the real refusals, with their codes,
    // do count.
    void evidenceIsReadFromReasonCodesNeverFromText()
    {
        testing::JobsWorld w;
        const std::string eve = w.session("eve");
        const std::string rita = w.session("rita");
        for (const std::string project :
             {"The session has expired", "Nobody may approve their own job", "the last admin",
              "A role may not combine", "account locked"}) {
            auto refused = w.t.plane->access().grantRole(eve, "eve", "engineer", project);
            QVERIFY(!refused);
            QCOMPARE(w.last().outcome, audit::Outcome::Denied);
            QVERIFY2(w.last().reason.find(project) != std::string::npos, w.last().reason.c_str());
            QCOMPARE(testing::detailOf(w.last(), "reason_code"), std::string("no_permission"));
        }
        for (const auto& [action, sentence] : std::vector<std::pair<std::string, std::string>>{
                 {"job.approve", "Nobody may approve their own job; ask another approver."},
                 {"user.disable", "Cannot disable 'bea': it is the last admin; make another "
                                  "admin first."},
                 {"role.create", "A role may not combine data with jobs permissions; make two "
                                 "roles."},
                 {"dataset.list", "The session has expired; sign in again."},
                 {"session.sign_in", "account locked for 60 more seconds after repeated failed "
                                     "sign-ins"}}) {
            audit::EntryDraft draft;
            draft.actor = {audit::ActorKind::User, "eve", "session-of-eve", "password+totp"};
            draft.action = action;
            draft.outcome = audit::Outcome::Denied;
            draft.reason = sentence;
            appendEntry(w, draft);
        }
        auto report = w.t.plane->compliance().report(rita, healthyFacts());
        QVERIFY(report.ok());
        const auto observedIn = [&](const std::string& id, const std::string& words) {
            for (const auto& claim : control(*report, id).claims)
                if (claim.text.find(words) != std::string::npos)
                    return claim;
            qFatal("no claim with '%s' in %s", words.c_str(), id.c_str());
            return ComplianceClaim{};
        };
        QCOMPARE(control(*report, "164.312(a)(2)(iii)").verdict, ControlVerdict::NoEvidence);
        QVERIFY(observedIn("164.312(a)(2)(iii)", "expired session").sequences.empty());
        QVERIFY(observedIn("CC6.3", "separation-of-duties").sequences.empty());
        QVERIFY2(observedIn("CC6.6", "failed sign-in").text.find("0 of them under lockout")
                     != std::string::npos,
                 observedIn("CC6.6", "failed sign-in").text.c_str());

        // The real refusals carry their codes and count: sam granting himself a read, and a
        // call with a session left unused past the idle limit.
        QVERIFY(!w.t.plane->datasets().grantRead(w.session("sam"), "notes", "sam"));
        const std::uint64_t ownApproval = w.last().sequence;
        QCOMPARE(testing::detailOf(w.last(), "reason_code"), std::string("own_approval"));
        w.t.clock.advance(w.t.plane->options().sessionIdle + std::chrono::seconds(1));
        QVERIFY(!w.jobs().list(eve));
        const std::uint64_t expired = w.last().sequence;
        QCOMPARE(testing::detailOf(w.last(), "reason_code"), std::string("session_expired"));
        report = w.t.plane->compliance().report(
            w.t.signIn("rita", testing::kPassword, w.uris["rita"]), healthyFacts());
        QVERIFY(report.ok());
        QCOMPARE(control(*report, "164.312(a)(2)(iii)").verdict, ControlVerdict::Passed);
        QCOMPARE(observedIn("164.312(a)(2)(iii)", "expired session").sequences,
                 std::vector<std::uint64_t>{expired});
        QCOMPARE(observedIn("CC6.3", "separation-of-duties").sequences,
                 std::vector<std::uint64_t>{ownApproval});
    }

    // Every reason code the control plane writes is listed in docs/formats/audit.md, and the list
    // names no other.
    void everyReasonCodeIsDocumented()
    {
        std::ifstream in(
            std::filesystem::path(SEALTRAIN_TESTS_CMAKELISTS).parent_path().parent_path() / "docs"
            / "formats" / "audit.md");
        const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        const auto section = doc.find("## Reason codes");
        QVERIFY2(section != std::string::npos, "docs/formats/audit.md has no Reason codes section");
        const std::string table = doc.substr(section, doc.find("\n## ", section + 1) - section);
        std::size_t rows = 0;
        for (std::size_t at = table.find("\n| `"); at != std::string::npos;
             at = table.find("\n| `", at + 1))
            ++rows;
        QCOMPARE(rows, core::reason::kAll.size());
        for (const ReasonCode code : core::reason::kAll)
            QVERIFY2(table.find("| `" + std::string(code.name()) + "` |") != std::string::npos,
                     std::string(code.name()).c_str());
    }
};

QTEST_GUILESS_MAIN(TestCoreCompliance)
#include "test_core_compliance.moc"
