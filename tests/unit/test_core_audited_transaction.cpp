// The audited transaction, the one door every call walks through: a reader's attempts to change
// anything are refused and audited (and no secret reaches the log), and sessions expire when idle,
// at their absolute limit and on sign-out, on an injected clock.
#include "service_world.h"

#include <QtTest/QtTest>

using namespace sealtrain;
using sealtrain::testing::kPassword;
using sealtrain::testing::verifyDenied;

class TestAuditedTransaction : public QObject {
    Q_OBJECT

private slots:
    void auditorChangesNothing()
    {
        testing::ServiceWorld w;
        const auto auditor = w.session("auditor-user");
        verifyDenied(w, w.t.plane->identity().createUser(auditor, "mallory"), "user.create");
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

    // Whatever fails inside a call (here the database, through a trigger that aborts the
    // write, as a full disk or a corrupt page would), the call leaves a failed entry.
    // Issue #27: a refusal is never dropped for what the caller sent. A 100 KiB user name (or one
    // that is not UTF-8) is refused and audited, the field cut and marked, the entry readable.
    void oversizedRefusalsAreCutNotDropped()
    {
        testing::ServiceWorld w;
        const auto auditor = w.session("auditor-user");
        const std::string huge(std::size_t{100} * 1024, 'm');
        const auto before = w.t.plane->auditLog().size();
        verifyDenied(w, w.t.plane->identity().disableUser(auditor, huge), "user.disable");
        QCOMPARE(w.t.plane->auditLog().size(), before + 1);
        auto entry = w.t.lastEntry();
        QVERIFY(entry.target.id.size() < 5000);
        QVERIFY(entry.target.id.rfind(std::string(4096, 'm'), 0) == 0);
        QVERIFY2(entry.target.id.find("102400 bytes, cut") != std::string::npos,
                 entry.target.id.c_str());

        verifyDenied(w, w.t.plane->identity().disableUser(auditor, "bad\xff\xfename"),
                     "user.disable");
        QCOMPARE(w.t.lastEntry().target.id, std::string("bad\\xff\\xfename"));

        // Without a session: a sign-in with a 100 KiB name is refused and audited too.
        const auto signIns = w.t.plane->auditLog().size();
        QVERIFY(!w.t.plane->identity().signIn(huge, testing::secret(kPassword), "000000"));
        QCOMPARE(w.t.plane->auditLog().size(), signIns + 1);
        QCOMPARE(w.t.lastEntry().action, std::string("session.sign_in"));
        QVERIFY(w.t.lastEntry().outcome != audit::Outcome::Ok);
    }

    // Issue #27, item 15: anonymous callers can not grow the signed log at will. Of the calls
    // refused for want of a valid session, one action from one peer writes its first refusal,
    // then counts the rest of the window (10 s) and writes them as one entry: when the next
    // comes after the window, or when the server flushes. Another peer, or another action, has
    // its own window. Nothing is dropped: the counts add up to the calls.
    void anonymousRefusalsAreCountedNotEachWritten()
    {
        testing::ServiceWorld w;
        auto& plane = *w.t.plane;
        const auto size = [&] { return plane.auditLog().size(); };
        plane.setCallOrigin(core::CallOrigin{"ipv4:203.0.113.7:40000", ""});
        const auto before = size();
        for (int i = 0; i < 50; ++i)
            QVERIFY(!plane.identity().whoAmI("st_forged"));
        QCOMPARE(size(), before + 1);
        QCOMPARE(w.last().action, std::string("session.whoami"));
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);
        // Another action, and another peer, are not held by this one's window.
        QVERIFY(!plane.identity().listSessions("st_forged"));
        QCOMPARE(size(), before + 2);
        plane.setCallOrigin(core::CallOrigin{"ipv4:203.0.113.8:40000", ""});
        QVERIFY(!plane.identity().whoAmI("st_forged"));
        QCOMPARE(size(), before + 3);
        // After the window, the first peer's next refusal writes the 49 counted, then itself.
        plane.setCallOrigin(core::CallOrigin{"ipv4:203.0.113.7:40001", ""});
        w.t.clock.advance(std::chrono::seconds{11});
        QVERIFY(!plane.identity().whoAmI("st_forged"));
        QCOMPARE(size(), before + 5);
        auto entries = w.t.plane->auditLog().store().readEntries(before + 3, 1);
        QVERIFY(entries);
        auto counted = audit::decodeEntry(entries->front().bytes);
        QVERIFY(counted);
        QCOMPARE(counted->action, std::string("session.whoami"));
        QCOMPARE(counted->outcome, audit::Outcome::Denied);
        QCOMPARE(testing::detailOf(*counted, "repeated"), std::string("49"));
        QCOMPARE(testing::detailOf(*counted, "peer"), std::string("ipv4:203.0.113.7:40000"));
        // Counted again, then written by the flush once the window has passed.
        for (int i = 0; i < 3; ++i)
            QVERIFY(!plane.identity().whoAmI("st_forged"));
        QVERIFY(plane.flushAnonymousRefusals(false));
        QCOMPARE(size(), before + 5);
        w.t.clock.advance(std::chrono::seconds{11});
        QVERIFY(plane.flushAnonymousRefusals(false));
        QCOMPARE(size(), before + 6);
        QCOMPARE(testing::detailOf(w.last(), "repeated"), std::string("3"));
        // A signed-in caller's refusals are each written, whatever the rate.
        plane.setCallOrigin(std::nullopt);
        const auto auditor = w.session("auditor-user");
        const auto refused = size();
        for (int i = 0; i < 3; ++i)
            QVERIFY(!plane.identity().disableUser(auditor, "alice"));
        QCOMPARE(size(), refused + 3);
    }

