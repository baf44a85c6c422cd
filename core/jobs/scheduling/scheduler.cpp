// The scheduler (scheduler.h): the queue, dispatch with the pool, classification and budget
// checks, fencing by attempt, metrics, verified checkpoints, how an attempt ends, and the release
// of a worker that went silent or was revoked (tables of migration 6, docs/formats/database.md;
// the rules in docs/operations/scheduling.md).
#include "sealtrain/core/jobs/scheduling/scheduler.h"

#include "sealtrain/core/jobs/scheduling/budgets.h"

#include "jobs/rows.h"
#include "jobs/scheduling/attempts.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/jobs/states.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/formats/job_spec.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::core {
namespace {

using internal::controlPlaneActor;
using internal::currentAttempt;
using internal::fromMilli;
using internal::JobRow;
using internal::loadJob;
using internal::reloaded;
using internal::toMilli;
using internal::workerActor;

// Fencing: a call about an attempt that is no longer the job's current one on this worker. The
// API answers it as FAILED_PRECONDITION; the worker stops the attempt.
Error staleAttempt(std::int64_t jobId, std::int64_t attempt)
{
    return denied(fmt::format("Attempt {} of job {} is no longer current on this worker; stop it.",
                              attempt, jobId));
}

// The pool of worker `workerId` when it is active; denied when it is revoked or unknown.
Result<std::string> activePool(const Database& database, std::int64_t workerId)
{
    std::string pool;
    auto found = database.queryOne("SELECT pool FROM workers WHERE id = ? AND state = 'active'",
                                   {workerId}, [&](const Statement& row) { pool = row.text(0); });
    if (!found)
        return found.error();
    if (!*found)
        return denied("This worker is revoked or not enrolled; enroll it again with a new token.");
    return pool;
}

// The job's dataset, then those behind the model version its spec starts from (pinned to
// NAME@VERSION at vetting), once each.
Result<std::vector<std::string>> jobDatasets(const Database& database, const ModelLookup& models,
                                             const JobRow& job, const formats::JobSpec& spec)
{
    std::vector<std::string> datasets{job.info.datasetId};
    if (spec.model.init.empty())
        return datasets;
    auto reference = parseModelReference(spec.model.init);
    if (!reference)
        return reference.error();
    auto behind = models.datasetsBehind(database, reference->name, reference->version);
    if (!behind)
        return behind.error();
    for (std::string& id : *behind)
        if (std::find(datasets.begin(), datasets.end(), id) == datasets.end())
            datasets.push_back(std::move(id));
    return datasets;
}

// The dataset's classification, or empty when the job names no dataset known here.
Result<std::string> classificationOf(const Database& database, const std::string& datasetId)
{
    std::string classification;
    SEALTRAIN_TRY(database.queryOne("SELECT classification FROM datasets WHERE id = ?", {datasetId},
                                    [&](const Statement& row) { classification = row.text(0); }));
    return classification;
}

Result<void> checkGpuHours(double gpuHours)
{
    if (std::isfinite(gpuHours) && gpuHours >= 0.0 && gpuHours < 1e9)
        return success();
    return Error(ErrorCode::InvalidArgument,
                 "The GPU hours reported must be a number from 0; report the attempt's total.");
}

// A change the control plane makes with an UPDATE that names the state it moves from, checked
// against the state machine (jobs/states.h) all the same.
Result<void> movable(JobState from, JobState to, std::string_view action)
{
    if (jobMayMove(from, to, JobMover::ControlPlane, action))
        return success();
    return Error(ErrorCode::Internal,
                 fmt::format("The job state machine does not let the control plane move a job "
                             "from {} to {} ({}); report this as a bug.",
                             jobStateName(from), jobStateName(to), action));
}

}  // namespace

audit::Actor internal::workerActor(const WorkerInfo& worker)
{
    return {audit::ActorKind::Worker, worker.name, "", "mtls"};
}

