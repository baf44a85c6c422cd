// The key release (keys/key_release.h): scoped trainer keys, sealed to a worker or on a pipe, and
// the checks on every checkpoint a trainer hands back. The byte formats are trainer/'s
// (trainer_keys.h, checkpoint.h, in sealtrain_formats, which has none of the model's
// code).
#include "sealtrain/core/keys/key_release.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/scheduling/budgets.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/reader.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/job_spec.h"
#include "sealtrain/formats/trainer_keys.h"

#include <fmt/format.h>

#include <chrono>
#include <span>
#include <system_error>
#include <utility>

namespace sealtrain::core {
namespace {

constexpr std::uint32_t kJobKeyVersion = 1;
constexpr std::size_t kJobKeySize = 32;
constexpr std::string_view kJobKeyFile = "job.key.sealed";
constexpr std::string_view kCheckpointsFolder = "checkpoints";

std::filesystem::path jobFolder(const KeyVault& vault, std::int64_t job)
{
    return vault.root / "jobs" / std::to_string(job);
}

CheckpointPaths pathsOf(const trainer::CheckpointFiles& files)
{
    return {files.sealed, files.envelope, files.step};
}

trainer::CheckpointFiles filesOf(const CheckpointPaths& paths)
{
    trainer::CheckpointFiles files;
    files.sealed = paths.sealed;
    files.envelope = paths.envelope;
    files.step = paths.step;
    return files;
}

// The job's own checkpoint KEK ("job-<id>"): made at its first release, kept sealed under the
// platform's `checkpoints` KEK (jobs/<id>/job.key.sealed). A worker gets this key, never the
// platform's, so it can read back its job's checkpoints and no other.
Result<crypto::Kek> jobKey(const KeyVault& vault, std::int64_t job)
{
    const auto folder = jobFolder(vault, job);
    const auto path = folder / kJobKeyFile;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        auto active = vault.keyring.activeKek(trainer::kCheckpointsKekId);
        if (!active)
            return active.error();
        std::filesystem::create_directories(folder, ec);
        std::filesystem::permissions(folder, std::filesystem::perms::owner_all, ec);
        auto writer = crypto::SealedWriter::create(path, **active,
                                                   {"application/vnd.sealtrain.job-key", "{}"});
        if (!writer)
            return writer.error();
        auto secret = crypto::SecretBytes::random(kJobKeySize);
        if (!secret)
            return secret.error();
        SEALTRAIN_TRY(writer->write(secret->bytes()));
        SEALTRAIN_TRY(writer->finish());
    }
    const auto keks = usableKeks(vault.keyring, trainer::kCheckpointsKekId);
    const crypto::KekResolver resolver =
        [&keks](const std::string& id, std::uint32_t version) -> Result<const crypto::Kek*> {
        for (const crypto::Kek* kek : keks)
            if (kek->id == id && kek->version == version)
                return kek;
        return Error(ErrorCode::NotFound,
                     "The job's key is sealed under a checkpoints KEK this keyring no longer "
                     "has; restore the keyring from a backup.");
    };
    auto reader = crypto::SealedReader::open(path, resolver);
    if (!reader)
        return reader.error().withContext("Cannot open the job's key");
    if (reader->chunkCount() != 1 || reader->plaintextSize() != kJobKeySize)
        return Error(ErrorCode::Integrity, "The job's key file is not a 32-byte sealed key; "
                                           "restore the data directory from a backup.");
    auto key = crypto::SecretBytes::allocate(kJobKeySize);
    if (!key)
        return key.error();
    SEALTRAIN_TRY(reader->readChunk(0, key->mutableBytes()));
    crypto::Kek kek;
    kek.id = fmt::format("job-{}", job);
    kek.version = kJobKeyVersion;
    kek.key = std::move(key).value();
    return kek;
}

// The data keys of exactly the shards of dataset `datasetId`, unwrapped with the `datasets` KEK
// (which never leaves): what a trainer is given in its place.
Result<std::vector<trainer::DataKey>> datasetDataKeys(const KeyVault& vault,
                                                      const std::string& datasetId)
{
    const auto folder = datasetFolder(vault.datasetsRoot(), datasetId);
    auto manifest = dataset::loadManifest(folder, datasetId);
    if (!manifest)
        return manifest.error();
    const crypto::KekResolver resolver = datasetsResolver(vault.keyring);
    std::vector<trainer::DataKey> dataKeys;
    for (const dataset::Split split : {dataset::Split::Train, dataset::Split::Validation}) {
        for (const dataset::ShardEntry& entry : manifest->split(split).shards) {
            auto source = FileSource::open(folder / entry.file);
            if (!source)
                return source.error();
            auto sealed = crypto::inspectSealedObject(**source);
            if (!sealed)
                return sealed.error();
            auto key = crypto::unwrapDataKey(**source, resolver);
            if (!key)
                return key.error();
            dataKeys.push_back({sealed->objectId, std::move(key).value()});
        }
    }
    return dataKeys;
}

Result<std::vector<const crypto::Kek*>> checkpointKeks(const KeyVault& vault)
{
    auto keks = usableKeks(vault.keyring, trainer::kCheckpointsKekId);
    if (keks.empty())
        return Error(ErrorCode::NotFound,
                     "The keyring has no usable 'checkpoints' KEK; its administrator adds one "
                     "with 'sealtrainctl keyring rotate checkpoints'.");
    return keks;
}

VerifiedCheckpoint verified(const trainer::CheckpointFiles& files,
                            const trainer::CheckpointLineage& lineage)
{
    VerifiedCheckpoint checkpoint;
    checkpoint.files = pathsOf(files);
    checkpoint.plaintextSha256 = lineage.subject.sha256;
    checkpoint.datasetId = lineage.dataset;
    return checkpoint;
}

// The data key of a starting model's sealed file, unwrapped with the KEK that sealed it (the
// `checkpoints` KEK for an import, its job's key for a job's version), which stays here. Reads
// no database row.
Result<trainer::DataKey> startingDataKey(const KeyVault& vault, const StartingModel& start)
{
    auto source = FileSource::open(start.sealed);
    if (!source)
        return source.error();
    auto info = crypto::inspectSealedObject(**source);
    if (!info)
        return info.error();
    std::optional<crypto::Kek> jobKek;
    if (start.job != 0) {
        auto kek = jobKey(vault, start.job);
        if (!kek)
            return kek.error();
        jobKek = std::move(kek).value();
    }
    const crypto::Keyring& keyring = vault.keyring;
    const crypto::KekResolver resolver =
        jobKek
            ? crypto::keyFileResolver(*jobKek)
            : crypto::KekResolver([&keyring](const std::string& id,
                                             std::uint32_t number) -> Result<const crypto::Kek*> {
                  if (id != trainer::kCheckpointsKekId)
                      return Error(ErrorCode::Integrity,
                                   "An imported model is sealed under another key than the "
                                   "checkpoints key; restore it from a backup.");
                  return keyring.findKek(id, number);
              });
    auto key = crypto::unwrapDataKey(**source, resolver);
    if (!key)
        return key.error();
    return trainer::DataKey{info->objectId, std::move(key).value()};
}

}  // namespace

