// sealtrainctl dataset import|list|show|verify|grant|revoke on a real data directory: a data
// steward imports fortune files (links and strfile indexes skipped), an engineer reads only with
// a grant, and `dataset verify` refuses a corrupt shard, a shard from another dataset, a manifest
// edit, a wrong key and a signature by another key, each with one clear sentence and exit 1.
// A failed import leaves no dataset behind.
#include "ctl_data_dir.h"

#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/dataset/manifest.h"

#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using sealtrain::testing::readText;
using sealtrain::testing::runCtl;
using sealtrain::testing::writeFile;
using namespace sealtrain;
namespace fs = std::filesystem;

namespace {

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
    testing::CtlDataDir site_;

    // Imports fortunes as `name` and returns the dataset's folder.
    fs::path import(const std::string& name)
    {
        const fs::path source = site_.root / ("src-" + name) / "fortunes";
        writeFortunes(source, name);
        const auto done = runCtl(site_.as(
            "sam", {"dataset", "import", "--name", name, "--format", "fortune", source.string()}));
        if (done.code != 0)
            qFatal("import failed: %s", done.err.c_str());
        const auto at = done.out.find("sha256:");
        return fs::path(site_.data) / "datasets" / done.out.substr(at + 7, 64);
    }

private slots:
    void initTestCase()
    {
        site_.init();
        site_.addUser("sam", "steward");
        site_.addUser("eve", "engineer");
    }

    void importListShowVerify()
    {
        const fs::path source = site_.root / "quickstart" / "fortunes";
        writeFortunes(source, "the quickstart");
        const auto imported =
            runCtl(site_.as("sam", {"dataset", "import", "--name", "fortunes", "--format",
                                    "fortune", "--classification", "public", source.string()}));
        QVERIFY2(imported.code == 0, imported.err.c_str());
        QVERIFY2(imported.out.find("Imported 'fortunes' version 1: sha256:") == 0,
                 imported.out.c_str());
        // Not a terminal: plain progress lines, then the report's summary with places only.
        QVERIFY2(imported.err.find("import: 100% ") != std::string::npos, imported.err.c_str());
        QVERIFY(imported.err.find('\r') == std::string::npos);
        QVERIFY(imported.err.find("kept 3, 0 duplicates, 0 skipped") != std::string::npos);
        QVERIFY(imported.err.find("1 email (first at fortunes/wisdom:7)") != std::string::npos);
        QVERIFY(imported.err.find("root@example.org") == std::string::npos);

        const auto list = runCtl(site_.as("sam", {"dataset", "list", "--json"}));
        QCOMPARE(list.code, 0);
        const auto datasets = nlohmann::json::parse(list.out);
        QCOMPARE(datasets.size(), std::size_t{1});
        QCOMPARE(datasets[0]["name"].get<std::string>(), std::string("fortunes"));
        QCOMPARE(datasets[0]["classification"].get<std::string>(), std::string("public"));

        const auto show = runCtl(site_.as("sam", {"dataset", "show", "fortunes", "--json"}));
        QCOMPARE(show.code, 0);
        const auto info = nlohmann::json::parse(show.out);
        QCOMPARE(info["input_format"].get<std::string>(), std::string("fortune"));
        QCOMPARE(info["sources"].get<int>(), 1);  // the .dat index and the .u8 link are skipped
        QCOMPARE(info["readers"], nlohmann::json::array({"sam"}));

        const auto verified = runCtl(site_.as("sam", {"dataset", "verify", "fortunes"}));
        QVERIFY2(verified.code == 0, verified.err.c_str());
        QVERIFY(verified.out.find("tokens decrypted and authenticated") != std::string::npos);

        // Offline, with only the public key: signature and shard hashes.
        const auto offline =
            runCtl({"dataset", "verify", "--folder", info["folder"].get<std::string>(), "--key",
                    (fs::path(site_.data) / "manifests.pub.pem").string()});
        QVERIFY2(offline.code == 0, offline.err.c_str());
        QVERIFY(offline.out.find("Dataset OK") == 0);
        // Manifests have a key of their own: the audit log's does not vouch for them.
        const auto auditKey =
            runCtl({"dataset", "verify", "--folder", info["folder"].get<std::string>(), "--key",
                    (fs::path(site_.data) / "signing.pub.pem").string()});
        QVERIFY2(auditKey.code != 0, auditKey.out.c_str());
    }

    void readingNeedsAGrant()
    {
        import("shared");
        const auto refused = runCtl(site_.as("eve", {"dataset", "verify", "shared"}));
        QCOMPARE(refused.code, 1);
        QVERIFY2(refused.err.find("holds no read grant on 'shared' version 1") != std::string::npos,
                 refused.err.c_str());
        QCOMPARE(nlohmann::json::parse(runCtl(site_.as("eve", {"dataset", "list", "--json"})).out)
                     .size(),
                 std::size_t{0});
        const auto selfGrant = runCtl(site_.as("eve", {"dataset", "grant", "shared", "eve"}));
        QCOMPARE(selfGrant.code, 1);
        QVERIFY(selfGrant.err.find("lacks the permission 'dataset.grant'") != std::string::npos);
        const auto steward = runCtl(site_.as(
            "eve", {"dataset", "import", "--name", "mine", (site_.root / "src-shared").string()}));
        QCOMPARE(steward.code, 1);
        QVERIFY(steward.err.find("lacks the permission 'dataset.import'") != std::string::npos);

        QCOMPARE(runCtl(site_.as("sam", {"dataset", "grant", "shared", "eve"})).code, 0);
        const auto allowed = runCtl(site_.as("eve", {"dataset", "verify", "shared@1"}));
        QVERIFY2(allowed.code == 0, allowed.err.c_str());
        QCOMPARE(runCtl(site_.as("sam", {"dataset", "revoke", "shared", "eve"})).code, 0);
        QCOMPARE(runCtl(site_.as("eve", {"dataset", "verify", "shared"})).code, 1);
    }

