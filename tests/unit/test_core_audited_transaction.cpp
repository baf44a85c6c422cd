// The audited transaction, the one door every call walks through: a reader's attempts to change
// anything are refused and audited (and no secret reaches the log), and sessions expire when idle,
// at their absolute limit and on sign-out, on an injected clock.
#include "service_world.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using sealtrain::testing::kPassword;
using sealtrain::testing::secret;
using sealtrain::testing::verifyDenied;

class TestAuditedTransaction : public QObject {
    Q_OBJECT

private slots:
    void auditorChangesNothing()
    {
        testing::ServiceWorld w;
        const auto auditor = w.session("auditor-user");
        verifyDenied(w, w.t.plane->identity().createUser(auditor, "mallory", secret(kPassword)),
                     "user.create");
        verifyDenied(w, w.t.plane->identity().disableUser(auditor, "alice"), "user.disable");
        verifyDenied(w, w.t.plane->access().createRole(auditor, "sneaky", {"audit.read"}),
                     "role.create");
        verifyDenied(w, w.t.plane->access().grantRole(auditor, "auditor-user", "admin", ""),
                     "grant.create");
        verifyDenied(w, w.t.plane->identity().revokeSessions(auditor, "alice"), "session.revoke");
        // What an auditor may do: read the log, which is itself audited.
        auto entries = w.t.plane->auditQueries().read(auditor, 0, 1000);
        QVERIFY(entries.ok());
        QVERIFY(!entries->empty());
        QCOMPARE(w.last().action, std::string("audit.read"));
        // Nothing in the log holds a password, token or TOTP secret.
        for (const auto& entry : *entries)
            for (const auto& detail : entry.details)
                QVERIFY(std::string(detail.value.begin(), detail.value.end()).find(kPassword)
                        == std::string::npos);
    }

    void sessionsExpireWhenIdleAndAtTheirLimit()
    {
        testing::ServiceWorld w;
        const auto auditor = w.session("auditor-user");
        w.t.clock.advance(std::chrono::seconds{899});
        QVERIFY(w.t.plane->auditQueries().read(auditor, 0, 1).ok());
        w.t.clock.advance(std::chrono::seconds{901});
        auto idle = w.t.plane->auditQueries().read(auditor, 0, 1);
        QVERIFY(!idle.ok());
        QCOMPARE(idle.error().code(), ErrorCode::Unauthenticated);

        const auto busy = w.session("auditor-user");
        for (int i = 0; i < 49; ++i) {  // past 12 hours of activity every 15 minutes
            QVERIFY(w.t.plane->auditQueries().read(busy, 0, 1).ok());
            w.t.clock.advance(std::chrono::seconds{899});
        }
        QVERIFY(!w.t.plane->auditQueries().read(busy, 0, 1).ok());

        const auto signedOut = w.session("auditor-user");
        QVERIFY(w.t.plane->identity().signOut(signedOut).ok());
        QVERIFY(!w.t.plane->auditQueries().read(signedOut, 0, 1).ok());
        QVERIFY(!w.t.plane->auditQueries().read("st_forged", 0, 1).ok());
        QCOMPARE(w.last().actor.id, std::string("unknown"));
    }
};

QTEST_APPLESS_MAIN(TestAuditedTransaction)
#include "test_core_audited_transaction.moc"
