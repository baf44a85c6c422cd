// Audit forwarding from the real daemon (issue #31): sealtrain-control started with a
// configuration file that names a forward file writes every committed entry there as a JSON
// line, refusals included, with the real actor; `sealtrainctl audit verify-forwarded` checks the
// copy against an auditor's bundle and the log key, and fails on an edited or removed line. A
// target it can not use stops the daemon with a sentence.
#include "ctl_process.h"
#include "daemon_fixture.h"

#include "sealtrain/api/client.h"
#include "sealtrain/audit/bundle.h"

#include <QProcess>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace sealtrain;

namespace {

using testing::readText;
using testing::writeText;

testing::CtlProcessRun runCtl(const QStringList& arguments)
{
    return testing::runCtlProcess(arguments, 60000);
}

std::vector<std::string> linesOf(const std::string& text)
{
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            lines.push_back(line);
    return lines;
}

}  // namespace

class TestApiAuditForward : public QObject {
    Q_OBJECT

    QTemporaryDir tmp_;
    testing::DaemonFixture daemon_;
    std::filesystem::path forwarded_;

    [[nodiscard]] QString path(const std::string& name) const
    {
        return QString::fromStdString((daemon_.runDir() / name).string());
    }

private slots:
    void initTestCase()
    {
        QVERIFY(tmp_.isValid());
        const std::filesystem::path root = tmp_.path().toStdString();
        daemon_.create(root, "alice", {{"bob", "engineer"}, {"rita", "auditor"}});
        std::filesystem::create_directories(root / "siem");
        forwarded_ = root / "siem" / "audit.jsonl";
        writeText(root / "control.conf", "# as /etc/sealtrain/control.conf\naudit-forward = \"file:"
                                             + forwarded_.string() + "\"\n");
        daemon_.start({"--config", QString::fromStdString((root / "control.conf").string())});
    }

