// The key release of core (core/keys/key_release.h, issue #28), on a real data directory: what each
// kind of trainer receives is exactly its scope (the shards of one dataset, the job's own key,
// one checkpoint's key), sealed to the worker it is for; and a checkpoint comes back only signed
// by the right key, sealed under the right key and of the right job. Each attack is tried.
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/jobs/scheduling/budgets.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/store/sql_audit_store.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/job_spec.h"
#include "sealtrain/formats/trainer_keys.h"

#include "core_fixture.h"
#include "sealtrain/base/byte_io.h"

#include <QTemporaryDir>

#include <QtTest/QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace sealtrain;
namespace fs = std::filesystem;

namespace {

constexpr const char* kPassphrase = "a long test passphrase for the key release";

trainer::TrainerKeys parsed(const crypto::SecretBytes& text)
{
    auto keys = trainer::parseTrainerKeys(text.bytes());
    if (!keys)
        qFatal("the released keys do not parse: %s", keys.error().message().c_str());
    return std::move(keys).value();
}

bool hasKek(const trainer::TrainerKeys& keys, const std::string& id)
{
    return std::any_of(keys.keks.begin(), keys.keks.end(),
                       [&id](const crypto::Kek& kek) { return kek.id == id; });
}

bool trusts(const trainer::TrainerKeys& keys, const crypto::PublicKey& key)
{
    return std::any_of(keys.trusted.begin(), keys.trusted.end(),
                       [&key](const auto& trusted) { return trusted.toPem() == key.toPem(); });
}

}  // namespace

class TestCoreKeyRelease : public QObject {
    Q_OBJECT

private:
    QTemporaryDir dir_;
    std::unique_ptr<core::DataDirectory> platform_;
    std::string datasetId_;
    std::size_t shards_ = 0;

    // A checkpoint of `state` written into `folder`, sealed under `kek` and signed by `signer`.
    static trainer::CheckpointFiles writeCheckpointOf(const fs::path& folder,
                                                      trainer::CheckpointState state,
                                                      const crypto::Kek& kek,
                                                      const crypto::SigningKey& signer)
    {
        state.config.model = {11, 16, 8, 1, 2, 8};
        state.config.batch = 2;
        state.optimizerStep = state.step;
        state.tokenizer = "byte";
        const std::vector<float> values(trainer::ParameterLayout(state.config.model).totalSize(),
                                        0.25F);
        auto written = trainer::writeCheckpoint(folder, state, {values, values, values},
                                                std::nullopt, kek, signer, 0);
        if (!written)
            qFatal("cannot write a checkpoint: %s", written.error().message().c_str());
        return written->files;
    }

    // The dispatch of job `job`'s first attempt on this dataset.
    [[nodiscard]] core::Dispatch dispatchOf(std::int64_t job) const
    {
        core::Dispatch dispatch;
        dispatch.job.id = job;
        dispatch.attempt = 1;
        dispatch.runId = "job-" + std::to_string(job);
        dispatch.datasetId = datasetId_;
        // A job trained from scratch (its checkpoints name no base model).
        formats::JobSpec spec;
        spec.name = "job";
        spec.project = "demo";
        spec.dataset = datasetId_;
        spec.resources.pool = "cpu";
        spec.schedule.steps = 10;
        dispatch.job.specJson = formats::canonicalJobSpec(spec);
        return dispatch;
    }

