// sealtrainctl dataset import|list|show|grant|revoke through the workstation's control plane,
// and `dataset verify` of a copy offline: a data steward uploads fortune files (links and strfile
// indexes skipped), an engineer reads only with a grant, and the offline check refuses a corrupt
// shard, a shard from another dataset, a re-wrapped key, a manifest edit and a signature by
// another key, each with one clear sentence and exit 1. A failed import leaves no dataset behind.
#include "ctl_site.h"

#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/dataset/manifest.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <fstream>

using namespace sealtrain;
using sealtrain::testing::readFile;
using sealtrain::testing::runCtl;
namespace fs = std::filesystem;

namespace {

void writeFile(const fs::path& path, const std::string& text)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Fortunes with an index and a link beside them, as the Debian package installs them.
void writeFortunes(const fs::path& folder, const std::string& tag)
{
    writeFile(folder / "wisdom", "Fortune one of " + tag
                                     + ".\n%\nFortune two,\n\non two lines.\n%\n"
                                     + "Mail root@example.org or call 555-867-5309.\n%\n");
    writeFile(folder / "wisdom.dat", std::string("\0\0\0\2\xff\xfe", 6));
    fs::create_symlink("wisdom", folder / "wisdom.u8");
}

}  // namespace

class TestCtlDataset final : public QObject {
    Q_OBJECT

private:
    testing::Site site_;
    fs::path keys_;  // the platform's public keys, as `signing-keys` saves them

    // Imports fortunes as `name` and returns the dataset's folder.
    fs::path import(const std::string& name)
    {
        const fs::path source = site_.root / ("src-" + name) / "fortunes";
        writeFortunes(source, name);
        const auto done = site_.ctl(
            {"dataset", "import", "--name", name, "--format", "fortune", source.string()}, "sam");
        if (done.code != 0)
            qFatal("import failed: %s", done.err.c_str());
        const auto at = done.out.find("sha256:");
        return fs::path(site_.data) / "datasets" / done.out.substr(at + 7, 64);
    }

    [[nodiscard]] testing::CtlOutcome verifyOffline(const fs::path& folder,
                                                    const std::string& key = "manifests.pub.pem")
    {
        return runCtl(
            {"dataset", "verify", "--folder", folder.string(), "--key", (keys_ / key).string()});
    }

private slots:
    void initTestCase()
    {
        ::unsetenv(api::kUserEnvironment);
        site_.open();
        site_.addUser("sam", "steward");
        site_.addUser("eve", "engineer");
        keys_ = site_.root / "keys";
        const auto saved = site_.ctl({"signing-keys", "--out-dir", keys_.string()}, "sam");
        QVERIFY2(saved.code == 0, saved.err.c_str());
    }

    void importListShowVerify()
    {
        const fs::path source = site_.root / "quickstart" / "fortunes";
        writeFortunes(source, "the quickstart");
        const auto imported =
            site_.ctl({"dataset", "import", "--name", "fortunes", "--format", "fortune",
                       "--classification", "public", "--progress", "lines", source.string()},
                      "sam");
        QVERIFY2(imported.code == 0, imported.err.c_str());
        QVERIFY2(imported.out.find("Imported 'fortunes' version 1") == 0, imported.out.c_str());
        QVERIFY(imported.err.find('\r') == std::string::npos);
        QVERIFY2(imported.err.find("kept 3") != std::string::npos, imported.err.c_str());
        QVERIFY(imported.err.find("root@example.org") == std::string::npos);

        const auto list = site_.ctl({"dataset", "list", "--json"}, "sam");
        QCOMPARE(list.code, 0);
        const auto datasets = nlohmann::json::parse(list.out);
        QCOMPARE(datasets.size(), std::size_t{1});
        QCOMPARE(datasets[0]["name"].get<std::string>(), std::string("fortunes"));
        QCOMPARE(datasets[0]["classification"].get<std::string>(), std::string("public"));

        const auto show = site_.ctl({"dataset", "show", "fortunes", "--json"}, "sam");
        QCOMPARE(show.code, 0);
        const auto info = nlohmann::json::parse(show.out);
        QCOMPARE(info["input_format"].get<std::string>(), std::string("fortune"));
        QCOMPARE(info["sources"].get<int>(), 1);  // the .dat index and the .u8 link are skipped
        QCOMPARE(info["readers"], nlohmann::json::array({"sam"}));

        // Offline, with only the public key: signature and shard hashes.
        const fs::path folder =
            fs::path(site_.data) / "datasets" / info["id"].get<std::string>().substr(7);
        const auto offline = verifyOffline(folder);
        QVERIFY2(offline.code == 0, offline.err.c_str());
        QVERIFY(offline.out.find("Dataset OK") == 0);
        // Manifests have a key of their own: the audit log's does not vouch for them.
        QVERIFY(verifyOffline(folder, "signing.pub.pem").code != 0);
    }