// The job when `attempt` is its current one on `workerId`, and it is running, or (with
// `endedToo`) was cancelled or failed by the control plane while it ran and the worker has not
// finished it yet. Denied otherwise (fencing).
Result<JobRow> internal::currentAttempt(const Database& database, std::int64_t workerId,
                                        std::int64_t jobId, std::int64_t attempt, bool endedToo)
{
    SEALTRAIN_TRY(activePool(database, workerId));
    auto job = loadJob(database, jobId);
    if (!job)
        return job.error().code() == ErrorCode::NotFound ? staleAttempt(jobId, attempt)
                                                         : job.error();
    const JobState state = job->info.state;
    const bool live = state == JobState::Running
                      || (endedToo && (state == JobState::Cancelled || state == JobState::Failed));
    if (job->workerId != workerId || job->info.attempt != attempt || job->attemptEnded || !live)
        return staleAttempt(jobId, attempt);
    return job;
}

Scheduler::Scheduler(AuditedTransactions& gate, const ModelLookup& models, const JobPolicy& policy)
    : gate_(gate)
    , database_(gate.database())
    , models_(models)
    , policy_(policy)
{
}

void Scheduler::setPolicy(const JobPolicy& policy)
{
    policy_ = policy;
    // A new policy may refuse what the old one allowed: its refusals are audited afresh.
    refusalsAudited_.clear();
}

Result<JobInfo> Scheduler::enqueue(std::int64_t jobId)
{
    if (auto done = gate_.performWithoutSession(
            {"job.queue", "", "", {"job", std::to_string(jobId)}},
            [&](audit::EntryDraft& draft) -> Result<void> {
                draft.actor = controlPlaneActor();
                auto job = loadJob(database_, jobId);
                if (!job)
                    return job.error();
                if (!jobMayMove(job->info.state, JobState::Queued, JobMover::ControlPlane,
                                "job.queue"))
                    return internal::wrongState(job->info, "queued (only an approved job can be)");
                if (!internal::approvedAsIs(*job)) {
                    draft.outcome = audit::Outcome::Denied;
                    draft.reason = "not approved as it is";
                    return denied(fmt::format("Job {} may not be queued: nobody but its submitter "
                                              "approved its current spec.",
                                              jobId));
                }
                draft.details.push_back(audit::textDetail("sha256", job->info.specSha256));
                draft.details.push_back(audit::textDetail("pool", job->info.pool));
                draft.details.push_back(
                    audit::textDetail("priority", std::to_string(job->info.priority)));
                return database_.run("UPDATE jobs SET state = ?, updated = ? WHERE id = ?",
                                     {jobStateName(JobState::Queued), gate_.now(), jobId});
            });
        !done)
        return done.error();
    return reloaded(database_, jobId);
}

