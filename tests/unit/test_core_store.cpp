// The control plane's SQLCipher store: encrypted at rest, wrong keys refused in one sentence,
// migrations from every earlier schema version, and audit entries that commit or roll back with
// the change they record.
#include "core_fixture.h"
#include "service_world.h"

#include "sealtrain/audit/proof.h"

#include <QFile>
#include <QProcess>
#include <QtTest/QtTest>

using namespace sealtrain;
using sealtrain::testing::databaseKey;

namespace {

// Fails appends on demand, to show that a change whose entry can not be written does not happen.
class FailingStore final : public audit::AuditStore {
public:
    explicit FailingStore(audit::AuditStore& inner)
        : inner_(inner)
    {
    }
    bool fail = false;

    Result<void> appendEntry(audit::StoreTransaction& transaction,
                             const audit::StoredEntry& entry) override
    {
        if (fail)
            return Error(ErrorCode::Io, "The audit disk is full.");
        return inner_.appendEntry(transaction, entry);
    }
    Result<std::uint64_t> entryCount() const override { return inner_.entryCount(); }
    Result<std::vector<audit::StoredEntry>> readEntries(std::uint64_t first,
                                                        std::uint64_t count) const override
    {
        return inner_.readEntries(first, count);
    }
    Result<void> appendHead(const std::string& note) override { return inner_.appendHead(note); }
    Result<std::vector<std::string>> readHeads() const override { return inner_.readHeads(); }
    Result<void> underWriteLock(const std::function<Result<void>()>& body) override
    {
        return inner_.underWriteLock(body);
    }

private:
    audit::AuditStore& inner_;
};

std::int64_t countRows(const core::Database& database, const std::string& table)
{
    auto statement = database.prepare("SELECT count(*) FROM " + table).value();
    (void)*statement.step();
    return statement.integer(0);
}

}  // namespace

class TestCoreStore : public QObject {
    Q_OBJECT

private slots:
    void fileIsEncryptedAtRest()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/control.db").toStdString();
        {
            auto database = core::Database::open(path, databaseKey(1));
            QVERIFY2(database.ok(), database.ok() ? "" : database.error().message().c_str());
            QVERIFY((*database)->execute("CREATE TABLE probe (word TEXT)").ok());
            QVERIFY((*database)->execute("INSERT INTO probe VALUES ('plaintext-marker')").ok());
        }
        QFile file(QString::fromStdString(path));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        QVERIFY(bytes.size() >= 16);
        QVERIFY(bytes.left(16) != QByteArray("SQLite format 3\0", 16));
        QVERIFY(!bytes.contains("plaintext-marker"));
        QVERIFY(!bytes.contains("CREATE TABLE"));

