// What the files of the client library share (client.cpp and the other client*.cpp files):
// the deadlines, the conversions from the contract's messages, and the client's state (its
// channel, one stub per service, and the helpers its calls are made with). Private to api/.
#pragma once

#include "file_transfer.h"
#include "sealtrain/api/client.h"
#include "status.h"

#include "sealtrain/v1/control.grpc.pb.h"
#include "sealtrain/v1/registry.grpc.pb.h"
#include "sealtrain/v1/runs.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace sealtrain::api {
namespace client_internal {

namespace v1 = sealtrain::v1;

constexpr auto kCallTimeout = std::chrono::seconds(30);
// An upload or a bundle may take long; a call that stops moving still ends on this.
constexpr auto kStreamTimeout = std::chrono::hours(6);
// A dataset's manifest, signature and shards.
constexpr std::size_t kMaxFetchedFiles = 100'000;
// What a whole-list call asks for a page at a time (the server's most).
constexpr std::uint32_t kLargestPage = 1000;

inline void setDeadline(grpc::ClientContext& context)
{
    context.set_deadline(std::chrono::system_clock::now() + kCallTimeout);
}

// Sends each file of an upload on `stream` (a client-streaming call whose chunks have a `file`
// part, name and size, and a `data` part) with transfer::sendEach, `progress` told of the bytes
// sent of `total`. Ok(false) when the server ended the call (its status says why); when a file can
// not be read, the call is cancelled and the error names the file and says that nothing was
// imported.
template <typename Chunk, typename Stream>
[[nodiscard]] Result<bool> sendUploadFiles(Stream& stream, grpc::ClientContext& context,
                                           const std::vector<UploadFile>& files,
                                           const UploadProgress& progress, std::uint64_t total)
{
    std::vector<transfer::OutgoingFile> outgoing;
    outgoing.reserve(files.size());
    for (const UploadFile& file : files)
        outgoing.push_back({file.path, file.name, file.size});
    auto sent = transfer::sendEach<Chunk>(
        outgoing,
        [](Chunk& chunk, const std::string& name, std::uint64_t size) {
            chunk.mutable_file()->set_name(name);
            chunk.mutable_file()->set_size(size);
        },
        [&](const Chunk& chunk) { return stream.Write(chunk); },
        [&](std::uint64_t bytes) {
            if (progress)
                progress(bytes, total);
        });
    if (!sent) {
        context.TryCancel();
        (void)stream.Finish();
        return Error(sent.error().code(),
                     fmt::format("{} Nothing was imported.", sent.error().message()));
    }
    return *sent;
}

inline JobSummary summaryOf(const v1::Job& job)
{
    JobSummary summary;
    summary.id = job.id();
    summary.name = job.name();
    summary.project = job.project();
    summary.state = job.state();
    summary.submitter = job.submitter();
    summary.approver = job.approver();
    summary.specJson = job.spec_json();
    summary.specSha256 = job.spec_sha256();
    summary.datasetId = job.dataset_id();
    summary.pool = job.pool();
    summary.priority = job.priority();
    for (const v1::VettingCheck& check : job.vetting())
        summary.vetting.push_back({check.check(), check.ok(), check.detail()});
    summary.reason = job.reason();
    summary.restarts = job.restarts();
    summary.maxRestarts = job.max_restarts();
    summary.gpuHoursLimit = job.gpu_hours_limit();
    summary.gpuHoursUsed = job.gpu_hours_used();
    summary.cpuHoursLimit = job.cpu_hours_limit();
    summary.cpuHoursUsed = job.cpu_hours_used();
    summary.createdUnix = job.created_unix();
    summary.updatedUnix = job.updated_unix();
    summary.worker = job.worker();
    summary.attempt = job.attempt();
    return summary;
}

inline DatasetSummary summaryOf(const v1::Dataset& dataset)
{
    return {dataset.id(),      dataset.name(),  dataset.version(), dataset.classification(),
            dataset.records(), dataset.tokens()};
}

// Success, or the error, of a call whose reply carries nothing.
template <typename Reply>
Result<void> withoutReply(const Result<Reply>& reply)
{
    if (!reply)
        return reply.error();
    return success();
}

inline WorkerSummary workerOf(const v1::Worker& worker)
{
    return {worker.name(),
            worker.pool(),
            worker.state(),
            worker.serial(),
            worker.enrolled_unix(),
            worker.last_seen_unix(),
            worker.current_job(),
            worker.inventory_json(),
            worker.signing_public_key_pem(),
            worker.interconnect_declared(),
            worker.certificate_expires_unix()};
}

inline v1::ExportBundleRequest filterOf(const AuditSelection& selection)
{
    v1::ExportBundleRequest request;
    if (selection.fromTimeNs)
        request.set_from_time_ns(*selection.fromTimeNs);
    if (selection.toTimeNs)
        request.set_to_time_ns(*selection.toTimeNs);
    request.set_actor(selection.actor);
    request.set_action(selection.action);
    request.set_target_kind(selection.targetKind);
    request.set_target_id(selection.targetId);
    return request;
}

inline v1::JobAttempt attemptOf(std::int64_t job, std::int64_t attempt)
{
    v1::JobAttempt out;
    out.set_job(job);
    out.set_attempt(attempt);
    return out;
}

inline SplitCounts splitOf(const v1::DatasetSplit& split)
{
    return {split.records(), split.tokens(), split.shards()};
}

// A channel to `address` whose server certificate must name `serverName` (also on a Unix
// socket). `pings`: Endpoint::keepalive; false for a channel of one short call, which gains
// nothing from pings, and whose ping timer would outlive it briefly: a process that exits right
// after the call could end before gRPC has freed the connection (LeakSanitizer saw it).
[[nodiscard]] std::shared_ptr<grpc::Channel>
openChannel(const std::string& address, const std::string& serverName,
            const std::shared_ptr<grpc::ChannelCredentials>& credentials, bool pings = false);

// A recorded checkpoint as the client library reports it.
[[nodiscard]] inline JobCheckpointView checkpointViewOf(const v1::JobCheckpoint& c)
{
    return {c.step(),          c.attempt(),          c.worker(),
            c.sealed_sha256(), c.plaintext_sha256(), c.recorded_unix()};
}

// Ties a CallCancel (or none) to one call's context for the call's lifetime.
class CancelScope final {
public:
    CancelScope(CallCancel* cancel, grpc::ClientContext& context)
        : cancel_(cancel)
    {
        if (cancel_ != nullptr)
            cancel_->attach(&context);
    }
    CancelScope(const CancelScope&) = delete;
    CancelScope& operator=(const CancelScope&) = delete;
    ~CancelScope()
    {
        if (cancel_ != nullptr)
            cancel_->detach();
    }

private:
    CallCancel* cancel_;
};

}  // namespace client_internal