Result<std::optional<Dispatch>> Scheduler::take(const WorkerInfo& worker)
{
    // The worker's pool as the database knows it, not as the caller says.
    std::string pool;
    SEALTRAIN_ASSIGN(pool, activePool(database_, worker.id));
    auto busy = database_.exists("SELECT 1 FROM jobs WHERE worker_id = ? AND state = 'running'",
                                 {worker.id});
    if (!busy)
        return busy.error();
    if (*busy)
        return std::optional<Dispatch>();
    auto queued = internal::loadJobs(database_, "j.state = 'queued' AND j.pool = ?", {pool},
                                     "j.priority DESC, j.id ASC");
    if (!queued)
        return queued.error();
    const auto allowedHere = policy_.poolClassifications.find(pool);
    for (const JobRow& job : *queued) {
        auto spec = formats::parseJobSpec(job.info.specJson, formats::kJobSpecCeiling);
        if (!spec)
            return spec.error();
        // Every dataset the job carries: its own, and those behind the model it starts from
        // (issue #48), each held to the pool's classifications and the submitter's reads.
        std::vector<std::string> datasets;
        SEALTRAIN_ASSIGN(datasets, jobDatasets(database_, models_, job, *spec));
        std::optional<std::string> refusal;
        for (const std::string& datasetId : datasets) {
            std::string classification;
            SEALTRAIN_ASSIGN(classification, classificationOf(database_, datasetId));
            const bool allowed =
                !classification.empty() && allowedHere != policy_.poolClassifications.end()
                && std::find(allowedHere->second.begin(), allowedHere->second.end(), classification)
                       != allowedHere->second.end();
            if (!allowed) {
                refusal =
                    classification.empty()
                        ? std::string("the job's dataset is not known here")
                        : fmt::format(
                            "'{}' data is not allowed on pool '{}'{}", classification, pool,
                            datasetId == job.info.datasetId ? "" : " (behind its starting model)");
                break;
            }
        }
        if (refusal) {
            SEALTRAIN_TRY(refuseDispatch(worker, job.info.id, pool, *refusal));
            continue;
        }
        // A job on several nodes sends its keys and gradients between them: only to a worker
        // whose interconnect an operator declared encrypted (issue #27, item 19).
        if (spec->resources.nodes > 1 && !worker.interconnectDeclared) {
            SEALTRAIN_TRY(refuseDispatch(
                worker, job.info.id, pool,
                fmt::format("the job runs on {} nodes and no operator declared the interconnect "
                            "of worker {} encrypted (sealtrainctl worker interconnect)",
                            spec->resources.nodes, worker.name)));
            continue;
        }
        // Read access is checked again at every dispatch, since the keys are released with it:
        // a grant or role revoked after the approval, or a disabled submitter, stops the job
        // here (issue #27); it waits in the queue until access is given back or it is cancelled.
        bool mayRead = false;
        SEALTRAIN_ASSIGN(mayRead, submitterMayRead(job, datasets));
        if (!mayRead) {
            SEALTRAIN_TRY(refuseDispatch(
                worker, job.info.id, pool,
                fmt::format("its submitter {} may no longer read its dataset {}{}",
                            job.info.submitter, job.info.datasetId,
                            datasets.size() > 1 ? " and those behind its starting model" : "")));
            continue;
        }
        if (job.info.gpuHoursLimit > 0.0 || job.info.cpuHoursLimit > 0.0) {
            const Hours hours = job.info.gpuHoursLimit > 0.0 ? Hours::Gpu : Hours::Cpu;
            const auto budget = policy_.budgets.find(job.info.project);
            const double budgetHours = budget == policy_.budgets.end() ? 0.0
                                       : hours == Hours::Gpu           ? budget->second.gpuHours
                                                                       : budget->second.cpuHours;
            std::int64_t used = 0;
            SEALTRAIN_ASSIGN(used, projectUsedMilli(database_, job.info.project, hours));
            if (used >= toMilli(budgetHours)) {
                SEALTRAIN_TRY(failForBudget(job.info.id, hours, used, budgetHours));
                continue;
            }
        }
        auto dispatched = dispatch(worker, job.info.id);
        if (!dispatched || *dispatched)
            return dispatched;
    }
    return std::optional<Dispatch>();
}

Result<bool> Scheduler::submitterMayRead(const JobRow& job,
                                         const std::vector<std::string>& datasets)
{
    Caller submitter;
    submitter.userId = job.submitterId;
    submitter.name = job.info.submitter;
    if (!gate_.holds(submitter, permission::kDatasetRead, job.info.project))
        return false;
    for (const std::string& datasetId : datasets) {
        bool granted = false;
        SEALTRAIN_ASSIGN(
            granted, database_.exists("SELECT 1 FROM dataset_grants g JOIN users u ON "
                                      "u.id = g.user_id WHERE g.user_id = ? AND g.dataset_id = ? "
                                      "AND u.disabled = 0",
                                      {job.submitterId, datasetId}));
        if (!granted)
            return false;
    }
    return true;
}

Result<void> Scheduler::refuseDispatch(const WorkerInfo& worker, std::int64_t jobId,
                                       const std::string& pool, const std::string& reason)
{
    if (refusalsAudited_.count({jobId, pool}) != 0)
        return success();
    SEALTRAIN_TRY(gate_.performWithoutSession(
        {"job.dispatch", "", "", {"job", std::to_string(jobId)}}, [&](audit::EntryDraft& draft) {
            draft.actor = controlPlaneActor();
            draft.outcome = audit::Outcome::Denied;
            draft.reason = reason;
            draft.details.push_back(audit::textDetail("worker", worker.name));
            draft.details.push_back(audit::textDetail("pool", pool));
            return success();
        }));
    refusalsAudited_.insert({jobId, pool});
    return success();
}