    void everyFailedCallLeavesAnEntry()
    {
        testing::ServiceWorld w;
        QVERIFY(w.t.database
                    ->execute("CREATE TRIGGER broken_disk BEFORE INSERT ON grants BEGIN "
                              "SELECT RAISE(ABORT, 'the disk failed'); END")
                    .ok());
        const auto before = w.t.plane->auditLog().size();
        auto granted = w.t.plane->access().grantRole(w.admin, "engineer-user", "auditor", "");
        QVERIFY(!granted.ok());
        QCOMPARE(w.t.plane->auditLog().size(), before + 1);
        auto entry = w.last();
        QCOMPARE(entry.action, std::string("grant.create"));
        QCOMPARE(entry.outcome, audit::Outcome::Failed);
        QCOMPARE(entry.actor.id, std::string("alice"));
        QCOMPARE(entry.reason, granted.error().message());

        // A failure while checking the session (the session's use, due again once the interval
        // has passed, can not be written).
        QVERIFY(w.t.database
                    ->execute("CREATE TRIGGER broken_sessions BEFORE UPDATE ON sessions BEGIN "
                              "SELECT RAISE(ABORT, 'the disk failed'); END")
                    .ok());
        const auto auditor = w.session("auditor-user");
        w.t.clock.advance(core::ControlPlaneOptions{}.sessionUseInterval);
        auto listed = w.t.plane->auditQueries().read(auditor, 0, 1);
        QVERIFY(!listed.ok());
        entry = w.last();
        QCOMPARE(entry.action, std::string("audit.read"));
        QCOMPARE(entry.outcome, audit::Outcome::Failed);
        QCOMPARE(entry.actor.id, std::string("auditor-user"));

        // Before any session: init of a platform that has users fails, and says so in the log,
        // without the name the caller typed.
        auto again = w.t.plane->identity().init("mallory", testing::secret(kPassword));
        QVERIFY(!again.ok());
        entry = w.last();
        QCOMPARE(entry.action, std::string("control.init"));
        QCOMPARE(entry.outcome, audit::Outcome::Failed);
        QCOMPARE(entry.actor.id, std::string("unknown"));
        QVERIFY(entry.target.id.empty());
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

    // A session's use is written at most once per sessionUseInterval (60 s; issue #15): a check
    // inside the interval only reads (it needs no write lock, which another connection holds,
    // and leaves last_used as it was), the first one past it writes, a session in use never
    // expires, and the idle timeout still ends an unused one, at most the interval early.
    void sessionUseIsWrittenOncePerInterval()
    {
        testing::ServiceWorld w;
        auto& identity = w.t.plane->identity();
        const auto session = w.session("auditor-user");
        const std::int64_t row = std::stoll(identity.whoAmI(session)->id.substr(1));
        const auto lastUsed = [&] {
            return w.t.database->queryInteger("SELECT last_used FROM sessions WHERE id = ?", {row})
                .value();
        };
        const std::int64_t signedIn = lastUsed();
        const auto entries = w.t.plane->auditLog().size();
        {
            core::DatabaseOptions impatient;
            impatient.busyTimeout = std::chrono::milliseconds(100);
            auto other = core::Database::open(w.t.path(), testing::databaseKey(7), impatient);
            QVERIFY(other.ok());
            auto writing = (*other)->begin();
            QVERIFY(writing.ok());
            w.t.clock.advance(std::chrono::seconds{59});
            auto inside = identity.whoAmI(session);
            QVERIFY2(inside.ok(), inside.ok() ? "" : inside.error().message().c_str());
        }
        QCOMPARE(lastUsed(), signedIn);
        QCOMPARE(w.t.plane->auditLog().size(), entries);

        w.t.clock.advance(std::chrono::seconds{1});
        QVERIFY(identity.whoAmI(session).ok());
        QCOMPARE(lastUsed(), signedIn + 60);
        QCOMPARE(w.t.plane->auditLog().size(), entries);  // a success appends nothing

        // Used 30 s after the written use (not written), then idle: it expires 871 s after that
        // last use, 901 s after the written one.
        w.t.clock.advance(std::chrono::seconds{30});
        QVERIFY(identity.whoAmI(session).ok());
        QCOMPARE(lastUsed(), signedIn + 60);
        w.t.clock.advance(std::chrono::seconds{871});
        auto idle = identity.whoAmI(session);
        QVERIFY(!idle.ok());
        QCOMPARE(idle.error().code(), ErrorCode::Unauthenticated);
        QCOMPARE(w.last().action, std::string("session.whoami"));
        QCOMPARE(w.last().outcome, audit::Outcome::Denied);

        // A session used every 50 s for longer than the idle timeout stays valid.
        const auto busy = w.session("auditor-user");
        for (int i = 0; i < 30; ++i) {
            w.t.clock.advance(std::chrono::seconds{50});
            QVERIFY(identity.whoAmI(busy).ok());
        }
    }
};

QTEST_APPLESS_MAIN(TestAuditedTransaction)
#include "test_core_audited_transaction.moc"
