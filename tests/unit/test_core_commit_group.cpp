// Group commit (core/store/commit_group.h): calls that share one durable transaction still fail
// closed each on its own. A call that fails in a group leaves the others committed and its own
// change absent, with its failure audited; a COMMIT that fails fails every call of the group and
// leaves the audit log as it was, verifiable and appendable; and no caller is answered before the
// group's COMMIT (an independent connection already sees its change).
#include "core_fixture.h"

#include "sealtrain/audit/bundle.h"
#include "sealtrain/core/store/commit_group.h"

#include <QtTest/QtTest>

#include <thread>

using namespace sealtrain;

namespace {

constexpr const char* kPassword = "a long enough passphrase";

bool roleExists(const core::Database& database, const std::string& name)
{
    return database.exists("SELECT 1 FROM roles WHERE name = ?", {name}).value();
}

// Every entry of the store, chained and hashed from the first, and the tree's root over them.
void verifyLog(const testing::ControlPlaneFixture& t)
{
    const auto& log = t.plane->auditLog();
    const auto stored = t.store->readEntries(0, t.store->entryCount().value()).value();
    QCOMPARE(static_cast<std::uint64_t>(stored.size()), log.size());
    audit::LogVerifier verifier;
    for (const auto& entry : stored)
        QVERIFY(verifier.add(entry.bytes).ok());
    QCOMPARE(verifier.root(), log.tree().rootAt(log.size()).value());
    // A second connection reads and re-hashes the same log.
    auto database = core::Database::open(t.path(), testing::databaseKey(7));
    QVERIFY(database.ok());
    core::SqlAuditStore store(**database);
    auto reopened = core::ControlPlane::open(**database, store, t.signingKey, nullptr, t.clock);
    QVERIFY2(reopened.ok(), reopened.ok() ? "" : reopened.error().message().c_str());
    QCOMPARE((*reopened)->auditLog().size(), log.size());
}

}  // namespace

class TestCoreCommitGroup : public QObject {
    Q_OBJECT

    static std::string signedIn(testing::ControlPlaneFixture& t)
    {
        auto enrollment = t.plane->identity().init("alice", testing::secret(kPassword));
        if (!enrollment)
            return {};
        return t.signIn("alice", kPassword, enrollment->otpauthUri);
    }

private slots:
    void failingCallLeavesTheOthersCommitted()
    {
        testing::ControlPlaneFixture t;
        const std::string session = signedIn(t);
        QVERIFY(!session.empty());
        const std::uint64_t before = t.plane->auditLog().size();
        Result<core::ChangeOutcome> first = core::ChangeOutcome{};
        Result<core::NewUser> weak = Error(ErrorCode::Internal, "Not run.");
        Result<core::ChangeOutcome> last = core::ChangeOutcome{};
        const std::vector<core::CommitGroup::Call> calls = {
            [&] { first = t.plane->access().createRole(session, "kept-1", {"audit.read"}); },
            // Refused (the name is not one), its refusal appended in the group.
            [&] { weak = t.plane->identity().createUser(session, "Weak User"); },
            [&] { last = t.plane->access().createRole(session, "kept-2", {"audit.read"}); },
        };
        const auto committed = core::CommitGroup::runGroup(*t.database, calls);
        QVERIFY2(committed.ok(), committed.ok() ? "" : committed.error().message().c_str());
        QVERIFY(first.ok());
        QVERIFY(!weak.ok());
        QVERIFY(last.ok());
        QVERIFY(roleExists(*t.database, "kept-1"));
        QVERIFY(roleExists(*t.database, "kept-2"));
        QVERIFY(!t.database->exists("SELECT 1 FROM users WHERE name = 'Weak User'", {}).value());

        // Three entries in the order of the calls, the failure among them.
        QCOMPARE(t.plane->auditLog().size(), before + 3);
        const auto stored = t.store->readEntries(before, 3).value();
        const auto failed = audit::decodeEntry(stored[1].bytes).value();
        QCOMPARE(failed.action, std::string("user.create"));
        QCOMPARE(failed.outcome, audit::Outcome::Failed);
        QCOMPARE(failed.target.id, std::string("Weak User"));
        QCOMPARE(audit::decodeEntry(stored[2].bytes).value().target.id, std::string("kept-2"));
        verifyLog(t);
    }