Result<void> Scheduler::failForBudget(std::int64_t jobId, Hours hours, std::int64_t usedMilli,
                                      double budgetHours)
{
    const bool gpu = hours == Hours::Gpu;
    return gate_.performWithoutSession(
        {"job.dispatch", "", "", {"job", std::to_string(jobId)}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            draft.actor = controlPlaneActor();
            draft.outcome = audit::Outcome::Denied;
            draft.reason = "project budget exhausted";
            draft.details.push_back(audit::textDetail(gpu ? "gpu_hours_used" : "cpu_hours_used",
                                                      fmt::format("{:.3f}", fromMilli(usedMilli))));
            draft.details.push_back(audit::textDetail(gpu ? "gpu_hours_budget" : "cpu_hours_budget",
                                                      fmt::format("{:.3f}", budgetHours)));
            draft.details.push_back(audit::textDetail("state", jobStateName(JobState::Failed)));
            SEALTRAIN_TRY(movable(JobState::Queued, JobState::Failed, "job.dispatch"));
            return database_.run(
                "UPDATE jobs SET state = ?, reason = ?, updated = ? WHERE id = ? AND state = ?",
                {jobStateName(JobState::Failed), "project budget exhausted", gate_.now(), jobId,
                 jobStateName(JobState::Queued)});
        });
}

Result<std::optional<Dispatch>> Scheduler::dispatch(const WorkerInfo& worker, std::int64_t jobId)
{
    bool handedOver = false;
    auto decided = gate_.performWithoutSession(
        {"job.dispatch", "", "", {"job", std::to_string(jobId)}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            draft.actor = controlPlaneActor();
            draft.details.push_back(audit::textDetail("worker", worker.name));
            auto job = loadJob(database_, jobId);
            if (!job)
                return job.error();
            // Nothing runs without a second person's approval of the current spec.
            if (!jobMayMove(job->info.state, JobState::Running, JobMover::ControlPlane,
                            "job.dispatch")
                || !internal::approvedAsIs(*job)) {
                draft.outcome = audit::Outcome::Denied;
                draft.reason = "not approved as it is";
                return success();
            }
            const std::int64_t attempt = job->info.attempt + 1;
            draft.details.push_back(audit::textDetail("attempt", std::to_string(attempt)));
            draft.details.push_back(audit::textDetail("sha256", job->info.specSha256));
            const std::int64_t now = gate_.now();
            auto spec = formats::parseJobSpec(job->info.specJson, formats::kJobSpecCeiling);
            if (!spec)
                return spec.error();
            // Its CPU-hours are the control plane's measure, from now, at the cores the worker
            // reported.
            const std::int64_t cpus = chargedCpus(*spec, worker.inventory.cpuCores);
            SEALTRAIN_TRY(database_.run(
                "UPDATE jobs SET state = ?, worker_id = ?, attempt = ?, started = ?, "
                "finished = NULL, gpu_millihours_earlier = gpu_millihours_used, "
                "cpu_millihours_earlier = cpu_millihours_used, charged_cpus = ?, updated = ? "
                "WHERE id = ?",
                {jobStateName(JobState::Running), worker.id, attempt, now, cpus, now, jobId}));
            SEALTRAIN_TRY(internal::openAttempt(database_, jobId, attempt, worker.id, now));
            // Asking for work is a sign of life.
            SEALTRAIN_TRY(
                database_.run("UPDATE workers SET last_seen = ? WHERE id = ?", {now, worker.id}));
            handedOver = true;
            return success();
        });
    if (!decided)
        return decided.error();
    if (!handedOver)
        return std::optional<Dispatch>();
    auto job = reloaded(database_, jobId);
    if (!job)
        return job.error();
    Dispatch handed;
    handed.attempt = job->attempt;
    handed.runId = "job-" + std::to_string(jobId);
    handed.datasetId = job->datasetId;
    handed.job = std::move(*job);
    return std::optional<Dispatch>(std::move(handed));
}

Error Scheduler::refuseAttempt(const WorkerInfo& worker, std::string_view action,
                               std::int64_t jobId, std::int64_t attempt, const Error& why)
{
    auto recorded = gate_.performWithoutSession(
        {std::string(action), "", "", {"job", std::to_string(jobId)}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            draft.actor = workerActor(worker);
            draft.details.push_back(audit::textDetail("attempt", std::to_string(attempt)));
            draft.outcome = why.code() == ErrorCode::PermissionDenied ? audit::Outcome::Denied
                                                                      : audit::Outcome::Failed;
            draft.reason = why.message();
            return why;
        });
    if (recorded)
        return Error(ErrorCode::Internal, "A refused attempt was let through; report it.");
    return recorded.error();
}

