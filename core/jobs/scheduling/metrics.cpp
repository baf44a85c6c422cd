// A job's metrics and log lines (scheduler.h): parsed as a worker relays them, checked, stored once
// per (kind, step) with the attempt that sent them, and read back for whoever may see the job.
#include "sealtrain/core/jobs/scheduling/scheduler.h"

#include "jobs/rows.h"
#include "sealtrain/core/store/database.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sealtrain::core {
namespace {

constexpr std::size_t kMaxMetricsLines = 10'000;
constexpr std::size_t kMaxMetricsLineBytes = std::size_t{64} * 1024;
constexpr std::size_t kMaxKindLength = 32;

}  // namespace

Result<std::vector<MetricsLine>> logLines(std::int64_t attempt, std::int64_t firstLine,
                                          const std::vector<std::string>& texts)
{
    if (attempt < 1 || firstLine < 0
        || firstLine > kLogLinesPerAttempt - static_cast<std::int64_t>(texts.size()))
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("Log lines are numbered from 0 to {} within an attempt; send "
                                 "the attempt's lines with their own numbers.",
                                 kLogLinesPerAttempt - 1));
    std::vector<MetricsLine> lines;
    lines.reserve(texts.size());
    for (std::size_t i = 0; i < texts.size(); ++i)
        lines.push_back({"log",
                         attempt * kLogLinesPerAttempt + firstLine + static_cast<std::int64_t>(i),
                         nlohmann::json(texts[i]).dump(-1, ' ', false,
                                                       nlohmann::json::error_handler_t::replace)});
    return lines;
}

Result<MetricsLine> parseMetricsLine(const std::string& text)
{
    const auto json = nlohmann::json::parse(text, nullptr, false);
    if (!json.is_object() || !json.contains("kind") || !json["kind"].is_string())
        return Error(ErrorCode::InvalidArgument, "A metrics line is not a JSON object with a "
                                                 "'kind'; relay the trainer's lines unchanged.");
    MetricsLine line;
    line.kind = json["kind"].get<std::string>();
    line.step = json.contains("step") && json["step"].is_number_integer()
                    ? json["step"].get<std::int64_t>()
                    : 0;
    if (line.kind == "log")
        return Error(ErrorCode::InvalidArgument,
                     "A metrics line may not be of kind 'log'; send it as a log line.");
    line.json = text;
    return line;
}

namespace internal {

Result<void> checkMetricsLines(const std::vector<MetricsLine>& lines)
{
    if (lines.size() > kMaxMetricsLines)
        return Error(ErrorCode::InvalidArgument,
                     "A report holds at most 10000 metrics lines; send them in several.");
    for (const MetricsLine& line : lines) {
        if (line.kind.empty() || line.kind.size() > kMaxKindLength || line.step < 0
            || line.json.size() > kMaxMetricsLineBytes)
            return Error(ErrorCode::InvalidArgument,
                         "A metrics line needs a kind of 1 to 32 characters, a step from 0 and at "
                         "most 64 KiB of JSON; send the trainer's lines as they are.");
    }
    return success();
}

Result<void> storeMetricsLines(Database& database, std::int64_t jobId, std::int64_t attempt,
                               const std::vector<MetricsLine>& lines)
{
    for (const MetricsLine& line : lines)
        SEALTRAIN_TRY(database.run("INSERT OR IGNORE INTO job_metrics (job_id, kind, step, "
                                   "line, attempt) VALUES (?, ?, ?, ?, ?)",
                                   {jobId, line.kind, line.step, line.json, attempt}));
    return success();
}

}  // namespace internal

Result<void> Scheduler::recordOwnRun(std::int64_t jobId, std::int64_t attempt,
                                     const std::vector<MetricsLine>& lines)
{
    SEALTRAIN_TRY(internal::checkMetricsLines(lines));
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    auto job = internal::loadJob(database_, jobId);
    if (!job)
        return job.error();
    if (job->info.state != JobState::Running || job->workerId != 0 || job->info.attempt != attempt)
        return denied(fmt::format("Attempt {} of job {} does not run on the control plane's own "
                                  "trainer; its metrics were not recorded.",
                                  attempt, jobId));
    SEALTRAIN_TRY(internal::storeMetricsLines(database_, jobId, attempt, lines));
    return (*transaction)->commit();
}

Result<std::vector<MetricsLine>> Scheduler::metrics(const std::string& session, std::int64_t jobId,
                                                    std::int64_t fromStep, std::string_view what)
{
    return gate_.performReturning(
        session, internal::jobRequest(database_, jobId, "metrics", ""),
        [&](const Caller& caller, audit::EntryDraft&) -> Result<std::vector<MetricsLine>> {
            SEALTRAIN_TRY(internal::visibleJob(gate_, caller, jobId));
            if (what != "metrics" && what != "logs" && !what.empty())
                return Error(ErrorCode::InvalidArgument,
                             "Ask for a job's 'metrics' or its 'logs'.");
            std::vector<MetricsLine> lines;
            SEALTRAIN_TRY(database_.query(
                "SELECT kind, step, line FROM job_metrics WHERE job_id = ? AND step >= ? "
                "ORDER BY step, kind",
                {jobId, fromStep}, [&](const Statement& row) {
                    lines.push_back({row.text(0), row.integer(1), row.text(2)});
                }));
            return lines;
        });
}

}  // namespace sealtrain::core
