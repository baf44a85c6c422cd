// The data directory's keyring, changed by the control plane while it serves (Keyring API,
// `sealtrainctl keyring …`, issue #28 item 4): an admin rotates, re-wraps and retires KEK versions
// and changes the passphrase, each audited; and the attacks are refused: a non-admin's change
// (audited as denied), retiring a version that still wraps a dataset shard or the platform keys, a
// new passphrase without the current one, a weak passphrase, an edited or rolled-back
// keyring.json (the control plane does not start). `keyfile generate` makes operators' key files.
#include "ctl_site.h"

#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/sealed.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace sealtrain;
using sealtrain::ctl::kExitOk;
using sealtrain::testing::readFile;
using sealtrain::testing::runCtl;
using sealtrain::testing::Site;
using sealtrain::testing::verifyOneSentenceError;
namespace fs = std::filesystem;

namespace {

std::string detail(const audit::Entry& entry, const std::string& name)
{
    for (const auto& d : entry.details)
        if (d.name == name)
            return {d.value.begin(), d.value.end()};
    return {};
}

int activeVersion(const Site& site, const std::string& id)
{
    const auto listed = site.ctl({"keyring", "list", "--json"});
    if (listed.code != kExitOk)
        qFatal("keyring list: %s", listed.err.c_str());
    int version = 0;
    for (const auto& key : nlohmann::json::parse(listed.out))
        if (key["id"] == id && key["state"] == "active")
            version = key["version"].get<int>();
    return version;
}

// A site with alice (admin), sam (steward) and carol (auditor), and a dataset sam imported.
void openWithDataset(Site& site)
{
    site.open();
    site.addUser("sam", "steward");
    site.addUser("carol", "auditor");
    const fs::path corpus = site.root / "corpus.txt";
    std::ofstream(corpus) << "a line of text for the keyring test\nand another one\n";
    const auto imported = site.ctl(
        {"dataset", "import", "--name", "notes", "--format", "text-files", corpus.string()}, "sam");
    QVERIFY2(imported.code == kExitOk, imported.err.c_str());
}

}  // namespace

