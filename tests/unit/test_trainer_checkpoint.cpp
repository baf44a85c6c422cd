// Sealed, signed checkpoints and the trainer's key handoff: what a checkpoint holds survives the
// round trip bit for bit, old checkpoints are pruned to K, and loading refuses every attack the
// format is meant to stop (tampering, truncation, a stranger's signature, a wrong key, a wrong
// lineage, a swapped file, another configuration or dataset), saying which.
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/dsse.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/trainer_keys.h"
#include "sealtrain/trainer/counter_rng.h"

#include <QTemporaryDir>
#include <nlohmann/json.hpp>

#include <QProcess>
#include <QtTest/QtTest>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace sealtrain;
using namespace sealtrain::trainer;
namespace fs = std::filesystem;

namespace {

TrainingConfig tinyConfig()
{
    TrainingConfig config;
    config.model.vocabSize = 11;
    config.model.paddedVocabSize = 16;
    config.model.contextLength = 8;
    config.model.layers = 2;
    config.model.heads = 2;
    config.model.width = 8;
    config.batch = 4;
    config.gradAccum = 2;
    config.schedule = {1e-3, 1e-4, 2, 20};
    config.seed = 42;
    return config;
}

// Random tensors, with zero padding rows in wte as a real model has.
struct Tensors {
    std::vector<float> parameters, m, v;
    explicit Tensors(const GptConfig& model, std::uint64_t seed)
    {
        const ParameterLayout layout(model);
        const CounterRng rng(seed);
        for (auto* flat : {&parameters, &m, &v}) {
            flat->resize(layout.totalSize());
            for (std::size_t i = 0; i < flat->size(); ++i)
                (*flat)[i] = static_cast<float>(rng.normal(flat == &parameters ? 0 : 1, i));
            for (std::size_t i = model.vocabSize * model.width;
                 i < model.paddedVocabSize * model.width; ++i)
                (*flat)[i] = 0.0F;
        }
        for (auto& value : v)
            value = value * value;
    }
    [[nodiscard]] CheckpointTensors view() const { return {parameters, m, v}; }
};

CheckpointState stateAt(std::uint64_t step, const std::string& run = "run-a")
{
    CheckpointState state;
    state.config = tinyConfig();
    state.step = step;
    state.optimizerStep = step;
    state.loader = {1, 24 * step};
    state.runId = run;
    state.jobId = "job-7";
    state.datasetId = "sha256:" + std::string(64, 'a');
    state.tokenizer = "byte";
    return state;
}

crypto::Kek makeKek(const std::string& id)
{
    auto kek = crypto::generateKek(id, 1);
    if (!kek)
        qFatal("cannot make a KEK");
    return std::move(kek).value();
}

crypto::SigningKey makeSigningKey()
{
    auto key = crypto::SigningKey::generate();
    if (!key)
        qFatal("cannot make a signing key");
    return std::move(key).value();
}

std::vector<std::uint8_t> readAll(const fs::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeAll(const fs::path& path, std::span<const std::uint8_t> bytes)
{
    fs::remove(path);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

class Fixture {
public:
    Fixture()
        : kek(makeKek(kCheckpointsKekId))
        , signer(makeSigningKey())
        , tensors(tinyConfig().model, 5)
    {
        trusted.push_back(signer.publicKey());
        folder = fs::path(dir.path().toStdString()) / "run";
    }

    crypto::KekResolver resolver() const
    {
        return [this](const std::string& id, std::uint32_t version) -> Result<const crypto::Kek*> {
            if (id == kek.id && version == kek.version)
                return &kek;
            return Error(ErrorCode::NotFound, "No such key.");
        };
    }

    // Writes steps 1..n as one run, each the parent of the next.
    std::vector<WrittenCheckpoint> writeChain(std::uint64_t n, std::size_t keep = 0) const
    {
        std::vector<WrittenCheckpoint> written;
        std::optional<CheckpointReference> parent;
        for (std::uint64_t step = 1; step <= n; ++step) {
            auto result =
                writeCheckpoint(folder, stateAt(step), tensors.view(), parent, kek, signer, keep);
            if (!result)
                qFatal("writeCheckpoint: %s", result.error().message().c_str());
            parent = result->reference;
            written.push_back(std::move(result).value());
        }
        return written;
    }

    ResumeExpectations expectations() const { return {tinyConfig(), stateAt(0).datasetId, ""}; }

    QTemporaryDir dir;
    crypto::Kek kek;
    crypto::SigningKey signer;
    Tensors tensors;
    std::vector<crypto::PublicKey> trusted;
    fs::path folder;
};

}  // namespace

class TestTrainerCheckpoint : public QObject {
    Q_OBJECT

private slots:
    void configJsonRoundTripsAndNamesDifferences()
    {
        const TrainingConfig config = tinyConfig();
        const auto parsed = TrainingConfig::fromJson(config.toJson());
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->toJson(), config.toJson());
        QCOMPARE(config.firstDifference(*parsed), std::string());
        TrainingConfig other = config;
        other.model.layers = 3;
        QCOMPARE(config.firstDifference(other), std::string("model.layers"));
        other = config;
        other.schedule.maxRate = 2e-3;
        QCOMPARE(config.firstDifference(other), std::string("schedule.max_lr"));
        QVERIFY(!TrainingConfig::fromJson(R"({"batch":4})").ok());
        QVERIFY(!TrainingConfig::fromJson(config.toJson() + " ").ok());
    }

    void plaintextRoundTripsBitForBit()
    {
        const Tensors tensors(tinyConfig().model, 9);
        const CheckpointState state = stateAt(7);
        auto bytes = encodeCheckpoint(state, tensors.view());
        QVERIFY(bytes.ok());
        auto decoded = decodeCheckpoint(*bytes);
        QVERIFY2(decoded.ok(), decoded.ok() ? "" : decoded.error().message().c_str());
        QCOMPARE(decoded->parameters, tensors.parameters);
        QCOMPARE(decoded->firstMoment, tensors.m);
        QCOMPARE(decoded->secondMoment, tensors.v);
        QCOMPARE(decoded->state.step, std::uint64_t{7});
        QCOMPARE(decoded->state.optimizerStep, std::uint64_t{7});
        QVERIFY(decoded->state.loader == state.loader);
        QCOMPARE(decoded->state.runId, state.runId);
        QCOMPARE(decoded->state.jobId, state.jobId);
        QCOMPARE(decoded->state.datasetId, state.datasetId);
        QCOMPARE(decoded->state.tokenizer, std::string("byte"));
        QCOMPARE(decoded->state.config.toJson(), state.config.toJson());
    }

    // The plaintext is a safetensors file that a reader sharing no code with ours parses
    // (tests/scripts/read_checkpoint_safetensors.py, standard library only): every tensor under
    // its documented name and shape holds exactly the bytes that were written.
    void anIndependentReaderParsesThePlaintext()
    {
        const Tensors tensors(tinyConfig().model, 11);
        const CheckpointState state = stateAt(3);
        auto bytes = encodeCheckpoint(state, tensors.view());
        QVERIFY(bytes.ok());
        QTemporaryDir dir;
        const std::string plaintext = dir.filePath("checkpoint.safetensors").toStdString();
        const std::string expectedJson = dir.filePath("expected.json").toStdString();
        const std::string expectedBin = dir.filePath("expected.bin").toStdString();
        std::ofstream(plaintext, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes->data()),
                   static_cast<std::streamsize>(bytes->size()));

        const GptConfig& model = tinyConfig().model;
        const ParameterLayout layout(model);
        nlohmann::json wanted = nlohmann::json::object();
        std::ofstream bin(expectedBin, std::ios::binary);
        const std::pair<const char*, const std::vector<float>*> arrays[] = {
            {"", &tensors.parameters}, {"optimizer.m.", &tensors.m}, {"optimizer.v.", &tensors.v}};
        std::size_t base = 0;
        for (const auto& [prefix, flat] : arrays) {
            bin.write(reinterpret_cast<const char*>(flat->data()),
                      static_cast<std::streamsize>(flat->size() * sizeof(float)));
            for (const auto& tensor : layout.tensors()) {
                auto shape = tensor.shape;
                std::size_t size = tensor.size;
                if (tensor.name == "wte.weight") {  // documented: without the padding rows
                    shape[0] = model.vocabSize;
                    size = model.vocabSize * model.width;
                }
                wanted[std::string(prefix) + tensor.name] = {
                    {"shape", shape},
                    {"offset", (base + tensor.offset) * sizeof(float)},
                    {"bytes", size * sizeof(float)}};
            }
            base += flat->size();
        }
        bin.close();
        const nlohmann::json expected = {{"tensors", wanted},
                                         {"metadata",
                                          {{"step", "3"},
                                           {"run", state.runId},
                                           {"dataset", state.datasetId},
                                           {"config", state.config.toJson()}}}};
        std::ofstream(expectedJson) << expected.dump();

        QProcess reader;
        reader.setProcessChannelMode(QProcess::MergedChannels);
        reader.start(
            QStringLiteral("python3"),
            {QStringLiteral(SEALTRAIN_SOURCE_DIR "/tests/scripts/read_checkpoint_safetensors.py"),
             QString::fromStdString(plaintext), QString::fromStdString(expectedJson),
             QString::fromStdString(expectedBin)});
        QVERIFY2(reader.waitForFinished(60000), "python3 did not finish");
        const QByteArray output = reader.readAll();
        QVERIFY2(reader.exitStatus() == QProcess::NormalExit && reader.exitCode() == 0,
                 output.constData());
    }

