// The scheduler (issue #16; docs/operations/scheduling.md): approved jobs wait in a queue (state
// `queued`, highest priority first, then oldest), a worker of the job's pool takes the next one
// (`running`, with a new attempt number), reports metrics and checkpoints for that attempt, and
// finishes it. A worker that stops heartbeating, or is revoked, loses its job: the job is queued
// again for another worker, which resumes from the newest verified checkpoint, up to the spec's
// max_restarts (then it fails). Every transition is audited, as the system actor "control-plane"
// except where a session is given; metrics and heartbeats are not audited, checkpoints are.
//
// Fencing: every call about a job names the attempt it belongs to; a call for an attempt that is
// no longer the job's current one (the worker was presumed lost, the job was cancelled) is
// refused, so a worker that comes back late can not overwrite anything. The refusal is
// PermissionDenied (base/result.h has no FailedPrecondition), as is any call of a revoked
// worker: from these calls, the API answers it as FAILED_PRECONDITION and the worker stops.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/jobs/scheduling/budgets.h"
#include "sealtrain/core/workers/workers.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sealtrain::core {

namespace internal {
struct JobRow;
}  // namespace internal

class AuditedTransactions;
class Database;
class ModelLookup;

// A job handed to a worker.
struct Dispatch {
    JobInfo job;               // state running, its worker and attempt set
    std::int64_t attempt = 0;  // 1 for the first run, +1 at each restart
    std::string runId;         // "job-<id>": every attempt continues the same run
    std::string datasetId;
};

// A checkpoint a worker uploaded and the control plane verified (signature by that worker's
// enrolled key, lineage naming this job and step, plaintext hash matching).
struct JobCheckpoint {
    std::int64_t jobId = 0;
    std::int64_t step = 0;
    std::int64_t attempt = 0;
    std::string worker;           // whose key signed it
    std::string sealedSha256;     // hex, of the .sealed file
    std::string plaintextSha256;  // hex, from the signed statement
    std::string fileBase;  // the checkpoint's file name without .sealed (in the job's folder)
    std::int64_t recorded = 0;
};

// One metrics line of a job (JSON, as the trainer wrote it). Stored once per (kind, step), and
// never replaced: a line sent again after a reconnect, or recomputed by a resumed attempt,
// leaves the row that was recorded first (a later attempt can not rewrite an earlier one's).
struct MetricsLine {
    std::string kind;  // the line's "kind" ("step", "checkpoint", "end", ...)
    std::int64_t step = 0;
    std::string json;
};

// A trainer's metrics line as a worker relays it (docs/trainer.md, "Metrics"): a JSON object
// with a string "kind" (not "log", which is a log line's) and, where it has one, an integer
// "step" (0 otherwise). InvalidArgument, saying what to send, for anything else.
[[nodiscard]] Result<MetricsLine> parseMetricsLine(const std::string& text);

// Each attempt's log lines are numbered from 0 by its worker and stored as lines of kind "log"
// at step attempt * kLogLinesPerAttempt + number, so that attempts never share a step.
inline constexpr std::int64_t kLogLinesPerAttempt = 1'000'000'000;

// The log lines `texts` of `attempt`, the first numbered `firstLine`, as metrics lines (each
// text stored as a JSON string). InvalidArgument when a number falls outside 0 to
// kLogLinesPerAttempt - 1, where it would name another attempt's line.
[[nodiscard]] Result<std::vector<MetricsLine>>
logLines(std::int64_t attempt, std::int64_t firstLine, const std::vector<std::string>& texts);

class Scheduler final {
public:
    // `gate` and `models` (the registry's answers, jobs/model_lookup.h) must outlive this object.
    Scheduler(AuditedTransactions& gate, const ModelLookup& models, const JobPolicy& policy);

    void setPolicy(const JobPolicy& policy);
    [[nodiscard]] const JobPolicy& policy() const noexcept { return policy_; }

