// `sealtrainctl checkpoint verify`: a reviewer checks a checkpoint's signed lineage with only a
// public key, and its content with the checkpoints KEK; a stranger's key, an edited file or a
// wrong KEK fail with exit code 1.
#include "ctl_runner.h"

#include "sealtrain/crypto/key_file.h"
#include "sealtrain/formats/checkpoint.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>

using namespace sealtrain;
using namespace sealtrain::trainer;
using sealtrain::testing::runCtl;
namespace fs = std::filesystem;

namespace {

void writeText(const fs::path& path, const std::string& text)
{
    std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

class TestCtlCheckpoint : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    fs::path root_;
    CheckpointFiles files_;

private slots:
    void initTestCase()
    {
        QVERIFY(dir_.isValid());
        root_ = dir_.path().toStdString();
        auto kek = crypto::generateKek(kCheckpointsKekId, 1);
        auto signer = crypto::SigningKey::generate();
        auto stranger = crypto::SigningKey::generate();
        auto otherKek = crypto::generateKek(kCheckpointsKekId, 1);
        QVERIFY(kek.ok() && signer.ok() && stranger.ok() && otherKek.ok());
        QVERIFY(crypto::writeKekFile(root_ / "checkpoints.key", *kek).ok());
        QVERIFY(crypto::writeKekFile(root_ / "other.key", *otherKek).ok());
        writeText(root_ / "signer.pub.pem", signer->publicKey().toPem());
        writeText(root_ / "stranger.pub.pem", stranger->publicKey().toPem());

        CheckpointState state;
        state.config.model = {11, 16, 8, 1, 2, 8};
        state.config.batch = 2;
        state.step = 3;
        state.optimizerStep = 3;
        state.runId = "run-1";
        state.datasetId = "sha256:" + std::string(64, 'd');
        state.tokenizer = "byte";
        const std::vector<float> zeros(ParameterLayout(state.config.model).totalSize(), 0.5F);
        auto written = writeCheckpoint(root_ / "run", state, {zeros, zeros, zeros}, std::nullopt,
                                       *kek, *signer, 0);
        QVERIFY2(written.ok(), written.ok() ? "" : written.error().message().c_str());
        files_ = written->files;
    }

    void verifiesTheSignatureOffline()
    {
        const auto outcome = runCtl({"checkpoint", "verify", files_.sealed.string(), "--key",
                                     (root_ / "signer.pub.pem").string()});
        QCOMPARE(outcome.code, 0);
        QVERIFY(outcome.out.find("step: 3") != std::string::npos);
        QVERIFY(outcome.out.find("run: run-1") != std::string::npos);
        QVERIFY(outcome.out.find("verdict: verified (signature)") != std::string::npos);
    }

    void verifiesTheContentWithTheKek()
    {
        const auto outcome = runCtl({"checkpoint", "verify", files_.sealed.string(), "--key",
                                     (root_ / "signer.pub.pem").string(), "--key-file",
                                     (root_ / "checkpoints.key").string()});
        QCOMPARE(outcome.code, 0);
        QVERIFY(outcome.out.find("content: decrypted, SHA-256 matches") != std::string::npos);
    }

    void refusesAStrangersKeyAndAWrongKek()
    {
        auto outcome = runCtl({"checkpoint", "verify", files_.sealed.string(), "--key",
                               (root_ / "stranger.pub.pem").string()});
        QCOMPARE(outcome.code, 1);
        QVERIFY(outcome.out.find("NOT VERIFIED") != std::string::npos);
        QVERIFY(outcome.err.find("not signed by a trusted key") != std::string::npos);

        outcome = runCtl({"checkpoint", "verify", files_.sealed.string(), "--key",
                          (root_ / "signer.pub.pem").string(), "--key-file",
                          (root_ / "other.key").string()});
        QCOMPARE(outcome.code, 1);
        QVERIFY(outcome.out.find("NOT VERIFIED") != std::string::npos);
    }

    void refusesAnEditedFile()
    {
        const fs::path copy = root_ / "edited";
        fs::create_directories(copy);
        const auto edited = checkpointFiles(copy, files_.step);
        fs::copy_file(files_.sealed, edited.sealed);
        fs::copy_file(files_.envelope, edited.envelope);
        {
            std::fstream file(edited.sealed, std::ios::in | std::ios::out | std::ios::binary);
            file.seekg(-40, std::ios::end);
            const auto byte = static_cast<char>(file.get() ^ 0x5a);
            file.seekp(-40, std::ios::end);
            file.put(byte);
        }
        const auto outcome = runCtl({"checkpoint", "verify", edited.sealed.string(), "--key",
                                     (root_ / "signer.pub.pem").string(), "--key-file",
                                     (root_ / "checkpoints.key").string()});
        QCOMPARE(outcome.code, 1);
    }
};

QTEST_APPLESS_MAIN(TestCtlCheckpoint)
#include "test_ctl_checkpoint.moc"
