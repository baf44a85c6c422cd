// The Jobs service (control.proto, "Jobs"): submission, vetting, approval by a second person,
// the queue, and metrics; a caller's spec is read only once the caller is known.
#include "file_transfer.h"
#include "server_shared.h"
#include "status.h"

#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/jobs/watch.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/formats/job_spec.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

// A log line is kept as a JSON string; its text.
std::string logText(const std::string& json)
{
    const auto text = nlohmann::json::parse(json, nullptr, false);
    return text.is_string() ? text.get<std::string>() : json;
}

class JobsService final : public v1::Jobs::Service {
public:
    explicit JobsService(Shared& shared)
        : shared_(shared)
    {
    }

    Status SubmitJob(ServerContext* context, const v1::SubmitJobRequest* request,
                     v1::JobReply* reply) override
    {
        const Result<formats::JobSpec> spec = readSpec(*context, request->spec_text());
        return answer(*context, reply, [&](core::Jobs& jobs, const std::string& session) {
            return jobs.submit(session, spec);
        });
    }

    Status EditJob(ServerContext* context, const v1::EditJobRequest* request,
                   v1::JobReply* reply) override
    {
        const Result<formats::JobSpec> spec = readSpec(*context, request->spec_text());
        return answer(*context, reply, [&](core::Jobs& jobs, const std::string& session) {
            return jobs.edit(session, request->id(), spec);
        });
    }

    Status VetJob(ServerContext* context, const v1::JobIdRequest* request,
                  v1::JobReply* reply) override
    {
        return answer(*context, reply, [&](core::Jobs& jobs, const std::string& session) {
            return jobs.vet(session, request->id());
        });
    }

    Status ApproveJob(ServerContext* context, const v1::ApproveJobRequest* request,
                      v1::JobReply* reply) override
    {
        // An approved job goes into the workers' queue at once, in the same transaction.
        return shared_.inGroup(*context, [&]() -> Status {
            auto job = shared_.platform.controlPlane().approveJob(
                callerOf(shared_, *context).token, request->id(), request->spec_sha256());
            if (!job)
                return Internal::toStatus(job.error());
            fillJob(*job, reply->mutable_job());
            return Status::OK;
        });
    }

    Status RejectJob(ServerContext* context, const v1::DecideJobRequest* request,
                     v1::JobReply* reply) override
    {
        return answer(*context, reply, [&](core::Jobs& jobs, const std::string& session) {
            return jobs.reject(session, request->id(), request->reason());
        });
    }

    Status CancelJob(ServerContext* context, const v1::DecideJobRequest* request,
                     v1::JobReply* reply) override
    {
        return answer(*context, reply, [&](core::Jobs& jobs, const std::string& session) {
            return jobs.cancel(session, request->id(), request->reason());
        });
    }

    Status ShowJob(ServerContext* context, const v1::JobIdRequest* request,
                   v1::JobReply* reply) override
    {
        return answer(*context, reply, [&](core::Jobs& jobs, const std::string& session) {
            return jobs.show(session, request->id());
        });
    }