    void writesSealedSignedFilesAndKeepsTheNewestK()
    {
        Fixture f;
        const auto written = f.writeChain(5, 2);
        auto listed = listCheckpoints(f.folder);
        QVERIFY(listed.ok());
        QCOMPARE(listed->size(), std::size_t{2});
        QCOMPARE((*listed)[0].step, std::uint64_t{4});
        QCOMPARE((*listed)[1].step, std::uint64_t{5});
        QVERIFY(!fs::exists(checkpointFiles(f.folder, 3).sealed));
        QVERIFY(!fs::exists(checkpointFiles(f.folder, 3).envelope));
        // Nothing in the clear: the file is a sealed object under the checkpoints KEK.
        auto info = crypto::inspectSealedObject(written.back().files.sealed);
        QVERIFY(info.ok());
        QCOMPARE(info->kekId, std::string(kCheckpointsKekId));
        QCOMPARE(info->metadata.contentType, std::string(kCheckpointContentType));
        QCOMPARE(fs::status(f.folder).permissions() & fs::perms::all, fs::perms::owner_all);

        auto loaded = loadCheckpointForResume(written.back().files, f.trusted, f.resolver(),
                                              f.expectations());
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().message().c_str());
        QCOMPARE(loaded->checkpoint.parameters, f.tensors.parameters);
        QCOMPARE(loaded->lineage.step, std::uint64_t{5});
        QVERIFY(loaded->lineage.parent == written[3].reference);
        QCOMPARE(loaded->lineage.subject.name, std::string("checkpoint-00000005.safetensors"));

