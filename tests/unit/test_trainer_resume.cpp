// The real `sealtrain-train` executable on a small sealed dataset imported here: metrics as JSON
// lines, sealed signed checkpoints, and issue #7's promise that 2N steps in one go and N steps,
// SIGKILL and a resume from the checkpoint give bit-identical parameters and optimizer state.
// Also: a resume with other options is refused, `sample` verifies and generates, and --device
// picks the backend: cpu and auto train (auto on the CPU where no GPU is), and cuda without a
// GPU or without the CUDA parts stops at once with one sentence that says what to do. And the
// attacks on what a launcher authorised (issue #13): a checkpoint or dataset other than the one
// checked, an unsigned dataset without --allow-unsigned-dataset, a shard name outside the folder.
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/trainer_keys.h"
#include "sealtrain/node/gpu_probe.h"
#include "sealtrain/trainer/counter_rng.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

using namespace sealtrain;
using namespace sealtrain::trainer;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kHalf = 8;  // N: the run is 2N steps (about 50 ms each)

crypto::Kek makeKek(const std::string& id)
{
    auto kek = crypto::generateKek(id, 1);
    if (!kek)
        qFatal("cannot make a KEK");
    return std::move(kek).value();
}

struct Outcome {
    int exitCode = -1;
    bool crashed = false;
    std::vector<nlohmann::json> metrics;
    std::string err;
    std::string out;
};

}  // namespace

