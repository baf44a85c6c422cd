// Handing jobs to workers (handover.h): heartbeats, the handover of an attempt with its keys, the
// files a worker fetches for it, its reports and its end.
#include "sealtrain/core/dispatch/handover.h"
#include "sealtrain/core/registry/starting_model.h"

#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/formats/job_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <system_error>
#include <utility>

namespace sealtrain::core {
namespace {

// The audit action of a worker's call refused for its attempt: "Workers.FetchDataset" is
// "job.fetch_dataset" (docs/formats/database.md).
std::string auditAction(std::string_view call)
{
    std::string action = "job.";
    const auto dot = call.find('.');
    for (const char c : call.substr(dot == std::string_view::npos ? 0 : dot + 1)) {
        if (std::isupper(static_cast<unsigned char>(c)) != 0) {
            if (action.size() > 4)
                action += '_';
            action += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        } else {
            action += c;
        }
    }
    return action;
}

}  // namespace

Handovers::Handovers(DataDirectory& platform, Workers& workers, Scheduler& scheduler,
                     InGroup inGroup)
    : platform_(platform)
    , workers_(workers)
    , scheduler_(scheduler)
    , inGroup_(std::move(inGroup))
    , keys_(platform.keyVault())
    , returned_(platform.keyVault())
{
}

Result<WorkerInfo> Handovers::caller(const std::string& serial, std::string_view call)
{
    return workers_.caller(serial, call);
}

Result<void> Handovers::knownWorker(const std::string& serial, std::string_view call)
{
    return inGroup_([&]() -> Result<void> {
        SEALTRAIN_TRY(caller(serial, call));
        return success();
    });
}

Result<Dispatch> Handovers::current(const std::string& serial, std::string_view call,
                                    AttemptRef attempt)
{
    return inGroupResult(inGroup_, [&]() -> Result<Dispatch> {
        WorkerInfo worker;
        SEALTRAIN_ASSIGN(worker, caller(serial, call));
        return scheduler_.current(worker, attempt.job, attempt.attempt, auditAction(call));
    });
}

Result<std::vector<std::int64_t>> Handovers::heartbeat(const std::string& serial,
                                                       std::string_view inventoryJson,
                                                       std::int64_t reportedJob)
{
    std::vector<std::int64_t> stop;
    if (auto grouped = inGroup_([&]() -> Result<void> {
            WorkerInfo worker;
            SEALTRAIN_ASSIGN(worker, caller(serial, "Workers.Heartbeat"));
            // The worker first (issue #27): its inventory is read only now, at most 64 KiB of JSON
            // parsed in well under a millisecond; a refused one is audited (issue #54).
            SEALTRAIN_TRY(workers_.heartbeatFrom(worker, inventoryJson));
            SEALTRAIN_ASSIGN(stop, scheduler_.jobsToStop(worker.id));
            if (reportedJob == 0 && worker.currentJob != 0)
                SEALTRAIN_TRY(scheduler_.releaseWorker(worker.id, "the worker no longer runs it"));
            return success();
        });
        !grouped)
        return grouped.error();
    return stop;
}

Result<std::optional<Handover>> Handovers::take(const std::string& serial)
{
    WorkerInfo worker;
    std::optional<Dispatch> dispatch;
    std::optional<JobCheckpoint> resumeFrom;
    std::string signerPem;
    // A fine-tuning job's starting model, read with the dispatch; a failure to find it ends the
    // job as a failed handover does (below).
    Result<std::optional<StartingModel>> start = std::optional<StartingModel>();
    if (auto grouped = inGroup_([&]() -> Result<void> {
            SEALTRAIN_ASSIGN(worker, caller(serial, "Workers.TakeJob"));
            SEALTRAIN_ASSIGN(dispatch, scheduler_.take(worker));
            if (!dispatch)
                return success();
            SEALTRAIN_ASSIGN(resumeFrom, scheduler_.newestCheckpoint(dispatch->job.id));
            if (resumeFrom) {
                WorkerInfo signer;
                SEALTRAIN_ASSIGN(signer, workers_.byName(resumeFrom->worker));
                signerPem = signer.signingKeyPem;
            }
            if (auto spec = formats::parseJobSpec(dispatch->job.specJson, formats::kJobSpecCeiling))
                start = startingModel(platform_.database(), scheduler_, returned_,
                                      platform_.baseModels(), *spec);
            return success();
        });
        !grouped)
        return grouped.error();
    if (!dispatch)
        return std::optional<Handover>();
    auto released = start ? release(worker, *dispatch, resumeFrom, signerPem, *start)
                          : Result<WorkerRelease>(start.error());
    if (released)
        return std::optional<Handover>(Handover{std::move(*dispatch), std::move(released).value()});
    // The job can not be handed over (its keys or dataset are not readable): it ends failed,
    // saying why, rather than wait on a worker that never got it.
    (void)inGroup_([&]() -> Result<void> {
        SEALTRAIN_TRY(scheduler_.finish(worker, dispatch->job.id, dispatch->attempt, false, 0.0,
                                        released.error().message()));
        return success();
    });
    return released.error();
}

Result<WorkerRelease> Handovers::release(const WorkerInfo& worker, const Dispatch& dispatch,
                                         const std::optional<JobCheckpoint>& resumeFrom,
                                         const std::string& signerPem,
                                         const std::optional<StartingModel>& start) const
{
    formats::JobSpec spec;
    SEALTRAIN_ASSIGN(spec, formats::parseJobSpec(dispatch.job.specJson, formats::kJobSpecCeiling));
    return keys_.forWorker(worker, dispatch, spec,
                           resumeFrom ? std::optional(signerPem) : std::nullopt, start);
}

Result<std::vector<std::filesystem::path>>
Handovers::datasetFiles(const std::string& serial, std::string_view call, AttemptRef attempt)
{
    Dispatch dispatch;
    SEALTRAIN_ASSIGN(dispatch, current(serial, call, attempt));
    const auto folder = datasetFolder(platform_.datasetsRoot(), dispatch.datasetId);
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
        if (entry.is_regular_file())
            files.push_back(entry.path());
    if (ec)
        return Error(ErrorCode::NotFound,
                     fmt::format("The dataset of job {} is not in the data directory; restore it "
                                 "from a backup.",
                                 attempt.job));
    std::sort(files.begin(), files.end());
    return files;
}

Result<std::vector<std::filesystem::path>>
Handovers::checkpointFiles(const std::string& serial, std::string_view call, AttemptRef attempt)
{
    SEALTRAIN_TRY(current(serial, call, attempt));
    std::optional<JobCheckpoint> newest;
    SEALTRAIN_ASSIGN(
        newest, inGroupResult(inGroup_, [&] { return scheduler_.newestCheckpoint(attempt.job); }));
    if (!newest)
        return Error(
            ErrorCode::NotFound,
            fmt::format("Job {} has no checkpoint yet; start it from the beginning.", attempt.job));
    const CheckpointPaths files = returned_.jobCheckpointFiles(attempt.job, newest->step);
    return std::vector<std::filesystem::path>{files.sealed, files.envelope};
}

Result<std::vector<std::filesystem::path>>
Handovers::startingModelFiles(const std::string& serial, std::string_view call, AttemptRef attempt)
{
    Dispatch dispatch;
    SEALTRAIN_ASSIGN(dispatch, current(serial, call, attempt));
    formats::JobSpec spec;
    SEALTRAIN_ASSIGN(spec, formats::parseJobSpec(dispatch.job.specJson, formats::kJobSpecCeiling));
    std::optional<StartingModel> start;
    SEALTRAIN_ASSIGN(start, inGroupResult(inGroup_, [&] {
                         return startingModel(platform_.database(), scheduler_, returned_,
                                              platform_.baseModels(), spec);
                     }));
    if (!start)
        return Error(
            ErrorCode::NotFound,
            fmt::format("Job {} starts from scratch; it has no model to fetch.", attempt.job));
    return std::vector<std::filesystem::path>{start->sealed};
}

Result<bool> Handovers::report(const std::string& serial, const AttemptReport& report)
{
    // The worker first (issue #27): the lines of an anonymous or unknown caller are never
    // parsed; those of a worker are parsed here, outside the group that records them.
    SEALTRAIN_TRY(knownWorker(serial, "Workers.ReportMetrics"));
    std::vector<MetricsLine> lines;
    for (const std::string& text : report.metricsLines) {
        MetricsLine line;
        SEALTRAIN_ASSIGN(line, parseMetricsLine(text));
        lines.push_back(std::move(line));
    }
    std::vector<MetricsLine> logs;
    SEALTRAIN_ASSIGN(logs, logLines(report.attempt.attempt, report.firstLogLine, report.logLines));
    lines.insert(lines.end(), std::make_move_iterator(logs.begin()),
                 std::make_move_iterator(logs.end()));
    bool stop = false;
    if (auto grouped = inGroup_([&]() -> Result<void> {
            WorkerInfo worker;
            SEALTRAIN_ASSIGN(worker, caller(serial, "Workers.ReportMetrics"));
            SEALTRAIN_ASSIGN(stop,
                             scheduler_.report(worker, report.attempt.job, report.attempt.attempt,
                                               lines, report.gpuHours));
            return success();
        });
        !grouped)
        return grouped.error();
    return stop;
}

Result<JobInfo> Handovers::finish(const std::string& serial, const AttemptEnd& end)
{
    return inGroupResult(inGroup_, [&]() -> Result<JobInfo> {
        WorkerInfo worker;
        SEALTRAIN_ASSIGN(worker, caller(serial, "Workers.FinishJob"));
        return scheduler_.finish(worker, end.attempt.job, end.attempt.attempt, end.succeeded,
                                 end.gpuHours, end.reason);
    });
}

Error Handovers::refuseCheckpoint(const std::string& serial, AttemptRef attempt, const Error& why)
{
    auto refused = inGroup_([&]() -> Result<void> {
        WorkerInfo worker;
        SEALTRAIN_ASSIGN(worker, caller(serial, "Workers.UploadCheckpoint"));
        return scheduler_.refuseCheckpoint(worker, attempt.job, attempt.attempt, why);
    });
    return refused ? why : refused.error();
}

}  // namespace sealtrain::core
