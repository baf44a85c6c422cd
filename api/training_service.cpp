// The Training service (control.proto, "Training"): jobs run on the control plane's own trainer
// with scoped keys, and sampling of a verified checkpoint within the job policy's caps, each one
// call of core (core/dispatch/own_runs.h).
#include "server_shared.h"
#include "status.h"

#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/dispatch/own_runs.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

class TrainingService final : public v1::Training::Service {
public:
    explicit TrainingService(Shared& shared)
        : shared_(shared)
    {
    }

    // Training runs only as an approved job (issue #16): the direct call is refused, audited.
    Status Train(ServerContext* context, const v1::TrainRequest* request,
                 grpc::ServerWriter<v1::TrainEvent>* /*writer*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().jobs().refuseDirectTraining(
                callerOf(shared_, *context).token, request->dataset()));
        });
    }

    Status RunJob(ServerContext* context, const v1::RunJobRequest* request,
                  grpc::ServerWriter<v1::TrainEvent>* writer) override
    {
        v1::TrainEvent event;
        auto ended = ownRuns(*context).runJob(
            shared_.sessionOf(*context), request->id(), [&](const std::string& line) {
                event.set_metrics_line(line);
                (void)writer->Write(event);  // a client gone away does not stop the run
            });
        if (!ended)
            return Internal::toStatus(ended.error());
        v1::TrainFinished* finished = event.mutable_finished();
        finished->set_run_id(ended->runId);
        finished->set_exit_code(ended->exitCode);
        finished->set_checkpoints(ended->checkpoints);
        (void)writer->Write(event);
        return Status::OK;
    }

    Status Sample(ServerContext* context, const v1::SampleRequest* request,
                  v1::SampleReply* reply) override
    {
        auto sample = ownRuns(*context).sample(
            shared_.sessionOf(*context),
            {static_cast<std::int64_t>(request->job()), request->model(), request->run_id(),
             request->step()},
            {request->sampler_arguments().begin(), request->sampler_arguments().end()},
            [context] { return context->IsCancelled(); });
        if (!sample)
            return Internal::toStatus(sample.error());
        reply->set_text(sample->text);
        reply->set_step(sample->step);
        return Status::OK;
    }

private:
    // Core's calls for this RPC, each step in a group with the call's origin.
    [[nodiscard]] core::OwnRuns ownRuns(const ServerContext& context)
    {
        auto& plane = shared_.platform.controlPlane();
        return {
            shared_.platform,
            {plane.jobs(), plane.scheduler(), plane.datasets(), plane.registry(), plane.workers()},
            shared_.grouped(context),
            shared_.options.trainer};
    }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeTrainingService(Shared& shared)
{
    return std::make_unique<TrainingService>(shared);
}

}  // namespace sealtrain::api::server_internal
