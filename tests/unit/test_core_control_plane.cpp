// The service layer against the attacks of issue #5: each is refused and audited as denied.
// Also lockout with back-off, session expiry and break-glass, all on an injected clock.
#include "core_fixture.h"

#include <QtTest/QtTest>

#include <map>

using namespace sealtrain;
using sealtrain::testing::secret;

namespace {

constexpr const char* kPassword = "a long enough passphrase";

struct World {
    testing::ControlPlaneFixture t;
    std::string admin;
    std::map<std::string, std::string> uris;

    World()
    {
        auto enrollment = t.plane->init("alice", secret(kPassword));
        uris["alice"] = enrollment->otpauthUri;
        admin = t.signIn("alice", kPassword, uris["alice"]);
        for (const std::string role : {"engineer", "approver", "auditor"}) {
            const std::string user = role + "-user";
            uris[user] = t.plane->createUser(admin, user, secret(kPassword))->otpauthUri;
            (void)t.plane->grantRole(admin, user, role, "");
        }
    }

    std::string session(const std::string& user) { return t.signIn(user, kPassword, uris[user]); }

    // The newest committed entry.
    audit::Entry last() const
    {
        const auto size = t.plane->auditLog().size();
        const auto stored = t.store->readEntries(size - 1, 1).value();
        return audit::decodeEntry(stored.front().bytes).value();
    }
};

template <typename T>
void verifyDenied(World& w, const Result<T>& result, const std::string& action)
{
    QVERIFY(!result.ok());
    QVERIFY(isOneSentence(result.error().message()));
    const auto entry = w.last();
    QCOMPARE(QString::fromStdString(entry.action), QString::fromStdString(action));
    QCOMPARE(entry.outcome, audit::Outcome::Denied);
    QCOMPARE(entry.reason, result.error().message());
}

}  // namespace

class TestControlPlane : public QObject {
    Q_OBJECT

private slots:
    void engineerCanNotGrantThemselvesAdmin()
    {
        World w;
        const auto engineer = w.session("engineer-user");
        QVERIFY(!engineer.empty());
        verifyDenied(w, w.t.plane->grantRole(engineer, "engineer-user", "admin", ""),
                     "grant.create");
        QCOMPARE(w.last().actor.id, std::string("engineer-user"));
    }

    void approverCanNotApproveTheirOwnSubmission()
    {
        World w;
        QVERIFY(w.t.plane->grantRole(w.admin, "approver-user", "engineer", "").ok());
        const auto approver = w.session("approver-user");
        const auto spec = crypto::sha256(asBytes("{\"model\":\"gpt\"}"));
        auto id = w.t.plane->submit(approver, "job", "train-1", "", spec);
        QVERIFY(id.ok());
        verifyDenied(w, w.t.plane->approve(approver, *id, spec), "job.approve");
        QVERIFY(!*w.t.plane->isApproved(approver, *id));
    }

    void approvalIsBoundToTheContentHash()
    {
        World w;
        const auto engineer = w.session("engineer-user");
        const auto approver = w.session("approver-user");
        const auto spec = crypto::sha256(asBytes("{\"lr\":0.001}"));
        const auto edited = crypto::sha256(asBytes("{\"lr\":0.001,\"dataset\":\"all\"}"));
        auto id = *w.t.plane->submit(engineer, "job", "train-2", "", spec);
        QVERIFY(w.t.plane->approve(approver, id, spec).ok());
        QVERIFY(*w.t.plane->isApproved(engineer, id));
        // The edit voids the approval; replaying it onto the edited spec is refused.
        QVERIFY(w.t.plane->editSubmission(engineer, id, edited).ok());
        QVERIFY(!*w.t.plane->isApproved(engineer, id));
        verifyDenied(w, w.t.plane->approve(approver, id, spec), "job.approve");
        QVERIFY(w.t.plane->approve(approver, id, edited).ok());
        QVERIFY(*w.t.plane->isApproved(engineer, id));
    }