bool isValidRunId(std::string_view id)
{
    return trainer::isValidRunId(id);
}

KeyRelease::KeyRelease(KeyVault vault)
    : vault_(std::move(vault))
{
}

std::vector<std::string> KeyRelease::startArguments(const StartingModel& start,
                                                    const std::filesystem::path& path)
{
    return {"--init-from", path.string(), "--init-sha256", start.sha256, "--init-name", start.name};
}

Result<crypto::SecretBytes> KeyRelease::forOwnRun(const std::string& datasetId,
                                                  const std::optional<StartingModel>& start) const
{
    auto dataKeys = datasetDataKeys(vault_, datasetId);
    if (!dataKeys)
        return dataKeys.error();
    if (start) {
        auto key = startingDataKey(vault_, *start);
        if (!key)
            return key.error();
        dataKeys->push_back(std::move(key).value());
    }
    auto keks = checkpointKeks(vault_);
    if (!keks)
        return keks.error();
    return trainer::formatTrainerKeys(*keks, &vault_.checkpointsKey, {}, *dataKeys);
}

Result<DatasetCheck> KeyRelease::verifyDataset(const std::string& datasetId) const
{
    const auto resolver = datasetsResolver(vault_.keyring);
    const auto& trusted = vault_.manifestsKey.publicKey();
    auto report = dataset::verifyDataset(datasetFolder(vault_.datasetsRoot(), datasetId), datasetId,
                                         &resolver, &trusted);
    if (!report)
        return report.error();
    return DatasetCheck{report->shardsChecked, report->tokensChecked, trusted.keyId()};
}

