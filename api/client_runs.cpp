// The client library's RunsClient (runs_client.h; runs.proto).
#include "client_state.h"

#include <utility>

namespace sealtrain::api {

namespace v1 = sealtrain::v1;

namespace {

RunView viewOf(const v1::Run& run)
{
    RunView view;
    view.job = client_internal::summaryOf(run.job());
    for (const v1::RunAttempt& attempt : run.attempts())
        view.attempts.push_back({attempt.attempt(), attempt.worker(), attempt.started_unix(),
                                 attempt.ended_unix(), attempt.outcome(), attempt.reason(),
                                 attempt.resumed_from_step(), attempt.first_step(),
                                 attempt.last_step()});
    for (const v1::JobCheckpoint& checkpoint : run.checkpoints())
        view.checkpoints.push_back(client_internal::checkpointViewOf(checkpoint));
    const v1::RunSummary& summary = run.summary();
    RunSummaryView& to = view.summary;
    to.stepsPlanned = summary.steps_planned();
    to.stepsDone = summary.steps_done();
    if (summary.has_last_loss())
        to.lastLoss = summary.last_loss();
    if (summary.has_last_val_loss())
        to.lastValidationLoss = summary.last_val_loss();
    if (summary.has_best_val_loss())
        to.bestValidationLoss = summary.best_val_loss();
    to.bestValidationStep = summary.best_val_step();
    to.meanTokensPerSecond = summary.mean_tokens_per_second();
    to.meanMfu = summary.mean_mfu();
    to.peakMemoryBytes = summary.peak_memory_bytes();
    return view;
}

}  // namespace

Result<Page<RunView>> RunsClient::listRunsPage(std::int64_t before, std::uint32_t limit)
{
    v1::ListJobsRequest request;
    request.set_before(before);
    request.set_limit(limit);
    auto reply = state_->call(*state_->runs, &v1::Runs::Stub::ListRuns, request);
    if (!reply)
        return reply.error();
    Page<RunView> page;
    for (const v1::Run& run : reply->runs())
        page.items.push_back(viewOf(run));
    page.nextBefore = reply->next_before();
    return page;
}

Result<std::vector<RunView>> RunsClient::listRuns()
{
    return allPages<RunView>([this](std::int64_t before) {
        return listRunsPage(before, client_internal::kLargestPage);
    });
}

Result<RunView> RunsClient::showRun(std::int64_t id)
{
    v1::JobIdRequest request;
    request.set_id(id);
    auto reply = state_->call(*state_->runs, &v1::Runs::Stub::ShowRun, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->run());
}

Result<std::pair<std::vector<RunPointView>, std::int64_t>>
RunsClient::runMetricsPage(std::int64_t id, std::int64_t afterStep, std::uint32_t limit)
{
    v1::RunMetricsRequest request;
    request.set_id(id);
    request.set_after_step(afterStep);
    request.set_limit(limit);
    auto reply = state_->call(*state_->runs, &v1::Runs::Stub::RunMetrics, request);
    if (!reply)
        return reply.error();
    std::vector<RunPointView> points;
    points.reserve(static_cast<std::size_t>(reply->points_size()));
    for (const v1::RunPoint& point : reply->points()) {
        RunPointView view{point.step(),
                          point.attempt(),
                          point.loss(),
                          std::nullopt,
                          point.lr(),
                          point.grad_norm(),
                          point.tokens_per_second(),
                          point.mfu(),
                          point.memory_bytes()};
        if (point.has_val_loss())
            view.validationLoss = point.val_loss();
        points.push_back(view);
    }
    return std::make_pair(std::move(points), reply->next_after_step());
}

Result<std::vector<RunPointView>> RunsClient::runMetrics(std::int64_t id)
{
    // The server's largest page: a 100,000-step run is five calls.
    constexpr std::uint32_t kLargestRunPage = 20000;
    std::vector<RunPointView> all;
    std::int64_t after = 0;
    for (;;) {
        auto page = runMetricsPage(id, after, kLargestRunPage);
        if (!page)
            return page.error();
        all.insert(all.end(), page->first.begin(), page->first.end());
        if (page->second == 0)
            return all;
        if (page->second <= after)
            return Error(ErrorCode::Internal,
                         "The control plane sent a page that does not move on; report this bug.");
        after = page->second;
    }
}

}  // namespace sealtrain::api
