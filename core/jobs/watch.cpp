// Watching a job: one audited opening, then reads that append nothing (jobs/watch.h).
#include "sealtrain/core/jobs/watch.h"

#include "jobs/rows.h"
#include "store/audited_transaction.h"

namespace sealtrain::core {

bool jobHasEnded(JobState state) noexcept
{
    return state == JobState::Succeeded || state == JobState::Failed || state == JobState::Cancelled
           || state == JobState::Rejected;
}

JobWatches::JobWatches(AuditedTransactions& gate, Scheduler& scheduler)
    : gate_(gate)
    , scheduler_(scheduler)
{
}

Result<JobInfo> JobWatches::open(const std::string& session, std::int64_t jobId)
{
    Database& database = gate_.database();
    return gate_.performReturning(session, internal::jobRequest(database, jobId, "watch", ""),
                                  [&](const Caller& caller, audit::EntryDraft&) -> Result<JobInfo> {
                                      auto job = internal::visibleJob(gate_, caller, jobId);
                                      if (!job)
                                          return job.error();
                                      return job->info;
                                  });
}

Result<JobWatchUpdate> JobWatches::poll(const std::string& session, std::int64_t jobId,
                                        JobWatchCursor& cursor)
{
    Database& database = gate_.database();
    const AuditedRequest request = internal::jobRequest(database, jobId, "watch", "");
    auto caller = gate_.identify(session, request);
    if (!caller)
        return caller.error();
    auto job = internal::visibleJob(gate_, *caller, jobId);
    if (!job) {
        // Access taken away while watching: the refusal is audited and the watch ends.
        (void)gate_.recordRefusal(*caller, request, audit::Outcome::Denied, job.error());
        return job.error();
    }
    JobWatchUpdate update;
    const std::string state = jobStateName(job->info.state);
    if (state != cursor.state || job->info.updated != cursor.updated) {
        update.job = job->info;
        cursor.state = state;
        cursor.updated = job->info.updated;
    }
    SEALTRAIN_TRY(database.query(
        "SELECT rowid, kind, step, line FROM job_metrics WHERE job_id = ? AND rowid > ? "
        "ORDER BY rowid LIMIT ?",
        {jobId, cursor.metricsRow, kMaxWatchLines}, [&](const Statement& row) {
            cursor.metricsRow = row.integer(0);
            update.lines.push_back({row.text(1), row.integer(2), row.text(3)});
        }));
    auto checkpoints = scheduler_.checkpoints(jobId);
    if (!checkpoints)
        return checkpoints.error();
    for (JobCheckpoint& checkpoint : *checkpoints) {
        if (checkpoint.step <= cursor.checkpointStep)
            continue;
        cursor.checkpointStep = checkpoint.step;
        update.checkpoints.push_back(std::move(checkpoint));
    }
    update.ended = jobHasEnded(job->info.state)
                   && update.lines.size() < static_cast<std::size_t>(kMaxWatchLines);
    return update;
}

Error JobWatches::refuseBusy(const std::string& session, std::int64_t jobId, const Error& why)
{
    auto admitted =
        gate_.admit(session, internal::jobRequest(gate_.database(), jobId, "watch", ""),
                    [&](const Caller&, audit::EntryDraft&) -> Result<void> { return why; });
    if (!admitted)
        return admitted.error();
    return Error(ErrorCode::Internal, "A watch refused as busy was let through; report it.");
}

}  // namespace sealtrain::core
