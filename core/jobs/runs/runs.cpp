// Experiment tracking: a job's run, its attempts and its metrics history (runs.h).
#include "sealtrain/core/jobs/runs/runs.h"

#include "jobs/rows.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

namespace sealtrain::core {
namespace {

// The spec's schedule.steps, from its canonical JSON; 0 when it can not be read.
std::int64_t plannedSteps(const std::string& specJson)
{
    const auto spec = nlohmann::json::parse(specJson, nullptr, false);
    if (!spec.is_object() || !spec.contains("schedule") || !spec["schedule"].is_object())
        return 0;
    const auto& steps = spec["schedule"].value("steps", nlohmann::json());
    return steps.is_number_integer() ? steps.get<std::int64_t>() : 0;
}

double number(const nlohmann::json& line, const char* name)
{
    const auto found = line.find(name);
    return found != line.end() && found->is_number() ? found->get<double>() : 0.0;
}

Result<std::vector<RunAttempt>> loadAttempts(const Database& database, std::int64_t jobId)
{
    std::vector<RunAttempt> attempts;
    SEALTRAIN_TRY(database.query(
        "SELECT a.attempt, COALESCE(w.name, ''), a.started, COALESCE(a.ended, 0), a.outcome, "
        "a.reason, a.resumed_step, "
        "(SELECT COALESCE(MIN(m.step), 0) FROM job_metrics m WHERE m.job_id = a.job_id AND "
        "m.kind = 'step' AND m.attempt = a.attempt), "
        "(SELECT COALESCE(MAX(m.step), 0) FROM job_metrics m WHERE m.job_id = a.job_id AND "
        "m.kind = 'step' AND m.attempt = a.attempt) "
        "FROM job_attempts a LEFT JOIN workers w ON w.id = a.worker_id WHERE a.job_id = ? "
        "ORDER BY a.attempt",
        {jobId}, [&](const Statement& row) {
            attempts.push_back({row.integer(0), row.text(1), row.integer(2), row.integer(3),
                                row.text(4), row.text(5), row.integer(6), row.integer(7),
                                row.integer(8)});
        }));
    return attempts;
}

// The points of job `jobId` after `afterStep`, at most `limit` (0: all), in step order.
Result<std::vector<RunPoint>> loadPoints(const Database& database, std::int64_t jobId,
                                         std::int64_t afterStep, std::int64_t limit)
{
    std::vector<RunPoint> points;
    Result<void> unreadable = success();
    SEALTRAIN_TRY(database.query(
        "SELECT line, attempt FROM job_metrics WHERE job_id = ? AND kind = 'step' AND step > ? "
        "ORDER BY step LIMIT ?",
        {jobId, afterStep, limit == 0 ? std::int64_t{-1} : limit}, [&](const Statement& row) {
            auto point = parseRunPoint(row.text(0), row.integer(1));
            if (point)
                points.push_back(*point);
            else if (unreadable)
                unreadable = point.error();
        }));
    if (!unreadable)
        return unreadable.error();
    return points;
}

// The summary from the run's last step line and its last validated one (what a list shows).
Result<RunSummary> lastLines(const Database& database, const JobInfo& job)
{
    RunSummary summary;
    summary.stepsPlanned = plannedSteps(job.specJson);
    std::optional<std::string> last;
    std::optional<std::string> validated;
    SEALTRAIN_TRY(database.queryOne(
        "SELECT line FROM job_metrics WHERE job_id = ? AND kind = 'step' ORDER BY step DESC "
        "LIMIT 1",
        {job.id}, [&](const Statement& row) { last = row.text(0); }));
    SEALTRAIN_TRY(
        database.queryOne("SELECT line FROM job_metrics WHERE job_id = ? AND kind = 'step' AND "
                          "instr(line, '\"val_loss\"') > 0 ORDER BY step DESC LIMIT 1",
                          {job.id}, [&](const Statement& row) { validated = row.text(0); }));
    if (last) {
        auto point = parseRunPoint(*last, 0);
        if (!point)
            return point.error();
        summary.stepsDone = point->step;
        summary.lastLoss = point->loss;
    }
    if (validated) {
        auto point = parseRunPoint(*validated, 0);
        if (!point)
            return point.error();
        summary.lastValidationLoss = point->validationLoss;
    }
    return summary;
}

// The call `verb` on run `jobId`, audited as run.<verb> with the job as its target, scoped to
// the job's project (as a job's calls are).
AuditedRequest runRequest(const Database& database, std::int64_t jobId, std::string_view verb)
{
    AuditedRequest request = internal::jobRequest(database, jobId, verb, "");
    request.action = "run." + std::string(verb);
    return request;
}

}  // namespace

Result<RunPoint> parseRunPoint(const std::string& json, std::int64_t attempt)
{
    const auto line = nlohmann::json::parse(json, nullptr, false);
    if (!line.is_object() || !line.contains("step") || !line["step"].is_number_integer()
        || !line.contains("loss") || !line["loss"].is_number())
        return Error(ErrorCode::InvalidArgument,
                     "A recorded step line lacks its step or loss; check the trainer that wrote "
                     "it against docs/trainer.md, \"Metrics\".");
    RunPoint point;
    point.step = line["step"].get<std::int64_t>();
    point.attempt = attempt;
    point.loss = line["loss"].get<double>();
    if (const auto validation = line.find("val_loss");
        validation != line.end() && validation->is_number())
        point.validationLoss = validation->get<double>();
    point.learningRate = number(line, "lr");
    point.gradientNorm = number(line, "grad_norm");
    point.tokensPerSecond = number(line, "tok_per_s");
    point.mfu = number(line, "mfu");
    point.memoryBytes = static_cast<std::int64_t>(number(line, "rss_bytes"));
    return point;
}

RunSummary summarizeRun(const std::vector<RunPoint>& points, std::int64_t stepsPlanned)
{
    RunSummary summary;
    summary.stepsPlanned = stepsPlanned;
    double tokens = 0.0;
    double mfu = 0.0;
    for (const RunPoint& point : points) {
        summary.stepsDone = std::max(summary.stepsDone, point.step);
        summary.lastLoss = point.loss;
        tokens += point.tokensPerSecond;
        mfu += point.mfu;
        summary.peakMemoryBytes = std::max(summary.peakMemoryBytes, point.memoryBytes);
        if (!point.validationLoss)
            continue;
        summary.lastValidationLoss = point.validationLoss;
        if (!summary.bestValidationLoss || *point.validationLoss < *summary.bestValidationLoss) {
            summary.bestValidationLoss = point.validationLoss;
            summary.bestValidationStep = point.step;
        }
    }
    if (!points.empty()) {
        summary.meanTokensPerSecond = tokens / static_cast<double>(points.size());
        summary.meanMfu = mfu / static_cast<double>(points.size());
    }
    return summary;
}

RunReads::RunReads(AuditedTransactions& gate, Scheduler& scheduler)
    : gate_(gate)
    , scheduler_(scheduler)
{
}

Result<Paged<RunInfo>> RunReads::list(const std::string& session, const ListPage& page)
{
    return gate_.performReturning(
        session, {"run.list", "", "", {"job", "*"}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<Paged<RunInfo>> {
            draft.details.push_back(audit::textDetail("before", std::to_string(page.before)));
            auto rows = internal::listVisibleJobs(gate_, caller, page, true);
            if (!rows)
                return rows.error();
            Paged<RunInfo> listed;
            listed.nextBefore = rows->nextBefore;
            for (internal::JobRow& row : rows->items) {
                RunInfo run;
                SEALTRAIN_ASSIGN(run.attempts, loadAttempts(gate_.database(), row.info.id));
                SEALTRAIN_ASSIGN(run.summary, lastLines(gate_.database(), row.info));
                run.job = std::move(row.info);
                listed.items.push_back(std::move(run));
            }
            return listed;
        });
}

Result<RunInfo> RunReads::show(const std::string& session, std::int64_t jobId)
{
    return gate_.performReturning(
        session, runRequest(gate_.database(), jobId, "show"),
        [&](const Caller& caller, audit::EntryDraft&) -> Result<RunInfo> {
            auto job = internal::visibleJob(gate_, caller, jobId);
            if (!job)
                return job.error();
            if (job->info.attempt == 0)
                return Error(ErrorCode::NotFound,
                             fmt::format("Job {} has not started, so it has no run yet; see "
                                         "'sealtrainctl job show {}'.",
                                         jobId, jobId));
            RunInfo run;
            SEALTRAIN_ASSIGN(run.attempts, loadAttempts(gate_.database(), jobId));
            SEALTRAIN_ASSIGN(run.checkpoints, scheduler_.checkpoints(jobId));
            std::vector<RunPoint> points;
            SEALTRAIN_ASSIGN(points, loadPoints(gate_.database(), jobId, 0, 0));
            run.summary = summarizeRun(points, plannedSteps(job->info.specJson));
            run.job = std::move(job->info);
            return run;
        });
}

Result<RunPoints> RunReads::metrics(const std::string& session, std::int64_t jobId,
                                    const RunMetricsPage& page)
{
    return gate_.performReturning(
        session, runRequest(gate_.database(), jobId, "metrics"),
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<RunPoints> {
            draft.details.push_back(audit::textDetail("after", std::to_string(page.afterStep)));
            SEALTRAIN_TRY(internal::visibleJob(gate_, caller, jobId));
            if (page.limit < 1 || page.limit > kMaxRunPoints || page.afterStep < 0)
                return Error(ErrorCode::InvalidArgument,
                             "A page of a run's history holds 1 to 20000 steps and starts after "
                             "step 0 or the previous page's next_after_step; ask again with "
                             "those.");
            RunPoints chosen;
            // One more than asked says whether another page follows.
            SEALTRAIN_ASSIGN(chosen.points, loadPoints(gate_.database(), jobId, page.afterStep,
                                                       std::int64_t{page.limit} + 1));
            if (chosen.points.size() > page.limit) {
                chosen.points.pop_back();
                chosen.nextAfterStep = chosen.points.back().step;
            }
            return chosen;
        });
}

}  // namespace sealtrain::core