    // The control plane queues a job once it is approved exactly as it is (job.queue, system).
    [[nodiscard]] Result<JobInfo> enqueue(std::int64_t jobId);
    // The next queued job for `worker` (its pool; the dataset's classification allowed in that
    // pool by the policy; the project's GPU-hour budget not exhausted), now running on it; nullopt
    // when none waits. A job whose classification the worker's pool may not see is not handed
    // over: the refusal is audited (job.dispatch, denied) and the job waits for a worker of an
    // allowed pool. A job whose project has no budget left fails, audited. A worker that
    // already runs a job gets nothing.
    [[nodiscard]] Result<std::optional<Dispatch>> take(const WorkerInfo& worker);
    // The worker's current attempt at `jobId` (running): the job, or denied (fencing), the
    // refusal audited as `action` with the worker as its actor (issue #54: a worker's fetch of
    // another attempt's data leaves an entry).
    [[nodiscard]] Result<Dispatch> current(const WorkerInfo& worker, std::int64_t jobId,
                                           std::int64_t attempt, std::string_view action);
    // Stores metrics lines of the attempt (idempotent per kind and step); also accounts
    // `gpuHours` (the attempt's total so far, from the worker's report) against the budget.
    // Returns true when the job must stop now (cancelled, over its GPU-hour or CPU-hour limit,
    // or its project's budget is exhausted: the last two end it as failed, audited). A CPU job's
    // hours are the control plane's own measure (core::chargedCpus), taken at each report.
    [[nodiscard]] Result<bool> report(const WorkerInfo& worker, std::int64_t jobId,
                                      std::int64_t attempt, const std::vector<MetricsLine>& lines,
                                      double gpuHours);
    // Stores metrics lines of `attempt` of a job that the control plane's own trainer runs
    // (Jobs::start; no worker), as report() does: each (kind, step) once, not audited. Refused
    // unless that attempt runs here now.
    [[nodiscard]] Result<void> recordOwnRun(std::int64_t jobId, std::int64_t attempt,
                                            const std::vector<MetricsLine>& lines);
    // Records a verified checkpoint (job.checkpoint, actor the worker, with its digests).
    // `keepFiles` moves its files into place; it runs only once every check has passed (the
    // attempt is current, no other checkpoint of that step is recorded), so a refused upload
    // never touches a recorded checkpoint's files. The same checkpoint uploaded again is
    // acknowledged without a new entry and without `keepFiles`.
    [[nodiscard]] Result<void> recordCheckpoint(const WorkerInfo& worker,
                                                const JobCheckpoint& checkpoint,
                                                const std::function<Result<void>()>& keepFiles);
    // Audits a checkpoint upload refused before it could be recorded (job.checkpoint, denied,
    // actor the worker, `why` as the reason: a forged or foreign checkpoint, an attempt that is
    // not the worker's) and returns `why`.
    [[nodiscard]] Result<void> refuseCheckpoint(const WorkerInfo& worker, std::int64_t jobId,
                                                std::int64_t attempt, const Error& why);
    // The newest recorded checkpoint of a job, to resume from; nullopt when none.
    [[nodiscard]] Result<std::optional<JobCheckpoint>> newestCheckpoint(std::int64_t jobId);
    // Every recorded checkpoint of a job, oldest first.
    [[nodiscard]] Result<std::vector<JobCheckpoint>> checkpoints(std::int64_t jobId);
    // The attempt ended (job.finish, actor the worker): succeeded or failed, with its GPU hours.
    // A job cancelled while it ran stays cancelled (its hours are still accounted).
    [[nodiscard]] Result<JobInfo> finish(const WorkerInfo& worker, std::int64_t jobId,
                                         std::int64_t attempt, bool succeeded, double gpuHours,
                                         const std::string& reason);
    // The worker is gone (its heartbeat stopped, or it was revoked): its running job is queued
    // again (job.requeue, restarts + 1) or, past max_restarts, fails. Returns the jobs touched.
    [[nodiscard]] Result<std::vector<std::int64_t>> releaseWorker(std::int64_t workerId,
                                                                  const std::string& reason);
    // Every active worker with a running job whose last heartbeat is older than `now - timeout`
    // (Unix seconds), released as above. Returns the workers released.
    [[nodiscard]] Result<std::vector<std::int64_t>> releaseSilent(std::int64_t now,
                                                                  std::int64_t timeoutSeconds);
    // The jobs a worker must stop (cancelled while it ran them, or past a limit), for its
    // heartbeat's answer. A running CPU job's CPU-hours are measured here first, so a job that
    // sends no metrics is stopped at its limit too (failed, audited).
    [[nodiscard]] Result<std::vector<std::int64_t>> jobsToStop(std::int64_t workerId);
    // The job's metrics lines, in (step, kind) order, from `fromStep`, for whoever may see the
    // job as Jobs::show allows (refusals audited).
    // `what` is the caller's ask, "metrics", "logs" or "" (metrics), judged after the caller
    // (issue #54): anything else is refused in the call's entry.
    [[nodiscard]] Result<std::vector<MetricsLine>> metrics(const std::string& session,
                                                           std::int64_t jobId,
                                                           std::int64_t fromStep,
                                                           std::string_view what = "");

private:
    // take()'s three outcomes for one queued job, each in an audited transaction of its own.
    [[nodiscard]] Result<void> refuseDispatch(const WorkerInfo& worker, std::int64_t jobId,
                                              const std::string& pool, const std::string& reason);
    // Whether the job's submitter may still read every one of `datasets` (the job's own and those
    // behind its starting model): dataset.read in the project, a read grant, not disabled.
    [[nodiscard]] Result<bool> submitterMayRead(const internal::JobRow& job,
                                                const std::vector<std::string>& datasets);
    [[nodiscard]] Result<void> failForBudget(std::int64_t jobId, Hours hours,
                                             std::int64_t usedMilli, double budgetHours);
    // Records a running job's CPU-hours by `now` and says why it must stop (over its GPU-hour
    // or CPU-hour limit, its project's budget exhausted), or nothing. `gpuUsedMilli` is its
    // GPU use as now recorded.
    [[nodiscard]] Result<std::string> chargeAndCheck(const internal::JobRow& job,
                                                     std::int64_t gpuUsedMilli, std::int64_t now);
    [[nodiscard]] Result<std::optional<Dispatch>> dispatch(const WorkerInfo& worker,
                                                           std::int64_t jobId);
    // A worker's call on an attempt that is not its current one (fencing), or from a worker no
    // longer active: `why`, audited as `action` on the job with the worker as its actor (denied,
    // or failed for any other error); the log's own error when the entry can not be written.
    [[nodiscard]] Error refuseAttempt(const WorkerInfo& worker, std::string_view action,
                                      std::int64_t jobId, std::int64_t attempt, const Error& why);
    // Ends a running job as failed for the control plane (a limit reached), audited.
    [[nodiscard]] Result<void> stopForLimit(std::int64_t jobId, std::int64_t attempt,
                                            const std::string& reason);

    AuditedTransactions& gate_;
    Database& database_;
    const ModelLookup& models_;
    JobPolicy policy_;
    // The (job, pool) pairs whose refused dispatch is already in the audit log: a worker that
    // polls every few seconds does not add an entry each time.
    std::set<std::pair<std::int64_t, std::string>> refusalsAudited_;
};

}  // namespace sealtrain::core
