// The control plane's client library (client.h): channel credentials that pin the platform CA
// and present the session's client certificate, and one method per call of the contract.
#include "sealtrain/api/client.h"

#include "file_transfer.h"
#include "keepalive.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "status.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpc/grpc.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <chrono>
#include <fstream>
#include <thread>

namespace sealtrain::api {
namespace {

namespace v1 = sealtrain::v1;

constexpr auto kCallTimeout = std::chrono::seconds(30);
// An upload or a bundle may take long; a call that stops moving still ends on this.
constexpr auto kStreamTimeout = std::chrono::hours(6);
constexpr std::size_t kPiece = std::size_t{1} << 20U;
// How long a client process waits at exit for gRPC's own threads to finish tearing down.
constexpr auto kShutdownWait = std::chrono::seconds(5);
// A dataset's manifest, signature and shards.
constexpr std::size_t kMaxFetchedFiles = 100'000;

// `pings`: Endpoint::keepalive; false for a channel of one short call, which gains nothing
// from pings, and whose ping timer would outlive it briefly: a process that exits right after
// the call could end before gRPC has freed the connection (LeakSanitizer saw it).
std::shared_ptr<grpc::Channel>
openChannel(const std::string& address, const std::string& serverName,
            const std::shared_ptr<grpc::ChannelCredentials>& credentials, bool pings = false)
{
    grpc::ChannelArguments arguments;
    // The name the server's certificate is checked against, also on a Unix socket.
    arguments.SetSslTargetNameOverride(serverName);
    if (!pings)
        return grpc::CreateCustomChannel(address, credentials, arguments);
    // Keepalive pings (docs/api.md, "Transport"): a connection that silently stops forwarding
    // (a stalled NAT, a dead link without a reset) is closed once a ping goes unanswered, and the
    // calls on it fail instead of waiting for their deadline (hours for an upload). The control
    // plane accepts pings this often (server.cpp).
    arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, static_cast<int>(keepalive::kTime.count()));
    arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, static_cast<int>(keepalive::kTimeout.count()));
    arguments.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    // Pings go on while an upload waits for its answer (no frames from the server meanwhile).
    arguments.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    arguments.SetInt(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS,
                     static_cast<int>(keepalive::kTime.count()));
    return grpc::CreateCustomChannel(address, credentials, arguments);
}

void setDeadline(grpc::ClientContext& context)
{
    context.set_deadline(std::chrono::system_clock::now() + kCallTimeout);
}

JobSummary summaryOf(const v1::Job& job)
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
    summary.createdUnix = job.created_unix();
    summary.updatedUnix = job.updated_unix();
    summary.worker = job.worker();
    summary.attempt = job.attempt();
    return summary;
}

DatasetSummary summaryOf(const v1::Dataset& dataset)
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

WorkerSummary workerOf(const v1::Worker& worker)
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
            worker.interconnect_declared()};
}

v1::JobAttempt attemptOf(std::int64_t job, std::int64_t attempt)
{
    v1::JobAttempt out;
    out.set_job(job);
    out.set_attempt(attempt);
    return out;
}

SplitCounts splitOf(const v1::DatasetSplit& split)
{
    return {split.records(), split.tokens(), split.shards()};
}

}  // namespace

struct ControlClient::State {
    Endpoint endpoint;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<v1::Sessions::Stub> sessions;
    std::unique_ptr<v1::Users::Stub> users;
    std::unique_ptr<v1::Access::Stub> access;
    std::unique_ptr<v1::Datasets::Stub> datasets;
    std::unique_ptr<v1::Audit::Stub> audit;
    std::unique_ptr<v1::Platform::Stub> platform;
    std::unique_ptr<v1::Training::Stub> training;
    std::unique_ptr<v1::Jobs::Stub> jobs;
    std::unique_ptr<v1::Workers::Stub> workers;

    [[nodiscard]] Error failure(const grpc::Status& status) const
    {
        return Internal::fromStatus(status, endpoint.address);
    }

    // Reads a Train or RunJob stream: each metrics line to `onMetrics`, then how the run ended.
    [[nodiscard]] Result<TrainOutcome>
    trainingStream(grpc::ClientReader<v1::TrainEvent>& stream,
                   const std::function<void(const std::string&)>& onMetrics) const;

