// The client library's JobsClient, WorkersClient and WorkerClient (jobs_client.h, workers_client.h,
// worker_client.h; the other handles in the other client*.cpp files).
#include "client_state.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api {

namespace v1 = sealtrain::v1;
using client_internal::attemptOf;
using client_internal::kLargestPage;
using client_internal::kStreamTimeout;
using client_internal::setDeadline;
using client_internal::summaryOf;
using client_internal::workerOf;

Result<JobSummary> JobsClient::submitJob(const std::string& specText)
{
    v1::SubmitJobRequest request;
    request.set_spec_text(specText);
    return state_->job(&v1::Jobs::Stub::SubmitJob, request);
}

Result<JobSummary> JobsClient::editJob(std::int64_t id, const std::string& specText)
{
    v1::EditJobRequest request;
    request.set_id(id);
    request.set_spec_text(specText);
    return state_->job(&v1::Jobs::Stub::EditJob, request);
}

Result<JobSummary> JobsClient::vetJob(std::int64_t id)
{
    v1::JobIdRequest request;
    request.set_id(id);
    return state_->job(&v1::Jobs::Stub::VetJob, request);
}

Result<JobSummary> JobsClient::approveJob(std::int64_t id, const std::string& specSha256)
{
    v1::ApproveJobRequest request;
    request.set_id(id);
    request.set_spec_sha256(specSha256);
    return state_->job(&v1::Jobs::Stub::ApproveJob, request);
}

Result<JobSummary> JobsClient::rejectJob(std::int64_t id, const std::string& reason)
{
    v1::DecideJobRequest request;
    request.set_id(id);
    request.set_reason(reason);
    return state_->job(&v1::Jobs::Stub::RejectJob, request);
}

Result<JobSummary> JobsClient::cancelJob(std::int64_t id, const std::string& reason)
{
    v1::DecideJobRequest request;
    request.set_id(id);
    request.set_reason(reason);
    return state_->job(&v1::Jobs::Stub::CancelJob, request);
}

Result<JobSummary> JobsClient::showJob(std::int64_t id)
{
    v1::JobIdRequest request;
    request.set_id(id);
    return state_->job(&v1::Jobs::Stub::ShowJob, request);
}

Result<Page<JobSummary>> JobsClient::listJobsPage(std::int64_t before, std::uint32_t limit)
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::ListJobsRequest request;
    request.set_before(before);
    request.set_limit(limit);
    v1::ListJobsReply reply;
    const grpc::Status status = state_->jobs->ListJobs(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    Page<JobSummary> page;
    for (const v1::Job& job : reply.jobs())
        page.items.push_back(summaryOf(job));
    page.nextBefore = reply.next_before();
    return page;
}

Result<std::vector<JobSummary>> JobsClient::listJobs()
{
    return allPages<JobSummary>(
        [this](std::int64_t before) { return listJobsPage(before, kLargestPage); });
}

