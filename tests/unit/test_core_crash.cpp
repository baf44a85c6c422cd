// Crash safety of audited mutations: a child process loops audited changes on the control
// plane's database and is killed with SIGKILL in the middle of the loop. After reopening, every
// acknowledged change is there with its audit entry, no entry exists without its change, and the
// log (entries, signed heads, witness file) verifies end to end.
#include "core_fixture.h"

#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/witness.h"

#include <QtTest/QtTest>

#include <csignal>
#include <set>
#include <sys/wait.h>
#include <unistd.h>

using namespace sealtrain;

namespace {

constexpr const char* kPassword = "a long enough passphrase";

audit::LogOptions crashLogOptions(const std::string& witness)
{
    audit::LogOptions options;
    options.policy.everyEntries = 5;  // heads are signed inside the loop too
    options.policy.every = std::chrono::seconds{0};
    options.policy.heartbeat = std::chrono::seconds{0};
    options.witnessFile = witness;
    return options;
}

// The child: its own connection, then audited role creations until it is killed. Each commit is
// acknowledged with one byte on `ack`. Never returns.
[[noreturn]] void mutateForever(const testing::ControlPlaneFixture& t, const std::string& session,
                                const std::string& witness, int ack)
{
    auto database = core::Database::open(t.path(), testing::databaseKey(7));
    if (!database)
        ::_exit(3);
    core::SqlAuditStore store(**database);
    auto plane = core::ControlPlane::open(**database, store, t.signingKey, nullptr, t.clock, {},
                                          crashLogOptions(witness));
    if (!plane)
        ::_exit(4);
    for (int i = 0;; ++i) {
        if (!(*plane)->access().createRole(session, "crash-" + std::to_string(i), {"audit.read"}))
            ::_exit(5);
        const char byte = 'x';
        if (::write(ack, &byte, 1) != 1)
            ::_exit(6);
    }
}

}  // namespace

class TestCoreCrash : public QObject {
    Q_OBJECT

private slots:
    void sigkillMidLoopLosesNothingCommitted()
    {
        testing::ControlPlaneFixture t;
        const std::string witness = (t.dir.path() + "/audit.witness").toStdString();
        auto enrollment = t.plane->identity().init("alice", testing::secret(kPassword));
        QVERIFY(enrollment.ok());
        const std::string session = t.signIn("alice", kPassword, enrollment->otpauthUri);
        QVERIFY(!session.empty());
        t.plane.reset();
        t.store.reset();
        t.database.reset();

        int pipeFds[2] = {-1, -1};
        QCOMPARE(::pipe(pipeFds), 0);
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            ::close(pipeFds[0]);
            mutateForever(t, session, witness, pipeFds[1]);
        }
        ::close(pipeFds[1]);
        // Let it commit a few dozen changes (some heads among them), then kill it mid-loop.
        int acknowledged = 0;
        char byte = 0;
        while (acknowledged < 40 && ::read(pipeFds[0], &byte, 1) == 1)
            ++acknowledged;
        QCOMPARE(::kill(child, SIGKILL), 0);
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        ::close(pipeFds[0]);
        QVERIFY2(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                 qPrintable(QString("the child ended on its own with status %1").arg(status)));
        QCOMPARE(acknowledged, 40);

        // Reopening re-hashes the log and checks every stored head against it.
        auto database = core::Database::open(t.path(), testing::databaseKey(7));
        QVERIFY(database.ok());
        core::SqlAuditStore store(**database);
        auto plane = core::ControlPlane::open(**database, store, t.signingKey, nullptr, t.clock, {},
                                              crashLogOptions(witness));
        QVERIFY2(plane.ok(), plane.ok() ? "" : plane.error().message().c_str());

        std::set<std::string> roles;
        auto statement = (*database)->prepare("SELECT name FROM roles WHERE name LIKE 'crash-%'");
        QVERIFY(statement.ok());
        while (statement->step().value())
            roles.insert(statement->text(0));
        std::set<std::string> audited;
        const auto stored = store.readEntries(0, store.entryCount().value()).value();
        audit::LogVerifier verifier;
        for (const auto& entry : stored) {
            QVERIFY(verifier.add(entry.bytes).ok());
            const auto decoded = audit::decodeEntry(entry.bytes).value();
            if (decoded.action == "role.create" && decoded.outcome == audit::Outcome::Ok)
                audited.insert(decoded.target.id);
        }
        QVERIFY(roles.size() >= static_cast<std::size_t>(acknowledged));
        QVERIFY(roles == audited);  // every change has its entry, and no entry lacks its change
        const auto& tree = (*plane)->auditLog().tree();
        QCOMPARE(verifier.root(), tree.rootAt(tree.size()).value());

        // Heads signed before the kill (in the database and in the witness file) agree with the
        // log; an export verifies against the key and the witness.
        const auto heads = audit::readWitness(witness);
        QVERIFY(heads.ok());
        QVERIFY(heads->size() >= static_cast<std::size_t>(acknowledged / 5));
        const auto bundle = audit::exportBundle((*plane)->auditLog(), {});
        QVERIFY(bundle.ok());
        audit::VerifyOptions options;
        options.trustedKey = t.signingKey.publicKey().toPem();
        options.witnessHeads = *heads;
        const auto report = audit::verifyBundle(*bundle, options);
        QVERIFY2(report.ok(), report.ok() ? "" : report.errors.front().c_str());
        QCOMPARE(report.entriesVerified, static_cast<std::uint64_t>(stored.size()));

        // And the control plane goes on from where it stopped.
        QVERIFY((*plane)->access().createRole(session, "after-crash", {"audit.read"}).ok());
    }
};

QTEST_APPLESS_MAIN(TestCoreCrash)
#include "test_core_crash.moc"