Result<Dispatch> Scheduler::current(const WorkerInfo& worker, std::int64_t jobId,
                                    std::int64_t attempt, std::string_view action)
{
    auto job = currentAttempt(database_, worker.id, jobId, attempt, false);
    if (!job)
        return refuseAttempt(worker, action, jobId, attempt, job.error());
    Dispatch handed;
    handed.attempt = attempt;
    handed.runId = "job-" + std::to_string(jobId);
    handed.datasetId = job->info.datasetId;
    handed.job = std::move(job->info);
    return handed;
}

Result<bool> Scheduler::report(const WorkerInfo& worker, std::int64_t jobId, std::int64_t attempt,
                               const std::vector<MetricsLine>& lines, double gpuHours)
{
    SEALTRAIN_TRY(checkGpuHours(gpuHours));
    SEALTRAIN_TRY(internal::checkMetricsLines(lines));
    // Fenced first, the refusal audited in a transaction of its own (issue #54); the check is
    // made again inside the transaction that stores.
    if (auto current = currentAttempt(database_, worker.id, jobId, attempt, true); !current)
        return refuseAttempt(worker, "job.report", jobId, attempt, current.error());
    JobRow job;
    {
        auto transaction = database_.begin();
        if (!transaction)
            return transaction.error();
        SEALTRAIN_ASSIGN(job, currentAttempt(database_, worker.id, jobId, attempt, true));
        SEALTRAIN_TRY(internal::storeMetricsLines(database_, jobId, attempt, lines));
        // The attempt's running total on top of the earlier attempts': a report sent again
        // counts once, and an older one never lowers it.
        SEALTRAIN_TRY(database_.run(
            "UPDATE jobs SET gpu_millihours_used = MAX(gpu_millihours_used, ?) WHERE id = ?",
            {job.earlierMilli + toMilli(gpuHours), jobId}));
        SEALTRAIN_TRY((*transaction)->commit());
    }
    if (job.info.state != JobState::Running)
        return true;
    const std::int64_t usedMilli =
        std::max(toMilli(job.info.gpuHoursUsed), job.earlierMilli + toMilli(gpuHours));
    std::string over;
    SEALTRAIN_ASSIGN(over, chargeAndCheck(job, usedMilli, gate_.now()));
    if (over.empty())
        return false;
    SEALTRAIN_TRY(stopForLimit(jobId, attempt, over));
    return true;
}

Result<std::string> Scheduler::chargeAndCheck(const JobRow& job, std::int64_t gpuUsedMilli,
                                              std::int64_t now)
{
    const auto budget = policy_.budgets.find(job.info.project);
    if (job.chargedCpus > 0) {
        const std::int64_t cpuMilli = internal::cpuMilliUsedBy(job, now);
        SEALTRAIN_TRY(database_.run(
            "UPDATE jobs SET cpu_millihours_used = MAX(cpu_millihours_used, ?) WHERE id = ?",
            {cpuMilli, job.info.id}));
        if (cpuMilli > toMilli(job.info.cpuHoursLimit))
            return fmt::format("over its CPU-hour limit ({:.3f} of {:.3f})", fromMilli(cpuMilli),
                               job.info.cpuHoursLimit);
        const double budgetHours = budget == policy_.budgets.end() ? 0.0 : budget->second.cpuHours;
        std::int64_t projectUsed = 0;
        SEALTRAIN_ASSIGN(projectUsed, projectUsedMilli(database_, job.info.project, Hours::Cpu));
        if (cpuMilli > 0 && projectUsed > toMilli(budgetHours))
            return std::string("project CPU-hour budget exhausted");
    }
    if (gpuUsedMilli > toMilli(job.info.gpuHoursLimit))
        return fmt::format("over its GPU-hour limit ({:.3f} of {:.3f})", fromMilli(gpuUsedMilli),
                           job.info.gpuHoursLimit);
    if (gpuUsedMilli > 0) {
        const double budgetHours = budget == policy_.budgets.end() ? 0.0 : budget->second.gpuHours;
        std::int64_t projectUsed = 0;
        SEALTRAIN_ASSIGN(projectUsed, projectUsedMilli(database_, job.info.project));
        if (projectUsed > toMilli(budgetHours))
            return std::string("project budget exhausted");
    }
    return std::string();
}