        // The envelope is plain DSSE over an in-toto statement, checkable with the public key.
        const auto envelopeBytes = readAll(written.back().files.envelope);
        auto envelope = crypto::DsseEnvelope::fromJson(std::string_view(
            reinterpret_cast<const char*>(envelopeBytes.data()), envelopeBytes.size()));
        QVERIFY(envelope.ok());
        QCOMPARE(envelope->payloadType, std::string(kInTotoPayloadType));
        QVERIFY(crypto::verifyDsse(*envelope, f.signer.publicKey()).ok());
    }

    void refusesToOverwriteAStep()
    {
        Fixture f;
        f.writeChain(1);
        auto again =
            writeCheckpoint(f.folder, stateAt(1), f.tensors.view(), {}, f.kek, f.signer, 0);
        QVERIFY(!again.ok());
        QCOMPARE(again.error().code(), ErrorCode::AlreadyExists);
    }

    void refusesATamperedSealedFile()
    {
        Fixture f;
        const auto files = f.writeChain(1).back().files;
        auto bytes = readAll(files.sealed);
        bytes[bytes.size() - 100] ^= 0x01U;
        writeAll(files.sealed, bytes);
        auto loaded = loadCheckpoint(files, f.trusted, f.resolver());
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::Integrity);
    }

    void refusesATruncatedSealedFile()
    {
        Fixture f;
        const auto files = f.writeChain(1).back().files;
        auto bytes = readAll(files.sealed);
        bytes.resize(bytes.size() - 17);
        writeAll(files.sealed, bytes);
        auto loaded = loadCheckpoint(files, f.trusted, f.resolver());
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::Integrity);
    }

    void refusesAWrongKey()
    {
        Fixture f;
        const auto files = f.writeChain(1).back().files;
        const crypto::Kek other = makeKek(kCheckpointsKekId);
        const crypto::KekResolver wrong =
            [&](const std::string&, std::uint32_t) -> Result<const crypto::Kek*> { return &other; };
        auto loaded = loadCheckpoint(files, f.trusted, wrong);
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::Unauthenticated);
    }

    void refusesAStrangersSignature()
    {
        Fixture f;
        const auto files = f.writeChain(1).back().files;
        // The stranger re-signs the very same statement with their own key.
        const auto bytes = readAll(files.envelope);
        auto envelope = crypto::DsseEnvelope::fromJson(
            std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
        QVERIFY(envelope.ok());
        const crypto::SigningKey stranger = makeSigningKey();
        const auto resigned = crypto::signDsse(envelope->payloadType, envelope->payload, stranger);
        writeAll(files.envelope, asBytes(resigned.toJson()));
        auto loaded = loadCheckpoint(files, f.trusted, f.resolver());
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(loaded.error().message().find("not signed by a trusted key") != std::string::npos);
        // The stranger's key is not trusted just because it signed.
        const std::vector<crypto::PublicKey> strangerTrusted{stranger.publicKey()};
        QVERIFY(loadCheckpoint(files, strangerTrusted, f.resolver()).ok());
    }

    void refusesAnEditedStatement()
    {
        Fixture f;
        const auto files = f.writeChain(1).back().files;
        auto text = readAll(files.envelope);
        // Flip one bit of the base64 payload (the statement) without re-signing.
        text[12] = static_cast<std::uint8_t>(text[12] == 'A' ? 'B' : 'A');
        writeAll(files.envelope, text);
        auto loaded = loadCheckpoint(files, f.trusted, f.resolver());
        QVERIFY(!loaded.ok());
        QVERIFY(loaded.error().code() == ErrorCode::Unauthenticated
                || loaded.error().code() == ErrorCode::Integrity);
    }

    void refusesContentReplacedUnderTheRightKey()
    {
        // Someone with the KEK but not the signing key seals other weights under the same name.
        Fixture f;
        const auto files = f.writeChain(1).back().files;
        const Tensors other(tinyConfig().model, 99);
        auto plaintext = encodeCheckpoint(stateAt(1), other.view());
        QVERIFY(plaintext.ok());
        fs::remove(files.sealed);
        auto writer =
            crypto::SealedWriter::create(files.sealed, f.kek, {kCheckpointContentType, "{}"});
        QVERIFY(writer.ok());
        QVERIFY(writer->write(*plaintext).ok());
        QVERIFY(writer->finish().ok());
        auto loaded = loadCheckpoint(files, f.trusted, f.resolver());
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::Integrity);
        QVERIFY(loaded.error().message().find("signed statement") != std::string::npos);
    }

    void refusesRenamedFiles()
    {
        Fixture f;
        const auto files = f.writeChain(1).back().files;
        const auto moved = checkpointFiles(f.folder, 9);
        fs::rename(files.sealed, moved.sealed);
        fs::rename(files.envelope, moved.envelope);
        auto loaded = loadCheckpoint(moved, f.trusted, f.resolver());
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::Integrity);
        QVERIFY(loaded.error().message().find("renamed or swapped") != std::string::npos);
    }

    void refusesAWrongParent()
    {
        // Properly signed, but its parent is not the checkpoint before it in the folder.
        Fixture f;
        f.writeChain(2);
        const CheckpointReference bogus{"checkpoint-00000002.safetensors", std::string(64, 'b')};
        auto written =
            writeCheckpoint(f.folder, stateAt(3), f.tensors.view(), bogus, f.kek, f.signer, 0);
        QVERIFY(written.ok());
        auto loaded =
            loadCheckpointForResume(written->files, f.trusted, f.resolver(), f.expectations());
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::Integrity);
        QVERIFY(loaded.error().message().find("chain") != std::string::npos);
    }

    // The break is in the middle: step 2 names a parent that is not step 1, while 3 and 4 are
    // each the proper child of the one before. Resuming from 4 (or 3) is refused, naming 2.
    void refusesAChainBrokenInTheMiddle()
    {
        Fixture f;
        auto first = f.writeChain(1);
        const CheckpointReference bogus{first[0].reference.name, std::string(64, 'c')};
        auto second =
            writeCheckpoint(f.folder, stateAt(2), f.tensors.view(), bogus, f.kek, f.signer, 0);
        QVERIFY(second.ok());
        auto third = writeCheckpoint(f.folder, stateAt(3), f.tensors.view(), second->reference,
                                     f.kek, f.signer, 0);
        QVERIFY(third.ok());
        auto fourth = writeCheckpoint(f.folder, stateAt(4), f.tensors.view(), third->reference,
                                      f.kek, f.signer, 0);
        QVERIFY(fourth.ok());
        for (const auto* newest : {&*fourth, &*third}) {
            auto loaded =
                loadCheckpointForResume(newest->files, f.trusted, f.resolver(), f.expectations());
            QVERIFY(!loaded.ok());
            QCOMPARE(loaded.error().code(), ErrorCode::Integrity);
            QVERIFY2(loaded.error().message().find("00000002") != std::string::npos,
                     loaded.error().message().c_str());
        }
    }

    void refusesACheckpointOfAnotherRun()
    {
        // A validly signed checkpoint of run B dropped into run A's folder as the newest.
        Fixture f;
        const auto chain = f.writeChain(2);
        auto foreign = writeCheckpoint(f.folder, stateAt(3, "run-b"), f.tensors.view(),
                                       chain.back().reference, f.kek, f.signer, 0);
        QVERIFY(foreign.ok());
        auto loaded =
            loadCheckpointForResume(foreign->files, f.trusted, f.resolver(), f.expectations());
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::Integrity);
        QVERIFY(loaded.error().message().find("chain") != std::string::npos);
        // And asking for run A by name refuses it before reading anything else.
        ResumeExpectations named = f.expectations();
        named.runId = "run-a";
        loaded = loadCheckpointForResume(foreign->files, f.trusted, f.resolver(), named);
        QVERIFY(!loaded.ok());
        QVERIFY(loaded.error().message().find("belongs to run 'run-b'") != std::string::npos);
    }

    void refusesAnotherConfigurationOrDataset()
    {
        Fixture f;
        const auto files = f.writeChain(1).back().files;
        ResumeExpectations expectations = f.expectations();
        expectations.config.gradAccum = 3;
        auto loaded = loadCheckpointForResume(files, f.trusted, f.resolver(), expectations);
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(loaded.error().message().find("'grad_accum'") != std::string::npos);

        expectations = f.expectations();
        expectations.datasetId = "sha256:" + std::string(64, 'c');
        loaded = loadCheckpointForResume(files, f.trusted, f.resolver(), expectations);
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(loaded.error().message().find("dataset") != std::string::npos);
    }

    void anEnvelopeMissingMeansNoCheckpoint()
    {
        // A run killed between the sealed file and its envelope leaves an orphan: not listed,
        // not loadable, and replaced by the next write of that step.
        Fixture f;
        const auto files = f.writeChain(2).back().files;
        fs::remove(files.envelope);
        auto listed = listCheckpoints(f.folder);
        QVERIFY(listed.ok());
        QCOMPARE(listed->size(), std::size_t{1});
        auto loaded = loadCheckpoint(files, f.trusted, f.resolver());
        QVERIFY(!loaded.ok());
        QCOMPARE(loaded.error().code(), ErrorCode::NotFound);
        auto rewritten =
            writeCheckpoint(f.folder, stateAt(2), f.tensors.view(), {}, f.kek, f.signer, 0);
        QVERIFY2(rewritten.ok(), rewritten.ok() ? "" : rewritten.error().message().c_str());
    }

    void keysRoundTripThroughTheHandoffFormat()
    {
        const crypto::Kek datasets = makeKek("datasets");
        const crypto::Kek checkpoints = makeKek(kCheckpointsKekId);
        const crypto::SigningKey signer = makeSigningKey();
        const crypto::SigningKey other = makeSigningKey();
        const crypto::Kek* keks[] = {&datasets, &checkpoints};
        const std::vector<crypto::PublicKey> extra{other.publicKey()};
        auto text = formatTrainerKeys(keks, &signer, extra);
        QVERIFY(text.ok());
        auto keys = parseTrainerKeys(text->bytes());
        QVERIFY2(keys.ok(), keys.ok() ? "" : keys.error().message().c_str());
        QCOMPARE(keys->keks.size(), std::size_t{2});
        QVERIFY(keys->newest("datasets")->key.equals(datasets.key));
        QVERIFY(keys->newest(kCheckpointsKekId)->key.equals(checkpoints.key));
        QVERIFY(keys->signingKey.has_value());
        QVERIFY(keys->signingKey->publicKey() == signer.publicKey());
        QCOMPARE(keys->trusted.size(), std::size_t{2});  // the extra key and the signer's own
        QVERIFY(keys->resolver()("datasets", 1).ok());
        QCOMPARE(keys->resolver()("datasets", 2).error().code(), ErrorCode::NotFound);
    }

    // A worker adds its own signing key to the keys it was handed (trainer_keys.h,
    // addSigningKey): the result parses with that key; a second key, or a key that is not one,
    // is refused without being quoted.
    void aWorkerAddsItsSigningKey()
    {
        const crypto::Kek job = makeKek("job-7");
        const crypto::Kek* keks[] = {&job};
        const crypto::SigningKey worker = makeSigningKey();
        auto handed = formatTrainerKeys(keks, nullptr, {});
        QVERIFY(handed.ok());
        const std::string pem = worker.toPrivatePem().value();
        auto keys = addSigningKey(handed->bytes(), asBytes(pem));
        QVERIFY2(keys.ok(), keys.ok() ? "" : keys.error().message().c_str());
        auto parsed = parseTrainerKeys(keys->bytes());
        QVERIFY(parsed.ok() && parsed->signingKey.has_value());
        QVERIFY(parsed->signingKey->publicKey() == worker.publicKey());
        QVERIFY(parsed->newest("job-7")->key.equals(job.key));
        // The handed keys without their last newline, the PEM without its own: the same keys.
        std::string trimmedPem = pem;
        while (trimmedPem.ends_with('\n'))
            trimmedPem.pop_back();
        auto trimmed =
            addSigningKey(handed->bytes().first(handed->size() - 1), asBytes(trimmedPem));
        QVERIFY2(trimmed.ok(), trimmed.ok() ? "" : trimmed.error().message().c_str());
        QVERIFY(trimmed->equals(*keys));

        auto twice = addSigningKey(keys->bytes(), asBytes(pem));
        QVERIFY(!twice.ok());
        QCOMPARE(twice.error().code(), ErrorCode::InvalidArgument);
        const std::string notAKey =
            "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n";
        auto refused = addSigningKey(handed->bytes(), asBytes(notAKey));
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().message().find("c2VjcmV0") == std::string::npos);
        // A public key is no signing key, although the format takes it as a trusted one.
        auto publicOnly = addSigningKey(handed->bytes(), asBytes(worker.publicKey().toPem()));
        QVERIFY(!publicOnly.ok());
        QCOMPARE(publicOnly.error().code(), ErrorCode::InvalidArgument);
    }

    // Data keys (the shards of one dataset) travel as their own lines and come back by object.
    void dataKeysRoundTripThroughTheHandoffFormat()
    {
        const crypto::Kek checkpoints = makeKek(kCheckpointsKekId);
        const crypto::Kek* keks[] = {&checkpoints};
        std::vector<DataKey> dataKeys(2);
        for (std::size_t i = 0; i < dataKeys.size(); ++i) {
            dataKeys[i].objectId.fill(static_cast<std::uint8_t>(0x10 + i));
            dataKeys[i].key = makeKek("datasets").key.copy().value();
        }
        auto text = formatTrainerKeys(keks, nullptr, {}, dataKeys);
        QVERIFY(text.ok());
        auto keys = parseTrainerKeys(text->bytes());
        QVERIFY2(keys.ok(), keys.ok() ? "" : keys.error().message().c_str());
        QCOMPARE(keys->dataKeys.size(), std::size_t{2});
        const auto resolve = keys->dataKeyResolver();
        for (const DataKey& dataKey : dataKeys) {
            auto found = resolve(dataKey.objectId);
            QVERIFY(found.ok());
            QVERIFY(found->equals(dataKey.key));
        }
        crypto::SealedObjectId unknown{};
        QCOMPARE(resolve(unknown).error().code(), ErrorCode::NotFound);

        // The same object twice, a short id, a short key: refused, without quoting the key.
        const std::string line =
            "sealtrain-dek-v1 " + std::string(32, 'a') + " " + std::string(43, 'Q') + "=\n";
        const std::string twice = "sealtrain-trainer-keys-v1\n" + line + line;
        auto refused = parseTrainerKeys(asBytes(twice));
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().message().find("Line 3") != std::string::npos);
        const std::string shortId =
            "sealtrain-trainer-keys-v1\nsealtrain-dek-v1 abcd " + std::string(43, 'Q') + "=\n";
        QVERIFY(!parseTrainerKeys(asBytes(shortId)).ok());
        const std::string shortKey = "sealtrain-trainer-keys-v1\nsealtrain-dek-v1 "
                                     + std::string(32, 'a') + " c2VjcmV0LXZhbHVl\n";
        refused = parseTrainerKeys(asBytes(shortKey));
        QVERIFY(!refused.ok());
        QVERIFY(refused.error().message().find("c2VjcmV0") == std::string::npos);
    }

    void malformedKeysAreRefusedWithoutQuotingThem()
    {
        const std::string noMagic = "sealtrain-kek-v1 datasets 1 AAAA\n";
        auto keys = parseTrainerKeys(asBytes(noMagic));
        QVERIFY(!keys.ok());
        const std::string badKey =
            "sealtrain-trainer-keys-v1\nsealtrain-kek-v1 datasets 1 c2VjcmV0LXZhbHVl\n";
        keys = parseTrainerKeys(asBytes(badKey));
        QVERIFY(!keys.ok());
        QVERIFY(keys.error().message().find("Line 2") != std::string::npos);
        QVERIFY(keys.error().message().find("c2VjcmV0") == std::string::npos);
        const std::string unterminated =
            "sealtrain-trainer-keys-v1\n-----BEGIN PRIVATE KEY-----\nMC4CAQAw\n";
        QVERIFY(!parseTrainerKeys(asBytes(unterminated)).ok());
    }

    void keysAreReadFromAPipeButNotFromAFileOthersCanRead()
    {
        const crypto::Kek datasets = makeKek("datasets");
        const crypto::Kek* keks[] = {&datasets};
        auto text = formatTrainerKeys(keks, nullptr, {});
        QVERIFY(text.ok());
        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        QCOMPARE(::write(fds[1], text->bytes().data(), text->size()),
                 static_cast<ssize_t>(text->size()));
        ::close(fds[1]);
        auto keys = readTrainerKeys(fds[0]);
        ::close(fds[0]);
        QVERIFY2(keys.ok(), keys.ok() ? "" : keys.error().message().c_str());
        QCOMPARE(keys->keks.size(), std::size_t{1});

        QTemporaryDir dir;
        const std::string path = dir.filePath("keys").toStdString();
        writeAll(path, text->bytes());
        int fd = -1;
        for (const mode_t mode : {0644U, 0640U, 0604U}) {  // the group alone is too many readers
            ::chmod(path.c_str(), mode);
            fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            keys = readTrainerKeys(fd);
            ::close(fd);
            QVERIFY(!keys.ok());
            QCOMPARE(keys.error().code(), ErrorCode::PermissionDenied);
        }
        ::chmod(path.c_str(), 0600);
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        keys = readTrainerKeys(fd);
        ::close(fd);
        QVERIFY(keys.ok());
    }
};

QTEST_APPLESS_MAIN(TestTrainerCheckpoint)
#include "test_trainer_checkpoint.moc"
