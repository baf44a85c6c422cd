// Experiment tracking (issue #30; docs/runs.md): every job that ever started is a run, whose
// parameters are the job's canonical spec, with its dataset, its attempts (the worker of each, the
// checkpoint step it resumed from, how it ended), its recorded checkpoints, and the metrics history
// its workers relayed: each step once, marked with the attempt that recorded it. Reads only; each
// call is one audit entry (run.list, run.show, run.metrics) for whoever may see the job as
// Jobs::show allows (job.submit or job.approve in its project), refusals audited.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/store/list_page.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

// One attempt of a run: the first, then one more for each restart.
struct RunAttempt {
    std::int64_t attempt = 0;
    std::string worker;  // "" when the control plane's own trainer ran it
    std::int64_t started = 0;
    std::int64_t ended = 0;            // 0 while it runs
    std::string outcome;               // running, succeeded, failed, cancelled, lost
    std::string reason;                // why it failed, was cancelled or lost its worker
    std::int64_t resumedFromStep = 0;  // the checkpoint it started from; 0: from scratch
    // The steps whose metrics this attempt recorded (0 and 0: none). A step a resumed attempt
    // computed again keeps the line recorded first (scheduler.h).
    std::int64_t firstStep = 0;
    std::int64_t lastStep = 0;
};

// One training step of the history, from the trainer's "step" line (docs/trainer.md, "Metrics").
struct RunPoint {
    std::int64_t step = 0;
    std::int64_t attempt = 0;  // the attempt that recorded it; 0: recorded before tracking began
    double loss = 0.0;
    std::optional<double> validationLoss;  // at the steps the spec validates
    double learningRate = 0.0;
    double gradientNorm = 0.0;
    double tokensPerSecond = 0.0;
    double mfu = 0.0;  // model FLOPs utilisation against the node's measured ceiling; 0: none
    std::int64_t memoryBytes = 0;  // the trainer's resident memory
};

// What a run came to, from its history.
struct RunSummary {
    std::int64_t stepsPlanned = 0;  // the spec's schedule.steps
    std::int64_t stepsDone = 0;     // the last step recorded
    std::optional<double> lastLoss;
    std::optional<double> lastValidationLoss;
    std::optional<double> bestValidationLoss;  // RunReads::show only
    std::int64_t bestValidationStep = 0;
    double meanTokensPerSecond = 0.0;  // RunReads::show only
    double meanMfu = 0.0;              // RunReads::show only
    std::int64_t peakMemoryBytes = 0;  // RunReads::show only
};

struct RunInfo {
    JobInfo job;  // parameters: job.specJson; outcome: job.state and job.reason
    std::vector<RunAttempt> attempts;        // oldest first
    std::vector<JobCheckpoint> checkpoints;  // RunReads::show only, oldest first
    RunSummary summary;
};

// A page of a run's history: the steps after `afterStep`, at most `limit`.
struct RunMetricsPage {
    std::int64_t afterStep = 0;
    std::uint32_t limit = 5000;
};

inline constexpr std::uint32_t kMaxRunPoints = 20000;

struct RunPoints {
    std::vector<RunPoint> points;    // step order
    std::int64_t nextAfterStep = 0;  // the page's last step when more follow; 0: no more
};

// The summary of `points` (a run's whole history in step order) for a spec of `stepsPlanned`.
[[nodiscard]] RunSummary summarizeRun(const std::vector<RunPoint>& points,
                                      std::int64_t stepsPlanned);

// A "step" metrics line as a point; InvalidArgument when it is not one (a trainer's line that
// lacks the step or the loss).
[[nodiscard]] Result<RunPoint> parseRunPoint(const std::string& json, std::int64_t attempt);

class RunReads final {
public:
    // `gate` and `scheduler` must outlive this object.
    RunReads(AuditedTransactions& gate, Scheduler& scheduler);

    // One page of the runs the caller may see, newest first: the jobs that started at least once,
    // each with its attempts and a summary from its last lines (run.list, with the page's start).
    [[nodiscard]] Result<Paged<RunInfo>> list(const std::string& session,
                                              const ListPage& page = {});
    // Run `jobId` whole: attempts, checkpoints, and the summary of its whole history (run.show).
    // NotFound, saying so, for a job that never started.
    [[nodiscard]] Result<RunInfo> show(const std::string& session, std::int64_t jobId);
    // A page of run `jobId`'s history (run.metrics, with the page's start).
    [[nodiscard]] Result<RunPoints> metrics(const std::string& session, std::int64_t jobId,
                                            const RunMetricsPage& page = {});

private:
    AuditedTransactions& gate_;
    Scheduler& scheduler_;
};

}  // namespace sealtrain::core
