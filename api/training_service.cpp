// The Training service (control.proto, "Training"): jobs run on the control plane's own trainer
// with scoped keys, and sampling of a verified checkpoint within the job policy's caps.
#include "server_shared.h"
#include "status.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/jobs/scheduling/budgets.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/jobs/vetting/policy.h"
#include "sealtrain/core/jobs/vetting/spec.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/workers/trainer_launcher.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/random.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

// The control plane's own run records its metrics lines this many at a time (and its last ones
// when it ends): one write per 50 steps rather than one per step.
constexpr std::size_t kRecordEvery = 50;

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
        if (auto trainer = configuredTrainer(); !trainer.ok())
            return trainer;
        core::JobInfo job;
        Status admitted = shared_.inGroup(*context, [&]() -> Status {
            auto found = shared_.platform.controlPlane().jobs().admitRun(
                callerOf(shared_, *context).token, request->id());
            if (!found)
                return Internal::toStatus(found.error());
            job = std::move(found).value();
            return Status::OK;
        });
        if (!admitted.ok())
            return admitted;
        auto spec = core::parseJobSpec(job.specJson, core::kJobSpecCeiling);
        if (!spec)
            return Internal::toStatus(spec.error());
        // The submitter's read grant is checked again now (it may have been revoked since the
        // vetting), and the job starts only as approved.
        auto info = authorizeRead(*context, job.datasetId, fmt::format("job {}", job.id));
        if (!info)
            return Internal::toStatus(info.error());
        // A fine-tuning job's starting model, its files checked before the job starts.
        std::optional<core::StartingModel> start;
        std::int64_t attempt = 0;
        Status started = shared_.inGroup(*context, [&]() -> Status {
            auto checked = core::KeyRelease(shared_.platform).startingModel(*spec);
            if (!checked)
                return Internal::toStatus(checked.error());
            start = std::move(checked).value();
            auto running = shared_.platform.controlPlane().jobs().start(job.id);
            if (!running)
                return Internal::toStatus(running.error());
            attempt = running->attempt;
            return Status::OK;
        });
        if (!started.ok())
            return started;
        std::vector<std::string> arguments = core::trainerArguments(*spec);
        arguments.insert(arguments.end(), {"--job-id", std::to_string(job.id)});
        if (start) {
            const auto more = core::KeyRelease::startArguments(*start, start->sealed);
            arguments.insert(arguments.end(), more.begin(), more.end());
        }
        const auto began = std::chrono::steady_clock::now();
        int exitCode = -1;
        // The run's metrics go into its history (docs/runs.md) as a worker's would, a batch at a
        // time; a line that is not a metrics line is only streamed.
        std::vector<core::MetricsLine> batch;
        Status recorded = Status::OK;
        const auto record = [&]() {
            if (batch.empty() || !recorded.ok())
                return;
            recorded = shared_.inGroup(*context, [&]() -> Status {
                return statusOf(shared_.platform.controlPlane().scheduler().recordOwnRun(
                    job.id, attempt, batch));
            });
            batch.clear();
        };
        Status ran =
            runAndStream(*info, start, arguments, writer, &exitCode, [&](const std::string& line) {
                if (auto parsed = core::parseMetricsLine(line))
                    batch.push_back(std::move(parsed).value());
                if (batch.size() >= kRecordEvery)
                    record();
            });
        record();
        const double hours = std::chrono::duration<double, std::ratio<3600>>(
                                 std::chrono::steady_clock::now() - began)
                                 .count();
        const double gpuHours = core::gpuHoursCharged(*spec, hours);
        const bool succeeded = ran.ok() && exitCode == 0;
        Status finished = shared_.inGroup(*context, [&]() -> Status {
            auto ended = shared_.platform.controlPlane().jobs().finish(
                job.id, succeeded, gpuHours,
                succeeded ? std::string()
                          : fmt::format("the trainer stopped with exit status {}", exitCode));
            return ended ? Status::OK : Internal::toStatus(ended.error());
        });
        if (!ran.ok())
            return ran;
        return finished.ok() ? recorded : finished;
    }

