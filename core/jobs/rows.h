// Job rows as the services that change jobs read them (jobs.cpp, scheduler.cpp): the columns,
// the row with what JobInfo does not show, and the helpers both need. Not installed.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/jobs/model_lookup.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/store/database.h"
#include "store/audited_transaction.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core::internal {

// GPU hours are kept in the database as whole thousandths.
[[nodiscard]] std::int64_t toMilli(double hours);
[[nodiscard]] double fromMilli(std::int64_t milli);

// A job row, with what JobInfo does not carry.
struct JobRow {
    JobInfo info;
    std::int64_t submitterId = 0;
    std::vector<std::uint8_t> specHash;
    std::vector<std::uint8_t> approvedHash;
    std::int64_t workerId = 0;  // 0: none
    // GPU thousandths of an hour that the attempts before the current one used: a report of the
    // current attempt's total sets the job's use to this plus that total.
    std::int64_t earlierMilli = 0;
    bool attemptEnded = false;  // the current attempt's worker called finish (or it never ran)
    // The same for CPU-hours, which the control plane measures (issue #54): the current attempt
    // started at `started` (Unix seconds) and is charged `chargedCpus` cores.
    std::int64_t cpuEarlierMilli = 0;
    std::int64_t chargedCpus = 0;
    std::int64_t started = 0;
};

// The CPU-hours, in thousandths, `job` has used by `now`: its earlier attempts' plus the current
// attempt's wall-clock time since it started times its charged cores (never less than what was
// recorded). What the scheduler and the control plane's own runs charge
// (jobs/scheduling/budgets.h).
[[nodiscard]] std::int64_t cpuMilliUsedBy(const JobRow& job, std::int64_t now);

[[nodiscard]] Result<JobRow> loadJob(const Database& database, std::int64_t id);

// The vetting check of a fine-tuning spec's model.init (jobs/vetting/base_model.cpp): the version
// exists and is of the job's project, its shape is the spec's and its tokenizer is that of the
// dataset `datasetId` (as `tokenizerOf` reads it). `pinned` is set to the version as "NAME@VERSION"
// once it resolved, so an alias that moves after the review can not change what was approved. What
// vetting resolved a spec's references to: the dataset id, the starting model's version.
struct Pins {
    std::string datasetId;
    std::string init;
};

// The automatic vetting of `spec` for `submitterId` under `policy`: every check, passed or not,
// in the order the approver reads them; what its references resolved to in `pins`.
[[nodiscard]] std::vector<VettingCheck>
vetSpec(const Database& database, const JobPolicy& policy, const TokenizerLookup& tokenizerOf,
        const ModelLookup& models, const formats::JobSpec& spec, std::int64_t submitterId,
        std::int64_t excludeJob, Pins& pins);

// The data behind the version `label` a job starts from (issue #48): "base model data", ok when
// `submitterId` holds a read grant on every dataset behind it and each one's classification is in
// `poolAllowed` (nullptr: the pool is not in the policy).
[[nodiscard]] VettingCheck vetBaseModelData(const Database& database, const ModelLookup& models,
                                            const std::string& label, std::int64_t submitterId,
                                            const std::vector<std::string>* poolAllowed,
                                            const std::string& pool);
[[nodiscard]] VettingCheck vetBaseModel(const Database& database, const ModelLookup& models,
                                        const formats::JobSpec& spec, const std::string& datasetId,
                                        const TokenizerLookup& tokenizerOf, std::string& pinned);
// The job as a call left it.
[[nodiscard]] Result<JobInfo> reloaded(const Database& database, std::int64_t id);
// Every job matching `condition` (SQL over the alias `j`, with its ?s bound to `arguments`), in
// the order `orderBy` gives (which may end with a LIMIT).
[[nodiscard]] Result<std::vector<JobRow>> loadJobs(const Database& database,
                                                   std::string_view condition, SqlValues arguments,
                                                   std::string_view orderBy);

// The call `verb` on job `id`, scoped to its project (read before the transaction, as a
// submission's is; an unknown number is refused inside it).
[[nodiscard]] AuditedRequest jobRequest(const Database& database, std::int64_t id,
                                        std::string_view verb, std::string_view permission);

// Someone other than the submitter approved exactly the current spec.
[[nodiscard]] bool approvedAsIs(const JobRow& job);
[[nodiscard]] Error wrongState(const JobInfo& job, const std::string& action);

// The read rule of a dataset's key release (Datasets::authorizeRead) checked inside another
// audited call (jobs/sampling.cpp): `caller` holds dataset.read and a read grant on `datasetId`;
// PermissionDenied in one sentence, saying it is for `what` ("sampling job 4"), otherwise.
[[nodiscard]] Result<void> requireReadRelease(AuditedTransactions& gate, const Caller& caller,
                                              const std::string& datasetId,
                                              const std::string& what);

// Job `id` when `caller` may see it (job.submit or job.approve in its project), else denied.
[[nodiscard]] Result<JobRow> visibleJob(AuditedTransactions& gate, const Caller& caller,
                                        std::int64_t id);

// One page of the jobs `caller` may see (job.submit or job.approve in the job's project), newest
// first; only those that started at least once when `startedOnly` (jobs/list.cpp). Reads a
// bounded number of rows per page, so a page may be short and still have a next one.
[[nodiscard]] Result<Paged<JobRow>> listVisibleJobs(AuditedTransactions& gate, const Caller& caller,
                                                    const ListPage& page, bool startedOnly);

// Metrics lines (jobs/scheduling/metrics.cpp): a batch fits what the table keeps (at most 10,000
// lines, each with a kind of 1 to 32 characters, a step from 0 and at most 64 KiB of JSON); stored
// each (kind, step) once with the attempt that sent it: a line sent again, or computed again by a
// resumed attempt, leaves the row recorded first (scheduler.h, MetricsLine). Inside the
// caller's transaction.
[[nodiscard]] Result<void> checkMetricsLines(const std::vector<MetricsLine>& lines);
[[nodiscard]] Result<void> storeMetricsLines(Database& database, std::int64_t jobId,
                                             std::int64_t attempt,
                                             const std::vector<MetricsLine>& lines);

// A job's attempts (jobs/runs/attempts.cpp; runs.h): the row of attempt `attempt` opened when it
// starts (on worker `workerId`, 0 for the control plane's own trainer), resuming from the job's
// newest recorded checkpoint, and closed once when it ends with `outcome` (succeeded, failed,
// cancelled, or lost: its worker went silent or was revoked) and the reason. Both run inside the
// caller's audited transaction, so an attempt is recorded exactly when its audit entry is.
[[nodiscard]] Result<void> openAttempt(Database& database, std::int64_t jobId, std::int64_t attempt,
                                       std::int64_t workerId, std::int64_t now);
[[nodiscard]] Result<void> closeAttempt(Database& database, std::int64_t jobId,
                                        std::int64_t attempt, std::string_view outcome,
                                        const std::string& reason, std::int64_t now);

// The actor of the control plane's own steps (queueing, dispatching, requeueing).
[[nodiscard]] audit::Actor controlPlaneActor();

}  // namespace sealtrain::core::internal