    // The job's own KEK, as its worker opens it from what it was handed.
    crypto::Kek jobKekOf(std::int64_t job, const core::WorkerInfo& worker,
                         const crypto::BoxKeyPair& box)
    {
        formats::JobSpec spec;
        auto release = core::KeyRelease(platform_->keyVault())
                           .forWorker(worker, dispatchOf(job), spec, std::nullopt);
        if (!release)
            qFatal("no release: %s", release.error().message().c_str());
        auto text = crypto::openSealedBox(box, release->sealedKeys);
        if (!text)
            qFatal("cannot open the release");
        auto keys = parsed(*text);
        return std::move(keys.keks.front());
    }

private slots:
    void initTestCase()
    {
        QVERIFY(dir_.isValid());
        const fs::path root = dir_.path().toStdString();
        core::NewDataDirectory request;
        request.path = root / "data";
        request.passphrase = testing::secret(kPassphrase);
        request.argon2 = crypto::kArgon2Floor;
        request.adminName = "alice";
        request.adminPassword = testing::secret("a long test password for the admin");
        auto created = core::DataDirectory::create(request);
        QVERIFY2(created, created ? "" : created.error().message().c_str());
        core::KeyringUnlock unlock;
        unlock.passphrase = []() -> Result<crypto::SecretBytes> {
            return testing::secret(kPassphrase);
        };
        auto opened = core::DataDirectory::open(root / "data", unlock);
        QVERIFY2(opened, opened ? "" : opened.error().message().c_str());
        platform_ = std::move(opened).value();

        // A dataset of several shards, imported and signed as the control plane does.
        std::ofstream(root / "records.txt") << "first record\n\nsecond record\n\nthird one\n\n"
                                               "a fourth record\n\nand a fifth\n";
        dataset::ImportOptions options;
        options.inputs = {root / "records.txt"};
        options.format = dataset::InputFormat::TextRecords;
        options.name = "notes";
        options.validationBasisPoints = 5000;
        options.tokensPerShard = 16;
        options.outputRoot = platform_->datasetsRoot();
        fs::create_directories(options.outputRoot);
        dataset::ByteTokenizer tokenizer;
        auto imported = dataset::importDataset(options, tokenizer, **platform_->datasetsKek());
        QVERIFY2(imported, imported ? "" : imported.error().message().c_str());
        QVERIFY(dataset::signManifest(imported->folder, platform_->manifestsKey()));
        datasetId_ = imported->datasetId;
        shards_ =
            imported->manifest.train.shards.size() + imported->manifest.validation.shards.size();
        QVERIFY2(shards_ >= 3, "the test needs a dataset of several shards");
    }

    // The control plane's own run: the data keys of exactly this dataset's shards, the
    // checkpoints KEK and the checkpoints signing key; never the datasets KEK or another key.
    void ownRunGetsTheShardKeysOnly()
    {
        auto text = core::KeyRelease(platform_->keyVault()).forOwnRun(datasetId_);
        QVERIFY2(text, text ? "" : text.error().message().c_str());
        const auto keys = parsed(*text);
        QCOMPARE(keys.dataKeys.size(), shards_);
        QVERIFY(!hasKek(keys, "datasets"));
        QVERIFY(hasKek(keys, trainer::kCheckpointsKekId));
        QVERIFY(keys.signingKey.has_value());
        QCOMPARE(keys.signingKey->publicKey().toPem(),
                 platform_->checkpointsKey().publicKey().toPem());
        QVERIFY(keys.signingKey->publicKey().toPem()
                != platform_->signingKey().publicKey().toPem());
        // A dataset that is not there gives nothing.
        QVERIFY(
            !core::KeyRelease(platform_->keyVault()).forOwnRun("sha256:" + std::string(64, 'e')));
    }