private:
    // Runs the trainer on `info`'s dataset with the run's scoped keys and `arguments` (the
    // caller's hyper-parameters or a job's settings), streaming its metrics (each line also to
    // `onLine`), then how it ended.
    Status runAndStream(const core::DatasetInfo& info,
                        const std::optional<core::StartingModel>& start,
                        const std::vector<std::string>& arguments,
                        grpc::ServerWriter<v1::TrainEvent>* writer, int* exitCode,
                        const std::function<void(const std::string&)>& onLine) const
    {
        const core::KeyRelease release(shared_.platform);
        auto keys = release.forOwnRun(info.id, start);
        if (!keys)
            return Internal::toStatus(keys.error());
        const std::string runId = "run-" + toHex(crypto::randomBytes(8));
        const auto runFolder = release.runFolder(runId);
        std::vector<std::string> trainerArguments{
            "--dataset",
            core::datasetFolder(shared_.platform.datasetsRoot(), info.id).string(),
            "--dataset-id",
            info.id,
            "--dataset-signer",
            (shared_.platform.path() / core::datadir::kManifestsPublicKey).string(),
            "--out",
            runFolder.string(),
            "--run-id",
            runId};
        trainerArguments.insert(trainerArguments.end(), arguments.begin(), arguments.end());
        v1::TrainEvent event;
        auto status = core::runTrainer(
            {shared_.options.trainer.string(), "train", std::move(trainerArguments), {}, {}, {}},
            std::move(keys).value(), [&](std::string_view line) {
                if (!line.empty() && line.back() == '\n')
                    line.remove_suffix(1);
                event.set_metrics_line(std::string(line));
                onLine(event.metrics_line());
                (void)writer->Write(event);  // a client gone away does not stop the run
            });
        if (!status)
            return Internal::toStatus(status.error());
        if (exitCode != nullptr)
            *exitCode = *status;
        v1::TrainFinished* finished = event.mutable_finished();
        finished->set_run_id(runId);
        finished->set_exit_code(*status);
        finished->set_checkpoints(release.runCheckpointCount(runId));
        (void)writer->Write(event);
        return Status::OK;
    }

public:
    Status Sample(ServerContext* context, const v1::SampleRequest* request,
                  v1::SampleReply* reply) override
    {
        // One decision of core first (issue #54): the caller, the options, the object's read
        // rule, then what the object holds; a refusal is audited with the caller, and an
        // anonymous caller learns nothing of which runs or jobs have checkpoints.
        const core::SampleTarget target{static_cast<std::int64_t>(request->job()), request->model(),
                                        request->run_id(), request->step()};
        const std::vector<std::string> given(request->sampler_arguments().begin(),
                                             request->sampler_arguments().end());
        core::JobPolicy::Sampling limits;
        Result<core::SamplerCall> call = Error(ErrorCode::Internal, "No sampling check ran.");
        Status admitted = shared_.inGroup(*context, [&]() -> Status {
            auto& jobs = shared_.platform.controlPlane().jobs();
            limits = jobs.policy().sampling;
            call = jobs.admitSample(callerOf(shared_, *context).token, target, given);
            return call ? Status::OK : Internal::toStatus(call.error());
        });
        if (!admitted.ok())
            return admitted;
        if (auto trainer = configuredTrainer(); !trainer.ok())
            return trainer;
        if (request->job() != 0)
            return sampleJob(*context, *request, *call, limits, *reply);
        if (!request->model().empty())
            return sampleModel(*context, request->model(), *call, limits, *reply);
        // A model carries the classification of its data: sampling needs the same release as
        // reading the dataset, and only a checkpoint this platform signed counts.
        const core::KeyRelease release(shared_.platform);
        auto checkpoint = release.runCheckpoint(request->run_id(), request->step());
        if (!checkpoint)
            return Internal::toStatus(checkpoint.error());
        return sampleFrom(*context, *checkpoint, *call, limits, *reply);
    }