    Status ListJobs(ServerContext* context, const v1::ListJobsRequest* request,
                    v1::ListJobsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto jobs = shared_.platform.controlPlane().jobs().list(
                callerOf(shared_, *context).token, listPage(request->before(), request->limit()));
            if (!jobs)
                return Internal::toStatus(jobs.error());
            reply->set_next_before(jobs->nextBefore);
            for (const core::JobInfo& job : jobs->items)
                fillJob(job, reply->add_jobs());
            return Status::OK;
        });
    }

    Status JobMetrics(ServerContext* context, const v1::JobMetricsRequest* request,
                      v1::JobMetricsReply* reply) override
    {
        // The caller first: core refuses (and audits) an anonymous caller, then a wrong ask.
        const bool logs = request->what() == "logs";
        return shared_.inGroup(*context, [&]() -> Status {
            auto lines = shared_.platform.controlPlane().scheduler().metrics(
                callerOf(shared_, *context).token, request->id(), logs ? 0 : request->from_step(),
                request->what());
            if (!lines)
                return Internal::toStatus(lines.error());
            for (const core::MetricsLine& line : *lines) {
                if ((line.kind == "log") != logs)
                    continue;
                if (!logs) {
                    reply->add_lines(line.json);
                    continue;
                }
                reply->add_lines(logText(line.json));
            }
            return Status::OK;
        });
    }

    Status WatchJob(ServerContext* context, const v1::WatchJobRequest* request,
                    grpc::ServerWriter<v1::JobEvent>* writer) override
    {
        core::ControlPlane& plane = shared_.platform.controlPlane();
        // The caller first: an anonymous caller takes no slot; core refuses and audits it.
        std::shared_ptr<void> slot;
        if (const std::string user = shared_.signedInUser(*context); !user.empty()) {
            bool userLimit = false;
            slot = shared_.watchSlot(user, userLimit);
            if (!slot) {
                const std::lock_guard guard(shared_.lock);
                const Shared::OriginScope origin(shared_, shared_.originOf(*context));
                return Internal::toStatus(plane.jobWatches().refuseBusy(
                    callerOf(shared_, *context).token, request->id(),
                    Error(ErrorCode::ResourceExhausted,
                          userLimit ? fmt::format("You are streaming {} job watches already, the "
                                                  "most one user may; end one first.",
                                                  shared_.options.maxWatchesPerUser)
                                    : fmt::format("The control plane is streaming {} job "
                                                  "watches already; try again when one has "
                                                  "ended.",
                                                  shared_.options.maxWatches))));
            }
        }
        core::JobWatchCursor cursor;
        v1::JobEvent event;
        Status opened = shared_.inGroup(*context, [&]() -> Status {
            auto job = plane.jobWatches().open(callerOf(shared_, *context).token, request->id());
            if (!job)
                return Internal::toStatus(job.error());
            fillJob(*job, event.mutable_job());
            cursor.state = core::jobStateName(job->state);
            cursor.updated = job->updated;
            return Status::OK;
        });
        if (!opened.ok())
            return opened;
        if (!writer->Write(event))
            return {grpc::StatusCode::CANCELLED, "The client went away."};
        while (!context->IsCancelled()) {
            Result<core::JobWatchUpdate> update = Error(ErrorCode::Internal, "No look.");
            {
                // A read (it writes only a session's due use, or a refusal): between groups.
                const std::lock_guard guard(shared_.lock);
                const Shared::OriginScope origin(shared_, shared_.originOf(*context));
                update = plane.jobWatches().poll(callerOf(shared_, *context).token, request->id(),
                                                 cursor);
            }
            if (!update)
                return Internal::toStatus(update.error());
            bool sent = true;
            if (update->job) {
                event.Clear();
                fillJob(*update->job, event.mutable_job());
                sent = sent && writer->Write(event);
            }
            for (const core::MetricsLine& line : update->lines) {
                event.Clear();
                if (line.kind == "log")
                    event.set_log_line(logText(line.json));
                else
                    event.set_metrics_line(line.json);
                sent = sent && writer->Write(event);
            }
            for (const core::JobCheckpoint& checkpoint : update->checkpoints) {
                event.Clear();
                fillCheckpoint(checkpoint, event.mutable_checkpoint());
                sent = sent && writer->Write(event);
            }
            if (!sent)
                return {grpc::StatusCode::CANCELLED, "The client went away."};
            if (update->ended)
                return Status::OK;
            if (update->lines.empty())
                std::this_thread::sleep_for(shared_.options.watchInterval);
        }
        return {grpc::StatusCode::CANCELLED, "The client went away."};
    }

    Status ListCheckpoints(ServerContext* context, const v1::JobIdRequest* request,
                           v1::ListCheckpointsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto checkpoints = shared_.platform.controlPlane().jobCheckpoints().list(
                callerOf(shared_, *context).token, request->id());
            if (!checkpoints)
                return Internal::toStatus(checkpoints.error());
            for (const core::JobCheckpoint& checkpoint : *checkpoints)
                fillCheckpoint(checkpoint, reply->add_checkpoints());
            return Status::OK;
        });
    }

    Status ShowPolicy(ServerContext* context, const v1::ShowPolicyRequest* /*request*/,
                      v1::ShowPolicyReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto view = shared_.platform.controlPlane().policyReads().show(
                callerOf(shared_, *context).token);
            if (!view)
                return Internal::toStatus(view.error());
            for (const auto& [pool, classifications] : view->policy.poolClassifications) {
                v1::PolicyPool* out = reply->add_pools();
                out->set_name(pool);
                for (const std::string& classification : classifications)
                    out->add_classifications(classification);
                const auto costs = view->policy.poolCosts.find(pool);
                const core::JobPolicy::PoolCosts cost = costs == view->policy.poolCosts.end()
                                                            ? core::JobPolicy::PoolCosts{}
                                                            : costs->second;
                out->set_max_parameters(static_cast<double>(cost.maxParameters));
                out->set_max_memory_gib(cost.maxMemoryGib);
                out->set_max_step_tflop(cost.maxStepTflop);
            }
            for (const auto& [name, value] : core::namedCaps(view->policy.caps)) {
                v1::PolicyCap* out = reply->add_caps();
                out->set_name(name);
                out->set_value(value);
            }
            reply->set_sample_max_length(view->policy.sampling.maxLength);
            reply->set_sample_max_prompt_bytes(view->policy.sampling.maxPromptBytes);
            reply->set_sample_max_seconds(view->policy.sampling.maxSeconds);
            for (const core::BudgetUse& budget : view->budgets) {
                v1::BudgetUse* out = reply->add_budgets();
                out->set_project(budget.project);
                out->set_gpu_hours(budget.gpuHours);
                out->set_alert_at(budget.alertAt);
                out->set_used_hours(budget.usedHours);
                out->set_held_hours(budget.heldHours);
                out->set_cpu_hours(budget.cpuHours);
                out->set_cpu_used_hours(budget.cpuUsedHours);
                out->set_cpu_held_hours(budget.cpuHeldHours);
            }
            return Status::OK;
        });
    }

    Status DownloadCheckpoint(ServerContext* context, const v1::DownloadCheckpointRequest* request,
                              grpc::ServerWriter<v1::FileChunk>* writer) override
    {
        std::optional<core::JobCheckpoint> chosen;
        Status allowed = shared_.inGroup(*context, [&]() -> Status {
            auto checkpoint = shared_.platform.controlPlane().jobCheckpoints().download(
                callerOf(shared_, *context).token, request->id(), request->step());
            if (!checkpoint)
                return Internal::toStatus(checkpoint.error());
            chosen = std::move(checkpoint).value();
            return Status::OK;
        });
        if (!allowed.ok())
            return allowed;
        // Read outside the group: a large checkpoint holds up nobody's commit.
        const core::CheckpointPaths files = core::ReturnedCheckpoints(shared_.platform.keyVault())
                                                .jobCheckpointFiles(request->id(), chosen->step);
        return statusOf(
            transfer::sendFiles({files.sealed, files.envelope}, {},
                                [&](const v1::FileChunk& chunk) { return writer->Write(chunk); }));
    }