    // A worker's job: the shard keys and the job's own KEK, sealed so that only that worker
    // opens them; no signing key, no platform KEK; the same job key at every attempt, another
    // for another job.
    void workerGetsItsJobKeySealedToIt()
    {
        auto box = crypto::BoxKeyPair::generate().value();
        auto stranger = crypto::BoxKeyPair::generate().value();
        core::WorkerInfo worker;
        worker.name = "gpu-1";
        worker.boxKey = box.publicKey();
        formats::JobSpec spec;
        spec.resources.cpuRanksPerNode = 2;
        const core::KeyRelease release(platform_->keyVault());
        const core::ReturnedCheckpoints returned(platform_->keyVault());
        auto handed = release.forWorker(worker, dispatchOf(7), spec, std::nullopt);
        QVERIFY2(handed, handed ? "" : handed.error().message().c_str());
        QCOMPARE(handed->checkpointKek, std::string("job-7"));
        QVERIFY(!handed->resume);
        QCOMPARE(handed->ranksPerNode, std::int64_t{2});
        const auto& arguments = handed->trainerArguments;
        const auto kekFlag = std::find(arguments.begin(), arguments.end(), "--checkpoint-kek");
        QVERIFY(kekFlag != arguments.end() && *(kekFlag + 1) == "job-7");

        QVERIFY(!crypto::openSealedBox(stranger, handed->sealedKeys));
        auto text = crypto::openSealedBox(box, handed->sealedKeys);
        QVERIFY(text);
        const auto keys = parsed(*text);
        QCOMPARE(keys.keks.size(), std::size_t{1});
        QCOMPARE(keys.keks.front().id, std::string("job-7"));
        QVERIFY(!keys.signingKey.has_value());
        QCOMPARE(keys.dataKeys.size(), shards_);

        const crypto::Kek again = jobKekOf(7, worker, box);
        const crypto::Kek other = jobKekOf(8, worker, box);
        QVERIFY(std::equal(again.key.bytes().begin(), again.key.bytes().end(),
                           keys.keks.front().key.bytes().begin()));
        QVERIFY(!std::equal(other.key.bytes().begin(), other.key.bytes().end(),
                            again.key.bytes().begin()));

        // Resuming trusts the signer of the checkpoint it resumes from.
        const auto signer = crypto::SigningKey::generate().value();
        auto resumed = release.forWorker(worker, dispatchOf(7), spec, signer.publicKey().toPem());
        QVERIFY(resumed && resumed->resume);
        QVERIFY(
            trusts(parsed(*crypto::openSealedBox(box, resumed->sealedKeys)), signer.publicKey()));
    }

    // Issue #48: one GPU-hour rule for a worker's attempts and the control plane's own runs. A
    // job on two nodes of four GPUs is charged eight GPUs' hours, and the worker is told so with
    // its job; a CPU job none.
    void twoNodeJobIsChargedEveryGpu()
    {
        auto box = crypto::BoxKeyPair::generate().value();
        core::WorkerInfo worker;
        worker.name = "cluster-1";
        worker.boxKey = box.publicKey();
        formats::JobSpec spec;
        spec.resources.nodes = 2;
        spec.resources.gpusPerNode = 4;
        QCOMPARE(core::chargedGpus(spec), std::int64_t{8});
        QCOMPARE(core::gpuHoursCharged(spec, 0.5), 4.0);
        auto handed = core::KeyRelease(platform_->keyVault())
                          .forWorker(worker, dispatchOf(9), spec, std::nullopt);
        QVERIFY2(handed, handed ? "" : handed.error().message().c_str());
        QCOMPARE(handed->gpusPerNode, std::int64_t{4});
        QCOMPARE(handed->chargedGpus, std::int64_t{8});
        formats::JobSpec cpu;
        cpu.resources.gpusPerNode = 0;
        cpu.resources.nodes = 3;
        QCOMPARE(core::gpuHoursCharged(cpu, 2.0), 0.0);
    }

    // Sampling a run of the control plane's own trainer: only a checkpoint the platform signed,
    // named by a run id that is one; the sampler gets the checkpoint's KEK, no data key.
    void runCheckpointsAreVerified()
    {
        const core::KeyRelease release(platform_->keyVault());
        const core::ReturnedCheckpoints returned(platform_->keyVault());
        auto traversal = returned.runCheckpoint("../../etc", 0);
        QVERIFY(!traversal);
        QCOMPARE(traversal.error().code(), ErrorCode::InvalidArgument);
        auto none = returned.runCheckpoint("run-none", 0);
        QVERIFY(!none);
        QCOMPARE(none.error().code(), ErrorCode::NotFound);

        const auto kek = platform_->keyring().activeKek(trainer::kCheckpointsKekId).value();
        trainer::CheckpointState state;
        state.step = 3;
        state.runId = "run-1";
        state.datasetId = datasetId_;
        writeCheckpointOf(returned.runFolder("run-1"), state, *kek, platform_->checkpointsKey());
        auto found = returned.runCheckpoint("run-1", 0);
        QVERIFY2(found, found ? "" : found.error().message().c_str());
        QCOMPARE(found->datasetId, datasetId_);
        QCOMPARE(found->files.step, std::uint64_t{3});
        QCOMPARE(found->job, std::int64_t{0});
        QCOMPARE(found->plaintextSha256.size(), std::size_t{64});
        QCOMPARE(returned.runCheckpointCount("run-1"), std::size_t{1});
        QVERIFY(!returned.runCheckpoint("run-1", 4));

        auto keys = release.forSampler(*found);
        QVERIFY(keys);
        const auto sampler = parsed(*keys);
        QVERIFY(sampler.dataKeys.empty());
        QVERIFY(!sampler.signingKey.has_value());
        QVERIFY(!hasKek(sampler, "datasets"));
        QVERIFY(trusts(sampler, platform_->checkpointsKey().publicKey()));

        // A checkpoint signed by anyone else is not the platform's.
        const auto forger = crypto::SigningKey::generate().value();
        state.runId = "run-2";
        writeCheckpointOf(returned.runFolder("run-2"), state, *kek, forger);
        auto forged = returned.runCheckpoint("run-2", 0);
        QVERIFY(!forged);
        QCOMPARE(forged.error().code(), ErrorCode::Unauthenticated);
    }