    void verifyRefusesTampering_data()
    {
        QTest::addColumn<QString>("attack");
        QTest::addColumn<QString>("says");
        QTest::newRow("corrupt shard") << "corrupt"
                                       << "restore the dataset from a trusted copy";
        QTest::newRow("shard from another dataset") << "swap"
                                                    << "belongs to another dataset";
        QTest::newRow("manifest edit") << "manifest"
                                       << "does not hash to the dataset id";
        QTest::newRow("wrong key") << "key"
                                   << "can not be decrypted with this keyring's datasets key";
        QTest::newRow("signature by another key") << "signature"
                                                  << "is not signed by the "
                                                     "platform key";
    }

    void verifyRefusesTampering()
    {
        QFETCH(QString, attack);
        QFETCH(QString, says);
        const std::string name = "tamper-" + attack.toStdString();
        const fs::path folder = import(name);
        const fs::path other = import(name + "-other");
        const auto manifest = dataset::loadManifest(folder, "").value();
        const fs::path shard = folder / manifest.train.shards[0].file;
        if (attack == "corrupt") {
            std::fstream file(shard, std::ios::in | std::ios::out | std::ios::binary);
            file.seekp(std::streamoff(fs::file_size(shard) - 20));
            file.put('\x5a');
        } else if (attack == "swap") {
            const auto theirs = dataset::loadManifest(other, "").value();
            fs::copy_file(other / theirs.train.shards[0].file, shard,
                          fs::copy_options::overwrite_existing);
        } else if (attack == "manifest") {
            std::string text = readText(folder / dataset::kManifestFileName);
            text.replace(text.find("\"internal\""), 10, "\"public\"  ");
            writeFile(folder / dataset::kManifestFileName, text);
        } else if (attack == "key") {
            // The shard's DEK re-wrapped under a datasets KEK that is not this platform's.
            auto keyring =
                crypto::Keyring::unlockWithMasterKey(fs::path(site_.data) / "keyring.json",
                                                     crypto::readKekFile(site_.masterKey).value());
            QVERIFY(keyring.ok());
            const crypto::Kek stranger{"datasets", 1, crypto::SecretBytes::random(32).value()};
            QVERIFY(crypto::rewrapKeyBlock(shard, keyring->resolver(), stranger).ok());
        } else {
            QVERIFY(dataset::signManifest(folder, crypto::SigningKey::generate().value()).ok());
        }
        const auto verified = runCtl(site_.as("sam", {"dataset", "verify", name}));
        QCOMPARE(verified.code, 1);
        QVERIFY2(verified.err.find(says.toStdString()) != std::string::npos, verified.err.c_str());
        const std::string sentence = verified.err.substr(std::string("sealtrainctl: ").size());
        QVERIFY2(isOneSentence(sentence.substr(0, sentence.size() - 1)), verified.err.c_str());
    }

    // The import report lists where possible PII was found: only its owner may read it, and a
    // report that can not be written leaves no partial file behind.
    void importReportIsPrivate()
    {
        const fs::path source = site_.root / "src-report" / "fortunes";
        writeFortunes(source, "the report");
        const fs::path report = site_.root / "import-report.json";
        const auto imported =
            runCtl(site_.as("sam", {"dataset", "import", "--name", "reported", "--format",
                                    "fortune", "--report", report.string(), source.string()}));
        QVERIFY2(imported.code == 0, imported.err.c_str());
        QCOMPARE(fs::status(report).permissions() & fs::perms::all,
                 fs::perms::owner_read | fs::perms::owner_write);
        QVERIFY(nlohmann::json::parse(readText(report)).contains("issues"));

        const fs::path nowhere = site_.root / "no-such-folder" / "report.json";
        const auto failed =
            runCtl(site_.as("sam", {"dataset", "import", "--name", "reported-again", "--format",
                                    "fortune", "--report", nowhere.string(), source.string()}));
        QCOMPARE(failed.code, 1);
        QVERIFY2(failed.err.find("the report could not be written") != std::string::npos,
                 failed.err.c_str());
        QVERIFY(!fs::exists(nowhere.parent_path()));
    }

    void failedImportLeavesNothing()
    {
        const auto before = std::distance(fs::directory_iterator(fs::path(site_.data) / "datasets"),
                                          fs::directory_iterator());
        const fs::path source = site_.root / "bad" / "corpus.jsonl";
        writeFile(source, "{\"text\":\"fine\"}\n{\"text\":\"bad \xff byte\"}\n");
        const auto failed =
            runCtl(site_.as("sam", {"dataset", "import", "--name", "bad", "--format", "jsonl",
                                    "--field", "text", "--policy", "reject", source.string()}));
        QCOMPARE(failed.code, 1);
        QVERIFY2(failed.err.find("corpus.jsonl:2") != std::string::npos, failed.err.c_str());
        QCOMPARE(std::distance(fs::directory_iterator(fs::path(site_.data) / "datasets"),
                               fs::directory_iterator()),
                 before);
        QCOMPARE(runCtl(site_.as("sam", {"dataset", "show", "bad"})).code, 1);
    }
};

QTEST_APPLESS_MAIN(TestCtlDataset)
#include "test_ctl_dataset.moc"
