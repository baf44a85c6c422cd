// The Workers service (control.proto, "Workers"; docs/operations/workers.md): enrolment with a
// one-time token, heartbeats, dispatch with keys sealed to the worker, the sealed files a worker
// fetches, metrics, verified checkpoint uploads and the end of an attempt. Each of a worker's
// calls is one call of core (core/dispatch/handover.h), which knows the worker by its client
// certificate's serial (core/workers/workers.h), never by anything it says about itself.
#include "file_transfer.h"
#include "server_shared.h"

#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/dispatch/handover.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/crypto/sealed_box.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

constexpr std::int64_t kDefaultTokenSeconds = std::int64_t{24} * 3600;
// A checkpoint upload: the sealed file and its envelope.
constexpr std::size_t kCheckpointFiles = 2;

Status refused(ErrorCode code, std::string sentence)
{
    return Internal::toStatus(Error(code, std::move(sentence)));
}

}  // namespace

namespace {

void fillWorker(const core::WorkerInfo& worker, v1::Worker* out)
{
    out->set_name(worker.name);
    out->set_pool(worker.pool);
    out->set_state(core::workerStateName(worker.state));
    out->set_serial(worker.serial);
    out->set_enrolled_unix(worker.enrolled);
    out->set_last_seen_unix(worker.lastSeen);
    out->set_current_job(worker.currentJob);
    out->set_inventory_json(core::workerInventoryJson(worker.inventory));
    out->set_signing_public_key_pem(worker.signingKeyPem);
    out->set_interconnect_declared(worker.interconnectDeclared);
    out->set_certificate_expires_unix(worker.certificateExpires);
}

class WorkersService final : public v1::Workers::Service {
public:
    explicit WorkersService(Shared& shared)
        : shared_(shared)
    {
    }