    // A worker's upload is recorded only signed by that worker, sealed under its job's key and
    // of its job, run and dataset; kept, it samples with the worker as its signer, and a file
    // that is not the one recorded is refused.
    void uploadsAreVerified()
    {
        auto box = crypto::BoxKeyPair::generate().value();
        const auto signer = crypto::SigningKey::generate().value();
        core::WorkerInfo worker;
        worker.name = "gpu-1";
        worker.boxKey = box.publicKey();
        worker.signingKeyPem = signer.publicKey().toPem();
        const crypto::Kek jobKek = jobKekOf(9, worker, box);
        const core::KeyRelease release(platform_->keyVault());
        const core::ReturnedCheckpoints returned(platform_->keyVault());
        const fs::path incoming = fs::path(dir_.path().toStdString()) / "incoming";

        trainer::CheckpointState state;
        state.step = 5;
        state.runId = "job-9";
        state.jobId = "9";
        state.datasetId = datasetId_;
        const auto files = writeCheckpointOf(incoming / "good", state, jobKek, signer);
        auto upload = returned.uploadedCheckpoint(files.envelope);
        QVERIFY2(upload, upload ? "" : upload.error().message().c_str());
        QCOMPARE(upload->step, std::uint64_t{5});

        // Another worker's signature, another job's attempt, the platform's KEK: each refused.
        core::WorkerInfo impostor = worker;
        impostor.signingKeyPem = crypto::SigningKey::generate().value().publicKey().toPem();
        QVERIFY(!returned.verifyUpload(impostor, dispatchOf(9), *upload, 1U << 24U));
        QVERIFY(!returned.verifyUpload(worker, dispatchOf(10), *upload, 1U << 24U));
        const auto platformKek = platform_->keyring().activeKek(trainer::kCheckpointsKekId).value();
        const auto wrongKek =
            writeCheckpointOf(incoming / "wrong-kek", state, *platformKek, signer);
        auto sealedWrong = returned.verifyUpload(
            worker, dispatchOf(9), {wrongKek.sealed, wrongKek.envelope, wrongKek.step}, 1U << 24U);
        QVERIFY(!sealedWrong);
        QCOMPARE(sealedWrong.error().code(), ErrorCode::Unauthenticated);
        // A checkpoint of this job that names another dataset.
        trainer::CheckpointState otherData = state;
        otherData.datasetId = "sha256:" + std::string(64, 'f');
        const auto lying = writeCheckpointOf(incoming / "lying", otherData, jobKek, signer);
        auto mislabelled = returned.verifyUpload(
            worker, dispatchOf(9), {lying.sealed, lying.envelope, lying.step}, 1U << 24U);
        QVERIFY(!mislabelled);
        QCOMPARE(mislabelled.error().code(), ErrorCode::Integrity);
        // Half an upload is not one.
        fs::remove(lying.envelope);
        QVERIFY(!returned.uploadedCheckpoint(lying.sealed));

        auto record = returned.verifyUpload(worker, dispatchOf(9), *upload, 1U << 24U);
        QVERIFY2(record, record ? "" : record.error().message().c_str());
        QCOMPARE(record->step, std::int64_t{5});
        QCOMPARE(record->worker, std::string("gpu-1"));
        QVERIFY(returned.keepUpload(9, *upload));
        QVERIFY(fs::exists(returned.jobCheckpointFiles(9, 5).sealed));

        auto kept = returned.jobCheckpoint(*record, worker.signingKeyPem);
        QVERIFY2(kept, kept ? "" : kept.error().message().c_str());
        QCOMPARE(kept->job, std::int64_t{9});
        const auto sampler = parsed(release.forSampler(*kept).value());
        QCOMPARE(sampler.keks.size(), std::size_t{1});
        QCOMPARE(sampler.keks.front().id, std::string("job-9"));
        QVERIFY(trusts(sampler, signer.publicKey()));
        QVERIFY(sampler.dataKeys.empty());

        core::JobCheckpoint notRecorded = *record;
        notRecorded.plaintextSha256 = std::string(64, '0');
        auto swapped = returned.jobCheckpoint(notRecorded, worker.signingKeyPem);
        QVERIFY(!swapped);
        QCOMPARE(swapped.error().code(), ErrorCode::Integrity);
    }

