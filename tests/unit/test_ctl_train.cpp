// sealtrainctl train on a real data directory: the dataset's read key is released only to a
// caller with a read grant (the refusal is a clear sentence, and no trainer runs), the trainer
// gets its keys on a pipe and its metrics are relayed, and the checkpoint it writes verifies
// under the platform's public key; sampling from it needs the same read grant, and a checkpoint
// swapped in after that check is refused by the trainer. Options the launcher sets itself are
// refused.
#include "ctl_data_dir.h"

#include "sealtrain/trainer/checkpoint.h"

#include <QtTest/QtTest>

#include <filesystem>

using sealtrain::testing::runCtl;
using sealtrain::testing::writeFile;
using namespace sealtrain;
namespace fs = std::filesystem;

class TestCtlTrain final : public QObject {
    Q_OBJECT

private:
    testing::CtlDataDir site_;

    std::vector<std::string> trainArguments(const fs::path& out,
                                            const std::string& dataset = "fortunes") const
    {
        return site_.as(
            "eve", {"train",   "--dataset",  dataset,    "--trainer", SEALTRAIN_TRAIN_EXECUTABLE,
                    "--out",   out.string(), "--layers", "1",         "--heads",
                    "2",       "--width",    "16",       "--context", "16",
                    "--batch", "2",          "--steps",  "3",         "--threads",
                    "1"},
            1);
    }

private slots:
    void initTestCase()
    {
        site_.init();
        site_.addUser("sam", "steward");
        site_.addUser("eve", "engineer");

        std::string fortunes;
        for (int i = 0; i < 60; ++i)
            fortunes += "Fortune number " + std::to_string(i) + " smiles on the patient.\n%\n";
        writeFile(site_.root / "src" / "fortunes" / "wisdom", fortunes);
        const auto imported =
            runCtl(site_.as("sam", {"dataset", "import", "--name", "fortunes", "--format",
                                    "fortune", (site_.root / "src" / "fortunes").string()}));
        QVERIFY2(imported.code == 0, imported.err.c_str());
    }

    void refusedWithoutAReadGrant()
    {
        const fs::path out = site_.root / "refused";
        const auto refused = runCtl(trainArguments(out));
        QCOMPARE(refused.code, 1);
        QVERIFY2(refused.err.find("holds no read grant") != std::string::npos, refused.err.c_str());
        QVERIFY(!fs::exists(out));
    }

    void trainsWithAGrantAndTheCheckpointVerifies()
    {
        QCOMPARE(runCtl(site_.as("sam", {"dataset", "grant", "fortunes", "eve"})).code, 0);
        const fs::path out = site_.root / "run";
        const auto trained = runCtl(trainArguments(out));
        QVERIFY2(trained.code == 0, trained.err.c_str());
        QVERIFY2(trained.out.find("\"kind\":\"checkpoint\"") != std::string::npos,
                 trained.out.c_str());
        const auto files = trainer::checkpointFiles(out, 3);
        QVERIFY(fs::exists(files.sealed));
        const auto verified = runCtl({"checkpoint", "verify", files.sealed.string(), "--key",
                                      (fs::path(site_.data) / "checkpoints.pub.pem").string()});
        QVERIFY2(verified.code == 0, verified.err.c_str());
        // The trainer signs with the checkpoints key alone, never the audit log's or the
        // manifests' (it could then forge an audit head or a dataset).
        for (const char* other : {"signing.pub.pem", "manifests.pub.pem"}) {
            const auto refused = runCtl({"checkpoint", "verify", files.sealed.string(), "--key",
                                         (fs::path(site_.data) / other).string()});
            QVERIFY2(refused.code != 0, other);
        }
    }