Result<WorkerRelease> KeyRelease::forWorker(const WorkerInfo& worker, const Dispatch& dispatch,
                                            const formats::JobSpec& spec,
                                            const std::optional<std::string>& resumeSignerPem,
                                            const std::optional<StartingModel>& start) const
{
    auto dataKeys = datasetDataKeys(vault_, dispatch.datasetId);
    if (!dataKeys)
        return dataKeys.error();
    // A fine-tuning job's starting model (checked when it was taken): its one data key travels
    // with the dataset's, and the trainer checks the plaintext's SHA-256.
    if (start) {
        auto key = startingDataKey(vault_, *start);
        if (!key)
            return key.error();
        dataKeys->push_back(std::move(key).value());
    }
    auto kek = jobKey(vault_, dispatch.job.id);
    if (!kek)
        return kek.error();
    std::vector<crypto::PublicKey> trusted;
    if (resumeSignerPem) {
        auto signer = crypto::PublicKey::fromPem(*resumeSignerPem);
        if (!signer)
            return signer.error();
        trusted.push_back(*signer);
    }
    const crypto::Kek* keks[] = {&*kek};
    auto text = trainer::formatTrainerKeys(keks, nullptr, trusted, *dataKeys);
    if (!text)
        return text.error();
    auto sealed = crypto::sealToPublicKey(worker.boxKey, text->bytes());
    if (!sealed)
        return sealed.error();
    WorkerRelease release;
    release.sealedKeys = std::move(sealed).value();
    release.checkpointKek = kek->id;
    release.trainerArguments = formats::trainerArguments(spec);
    for (std::string argument :
         {std::string("--job-id"), std::to_string(dispatch.job.id), std::string("--run-id"),
          dispatch.runId, std::string("--dataset-id"), dispatch.datasetId,
          std::string("--checkpoint-kek"), kek->id})
        release.trainerArguments.push_back(std::move(argument));
    release.nodes = spec.resources.nodes;
    release.gpusPerNode = spec.resources.gpusPerNode;
    release.chargedGpus = chargedGpus(spec);
    release.ranksPerNode = spec.resources.gpusPerNode > 0 ? spec.resources.gpusPerNode
                                                          : spec.resources.cpuRanksPerNode;
    release.resume = resumeSignerPem.has_value();
    if (start) {
        release.startsFromModel = true;
        for (std::string argument :
             {std::string("--init-sha256"), start->sha256, std::string("--init-name"), start->name})
            release.trainerArguments.push_back(std::move(argument));
    }
    return release;
}

Result<VerifiedCheckpoint> KeyRelease::checkpointAt(const std::filesystem::path& path) const
{
    auto files = trainer::checkpointFilesFor(path);
    if (!files)
        return files.error();
    const crypto::PublicKey signer = vault_.checkpointsKey.publicKey();
    auto lineage = trainer::verifyCheckpointSignature(*files, std::span(&signer, 1));
    if (!lineage)
        return lineage.error();
    return verified(*files, *lineage);
}

Result<VerifiedCheckpoint> KeyRelease::runCheckpoint(const std::string& runId,
                                                     std::uint64_t step) const
{
    if (!isValidRunId(runId))
        return Error(ErrorCode::InvalidArgument,
                     "Name a run by the id training printed, e.g. run-0123456789abcdef.");
    auto checkpoints = trainer::listCheckpoints(runFolder(runId));
    if (!checkpoints)
        return checkpoints.error();
    for (auto it = checkpoints->rbegin(); it != checkpoints->rend(); ++it) {
        if (step != 0 && it->step != step)
            continue;
        // A model carries the classification of its data, and only a checkpoint this platform
        // signed counts.
        const crypto::PublicKey signer = vault_.checkpointsKey.publicKey();
        auto lineage = trainer::verifyCheckpointSignature(*it, std::span(&signer, 1));
        if (!lineage)
            return lineage.error();
        return verified(*it, *lineage);
    }
    return Error(ErrorCode::NotFound,
                 step == 0 ? fmt::format("The run '{}' has no checkpoint; check the run id.", runId)
                           : fmt::format("The run '{}' has no checkpoint at step {}; leave out "
                                         "--step for its newest.",
                                         runId, step));
}

