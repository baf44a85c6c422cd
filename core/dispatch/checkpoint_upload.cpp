// A worker's checkpoint upload (handover.h, CheckpointUpload): received into a folder of its
// own, verified, recorded, and only then moved into its job's folder.
#include "sealtrain/base/encoding.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/dispatch/handover.h"
#include "sealtrain/core/registry/starting_model.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/formats/job_spec.h"

#include <system_error>
#include <utility>

namespace sealtrain::core {
namespace {

// A checkpoint upload: the sealed file and its envelope.
constexpr std::size_t kCheckpointFiles = 2;

}  // namespace

Result<CheckpointUpload> Handovers::openUpload(const std::string& serial)
{
    // The worker first (issue #27): an anonymous caller gets no folder.
    SEALTRAIN_TRY(knownWorker(serial, "Workers.UploadCheckpoint"));
    auto folder = platform_.path() / "jobs" / "incoming" / toHex(crypto::randomBytes(8));
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec)
        return Error(ErrorCode::Io, "Cannot make a folder for the upload in the data directory; "
                                    "check its free space and permissions.");
    return CheckpointUpload(*this, serial, std::move(folder));
}

CheckpointUpload::CheckpointUpload(Handovers& handovers, std::string serial,
                                   std::filesystem::path folder)
    : handovers_(&handovers)
    , serial_(std::move(serial))
    , folder_(std::move(folder))
{
}

CheckpointUpload::CheckpointUpload(CheckpointUpload&& other) noexcept
    : handovers_(other.handovers_)
    , serial_(std::move(other.serial_))
    , folder_(std::exchange(other.folder_, {}))
    , dispatch_(std::move(other.dispatch_))
{
}

CheckpointUpload::~CheckpointUpload()
{
    if (folder_.empty())
        return;
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
}

Result<void> CheckpointUpload::admit(AttemptRef attempt)
{
    auto found = handovers_->current(serial_, "Workers.UploadCheckpoint", attempt);
    if (!found) {
        if (found.error().code() == ErrorCode::PermissionDenied)
            return handovers_->refuseCheckpoint(serial_, attempt, found.error());
        return found.error();
    }
    dispatch_ = std::move(found).value();
    return success();
}

Result<JobCheckpoint> CheckpointUpload::record(const std::vector<std::filesystem::path>& files,
                                               std::uint64_t maxBytes)
{
    if (!dispatch_ || files.size() != kCheckpointFiles)
        return Error(ErrorCode::InvalidArgument,
                     "A checkpoint upload is its .sealed file and its .dsse.json envelope; send "
                     "both.");
    const ReturnedCheckpoints& keys = handovers_->returned_;
    CheckpointPaths named;
    SEALTRAIN_ASSIGN(named, keys.uploadedCheckpoint(files.front()));
    WorkerInfo worker;
    std::string baseSha256;
    if (auto grouped = handovers_->inGroup_([&]() -> Result<void> {
            SEALTRAIN_ASSIGN(worker, handovers_->caller(serial_, "Workers.UploadCheckpoint"));
            formats::JobSpec spec;
            SEALTRAIN_ASSIGN(
                spec, formats::parseJobSpec(dispatch_->job.specJson, formats::kJobSpecCeiling));
            SEALTRAIN_ASSIGN(baseSha256, startingDigest(handovers_->platform_.database(), spec));
            return success();
        });
        !grouped)
        return grouped.error();
    // Verified before anything is recorded: signed by this worker's enrolled key, sealed under
    // the job's own key, its plaintext the statement's, of this job and run.
    auto verified = keys.verifyUpload(worker, *dispatch_, named, maxBytes, baseSha256);
    if (!verified)
        return handovers_->refuseCheckpoint(serial_, {dispatch_->job.id, dispatch_->attempt},
                                            verified.error());
    // Moved into place only once the record is accepted (scheduler.h): a refused upload never
    // replaces a recorded checkpoint's files.
    const JobCheckpoint record = std::move(verified).value();
    const std::int64_t job = dispatch_->job.id;
    if (auto grouped = handovers_->inGroup_([&]() -> Result<void> {
            return handovers_->scheduler_.recordCheckpoint(
                worker, record, [&]() { return keys.keepUpload(job, named); });
        });
        !grouped)
        return grouped.error();
    return record;
}

}  // namespace sealtrain::core