class TestTrainResume : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    fs::path datasetFolder_;
    std::string datasetId_;
    std::optional<crypto::Kek> datasets_;
    std::optional<crypto::Kek> checkpoints_;
    std::optional<crypto::SigningKey> signer_;
    std::optional<crypto::SecretBytes> keysText_;

    QStringList trainArguments(const fs::path& out, const QStringList& extra = {}) const
    {
        QStringList arguments{"train",
                              "--dataset",
                              QString::fromStdString(datasetFolder_.string()),
                              "--dataset-id",
                              QString::fromStdString(datasetId_),
                              "--allow-unsigned-dataset",  // imported here, not by a control plane
                              "--out",
                              QString::fromStdString(out.string()),
                              "--layers",
                              "2",
                              "--heads",
                              "2",
                              "--width",
                              "64",
                              "--context",
                              "64",
                              "--batch",
                              "8",
                              "--grad-accum",
                              "2",
                              "--steps",
                              QString::number(2 * kHalf),
                              "--checkpoint-every",
                              QString::number(kHalf),
                              "--lr",
                              "0.01",
                              "--warmup",
                              "2",
                              "--min-lr",
                              "0.001",
                              "--seed",
                              "7",
                              "--val-every",
                              QString::number(kHalf),
                              "--val-batches",
                              "2",
                              "--threads",
                              "1",
                              "--run-id",
                              "resume-test",
                              "--device",
                              "cpu",  // the CPU's bits, even where a GPU is visible
                              "--keys-fd",
                              "0"};
        return arguments + extra;
    }

    // Runs the trainer with the keys on its stdin; with `killAtCheckpoint`, SIGKILLs it as soon
    // as it reports the checkpoint of that step.
    Outcome run(const QStringList& arguments, std::uint64_t killAtCheckpoint = 0,
                const QString& program = QStringLiteral(SEALTRAIN_TRAIN_EXECUTABLE)) const
    {
        QProcess process;
        // One thread per rank, as tests/mpi does; under mpirun, Open MPI's leaks at exit are not
        // ours (the asan preset; the one-process runs are still checked for leaks).
        const bool trainer = program == QStringLiteral(SEALTRAIN_TRAIN_EXECUTABLE);
        auto environment = QProcessEnvironment::systemEnvironment();
        environment.insert("OMP_NUM_THREADS", "1");
        environment.insert("OPENBLAS_NUM_THREADS", "1");
        if (!trainer)
            environment.insert("ASAN_OPTIONS", "detect_leaks=0");
        process.setProcessEnvironment(environment);
        process.start(program, arguments);
        if (!process.waitForStarted())
            qFatal("cannot start sealtrain-train");
        // The trainer itself reads its keys on standard input; ranks under mpirun open theirs.
        if (trainer)
            process.write(reinterpret_cast<const char*>(keysText_->bytes().data()),
                          static_cast<qint64>(keysText_->size()));
        process.closeWriteChannel();
        Outcome outcome;
        QByteArray pending;
        bool killed = false;
        while (process.state() != QProcess::NotRunning) {
            process.waitForReadyRead(50);
            pending += process.readAllStandardOutput();
            qsizetype newline = 0;
            while ((newline = pending.indexOf('\n')) >= 0) {
                const QByteArray line = pending.left(newline);
                pending.remove(0, newline + 1);
                outcome.out += line.toStdString() + "\n";
                auto record = nlohmann::json::parse(line.toStdString(), nullptr, false);
                if (record.is_discarded())
                    continue;
                if (killAtCheckpoint > 0 && !killed && record.value("kind", "") == "checkpoint"
                    && record.value("step", std::uint64_t{0}) == killAtCheckpoint) {
                    process.kill();
                    killed = true;
                }
                outcome.metrics.push_back(std::move(record));
            }
        }
        process.waitForFinished();
        pending += process.readAllStandardOutput();
        outcome.out += pending.toStdString();
        outcome.err = process.readAllStandardError().toStdString();
        outcome.crashed = process.exitStatus() == QProcess::CrashExit;
        outcome.exitCode = process.exitCode();
        return outcome;
    }

    // The options that bind `sample` to the checkpoint a launcher checked.
    QStringList authorised(const CheckpointFiles& files) const
    {
        return {"--expect-checkpoint-sha256",
                QString::fromStdString(load(files).lineage.subject.sha256), "--expect-dataset-id",
                QString::fromStdString(datasetId_)};
    }

    // The training arguments of a two-step run into `out`, without checkpoints on the way.
    QStringList shortRun(const fs::path& out) const
    {
        QStringList arguments = trainArguments(out);
        arguments[arguments.indexOf("--steps") + 1] = "2";
        arguments[arguments.indexOf("--checkpoint-every") + 1] = "0";
        arguments[arguments.indexOf("--val-every") + 1] = "0";
        return arguments;
    }

    // `folder`'s dataset copied to `copy` with the manifest `edit` made, under its new id.
    std::string editedCopy(const fs::path& copy,
                           const std::function<void(dataset::Manifest&)>& edit) const
    {
        fs::copy(datasetFolder_, copy, fs::copy_options::recursive);
        std::ifstream in(copy / dataset::kManifestFileName, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
        auto manifest = dataset::parseManifest(bytes);
        if (!manifest)
            qFatal("cannot parse the manifest: %s", manifest.error().message().c_str());
        edit(*manifest);
        std::ofstream(copy / dataset::kManifestFileName, std::ios::binary | std::ios::trunc)
            << manifest->canonicalJson();
        return manifest->id();
    }

    LoadedCheckpoint load(const CheckpointFiles& files) const
    {
        const std::vector<crypto::PublicKey> trusted{signer_->publicKey()};
        const crypto::KekResolver resolver = [this](const std::string&,
                                                    std::uint32_t) -> Result<const crypto::Kek*> {
            return &*checkpoints_;
        };
        auto loaded = loadCheckpoint(files, trusted, resolver);
        if (!loaded)
            qFatal("cannot load %s: %s", files.sealed.c_str(), loaded.error().message().c_str());
        return std::move(loaded).value();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(dir_.isValid());
        // Short "fortunes" from a fixed vocabulary of words, so the data has structure to learn.
        const char* words[] = {"the",    "a",     "wise",  "fool",   "never", "always", "tomorrow",
                               "brings", "money", "luck",  "friend", "finds", "you",    "will",
                               "soon",   "learn", "that",  "time",   "waits", "for",    "no",
                               "one",    "river", "flows", "slowly", "quiet", "heart",  "speaks"};
        const CounterRng rng(11);
        const fs::path input = fs::path(dir_.path().toStdString()) / "fortunes.txt";
        {
            std::ofstream out(input);
            for (std::uint64_t record = 0; record < 500; ++record) {
                const std::uint64_t length = 6 + rng.bits(1, record) % 10;
                for (std::uint64_t w = 0; w < length; ++w)
                    out << (w == 0 ? "" : " ") << words[rng.bits(2 + record, w) % std::size(words)];
                out << ".\n\n";
            }
        }
        datasets_ = makeKek("datasets");
        checkpoints_ = makeKek(kCheckpointsKekId);
        auto signer = crypto::SigningKey::generate();
        QVERIFY(signer.ok());
        signer_.emplace(std::move(signer).value());

        dataset::ImportOptions options;
        options.inputs = {input};
        options.format = dataset::InputFormat::TextRecords;
        options.name = "fortunes";
        options.classification = "public";
        options.validationBasisPoints = 1000;
        options.tokensPerShard = 8192;
        options.outputRoot = fs::path(dir_.path().toStdString()) / "datasets";
        fs::create_directories(options.outputRoot);
        dataset::ByteTokenizer tokenizer;
        auto imported = dataset::importDataset(options, tokenizer, *datasets_);
        QVERIFY2(imported.ok(), imported.ok() ? "" : imported.error().message().c_str());
        datasetFolder_ = imported->folder;
        datasetId_ = imported->datasetId;

        const crypto::Kek* keks[] = {&*datasets_, &*checkpoints_};
        auto text = formatTrainerKeys(keks, &*signer_, {});
        QVERIFY(text.ok());
        keysText_.emplace(std::move(text).value());
    }

    void killedAndResumedEqualsUninterrupted()
    {
        const fs::path root(dir_.path().toStdString());
        const fs::path straight = root / "straight";
        const fs::path interrupted = root / "interrupted";

        const Outcome whole = run(trainArguments(straight));
        QVERIFY2(whole.exitCode == 0 && !whole.crashed, whole.err.c_str());

        // Metrics: a start line, one line per step with the documented fields, validation every
        // N steps, and a checkpoint line for each checkpoint.
        std::size_t steps = 0;
        std::size_t validations = 0;
        for (const auto& record : whole.metrics) {
            if (record["kind"] != "step")
                continue;
            ++steps;
            for (const char* field :
                 {"step", "loss", "lr", "grad_norm", "tok_per_s", "mfu", "rss_bytes"})
                QVERIFY2(record.contains(field), field);
            QVERIFY(std::isfinite(record["loss"].get<double>()));
            if (record.contains("val_loss"))
                ++validations;
        }
        QCOMPARE(steps, std::size_t{2 * kHalf});
        QCOMPARE(validations, std::size_t{2});
        QCOMPARE(whole.metrics.front()["kind"], "start");

        const Outcome killed = run(trainArguments(interrupted), kHalf);
        QVERIFY2(killed.crashed, "the trainer was not killed");
        auto left = listCheckpoints(interrupted);
        QVERIFY(left.ok());
        QVERIFY2(!left->empty() && left->back().step == kHalf,
                 "the killed run should have left exactly its step-N checkpoint as the newest");

        const Outcome resumed = run(trainArguments(interrupted, {"--resume", "latest"}));
        QVERIFY2(resumed.exitCode == 0 && !resumed.crashed, resumed.err.c_str());
        std::size_t resumedSteps = 0;
        for (const auto& record : resumed.metrics)
            resumedSteps += record["kind"] == "step" ? 1U : 0U;
        QCOMPARE(resumedSteps, std::size_t{kHalf});

        const auto a = load(checkpointFiles(straight, 2 * kHalf));
        const auto b = load(checkpointFiles(interrupted, 2 * kHalf));
        QVERIFY(a.checkpoint.parameters == b.checkpoint.parameters);
        QVERIFY(a.checkpoint.firstMoment == b.checkpoint.firstMoment);
        QVERIFY(a.checkpoint.secondMoment == b.checkpoint.secondMoment);
        QVERIFY(a.checkpoint.state.loader == b.checkpoint.state.loader);
        QCOMPARE(a.checkpoint.state.optimizerStep, 2 * kHalf);
        // Same run id, so even the plaintext files are identical byte for byte.
        QCOMPARE(a.lineage.subject.sha256, b.lineage.subject.sha256);
        // The resumed checkpoint continues the chain from the one it resumed.
        QVERIFY(b.lineage.parent == load(checkpointFiles(interrupted, kHalf)).lineage.subject);

        // The model learned something: the last loss is below the first.
        const auto firstLoss = whole.metrics[1]["loss"].get<double>();
        double lastLoss = 0;
        for (const auto& record : whole.metrics)
            if (record["kind"] == "step")
                lastLoss = record["loss"].get<double>();
        QVERIFY(lastLoss < firstLoss);
    }

    void resumeWithOtherOptionsIsRefused()
    {
        const fs::path root(dir_.path().toStdString());
        const fs::path folder = root / "straight";
        QVERIFY(fs::exists(checkpointFiles(folder, 2 * kHalf).sealed));
        auto arguments = trainArguments(folder, {"--resume", "latest"});
        arguments[arguments.indexOf("--layers") + 1] = "3";
        const Outcome refused = run(arguments);
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.find("'model.layers'") != std::string::npos, refused.err.c_str());

        const Outcome again = run(trainArguments(folder));
        QCOMPARE(again.exitCode, 1);
        QVERIFY2(again.err.find("already holds checkpoints") != std::string::npos,
                 again.err.c_str());
    }

    void dataParallelFollowsOneProcess()
    {
        // Two ranks with 4 sequences each and one process with 8 see the same global batches
        // (rank r takes every other sequence), so their losses agree up to reassociation.
        const QString mpirun = QStandardPaths::findExecutable("mpirun");
        if (mpirun.isEmpty())
            QSKIP("mpirun is not installed (openmpi-bin); scripts/setup installs it.");
        const fs::path root(dir_.path().toStdString());
        // Each rank opens the keys itself: a private file, as docs/formats/trainer-keys.md says.
        const fs::path keys = root / "rank.keys";
        {
            std::ofstream out(keys, std::ios::binary);
            out.write(reinterpret_cast<const char*>(keysText_->bytes().data()),
                      static_cast<std::streamsize>(keysText_->size()));
        }
        fs::permissions(keys, fs::perms::owner_read | fs::perms::owner_write);
        const QStringList shape{"--batch",     "4", "--steps",   "4", "--checkpoint-every", "0",
                                "--val-every", "0", "--keys-fd", "3"};
        const auto withShape = [&](QStringList arguments, const QString& batch) {
            for (int i = 0; i < shape.size(); i += 2)
                arguments[arguments.indexOf(shape[i]) + 1] = shape[i + 1];
            arguments[arguments.indexOf("--batch") + 1] = batch;
            return arguments;
        };
        QStringList mpiArguments{"-np", "2", "--oversubscribe"};
        if (::getuid() == 0)
            mpiArguments << "--allow-run-as-root";
        for (const char* variable : {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "ASAN_OPTIONS"})
            mpiArguments << "-x" << variable;
        mpiArguments << "sh"
                     << "-c"
                     << QString::fromStdString("exec \"$0\" \"$@\" 3<'" + keys.string() + "'")
                     << QStringLiteral(SEALTRAIN_TRAIN_EXECUTABLE)
                     << withShape(trainArguments(root / "ranks"), "4");
        const Outcome ranks = run(mpiArguments, 0, mpirun);
        QVERIFY2(ranks.exitCode == 0 && !ranks.crashed, (ranks.err + ranks.out).c_str());
        QCOMPARE(ranks.metrics.front()["collective"], "mpi");
        QCOMPARE(ranks.metrics.front()["world_size"], 2);

        QStringList single = withShape(trainArguments(root / "single"), "8");
        single[single.indexOf("--keys-fd") + 1] = "0";
        const Outcome one = run(single);
        QVERIFY2(one.exitCode == 0, one.err.c_str());
        std::vector<double> rankLosses;
        std::vector<double> oneLosses;
        for (const auto& record : ranks.metrics)
            if (record["kind"] == "step")
                rankLosses.push_back(record["loss"].get<double>());
        for (const auto& record : one.metrics)
            if (record["kind"] == "step")
                oneLosses.push_back(record["loss"].get<double>());
        QCOMPARE(rankLosses.size(), std::size_t{4});
        QCOMPARE(oneLosses.size(), rankLosses.size());
        for (std::size_t i = 0; i < oneLosses.size(); ++i)
            QVERIFY2(std::abs(rankLosses[i] - oneLosses[i]) <= 1e-5 * std::abs(oneLosses[i]),
                     qPrintable(QString("step %1: %2 vs %3")
                                    .arg(i + 1)
                                    .arg(rankLosses[i], 0, 'g', 10)
                                    .arg(oneLosses[i], 0, 'g', 10)));
        // Rank 0 wrote the final checkpoint, signed and sealed like any other.
        (void)load(checkpointFiles(root / "ranks", 4));
    }

    void deviceChoosesTheBackend()
    {
        const fs::path root(dir_.path().toStdString());
        const bool gpuHere = SEALTRAIN_CUDA_BUILT != 0 && !node::probeGpu().devices.empty();
        const auto onDevice = [&](const fs::path& out, const QString& device) {
            QStringList arguments = shortRun(out);
            arguments[arguments.indexOf("--device") + 1] = device;
            return run(arguments);
        };
        const Outcome onCpu = onDevice(root / "device-cpu", "cpu");
        QVERIFY2(onCpu.exitCode == 0 && !onCpu.crashed, onCpu.err.c_str());
        QCOMPARE(onCpu.metrics.front()["device"], "cpu");
        const Outcome automatic = onDevice(root / "device-auto", "auto");
        QVERIFY2(automatic.exitCode == 0 && !automatic.crashed, automatic.err.c_str());
        QCOMPARE(automatic.metrics.front()["device"], gpuHere ? "cuda" : "cpu");
        if (!gpuHere) {
            // auto fell back to the CPU: the very same run, bit for bit.
            const auto a = load(checkpointFiles(root / "device-cpu", 2));
            const auto b = load(checkpointFiles(root / "device-auto", 2));
            QVERIFY(a.checkpoint.parameters == b.checkpoint.parameters);
            QVERIFY(a.checkpoint.secondMoment == b.checkpoint.secondMoment);
        }

        const Outcome onGpu = onDevice(root / "device-cuda", "cuda");
        if (gpuHere) {
            QVERIFY2(onGpu.exitCode == 0 && !onGpu.crashed, onGpu.err.c_str());
            QCOMPARE(onGpu.metrics.front()["device"], "cuda");
        } else {
            QCOMPARE(onGpu.exitCode, 1);
            QVERIFY(onGpu.metrics.empty());
            QVERIFY(!fs::exists(root / "device-cuda") || fs::is_empty(root / "device-cuda"));
            // One line: the program's name and one sentence saying what to do.
            const std::string prefix = "sealtrain-train: ";
            QVERIFY2(onGpu.err.starts_with(prefix) && onGpu.err.back() == '\n'
                         && onGpu.err.find('\n') == onGpu.err.size() - 1,
                     onGpu.err.c_str());
            const std::string sentence =
                onGpu.err.substr(prefix.size(), onGpu.err.size() - prefix.size() - 1);
            QVERIFY2(isOneSentence(sentence), sentence.c_str());
            QVERIFY2(sentence.find("--device cpu") != std::string::npos, sentence.c_str());
            QVERIFY2(sentence.find(SEALTRAIN_CUDA_BUILT != 0 ? "No CUDA GPU is visible"
                                                             : "built without the CUDA parts")
                         != std::string::npos,
                     sentence.c_str());
            const auto files = checkpointFiles(root / "device-cpu", 2);
            const Outcome sampled = run(
                QStringList{"sample", "--checkpoint", QString::fromStdString(files.sealed.string()),
                            "--keys-fd", "0", "--length", "4", "--device", "cuda"}
                + authorised(files));
            QCOMPARE(sampled.exitCode, 1);
            QVERIFY(sampled.out.empty());
            QVERIFY2(sampled.err.find("--device cpu") != std::string::npos, sampled.err.c_str());
        }

        const Outcome unknown = onDevice(root / "device-unknown", "gpu");
        QCOMPARE(unknown.exitCode, 2);
    }

    void sampleVerifiesAndGenerates()
    {
        const fs::path root(dir_.path().toStdString());
        const auto files = checkpointFiles(root / "straight", 2 * kHalf);
        const QStringList unbound{"sample",
                                  "--checkpoint",
                                  QString::fromStdString(files.sealed.string()),
                                  "--keys-fd",
                                  "0",
                                  "--prompt",
                                  "the wise",
                                  "--length",
                                  "40",
                                  "--seed",
                                  "3",
                                  "--top-k",
                                  "8",
                                  "--temperature",
                                  "0.8"};
        // Only the checkpoint a launcher checked: without its digest and dataset, nothing runs.
        const Outcome refusedUnbound = run(unbound);
        QCOMPARE(refusedUnbound.exitCode, 2);
        QVERIFY(refusedUnbound.out.empty());
        QVERIFY2(refusedUnbound.err.find("--expect-checkpoint-sha256") != std::string::npos,
                 refusedUnbound.err.c_str());
        const QStringList arguments = unbound + authorised(files);
        const Outcome first = run(arguments);
        QVERIFY2(first.exitCode == 0, first.err.c_str());
        QVERIFY(first.out.starts_with("the wise"));
        QVERIFY(first.out.size() > std::string("the wise").size());
        const Outcome second = run(arguments);
        QCOMPARE(second.out, first.out);  // a seed gives the same text

        // A tampered checkpoint is refused before any text is generated.
        const fs::path copy = root / "tampered";
        fs::create_directories(copy);
        const auto tampered = checkpointFiles(copy, 2 * kHalf);
        fs::copy_file(files.sealed, tampered.sealed);
        fs::copy_file(files.envelope, tampered.envelope);
        {
            std::fstream file(tampered.sealed, std::ios::in | std::ios::out | std::ios::binary);
            file.seekg(-200, std::ios::end);
            char byte = 0;
            file.read(&byte, 1);
            file.seekp(-200, std::ios::end);
            byte = static_cast<char>(byte ^ 0x20);
            file.write(&byte, 1);
        }
        QStringList tamperedArguments = arguments;
        tamperedArguments[2] = QString::fromStdString(tampered.sealed.string());
        const Outcome refused = run(tamperedArguments);
        QCOMPARE(refused.exitCode, 1);
        QVERIFY(refused.out.empty());
    }

    // Time of check, time of use: the trainer gets the digest and dataset the launcher
    // authorised, and a checkpoint swapped in at that path meanwhile is refused, even one
    // signed by the same key (here another step of the same run).
    void sampleRefusesWhatWasNotAuthorised()
    {
        const fs::path root(dir_.path().toStdString());
        const auto checked = checkpointFiles(root / "straight", 2 * kHalf);
        const auto swapped = checkpointFiles(root / "straight", kHalf);
        const QStringList sample{"sample",
                                 "--checkpoint",
                                 QString::fromStdString(swapped.sealed.string()),
                                 "--keys-fd",
                                 "0",
                                 "--length",
                                 "4"};
        const Outcome otherCheckpoint = run(sample + authorised(checked));
        QCOMPARE(otherCheckpoint.exitCode, 1);
        QVERIFY(otherCheckpoint.out.empty());
        QVERIFY2(otherCheckpoint.err.find("was replaced after the check") != std::string::npos,
                 otherCheckpoint.err.c_str());

        QStringList otherDataset = sample + authorised(swapped);
        otherDataset.last() = QString::fromStdString("sha256:" + std::string(64, 'a'));
        const Outcome refused = run(otherDataset);
        QCOMPARE(refused.exitCode, 1);
        QVERIFY(refused.out.empty());
        QVERIFY2(refused.err.find("whose release was authorised") != std::string::npos,
                 refused.err.c_str());
    }

    // The dataset id the launcher authorised binds the folder's content: another dataset's
    // folder under that id is refused before any key is used on it.
    void trainRefusesAnotherDatasetUnderTheAuthorisedId()
    {
        const fs::path root(dir_.path().toStdString());
        const std::string otherId = editedCopy(
            root / "other-dataset", [](dataset::Manifest& m) { m.classification = "restricted"; });
        QVERIFY(otherId != datasetId_);
        QStringList arguments = shortRun(root / "other-dataset-run");
        arguments[arguments.indexOf("--dataset") + 1] =
            QString::fromStdString((root / "other-dataset").string());
        const Outcome refused = run(arguments);
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.find("does not hash to the dataset id " + datasetId_)
                     != std::string::npos,
                 refused.err.c_str());
        QVERIFY(!fs::exists(root / "other-dataset-run"));
    }

    // Outside tests the manifest's signature is checked: without --dataset-signer the run is
    // refused unless --allow-unsigned-dataset says it is a test; with it, only the signer's
    // manifest is accepted; the two together are a usage error.
    void unsignedDatasetNeedsTheTestFlag()
    {
        const fs::path root(dir_.path().toStdString());
        QStringList unsignedRun = shortRun(root / "unsigned");
        unsignedRun.removeAll("--allow-unsigned-dataset");
        const Outcome refused = run(unsignedRun);
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.find("without --dataset-signer") != std::string::npos,
                 refused.err.c_str());
        QVERIFY(!fs::exists(root / "unsigned"));

        // An unchanged copy keeps the dataset's id; signing it adds manifest.sig.
        QCOMPARE(editedCopy(root / "signed-dataset", [](dataset::Manifest&) {}), datasetId_);
        QVERIFY(dataset::signManifest(root / "signed-dataset", *signer_).ok());
        const fs::path signerPem = root / "signer.pub.pem";
        std::ofstream(signerPem) << signer_->publicKey().toPem();
        const fs::path strangerPem = root / "stranger.pub.pem";
        std::ofstream(strangerPem) << crypto::SigningKey::generate()->publicKey().toPem();
        const auto signedRun = [&](const fs::path& out, const fs::path& pem) {
            QStringList arguments = unsignedRun;
            arguments[arguments.indexOf("--dataset") + 1] =
                QString::fromStdString((root / "signed-dataset").string());
            arguments[arguments.indexOf("--out") + 1] = QString::fromStdString(out.string());
            return arguments
                   + QStringList{"--dataset-signer", QString::fromStdString(pem.string())};
        };
        const Outcome trained = run(signedRun(root / "signed", signerPem));
        QVERIFY2(trained.exitCode == 0, trained.err.c_str());
        const Outcome stranger = run(signedRun(root / "stranger", strangerPem));
        QCOMPARE(stranger.exitCode, 1);
        QVERIFY2(stranger.err.find("is not signed by the platform key") != std::string::npos,
                 stranger.err.c_str());
        const Outcome both = run(signedRun(root / "both", signerPem) << "--allow-unsigned-dataset");
        QCOMPARE(both.exitCode, 2);
    }

    // A manifest whose shard name leaves the dataset's folder is refused, though a valid copy
    // of the shard waits where the name points.
    void strayShardNameIsRefused()
    {
        const fs::path root(dir_.path().toStdString());
        const fs::path folder = root / "stray" / "dataset";
        fs::create_directories(folder.parent_path());
        const std::string strayId =
            editedCopy(folder, [](dataset::Manifest& m) { m.train.shards[0].file = "../x"; });
        fs::copy_file(datasetFolder_ / "train-00000.sealed", root / "stray" / "x");
        QStringList arguments = shortRun(root / "stray-run");
        arguments[arguments.indexOf("--dataset") + 1] = QString::fromStdString(folder.string());
        arguments[arguments.indexOf("--dataset-id") + 1] = QString::fromStdString(strayId);
        const Outcome refused = run(arguments);
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.find("names the shard '../x', which is not a plain file name")
                     != std::string::npos,
                 refused.err.c_str());
    }
};

QTEST_APPLESS_MAIN(TestTrainResume)
#include "test_trainer_resume.moc"
