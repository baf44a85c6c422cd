// The scheduler's checkpoints (scheduler.h): a worker's upload recorded only when it is of the
// attempt's own job, run and dataset, never replacing a recorded one, each refusal audited with
// the worker; and the recorded checkpoints read back.
#include "sealtrain/core/jobs/scheduling/scheduler.h"

#include "jobs/scheduling/attempts.h"
#include "sealtrain/core/store/database.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {
namespace {

using internal::currentAttempt;
using internal::workerActor;

constexpr std::size_t kMaxFileBase = 128;

bool isHex64(const std::string& text)
{
    return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

bool isPlainFileBase(const std::string& name)
{
    if (name.empty() || name.size() > kMaxFileBase || name.front() == '.')
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
               || c == '.' || c == '_' || c == '-';
    });
}

JobCheckpoint readCheckpoint(const Statement& row)
{
    return {row.integer(0), row.integer(1), row.integer(2), row.text(3),
            row.text(4),    row.text(5),    row.text(6),    row.integer(7)};
}

constexpr std::string_view kCheckpointColumns =
    "c.job_id, c.step, c.attempt, w.name, c.sealed_sha256, c.plaintext_sha256, c.file_base, "
    "c.recorded FROM job_checkpoints c JOIN workers w ON w.id = c.worker_id";

}  // namespace

Result<void> Scheduler::recordCheckpoint(const WorkerInfo& worker, const JobCheckpoint& checkpoint,
                                         const std::function<Result<void>()>& keepFiles)
{
    if (checkpoint.step < 0 || !isHex64(checkpoint.sealedSha256)
        || !isHex64(checkpoint.plaintextSha256) || !isPlainFileBase(checkpoint.fileBase))
        return Error(ErrorCode::InvalidArgument,
                     "A checkpoint record needs a step from 0, two SHA-256 digests in lowercase "
                     "hex and a plain file name; send the verified checkpoint's own.");
    // The same checkpoint uploaded again (after a reconnect) is acknowledged without a new
    // entry.
    std::string recordedSealed;
    SEALTRAIN_TRY(database_.queryOne(
        "SELECT sealed_sha256 FROM job_checkpoints WHERE job_id = ? AND step = ?",
        {checkpoint.jobId, checkpoint.step},
        [&](const Statement& row) { recordedSealed = row.text(0); }));
    if (recordedSealed == checkpoint.sealedSha256) {
        SEALTRAIN_TRY(
            currentAttempt(database_, worker.id, checkpoint.jobId, checkpoint.attempt, false));
        return success();
    }
    return gate_.performWithoutSession(
        {"job.checkpoint", "", "", {"job", std::to_string(checkpoint.jobId)}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            draft.actor = workerActor(worker);
            draft.details.push_back(audit::textDetail("step", std::to_string(checkpoint.step)));
            draft.details.push_back(audit::textDetail("sealed_sha256", checkpoint.sealedSha256));
            draft.details.push_back(
                audit::textDetail("plaintext_sha256", checkpoint.plaintextSha256));
            draft.details.push_back(audit::textDetail("worker", worker.name));
            draft.details.push_back(
                audit::textDetail("attempt", std::to_string(checkpoint.attempt)));
            auto job =
                currentAttempt(database_, worker.id, checkpoint.jobId, checkpoint.attempt, false);
            if (!job) {
                draft.outcome = job.error().code() == ErrorCode::PermissionDenied
                                    ? audit::Outcome::Denied
                                    : audit::Outcome::Failed;
                draft.reason = job.error().message();
                return job.error();
            }
            if (!recordedSealed.empty()) {
                draft.outcome = audit::Outcome::Failed;
                draft.reason = "another checkpoint of this step is recorded";
                return Error(ErrorCode::AlreadyExists,
                             fmt::format("Job {} already has another checkpoint at step {}; keep "
                                         "training and upload the next one.",
                                         checkpoint.jobId, checkpoint.step));
            }
            SEALTRAIN_TRY(keepFiles());
            return database_.run(
                "INSERT INTO job_checkpoints (job_id, step, attempt, worker_id, sealed_sha256, "
                "plaintext_sha256, file_base, recorded) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                {checkpoint.jobId, checkpoint.step, checkpoint.attempt, worker.id,
                 checkpoint.sealedSha256, checkpoint.plaintextSha256, checkpoint.fileBase,
                 gate_.now()});
        });
}

Result<void> Scheduler::refuseCheckpoint(const WorkerInfo& worker, std::int64_t jobId,
                                         std::int64_t attempt, const Error& why)
{
    return gate_.performWithoutSession(
        {"job.checkpoint", "", "", {"job", std::to_string(jobId)}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            draft.actor = workerActor(worker);
            draft.details.push_back(audit::textDetail("worker", worker.name));
            draft.details.push_back(audit::textDetail("attempt", std::to_string(attempt)));
            draft.outcome = audit::Outcome::Denied;
            draft.reason = why.message();
            return why;
        });
}

Result<std::optional<JobCheckpoint>> Scheduler::newestCheckpoint(std::int64_t jobId)
{
    std::optional<JobCheckpoint> newest;
    SEALTRAIN_TRY(database_.queryOne("SELECT " + std::string(kCheckpointColumns)
                                         + " WHERE c.job_id = ? ORDER BY c.step DESC LIMIT 1",
                                     {jobId},
                                     [&](const Statement& row) { newest = readCheckpoint(row); }));
    return newest;
}

Result<std::vector<JobCheckpoint>> Scheduler::checkpoints(std::int64_t jobId)
{
    std::vector<JobCheckpoint> all;
    SEALTRAIN_TRY(database_.query(
        "SELECT " + std::string(kCheckpointColumns) + " WHERE c.job_id = ? ORDER BY c.step",
        {jobId}, [&](const Statement& row) { all.push_back(readCheckpoint(row)); }));
    return all;
}

}  // namespace sealtrain::core
