// The Workers service (control.proto, "Workers"; docs/operations/workers.md): enrolment with a
// one-time token, heartbeats, dispatch with keys sealed to the worker, the sealed files a worker
// fetches, metrics, verified checkpoint uploads and the end of an attempt. A worker is known by
// its client certificate's serial (core/workers/workers.h), never by anything it says about itself.
#include "file_transfer.h"
#include "server_shared.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/jobs/vetting/spec.h"
#include "sealtrain/core/keys/key_release.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/crypto/sealed_box.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

constexpr std::int64_t kDefaultTokenSeconds = std::int64_t{24} * 3600;
// A checkpoint upload: the sealed file and its envelope.
constexpr std::size_t kCheckpointFiles = 2;

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
            auto& plane = shared_.platform.controlPlane();
            auto revoked = plane.workers().revoke(who.token, request->worker(), request->reason());
            if (!revoked)
                return Internal::toStatus(revoked.error());
            if (auto published = shared_.revoke({revoked->serial}); !published)
                return Internal::toStatus(published.error());
            auto released = plane.scheduler().releaseWorker(
                revoked->id, fmt::format("worker {} was revoked", revoked->name));
            if (!released)
                return Internal::toStatus(released.error());
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
        return shared_.inGroup(*context, [&]() -> Status {
            auto worker = workerOf(*context, "Workers.Heartbeat");
            if (!worker)
                return Internal::toStatus(worker.error());
            // The worker first (issue #27): its inventory is read only then, at most 64 KiB of
            // JSON parsed in well under a millisecond; a refused one is audited (issue #54).
            auto& plane = shared_.platform.controlPlane();
            if (auto beat = plane.workers().heartbeatFrom(*worker, request->inventory_json());
                !beat)
                return Internal::toStatus(beat.error());
            auto stop = plane.scheduler().jobsToStop(worker->id);
            if (!stop)
                return Internal::toStatus(stop.error());
            for (const std::int64_t job : *stop)
                reply->add_stop_jobs(job);
            // A worker that says it holds no job (0; -1 while it is taking one) although the
            // scheduler gave it one (it restarted and lost its trainer) gives the job back for
            // another attempt.
            if (request->job() == 0 && worker->currentJob != 0) {
                auto released =
                    plane.scheduler().releaseWorker(worker->id, "the worker no longer runs it");
                if (!released)
                    return Internal::toStatus(released.error());
            }
            reply->set_interval_ms(shared_.options.heartbeatInterval.count());
            return Status::OK;
        });
    }

    Status TakeJob(ServerContext* context, const v1::TakeJobRequest* /*request*/,
                   v1::TakeJobReply* reply) override
    {
        core::WorkerInfo worker;
        std::optional<core::Dispatch> dispatch;
        std::optional<core::JobCheckpoint> resumeFrom;
        std::string signerPem;
        // A fine-tuning job's starting model, read with the dispatch; a failure to find it ends
        // the job as a failed handover does (below).
        Result<std::optional<core::StartingModel>> start = std::optional<core::StartingModel>();
        Status taken = shared_.inGroup(*context, [&]() -> Status {
            auto found = workerOf(*context, "Workers.TakeJob");
            if (!found)
                return Internal::toStatus(found.error());
            worker = std::move(found).value();
            auto& scheduler = shared_.platform.controlPlane().scheduler();
            auto next = scheduler.take(worker);
            if (!next)
                return Internal::toStatus(next.error());
            dispatch = std::move(next).value();
            if (!dispatch)
                return Status::OK;
            auto newest = scheduler.newestCheckpoint(dispatch->job.id);
            if (!newest)
                return Internal::toStatus(newest.error());
            resumeFrom = std::move(newest).value();
            if (resumeFrom) {
                auto signer = shared_.platform.controlPlane().workers().byName(resumeFrom->worker);
                if (!signer)
                    return Internal::toStatus(signer.error());
                signerPem = signer->signingKeyPem;
            }
            if (auto spec = core::parseJobSpec(dispatch->job.specJson, core::kJobSpecCeiling))
                start = core::KeyRelease(shared_.platform).startingModel(*spec);
            return Status::OK;
        });
        if (!taken.ok() || !dispatch)
            return taken;
        auto prepared = start ? prepare(worker, *dispatch, resumeFrom, signerPem, *start, *reply)
                              : Result<void>(start.error());
        if (!prepared) {
            // The job can not be handed over (its keys or dataset are not readable): it ends
            // failed, saying why, rather than wait on a worker that never got it.
            const Status ended = shared_.inGroup(*context, [&]() -> Status {
                auto finished = shared_.platform.controlPlane().scheduler().finish(
                    worker, dispatch->job.id, dispatch->attempt, false, 0.0,
                    prepared.error().message());
                return statusOf(finished);
            });
            (void)ended;
            return Internal::toStatus(prepared.error());
        }
        return Status::OK;
    }

    Status FetchDataset(ServerContext* context, const v1::JobAttempt* request,
                        grpc::ServerWriter<v1::FileChunk>* writer) override
    {
        auto dispatch =
            currentOf(*context, "Workers.FetchDataset", request->job(), request->attempt());
        if (!dispatch)
            return Internal::toStatus(dispatch.error());
        const auto folder =
            core::datasetFolder(shared_.platform.datasetsRoot(), dispatch->datasetId);
        std::vector<std::filesystem::path> files;
        std::error_code ec;
        for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
            if (entry.is_regular_file() && transfer::isPlainFileName(entry.path().filename()))
                files.push_back(entry.path());
        if (ec)
            return refused(ErrorCode::NotFound,
                           fmt::format("The dataset of job {} is not in the data directory; "
                                       "restore it from a backup.",
                                       request->job()));
        std::sort(files.begin(), files.end());
        return statusOf(transfer::sendFiles(
            files, {}, [&](const v1::FileChunk& chunk) { return writer->Write(chunk); }));
    }

    Status FetchCheckpoint(ServerContext* context, const v1::JobAttempt* request,
                           grpc::ServerWriter<v1::FileChunk>* writer) override
    {
        auto dispatch =
            currentOf(*context, "Workers.FetchCheckpoint", request->job(), request->attempt());
        if (!dispatch)
            return Internal::toStatus(dispatch.error());
        std::optional<core::JobCheckpoint> newest;
        Status found = shared_.inGroup(*context, [&]() -> Status {
            auto checkpoint =
                shared_.platform.controlPlane().scheduler().newestCheckpoint(request->job());
            if (!checkpoint)
                return Internal::toStatus(checkpoint.error());
            newest = std::move(checkpoint).value();
            return Status::OK;
        });
        if (!found.ok())
            return found;
        if (!newest)
            return refused(ErrorCode::NotFound,
                           fmt::format("Job {} has no checkpoint yet; start it from the "
                                       "beginning.",
                                       request->job()));
        const core::CheckpointPaths files =
            core::KeyRelease(shared_.platform).jobCheckpointFiles(request->job(), newest->step);
        return statusOf(
            transfer::sendFiles({files.sealed, files.envelope}, {},
                                [&](const v1::FileChunk& chunk) { return writer->Write(chunk); }));
    }

    Status FetchInitModel(ServerContext* context, const v1::JobAttempt* request,
                          grpc::ServerWriter<v1::FileChunk>* writer) override
    {
        auto dispatch =
            currentOf(*context, "Workers.FetchInitModel", request->job(), request->attempt());
        if (!dispatch)
            return Internal::toStatus(dispatch.error());
        auto spec = core::parseJobSpec(dispatch->job.specJson, core::kJobSpecCeiling);
        if (!spec)
            return Internal::toStatus(spec.error());
        std::optional<core::StartingModel> start;
        Status found = shared_.inGroup(*context, [&]() -> Status {
            auto checked = core::KeyRelease(shared_.platform).startingModel(*spec);
            if (!checked)
                return Internal::toStatus(checked.error());
            start = std::move(checked).value();
            return Status::OK;
        });
        if (!found.ok())
            return found;
        if (!start)
            return refused(ErrorCode::NotFound,
                           fmt::format("Job {} starts from scratch; it has no model to fetch.",
                                       request->job()));
        return statusOf(transfer::sendFiles(
            {start->sealed}, {}, [&](const v1::FileChunk& chunk) { return writer->Write(chunk); }));
    }

    Status ReportMetrics(ServerContext* context, const v1::ReportMetricsRequest* request,
                         v1::ReportMetricsReply* reply) override
    {
        // The worker first (issue #27): the lines of an anonymous or unknown caller are never
        // parsed; those of a worker are parsed here, outside the group that commits.
        if (Status known = knownWorker(*context, "Workers.ReportMetrics"); !known.ok())
            return known;
        std::vector<core::MetricsLine> lines;
        for (const std::string& text : request->metrics_lines()) {
            auto line = core::parseMetricsLine(text);
            if (!line)
                return refused(line.error().code(), line.error().message());
            lines.push_back(std::move(line).value());
        }
        const std::int64_t attempt = request->attempt().attempt();
        auto logs = core::logLines(attempt, request->first_log_line(),
                                   {request->log_lines().begin(), request->log_lines().end()});
        if (!logs)
            return Internal::toStatus(logs.error());
        lines.insert(lines.end(), std::make_move_iterator(logs->begin()),
                     std::make_move_iterator(logs->end()));
        return shared_.inGroup(*context, [&]() -> Status {
            auto worker = workerOf(*context, "Workers.ReportMetrics");
            if (!worker)
                return Internal::toStatus(worker.error());
            auto stop = shared_.platform.controlPlane().scheduler().report(
                *worker, request->attempt().job(), attempt, lines, request->gpu_hours());
            if (!stop)
                return Internal::toStatus(stop.error());
            reply->set_stop(*stop);
            return Status::OK;
        });
    }

    Status UploadCheckpoint(ServerContext* context, grpc::ServerReader<v1::FileChunk>* reader,
                            v1::UploadCheckpointReply* reply) override
    {
        // The worker first (issue #27): an anonymous caller gets no folder and no thread.
        if (Status known = knownWorker(*context, "Workers.UploadCheckpoint"); !known.ok())
            return known;
        // An upload that sends nothing for uploadIdleTimeout is cancelled, like a dataset's.
        IdleWatchdog watchdog(*context, shared_.options.uploadIdleTimeout);
        std::optional<core::Dispatch> dispatch;
        core::WorkerInfo worker;
        const auto incoming =
            shared_.platform.path() / "jobs" / "incoming" / toHex(crypto::randomBytes(8));
        std::error_code ec;
        std::filesystem::create_directories(incoming, ec);
        if (ec)
            return refused(ErrorCode::Io, "Cannot make a folder for the upload in the data "
                                          "directory; check its free space and permissions.");
        struct Cleanup {
            std::filesystem::path folder;
            ~Cleanup()
            {
                std::error_code ignored;
                std::filesystem::remove_all(folder, ignored);
            }
        } cleanup{incoming};
        std::optional<v1::JobAttempt> notCurrent;
        auto files = transfer::receiveFiles(
            incoming, kCheckpointFiles, shared_.options.maxCheckpointBytes,
            [&](v1::FileChunk& chunk) {
                const bool read = reader->Read(&chunk);
                watchdog.progress();
                return read;
            },
            [&](const v1::FileChunk& first) -> Result<void> {
                auto found = currentOf(*context, "Workers.UploadCheckpoint", first.attempt().job(),
                                       first.attempt().attempt());
                if (!found) {
                    if (found.error().code() == ErrorCode::PermissionDenied)
                        notCurrent = first.attempt();
                    return found.error();
                }
                dispatch = std::move(found).value();
                return success();
            });
        if (watchdog.fired())
            return refused(ErrorCode::ResourceExhausted,
                           "The checkpoint upload sent nothing for too long and was cancelled; "
                           "the worker sends it again.");
        if (!files && notCurrent)
            return refuseCheckpoint(*context, notCurrent->job(), notCurrent->attempt(),
                                    files.error());
        if (!files)
            return Internal::toStatus(files.error());
        if (!dispatch || files->size() != kCheckpointFiles)
            return refused(ErrorCode::InvalidArgument,
                           "A checkpoint upload is its .sealed file and its .dsse.json envelope; "
                           "send both.");
        const core::KeyRelease release(shared_.platform);
        auto named = release.uploadedCheckpoint(files->front());
        if (!named)
            return Internal::toStatus(named.error());
        std::string baseSha256;
        Status identified = shared_.inGroup(*context, [&]() -> Status {
            auto found = workerOf(*context, "Workers.UploadCheckpoint");
            if (!found)
                return Internal::toStatus(found.error());
            worker = std::move(found).value();
            auto spec = core::parseJobSpec(dispatch->job.specJson, core::kJobSpecCeiling);
            if (!spec)
                return Internal::toStatus(spec.error());
            auto digest = release.startingDigest(*spec);
            if (!digest)
                return Internal::toStatus(digest.error());
            baseSha256 = std::move(digest).value();
            return Status::OK;
        });
        if (!identified.ok())
            return identified;
        // Verified before anything is recorded: signed by this worker's enrolled key, sealed
        // under the job's own key, its plaintext the statement's, of this job and run.
        auto verified = release.verifyUpload(worker, *dispatch, *named,
                                             shared_.options.maxCheckpointBytes, baseSha256);
        if (!verified)
            return refuseCheckpoint(*context, dispatch->job.id, dispatch->attempt,
                                    verified.error());
        // Moved into place only once the record is accepted (scheduler.h): a refused upload
        // never replaces a recorded checkpoint's files.
        const auto keep = [&]() { return release.keepUpload(dispatch->job.id, *named); };
        core::JobCheckpoint record = std::move(verified).value();
        Status recorded = shared_.inGroup(*context, [&]() -> Status {
            return statusOf(
                shared_.platform.controlPlane().scheduler().recordCheckpoint(worker, record, keep));
        });
        if (!recorded.ok())
            return recorded;
        reply->set_step(record.step);
        reply->set_sealed_sha256(record.sealedSha256);
        return Status::OK;
    }

    Status FinishJob(ServerContext* context, const v1::FinishJobRequest* request,
                     v1::JobReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto worker = workerOf(*context, "Workers.FinishJob");
            if (!worker)
                return Internal::toStatus(worker.error());
            auto finished = shared_.platform.controlPlane().scheduler().finish(
                *worker, request->attempt().job(), request->attempt().attempt(),
                request->succeeded(), request->gpu_hours(), request->reason());
            if (!finished)
                return Internal::toStatus(finished.error());
            fillJob(*finished, reply->mutable_job());
            return Status::OK;
        });
    }