    // Issue #48, one trust root per purpose: the artefact root is apart from the identity CA and
    // the model-signing certificate chains to it alone. A data directory from before (no artefact
    // root) gets one when it opens, and a model-signing certificate issued anew by it, both
    // audited by the control plane. Last: it opens the data directory again.
    void artefactRootApartAndMadeOnUpgrade()
    {
        const fs::path data = fs::path(dir_.path().toStdString()) / "data";
        const std::string identityCa = platform_->certificateAuthority().certificatePem();
        const std::string root = platform_->artefactRoot().certificatePem();
        QVERIFY(root != identityCa);
        crypto::VerifyOptions codeSigning;
        codeSigning.purpose = crypto::CertificatePurpose::CodeSigning;
        codeSigning.requireCrl = false;
        const auto signingOf = [&] {
            return readWholeFile(data / core::datadir::kModelSigningCertificate).value();
        };
        QVERIFY(crypto::verifyCertificate(signingOf(), root, codeSigning));
        QVERIFY(!crypto::verifyCertificate(signingOf(), identityCa, codeSigning));

        platform_.reset();
        fs::remove(data / core::datadir::kArtefactCaCertificate);
        fs::remove(data / core::datadir::kArtefactCaKey);
        core::KeyringUnlock unlock;
        unlock.passphrase = []() -> Result<crypto::SecretBytes> {
            return testing::secret(kPassphrase);
        };
        auto opened = core::DataDirectory::open(data, unlock);
        QVERIFY2(opened, opened ? "" : opened.error().message().c_str());
        platform_ = std::move(opened).value();
        const std::string made = platform_->artefactRoot().certificatePem();
        QVERIFY(made != root && made != identityCa);
        QVERIFY(fs::exists(data / core::datadir::kArtefactCaKey));
        QCOMPARE(readWholeFile(data / core::datadir::kArtefactCaCertificate).value(), made);
        QVERIFY(crypto::verifyCertificate(signingOf(), made, codeSigning));
        QVERIFY(!crypto::verifyCertificate(signingOf(), root, codeSigning));

        const auto size = platform_->controlPlane().auditLog().size();
        const auto stored = core::SqlAuditStore(platform_->database()).readEntries(size - 2, 2);
        QVERIFY(stored);
        const auto first = audit::decodeEntry(stored->at(0).bytes).value();
        const auto second = audit::decodeEntry(stored->at(1).bytes).value();
        QCOMPARE(first.action, std::string("platform.artefact_root"));
        QCOMPARE(testing::detailOf(first, "fingerprint"),
                 crypto::certificateFingerprint(made).value());
        QCOMPARE(second.action, std::string("platform.model_signing_certificate"));
        QCOMPARE(testing::detailOf(second, "fingerprint"),
                 crypto::certificateFingerprint(signingOf()).value());
        QCOMPARE(first.actor.id, std::string("control-plane"));

        // Opened again, nothing more is made.
        platform_.reset();
        opened = core::DataDirectory::open(data, unlock);
        QVERIFY(opened);
        platform_ = std::move(opened).value();
        QCOMPARE(platform_->artefactRoot().certificatePem(), made);
        QCOMPARE(platform_->controlPlane().auditLog().size(), size);
    }
};

QTEST_GUILESS_MAIN(TestCoreKeyRelease)
#include "test_core_key_release.moc"
