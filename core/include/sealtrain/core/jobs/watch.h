// Watching a job (Jobs.WatchJob): a client follows a job's state, metrics, log lines and
// checkpoints as a stream instead of polling, and the log records the watch once (job.watch)
// rather than every poll. Each look after the first is a read that appends nothing on success;
// the session and the caller's right to see the job are checked again at every look, and a
// refusal is audited, so a revoked session or a grant taken away ends the watch.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

// Where a watch is: what it has reported so far.
struct JobWatchCursor {
    std::int64_t metricsRow = 0;       // the newest metrics or log line reported (its row)
    std::int64_t checkpointStep = -1;  // the newest checkpoint reported
    std::string state;                 // the state last reported
    std::int64_t updated = -1;         // the job's updated time last reported
};

struct JobWatchUpdate {
    std::optional<JobInfo> job;      // the job, when it changed since the cursor
    std::vector<MetricsLine> lines;  // metrics and log lines (kind "log"), as stored
    std::vector<JobCheckpoint> checkpoints;
    bool ended = false;  // the job has ended and every line was reported
};

// A look reports at most this many lines; the next look goes on from there.
inline constexpr std::int64_t kMaxWatchLines = 2000;

[[nodiscard]] bool jobHasEnded(JobState state) noexcept;

class JobWatches final {
public:
    // `gate` and `scheduler` must outlive this object.
    JobWatches(AuditedTransactions& gate, Scheduler& scheduler);

    // Starts a watch of job `jobId` for whoever may see it as Jobs::show allows (job.watch,
    // audited once): the job as it is.
    [[nodiscard]] Result<JobInfo> open(const std::string& session, std::int64_t jobId);
    // What changed since `cursor`, which moves on.
    [[nodiscard]] Result<JobWatchUpdate> poll(const std::string& session, std::int64_t jobId,
                                              JobWatchCursor& cursor);
    // Audits a watch turned away because too many are open (`why`, ResourceExhausted), as a
    // failed job.watch by its caller; returns the error to answer with.
    [[nodiscard]] Error refuseBusy(const std::string& session, std::int64_t jobId,
                                   const Error& why);

private:
    AuditedTransactions& gate_;
    Scheduler& scheduler_;
};

}  // namespace sealtrain::core