private:
    // Sample from a job's checkpoint: signed by the worker that trained it (its enrolled key),
    // sealed under the job's own key; the same read release as the dataset's.
    Status sampleJob(const ServerContext& context, const v1::SampleRequest& request,
                     const core::SamplerCall& call, const core::JobPolicy::Sampling& limits,
                     v1::SampleReply& reply)
    {
        std::vector<core::JobCheckpoint> recorded;
        std::map<std::string, std::string> signerPems;
        Status listed = shared_.inGroup(context, [&]() -> Status {
            auto& plane = shared_.platform.controlPlane();
            auto checkpoints = plane.scheduler().checkpoints(request.job());
            if (!checkpoints)
                return Internal::toStatus(checkpoints.error());
            recorded = std::move(checkpoints).value();
            for (const core::JobCheckpoint& checkpoint : recorded) {
                if (signerPems.count(checkpoint.worker) > 0)
                    continue;
                auto worker = plane.workers().byName(checkpoint.worker);
                if (!worker)
                    return Internal::toStatus(worker.error());
                signerPems[checkpoint.worker] = worker->signingKeyPem;
            }
            return Status::OK;
        });
        if (!listed.ok())
            return listed;
        const core::JobCheckpoint* chosen = nullptr;
        for (const core::JobCheckpoint& checkpoint : recorded)
            if (request.step() == 0 || checkpoint.step == static_cast<std::int64_t>(request.step()))
                chosen = &checkpoint;
        if (chosen == nullptr)
            return Internal::toStatus(
                Error(ErrorCode::NotFound,
                      request.step() == 0
                          ? fmt::format("Job {} has no checkpoint yet; wait for its worker.",
                                        request.job())
                          : fmt::format("Job {} has no checkpoint at step {}; leave --step out for "
                                        "its newest.",
                                        request.job(), request.step())));
        auto checkpoint =
            core::KeyRelease(shared_.platform).jobCheckpoint(*chosen, signerPems[chosen->worker]);
        if (!checkpoint)
            return Internal::toStatus(checkpoint.error());
        return sampleFrom(context, *checkpoint, call, limits, reply);
    }

    // Sample from a registered model version: the registry resolves the reference and checks its
    // checkpoint's files (audited as model.use with the digest), then the job's checkpoint rule.
    Status sampleModel(const ServerContext& context, const std::string& reference,
                       const core::SamplerCall& call, const core::JobPolicy::Sampling& limits,
                       v1::SampleReply& reply)
    {
        core::ResolvedModel resolved;
        Status found = shared_.inGroup(context, [&]() -> Status {
            auto model = shared_.platform.controlPlane().registry().resolve(
                callerOf(shared_, context).token, reference, "sample");
            if (!model)
                return Internal::toStatus(model.error());
            resolved = std::move(model).value();
            return Status::OK;
        });
        if (!found.ok())
            return found;
        auto checkpoint = core::KeyRelease(shared_.platform)
                              .jobCheckpoint(resolved.checkpoint, resolved.signerPem);
        if (!checkpoint)
            return Internal::toStatus(checkpoint.error());
        return sampleFrom(context, *checkpoint, call, limits, reply);
    }

    // Samples from a verified checkpoint once its dataset's read release is authorised, with
    // the keys the key release gives a sampler for it.
    Status sampleFrom(const ServerContext& context, const core::VerifiedCheckpoint& checkpoint,
                      const core::SamplerCall& call, const core::JobPolicy::Sampling& limits,
                      v1::SampleReply& reply)
    {
        auto info = authorizeRead(context, checkpoint.datasetId, "sample");
        if (!info)
            return Internal::toStatus(info.error());
        auto keys = core::KeyRelease(shared_.platform).forSampler(checkpoint);
        if (!keys)
            return Internal::toStatus(keys.error());
        return runSampler(context, std::move(keys).value(), checkpoint, info->id, call, limits,
                          reply);
    }

    // Runs `sealtrain-train sample` on a checkpoint whose signature was verified (`checkpoint`) and
    // whose dataset's release was authorised, checking that it reads exactly that file. The
    // sampler is killed when the caller goes away or after the policy's max_seconds.
    Status runSampler(const ServerContext& context, crypto::SecretBytes keys,
                      const core::VerifiedCheckpoint& checkpoint, const std::string& datasetId,
                      const core::SamplerCall& call, const core::JobPolicy::Sampling& limits,
                      v1::SampleReply& reply) const
    {
        const auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(limits.maxSeconds);
        const auto stopReason = [&]() -> std::optional<std::string> {
            if (context.IsCancelled())
                return std::string("The caller went away; the sampler was stopped.");
            if (std::chrono::steady_clock::now() > deadline)
                return fmt::format("The sampler ran past the job policy's sampling.max_seconds "
                                   "({} s) and was stopped; ask for fewer tokens.",
                                   limits.maxSeconds);
            return std::nullopt;
        };
        std::vector<std::string> samplerArguments{"--checkpoint",
                                                  checkpoint.files.sealed.string(),
                                                  "--expect-checkpoint-sha256",
                                                  checkpoint.plaintextSha256,
                                                  "--expect-dataset-id",
                                                  datasetId};
        samplerArguments.insert(samplerArguments.end(), call.arguments.begin(),
                                call.arguments.end());
        std::string text;
        // The prompt goes on the sampler's standard input, never in its argv (issue #27, item 4).
        auto status =
            core::runTrainer({shared_.options.trainer.string(),
                              "sample",
                              std::move(samplerArguments),
                              {},
                              stopReason,
                              call.prompt},
                             std::move(keys), [&](std::string_view line) { text += line; });
        if (!status)
            return Internal::toStatus(status.error());
        if (*status != 0)
            return Internal::toStatus(Error(
                ErrorCode::Internal,
                fmt::format("The sampler stopped with exit status {}; the control plane's log "
                            "says why.",
                            *status)));
        reply.set_text(text);
        reply.set_step(checkpoint.files.step);
        return Status::OK;
    }

    [[nodiscard]] Status configuredTrainer() const
    {
        if (shared_.options.trainer.empty())
            return Internal::toStatus(Error(ErrorCode::NotFound,
                                            "This control plane runs no trainer; its operator "
                                            "gives sealtrain-control --trainer PATH."));
        return Status::OK;
    }

    // The read-key release check of core (Datasets::authorizeRead), in a group commit.
    [[nodiscard]] Result<core::DatasetInfo> authorizeRead(const ServerContext& context,
                                                          const std::string& reference,
                                                          const std::string& purpose)
    {
        Result<core::DatasetInfo> info = Error(ErrorCode::Internal, "No release check ran.");
        const Status status = shared_.inGroup(context, [&]() -> Status {
            info = shared_.platform.controlPlane().datasets().authorizeRead(
                callerOf(shared_, context).token, reference, purpose);
            return info ? Status::OK : Internal::toStatus(info.error());
        });
        if (!status.ok() && info)
            return Internal::fromStatus(status, "the control plane");
        return info;
    }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeTrainingService(Shared& shared)
{
    return std::make_unique<TrainingService>(shared);
}

}  // namespace sealtrain::api::server_internal
