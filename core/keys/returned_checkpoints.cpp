// What comes back from a trainer (keys/returned_checkpoints.h): checkpoints found and checked
// against the key that must have signed them and the record the audit log keeps, a worker's
// upload verified before it is kept, and a recorded checkpoint opened for an export.
#include "sealtrain/core/keys/returned_checkpoints.h"

#include "sealtrain/audit/audit_log.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/trainer_keys.h"

#include <fmt/format.h>

#include <span>
#include <system_error>
#include <utility>

namespace sealtrain::core {
namespace {

constexpr std::string_view kCheckpointsFolder = "checkpoints";

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

VerifiedCheckpoint verified(const trainer::CheckpointFiles& files,
                            const trainer::CheckpointLineage& lineage)
{
    VerifiedCheckpoint checkpoint;
    checkpoint.files = pathsOf(files);
    checkpoint.plaintextSha256 = lineage.subject.sha256;
    checkpoint.datasetId = lineage.dataset;
    return checkpoint;
}

}  // namespace

bool isValidRunId(std::string_view id)
{
    return trainer::isValidRunId(id);
}

ReturnedCheckpoints::ReturnedCheckpoints(KeyVault vault)
    : vault_(std::move(vault))
{
}

Result<VerifiedCheckpoint>
ReturnedCheckpoints::checkpointAt(const std::filesystem::path& path) const
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

Result<VerifiedCheckpoint> ReturnedCheckpoints::runCheckpoint(const std::string& runId,
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

Result<VerifiedCheckpoint> ReturnedCheckpoints::jobCheckpoint(const JobCheckpoint& recorded,
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

Result<std::string> ReturnedCheckpoints::checkedJobCheckpoint(const JobCheckpoint& recorded,
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

Result<trainer::LoadedCheckpoint>
ReturnedCheckpoints::openJobCheckpoint(const JobCheckpoint& recorded,
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

CheckpointPaths ReturnedCheckpoints::jobCheckpointFiles(std::int64_t job, std::int64_t step) const
{
    return pathsOf(trainer::checkpointFiles(jobFolder(vault_, job) / kCheckpointsFolder,
                                            static_cast<std::uint64_t>(step)));
}

std::size_t ReturnedCheckpoints::runCheckpointCount(const std::string& runId) const
{
    auto checkpoints = trainer::listCheckpoints(runFolder(runId));
    return checkpoints ? checkpoints->size() : 0;
}

std::filesystem::path ReturnedCheckpoints::runFolder(const std::string& runId) const
{
    return vault_.root / "runs" / runId;
}

Result<CheckpointPaths>
ReturnedCheckpoints::uploadedCheckpoint(const std::filesystem::path& received) const
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

Result<JobCheckpoint> ReturnedCheckpoints::verifyUpload(const WorkerInfo& worker,
                                                        const Dispatch& dispatch,
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

Result<void> ReturnedCheckpoints::keepUpload(std::int64_t job, const CheckpointPaths& upload) const
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