        // The plain sqlite3 command can not read it.
        if (QStandardPaths::findExecutable("sqlite3").isEmpty())
            QSKIP("The sqlite3 command is not installed (scripts/setup installs it).");
        QProcess sqlite;
        sqlite.start("sqlite3", {QString::fromStdString(path), "SELECT * FROM sqlite_master;"});
        QVERIFY(sqlite.waitForFinished(10000));
        QVERIFY(sqlite.exitCode() != 0);
        QVERIFY(sqlite.readAllStandardError().contains("not a database"));
    }

    // run/query/queryOne/exists/queryInteger bind integers, text, blobs (an empty one stays a
    // blob) and NULL in order, and step as their names say.
    void statementHelpersBindAndStep()
    {
        QTemporaryDir dir;
        auto database = core::Database::open((dir.path() + "/h.db").toStdString(), databaseKey(1));
        QVERIFY(database.ok());
        core::Database& db = **database;
        QVERIFY(db.run("CREATE TABLE t (n INTEGER, s TEXT, b BLOB, z TEXT)").ok());
        const std::vector<std::uint8_t> bytes{1, 2, 3};
        const std::string text = "two";
        QVERIFY(db.run("INSERT INTO t VALUES (?, ?, ?, ?)",
                       {std::int64_t{1}, text, core::SqlValue::blob(bytes), nullptr})
                    .ok());
        QVERIFY(
            db.run("INSERT INTO t VALUES (?, ?, ?, ?)", {2, "three", core::SqlValue::blob({}), "z"})
                .ok());
        QCOMPARE(db.queryInteger("SELECT count(*) FROM t", {}).value(), std::int64_t{2});
        QVERIFY(db.exists("SELECT 1 FROM t WHERE s = ?", {std::string_view("two")}).value());
        QVERIFY(!db.exists("SELECT 1 FROM t WHERE s = ?", {"four"}).value());
        QCOMPARE(db.queryInteger("SELECT n FROM t WHERE s = ?", {"four"}).value(), std::int64_t{0});

        std::vector<std::uint8_t> blob;
        bool nullColumn = false;
        auto found = db.queryOne("SELECT b, z FROM t WHERE n = ?", {1}, [&](const auto& row) {
            blob = row.blob(0);
            nullColumn = row.isNull(1);
        });
        QVERIFY(found.ok() && *found);
        QVERIFY(blob == bytes);
        QVERIFY(nullColumn);
        QCOMPARE(db.queryInteger("SELECT typeof(b) = 'blob' FROM t WHERE n = 2", {}).value(),
                 std::int64_t{1});

        std::vector<std::string> texts;
        QVERIFY(db.query("SELECT s FROM t WHERE n >= ? ORDER BY n", {1}, [&](const auto& row) {
                      texts.push_back(row.text(0));
                  }).ok());
        QCOMPARE(texts, (std::vector<std::string>{"two", "three"}));
        const auto broken = db.run("INSERT INTO missing VALUES (?)", {1});
        QVERIFY(!broken.ok());
        QVERIFY(isOneSentence(broken.error().message()));
    }

    void wrongKeyIsOneClearSentence()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/control.db").toStdString();
        QVERIFY(core::Database::open(path, databaseKey(1)).ok());
        auto wrong = core::Database::open(path, databaseKey(2));
        QVERIFY(!wrong.ok());
        QCOMPARE(wrong.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(isOneSentence(wrong.error().message()));
        QVERIFY(wrong.error().message().find("passphrase or key is wrong") != std::string::npos);
        // The right key still opens it: the failed attempt changed nothing.
        QVERIFY(core::Database::open(path, databaseKey(1)).ok());
    }

    void rekeyKeepsTheDataUnderTheNewKeyOnly()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/control.db").toStdString();
        {
            auto database = core::Database::open(path, databaseKey(1)).value();
            QVERIFY(database->execute("CREATE TABLE probe (word TEXT)").ok());
            QVERIFY(database->execute("INSERT INTO probe VALUES ('kept')").ok());
            QVERIFY(database->rekey(databaseKey(2)).ok());
            // The connection goes on with the new key.
            QVERIFY(database->execute("INSERT INTO probe VALUES ('after')").ok());
        }
        auto old = core::Database::open(path, databaseKey(1));
        QVERIFY(!old.ok());
        QCOMPARE(old.error().code(), ErrorCode::Unauthenticated);
        auto reopened = core::Database::open(path, databaseKey(2));
        QVERIFY(reopened.ok());
        auto count = (*reopened)->prepare("SELECT count(*) FROM probe").value();
        QVERIFY(count.step().value());
        QCOMPARE(count.integer(0), std::int64_t{2});
    }

    // `keyring rotate database` saves the keyring, then re-keys the database. When it stops in
    // between, the next open finds the database under the previous version and re-keys it.
    void openWithKeyringFinishesAnInterruptedRotation()
    {
        QTemporaryDir dir;
        const std::string dbPath = (dir.path() + "/control.db").toStdString();
        auto keyring = crypto::Keyring::createWithPassphrase(
                           (dir.path() + "/keyring.json").toStdString(),
                           testing::secret("a passphrase"), crypto::kArgon2Floor)
                           .value();
        QVERIFY(core::Database::openWithKeyring(dbPath, keyring).ok());
        QVERIFY(keyring.rotate("database").ok());
        const auto newKey = core::deriveDatabaseKey(keyring).value();
        QCOMPARE(core::Database::open(dbPath, newKey).error().code(), ErrorCode::Unauthenticated);
        QVERIFY(core::Database::openWithKeyring(dbPath, keyring).ok());
        QVERIFY(core::Database::open(dbPath, newKey).ok());
        const auto oldKey =
            core::deriveDatabaseKey(*keyring.findKek("database", 1).value()).value();
        QVERIFY(!core::Database::open(dbPath, oldKey).ok());
    }

    void keyIsDerivedFromTheDatabaseKek()
    {
        QTemporaryDir dir;
        const auto keyringPath = std::filesystem::path(dir.path().toStdString()) / "keyring";
        auto keyring = crypto::Keyring::createWithPassphrase(
            keyringPath, testing::secret("correct horse battery"), crypto::kArgon2Floor);
        QVERIFY(keyring.ok());
        auto key = core::deriveDatabaseKey(*keyring);
        QVERIFY(key.ok());
        QCOMPARE(key->size(), core::kDatabaseKeySize);
        const auto kek = *keyring->activeKek("database");
        QVERIFY(!key->equals(kek->key));  // derived, not the KEK itself
        auto again = core::deriveDatabaseKey(*keyring);
        QVERIFY(key->equals(*again));
    }

    void migratesFromEveryEarlierVersion_data()
    {
        QTest::addColumn<int>("from");
        for (int version = 0; version < core::latestSchemaVersion(); ++version)
            QTest::addRow("v%d", version) << version;
    }

    void migratesFromEveryEarlierVersion()
    {
        QFETCH(int, from);
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/control.db").toStdString();
        {
            core::DatabaseOptions options;
            options.schemaVersion = from;
            auto old = core::Database::open(path, databaseKey(3), options);
            QVERIFY(old.ok());
            QCOMPARE(*(*old)->schemaVersion(), from);
            if (from >= 1)
                QVERIFY((*old)
                            ->execute("INSERT INTO users (name, password_hash, totp_secret, "
                                      "created) VALUES ('kept', 'h', x'00', 1)")
                            .ok());
        }
        auto database = core::Database::open(path, databaseKey(3));
        QVERIFY(database.ok());
        QCOMPARE(*(*database)->schemaVersion(), core::latestSchemaVersion());
        QCOMPARE(countRows(**database, "schema_version"),
                 std::int64_t{core::latestSchemaVersion()});
        QCOMPARE(countRows(**database, "users"), std::int64_t{from >= 1 ? 1 : 0});
        QCOMPARE(countRows(**database, "approvals"), std::int64_t{0});
    }

    // A database a newer release migrated is refused by this one, with a sentence and unchanged:
    // a downgrade would run code that does not know its tables.
    void aNewerDatabaseIsRefused()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/control.db").toStdString();
        const int newer = core::latestSchemaVersion() + 1;
        {
            auto database = core::Database::open(path, databaseKey(3));
            QVERIFY(database.ok());
            QVERIFY((*database)
                        ->execute("INSERT INTO schema_version (version, applied) VALUES ("
                                  + std::to_string(newer) + ", 1)")
                        .ok());
        }
        auto refused = core::Database::open(path, databaseKey(3));
        QVERIFY(!refused.ok());
        QCOMPARE(refused.error().code(), ErrorCode::Unsupported);
        QVERIFY2(isOneSentence(refused.error().message()), refused.error().message().c_str());
        QVERIFY2(refused.error().message().find("downgrades are not supported")
                     != std::string::npos,
                 refused.error().message().c_str());
        core::DatabaseOptions options;
        options.schemaVersion = core::latestSchemaVersion();
        QVERIFY(!core::Database::open(path, databaseKey(3), options).ok());
    }

    // Migration 19 (issue #54) adds CPU-hours to jobs: a job recorded before keeps what it had,
    // with no CPU-hour limit, use or charged cores (so an attempt running across the upgrade is
    // charged none; its next dispatch fixes them).
    void jobsBeforeCpuHoursKeepWhatTheyHad()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/control.db").toStdString();
        core::DatabaseOptions options;
        options.schemaVersion = 18;
        {
            auto old = core::Database::open(path, databaseKey(6), options);
            QVERIFY(old.ok());
            for (const char* sql :
                 {"INSERT INTO users (id, name, password_hash, totp_secret, created) VALUES (1, "
                  "'bob', 'h', x'00', 1)",
                  "INSERT INTO jobs (id, name, project, state, submitter, spec, spec_hash, pool, "
                  "vetting, max_restarts, gpu_millihours_limit, gpu_millihours_used, created, "
                  "updated) VALUES (7, 'j', 'demo', 'succeeded', 1, '{}', x'00', 'gpu', '[]', 0, "
                  "4000, 2500, 1, 1)"})
                QVERIFY2((*old)->execute(sql).ok(), sql);
        }
        auto database = core::Database::open(path, databaseKey(6));
        QVERIFY2(database.ok(), database ? "" : database.error().message().c_str());
        auto row = (*database)->prepare(
            "SELECT gpu_millihours_limit, gpu_millihours_used, cpu_millihours_limit, "
            "cpu_millihours_used, cpu_millihours_earlier, charged_cpus FROM jobs WHERE id = 7");
        QVERIFY(*row->step());
        QCOMPARE(row->integer(0), std::int64_t{4000});
        QCOMPARE(row->integer(1), std::int64_t{2500});
        for (int column = 2; column <= 5; ++column)
            QCOMPARE(row->integer(column), std::int64_t{0});
    }

    // Migration 14 rebuilds model_versions (an import has no job): the versions, and the
    // promotions that refer to them, are kept; a row that refers to a missing one stops it.
    void modelVersionsSurviveTheirRebuild()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/control.db").toStdString();
        core::DatabaseOptions options;
        options.schemaVersion = 13;
        {
            auto old = core::Database::open(path, databaseKey(5), options);
            QVERIFY(old.ok());
            for (const char* sql :
                 {"INSERT INTO users (id, name, password_hash, totp_secret, created) VALUES (1, "
                  "'bob', 'h', x'00', 1)",
                  "INSERT INTO jobs (id, name, project, state, submitter, spec, spec_hash, pool, "
                  "vetting, max_restarts, gpu_millihours_limit, created, updated) VALUES (7, 'j', "
                  "'demo', 'succeeded', 1, '{}', x'00', 'cpu', '[]', 0, 0, 1, 1)",
                  "INSERT INTO model_versions (id, name, version, project, description, job_id, "
                  "step, digest, sealed_sha256, worker, dataset_id, registered_by, registered, "
                  "statement) VALUES (3, 'm', 1, 'demo', '', 7, 4, 'sha256:ab', 'cd', 'n1', "
                  "'sha256:ef', 1, 1, '{}')",
                  "INSERT INTO model_promotions (version_id, alias, digest, reason, requested_by, "
                  "requested, state) VALUES (3, 'production', 'sha256:ab', '', 1, 1, 'pending')"})
                QVERIFY2((*old)->execute(sql).ok(), sql);
        }
        auto database = core::Database::open(path, databaseKey(5));
        QVERIFY2(database.ok(), database ? "" : database.error().message().c_str());
        auto row = (*database)->prepare(
            "SELECT v.source, v.job_id, v.step, p.alias FROM model_versions v JOIN "
            "model_promotions p ON p.version_id = v.id WHERE v.name = 'm'");
        QVERIFY(*row->step());
        QCOMPARE(row->text(0), std::string("job"));
        QCOMPARE(row->integer(1), std::int64_t{7});
        QCOMPARE(row->integer(2), std::int64_t{4});
        QCOMPARE(row->text(3), std::string("production"));
        // Foreign keys hold again after the migration: a promotion of no version is refused.
        QVERIFY(!(*database)
                     ->execute("INSERT INTO model_promotions (version_id, alias, digest, reason, "
                               "requested_by, requested, state) VALUES (99, 'x', 'd', '', 1, 1, "
                               "'pending')")
                     .ok());

        // A dangling reference (written with the checks off) stops the migration, saying so.
        const std::string other = (dir.path() + "/dangling.db").toStdString();
        {
            auto old = core::Database::open(other, databaseKey(5), options);
            QVERIFY(old.ok());
            QVERIFY((*old)->execute("PRAGMA foreign_keys = OFF").ok());
            QVERIFY((*old)
                        ->execute("INSERT INTO model_versions (name, version, project, "
                                  "description, job_id, step, digest, sealed_sha256, worker, "
                                  "dataset_id, registered_by, registered, statement) VALUES ('m', "
                                  "1, 'demo', '', 42, 4, 'd', 'c', 'n1', 'e', 1, 1, '{}')")
                        .ok());
        }
        auto refused = core::Database::open(other, databaseKey(5));
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::Integrity);
        QVERIFY2(refused.error().message().find("migration 14") != std::string::npos,
                 refused.error().message().c_str());
    }

    void failedMigrationLeavesTheOldVersion()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/control.db").toStdString();
        core::DatabaseOptions options;
        options.schemaVersion = 1;
        {
            auto old = core::Database::open(path, databaseKey(4), options);
            QVERIFY(old.ok());
            // A table that v2 wants to create: its migration must fail and roll back whole.
            QVERIFY((*old)->execute("CREATE TABLE approvals (x INTEGER)").ok());
        }
        QVERIFY(!core::Database::open(path, databaseKey(4)).ok());
        auto database = core::Database::open(path, databaseKey(4), options);
        QVERIFY(database.ok());
        QCOMPARE(*(*database)->schemaVersion(), 1);
        auto submissions =
            (*database)->prepare("SELECT count(*) FROM sqlite_master WHERE name = 'submissions'");
        QVERIFY(*submissions->step());
        QCOMPARE(submissions->integer(0), std::int64_t{0});
    }

    void auditEntriesCommitAndRollBackWithTheChange()
    {
        testing::ControlPlaneFixture t;
        const auto before = *t.store->entryCount();
        {
            auto transaction = t.database->begin().value();
            QVERIFY(t.database->execute("INSERT INTO roles (name) VALUES ('rolled')").ok());
            audit::StoredEntry entry{before, {1, 2, 3}, {}};
            QVERIFY(t.store->appendEntry(*transaction, entry).ok());
            // Abandoned without commit: both the row and the entry vanish.
        }
        QCOMPARE(*t.store->entryCount(), before);
        auto check =
            t.database->prepare("SELECT count(*) FROM roles WHERE name = 'rolled'").value();
        QVERIFY(*check.step());
        QCOMPARE(check.integer(0), std::int64_t{0});
    }

    void auditFailureRollsTheChangeBack()
    {
        QTemporaryDir dir;
        testing::TestClock clock;
        auto signingKey = crypto::SigningKey::generate().value();
        auto database =
            core::Database::open((dir.path() + "/c.db").toStdString(), databaseKey(5)).value();
        core::SqlAuditStore inner(*database);
        FailingStore store(inner);
        auto plane = core::ControlPlane::open(*database, store, signingKey, nullptr, clock).value();
        auto enrollment =
            plane->identity().init("alice", testing::secret("a long admin passphrase"));
        QVERIFY(enrollment.ok());
        clock.advance(core::kTotpStep);
        const auto code = core::totpCode(testing::totpSecretFromUri(enrollment->otpauthUri),
                                         core::totpStep(clock.now()));
        auto session =
            plane->identity().signIn("alice", testing::secret("a long admin passphrase"), code);
        QVERIFY(session.ok());
        const auto usersBefore = countRows(*database, "users");
        const auto entriesBefore = *inner.entryCount();

        store.fail = true;
        auto created = plane->identity().createUser(*session, "bob");
        QVERIFY(!created.ok());
        QVERIFY(isOneSentence(created.error().message()));
        QVERIFY(created.error().message().find("audit entry could not be written")
                != std::string::npos);
        QCOMPARE(countRows(*database, "users"), usersBefore);
        QCOMPARE(*inner.entryCount(), entriesBefore);

        store.fail = false;
        QVERIFY(plane->identity().createUser(*session, "bob").ok());
        QCOMPARE(countRows(*database, "users"), usersBefore + 1);
        // The log still verifies end to end: every stored entry is in the tree, chained.
        const auto entries = *inner.readEntries(0, 1000);
        QCOMPARE(entries.size(), static_cast<std::size_t>(plane->auditLog().size()));
        audit::Hash previous{};
        for (const auto& stored : entries) {
            const auto entry = *audit::decodeEntry(stored.bytes);
            QCOMPARE(entry.previousLeafHash, previous);
            QCOMPARE(audit::leafHash(stored.bytes), plane->auditLog().tree().leaf(stored.sequence));
            previous = stored.leafHash;
        }
    }

    // Two control planes on one database (two processes, or a long command beside others): each
    // appends after what the other committed, and neither signs a head smaller than the newest.
    void twoWritersInterleaveWithoutBreakingTheLog()
    {
        testing::ServiceWorld w;
        auto otherDatabase = core::Database::open(w.t.path(), databaseKey(7)).value();
        core::SqlAuditStore otherStore(*otherDatabase);
        auto otherPlane =
            core::ControlPlane::open(*otherDatabase, otherStore, w.t.signingKey, nullptr, w.t.clock)
                .value();
        auto& one = *w.t.plane;
        auto& other = *otherPlane;
        for (int round = 0; round < 3; ++round) {
            const std::string n = std::to_string(round);
            QVERIFY(one.identity().createUser(w.admin, "one-" + n).ok());
            QVERIFY(other.identity().createUser(w.admin, "other-" + n).ok());
            QVERIFY(other.auditLog().signHead().ok());  // the larger head first…
            QVERIFY(one.auditLog().signHead().ok());    // …then the process that is behind
            QVERIFY(one.identity().createUser(w.admin, "late-" + n).ok());
            QVERIFY(one.auditLog().signHead().ok());
        }
        QCOMPARE(one.auditLog().size(), *w.t.store->entryCount());
        // Every stored head is at least as large as the one before it.
        std::uint64_t previous = 0;
        const std::vector<std::string> heads = w.t.store->readHeads().value();
        for (const auto& note : heads) {
            const auto head = audit::verifyTreeHead(note, one.auditLog().verifier()).value();
            QVERIFY2(head.size >= previous, "a head smaller than an earlier one was stored");
            previous = head.size;
        }
        // An export through either one verifies end to end, and a third reader opens the log.
        const auto auditor = w.session("auditor-user");
        audit::VerifyOptions trusted;
        trusted.trustedKey = w.t.signingKey.publicKey().keyId();
        for (auto* plane : {&one, &other}) {
            auto bundle = plane->auditQueries().exportBundle(auditor, audit::ExportFilter{});
            QVERIFY2(bundle.ok(), bundle ? "" : bundle.error().message().c_str());
            const auto report = audit::verifyBundle(*bundle, trusted);
            QVERIFY2(report.ok(), report.ok() ? "" : report.errors.front().c_str());
        }
        auto thirdDatabase = core::Database::open(w.t.path(), databaseKey(7)).value();
        core::SqlAuditStore thirdStore(*thirdDatabase);
        QVERIFY(
            core::ControlPlane::open(*thirdDatabase, thirdStore, w.t.signingKey, nullptr, w.t.clock)
                .ok());
    }

    void reopenedLogMatchesTheDatabase()
    {
        QTemporaryDir dir;
        const std::string path = (dir.path() + "/control.db").toStdString();
        testing::TestClock clock;
        auto signingKey = crypto::SigningKey::generate().value();
        std::uint64_t size = 0;
        {
            auto database = core::Database::open(path, databaseKey(6)).value();
            core::SqlAuditStore store(*database);
            auto plane =
                core::ControlPlane::open(*database, store, signingKey, nullptr, clock).value();
            QVERIFY(
                plane->identity().init("alice", testing::secret("a long admin passphrase")).ok());
            (void)plane->identity().signIn("alice", testing::secret("wrong password here"),
                                           "000000");
            size = plane->auditLog().size();
            // The new database's migrations (platform.migrate), the init, the refused sign-in.
            QCOMPARE(size, std::uint64_t{3});
        }
        auto database = core::Database::open(path, databaseKey(6)).value();
        core::SqlAuditStore store(*database);
        auto plane = core::ControlPlane::open(*database, store, signingKey, nullptr, clock);
        QVERIFY(plane.ok());
        QCOMPARE((*plane)->auditLog().size(), size);
    }
};

QTEST_APPLESS_MAIN(TestCoreStore)
#include "test_core_store.moc"