    void everyCommittedEntryIsForwarded()
    {
        auto bob = daemon_.as("bob");
        // A refusal: an engineer may not export the audit log.
        auto refused = bob->exportAuditBundle({});
        QVERIFY(!refused);
        QCOMPARE(refused.error().code(), ErrorCode::PermissionDenied);
        auto bundle = daemon_.as("rita")->exportAuditBundle({});
        QVERIFY2(bundle, bundle ? "" : bundle.error().message().c_str());
        writeText(daemon_.runDir() / "log.bundle", *bundle);
        auto keys = daemon_.as("rita")->signingKeys();
        QVERIFY(keys);
        writeText(daemon_.runDir() / "signing.pub.pem", keys->auditPem);

        const auto lines = linesOf(readText(forwarded_));
        QVERIFY(!lines.empty());
        bool sawRefusal = false;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            const auto json = nlohmann::json::parse(lines[i]);
            QCOMPARE(json["type"].get<std::string>(), std::string("entry"));
            sawRefusal = sawRefusal
                         || (json["actor"]["id"] == "bob" && json["outcome"] == "denied"
                             && json["action"].get<std::string>().starts_with("audit."));
        }
        QVERIFY2(sawRefusal, "the refused export is not in the forwarded copy");
        QCOMPARE(QFileInfo(QString::fromStdString(forwarded_.string())).permissions()
                     & (QFile::ReadGroup | QFile::ReadOther),
                 QFileDevice::Permissions());
    }

    // The copy up to the bundle's newest signed head is VERIFIED; entries after it (the export
    // itself) are unconfirmed, never failed.
    void theCopyVerifiesAgainstTheSignedLog()
    {
        const auto parsed = audit::parseBundle(readText(daemon_.runDir() / "log.bundle"));
        QVERIFY(parsed);
        std::uint64_t signedSize = 0;  // entries below it are under a signed head
        for (const auto& entry : parsed->entries)
            if (entry.headSize)
                signedSize = std::max(signedSize, *entry.headSize);
        QVERIFY(signedSize > 0);
        std::string covered;
        std::size_t coveredLines = 0;
        for (const auto& line : linesOf(readText(forwarded_)))
            if (nlohmann::json::parse(line)["sequence"].get<std::uint64_t>() < signedSize) {
                covered += line + "\n";
                ++coveredLines;
            }
        QVERIFY(coveredLines > 3);
        writeText(daemon_.runDir() / "covered.jsonl", covered);

        auto run = runCtl({"audit", "verify-forwarded", path("covered.jsonl"), "--bundle",
                           path("log.bundle"), "--key", path("signing.pub.pem")});
        QVERIFY2(run.code == 0, run.out.c_str());
        QVERIFY2(run.out.find("VERIFIED") != std::string::npos, run.out.c_str());
        QVERIFY2(run.out.find("Matched:         " + std::to_string(coveredLines))
                     != std::string::npos,
                 run.out.c_str());

        auto whole =
            runCtl({"audit", "verify-forwarded", QString::fromStdString(forwarded_.string()),
                    "--bundle", path("log.bundle"), "--key", path("signing.pub.pem")});
        QVERIFY2(whole.code == 0 || whole.code == 3, whole.out.c_str());
    }

    void anEditedOrRemovedLineFails_data()
    {
        QTest::addColumn<QString>("attack");
        QTest::newRow("actor edited") << "edit";
        QTest::newRow("line removed") << "remove";
    }

    void anEditedOrRemovedLineFails()
    {
        QFETCH(QString, attack);
        auto lines = linesOf(readText(daemon_.runDir() / "covered.jsonl"));
        QVERIFY(lines.size() > 3);
        if (attack == "edit") {
            auto json = nlohmann::json::parse(lines[2]);
            json["actor"]["id"] = "someone-else";
            lines[2] = json.dump();
        } else {
            lines.erase(lines.begin() + 2);
        }
        std::string text;
        for (const auto& line : lines)
            text += line + "\n";
        writeText(daemon_.runDir() / "tampered.jsonl", text);
        auto run = runCtl({"audit", "verify-forwarded", path("tampered.jsonl"), "--bundle",
                           path("log.bundle"), "--key", path("signing.pub.pem")});
        QVERIFY2(run.code == 1, run.out.c_str());
        QVERIFY2(run.out.find("FAILED") != std::string::npos, run.out.c_str());
    }

    void aTargetItCanNotUseStopsTheDaemon()
    {
        QVERIFY(daemon_.stop());
        QProcess daemon;
        daemon.setProcessChannelMode(QProcess::MergedChannels);
        daemon.start(QStringLiteral(SEALTRAIN_CONTROL_EXECUTABLE),
                     {"--data-dir", QString::fromStdString(daemon_.dataDir().string()), "--listen",
                      "unix:" + path("other.sock"), "--audit-forward", "syslog"});
        QVERIFY(daemon.waitForStarted());
        daemon.write(QByteArray(testing::kDaemonPassphrase) + "\n");
        daemon.closeWriteChannel();
        QVERIFY(daemon.waitForFinished(60000));
        QVERIFY(daemon.exitCode() != 0);
        const auto output = daemon.readAll().toStdString();
        QVERIFY2(output.find("'syslog' is not an audit forward target") != std::string::npos,
                 output.c_str());
    }

    // A misspelt name in the configuration file stops the daemon before it unlocks anything.
    void aMisspeltConfigurationNameIsRefused()
    {
        writeText(daemon_.runDir() / "typo.conf", "audit-forwrd = \"journal\"\n");
        QProcess daemon;
        daemon.setProcessChannelMode(QProcess::MergedChannels);
        daemon.start(QStringLiteral(SEALTRAIN_CONTROL_EXECUTABLE),
                     {"--config", path("typo.conf"), "--data-dir",
                      QString::fromStdString(daemon_.dataDir().string()), "--listen",
                      "unix:" + path("other.sock")});
        QVERIFY(daemon.waitForStarted());
        daemon.closeWriteChannel();
        QVERIFY(daemon.waitForFinished(60000));
        QVERIFY(daemon.exitCode() != 0);
        const auto output = daemon.readAll().toStdString();
        QVERIFY2(output.find("audit-forwrd") != std::string::npos, output.c_str());
    }

    void cleanupTestCase() { daemon_.kill(); }
};

QTEST_GUILESS_MAIN(TestApiAuditForward)
#include "test_api_audit_forward.moc"