struct client_internal::ClientState {
    Endpoint endpoint;
    std::shared_ptr<grpc::ChannelCredentials> credentials;  // the channel's (with the identity)
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<client_internal::v1::Sessions::Stub> sessions;
    std::unique_ptr<client_internal::v1::Users::Stub> users;
    std::unique_ptr<client_internal::v1::Access::Stub> access;
    std::unique_ptr<client_internal::v1::Datasets::Stub> datasets;
    std::unique_ptr<client_internal::v1::Audit::Stub> audit;
    std::unique_ptr<client_internal::v1::Platform::Stub> platform;
    std::unique_ptr<client_internal::v1::Training::Stub> training;
    std::unique_ptr<client_internal::v1::Jobs::Stub> jobs;
    std::unique_ptr<client_internal::v1::Runs::Stub> runs;
    std::unique_ptr<client_internal::v1::Registry::Stub> registry;
    std::unique_ptr<client_internal::v1::Workers::Stub> workers;
    std::unique_ptr<client_internal::v1::Keyring::Stub> keyring;
    bool presentsCertificate = false;  // a signed-in client (connect with an identity)

    // The call's error for the user. A call that failed at the transport, from a client that
    // presents a certificate, asks whether the control plane refuses that certificate at the
    // handshake (revoked: the session was signed out or revoked; or expired): then the user is
    // told to sign in again (Unauthenticated), not that the control plane is unreachable
    // (issue #29). The handshake carries no sentence, so this one is the client's.
    [[nodiscard]] Error failure(const grpc::Status& status) const
    {
        if (status.error_code() == grpc::StatusCode::UNAVAILABLE && presentsCertificate
            && refusesCertificate())
            return {ErrorCode::Unauthenticated,
                    "The control plane refused this client's certificate: the session was "
                    "signed out, revoked or has expired; sign in again."};
        return Internal::fromStatus(status, endpoint.address);
    }

    // Whether a call without a certificate is answered while the same call with this client's
    // certificate fails at the handshake (client_jobs.cpp). Both go over new connections: the
    // channel's own may have just failed for another reason (a stalled link closed by
    // keepalive) and be waiting to reconnect. False when that can not be told.
    [[nodiscard]] bool refusesCertificate() const;

    // Reads a Train or RunJob stream: each metrics line to `onMetrics`, then how the run ended.
    [[nodiscard]] Result<TrainOutcome>
    trainingStream(grpc::ClientReader<client_internal::v1::TrainEvent>& stream,
                   const std::function<void(const std::string&)>& onMetrics) const;