    void failedCommitFailsThemAll()
    {
        testing::ControlPlaneFixture t;
        const std::string session = signedIn(t);
        QVERIFY(!session.empty());
        const std::uint64_t before = t.plane->auditLog().size();
        const std::vector<core::CommitGroup::Call> calls = {
            [&] { QVERIFY(t.plane->access().createRole(session, "lost-1", {"audit.read"})); },
            // A change whose foreign key is checked only at COMMIT, which it then fails.
            [&] {
                auto savepoint = t.database->begin();
                QVERIFY(savepoint.ok());
                QVERIFY(t.database->execute("PRAGMA defer_foreign_keys = ON"));
                QVERIFY(
                    t.database->run("INSERT INTO grants (user_id, role) VALUES (999, 'admin')"));
                QVERIFY((*savepoint)->commit());
            },
            [&] { QVERIFY(t.plane->access().createRole(session, "lost-2", {"audit.read"})); },
        };
        const auto committed = core::CommitGroup::runGroup(*t.database, calls);
        QVERIFY(!committed.ok());
        QVERIFY(!roleExists(*t.database, "lost-1"));
        QVERIFY(!roleExists(*t.database, "lost-2"));
        QCOMPARE(t.plane->auditLog().size(), before);
        QCOMPARE(t.store->entryCount().value(), before);
        verifyLog(t);

        // The log goes on from where it was: the next entry follows the last committed one.
        QVERIFY(t.plane->access().createRole(session, "after", {"audit.read"}));
        QCOMPARE(t.plane->auditLog().size(), before + 1);
        verifyLog(t);
    }

    // A savepoint is refused once the group's transaction is gone, rather than beginning (and
    // committing) a transaction of its own; the group then rolls back.
    void groupWithoutItsTransactionRollsBack()
    {
        testing::ControlPlaneFixture t;
        const std::string session = signedIn(t);
        QVERIFY(!session.empty());
        const std::uint64_t before = t.plane->auditLog().size();
        Result<core::ChangeOutcome> after = core::ChangeOutcome{};
        const std::vector<core::CommitGroup::Call> calls = {
            [&] { QVERIFY(t.plane->access().createRole(session, "gone-1", {"audit.read"})); },
            [&] { QVERIFY(t.database->execute("ROLLBACK")); },  // as SQLite does on a full disk
            [&] { after = t.plane->access().createRole(session, "gone-2", {"audit.read"}); },
        };
        QVERIFY(!core::CommitGroup::runGroup(*t.database, calls).ok());
        QVERIFY(!after.ok());
        QVERIFY(!roleExists(*t.database, "gone-1"));
        QVERIFY(!roleExists(*t.database, "gone-2"));
        QCOMPARE(t.plane->auditLog().size(), before);
        verifyLog(t);
    }

    // Concurrent callers through the committer thread: when run returns, another connection
    // already sees the change.
    void noCallerIsAnsweredBeforeTheCommit()
    {
        testing::ControlPlaneFixture t;
        const std::string session = signedIn(t);
        QVERIFY(!session.empty());
        std::mutex exclusive;
        std::mutex failuresLock;
        std::vector<std::string> failures;
        {
            core::CommitGroup group(*t.database, exclusive);
            std::vector<std::thread> callers;
            callers.reserve(4);
            for (int caller = 0; caller < 4; ++caller)
                callers.emplace_back([&, caller] {
                    auto reader = core::Database::open(t.path(), testing::databaseKey(7)).value();
                    for (int i = 0; i < 15; ++i) {
                        const std::string name =
                            "role-" + std::to_string(caller) + "-" + std::to_string(i);
                        Result<core::ChangeOutcome> made = core::ChangeOutcome{};
                        const auto committed = group.run([&] {
                            made = t.plane->access().createRole(session, name, {"audit.read"});
                        });
                        const std::lock_guard guard(failuresLock);
                        if (!committed || !made)
                            failures.push_back(name + " failed");
                        else if (!roleExists(*reader, name))
                            failures.push_back(name + " was answered before its commit");
                    }
                });
            for (auto& caller : callers)
                caller.join();
        }
        QVERIFY2(failures.empty(), failures.empty() ? "" : failures.front().c_str());
        verifyLog(t);
    }
};

QTEST_APPLESS_MAIN(TestCoreCommitGroup)
#include "test_core_commit_group.moc"