    void readingNeedsAGrant()
    {
        import("shared");
        const auto hidden = site_.ctl({"dataset", "show", "shared"}, "eve");
        QCOMPARE(hidden.code, 1);
        QCOMPARE(nlohmann::json::parse(site_.ctl({"dataset", "list", "--json"}, "eve").out).size(),
                 std::size_t{0});
        const auto selfGrant = site_.ctl({"dataset", "grant", "shared", "eve"}, "eve");
        QCOMPARE(selfGrant.code, 1);
        QVERIFY(selfGrant.err.find("lacks the permission 'dataset.grant'") != std::string::npos);
        const auto steward = site_.ctl(
            {"dataset", "import", "--name", "mine", (site_.root / "src-shared").string()}, "eve");
        QCOMPARE(steward.code, 1);
        QVERIFY2(steward.err.find("lacks the permission 'dataset.import'") != std::string::npos,
                 steward.err.c_str());

        QCOMPARE(site_.ctl({"dataset", "grant", "shared", "eve"}, "sam").code, 0);
        const auto allowed = site_.ctl({"dataset", "show", "shared@1"}, "eve");
        QVERIFY2(allowed.code == 0, allowed.err.c_str());
        QCOMPARE(site_.ctl({"dataset", "revoke", "shared", "eve"}, "sam").code, 0);
        QCOMPARE(site_.ctl({"dataset", "show", "shared"}, "eve").code, 1);
    }

    void verifyRefusesTampering_data()
    {
        QTest::addColumn<QString>("attack");
        QTest::addColumn<QString>("says");
        QTest::newRow("corrupt shard") << "corrupt"
                                       << "restore the dataset from a trusted copy";
        QTest::newRow("shard from another dataset") << "swap"
                                                    << "restore the dataset from a trusted copy";
        QTest::newRow("manifest edit") << "manifest"
                                       << "does not hash to the dataset id";
        QTest::newRow("signature by another key") << "signature"
                                                  << "is not signed by the platform key";
    }

    // The tampering is done on a copy: the data directory's own dataset stays intact.
    void verifyRefusesTampering()
    {
        QFETCH(QString, attack);
        QFETCH(QString, says);
        const std::string name = "tamper-" + attack.toStdString();
        const fs::path original = import(name);
        const fs::path other = import(name + "-other");
        // A copy keeps its folder's name: the dataset id.
        const fs::path folder = site_.root / "copies" / original.filename();
        fs::create_directories(folder.parent_path());
        fs::copy(original, folder, fs::copy_options::recursive);
        const auto loaded = dataset::loadManifest(folder, "");
        QVERIFY2(loaded, loaded ? "" : (folder.string() + ": " + loaded.error().message()).c_str());
        const auto& manifest = *loaded;
        const fs::path shard = folder / manifest.train.shards[0].file;
        if (attack == "corrupt") {
            // Flip bits (a fixed value would change nothing where the tag already held it).
            std::fstream file(shard, std::ios::in | std::ios::out | std::ios::binary);
            const auto near = std::streamoff(fs::file_size(shard) - 20);
            file.seekg(near);
            const auto byte = static_cast<char>(file.get() ^ 0x5a);
            file.seekp(near);
            file.put(byte);
        } else if (attack == "swap") {
            const auto theirs = dataset::loadManifest(other, "").value();
            fs::copy_file(other / theirs.train.shards[0].file, shard,
                          fs::copy_options::overwrite_existing);
        } else if (attack == "manifest") {
            std::string text = readFile(folder / dataset::kManifestFileName);
            text.replace(text.find("\"internal\""), 10, "\"public\"  ");
            writeFile(folder / dataset::kManifestFileName, text);
        } else {
            QVERIFY(dataset::signManifest(folder, crypto::SigningKey::generate().value()).ok());
        }
        const auto verified = verifyOffline(folder);
        QCOMPARE(verified.code, 1);
        QVERIFY2(verified.err.find(says.toStdString()) != std::string::npos, verified.err.c_str());
        const std::string sentence = verified.err.substr(std::string("sealtrainctl: ").size());
        QVERIFY2(isOneSentence(sentence.substr(0, sentence.size() - 1)), verified.err.c_str());
        QCOMPARE(verifyOffline(original).code, 0);
    }

