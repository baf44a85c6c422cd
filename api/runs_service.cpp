// The Runs service (runs.proto): jobs' runs, attempts and metrics histories, read through core's
// RunReads (each call audited there).
#include "server_shared.h"
#include "status.h"

#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/jobs/runs/runs.h"

#include "sealtrain/v1/runs.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <memory>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

void fillRun(const core::RunInfo& run, v1::Run* out)
{
    fillJob(run.job, out->mutable_job());
    for (const core::RunAttempt& attempt : run.attempts) {
        v1::RunAttempt* to = out->add_attempts();
        to->set_attempt(attempt.attempt);
        to->set_worker(attempt.worker);
        to->set_started_unix(attempt.started);
        to->set_ended_unix(attempt.ended);
        to->set_outcome(attempt.outcome);
        to->set_reason(attempt.reason);
        to->set_resumed_from_step(attempt.resumedFromStep);
        to->set_first_step(attempt.firstStep);
        to->set_last_step(attempt.lastStep);
    }
    for (const core::JobCheckpoint& checkpoint : run.checkpoints)
        fillCheckpoint(checkpoint, out->add_checkpoints());
    const core::RunSummary& summary = run.summary;
    v1::RunSummary* to = out->mutable_summary();
    to->set_steps_planned(summary.stepsPlanned);
    to->set_steps_done(summary.stepsDone);
    if (summary.lastLoss)
        to->set_last_loss(*summary.lastLoss);
    if (summary.lastValidationLoss)
        to->set_last_val_loss(*summary.lastValidationLoss);
    if (summary.bestValidationLoss)
        to->set_best_val_loss(*summary.bestValidationLoss);
    to->set_best_val_step(summary.bestValidationStep);
    to->set_mean_tokens_per_second(summary.meanTokensPerSecond);
    to->set_mean_mfu(summary.meanMfu);
    to->set_peak_memory_bytes(summary.peakMemoryBytes);
}

class RunsService final : public v1::Runs::Service {
public:
    explicit RunsService(Shared& shared)
        : shared_(shared)
    {
    }

    Status ListRuns(ServerContext* context, const v1::ListJobsRequest* request,
                    v1::ListRunsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto runs = shared_.platform.controlPlane().runs().list(
                callerOf(shared_, *context).token, listPage(request->before(), request->limit()));
            if (!runs)
                return Internal::toStatus(runs.error());
            reply->set_next_before(runs->nextBefore);
            for (const core::RunInfo& run : runs->items)
                fillRun(run, reply->add_runs());
            return Status::OK;
        });
    }

    Status ShowRun(ServerContext* context, const v1::JobIdRequest* request,
                   v1::RunReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto run = shared_.platform.controlPlane().runs().show(
                callerOf(shared_, *context).token, request->id());
            if (!run)
                return Internal::toStatus(run.error());
            fillRun(*run, reply->mutable_run());
            return Status::OK;
        });
    }

    Status RunMetrics(ServerContext* context, const v1::RunMetricsRequest* request,
                      v1::RunMetricsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            core::RunMetricsPage page;
            page.afterStep = request->after_step();
            if (request->limit() != 0)
                page.limit = request->limit();
            auto points = shared_.platform.controlPlane().runs().metrics(
                callerOf(shared_, *context).token, request->id(), page);
            if (!points)
                return Internal::toStatus(points.error());
            reply->set_next_after_step(points->nextAfterStep);
            for (const core::RunPoint& point : points->points) {
                v1::RunPoint* out = reply->add_points();
                out->set_step(point.step);
                out->set_attempt(point.attempt);
                out->set_loss(point.loss);
                if (point.validationLoss)
                    out->set_val_loss(*point.validationLoss);
                out->set_lr(point.learningRate);
                out->set_grad_norm(point.gradientNorm);
                out->set_tokens_per_second(point.tokensPerSecond);
                out->set_mfu(point.mfu);
                out->set_memory_bytes(point.memoryBytes);
            }
            return Status::OK;
        });
    }

private:
    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeRunsService(Shared& shared)
{
    return std::make_unique<RunsService>(shared);
}

}  // namespace sealtrain::api::server_internal