Result<VerifiedCheckpoint> KeyRelease::jobCheckpoint(const JobCheckpoint& recorded,
                                                     const std::string& signerPem) const
{
    auto signer = crypto::PublicKey::fromPem(signerPem);
    if (!signer)
        return signer.error();
    const trainer::CheckpointFiles files =
        filesOf(jobCheckpointFiles(recorded.jobId, recorded.step));
    auto lineage = trainer::verifyCheckpointSignature(files, std::span(&*signer, 1));
    if (!lineage)
        return lineage.error();
    if (lineage->subject.sha256 != recorded.plaintextSha256)
        return Error(ErrorCode::Integrity,
                     fmt::format("The checkpoint of job {} at step {} is not the one the audit "
                                 "log records; restore it from a backup.",
                                 recorded.jobId, recorded.step));
    VerifiedCheckpoint checkpoint = verified(files, *lineage);
    checkpoint.job = recorded.jobId;
    checkpoint.signerPem = signerPem;
    return checkpoint;
}

Result<std::string> KeyRelease::checkedJobCheckpoint(const JobCheckpoint& recorded,
                                                     const std::string& signerPem) const
{
    auto checkpoint = jobCheckpoint(recorded, signerPem);
    if (!checkpoint)
        return checkpoint.error();
    auto sealed = crypto::sha256File(checkpoint->files.sealed);
    if (!sealed || toHex(*sealed) != recorded.sealedSha256)
        return Error(ErrorCode::Integrity,
                     fmt::format("The sealed checkpoint of job {} at step {} is not the file the "
                                 "audit log records; restore it from a backup.",
                                 recorded.jobId, recorded.step));
    return readWholeFile(checkpoint->files.envelope);
}

Result<trainer::LoadedCheckpoint> KeyRelease::openJobCheckpoint(const JobCheckpoint& recorded,
                                                                const std::string& signerPem) const
{
    SEALTRAIN_TRY(checkedJobCheckpoint(recorded, signerPem));
    auto signer = crypto::PublicKey::fromPem(signerPem);
    if (!signer)
        return signer.error();
    auto kek = jobKey(vault_, recorded.jobId);
    if (!kek)
        return kek.error();
    const crypto::KekResolver resolver = crypto::keyFileResolver(*kek);
    return trainer::loadCheckpoint(filesOf(jobCheckpointFiles(recorded.jobId, recorded.step)),
                                   std::span(&*signer, 1), resolver);
}

Result<crypto::SecretBytes> KeyRelease::forSampler(const VerifiedCheckpoint& checkpoint) const
{
    if (checkpoint.job == 0) {
        auto keks = checkpointKeks(vault_);
        if (!keks)
            return keks.error();
        const crypto::PublicKey signer = vault_.checkpointsKey.publicKey();
        return trainer::formatTrainerKeys(*keks, nullptr, std::span(&signer, 1));
    }
    auto signer = crypto::PublicKey::fromPem(checkpoint.signerPem);
    if (!signer)
        return signer.error();
    auto kek = jobKey(vault_, checkpoint.job);
    if (!kek)
        return kek.error();
    const crypto::Kek* keks[] = {&*kek};
    return trainer::formatTrainerKeys(keks, nullptr, std::span(&*signer, 1));
}

CheckpointPaths KeyRelease::jobCheckpointFiles(std::int64_t job, std::int64_t step) const
{
    return pathsOf(trainer::checkpointFiles(jobFolder(vault_, job) / kCheckpointsFolder,
                                            static_cast<std::uint64_t>(step)));
}

std::size_t KeyRelease::runCheckpointCount(const std::string& runId) const
{
    auto checkpoints = trainer::listCheckpoints(runFolder(runId));
    return checkpoints ? checkpoints->size() : 0;
}

std::filesystem::path KeyRelease::runFolder(const std::string& runId) const
{
    return vault_.root / "runs" / runId;
}

