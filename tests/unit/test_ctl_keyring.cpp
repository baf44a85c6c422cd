// sealtrainctl keyfile/keyring: the operator's path through creating, listing, rotating and
// retiring keys and changing the passphrase, with the errors a user meets on the way.
#include "ctl_runner.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/sealed.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <sys/stat.h>

using sealtrain::testing::runCtl;

namespace {

std::string writeSecretFile(const QTemporaryDir& dir, const char* name, const std::string& text,
                            mode_t mode = 0600)
{
    std::string path = dir.filePath(QString::fromLatin1(name)).toStdString();
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
}

}  // namespace

class TestCtlKeyring : public QObject {
    Q_OBJECT

private slots:
    void keyfileGenerate()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("datasets.key").toStdString();
        const auto made = runCtl({"keyfile", "generate", "--id", "datasets", "--out", path});
        QCOMPARE(made.code, sealtrain::ctl::kExitOk);
        struct stat info {};
        QCOMPARE(::stat(path.c_str(), &info), 0);
        QCOMPARE(info.st_mode & 0777, 0600u);
        // The key never reaches the terminal.
        std::ifstream in(path);
        std::string magic, id, version, key;
        in >> magic >> id >> version >> key;
        QVERIFY(made.out.find(key) == std::string::npos);

        const auto again = runCtl({"keyfile", "generate", "--id", "datasets", "--out", path});
        QCOMPARE(again.code, sealtrain::ctl::kExitFailure);
        QVERIFY(again.err.find("already exists") != std::string::npos);
    }

    void keyringLifecycle()
    {
        QTemporaryDir dir;
        const std::string data = dir.filePath("data").toStdString();
        const auto pass = writeSecretFile(dir, "pass.txt", "demo passphrase\n");
        const auto wrongPass = writeSecretFile(dir, "wrong.txt", "not it\n");
        const auto newPass = writeSecretFile(dir, "new.txt", "new demo passphrase\n");
        const std::vector<std::string> fast{"--argon2-ops", "2", "--argon2-mem-mib", "64"};

        auto create = std::vector<std::string>{"keyring",           "create", "--data-dir", data,
                                               "--passphrase-file", pass};
        create.insert(create.end(), fast.begin(), fast.end());
        const auto created = runCtl(create);
        QVERIFY2(created.code == sealtrain::ctl::kExitOk, created.err.c_str());
        QVERIFY(std::filesystem::exists(std::filesystem::path(data) / "keyring.json"));

        const auto rotated = runCtl(
            {"keyring", "rotate", "datasets", "--data-dir", data, "--passphrase-file", pass});
        QVERIFY2(rotated.code == sealtrain::ctl::kExitOk, rotated.err.c_str());
        QVERIFY(rotated.out.find("version 2") != std::string::npos);

        // Re-wrap an object sealed under version 1 before retiring it; one that is not
        // re-wrapped is locked out by the retirement.
        const std::string rewrapped = dir.filePath("rewrapped.sealed").toStdString();
        const std::string stale = dir.filePath("stale.sealed").toStdString();
        {
            auto keyring = sealtrain::crypto::Keyring::unlockWithPassphrase(
                std::filesystem::path(data) / "keyring.json",
                sealtrain::crypto::SecretBytes::fromBytes(sealtrain::asBytes("demo passphrase"))
                    .value());
            QVERIFY(keyring.ok());
            const auto* v1 = *keyring->findKek("datasets", 1);
            for (const auto& path : {rewrapped, stale}) {
                auto writer =
                    sealtrain::crypto::SealedWriter::create(path, *v1, {"text/plain", "{}"});
                QVERIFY(writer.ok());
                QVERIFY(writer->write(sealtrain::asBytes("fortune")).ok());
                QVERIFY(writer->finish().ok());
            }
        }
        const auto rewrap =
            runCtl({"keyring", "rewrap", rewrapped, "--data-dir", data, "--passphrase-file", pass});
        QVERIFY2(rewrap.code == sealtrain::ctl::kExitOk, rewrap.err.c_str());
        QVERIFY(rewrap.out.find("to version 2") != std::string::npos);

        const auto retired = runCtl(
            {"keyring", "retire", "datasets", "1", "--data-dir", data, "--passphrase-file", pass});
        QVERIFY2(retired.code == sealtrain::ctl::kExitOk, retired.err.c_str());

        const auto listed =
            runCtl({"keyring", "list", "--json", "--data-dir", data, "--passphrase-file", pass});
        QCOMPARE(listed.code, sealtrain::ctl::kExitOk);
        const auto keys = nlohmann::json::parse(listed.out);
        int datasetsVersions = 0;
        for (const auto& key : keys) {
            if (key["id"] == "datasets") {
                ++datasetsVersions;
                QCOMPARE(QString::fromStdString(key["state"].get<std::string>()),
                         key["version"] == 1 ? QStringLiteral("retired")
                                             : QStringLiteral("active"));
            }
        }
        QCOMPARE(datasetsVersions, 2);

        const auto lockedOut =
            runCtl({"keyring", "rewrap", stale, "--data-dir", data, "--passphrase-file", pass});
        QCOMPARE(lockedOut.code, sealtrain::ctl::kExitFailure);
        QVERIFY2(lockedOut.err.find("retired") != std::string::npos, lockedOut.err.c_str());

        const auto wrong =
            runCtl({"keyring", "list", "--data-dir", data, "--passphrase-file", wrongPass});
        QCOMPARE(wrong.code, sealtrain::ctl::kExitFailure);
        QVERIFY(wrong.err.find("passphrase is wrong") != std::string::npos);
        QVERIFY(wrong.err.find("not it") == std::string::npos);

        const auto changed = runCtl({"keyring", "change-passphrase", "--data-dir", data,
                                     "--passphrase-file", pass, "--new-passphrase-file", newPass});
        QVERIFY2(changed.code == sealtrain::ctl::kExitOk, changed.err.c_str());
        QCOMPARE(runCtl({"keyring", "list", "--data-dir", data, "--passphrase-file", pass}).code,
                 sealtrain::ctl::kExitFailure);
        QCOMPARE(runCtl({"keyring", "list", "--data-dir", data, "--passphrase-file", newPass}).code,
                 sealtrain::ctl::kExitOk);
    }

    void userErrors()
    {
        QTemporaryDir dir;
        const std::string data = dir.filePath("data").toStdString();
        // Readable by others, or by the group alone: refused alike.
        for (const mode_t mode : {0644U, 0640U}) {
            const auto exposed =
                writeSecretFile(dir, ("exposed-" + std::to_string(mode)).c_str(), "secret\n", mode);
            const auto refused =
                runCtl({"keyring", "create", "--data-dir", data, "--passphrase-file", exposed});
            QCOMPARE(refused.code, sealtrain::ctl::kExitFailure);
            QVERIFY(refused.err.find("chmod 600") != std::string::npos);
            QVERIFY(!std::filesystem::exists(std::filesystem::path(data) / "keyring.json"));
        }

        const auto pass = writeSecretFile(dir, "pass.txt", "secret\n");
        const auto weak = runCtl({"keyring", "create", "--data-dir", data, "--passphrase-file",
                                  pass, "--argon2-ops", "1"});
        QCOMPARE(weak.code, sealtrain::ctl::kExitFailure);
        QVERIFY(weak.err.find("floor") != std::string::npos);

        const auto missing =
            runCtl({"keyring", "list", "--data-dir", data, "--passphrase-file", pass});
        QCOMPARE(missing.code, sealtrain::ctl::kExitFailure);
        QVERIFY(missing.err.find("No keyring") != std::string::npos);

        const auto both =
            runCtl({"keyring", "list", "--passphrase-file", pass, "--master-key-file", pass});
        QCOMPARE(both.code, sealtrain::ctl::kExitUsage);
    }
};

QTEST_APPLESS_MAIN(TestCtlKeyring)
#include "test_ctl_keyring.moc"