    Status CreateEnrollToken(ServerContext* context, const v1::CreateEnrollTokenRequest* request,
                             v1::CreateEnrollTokenReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            const Caller who = callerOf(shared_, *context);
            auto token = shared_.platform.controlPlane().workers().createEnrollToken(
                who.token, request->worker(), request->pool(),
                request->valid_seconds() == 0 ? kDefaultTokenSeconds : request->valid_seconds());
            if (!token)
                return Internal::toStatus(token.error());
            reply->set_token(token->token);
            reply->set_expires_unix(token->expires);
            return Status::OK;
        });
    }

    Status ListWorkers(ServerContext* context, const v1::ListWorkersRequest* request,
                       v1::ListWorkersReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            const Caller who = callerOf(shared_, *context);
            auto workers =
                shared_.platform.controlPlane().workers().list(who.token, keyedPage(*request));
            if (!workers)
                return Internal::toStatus(workers.error());
            for (const core::WorkerInfo& worker : *workers)
                fillWorker(worker, reply->add_workers());
            reply->set_next_after(workers->nextAfter);
            return Status::OK;
        });
    }

    Status RevokeWorker(ServerContext* context, const v1::RevokeWorkerRequest* request,
                        v1::WorkerReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            const Caller who = callerOf(shared_, *context);
            auto revoked = shared_.platform.controlPlane().revokeWorker(
                who.token, request->worker(), request->reason(),
                [&](const std::string& serial) { return shared_.revoke({serial}); });
            if (!revoked)
                return Internal::toStatus(revoked.error());
            fillWorker(*revoked, reply->mutable_worker());
            return Status::OK;
        });
    }

    Status DeclareInterconnect(ServerContext* context,
                               const v1::DeclareInterconnectRequest* request,
                               v1::WorkerReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto declared = shared_.platform.controlPlane().workers().declareInterconnect(
                callerOf(shared_, *context).token, request->worker(), request->encrypted());
            if (!declared)
                return Internal::toStatus(declared.error());
            fillWorker(*declared, reply->mutable_worker());
            return Status::OK;
        });
    }

    Status Enroll(ServerContext* context, const v1::EnrollRequest* request,
                  v1::EnrollReply* reply) override
    {
        core::EnrollRequest enroll;
        enroll.token = request->token();
        wipeRequestField(request->token());
        enroll.signingKeyPem = request->signing_public_key_pem();
        if (request->box_public_key().size() != enroll.boxKey.size())
            return refused(ErrorCode::InvalidArgument,
                           "The worker's box key must be 32 bytes (X25519); update the worker.");
        std::copy(request->box_public_key().begin(), request->box_public_key().end(),
                  enroll.boxKey.begin());
        if (auto key = crypto::PublicKey::fromPem(enroll.signingKeyPem); !key)
            return Internal::toStatus(key.error());
        auto inventory = core::parseWorkerInventory(request->inventory_json());
        if (!inventory)
            return Internal::toStatus(inventory.error());
        enroll.inventory = std::move(inventory).value();
        return shared_.inGroup(*context, [&]() -> Status {
            std::string certificate;
            auto enrolled = shared_.platform.controlPlane().workers().enroll(
                enroll, [&](const std::string& commonName) -> Result<std::string> {
                    crypto::IssueRequest issue;
                    issue.csrPem = request->csr_pem();
                    issue.commonName = commonName;
                    issue.subjectAltNames.uri = {"spiffe://sealtrain/worker/" + commonName};
                    issue.purpose = crypto::CertificatePurpose::Client;
                    issue.validFor = shared_.options.workerCertificateLifetime;
                    auto issued = shared_.platform.certificateAuthority().issue(issue);
                    if (issued)
                        certificate = *issued;
                    return issued;
                });
            if (!enrolled)
                return Internal::toStatus(enrolled.error());
            reply->set_certificate_pem(certificate);
            reply->set_worker(enrolled->name);
            reply->set_pool(enrolled->pool);
            return Status::OK;
        });
    }

    Status Heartbeat(ServerContext* context, const v1::HeartbeatRequest* request,
                     v1::HeartbeatReply* reply) override
    {
        auto stop = handovers(*context).heartbeat(serialOf(*context), request->inventory_json(),
                                                  request->job());
        if (!stop)
            return Internal::toStatus(stop.error());
        for (const std::int64_t job : *stop)
            reply->add_stop_jobs(job);
        reply->set_interval_ms(shared_.options.heartbeatInterval.count());
        return Status::OK;
    }

    Status TakeJob(ServerContext* context, const v1::TakeJobRequest* /*request*/,
                   v1::TakeJobReply* reply) override
    {
        auto handover = handovers(*context).take(serialOf(*context));
        if (!handover)
            return Internal::toStatus(handover.error());
        if (!*handover)
            return Status::OK;
        const core::Dispatch& dispatch = (*handover)->dispatch;
        const core::WorkerRelease& release = (*handover)->release;
        reply->set_has_job(true);
        reply->set_job(dispatch.job.id);
        reply->set_attempt(dispatch.attempt);
        reply->set_run_id(dispatch.runId);
        reply->set_dataset_id(dispatch.datasetId);
        for (const std::string& argument : release.trainerArguments)
            reply->add_trainer_arguments(argument);
        reply->set_sealed_keys(release.sealedKeys.data(), release.sealedKeys.size());
        reply->set_manifests_public_key_pem(shared_.platform.manifestsKey().publicKey().toPem());
        reply->set_resume(release.resume);
        reply->set_gpus(release.gpusPerNode);
        reply->set_charged_gpus(release.chargedGpus);
        reply->set_checkpoint_kek(release.checkpointKek);
        reply->set_nodes(release.nodes);
        reply->set_ranks_per_node(release.ranksPerNode);
        reply->set_starts_from_model(release.startsFromModel);
        return Status::OK;
    }

    Status FetchDataset(ServerContext* context, const v1::JobAttempt* request,
                        grpc::ServerWriter<v1::FileChunk>* writer) override
    {
        auto files = handovers(*context).datasetFiles(serialOf(*context), "Workers.FetchDataset",
                                                      attemptOf(*request));
        if (!files)
            return Internal::toStatus(files.error());
        // Only the names a transfer carries (file_transfer.h); the folder holds nothing else.
        std::erase_if(*files, [](const std::filesystem::path& file) {
            return !transfer::isPlainFileName(file.filename());
        });
        return send(*files, *writer);
    }

    Status FetchCheckpoint(ServerContext* context, const v1::JobAttempt* request,
                           grpc::ServerWriter<v1::FileChunk>* writer) override
    {
        auto files = handovers(*context).checkpointFiles(
            serialOf(*context), "Workers.FetchCheckpoint", attemptOf(*request));
        if (!files)
            return Internal::toStatus(files.error());
        return send(*files, *writer);
    }

    Status FetchInitModel(ServerContext* context, const v1::JobAttempt* request,
                          grpc::ServerWriter<v1::FileChunk>* writer) override
    {
        auto files = handovers(*context).startingModelFiles(
            serialOf(*context), "Workers.FetchInitModel", attemptOf(*request));
        if (!files)
            return Internal::toStatus(files.error());
        return send(*files, *writer);
    }

    Status ReportMetrics(ServerContext* context, const v1::ReportMetricsRequest* request,
                         v1::ReportMetricsReply* reply) override
    {
        core::AttemptReport report;
        report.attempt = attemptOf(request->attempt());
        report.metricsLines.assign(request->metrics_lines().begin(),
                                   request->metrics_lines().end());
        report.firstLogLine = request->first_log_line();
        report.logLines.assign(request->log_lines().begin(), request->log_lines().end());
        report.gpuHours = request->gpu_hours();
        auto stop = handovers(*context).report(serialOf(*context), report);
        if (!stop)
            return Internal::toStatus(stop.error());
        reply->set_stop(*stop);
        return Status::OK;
    }

    Status UploadCheckpoint(ServerContext* context, grpc::ServerReader<v1::FileChunk>* reader,
                            v1::UploadCheckpointReply* reply) override
    {
        // The worker first (issue #27): an anonymous caller gets no folder and no thread.
        core::Handovers handover = handovers(*context);
        auto upload = handover.openUpload(serialOf(*context));
        if (!upload)
            return Internal::toStatus(upload.error());
        // An upload that sends nothing for uploadIdleTimeout is cancelled, like a dataset's.
        IdleWatchdog watchdog(*context, shared_.options.uploadIdleTimeout);
        auto files = transfer::receiveFiles(
            upload->folder(), kCheckpointFiles, shared_.options.maxCheckpointBytes,
            [&](v1::FileChunk& chunk) {
                const bool read = reader->Read(&chunk);
                watchdog.progress();
                return read;
            },
            [&](const v1::FileChunk& first) { return upload->admit(attemptOf(first.attempt())); });
        if (watchdog.fired())
            return refused(ErrorCode::ResourceExhausted,
                           "The checkpoint upload sent nothing for too long and was cancelled; "
                           "the worker sends it again.");
        if (!files)
            return Internal::toStatus(files.error());
        auto record = upload->record(*files, shared_.options.maxCheckpointBytes);
        if (!record)
            return Internal::toStatus(record.error());
        reply->set_step(record->step);
        reply->set_sealed_sha256(record->sealedSha256);
        return Status::OK;
    }

    Status FinishJob(ServerContext* context, const v1::FinishJobRequest* request,
                     v1::JobReply* reply) override
    {
        auto finished = handovers(*context).finish(
            serialOf(*context), {attemptOf(request->attempt()), request->succeeded(),
                                 request->gpu_hours(), request->reason()});
        if (!finished)
            return Internal::toStatus(finished.error());
        fillJob(*finished, reply->mutable_job());
        return Status::OK;
    }

private:
    // Core's calls for this RPC, each step in a group with the call's origin.
    [[nodiscard]] core::Handovers handovers(const ServerContext& context)
    {
        auto& plane = shared_.platform.controlPlane();
        return {shared_.platform, plane.workers(), plane.scheduler(), shared_.grouped(context)};
    }

    // The serial of the client certificate the caller presented, or empty for none: core finds
    // the worker by it (Workers::caller), never by anything the worker says about itself.
    [[nodiscard]] std::string serialOf(const ServerContext& context)
    {
        const std::string pem = peerCertificate(context);
        return pem.empty() ? std::string() : shared_.serialOf(pem);
    }

    [[nodiscard]] static core::AttemptRef attemptOf(const v1::JobAttempt& attempt)
    {
        return {attempt.job(), attempt.attempt()};
    }

    [[nodiscard]] static Status send(const std::vector<std::filesystem::path>& files,
                                     grpc::ServerWriter<v1::FileChunk>& writer)
    {
        return statusOf(transfer::sendFiles(
            files, {}, [&](const v1::FileChunk& chunk) { return writer.Write(chunk); }));
    }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeWorkersService(Shared& shared)
{
    return std::make_unique<WorkersService>(shared);
}

}  // namespace sealtrain::api::server_internal