private:
    // OK when the caller is an enrolled, active worker (checked in a group of its own), for a
    // call that reads its request outside the group that will act on it.
    Status knownWorker(const ServerContext& context, std::string_view call)
    {
        return shared_.inGroup(context, [&]() -> Status {
            auto worker = workerOf(context, call);
            return worker ? Status::OK : Internal::toStatus(worker.error());
        });
    }

    // The worker calling `call`, by its certificate's serial (inside a group); a caller that
    // is no enrolled worker is refused and audited there (Workers::caller).
    [[nodiscard]] Result<core::WorkerInfo> workerOf(const ServerContext& context,
                                                    std::string_view call)
    {
        const std::string pem = peerCertificate(context);
        const std::string serial = pem.empty() ? std::string() : shared_.serialOf(pem);
        return shared_.platform.controlPlane().workers().caller(serial, call);
    }

    // A checkpoint upload refused before it was recorded, audited with the worker as the actor
    // (issue #27, item 7): forged, of another job, run or dataset, or for an attempt that is not
    // the caller's.
    Status refuseCheckpoint(const ServerContext& context, std::int64_t job, std::int64_t attempt,
                            const Error& why)
    {
        return shared_.inGroup(context, [&]() -> Status {
            auto worker = workerOf(context, "Workers.UploadCheckpoint");
            if (!worker)
                return Internal::toStatus(worker.error());
            return statusOf(shared_.platform.controlPlane().scheduler().refuseCheckpoint(
                *worker, job, attempt, why));
        });
    }

    // The caller's current attempt at `job` (fenced), outside any group.
    [[nodiscard]] Result<core::Dispatch> currentOf(const ServerContext& context,
                                                   std::string_view call, std::int64_t job,
                                                   std::int64_t attempt)
    {
        Result<core::Dispatch> result =
            Error(ErrorCode::Internal, "The attempt was not looked up; try again.");
        Status looked = shared_.inGroup(context, [&]() -> Status {
            auto worker = workerOf(context, call);
            if (!worker) {
                result = worker.error();
                return Status::OK;
            }
            result = shared_.platform.controlPlane().scheduler().current(*worker, job, attempt,
                                                                         auditAction(call));
            return Status::OK;
        });
        if (!looked.ok())
            return Error(ErrorCode::Io, looked.error_message());
        return result;
    }

    // The trainer arguments and the sealed keys of a dispatch (core's key release decides).
    [[nodiscard]] Result<void>
    prepare(const core::WorkerInfo& worker, const core::Dispatch& dispatch,
            const std::optional<core::JobCheckpoint>& resumeFrom, const std::string& signerPem,
            const std::optional<core::StartingModel>& start, v1::TakeJobReply& reply)
    {
        auto spec = core::parseJobSpec(dispatch.job.specJson, core::kJobSpecCeiling);
        if (!spec)
            return spec.error();
        auto release = core::KeyRelease(shared_.platform)
                           .forWorker(worker, dispatch, *spec,
                                      resumeFrom ? std::optional(signerPem) : std::nullopt, start);
        if (!release)
            return release.error();
        reply.set_has_job(true);
        reply.set_job(dispatch.job.id);
        reply.set_attempt(dispatch.attempt);
        reply.set_run_id(dispatch.runId);
        reply.set_dataset_id(dispatch.datasetId);
        for (const std::string& argument : release->trainerArguments)
            reply.add_trainer_arguments(argument);
        reply.set_sealed_keys(release->sealedKeys.data(), release->sealedKeys.size());
        reply.set_manifests_public_key_pem(shared_.platform.manifestsKey().publicKey().toPem());
        reply.set_resume(release->resume);
        reply.set_gpus(release->gpusPerNode);
        reply.set_charged_gpus(release->chargedGpus);
        reply.set_checkpoint_kek(release->checkpointKek);
        reply.set_nodes(release->nodes);
        reply.set_ranks_per_node(release->ranksPerNode);
        reply.set_starts_from_model(release->startsFromModel);
        return success();
    }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeWorkersService(Shared& shared)
{
    return std::make_unique<WorkersService>(shared);
}

}  // namespace sealtrain::api::server_internal