    // A reader asks the control plane to check a dataset: every shard decrypted there. A shard
    // whose key was re-wrapped under a KEK that is not this platform's passes the offline check
    // (the manifest's hash leaves the key block out, for rotation) and fails this one.
    void theControlPlaneDecryptsEveryShard()
    {
        const fs::path folder = import("rewrapped");
        const auto verified = site_.ctl({"dataset", "verify", "rewrapped"}, "sam");
        QVERIFY2(verified.code == 0, verified.err.c_str());
        QVERIFY(verified.out.find("tokens decrypted and authenticated") != std::string::npos);
        QCOMPARE(site_.ctl({"dataset", "verify", "rewrapped"}, "eve").code, 1);  // no grant

        const auto manifest = dataset::loadManifest(folder, "");
        QVERIFY(manifest);
        auto keyring = crypto::Keyring::unlockWithPassphrase(
            fs::path(site_.data) / "keyring.json", testing::secret(testing::kSitePassphrase));
        QVERIFY(keyring.ok());
        const crypto::Kek stranger{"datasets", 1, crypto::SecretBytes::random(32).value()};
        QVERIFY(crypto::rewrapKeyBlock(folder / manifest->train.shards[0].file, keyring->resolver(),
                                       stranger)
                    .ok());
        QCOMPARE(verifyOffline(folder).code, 0);
        const auto refused = site_.ctl({"dataset", "verify", "rewrapped"}, "sam");
        QCOMPARE(refused.code, 1);
        QVERIFY2(refused.err.find("can not be decrypted with this keyring's datasets key")
                     != std::string::npos,
                 refused.err.c_str());
        QCOMPARE(site_.ctl({"dataset", "verify", "--folder", folder.string()}, "sam").code,
                 ctl::kExitUsage);
    }

    // The import report lists where possible PII was found: only its owner may read it, and a
    // report that can not be written is said.
    void importReportIsPrivate()
    {
        const fs::path source = site_.root / "src-report" / "fortunes";
        writeFortunes(source, "the report");
        const fs::path report = site_.root / "import-report.json";
        const auto imported = site_.ctl({"dataset", "import", "--name", "reported", "--format",
                                         "fortune", "--report", report.string(), source.string()},
                                        "sam");
        QVERIFY2(imported.code == 0, imported.err.c_str());
        QCOMPARE(testing::modeOf(report), 0600U);
        QVERIFY(nlohmann::json::parse(readFile(report)).contains("issues"));

        const fs::path nowhere = site_.root / "no-such-folder" / "report.json";
        const auto failed = site_.ctl({"dataset", "import", "--name", "reported-again", "--format",
                                       "fortune", "--report", nowhere.string(), source.string()},
                                      "sam");
        QCOMPARE(failed.code, 1);
        QVERIFY2(failed.err.find("report") != std::string::npos, failed.err.c_str());
        QVERIFY(!fs::exists(nowhere.parent_path()));
    }

    void failedImportLeavesNothing()
    {
        const auto before = std::distance(fs::directory_iterator(fs::path(site_.data) / "datasets"),
                                          fs::directory_iterator());
        const fs::path source = site_.root / "bad" / "corpus.jsonl";
        writeFile(source, "{\"text\":\"fine\"}\n{\"text\":\"bad \xff byte\"}\n");
        const auto failed = site_.ctl({"dataset", "import", "--name", "bad", "--format", "jsonl",
                                       "--field", "text", "--policy", "reject", source.string()},
                                      "sam");
        QCOMPARE(failed.code, 1);
        QVERIFY2(failed.err.find(":2") != std::string::npos, failed.err.c_str());
        QCOMPARE(std::distance(fs::directory_iterator(fs::path(site_.data) / "datasets"),
                               fs::directory_iterator()),
                 before);
        QCOMPARE(site_.ctl({"dataset", "show", "bad"}, "sam").code, 1);
    }
};

QTEST_GUILESS_MAIN(TestCtlDataset)
#include "test_ctl_dataset.moc"