private:
    // The caller first (issue #27): an anonymous caller's spec is never read, and a signed-in
    // caller's is parsed here, on this call's own thread, never on the thread that commits every
    // call; parseJobSpec bounds what it may cost. Core refuses a bad session before the spec.
    [[nodiscard]] Result<formats::JobSpec> readSpec(const ServerContext& context,
                                                    const std::string& text)
    {
        if (!shared_.isSignedIn(context))
            return Error(ErrorCode::Unauthenticated, "Sign in first; the job spec was not read.");
        return formats::parseJobSpec(text, shared_.options.jobSpecLimits);
    }

    // One core call on the caller's session, in a group commit; the job it returns is the reply.
    template <typename Call>
    Status answer(const ServerContext& context, v1::JobReply* reply, const Call& call)
    {
        return shared_.inGroup(context, [&]() -> Status {
            auto job =
                call(shared_.platform.controlPlane().jobs(), callerOf(shared_, context).token);
            if (!job)
                return Internal::toStatus(job.error());
            fillJob(*job, reply->mutable_job());
            return Status::OK;
        });
    }

    Shared& shared_;
};

}  // namespace

void fillJob(const core::JobInfo& job, sealtrain::v1::Job* out)
{
    out->set_id(job.id);
    out->set_name(job.name);
    out->set_project(job.project);
    out->set_state(core::jobStateName(job.state));
    out->set_submitter(job.submitter);
    out->set_approver(job.approver);
    out->set_spec_json(job.specJson);
    out->set_spec_sha256(job.specSha256);
    out->set_dataset_id(job.datasetId);
    out->set_pool(job.pool);
    out->set_priority(job.priority);
    for (const core::VettingCheck& check : job.vetting) {
        v1::VettingCheck* vetting = out->add_vetting();
        vetting->set_check(check.check);
        vetting->set_ok(check.ok);
        vetting->set_detail(check.detail);
    }
    out->set_reason(job.reason);
    out->set_restarts(job.restarts);
    out->set_max_restarts(job.maxRestarts);
    out->set_gpu_hours_limit(job.gpuHoursLimit);
    out->set_gpu_hours_used(job.gpuHoursUsed);
    out->set_cpu_hours_limit(job.cpuHoursLimit);
    out->set_cpu_hours_used(job.cpuHoursUsed);
    out->set_created_unix(job.created);
    out->set_updated_unix(job.updated);
    out->set_worker(job.worker);
    out->set_attempt(job.attempt);
}

void fillCheckpoint(const core::JobCheckpoint& checkpoint, sealtrain::v1::JobCheckpoint* out)
{
    out->set_step(checkpoint.step);
    out->set_attempt(checkpoint.attempt);
    out->set_worker(checkpoint.worker);
    out->set_sealed_sha256(checkpoint.sealedSha256);
    out->set_plaintext_sha256(checkpoint.plaintextSha256);
    out->set_recorded_unix(checkpoint.recorded);
}

std::unique_ptr<grpc::Service> makeJobsService(Shared& shared)
{
    return std::make_unique<JobsService>(shared);
}

}  // namespace sealtrain::api::server_internal