Result<void> Scheduler::stopForLimit(std::int64_t jobId, std::int64_t attempt,
                                     const std::string& reason)
{
    return gate_.performWithoutSession(
        {"job.finish", "", "", {"job", std::to_string(jobId)}},
        [&](audit::EntryDraft& draft) -> Result<void> {
            draft.actor = controlPlaneActor();
            draft.details.push_back(audit::textDetail("reason", reason));
            draft.details.push_back(audit::textDetail("attempt", std::to_string(attempt)));
            draft.details.push_back(audit::textDetail("state", jobStateName(JobState::Failed)));
            // The attempt stays open (finished NULL): the worker's finish still accounts the
            // hours it used since its last report.
            SEALTRAIN_TRY(movable(JobState::Running, JobState::Failed, "job.finish"));
            return database_.run(
                "UPDATE jobs SET state = ?, reason = ?, updated = ? WHERE id = ? AND attempt = ? "
                "AND state = ?",
                {jobStateName(JobState::Failed), reason, gate_.now(), jobId, attempt,
                 jobStateName(JobState::Running)});
        });
}

Result<JobInfo> Scheduler::finish(const WorkerInfo& worker, std::int64_t jobId,
                                  std::int64_t attempt, bool succeeded, double gpuHours,
                                  const std::string& reason)
{
    SEALTRAIN_TRY(checkGpuHours(gpuHours));
    if (auto done = gate_.performWithoutSession(
            {"job.finish", "", "", {"job", std::to_string(jobId)}},
            [&](audit::EntryDraft& draft) -> Result<void> {
                draft.actor = workerActor(worker);
                draft.details.push_back(audit::textDetail("attempt", std::to_string(attempt)));
                if (!reason.empty())
                    draft.details.push_back(audit::textDetail("reason", reason));
                auto job = currentAttempt(database_, worker.id, jobId, attempt, true);
                if (!job) {
                    if (job.error().code() == ErrorCode::PermissionDenied) {
                        draft.outcome = audit::Outcome::Denied;
                        draft.reason = job.error().message();
                    }
                    return job.error();
                }
                const std::int64_t used = std::max(toMilli(job->info.gpuHoursUsed),
                                                   job->earlierMilli + toMilli(gpuHours));
                const std::int64_t now = gate_.now();
                const std::int64_t cpuUsed = internal::cpuMilliUsedBy(*job, now);
                // A job cancelled, or failed by the control plane, while it ran keeps its end.
                const bool running = job->info.state == JobState::Running;
                const JobState state = running
                                           ? (succeeded ? JobState::Succeeded : JobState::Failed)
                                           : job->info.state;
                if (running
                    && !jobMayMove(JobState::Running, state, JobMover::Worker, "job.finish"))
                    return internal::wrongState(job->info, "finished by its worker");
                draft.details.push_back(
                    audit::textDetail("gpu_hours", fmt::format("{:.3f}", fromMilli(used))));
                if (job->chargedCpus > 0)
                    draft.details.push_back(
                        audit::textDetail("cpu_hours", fmt::format("{:.3f}", fromMilli(cpuUsed))));
                draft.details.push_back(audit::textDetail("state", jobStateName(state)));
                const std::string& why = running ? reason : job->info.reason;
                SEALTRAIN_TRY(internal::closeAttempt(database_, jobId, attempt, jobStateName(state),
                                                     why, now));
                return database_.run(
                    "UPDATE jobs SET state = ?, reason = ?, gpu_millihours_used = ?, "
                    "cpu_millihours_used = ?, finished = ?, updated = ? WHERE id = ?",
                    {jobStateName(state), why, used, cpuUsed, now, now, jobId});
            });
        !done)
        return done.error();
    return reloaded(database_, jobId);
}