    // Sampling needs the same release as reading the checkpoint's dataset: it works for a
    // reader, gives the same text for a seed, and stops once the grant is revoked.
    void samplesOnlyForReadersOfTheDataset()
    {
        const auto checkpoint = trainer::checkpointFiles(site_.root / "run", 3).sealed.string();
        const auto sampleArguments =
            site_.as("eve",
                     {"sample", "--checkpoint", checkpoint, "--trainer", SEALTRAIN_TRAIN_EXECUTABLE,
                      "--prompt", "Fortune", "--length", "24", "--seed", "3"},
                     1);
        const auto first = runCtl(sampleArguments);
        QVERIFY2(first.code == 0, first.err.c_str());
        QVERIFY2(first.out.rfind("Fortune", 0) == 0, first.out.c_str());
        QVERIFY2(first.out.size() > std::string("Fortune").size(), first.out.c_str());
        const auto second = runCtl(sampleArguments);
        QCOMPARE(second.out, first.out);

        QCOMPARE(runCtl(site_.as("sam", {"dataset", "revoke", "fortunes", "eve"})).code, 0);
        const auto refused = runCtl(sampleArguments);
        QCOMPARE(refused.code, 1);
        QVERIFY2(refused.err.find("holds no read grant") != std::string::npos, refused.err.c_str());
        QVERIFY(refused.out.empty());
    }

    // Time of check, time of use: a "trainer" that swaps the checked checkpoint for another one
    // signed by the platform, trained on a dataset eve may no longer read, and then starts the
    // real trainer. The launcher hands over the digest and dataset it authorised, so the swapped
    // file is refused and nothing is generated from it.
    void sampleRefusesACheckpointSwappedAfterTheCheck()
    {
        QCOMPARE(runCtl(site_.as("sam", {"dataset", "grant", "fortunes", "eve"})).code, 0);
        std::string ledger;
        for (int i = 0; i < 60; ++i)
            ledger += "Ledger line " + std::to_string(i) + " balances the secret account.\n%\n";
        writeFile(site_.root / "src" / "ledger" / "book", ledger);
        const auto imported =
            runCtl(site_.as("sam", {"dataset", "import", "--name", "ledger", "--format", "fortune",
                                    (site_.root / "src" / "ledger").string()}));
        QVERIFY2(imported.code == 0, imported.err.c_str());
        QCOMPARE(runCtl(site_.as("sam", {"dataset", "grant", "ledger", "eve"})).code, 0);
        const auto trained = runCtl(trainArguments(site_.root / "ledger-run", "ledger"));
        QVERIFY2(trained.code == 0, trained.err.c_str());
        QCOMPARE(runCtl(site_.as("sam", {"dataset", "revoke", "ledger", "eve"})).code, 0);

        const auto checked = trainer::checkpointFiles(site_.root / "swap", 3);
        const auto other = trainer::checkpointFiles(site_.root / "ledger-run", 3);
        const auto original = trainer::checkpointFiles(site_.root / "run", 3);
        fs::create_directories(site_.root / "swap");
        fs::copy_file(original.sealed, checked.sealed);
        fs::copy_file(original.envelope, checked.envelope);
        // The trainer's standard error is the launcher's own; the script keeps it in a file.
        const fs::path swapping = site_.root / "swapping-trainer";
        const fs::path trainerErr = site_.root / "swapping-trainer.err";
        writeFile(swapping, "#!/bin/sh\ncp '" + other.sealed.string() + "' '"
                                + checked.sealed.string() + "'\ncp '" + other.envelope.string()
                                + "' '" + checked.envelope.string() + "'\nexec '"
                                + SEALTRAIN_TRAIN_EXECUTABLE + "' \"$@\" 2>'" + trainerErr.string()
                                + "'\n");
        fs::permissions(swapping, fs::perms::owner_all);

        const auto refused = runCtl(site_.as("eve",
                                             {"sample", "--checkpoint", checked.sealed.string(),
                                              "--trainer", swapping.string(), "--length", "8"},
                                             1));
        QCOMPARE(refused.code, 1);
        QVERIFY2(refused.out.empty(), refused.out.c_str());
        const std::string message = testing::readText(trainerErr);
        QVERIFY2(message.find("was replaced after the check") != std::string::npos,
                 message.c_str());
    }

    void launcherOptionsAreReserved()
    {
        auto arguments = trainArguments(site_.root / "reserved");
        arguments.insert(arguments.end(), {"--keys-fd", "0"});
        const auto refused = runCtl(arguments);
        QCOMPARE(refused.code, 2);
        QVERIFY2(refused.err.find("--keys-fd is set by 'sealtrainctl train' itself")
                     != std::string::npos,
                 refused.err.c_str());
    }
};

QTEST_APPLESS_MAIN(TestCtlTrain)
#include "test_ctl_train.moc"