class TestCtlKeyring : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { ::unsetenv(api::kUserEnvironment); }

    void keyfileGenerate()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("datasets.key").toStdString();
        const auto made = runCtl({"keyfile", "generate", "--id", "datasets", "--out", path});
        QCOMPARE(made.code, kExitOk);
        QCOMPARE(testing::modeOf(path), 0600U);
        // The key never reaches the terminal.
        std::ifstream in(path);
        std::string magic, id, version, key;
        in >> magic >> id >> version >> key;
        QVERIFY(made.out.find(key) == std::string::npos);
        verifyOneSentenceError(runCtl({"keyfile", "generate", "--id", "datasets", "--out", path}),
                               "already exists");
    }

    // Rotate, then retire: refused while a shard is still wrapped under the old version, allowed
    // once `keyring rewrap` has re-wrapped every object of the data directory.
    void rotateRewrapRetire()
    {
        Site site;
        openWithDataset(site);
        const auto rotated = site.ctl({"keyring", "rotate", "datasets"});
        QVERIFY2(rotated.code == kExitOk, rotated.err.c_str());
        QVERIFY(rotated.out.find("version 2") != std::string::npos);
        const auto rotation = site.lastEntry("keyring.rotate", "carol");
        QCOMPARE(rotation.actor.id, std::string("alice"));
        QCOMPARE(rotation.outcome, audit::Outcome::Ok);
        QCOMPARE(detail(rotation, "keyring_generation"), std::string("2"));

        verifyOneSentenceError(site.ctl({"keyring", "retire", "datasets", "1"}), "still wraps");
        const auto refusal = site.lastEntry("keyring.retire", "carol");
        QCOMPARE(refusal.actor.id, std::string("alice"));
        QCOMPARE(refusal.outcome, audit::Outcome::Failed);
        QCOMPARE(refusal.target.id, std::string("datasets@1"));

        const auto rewrapped = site.ctl({"keyring", "rewrap", "datasets"});
        QVERIFY2(rewrapped.code == kExitOk, rewrapped.err.c_str());
        QVERIFY2(rewrapped.out.find("to version 2") != std::string::npos, rewrapped.out.c_str());
        QVERIFY(rewrapped.out.find("Re-wrapped 0") == std::string::npos);
        QCOMPARE(site.lastEntry("keyring.rewrap", "carol").outcome, audit::Outcome::Ok);
        // Every shard of the data directory is under version 2 now.
        for (const auto& entry : fs::recursive_directory_iterator(site.data + "/datasets")) {
            auto info = crypto::inspectSealedObject(entry.path());
            if (info && info->kekId == "datasets")
                QCOMPARE(info->kekVersion, 2U);
        }
        const auto retired = site.ctl({"keyring", "retire", "datasets", "1"});
        QVERIFY2(retired.code == kExitOk, retired.err.c_str());
        QCOMPARE(site.lastEntry("keyring.retire", "carol").outcome, audit::Outcome::Ok);
        QCOMPARE(activeVersion(site, "datasets"), 2);
        // The dataset still reads: its shards open under the new version.
        QCOMPARE(site.ctl({"dataset", "show", "notes"}, "sam").code, kExitOk);
    }

    // The platform's signing keys, the CA key and the artefact root's key (issue #48) are sealed
    // under `signing`: its old version can only be retired once all seven are re-wrapped, and
    // the control plane still starts afterwards.
    void retiringTheSigningKeysVersionNeedsRewrap()
    {
        Site site;
        site.open();
        QCOMPARE(site.ctl({"keyring", "rotate", "signing"}).code, kExitOk);
        verifyOneSentenceError(site.ctl({"keyring", "retire", "signing", "1"}),
                               "still wraps 7 sealed object(s)");
        const auto rewrapped = site.ctl({"keyring", "rewrap", "signing"});
        QVERIFY2(rewrapped.out.find("Re-wrapped 7 object(s)") != std::string::npos,
                 rewrapped.out.c_str());
        QCOMPARE(site.ctl({"keyring", "retire", "signing", "1"}).code, kExitOk);
        QCOMPARE(site.stop().code, kExitOk);
        QCOMPARE(site.start().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        QCOMPARE(site.ctl({"user", "list"}).code, kExitOk);
    }

    // Keyring changes need keyring.manage (the admin's): an engineer's attempt changes nothing and
    // is audited as denied.
    void keyringChangesNeedAnAdminSession()
    {
        Site site;
        site.open();
        site.addUser("bob", "engineer");
        site.addUser("carol", "auditor");
        verifyOneSentenceError(site.ctl({"keyring", "rotate", "datasets"}, "bob"),
                               "keyring.manage");
        const auto entry = site.lastEntry("keyring.rotate", "carol");
        QCOMPARE(entry.actor.id, std::string("bob"));
        QCOMPARE(entry.outcome, audit::Outcome::Denied);
        QCOMPARE(entry.target.id, std::string("datasets"));
        QCOMPARE(activeVersion(site, "datasets"), 1);
        for (const std::vector<std::string>& command :
             {std::vector<std::string>{"keyring", "retire", "datasets", "1"},
              std::vector<std::string>{"keyring", "rewrap", "datasets"},
              std::vector<std::string>{"keyring", "list"}})
            verifyOneSentenceError(site.ctl(command, "bob"), "keyring.manage");
        QCOMPARE(site.lastEntry("keyring.retire", "carol").outcome, audit::Outcome::Denied);
        QCOMPARE(site.lastEntry("keyring.rewrap", "carol").actor.id, std::string("bob"));
        const auto changed =
            site.ctl({"keyring", "change-passphrase", "--passphrase-file", site.passphraseFile,
                      "--new-passphrase-file", site.secretFile("new", "a new strong passphrase")},
                     "bob");
        verifyOneSentenceError(changed, "keyring.manage");
        QCOMPARE(site.lastEntry("keyring.change-passphrase", "carol").outcome,
                 audit::Outcome::Denied);
    }

    // A new passphrase needs the current one, and must be strong; the data directory then opens
    // with the new one only.
    void changingThePassphrase()
    {
        Site site;
        site.open();
        site.addUser("carol", "auditor");
        const auto change = [&](const std::string& current, const std::string& next) {
            return site.ctl({"keyring", "change-passphrase", "--passphrase-file", current,
                             "--new-passphrase-file", next});
        };
        const auto strong = site.secretFile("strong", "a different strong passphrase");
        const auto wrong = site.secretFile("wrong", "not the passphrase at all");
        verifyOneSentenceError(change(wrong, strong), "current passphrase does not open");
        QCOMPARE(site.lastEntry("keyring.change-passphrase", "carol").outcome,
                 audit::Outcome::Failed);
        verifyOneSentenceError(change(site.passphraseFile, site.secretFile("weak", "hunter2")),
                               "shorter than 12");
        const auto changed = change(site.passphraseFile, strong);
        QVERIFY2(changed.code == kExitOk, changed.err.c_str());
        QCOMPARE(site.stop().code, kExitOk);
        verifyOneSentenceError(site.start(), "control.log");
        QCOMPARE(site.plain({"start", "--passphrase-file", strong}).code, kExitOk);
    }

    void weakPassphraseRefusedAtInit()
    {
        for (const std::string passphrase : {"hunter2", "password1234"}) {
            Site site;
            const auto weak = site.secretFile("weak", passphrase);
            const auto init =
                runCtl({"init", "--data-dir", site.data, "--passphrase-file", weak, "--admin",
                        "alice", "--admin-password-file", site.passwordFile, "--argon2-ops", "2",
                        "--argon2-mem-mib", "64", "--client-dir", site.client});
            verifyOneSentenceError(init, "keyring passphrase");
            QVERIFY(!fs::exists(site.data));
        }
    }

    // An edited keyring.json (an old key made active again) and a genuine but older one (a
    // backup put back after a rotation) do not open: the control plane does not start.
    void editedOrRolledBackKeyringRefused()
    {
        Site site;
        site.open();
        QCOMPARE(site.stop().code, kExitOk);
        const auto path = fs::path(site.data) / "keyring.json";
        const auto before = readFile(path);
        QCOMPARE(site.start().code, kExitOk);
        QCOMPARE(site.signIn("alice").code, kExitOk);
        QCOMPARE(site.ctl({"keyring", "rotate", "datasets"}).code, kExitOk);
        QCOMPARE(site.stop().code, kExitOk);
        const auto after = readFile(path);

        auto json = nlohmann::json::parse(after);
        for (auto& entry : json["keks"])
            if (entry["id"] == "datasets")
                entry["state"] = entry["version"] == 1 ? "active" : "decrypt-only";
        std::ofstream(path, std::ios::trunc) << json.dump(2);
        verifyOneSentenceError(site.start(), "control.log");
        QVERIFY(readFile(site.client + "/run/control.log").find("changed outside Sealtrain")
                != std::string::npos);

        std::ofstream(path, std::ios::trunc) << before;
        verifyOneSentenceError(site.start(), "control.log");
        QVERIFY(readFile(site.client + "/run/control.log").find("older copy") != std::string::npos);

        std::ofstream(path, std::ios::trunc) << after;
        QCOMPARE(site.start().code, kExitOk);
    }
};

QTEST_GUILESS_MAIN(TestCtlKeyring)
#include "test_ctl_keyring.moc"
