// Backups from the real daemon while 32 clients write (issue #31): every change acknowledged
// before the backup began is in it, every change it holds is under its head, the restored log
// verifies and its first entry after the backup's head is the restore. An engineer is refused
// and audited with the real actor and peer; a one-byte edit fails `sealtrainctl backup verify`
// and the restore; a restore over the live witness (newer) is refused unless accepted, and the
// acceptance is in the restored log.
#include "ctl_process.h"
#include "daemon_fixture.h"

#include "sealtrain/api/client.h"

#include <QProcess>
#include <QtTest/QtTest>

#include <atomic>
#include <fstream>
#include <mutex>
#include <set>
#include <thread>

using namespace sealtrain;

namespace {

using testing::readText;
using testing::writeText;

testing::CtlProcessRun runCtl(const QStringList& arguments)
{
    return testing::runCtlProcess(arguments);
}

std::string detail(const audit::Entry& entry, const std::string& name)
{
    for (const auto& d : entry.details)
        if (d.name == name)
            return {d.value.begin(), d.value.end()};
    return {};
}

}  // namespace

class TestApiBackup : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::DaemonFixture daemon_;
    std::filesystem::path archive_;
    std::filesystem::path passphraseFile_;
    std::uint64_t head_ = 0;
    std::set<std::string> ackedBefore_;  // roles acknowledged before the backup began
    std::set<std::string> acked_;        // every role acknowledged

    [[nodiscard]] QString path(const std::filesystem::path& p) const
    {
        return QString::fromStdString(p.string());
    }

    std::vector<audit::Entry> entriesOf(const std::filesystem::path& dataDir)
    {
        auto platform = core::DataDirectory::open(dataDir, testing::daemonUnlock());
        if (!platform)
            qFatal("open %s: %s", dataDir.c_str(), platform.error().message().c_str());
        const auto& log = (*platform)->controlPlane().auditLog();
        std::vector<audit::Entry> entries;
        auto stored = log.store().readEntries(0, log.size());
        if (!stored)
            qFatal("read: %s", stored.error().message().c_str());
        for (const auto& bytes : *stored)
            entries.push_back(audit::decodeEntry(bytes.bytes).value());
        return entries;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        const std::filesystem::path root = tmp_.path().toStdString();
        daemon_.create(root, "alice", {{"bob", "engineer"}});
        passphraseFile_ = root / "passphrase";
        writeText(passphraseFile_, std::string(testing::kDaemonPassphrase) + "\n");
        std::filesystem::permissions(passphraseFile_,
                                     std::filesystem::perms::owner_read
                                         | std::filesystem::perms::owner_write,
                                     std::filesystem::perm_options::replace);
        daemon_.start();
    }

    void anEngineerIsRefusedAndAudited()
    {
        auto refused = daemon_.as("bob")->platform().backup(daemon_.runDir() / "bob.tar", 0);
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
        QVERIFY(!std::filesystem::exists(daemon_.runDir() / "bob.tar"));
    }

    void aBackupWhile32ClientsWrite()
    {
        const auto& alice = daemon_.session("alice");
        constexpr int kWriters = 32;
        std::atomic<bool> stop{false};
        std::atomic<bool> backupBegun{false};
        std::atomic<int> afterBackup{0};
        std::atomic<int> failures{0};
        std::mutex lock;
        std::vector<std::thread> writers;
        writers.reserve(kWriters);
        for (int w = 0; w < kWriters; ++w) {
            writers.emplace_back([&, w] {
                auto client = daemon_.as(alice);
                for (int k = 0; !stop; ++k) {
                    const std::string name = "w" + std::to_string(w) + "-" + std::to_string(k);
                    // Read before the call: a change acknowledged after this was still in flight.
                    const bool begunBefore = backupBegun;
                    if (!client->access().createRole(name, {"audit.read"})) {
                        ++failures;
                        continue;
                    }
                    const std::lock_guard guard(lock);
                    acked_.insert(name);
                    if (!begunBefore && !backupBegun)
                        ackedBefore_.insert(name);
                    if (backupBegun)
                        ++afterBackup;
                }
            });
        }
        QTest::qWait(1500);
        archive_ = daemon_.runDir() / "backup.tar";
        backupBegun = true;
        auto taken = daemon_.as(alice)->platform().backup(archive_, 0);
        // More changes after the backup, so that the live witness moves past its head.
        for (int waited = 0; afterBackup < 40 && waited < 20000; waited += 50)
            QTest::qWait(50);
        stop = true;
        for (auto& writer : writers)
            writer.join();
        QVERIFY2(taken, taken ? "" : taken.error().message().c_str());
        QCOMPARE(failures.load(), 0);
        QVERIFY2(ackedBefore_.size() > 32, "the writers hardly wrote before the backup");
        QVERIFY(afterBackup >= 40);
        head_ = taken->head;
        QVERIFY(std::filesystem::exists(archive_));
        // The archive left nothing behind in the data directory.
        for (const auto& item : std::filesystem::directory_iterator(daemon_.dataDir()))
            QVERIFY(item.path().filename().string().rfind(".backup-", 0) != 0);
        QVERIFY(daemon_.stop());
    }

    void theArchiveVerifiesOfflineAndAnEditedByteFails()
    {
        const auto key = daemon_.dataDir() / "signing.pub.pem";
        auto run = runCtl({"backup", "verify", path(archive_), "--key", path(key)});
        QVERIFY2(run.code == 0, run.out.c_str());
        QVERIFY2(run.out.find("VERIFIED") != std::string::npos, run.out.c_str());
        QVERIFY2(run.out.find("Audit head: " + std::to_string(head_)) != std::string::npos,
                 run.out.c_str());
        // Readable with standard tools: the outer archive lists its four members.
        QProcess tar;
        tar.start("tar", {"-tf", path(archive_)});
        QVERIFY(tar.waitForFinished(30000));
        QCOMPARE(tar.readAllStandardOutput().toStdString(),
                 std::string("backup.json\nbackup.dsse.json\nkeyring.json\npayload.sealed\n"));

        std::string bytes = readText(archive_);
        bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x20);
        const auto tampered = daemon_.runDir() / "tampered.tar";
        writeText(tampered, bytes);
        run = runCtl({"backup", "verify", path(tampered), "--key", path(key)});
        QVERIFY2(run.code == 1, run.out.c_str());
        QVERIFY2(run.out.find("FAILED") != std::string::npos, run.out.c_str());
        run = runCtl({"restore", path(tampered), "--data-dir", path(daemon_.runDir() / "bad"),
                      "--without-witness", "--passphrase-file", path(passphraseFile_)});
        QVERIFY2(run.code == 1, run.out.c_str());
        QVERIFY(!std::filesystem::exists(daemon_.runDir() / "bad"));
    }

    void theRestoreHoldsEveryAcknowledgedChange()
    {
        const auto restored = daemon_.runDir() / "restored";
        auto run = runCtl({"restore", path(archive_), "--data-dir", path(restored),
                           "--without-witness", "--passphrase-file", path(passphraseFile_), "--key",
                           path(daemon_.dataDir() / "signing.pub.pem")});
        QVERIFY2(run.code == 0, run.out.c_str());
        // Opening re-hashes every entry and checks every head: the restored log verifies.
        const auto entries = entriesOf(restored);
        QCOMPARE(entries.size(), static_cast<std::size_t>(head_ + 1));
        const auto& restore = entries.back();
        QCOMPARE(restore.action, std::string("platform.restore"));
        QCOMPARE(detail(restore, "backup_head"), std::to_string(head_));
        std::set<std::string> created;
        for (std::size_t i = 0; i < head_; ++i)
            if (entries[i].action == "role.create" && entries[i].outcome == audit::Outcome::Ok)
                created.insert(entries[i].target.id);
        for (const auto& name : ackedBefore_)
            QVERIFY2(created.count(name) == 1,
                     ("acknowledged before the backup, missing from it: " + name).c_str());
        // Every role it holds was acknowledged, and the roles table agrees with the log.
        auto platform = core::DataDirectory::open(restored, testing::daemonUnlock());
        QVERIFY(platform);
        std::set<std::string> roles;
        QVERIFY((*platform)->database().query(
            "SELECT name FROM roles WHERE builtin = 0", {},
            [&](const core::Statement& row) { roles.insert(row.text(0)); }));
        QCOMPARE(roles, created);
        for (const auto& name : roles)
            QVERIFY(acked_.count(name) == 1);
        QVERIFY(created.size() < acked_.size());
    }

    void aRestoreOverTheNewerLiveWitnessNeedsAnAcceptance()
    {
        const auto target = daemon_.runDir() / "accepted";
        const auto witness = daemon_.dataDir() / "audit.witness";
        auto run = runCtl({"restore", path(archive_), "--data-dir", path(target), "--witness",
                           path(witness), "--passphrase-file", path(passphraseFile_)});
        QVERIFY2(run.code == 1, run.out.c_str());
        QVERIFY2(run.out.find("--accept-loss") != std::string::npos, run.out.c_str());
        QVERIFY(!std::filesystem::exists(target));
        run = runCtl({"restore", path(archive_), "--data-dir", path(target), "--witness",
                      path(witness), "--accept-loss", "--passphrase-file", path(passphraseFile_)});
        QVERIFY2(run.code == 0, run.out.c_str());
        const auto entries = entriesOf(target);
        QCOMPARE(entries.size(), static_cast<std::size_t>(head_ + 1));
        QCOMPARE(entries.back().action, std::string("platform.restore"));
        QCOMPARE(detail(entries.back(), "accepted_loss"), std::string("yes"));
        QVERIFY(std::stoull(detail(entries.back(), "lost_entries")) > 0);
    }

    void theRefusalNamesTheRealActorAndPeer()
    {
        const auto entries = entriesOf(daemon_.dataDir());
        bool found = false;
        for (const auto& entry : entries)
            if (entry.action == "platform.backup" && entry.outcome == audit::Outcome::Denied) {
                QCOMPARE(entry.actor.id, std::string("bob"));
                QVERIFY(!detail(entry, "peer").empty());
                found = true;
            }
        QVERIFY2(found, "the engineer's refused backup is not in the log");
        std::size_t taken = 0;
        for (const auto& entry : entries)
            if (entry.action == "platform.backup" && entry.outcome == audit::Outcome::Ok) {
                QCOMPARE(entry.actor.id, std::string("alice"));
                QCOMPARE(detail(entry, "head"), std::to_string(head_));
                ++taken;
            }
        QCOMPARE(taken, std::size_t{1});
    }
};

QTEST_GUILESS_MAIN(TestApiBackup)
#include "test_api_backup.moc"
