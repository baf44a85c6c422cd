// sealtrainctl keyfile/keyring: the operator's path through creating and listing keyrings, and
// rotating, re-wrapping and retiring keys and changing the passphrase on a data directory as a
// signed-in admin, with the errors a user meets on the way and the attacks that are refused: an
// edited or rolled-back keyring.json, a non-admin's change (audited as denied), retiring a
// version that still wraps a dataset shard, a checkpoint or the platform keys, and a weak
// passphrase.
#include "ctl_data_dir.h"
#include "ctl_runner.h"

#include "sealtrain/audit/entry.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/data_directory.h"
#include "sealtrain/core/sql_audit_store.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/sealed.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <sys/stat.h>

using sealtrain::testing::CtlDataDir;
using sealtrain::testing::runCtl;
namespace fs = std::filesystem;

namespace {

std::string writeSecretFile(const QTemporaryDir& dir, const char* name, const std::string& text,
                            mode_t mode = 0600)
{
    std::string path = dir.filePath(QString::fromLatin1(name)).toStdString();
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
}

sealtrain::core::KeyringUnlock unlockWith(const CtlDataDir& site, const std::string& passphrase)
{
    sealtrain::core::KeyringUnlock unlock;
    if (passphrase.empty())
        unlock.masterKeyFile = site.masterKey;
    else
        unlock.passphrase = [passphrase] {
            return sealtrain::crypto::SecretBytes::fromBytes(sealtrain::asBytes(passphrase));
        };
    return unlock;
}

// The newest audit entry of `action`, read straight from the data directory.
sealtrain::audit::Entry lastEntry(const CtlDataDir& site, const std::string& action,
                                  const std::string& passphrase = {})
{
    auto platform = sealtrain::core::DataDirectory::open(site.data, unlockWith(site, passphrase));
    if (!platform)
        qFatal("%s", platform.error().message().c_str());
    sealtrain::core::SqlAuditStore store((*platform)->database());
    const auto size = (*platform)->controlPlane().auditLog().size();
    const auto stored = store.readEntries(0, size).value();
    for (auto it = stored.rbegin(); it != stored.rend(); ++it) {
        auto entry = sealtrain::audit::decodeEntry(it->bytes).value();
        if (entry.action == action)
            return entry;
    }
    qFatal("no %s entry", action.c_str());
}

std::string detail(const sealtrain::audit::Entry& entry, const std::string& name)
{
    for (const auto& d : entry.details)
        if (d.name == name)
            return {d.value.begin(), d.value.end()};
    return {};
}

// A small sealed object under `id` `version` of the site's keyring, as a dataset shard or a
// checkpoint would be.
void sealUnder(const CtlDataDir& site, const fs::path& path, const std::string& id,
               std::uint32_t version)
{
    auto keyring = sealtrain::crypto::Keyring::unlockWithMasterKey(
        fs::path(site.data) / "keyring.json",
        sealtrain::crypto::readKekFile(site.masterKey).value());
    QVERIFY(keyring.ok());
    fs::create_directories(path.parent_path());
    auto writer = sealtrain::crypto::SealedWriter::create(
        path, *keyring->findKek(id, version).value(), {"text/plain", "{}"});
    QVERIFY(writer.ok());
    QVERIFY(writer->write(sealtrain::asBytes("fortune")).ok());
    QVERIFY(writer->finish().ok());
}

void expectFailure(const sealtrain::testing::CtlOutcome& outcome, const std::string& words)
{
    QCOMPARE(outcome.code, sealtrain::ctl::kExitFailure);
    QVERIFY2(outcome.err.find(words) != std::string::npos, outcome.err.c_str());
}

// A new data directory whose `id` KEK alice has rotated once.
void initAndRotate(CtlDataDir& site, const std::string& id)
{
    site.init();
    const auto rotated = runCtl(site.as("alice", {"keyring", "rotate", id}));
    QVERIFY2(rotated.code == sealtrain::ctl::kExitOk, rotated.err.c_str());
}

int activeVersion(const CtlDataDir& site, const std::string& id)
{
    const auto listed = runCtl({"keyring", "list", "--json", "--data-dir", site.data,
                                "--master-key-file", site.masterKey});
    int version = 0;
    for (const auto& key : nlohmann::json::parse(listed.out))
        if (key["id"] == id && key["state"] == "active")
            version = key["version"].get<int>();
    return version;
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

    void bareKeyringCreateAndList()
    {
        QTemporaryDir dir;
        const std::string data = dir.filePath("data").toStdString();
        const auto pass = writeSecretFile(dir, "pass.txt", "demo passphrase\n");
        const auto wrongPass = writeSecretFile(dir, "wrong.txt", "not it, not it\n");
        const auto created = runCtl({"keyring", "create", "--data-dir", data, "--passphrase-file",
                                     pass, "--argon2-ops", "2", "--argon2-mem-mib", "64"});
        QVERIFY2(created.code == sealtrain::ctl::kExitOk, created.err.c_str());
        QVERIFY(fs::exists(fs::path(data) / "keyring.json"));
        const auto listed =
            runCtl({"keyring", "list", "--json", "--data-dir", data, "--passphrase-file", pass});
        QCOMPARE(listed.code, sealtrain::ctl::kExitOk);
        QCOMPARE(nlohmann::json::parse(listed.out).size(),
                 sealtrain::crypto::defaultKekPurposes().size());
        const auto wrong =
            runCtl({"keyring", "list", "--data-dir", data, "--passphrase-file", wrongPass});
        expectFailure(wrong, "passphrase is wrong");
        QVERIFY(wrong.err.find("not it") == std::string::npos);
    }

    void rotateRewrapRetire()
    {
        CtlDataDir site;
        site.init();
        const auto rotated = runCtl(site.as("alice", {"keyring", "rotate", "datasets"}));
        QVERIFY2(rotated.code == sealtrain::ctl::kExitOk, rotated.err.c_str());
        QVERIFY(rotated.out.find("version 2") != std::string::npos);
        const auto rotation = lastEntry(site, "keyring.rotate");
        QCOMPARE(rotation.actor.id, std::string("alice"));
        QCOMPARE(rotation.outcome, sealtrain::audit::Outcome::Ok);
        QCOMPARE(detail(rotation, "keyring_generation"), std::string("2"));

        // A dataset shard in the data directory and a checkpoint outside it, both under v1.
        const auto shard = fs::path(site.data) / "datasets" / "00ff" / "shard-0.sealed";
        const auto checkpoints = site.root / "run" / "checkpoints";
        const auto checkpoint = checkpoints / "step-10.sealed";
        sealUnder(site, shard, "datasets", 1);
        sealUnder(site, checkpoint, "datasets", 1);

        const auto retire = site.as("alice", {"keyring", "retire", "datasets", "1"});
        expectFailure(runCtl(retire), "still wraps");
        const auto refusal = lastEntry(site, "keyring.retire");
        QCOMPARE(refusal.actor.id, std::string("alice"));
        QCOMPARE(refusal.outcome, sealtrain::audit::Outcome::Failed);
        QVERIFY(refusal.reason.find("still wraps") != std::string::npos);
        QCOMPARE(refusal.target.id, std::string("datasets@1"));

        const auto rewrap = runCtl(site.as("alice", {"keyring", "rewrap", shard.string()}));
        QVERIFY2(rewrap.code == sealtrain::ctl::kExitOk, rewrap.err.c_str());
        QVERIFY(rewrap.out.find("to version 2") != std::string::npos);
        QCOMPARE(lastEntry(site, "keyring.rewrap").outcome, sealtrain::audit::Outcome::Ok);
        // The checkpoint folder is searched when it is named.
        auto retireScanning = retire;
        retireScanning.insert(retireScanning.end(), {"--scan", checkpoints.string()});
        expectFailure(runCtl(retireScanning), "step-10.sealed");
        QCOMPARE(runCtl(site.as("alice", {"keyring", "rewrap", checkpoint.string()})).code,
                 sealtrain::ctl::kExitOk);
        const auto retired = runCtl(retireScanning);
        QVERIFY2(retired.code == sealtrain::ctl::kExitOk, retired.err.c_str());
        QCOMPARE(lastEntry(site, "keyring.retire").outcome, sealtrain::audit::Outcome::Ok);
        QCOMPARE(activeVersion(site, "datasets"), 2);
    }

    // The platform's three signing keys and the CA key are sealed under `signing`: its old
    // version can only be retired once all four are re-wrapped, and the data directory still
    // opens afterwards.
    void retiringTheSigningKeysVersionNeedsRewrap()
    {
        CtlDataDir site;
        initAndRotate(site, "signing");
        const auto retire = site.as("alice", {"keyring", "retire", "signing", "1"});
        expectFailure(runCtl(retire), "still wraps 4 sealed object(s)");
        const auto data = fs::path(site.data);
        for (const char* name :
             {"signing.key.sealed", "manifests.key.sealed", "checkpoints.key.sealed"}) {
            QCOMPARE(runCtl(site.as("alice", {"keyring", "rewrap", (data / name).string()})).code,
                     sealtrain::ctl::kExitOk);
        }
        expectFailure(runCtl(retire), "still wraps 1 sealed object(s), among them '"
                                          + (data / "ca.key.sealed").string());
        QCOMPARE(
            runCtl(site.as("alice", {"keyring", "rewrap", (data / "ca.key.sealed").string()})).code,
            sealtrain::ctl::kExitOk);
        const auto retired = runCtl(retire);
        QVERIFY2(retired.code == sealtrain::ctl::kExitOk, retired.err.c_str());
        const auto opened = runCtl(site.as("alice", {"grant", "list"}));
        QVERIFY2(opened.code == sealtrain::ctl::kExitOk, opened.err.c_str());
    }

    // Checkpoints are not recorded in the data directory: their folders must be named.
    void retiringACheckpointsVersionNeedsItsFolders()
    {
        CtlDataDir site;
        initAndRotate(site, "checkpoints");
        const auto retire = site.as("alice", {"keyring", "retire", "checkpoints", "1"});
        expectFailure(runCtl(retire), "--scan");
        const auto folder = site.root / "out";
        sealUnder(site, folder / "step-5" / "model.sealed", "checkpoints", 1);
        auto scanning = retire;
        scanning.insert(scanning.end(), {"--scan", folder.string()});
        expectFailure(runCtl(scanning), "model.sealed");
        QCOMPARE(activeVersion(site, "checkpoints"), 2);
    }

    // Keyring changes need keyring.manage (the admin's): an engineer's attempt changes nothing and
    // is audited as denied; no session at all is refused before anything is tried.
    void keyringChangesNeedAnAdminSession()
    {
        CtlDataDir site;
        site.init();
        site.addUser("bob", "engineer");
        const auto denied = runCtl(site.as("bob", {"keyring", "rotate", "datasets"}));
        expectFailure(denied, "keyring.manage");
        const auto entry = lastEntry(site, "keyring.rotate");
        QCOMPARE(entry.actor.id, std::string("bob"));
        QCOMPARE(entry.outcome, sealtrain::audit::Outcome::Denied);
        QCOMPARE(entry.target.id, std::string("datasets"));
        QVERIFY2(entry.reason.find("keyring.manage") != std::string::npos, entry.reason.c_str());
        QCOMPARE(activeVersion(site, "datasets"), 1);

        const auto retire = runCtl(site.as("bob", {"keyring", "retire", "datasets", "1"}));
        expectFailure(retire, "keyring.manage");
        const auto deniedRetire = lastEntry(site, "keyring.retire");
        QCOMPARE(deniedRetire.outcome, sealtrain::audit::Outcome::Denied);
        QCOMPARE(deniedRetire.actor.id, std::string("bob"));
        QCOMPARE(deniedRetire.target.id, std::string("datasets@1"));

        const auto unsigned_ = runCtl({"keyring", "rotate", "datasets", "--data-dir", site.data,
                                       "--master-key-file", site.masterKey});
        expectFailure(unsigned_, "not signed in");
        QCOMPARE(activeVersion(site, "datasets"), 1);
    }

    // An edited keyring.json (an old key made active again) does not open the data directory.
    void editedKeyringRefused()
    {
        CtlDataDir site;
        initAndRotate(site, "datasets");
        const auto path = fs::path(site.data) / "keyring.json";
        auto json = nlohmann::json::parse(sealtrain::testing::readText(path));
        for (auto& entry : json["keks"])
            if (entry["id"] == "datasets")
                entry["state"] = entry["version"] == 1 ? "active" : "decrypt-only";
        sealtrain::testing::writeFile(path, json.dump(2));
        expectFailure(runCtl(site.as("alice", {"grant", "list"})), "changed outside Sealtrain");
        expectFailure(runCtl({"keyring", "list", "--data-dir", site.data, "--master-key-file",
                              site.masterKey}),
                      "changed outside Sealtrain");
    }

    // A genuine but older keyring.json (a backup put back after a rotation) is refused: the audit
    // log records a newer generation.
    void rolledBackKeyringRefused()
    {
        CtlDataDir site;
        site.init();
        const auto path = fs::path(site.data) / "keyring.json";
        const auto before = sealtrain::testing::readText(path);
        QCOMPARE(runCtl(site.as("alice", {"keyring", "rotate", "datasets"})).code,
                 sealtrain::ctl::kExitOk);
        const auto after = sealtrain::testing::readText(path);
        sealtrain::testing::writeFile(path, before);
        const auto refused = runCtl(site.as("alice", {"grant", "list"}));
        expectFailure(refused, "older copy");
        QVERIFY(refused.err.find("generation 1") != std::string::npos);
        expectFailure(runCtl(site.as("alice", {"keyring", "rotate", "datasets"})), "older copy");
        sealtrain::testing::writeFile(path, after);
        QCOMPARE(runCtl(site.as("alice", {"grant", "list"})).code, sealtrain::ctl::kExitOk);
    }

    void weakPassphraseRefused()
    {
        QTemporaryDir dir;
        const auto weak = writeSecretFile(dir, "weak.txt", "hunter2\n");
        const auto common = writeSecretFile(dir, "common.txt", "password1234\n");
        const std::string data = dir.filePath("data").toStdString();
        const std::string bare = dir.filePath("bare").toStdString();
        const std::string password = writeSecretFile(dir, "password.txt", "a long enough one\n");
        for (const auto& file : {weak, common}) {
            const auto init = runCtl({"init", "--data-dir", data, "--passphrase-file", file,
                                      "--admin", "alice", "--admin-password-file", password,
                                      "--argon2-ops", "2", "--argon2-mem-mib", "64"});
            expectFailure(init, "keyring passphrase");
            QVERIFY(!fs::exists(data));
            expectFailure(
                runCtl({"keyring", "create", "--data-dir", bare, "--passphrase-file", file}),
                "keyring passphrase");
            QVERIFY(!fs::exists(fs::path(bare) / "keyring.json"));
        }

        CtlDataDir site;
        const auto strong = writeSecretFile(dir, "strong.txt", "correct horse battery staple\n");
        site.initWithPassphrase(strong);
        const auto change = [&](const std::string& file) {
            auto args = site.as("alice", {"keyring", "change-passphrase"});
            args.insert(args.end(), {"--new-passphrase-file", file});
            return runCtl(args);
        };
        expectFailure(change(weak), "shorter than 12");
        const auto refusal =
            lastEntry(site, "keyring.change-passphrase", "correct horse battery staple");
        QCOMPARE(refusal.outcome, sealtrain::audit::Outcome::Failed);
        QCOMPARE(refusal.actor.id, std::string("alice"));

        const auto newer = writeSecretFile(dir, "newer.txt", "a different strong passphrase\n");
        const auto changed = change(newer);
        QVERIFY2(changed.code == sealtrain::ctl::kExitOk, changed.err.c_str());
        expectFailure(
            runCtl({"keyring", "list", "--data-dir", site.data, "--passphrase-file", strong}),
            "passphrase is wrong");
        QCOMPARE(
            runCtl({"keyring", "list", "--data-dir", site.data, "--passphrase-file", newer}).code,
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

        const auto pass = writeSecretFile(dir, "pass.txt", "long enough, but slow\n");
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