Result<CheckpointPaths> KeyRelease::uploadedCheckpoint(const std::filesystem::path& received) const
{
    auto named = trainer::checkpointFilesFor(received);
    if (!named)
        return named.error();
    std::error_code missing;
    if (!std::filesystem::exists(named->sealed, missing)
        || !std::filesystem::exists(named->envelope, missing))
        return Error(ErrorCode::InvalidArgument,
                     "A checkpoint upload is its .sealed file and its .dsse.json envelope of the "
                     "same step; send both.");
    return pathsOf(*named);
}

Result<JobCheckpoint> KeyRelease::verifyUpload(const WorkerInfo& worker, const Dispatch& dispatch,
                                               const CheckpointPaths& upload,
                                               std::uint64_t maxBytes,
                                               const std::string& baseSha256) const
{
    auto signer = crypto::PublicKey::fromPem(worker.signingKeyPem);
    if (!signer)
        return signer.error();
    auto kek = jobKey(vault_, dispatch.job.id);
    if (!kek)
        return kek.error();
    const crypto::KekResolver resolver =
        [&kek](const std::string& id, std::uint32_t version) -> Result<const crypto::Kek*> {
        if (id == kek->id && version == kek->version)
            return &*kek;
        return Error(ErrorCode::Unauthenticated,
                     "The checkpoint is not sealed under its job's key; it was not made by this "
                     "job's trainer.");
    };
    const crypto::PublicKey trusted[] = {*signer};
    auto loaded = trainer::loadCheckpoint(filesOf(upload), trusted, resolver);
    if (!loaded)
        return loaded.error().withContext("The uploaded checkpoint does not verify");
    const trainer::CheckpointLineage& lineage = loaded->lineage;
    if (lineage.job != std::to_string(dispatch.job.id) || lineage.run != dispatch.runId
        || lineage.dataset != dispatch.datasetId)
        return Error(ErrorCode::Integrity,
                     fmt::format("The uploaded checkpoint is of job '{}', run '{}'; this attempt "
                                 "is job {}, run {}.",
                                 lineage.job, lineage.run, dispatch.job.id, dispatch.runId));
    // A fine-tuning job's checkpoints name the model it was authorised to start from, and only
    // such a job's do.
    auto spec = formats::parseJobSpec(dispatch.job.specJson, formats::kJobSpecCeiling);
    if (!spec)
        return spec.error();
    const std::optional<trainer::CheckpointReference> base =
        spec->model.init.empty()
            ? std::nullopt
            : std::optional(trainer::CheckpointReference{spec->model.init, baseSha256});
    if (lineage.base != base)
        return Error(ErrorCode::Integrity,
                     base ? fmt::format("The uploaded checkpoint does not name {} ({}), the model "
                                        "job {} was authorised to start from.",
                                        base->name, base->sha256, dispatch.job.id)
                          : fmt::format("The uploaded checkpoint names a base model, but job {} "
                                        "trains from scratch.",
                                        dispatch.job.id));
    auto sealedBytes = readWholeFile(upload.sealed, maxBytes);
    if (!sealedBytes)
        return sealedBytes.error();
    JobCheckpoint record;
    record.jobId = dispatch.job.id;
    record.step = static_cast<std::int64_t>(lineage.step);
    record.attempt = dispatch.attempt;
    record.worker = worker.name;
    record.sealedSha256 = toHex(crypto::sha256(
        {reinterpret_cast<const std::uint8_t*>(sealedBytes->data()), sealedBytes->size()}));
    record.plaintextSha256 = lineage.subject.sha256;
    record.fileBase = upload.sealed.stem().string();
    record.recorded =
        std::chrono::duration_cast<std::chrono::seconds>(vault_.clock.now().time_since_epoch())
            .count();
    return record;
}

Result<void> KeyRelease::keepUpload(std::int64_t job, const CheckpointPaths& upload) const
{
    const auto folder = jobFolder(vault_, job) / kCheckpointsFolder;
    std::error_code failed;
    std::filesystem::create_directories(folder, failed);
    const CheckpointPaths kept = jobCheckpointFiles(job, static_cast<std::int64_t>(upload.step));
    if (!failed)
        std::filesystem::rename(upload.sealed, kept.sealed, failed);
    if (!failed)
        std::filesystem::rename(upload.envelope, kept.envelope, failed);
    if (failed)
        return Error(ErrorCode::Io, "Cannot keep the uploaded checkpoint in the data directory; "
                                    "check its free space and permissions.");
    return syncFolder(folder);
}

}  // namespace sealtrain::core
