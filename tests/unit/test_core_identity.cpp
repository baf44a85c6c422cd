// Identity against its attacks: a disabled user's old session, lockout with exponential
// back-off, TOTP replay, and no timing oracle for user names, all on an injected clock.
#include "service_world.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using sealtrain::testing::kPassword;
using sealtrain::testing::secret;

class TestIdentity : public QObject {
    Q_OBJECT

private slots:
    void disabledUsersOldSessionIsRefused()
    {
        testing::ServiceWorld w;
        const auto engineer = w.session("engineer-user");
        const auto spec = crypto::sha256(asBytes("x"));
        QVERIFY(w.t.plane->submissions().submit(engineer, "job", "a", "", spec).ok());
        QVERIFY(w.t.plane->identity().disableUser(w.admin, "engineer-user").ok());
        auto refused = w.t.plane->submissions().submit(engineer, "job", "b", "", spec);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::Unauthenticated);
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        QCOMPARE(w.last().actor.id, std::string("engineer-user"));
        // A new sign-in is refused too, and audited.
        QVERIFY(w.session("engineer-user").empty());
        QCOMPARE(w.last().action, std::string("session.sign_in"));
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        // Re-enabled, the user signs in again; the old session stays revoked.
        QVERIFY(w.t.plane->identity().enableUser(w.admin, "engineer-user").ok());
        QVERIFY(!w.session("engineer-user").empty());
        QVERIFY(!w.t.plane->submissions().submit(engineer, "job", "c", "", spec).ok());
    }

    void lockoutBacksOffExponentially()
    {
        testing::ServiceWorld w;
        const auto code = [&] {
            return core::totpCode(testing::totpSecretFromUri(w.uris["engineer-user"]),
                                  core::totpStep(w.t.clock.now()));
        };
        for (int i = 0; i < 5; ++i)
            QVERIFY(!w.t.plane->identity()
                         .signIn("engineer-user", secret("wrong password!!"), code())
                         .ok());
        QVERIFY(w.last().reason == "wrong password");
        // Locked for 30 s: even the right password is refused.
        w.t.clock.advance(std::chrono::seconds{10});
        auto locked = w.t.plane->identity().signIn("engineer-user", secret(kPassword), code());
        QVERIFY(!locked.ok());
        QVERIFY(locked.error().message().find("locked") != std::string::npos);
        w.t.clock.advance(std::chrono::seconds{25});
        // One more failure doubles the lock to 60 s.
        QVERIFY(!w.t.plane->identity()
                     .signIn("engineer-user", secret("wrong password!!"), code())
                     .ok());
        w.t.clock.advance(std::chrono::seconds{45});
        QVERIFY(!w.t.plane->identity().signIn("engineer-user", secret(kPassword), code()).ok());
        w.t.clock.advance(std::chrono::seconds{20});
        QVERIFY(w.t.plane->identity().signIn("engineer-user", secret(kPassword), code()).ok());
    }

    void totpCodeCanNotBeReplayed()
    {
        testing::ServiceWorld w;
        w.t.clock.advance(core::kTotpStep);
        const auto code = core::totpCode(testing::totpSecretFromUri(w.uris["engineer-user"]),
                                         core::totpStep(w.t.clock.now()));
        QVERIFY(w.t.plane->identity().signIn("engineer-user", secret(kPassword), code).ok());
        auto replay = w.t.plane->identity().signIn("engineer-user", secret(kPassword), code);
        QVERIFY(!replay.ok());
        QCOMPARE(w.last().reason, std::string("TOTP code reused"));
    }

    // No timing oracle for user names: an unknown name costs an Argon2id verification too.
    void unknownUserTakesAsLongAsAWrongPassword()
    {
        testing::ServiceWorld w;
        const auto time = [&](const std::string& name) {
            QElapsedTimer timer;
            timer.start();
            for (int i = 0; i < 3; ++i)
                (void)w.t.plane->identity().signIn(name, secret("wrong password here"), "000000");
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

QTEST_APPLESS_MAIN(TestIdentity)
#include "test_core_identity.moc"