    // A stream of files (FetchDataset, FetchCheckpoint) received into `folder`.
    template <typename Method>
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    fetchFiles(Method method, const client_internal::v1::JobAttempt& attempt,
               const std::filesystem::path& folder, std::uint64_t maxBytes) const
    {
        return receiveFiles(
            [&](grpc::ClientContext& context) { return ((*workers).*method)(&context, attempt); },
            folder, maxBytes);
    }

    // The files of the stream `open(context)` starts, into `folder` (transfer::receiveFiles, the
    // one download helper: fetched datasets and checkpoints, downloaded checkpoints and exports).
    // `onFirst` sees the first chunk before anything is written.
    template <typename Chunk, typename Open, typename OnFirst>
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    receiveFiles(const Open& open, const std::filesystem::path& folder, std::uint64_t maxBytes,
                 std::size_t maxFiles, const OnFirst& onFirst) const
    {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + client_internal::kStreamTimeout);
        auto stream = open(context);
        auto files = transfer::receiveFiles<Chunk>(
            folder, maxFiles, maxBytes, [&](Chunk& chunk) { return stream->Read(&chunk); },
            onFirst);
        if (!files) {
            context.TryCancel();
            (void)stream->Finish();
            return files.error();
        }
        const grpc::Status status = stream->Finish();
        if (!status.ok())
            return failure(status);
        return files;
    }

    // A FileChunk stream of at most kMaxFetchedFiles files, into `folder`.
    template <typename Open>
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    receiveFiles(const Open& open, const std::filesystem::path& folder,
                 std::uint64_t maxBytes) const
    {
        return receiveFiles<client_internal::v1::FileChunk>(
            open, folder, maxBytes, client_internal::kMaxFetchedFiles,
            [](const client_internal::v1::FileChunk&) { return success(); });
    }

    // Training.Sample of the checkpoint `request` names.
    [[nodiscard]] Result<SampleOutcome> sample(client_internal::v1::SampleRequest& request,
                                               std::uint64_t step,
                                               const std::vector<std::string>& arguments,
                                               CallCancel* cancel) const
    {
        request.set_step(step);
        for (const std::string& argument : arguments)
            request.add_sampler_arguments(argument);
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + client_internal::kStreamTimeout);
        const client_internal::CancelScope scope(cancel, context);
        client_internal::v1::SampleReply reply;
        const grpc::Status status = training->Sample(&context, request, &reply);
        if (!status.ok())
            return failure(status);
        return SampleOutcome{reply.text(), reply.step()};
    }

    // A unary Jobs call, whose reply is the job.
    template <typename Request>
    [[nodiscard]] Result<JobSummary>
    job(grpc::Status (client_internal::v1::Jobs::Stub::*method)(grpc::ClientContext*,
                                                                const Request&,
                                                                client_internal::v1::JobReply*),
        const Request& request) const
    {
        grpc::ClientContext context;
        client_internal::setDeadline(context);
        client_internal::v1::JobReply reply;
        const grpc::Status status = (jobs.get()->*method)(&context, request, &reply);
        if (!status.ok())
            return failure(status);
        return client_internal::summaryOf(reply.job());
    }

    [[nodiscard]] Result<void> result(const grpc::Status& status) const
    {
        if (!status.ok())
            return failure(status);
        return success();
    }

    // One unary call of `stub` with the usual deadline (or `within`): its reply, or the server's
    // sentence.
    template <typename Stub, typename Request, typename Reply>
    [[nodiscard]] Result<Reply>
    call(Stub& stub, grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Reply*),
         const Request& request, std::chrono::seconds within = client_internal::kCallTimeout) const
    {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + within);
        Reply reply;
        const grpc::Status status = (stub.*method)(&context, request, &reply);
        if (!status.ok())
            return failure(status);
        return reply;
    }

    // Every page of a small list (ListUsers, ListRoles, ListDatasets, ListWorkers, ListKeks), each
    // one call of `method` from `after` "" on, the largest page at a time; `take(reply, items)`
    // appends a reply's items. Internal when a page does not move on (a server's bug).
    template <typename Item, typename Stub, typename Request, typename Reply, typename Take>
    [[nodiscard]] Result<std::vector<Item>> allKeyedPages(
        Stub& stub, grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Reply*),
        const Take& take, std::chrono::seconds within = client_internal::kCallTimeout) const
    {
        std::vector<Item> items;
        Request request;
        request.set_limit(client_internal::kLargestPage);
        for (;;) {
            auto reply = call(stub, method, request, within);
            if (!reply)
                return reply.error();
            take(*reply, items);
            if (reply->next_after().empty())
                return items;
            if (reply->next_after() <= request.after())
                return Error(ErrorCode::Internal, "The control plane sent a page that does not "
                                                  "move on; report this bug.");
            request.set_after(reply->next_after());
        }
    }
};

}  // namespace sealtrain::api