    void disabledUsersOldSessionIsRefused()
    {
        World w;
        const auto engineer = w.session("engineer-user");
        const auto spec = crypto::sha256(asBytes("x"));
        QVERIFY(w.t.plane->submit(engineer, "job", "a", "", spec).ok());
        QVERIFY(w.t.plane->disableUser(w.admin, "engineer-user").ok());
        auto refused = w.t.plane->submit(engineer, "job", "b", "", spec);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::Unauthenticated);
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        QCOMPARE(w.last().actor.id, std::string("engineer-user"));
        // A new sign-in is refused too, and audited.
        QVERIFY(w.session("engineer-user").empty());
        QCOMPARE(w.last().action, std::string("session.sign_in"));
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        // Re-enabled, the user signs in again; the old session stays revoked.
        QVERIFY(w.t.plane->enableUser(w.admin, "engineer-user").ok());
        QVERIFY(!w.session("engineer-user").empty());
        QVERIFY(!w.t.plane->submit(engineer, "job", "c", "", spec).ok());
    }

    void lastAdminCanNotRemoveThemselves()
    {
        World w;
        verifyDenied(w, w.t.plane->disableUser(w.admin, "alice"), "user.disable");
        verifyDenied(w, w.t.plane->revokeRole(w.admin, "alice", "admin", ""), "grant.revoke");
        // With a second admin, it is allowed.
        QVERIFY(w.t.plane->grantRole(w.admin, "approver-user", "admin", "").ok());
        QVERIFY(w.t.plane->revokeRole(w.admin, "alice", "admin", "").ok());
        QCOMPARE(w.last().outcome, audit::Outcome::Ok);
    }

    void auditorChangesNothing()
    {
        World w;
        const auto auditor = w.session("auditor-user");
        verifyDenied(w, w.t.plane->createUser(auditor, "mallory", secret(kPassword)),
                     "user.create");
        verifyDenied(w, w.t.plane->disableUser(auditor, "alice"), "user.disable");
        verifyDenied(w, w.t.plane->createRole(auditor, "sneaky", {"audit.read"}), "role.create");
        verifyDenied(w, w.t.plane->grantRole(auditor, "auditor-user", "admin", ""), "grant.create");
        verifyDenied(w, w.t.plane->revokeSessions(auditor, "alice"), "session.revoke");
        // What an auditor may do: read the log, which is itself audited.
        auto entries = w.t.plane->readAudit(auditor, 0, 1000);
        QVERIFY(entries.ok());
        QVERIFY(!entries->empty());
        QCOMPARE(w.last().action, std::string("audit.read"));
        // Nothing in the log holds a password, token or TOTP secret.
        for (const auto& entry : *entries)
            for (const auto& detail : entry.details)
                QVERIFY(std::string(detail.value.begin(), detail.value.end()).find(kPassword)
                        == std::string::npos);
    }

    void lockoutBacksOffExponentially()
    {
        World w;
        const auto code = [&] {
            return core::totpCode(testing::totpSecretFromUri(w.uris["engineer-user"]),
                                  core::totpStep(w.t.clock.now()));
        };
        for (int i = 0; i < 5; ++i)
            QVERIFY(!w.t.plane->signIn("engineer-user", secret("wrong password!!"), code()).ok());
        QVERIFY(w.last().reason == "wrong password");
        // Locked for 30 s: even the right password is refused.
        w.t.clock.advance(std::chrono::seconds{10});
        auto locked = w.t.plane->signIn("engineer-user", secret(kPassword), code());
        QVERIFY(!locked.ok());
        QVERIFY(locked.error().message().find("locked") != std::string::npos);
        w.t.clock.advance(std::chrono::seconds{25});
        // One more failure doubles the lock to 60 s.
        QVERIFY(!w.t.plane->signIn("engineer-user", secret("wrong password!!"), code()).ok());
        w.t.clock.advance(std::chrono::seconds{45});
        QVERIFY(!w.t.plane->signIn("engineer-user", secret(kPassword), code()).ok());
        w.t.clock.advance(std::chrono::seconds{20});
        QVERIFY(w.t.plane->signIn("engineer-user", secret(kPassword), code()).ok());
    }

    void totpCodeCanNotBeReplayed()
    {
        World w;
        w.t.clock.advance(core::kTotpStep);
        const auto code = core::totpCode(testing::totpSecretFromUri(w.uris["engineer-user"]),
                                         core::totpStep(w.t.clock.now()));
        QVERIFY(w.t.plane->signIn("engineer-user", secret(kPassword), code).ok());
        auto replay = w.t.plane->signIn("engineer-user", secret(kPassword), code);
        QVERIFY(!replay.ok());
        QCOMPARE(w.last().reason, std::string("TOTP code reused"));
    }

    void sessionsExpireWhenIdleAndAtTheirLimit()
    {
        World w;
        const auto auditor = w.session("auditor-user");
        w.t.clock.advance(std::chrono::seconds{899});
        QVERIFY(w.t.plane->readAudit(auditor, 0, 1).ok());
        w.t.clock.advance(std::chrono::seconds{901});
        auto idle = w.t.plane->readAudit(auditor, 0, 1);
        QVERIFY(!idle.ok());
        QCOMPARE(idle.error().code(), ErrorCode::Unauthenticated);

        const auto busy = w.session("auditor-user");
        for (int i = 0; i < 49; ++i) {  // past 12 hours of activity every 15 minutes
            QVERIFY(w.t.plane->readAudit(busy, 0, 1).ok());
            w.t.clock.advance(std::chrono::seconds{899});
        }
        QVERIFY(!w.t.plane->readAudit(busy, 0, 1).ok());

        const auto signedOut = w.session("auditor-user");
        QVERIFY(w.t.plane->signOut(signedOut).ok());
        QVERIFY(!w.t.plane->readAudit(signedOut, 0, 1).ok());
        QVERIFY(!w.t.plane->readAudit("st_forged", 0, 1).ok());
        QCOMPARE(w.last().actor.id, std::string("unknown"));
    }

    void breakGlassIsTimeLimitedAndFlagged()
    {
        World w;
        const auto engineer = w.session("engineer-user");
        QVERIFY(!w.t.plane
                     ->grantBreakGlass(w.admin, "engineer-user", "auditor", "", "",
                                       std::chrono::seconds{600})
                     .ok());
        QCOMPARE(w.last().outcome, audit::Outcome::Failed);
        auto granted =
            w.t.plane->grantBreakGlass(w.admin, "engineer-user", "auditor", "",
                                       "incident 42: trace a leak", std::chrono::seconds{600});
        QVERIFY2(granted.ok(), granted.ok() ? "" : granted.error().message().c_str());
        QVERIFY(w.t.plane->readAudit(engineer, 0, 1).ok());
        const auto flagged = w.last();
        QCOMPARE(flagged.action, std::string("audit.read"));
        QVERIFY(std::find(flagged.details.begin(), flagged.details.end(),
                          audit::textDetail("break_glass", "true"))
                != flagged.details.end());
        w.t.clock.advance(std::chrono::seconds{601});
        verifyDenied(w, w.t.plane->readAudit(engineer, 0, 1), "audit.read");
    }

    void customRolesAndProjectGrants()
    {
        World w;
        QVERIFY(w.t.plane->createRole(w.admin, "reviewer", {"job.approve", "audit.read"}).ok());
        auto mixed = w.t.plane->createRole(w.admin, "superuser", {"user.manage", "dataset.read"});
        QVERIFY(!mixed.ok());
        QVERIFY(!w.t.plane->createRole(w.admin, "odd", {"everything.all"}).ok());
        QVERIFY(w.t.plane->grantRole(w.admin, "auditor-user", "reviewer", "oncology").ok());
        const auto engineer = w.session("engineer-user");
        const auto reviewer = w.session("auditor-user");
        const auto spec = crypto::sha256(asBytes("p"));
        auto inScope = *w.t.plane->submit(engineer, "job", "j1", "oncology", spec);
        auto outOfScope = *w.t.plane->submit(engineer, "job", "j2", "cardiology", spec);
        QVERIFY(w.t.plane->approve(reviewer, inScope, spec).ok());
        verifyDenied(w, w.t.plane->approve(reviewer, outOfScope, spec), "job.approve");
        QVERIFY(!w.t.plane->deleteRole(w.admin, "reviewer").ok());  // still granted
        QVERIFY(w.t.plane->revokeRole(w.admin, "auditor-user", "reviewer", "oncology").ok());
        QVERIFY(w.t.plane->deleteRole(w.admin, "reviewer").ok());
        QVERIFY(!w.t.plane->deleteRole(w.admin, "admin").ok());
        QVERIFY(!w.t.plane->init("eve", secret(kPassword)).ok());
    }

    // Operators of the infrastructure hold no data or job permissions: not in one role, not
    // through two grants (either order, any project, break-glass included).
    void operatorsHoldNoDataPermissions()
    {
        World w;
        auto mixed = w.t.plane->createRole(w.admin, "opsdata", {"worker.manage", "dataset.read"});
        QVERIFY(!mixed.ok());
        QCOMPARE(mixed.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(w.t.plane->createUser(w.admin, "olivia", secret(kPassword)).ok());
        QVERIFY(w.t.plane->grantRole(w.admin, "olivia", "operator", "").ok());
        verifyDenied(w, w.t.plane->grantRole(w.admin, "olivia", "engineer", "oncology"),
                     "grant.create");
        verifyDenied(w,
                     w.t.plane->grantBreakGlass(w.admin, "olivia", "steward", "", "incident 7",
                                                std::chrono::seconds{600}),
                     "grant.break_glass");
        verifyDenied(w, w.t.plane->grantRole(w.admin, "engineer-user", "operator", ""),
                     "grant.create");
        // Roles without data permissions are fine for an operator.
        QVERIFY(w.t.plane->grantRole(w.admin, "olivia", "auditor", "").ok());
    }

    // No timing oracle for user names: an unknown name costs an Argon2id verification too.
    void unknownUserTakesAsLongAsAWrongPassword()
    {
        World w;
        const auto time = [&](const std::string& name) {
            QElapsedTimer timer;
            timer.start();
            for (int i = 0; i < 3; ++i)
                (void)w.t.plane->signIn(name, secret("wrong password here"), "000000");
            return timer.nsecsElapsed();
        };
        // Warm both paths once, then compare.
        (void)time("nobody");
        (void)time("engineer-user");
        const auto unknown = time("nobody");
        const auto wrong = time("auditor-user");
        QVERIFY2(
            unknown * 2 > wrong,
            qPrintable(QString("unknown %1 ns, wrong password %2 ns").arg(unknown).arg(wrong)));
        QVERIFY2(
            wrong * 2 > unknown,
            qPrintable(QString("unknown %1 ns, wrong password %2 ns").arg(unknown).arg(wrong)));
    }
};

QTEST_APPLESS_MAIN(TestControlPlane)
#include "test_core_control_plane.moc"