Result<std::vector<std::int64_t>> Scheduler::releaseWorker(std::int64_t workerId,
                                                           const std::string& reason)
{
    auto running = internal::loadJobs(database_, "j.worker_id = ? AND j.state = 'running'",
                                      {workerId}, "j.id");
    if (!running)
        return running.error();
    std::vector<std::int64_t> touched;
    for (const JobRow& job : *running) {
        const std::int64_t jobId = job.info.id;
        auto released = gate_.performWithoutSession(
            {"job.requeue", "", "", {"job", std::to_string(jobId)}},
            [&](audit::EntryDraft& draft) -> Result<void> {
                draft.actor = controlPlaneActor();
                draft.details.push_back(audit::textDetail("reason", reason));
                draft.details.push_back(audit::textDetail("worker", job.info.worker));
                draft.details.push_back(
                    audit::textDetail("attempt", std::to_string(job.info.attempt)));
                const std::int64_t restarts = job.info.restarts + 1;
                const bool exhausted = restarts > job.info.maxRestarts;
                draft.details.push_back(audit::textDetail("restarts", std::to_string(restarts)));
                const JobState state = exhausted ? JobState::Failed : JobState::Queued;
                SEALTRAIN_TRY(movable(JobState::Running, state, "job.requeue"));
                draft.details.push_back(audit::textDetail("state", jobStateName(state)));
                const std::int64_t now = gate_.now();
                SEALTRAIN_TRY(internal::closeAttempt(database_, jobId, job.info.attempt, "lost",
                                                     reason, now));
                // A lost attempt is charged its CPU-hours up to now.
                SEALTRAIN_TRY(database_.run(
                    "UPDATE jobs SET cpu_millihours_used = MAX(cpu_millihours_used, ?) "
                    "WHERE id = ?",
                    {internal::cpuMilliUsedBy(job, now), jobId}));
                // The attempt number stays: the next dispatch makes the next one, and every
                // call of this one is refused from now on.
                return database_.run(
                    "UPDATE jobs SET state = ?, restarts = ?, reason = ?, finished = ?, "
                    "worker_id = CASE WHEN ? THEN worker_id END, updated = ? "
                    "WHERE id = ? AND state = 'running' AND worker_id = ?",
                    {jobStateName(state), restarts,
                     exhausted ? std::string("worker lost, no restarts left") : std::string(), now,
                     exhausted ? 1 : 0, now, jobId, workerId});
            });
        if (!released)
            return released.error();
        touched.push_back(jobId);
    }
    return touched;
}

Result<std::vector<std::int64_t>> Scheduler::releaseSilent(std::int64_t now,
                                                           std::int64_t timeoutSeconds)
{
    std::vector<std::int64_t> silent;
    SEALTRAIN_TRY(database_.query(
        "SELECT DISTINCT w.id FROM workers w JOIN jobs j ON j.worker_id = w.id "
        "WHERE w.state = 'active' AND j.state = 'running' AND w.last_seen < ? ORDER BY w.id",
        {now - timeoutSeconds}, [&](const Statement& row) { silent.push_back(row.integer(0)); }));
    for (const std::int64_t workerId : silent)
        SEALTRAIN_TRY(releaseWorker(
            workerId, fmt::format("no heartbeat for more than {} seconds", timeoutSeconds)));
    return silent;
}

Result<std::vector<std::int64_t>> Scheduler::jobsToStop(std::int64_t workerId)
{
    auto running = internal::loadJobs(
        database_, "j.worker_id = ? AND j.state = 'running' AND j.charged_cpus > 0", {workerId},
        "j.id");
    if (!running)
        return running.error();
    for (const JobRow& job : *running) {
        std::string over;
        SEALTRAIN_ASSIGN(over, chargeAndCheck(job, toMilli(job.info.gpuHoursUsed), gate_.now()));
        if (!over.empty())
            SEALTRAIN_TRY(stopForLimit(job.info.id, job.info.attempt, over));
    }
    std::vector<std::int64_t> stop;
    SEALTRAIN_TRY(database_.query(
        "SELECT id FROM jobs WHERE worker_id = ? AND state IN ('cancelled', 'failed') AND "
        "finished IS NULL ORDER BY id",
        {workerId}, [&](const Statement& row) { stop.push_back(row.integer(0)); }));
    return stop;
}

}  // namespace sealtrain::core
