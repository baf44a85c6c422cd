// Change management (issue #49, SOC 2 CC8.1): the control plane audits its schema migrations
// (platform.migrate, when it opens a database that needed them), its starts (platform.start:
// release, schema version, configuration digest, what changed) and its upgrades
// (platform.upgrade, when the release differs from the previous start's).
#include "core_fixture.h"
#include "data_directory_fixture.h"

#include "sealtrain/audit/store.h"
#include "sealtrain/core/audit/queries.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/store/sql_audit_store.h"

#include <QtTest/QtTest>

#include <string>
#include <vector>

using namespace sealtrain;
using testing::secret;

namespace {

constexpr const char* kPassphrase = "a long passphrase for the change tests";
constexpr const char* kPassword = "a long password for the change tests";
// Two configuration digests (64 hex digits each).
constexpr const char* kConfigA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr const char* kConfigB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

}  // namespace

class TestCorePlatformChanges : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::TestClock clock_;

    [[nodiscard]] core::DataDirectoryOptions options()
    {
        core::DataDirectoryOptions options;
        options.clock = &clock_;
        return options;
    }

    std::filesystem::path create(const std::string& name)
    {
        core::NewDataDirectory request;
        request.path = std::filesystem::path(tmp_.path().toStdString()) / name;
        request.passphrase = secret(kPassphrase);
        request.argon2 = crypto::kArgon2Floor;
        request.adminName = "alice";
        request.adminPassword = secret(kPassword);
        auto created = core::DataDirectory::create(request, options());
        if (!created)
            qFatal("create: %s", created.error().message().c_str());
        return request.path;
    }

    std::unique_ptr<core::DataDirectory> open(const std::filesystem::path& path)
    {
        auto opened = core::DataDirectory::open(path, testing::unlockWith(kPassphrase), options());
        if (!opened)
            qFatal("open %s: %s", path.c_str(), opened.error().message().c_str());
        return std::move(opened).value();
    }

private slots:
    // A new data directory's database is made by migrations 1 to the newest: one audited
    // platform.migrate from 0, by the control plane itself. Opening it again migrates nothing
    // and records nothing more.
    void aNewDatabaseRecordsItsMigrations()
    {
        const auto path = create("new");
        auto directory = open(path);
        auto migrated = testing::entriesWithAction(*directory, "platform.migrate");
        QCOMPARE(migrated.size(), std::size_t{1});
        QCOMPARE(migrated.front().actor.kind, audit::ActorKind::System);
        QCOMPARE(testing::detailOf(migrated.front(), "from_version"), std::string("0"));
        QCOMPARE(testing::detailOf(migrated.front(), "to_version"),
                 std::to_string(core::latestSchemaVersion()));
        directory.reset();
        directory = open(path);
        QCOMPARE(testing::entriesWithAction(*directory, "platform.migrate").size(), std::size_t{1});
    }

    // An older database (schema 16) opened by this release: the migrations it needs are applied
    // and audited as one platform.migrate from 16.
    void anUpgradedDatabaseRecordsTheMigrationsItNeeded()
    {
        const auto file = std::filesystem::path(tmp_.path().toStdString()) / "old.db";
        {
            core::DatabaseOptions old;
            old.schemaVersion = 16;
            auto database = core::Database::open(file, testing::databaseKey(3), old);
            QVERIFY(database.ok());
            QCOMPARE((*database)->schemaVersion().value(), 16);
        }
        auto database = core::Database::open(file, testing::databaseKey(3));
        QVERIFY(database.ok());
        QCOMPARE((*database)->schemaVersion().value(), core::latestSchemaVersion());
        core::SqlAuditStore store(**database);
        const crypto::SigningKey signingKey = crypto::SigningKey::generate().value();
        auto plane = core::ControlPlane::open(**database, store, signingKey, nullptr, clock_, {});
        QVERIFY(plane.ok());
        const auto stored = store.readEntries(0, 16).value();
        const auto entries = core::decodeStoredEntries(stored).value();
        QCOMPARE(entries.size(), std::size_t{1});
        QCOMPARE(entries.front().action, std::string("platform.migrate"));
        QCOMPARE(testing::detailOf(entries.front(), "from_version"), std::string("16"));
        QCOMPARE(testing::detailOf(entries.front(), "to_version"),
                 std::to_string(core::latestSchemaVersion()));
    }

    // Each start is audited with its release, schema version and configuration digest; the
    // second start with the same configuration says it did not change, a changed one says it
    // did, and a start of another release is also an upgrade from the previous one.
    void startsAndUpgradesAreAudited()
    {
        const auto path = create("starts");
        {
            auto directory = open(path);
            const auto recorded = directory->recordStart({"0.1.0", kConfigA});
            QVERIFY2(recorded, recorded ? "" : recorded.error().message().c_str());
            const auto starts = testing::entriesWithAction(*directory, "platform.start");
            QCOMPARE(starts.size(), std::size_t{1});
            const audit::Entry& first = starts.front();
            QCOMPARE(first.actor.kind, audit::ActorKind::System);
            QCOMPARE(testing::detailOf(first, "version"), std::string("0.1.0"));
            QCOMPARE(testing::detailOf(first, "config_sha256"), std::string(kConfigA));
            QCOMPARE(testing::detailOf(first, "schema_version"),
                     std::to_string(core::latestSchemaVersion()));
            QCOMPARE(testing::detailOf(first, "previous_version"), std::string("none"));
            QCOMPARE(testing::detailOf(first, "config_changed"), std::string("first start"));
            QVERIFY(testing::entriesWithAction(*directory, "platform.upgrade").empty());
        }
        {
            auto directory = open(path);
            QVERIFY(directory->recordStart({"0.1.0", kConfigA}));
            QCOMPARE(
                testing::detailOf(testing::entriesWithAction(*directory, "platform.start").back(),
                                  "config_changed"),
                std::string("no"));
            QVERIFY(directory->recordStart({"0.1.0", kConfigB}));
            QCOMPARE(
                testing::detailOf(testing::entriesWithAction(*directory, "platform.start").back(),
                                  "config_changed"),
                std::string("yes"));
            QVERIFY(testing::entriesWithAction(*directory, "platform.upgrade").empty());
        }
        auto directory = open(path);
        QVERIFY(directory->recordStart({"0.2.0", kConfigB}));
        const auto upgrades = testing::entriesWithAction(*directory, "platform.upgrade");
        QCOMPARE(upgrades.size(), std::size_t{1});
        QCOMPARE(testing::detailOf(upgrades.front(), "from_version"), std::string("0.1.0"));
        QCOMPARE(testing::detailOf(upgrades.front(), "to_version"), std::string("0.2.0"));
        const auto start = testing::entriesWithAction(*directory, "platform.start").back();
        QCOMPARE(testing::detailOf(start, "previous_version"), std::string("0.1.0"));
        QVERIFY(upgrades.front().sequence < start.sequence);
        // A start without its release or a digest is refused, and nothing is recorded.
        QVERIFY(!directory->recordStart({"", kConfigA}));
        QVERIFY(!directory->recordStart({"0.2.0", "abc"}));
        QCOMPARE(testing::entriesWithAction(*directory, "platform.start").size(), std::size_t{4});
    }
};

QTEST_GUILESS_MAIN(TestCorePlatformChanges)
#include "test_core_platform_changes.moc"