Result<std::vector<std::string>> JobsClient::jobMetrics(std::int64_t id, bool logs,
                                                        std::int64_t fromStep)
{
    v1::JobMetricsRequest request;
    request.set_id(id);
    request.set_what(logs ? "logs" : "metrics");
    request.set_from_step(fromStep);
    grpc::ClientContext context;
    setDeadline(context);
    v1::JobMetricsReply reply;
    const grpc::Status status = state_->jobs->JobMetrics(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return std::vector<std::string>(reply.lines().begin(), reply.lines().end());
}

Result<EnrollTokenGrant> WorkersClient::createEnrollToken(const std::string& worker,
                                                          const std::string& pool,
                                                          std::int64_t validSeconds)
{
    v1::CreateEnrollTokenRequest request;
    request.set_worker(worker);
    request.set_pool(pool);
    request.set_valid_seconds(validSeconds);
    grpc::ClientContext context;
    setDeadline(context);
    v1::CreateEnrollTokenReply reply;
    const grpc::Status status = state_->workers->CreateEnrollToken(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return EnrollTokenGrant{reply.token(), reply.expires_unix()};
}

Result<std::vector<WorkerSummary>> WorkersClient::listWorkers()
{
    return state_->allKeyedPages<WorkerSummary>(
        *state_->workers, &v1::Workers::Stub::ListWorkers,
        [](const v1::ListWorkersReply& reply, std::vector<WorkerSummary>& workers) {
            for (const v1::Worker& worker : reply.workers())
                workers.push_back(workerOf(worker));
        });
}

Result<WorkerSummary> WorkersClient::declareInterconnect(const std::string& worker, bool encrypted)
{
    v1::DeclareInterconnectRequest request;
    request.set_worker(worker);
    request.set_encrypted(encrypted);
    grpc::ClientContext context;
    setDeadline(context);
    v1::WorkerReply reply;
    const grpc::Status status = state_->workers->DeclareInterconnect(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return workerOf(reply.worker());
}

Result<WorkerSummary> WorkersClient::revokeWorker(const std::string& worker,
                                                  const std::string& reason)
{
    v1::RevokeWorkerRequest request;
    request.set_worker(worker);
    request.set_reason(reason);
    grpc::ClientContext context;
    setDeadline(context);
    v1::WorkerReply reply;
    const grpc::Status status = state_->workers->RevokeWorker(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return workerOf(reply.worker());
}

Result<WorkerEnrolled> WorkerClient::enrollWorker(const WorkerEnrollment& enrollment)
{
    v1::EnrollRequest request;
    request.set_token(enrollment.token);
    request.set_csr_pem(enrollment.csrPem);
    request.set_signing_public_key_pem(enrollment.signingPublicKeyPem);
    request.set_box_public_key(enrollment.boxPublicKey.data(), enrollment.boxPublicKey.size());
    request.set_inventory_json(enrollment.inventoryJson);
    grpc::ClientContext context;
    setDeadline(context);
    v1::EnrollReply reply;
    const grpc::Status status = state_->workers->Enroll(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return WorkerEnrolled{reply.certificate_pem(), reply.worker(), reply.pool()};
}

void CallCancel::cancel()
{
    const std::lock_guard guard(lock_);
    cancelled_ = true;
    if (context_ != nullptr)
        static_cast<grpc::ClientContext*>(context_)->TryCancel();
}

bool CallCancel::cancelled() const
{
    const std::lock_guard guard(lock_);
    return cancelled_;
}

void CallCancel::attach(void* context)
{
    const std::lock_guard guard(lock_);
    context_ = context;
    if (cancelled_)
        static_cast<grpc::ClientContext*>(context_)->TryCancel();
}

void CallCancel::detach()
{
    const std::lock_guard guard(lock_);
    context_ = nullptr;
}

Result<JobSummary> JobsClient::watchJob(std::int64_t id,
                                        const std::function<bool(const JobWatchEvent&)>& onEvent,
                                        CallCancel* cancel)
{
    v1::WatchJobRequest request;
    request.set_id(id);
    grpc::ClientContext context;
    auto stream = state_->jobs->WatchJob(&context, request);
    const client_internal::CancelScope scope(cancel, context);
    v1::JobEvent event;
    JobWatchEvent out;
    JobSummary last;
    bool stopped = false;
    while (!stopped && stream->Read(&event)) {
        out = {};
        switch (event.event_case()) {
        case v1::JobEvent::kJob:
            out.kind = JobWatchEvent::Kind::Job;
            out.job = summaryOf(event.job());
            last = out.job;
            break;
        case v1::JobEvent::kMetricsLine:
            out.kind = JobWatchEvent::Kind::Metrics;
            out.line = event.metrics_line();
            break;
        case v1::JobEvent::kLogLine:
            out.kind = JobWatchEvent::Kind::Log;
            out.line = event.log_line();
            break;
        case v1::JobEvent::kCheckpoint: {
            out.kind = JobWatchEvent::Kind::Checkpoint;
            out.checkpoint = client_internal::checkpointViewOf(event.checkpoint());
            break;
        }
        case v1::JobEvent::EVENT_NOT_SET: continue;  // a newer server's event: skipped
        }
        stopped = !onEvent(out);
    }
    if (stopped) {
        context.TryCancel();
        (void)stream->Finish();
        return last;
    }
    const grpc::Status status = stream->Finish();
    if (cancel != nullptr && cancel->cancelled())
        return last;
    if (!status.ok())
        return state_->failure(status);
    return last;
}

bool WorkerClient::certificateRefused()
{
    return state_->refusesCertificate();
}

bool client_internal::ClientState::refusesCertificate() const
{
    constexpr auto kProbeTimeout = std::chrono::seconds(5);
    const auto ask = [&](v1::Platform::Stub& stub) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + kProbeTimeout);
        v1::GetCaCertificateReply reply;
        return stub.GetCaCertificate(&context, {}, &reply).error_code();
    };
    const Endpoint& anonymous = endpoint;
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = anonymous.caCertificatePem;
    const auto anonymousChannel =
        openChannel(anonymous.address, anonymous.serverName, grpc::SslCredentials(ssl));
    if (ask(*v1::Platform::NewStub(anonymousChannel)) != grpc::StatusCode::OK)
        return false;
    // UNAVAILABLE, not DEADLINE_EXCEEDED: the handshake failed; a slow answer says nothing.
    const auto identifiedChannel = openChannel(endpoint.address, endpoint.serverName, credentials);
    return ask(*v1::Platform::NewStub(identifiedChannel)) == grpc::StatusCode::UNAVAILABLE;
}

Result<HeartbeatAnswer> WorkerClient::heartbeat(const std::string& inventoryJson, std::int64_t job,
                                                std::int64_t attempt,
                                                std::chrono::milliseconds timeout)
{
    v1::HeartbeatRequest request;
    request.set_inventory_json(inventoryJson);
    request.set_job(job);
    request.set_attempt(attempt);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + timeout);
    v1::HeartbeatReply reply;
    const grpc::Status status = state_->workers->Heartbeat(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return HeartbeatAnswer{{reply.stop_jobs().begin(), reply.stop_jobs().end()},
                           reply.interval_ms()};
}

Result<std::optional<JobAssignment>> WorkerClient::takeJob()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::TakeJobReply reply;
    const grpc::Status status = state_->workers->TakeJob(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    if (!reply.has_job())
        return std::optional<JobAssignment>();
    JobAssignment assignment;
    assignment.job = reply.job();
    assignment.attempt = reply.attempt();
    assignment.runId = reply.run_id();
    assignment.datasetId = reply.dataset_id();
    assignment.trainerArguments.assign(reply.trainer_arguments().begin(),
                                       reply.trainer_arguments().end());
    assignment.sealedKeys.assign(reply.sealed_keys().begin(), reply.sealed_keys().end());
    assignment.manifestsPublicKeyPem = reply.manifests_public_key_pem();
    assignment.resume = reply.resume();
    assignment.gpus = reply.gpus();
    assignment.chargedGpus = reply.charged_gpus();
    assignment.checkpointKek = reply.checkpoint_kek();
    assignment.nodes = reply.nodes();
    assignment.ranksPerNode = reply.ranks_per_node();
    assignment.startsFromModel = reply.starts_from_model();
    return std::optional<JobAssignment>(std::move(assignment));
}

Result<std::vector<std::filesystem::path>>
WorkerClient::fetchDataset(std::int64_t job, std::int64_t attempt,
                           const std::filesystem::path& folder)
{
    return state_->fetchFiles(&v1::Workers::Stub::FetchDataset, attemptOf(job, attempt), folder,
                              std::uint64_t{1} << 42U);
}

Result<std::vector<std::filesystem::path>>
WorkerClient::fetchCheckpoint(std::int64_t job, std::int64_t attempt,
                              const std::filesystem::path& folder)
{
    return state_->fetchFiles(&v1::Workers::Stub::FetchCheckpoint, attemptOf(job, attempt), folder,
                              std::uint64_t{1} << 40U);
}

Result<std::vector<std::filesystem::path>>
WorkerClient::fetchInitModel(std::int64_t job, std::int64_t attempt,
                             const std::filesystem::path& folder)
{
    return state_->fetchFiles(&v1::Workers::Stub::FetchInitModel, attemptOf(job, attempt), folder,
                              std::uint64_t{1} << 40U);
}

Result<bool> WorkerClient::reportMetrics(const MetricsReport& report)
{
    v1::ReportMetricsRequest request;
    *request.mutable_attempt() = attemptOf(report.job, report.attempt);
    for (const std::string& line : report.metricsLines)
        request.add_metrics_lines(line);
    for (const std::string& line : report.logLines)
        request.add_log_lines(line);
    request.set_first_log_line(report.firstLogLine);
    request.set_gpu_hours(report.gpuHours);
    grpc::ClientContext context;
    setDeadline(context);
    v1::ReportMetricsReply reply;
    const grpc::Status status = state_->workers->ReportMetrics(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return reply.stop();
}

Result<UploadedCheckpoint> WorkerClient::uploadCheckpoint(std::int64_t job, std::int64_t attempt,
                                                          const std::filesystem::path& sealed,
                                                          const std::filesystem::path& envelope)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
    v1::UploadCheckpointReply reply;
    auto stream = state_->workers->UploadCheckpoint(&context, &reply);
    v1::FileChunk first;
    *first.mutable_attempt() = attemptOf(job, attempt);
    auto sent = transfer::sendFiles({sealed, envelope}, first, [&](const v1::FileChunk& chunk) {
        return stream->Write(chunk);
    });
    (void)stream->WritesDone();
    const grpc::Status status = stream->Finish();
    if (!status.ok())
        return state_->failure(status);
    if (!sent)
        return sent.error();
    return UploadedCheckpoint{reply.step(), reply.sealed_sha256()};
}

Result<JobSummary> WorkerClient::finishJob(std::int64_t job, std::int64_t attempt, bool succeeded,
                                           double gpuHours, const std::string& reason)
{
    v1::FinishJobRequest request;
    *request.mutable_attempt() = attemptOf(job, attempt);
    request.set_succeeded(succeeded);
    request.set_gpu_hours(gpuHours);
    request.set_reason(reason);
    grpc::ClientContext context;
    setDeadline(context);
    v1::JobReply reply;
    const grpc::Status status = state_->workers->FinishJob(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return summaryOf(reply.job());
}

}  // namespace sealtrain::api