    // A stream of files (FetchDataset, FetchCheckpoint) received into `folder`.
    template <typename Method>
    [[nodiscard]] Result<std::vector<std::filesystem::path>>
    fetchFiles(Method method, const v1::JobAttempt& attempt, const std::filesystem::path& folder,
               std::uint64_t maxBytes) const
    {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
        auto stream = ((*workers).*method)(&context, attempt);
        auto files = transfer::receiveFiles(
            folder, kMaxFetchedFiles, maxBytes,
            [&](v1::FileChunk& chunk) { return stream->Read(&chunk); },
            [](const v1::FileChunk&) { return success(); });
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

    // Training.Sample of the checkpoint `request` names.
    [[nodiscard]] Result<SampleOutcome> sample(v1::SampleRequest& request, std::uint64_t step,
                                               const std::vector<std::string>& arguments) const
    {
        request.set_step(step);
        for (const std::string& argument : arguments)
            request.add_sampler_arguments(argument);
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
        v1::SampleReply reply;
        const grpc::Status status = training->Sample(&context, request, &reply);
        if (!status.ok())
            return failure(status);
        return SampleOutcome{reply.text(), reply.step()};
    }

    // A unary Jobs call, whose reply is the job.
    template <typename Request>
    [[nodiscard]] Result<JobSummary>
    job(grpc::Status (v1::Jobs::Stub::*method)(grpc::ClientContext*, const Request&, v1::JobReply*),
        const Request& request) const
    {
        grpc::ClientContext context;
        setDeadline(context);
        v1::JobReply reply;
        const grpc::Status status = (jobs.get()->*method)(&context, request, &reply);
        if (!status.ok())
            return failure(status);
        return summaryOf(reply.job());
    }

    [[nodiscard]] Result<void> result(const grpc::Status& status) const
    {
        if (!status.ok())
            return failure(status);
        return success();
    }

    // One unary call of `stub` with the usual deadline: its reply, or the server's sentence.
    template <typename Stub, typename Request, typename Reply>
    [[nodiscard]] Result<Reply>
    call(Stub& stub, grpc::Status (Stub::*method)(grpc::ClientContext*, const Request&, Reply*),
         const Request& request) const
    {
        grpc::ClientContext context;
        setDeadline(context);
        Reply reply;
        const grpc::Status status = (stub.*method)(&context, request, &reply);
        if (!status.ok())
            return failure(status);
        return reply;
    }
};

GrpcRuntime::GrpcRuntime()
{
    grpc_init();
}

GrpcRuntime::~GrpcRuntime()
{
    // The last reference tears down synchronously here; if a channel's own reference was the
    // last one dropped on one of gRPC's threads, that thread is still tearing down: wait for it.
    grpc_shutdown();
    const auto deadline = std::chrono::steady_clock::now() + kShutdownWait;
    while (grpc_is_initialized() != 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

Result<std::string> fetchPinnedCaCertificate(const std::string& address,
                                             const std::string& serverName,
                                             const std::string& fingerprint)
{
    // Nothing is trusted yet: the server's certificate is not checked on this one call, and
    // what it returns counts only when its fingerprint is the one the administrator gave.
    grpc::experimental::TlsChannelCredentialsOptions tls;
    tls.set_verify_server_certs(false);
    tls.set_check_call_host(false);
    tls.set_certificate_verifier(std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
    auto channel = openChannel(address, serverName, grpc::experimental::TlsCredentials(tls));
    auto stub = v1::Platform::NewStub(channel);
    grpc::ClientContext context;
    setDeadline(context);
    v1::GetCaCertificateReply reply;
    const grpc::Status status = stub->GetCaCertificate(&context, {}, &reply);
    if (!status.ok())
        return Internal::fromStatus(status, address);
    auto got = crypto::certificateFingerprint(reply.certificate_pem());
    if (!got)
        return got.error();
    if (*got != fingerprint)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The server at '{}' presents a CA with fingerprint {}, not the {} "
                                 "you were given; do not connect, and ask the administrator.",
                                 address, *got, fingerprint));
    return reply.certificate_pem();
}

Result<std::unique_ptr<ControlClient>> ControlClient::connect(const Endpoint& endpoint,
                                                              const ClientIdentity* identity)
{
    if (endpoint.caCertificatePem.empty())
        return Error(ErrorCode::InvalidArgument,
                     "This client trusts no platform CA yet; run `sealtrainctl connect` first.");
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = endpoint.caCertificatePem;
    if (identity != nullptr) {
        // gRPC takes the key as a std::string for the channel's lifetime.
        ssl.pem_private_key =
            std::string(reinterpret_cast<const char*>(identity->privateKeyPem.bytes().data()),
                        identity->privateKeyPem.size());
        ssl.pem_cert_chain = identity->certificatePem;
    }
    auto state = std::make_unique<State>();
    state->endpoint = endpoint;
    state->channel = openChannel(endpoint.address, endpoint.serverName, grpc::SslCredentials(ssl),
                                 endpoint.keepalive);
    state->sessions = v1::Sessions::NewStub(state->channel);
    state->users = v1::Users::NewStub(state->channel);
    state->access = v1::Access::NewStub(state->channel);
    state->datasets = v1::Datasets::NewStub(state->channel);
    state->audit = v1::Audit::NewStub(state->channel);
    state->platform = v1::Platform::NewStub(state->channel);
    state->training = v1::Training::NewStub(state->channel);
    state->jobs = v1::Jobs::NewStub(state->channel);
    state->workers = v1::Workers::NewStub(state->channel);
    return std::unique_ptr<ControlClient>(new ControlClient(std::move(state)));
}

ControlClient::ControlClient(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}

ControlClient::~ControlClient() = default;

Result<SignedIn> ControlClient::signIn(const std::string& user, const crypto::SecretBytes& password,
                                       const std::string& totpCode)
{
    auto keyAndCsr = crypto::makeKeyAndCsr(user);
    if (!keyAndCsr)
        return keyAndCsr.error();
    v1::SignInRequest request;
    request.set_user(user);
    request.set_password(
        std::string(reinterpret_cast<const char*>(password.bytes().data()), password.size()));
    request.set_totp_code(totpCode);
    request.set_csr_pem(keyAndCsr->csrPem);
    grpc::ClientContext context;
    setDeadline(context);
    v1::SignInReply reply;
    const grpc::Status status = state_->sessions->SignIn(&context, request, &reply);
    request.mutable_password()->assign(request.password().size(), '\0');
    if (!status.ok())
        return state_->failure(status);
    SignedIn signedIn;
    signedIn.identity.privateKeyPem = std::move(keyAndCsr->privateKeyPem);
    signedIn.identity.certificatePem = reply.certificate_pem();
    signedIn.sessionId = reply.session_id();
    signedIn.expiresUnix = reply.expires_unix();
    return signedIn;
}

Result<WhoAmI> ControlClient::whoAmI()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::WhoAmIReply reply;
    const grpc::Status status = state_->sessions->WhoAmI(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    return WhoAmI{reply.user(), reply.session_id(), reply.expires_unix()};
}

Result<void> ControlClient::signOut()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::SignOutReply reply;
    const grpc::Status status = state_->sessions->SignOut(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    return success();
}

Result<std::vector<SessionSummary>> ControlClient::listSessions()
{
    auto reply = state_->call(*state_->sessions, &v1::Sessions::Stub::ListSessions,
                              v1::ListSessionsRequest{});
    if (!reply)
        return reply.error();
    std::vector<SessionSummary> sessions;
    for (const v1::Session& session : reply->sessions())
        sessions.push_back({session.id(), session.user(), session.created_unix(),
                            session.last_used_unix(), session.revoked(), session.expired()});
    return sessions;
}

Result<std::uint32_t> ControlClient::revokeSessions(const std::string& user)
{
    v1::RevokeSessionsRequest request;
    request.set_user(user);
    auto reply = state_->call(*state_->sessions, &v1::Sessions::Stub::RevokeSessions, request);
    if (!reply)
        return reply.error();
    return reply->certificates_revoked();
}

Result<std::vector<UserSummary>> ControlClient::listUsers()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::ListUsersReply reply;
    const grpc::Status status = state_->users->ListUsers(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    std::vector<UserSummary> users;
    for (const v1::User& user : reply.users())
        users.push_back(
            {user.name(), user.disabled(), {user.grants().begin(), user.grants().end()}});
    return users;
}

Result<std::string> ControlClient::createUser(const std::string& name)
{
    v1::CreateUserRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    setDeadline(context);
    v1::NewUserReply reply;
    const grpc::Status status = state_->users->CreateUser(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return reply.enrolment_code();
}

Result<void> ControlClient::disableUser(const std::string& name)
{
    v1::UserRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    setDeadline(context);
    v1::UserReply reply;
    return state_->result(state_->users->DisableUser(&context, request, &reply));
}

Result<void> ControlClient::enableUser(const std::string& name)
{
    v1::UserRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    setDeadline(context);
    v1::UserReply reply;
    return state_->result(state_->users->EnableUser(&context, request, &reply));
}

Result<ResetResult> ControlClient::resetUser(const std::string& name)
{
    return changeReset(name, false);
}

Result<ResetResult> ControlClient::approveReset(const std::string& name)
{
    return changeReset(name, true);
}

Result<ResetResult> ControlClient::changeReset(const std::string& name, bool approve)
{
    v1::UserRequest request;
    request.set_name(name);
    auto reply = state_->call(
        *state_->users, approve ? &v1::Users::Stub::ApproveReset : &v1::Users::Stub::ResetUser,
        request);
    if (!reply)
        return reply.error();
    return ResetResult{reply->user(), reply->pending(), reply->reset_code()};
}

Result<std::string> ControlClient::completeReset(const std::string& user,
                                                 const std::string& resetCode,
                                                 const crypto::SecretBytes& password)
{
    v1::CompleteResetRequest request;
    request.set_user(user);
    request.set_reset_code(resetCode);
    request.set_password(
        std::string(reinterpret_cast<const char*>(password.bytes().data()), password.size()));
    auto reply = state_->call(*state_->users, &v1::Users::Stub::CompleteReset, request);
    request.mutable_password()->assign(request.password().size(), '\0');
    request.mutable_reset_code()->assign(request.reset_code().size(), '\0');
    if (!reply)
        return reply.error();
    return reply->otpauth_uri();
}

Result<GrantResult> ControlClient::grantRole(const std::string& user, const std::string& role,
                                             const std::string& project)
{
    v1::GrantReply reply;
    SEALTRAIN_TRY(changeGrant(user, role, project, true, reply));
    return GrantResult{reply.pending()};
}

Result<void> ControlClient::revokeRole(const std::string& user, const std::string& role,
                                       const std::string& project)
{
    v1::GrantReply reply;
    return changeGrant(user, role, project, false, reply);
}

Result<void> ControlClient::changeGrant(const std::string& user, const std::string& role,
                                        const std::string& project, bool grant,
                                        v1::GrantReply& reply)
{
    v1::GrantRequest request;
    request.set_user(user);
    request.set_role(role);
    request.set_project(project);
    grpc::ClientContext context;
    setDeadline(context);
    return state_->result(grant ? state_->access->GrantRole(&context, request, &reply)
                                : state_->access->RevokeRole(&context, request, &reply));
}

Result<void> ControlClient::grantBreakGlass(const std::string& user, const std::string& role,
                                            const std::string& project, const std::string& reason,
                                            std::chrono::seconds duration)
{
    v1::BreakGlassRequest request;
    request.set_user(user);
    request.set_role(role);
    request.set_project(project);
    request.set_reason(reason);
    request.set_duration_seconds(duration.count());
    return withoutReply(state_->call(*state_->access, &v1::Access::Stub::GrantBreakGlass, request));
}

Result<std::vector<RoleSummary>> ControlClient::listRoles()
{
    auto reply =
        state_->call(*state_->access, &v1::Access::Stub::ListRoles, v1::ListRolesRequest{});
    if (!reply)
        return reply.error();
    std::vector<RoleSummary> roles;
    for (const v1::Role& role : reply->roles())
        roles.push_back(
            {role.name(), role.builtin(), {role.permissions().begin(), role.permissions().end()}});
    return roles;
}

Result<void> ControlClient::createRole(const std::string& name,
                                       const std::vector<std::string>& permissions)
{
    v1::CreateRoleRequest request;
    request.set_name(name);
    for (const std::string& permission : permissions)
        request.add_permissions(permission);
    return withoutReply(state_->call(*state_->access, &v1::Access::Stub::CreateRole, request));
}

Result<void> ControlClient::deleteRole(const std::string& name)
{
    v1::DeleteRoleRequest request;
    request.set_name(name);
    return withoutReply(state_->call(*state_->access, &v1::Access::Stub::DeleteRole, request));
}

Result<DatasetDetails> ControlClient::showDataset(const std::string& reference)
{
    v1::ShowDatasetRequest request;
    request.set_dataset(reference);
    auto reply = state_->call(*state_->datasets, &v1::Datasets::Stub::ShowDataset, request);
    if (!reply)
        return reply.error();
    DatasetDetails details;
    details.dataset = summaryOf(reply->dataset());
    details.parent = reply->parent();
    details.creator = reply->creator();
    details.signer = reply->signer();
    details.createdUnix = reply->created_unix();
    details.readers.assign(reply->readers().begin(), reply->readers().end());
    if (reply->has_manifest()) {
        const v1::ManifestSummary& manifest = reply->manifest();
        details.manifest = ManifestFacts{manifest.tokenizer(),
                                         manifest.input_format(),
                                         splitOf(manifest.train()),
                                         splitOf(manifest.validation()),
                                         {manifest.counts().begin(), manifest.counts().end()},
                                         manifest.sources()};
    }
    return details;
}

Result<void> ControlClient::grantRead(const std::string& reference, const std::string& user)
{
    return changeReadGrant(reference, user, true);
}

Result<void> ControlClient::revokeRead(const std::string& reference, const std::string& user)
{
    return changeReadGrant(reference, user, false);
}

Result<void> ControlClient::changeReadGrant(const std::string& reference, const std::string& user,
                                            bool grant)
{
    v1::ReadGrantRequest request;
    request.set_dataset(reference);
    request.set_user(user);
    return withoutReply(state_->call(
        *state_->datasets, grant ? &v1::Datasets::Stub::GrantRead : &v1::Datasets::Stub::RevokeRead,
        request));
}

Result<std::vector<DatasetSummary>> ControlClient::listDatasets()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::ListDatasetsReply reply;
    const grpc::Status status = state_->datasets->ListDatasets(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    std::vector<DatasetSummary> datasets;
    for (const v1::Dataset& dataset : reply.datasets())
        datasets.push_back(summaryOf(dataset));
    return datasets;
}

Result<ImportedDataset> ControlClient::importDataset(const ImportSettings& settings,
                                                     const std::vector<UploadFile>& files,
                                                     const UploadProgress& progress)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
    v1::ImportDatasetReply reply;
    auto stream = state_->datasets->ImportDataset(&context, &reply);
    std::uint64_t total = 0;
    for (const UploadFile& file : files)
        total += file.size;

    v1::ImportChunk chunk;
    v1::ImportHeader* header = chunk.mutable_header();
    header->set_name(settings.name);
    header->set_format(settings.format);
    header->set_field(settings.field);
    header->set_classification(settings.classification);
    header->set_policy(settings.policy);
    header->set_redact_pii(settings.redactPii);
    header->set_max_record_bytes(settings.maxRecordBytes);
    header->set_validation_basis_points(settings.validationBasisPoints);
    header->set_tokens_per_shard(settings.tokensPerShard);
    header->set_gpt2_vocab_json(settings.gpt2VocabJson);
    header->set_gpt2_merges_txt(settings.gpt2MergesTxt);
    header->set_total_bytes(total);
    // A failed write means the server ended the call: its status (below) says why.
    bool open = stream->Write(chunk);
    std::uint64_t sent = 0;
    std::string buffer(kPiece, '\0');
    for (const UploadFile& file : files) {
        if (!open)
            break;
        std::ifstream in(file.path, std::ios::binary);
        if (!in) {
            context.TryCancel();
            (void)stream->Finish();
            return Error(ErrorCode::NotFound,
                         fmt::format("Cannot read '{}'; check the path and its permissions. "
                                     "Nothing was imported.",
                                     file.path.string()));
        }
        chunk.Clear();
        chunk.mutable_file()->set_name(file.name);
        chunk.mutable_file()->set_size(file.size);
        open = stream->Write(chunk);
        while (open && in) {
            in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
            const auto got = static_cast<std::size_t>(in.gcount());
            if (got == 0)
                break;
            chunk.set_data(buffer.data(), got);
            open = stream->Write(chunk);
            sent += got;
            if (progress)
                progress(sent, total);
        }
        if (in.bad()) {
            context.TryCancel();
            (void)stream->Finish();
            return Error(ErrorCode::Io, fmt::format("Reading '{}' failed; nothing was imported.",
                                                    file.path.string()));
        }
    }
    if (open)
        stream->WritesDone();
    const grpc::Status status = stream->Finish();
    if (!status.ok())
        return state_->failure(status);
    return ImportedDataset{summaryOf(reply.dataset()), reply.parent(), reply.signer(),
                           reply.report_json()};
}

Result<std::string> ControlClient::exportAuditBundle(const AuditSelection& selection)
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
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
    auto stream = state_->audit->ExportBundle(&context, request);
    std::string bundle;
    v1::BundleChunk chunk;
    while (stream->Read(&chunk))
        bundle += chunk.data();
    const grpc::Status status = stream->Finish();
    if (!status.ok())
        return state_->failure(status);
    return bundle;
}

Result<SigningKeys> ControlClient::signingKeys()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::GetSigningKeysReply reply;
    const grpc::Status status = state_->platform->GetSigningKeys(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    return SigningKeys{reply.audit_public_key_pem(), reply.manifests_public_key_pem(),
                       reply.checkpoints_public_key_pem()};
}

Result<TrainOutcome> ControlClient::train(const std::string& dataset,
                                          const std::vector<std::string>& trainerArguments,
                                          const std::function<void(const std::string&)>& onMetrics)
{
    v1::TrainRequest request;
    request.set_dataset(dataset);
    for (const std::string& argument : trainerArguments)
        request.add_trainer_arguments(argument);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
    return state_->trainingStream(*state_->training->Train(&context, request), onMetrics);
}

Result<TrainOutcome> ControlClient::runJob(std::int64_t id,
                                           const std::function<void(const std::string&)>& onMetrics)
{
    v1::RunJobRequest request;
    request.set_id(id);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
    return state_->trainingStream(*state_->training->RunJob(&context, request), onMetrics);
}

Result<TrainOutcome>
ControlClient::State::trainingStream(grpc::ClientReader<v1::TrainEvent>& stream,
                                     const std::function<void(const std::string&)>& onMetrics) const
{
    TrainOutcome outcome;
    bool finished = false;
    v1::TrainEvent event;
    while (stream.Read(&event)) {
        if (event.has_finished()) {
            outcome.runId = event.finished().run_id();
            outcome.exitCode = event.finished().exit_code();
            outcome.checkpoints = event.finished().checkpoints();
            finished = true;
        } else if (onMetrics) {
            onMetrics(event.metrics_line());
        }
    }
    const grpc::Status status = stream.Finish();
    if (!status.ok())
        return failure(status);
    if (!finished)
        return Error(ErrorCode::Io, "The control plane ended the training call without saying "
                                    "how the run ended; check its log.");
    return outcome;
}

Result<SampleOutcome> ControlClient::sample(const std::string& runId, std::uint64_t step,
                                            const std::vector<std::string>& samplerArguments)
{
    v1::SampleRequest request;
    request.set_run_id(runId);
    return state_->sample(request, step, samplerArguments);
}

Result<SampleOutcome> ControlClient::sampleJob(std::int64_t job, std::uint64_t step,
                                               const std::vector<std::string>& samplerArguments)
{
    v1::SampleRequest request;
    request.set_job(job);
    return state_->sample(request, step, samplerArguments);
}

Result<JobSummary> ControlClient::submitJob(const std::string& specText)
{
    v1::SubmitJobRequest request;
    request.set_spec_text(specText);
    return state_->job(&v1::Jobs::Stub::SubmitJob, request);
}

Result<JobSummary> ControlClient::editJob(std::int64_t id, const std::string& specText)
{
    v1::EditJobRequest request;
    request.set_id(id);
    request.set_spec_text(specText);
    return state_->job(&v1::Jobs::Stub::EditJob, request);
}

Result<JobSummary> ControlClient::vetJob(std::int64_t id)
{
    v1::JobIdRequest request;
    request.set_id(id);
    return state_->job(&v1::Jobs::Stub::VetJob, request);
}

Result<JobSummary> ControlClient::approveJob(std::int64_t id, const std::string& specSha256)
{
    v1::ApproveJobRequest request;
    request.set_id(id);
    request.set_spec_sha256(specSha256);
    return state_->job(&v1::Jobs::Stub::ApproveJob, request);
}

Result<JobSummary> ControlClient::rejectJob(std::int64_t id, const std::string& reason)
{
    v1::DecideJobRequest request;
    request.set_id(id);
    request.set_reason(reason);
    return state_->job(&v1::Jobs::Stub::RejectJob, request);
}

Result<JobSummary> ControlClient::cancelJob(std::int64_t id, const std::string& reason)
{
    v1::DecideJobRequest request;
    request.set_id(id);
    request.set_reason(reason);
    return state_->job(&v1::Jobs::Stub::CancelJob, request);
}

Result<JobSummary> ControlClient::showJob(std::int64_t id)
{
    v1::JobIdRequest request;
    request.set_id(id);
    return state_->job(&v1::Jobs::Stub::ShowJob, request);
}

Result<std::vector<JobSummary>> ControlClient::listJobs()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::ListJobsReply reply;
    const grpc::Status status = state_->jobs->ListJobs(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    std::vector<JobSummary> jobs;
    for (const v1::Job& job : reply.jobs())
        jobs.push_back(summaryOf(job));
    return jobs;
}

Result<std::vector<std::string>> ControlClient::jobMetrics(std::int64_t id, bool logs,
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

Result<EnrollTokenGrant> ControlClient::createEnrollToken(const std::string& worker,
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

Result<std::vector<WorkerSummary>> ControlClient::listWorkers()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::ListWorkersReply reply;
    const grpc::Status status = state_->workers->ListWorkers(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    std::vector<WorkerSummary> workers;
    for (const v1::Worker& worker : reply.workers())
        workers.push_back(workerOf(worker));
    return workers;
}

Result<WorkerSummary> ControlClient::declareInterconnect(const std::string& worker, bool encrypted)
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

Result<WorkerSummary> ControlClient::revokeWorker(const std::string& worker,
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

Result<WorkerEnrolled> ControlClient::enrollWorker(const WorkerEnrollment& enrollment)
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

bool ControlClient::certificateRefused()
{
    constexpr auto kProbeTimeout = std::chrono::seconds(5);
    const auto ask = [&](v1::Platform::Stub& stub) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + kProbeTimeout);
        v1::GetCaCertificateReply reply;
        return stub.GetCaCertificate(&context, {}, &reply).error_code();
    };
    const Endpoint& anonymous = state_->endpoint;
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = anonymous.caCertificatePem;
    const auto channel =
        openChannel(anonymous.address, anonymous.serverName, grpc::SslCredentials(ssl));
    if (ask(*v1::Platform::NewStub(channel)) != grpc::StatusCode::OK)
        return false;
    // UNAVAILABLE, not DEADLINE_EXCEEDED: the handshake failed; a slow answer says nothing.
    return ask(*state_->platform) == grpc::StatusCode::UNAVAILABLE;
}

Result<HeartbeatAnswer> ControlClient::heartbeat(const std::string& inventoryJson, std::int64_t job,
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

Result<std::optional<JobAssignment>> ControlClient::takeJob()
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
    assignment.checkpointKek = reply.checkpoint_kek();
    assignment.nodes = reply.nodes();
    assignment.ranksPerNode = reply.ranks_per_node();
    return std::optional<JobAssignment>(std::move(assignment));
}

Result<std::vector<std::filesystem::path>>
ControlClient::fetchDataset(std::int64_t job, std::int64_t attempt,
                            const std::filesystem::path& folder)
{
    return state_->fetchFiles(&v1::Workers::Stub::FetchDataset, attemptOf(job, attempt), folder,
                              std::uint64_t{1} << 42U);
}

Result<std::vector<std::filesystem::path>>
ControlClient::fetchCheckpoint(std::int64_t job, std::int64_t attempt,
                               const std::filesystem::path& folder)
{
    return state_->fetchFiles(&v1::Workers::Stub::FetchCheckpoint, attemptOf(job, attempt), folder,
                              std::uint64_t{1} << 40U);
}

Result<bool> ControlClient::reportMetrics(const MetricsReport& report)
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

Result<UploadedCheckpoint> ControlClient::uploadCheckpoint(std::int64_t job, std::int64_t attempt,
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

Result<JobSummary> ControlClient::finishJob(std::int64_t job, std::int64_t attempt, bool succeeded,
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
