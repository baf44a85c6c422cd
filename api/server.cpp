// The control plane over gRPC (server.h): the TLS credentials, the handshake's revocation check,
// the public Platform calls, the reaper, and the services of the contract, one file each
// (sessions_service.cpp, users_service.cpp, access_service.cpp, datasets_service.cpp,
// audit_service.cpp, training_service.cpp, jobs_service.cpp, worker_service.cpp), each handler
// mapping onto one core service call.
#include "sealtrain/api/server.h"

#include "keepalive.h"
#include "sealtrain/base/logging.h"
#include "sealtrain/base/version.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/store/commit_group.h"
#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "server_shared.h"
#include "status.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

namespace sealtrain::api {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;
using server_internal::Shared;
using server_internal::statusOf;

// Refuses, at the handshake, a client certificate whose session was signed out.
class RevocationVerifier final : public grpc::experimental::ExternalCertificateVerifier {
public:
    explicit RevocationVerifier(Shared& shared)
        : shared_(shared)
    {
    }

    bool Verify(grpc::experimental::TlsCustomVerificationCheckRequest* request,
                std::function<void(Status)> /*callback*/, Status* syncStatus) override
    {
        const auto pem = request->peer_cert();
        *syncStatus = Status::OK;
        if (pem.empty())
            return true;  // no client certificate: only the calls that need none will work
        auto serial = crypto::revocationFor(std::string_view(pem.data(), pem.size()),
                                            crypto::CertificateClock::now());
        if (!serial || shared_.isRevoked(serial->serialHex)) {
            *syncStatus = Status(grpc::StatusCode::UNAUTHENTICATED,
                                 "The client certificate was revoked; sign in again.");
            ++shared_.certificatesRefused;
            // Counted here, written by the reaper (issue #54): the handshake has no call yet.
            shared_.countRefusedHandshake(serial ? serial->serialHex : std::string());
        } else {
            ++shared_.certificatesVerified;
        }
        return true;
    }

    void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest* /*request*/) override {}

private:
    Shared& shared_;
};

// The refusals counted rather than written call by call: the anonymous ones whose window has
// passed (every one when `all`), and the handshakes refused for their certificate.
Status writeRefusals(Shared& shared, bool all)
{
    auto& plane = shared.platform.controlPlane();
    if (auto flushed = plane.flushAnonymousRefusals(all); !flushed)
        return statusOf(flushed);
    const auto due =
        shared.takeRefusedHandshakes(all, plane.options().anonymousRefusalWindow.count());
    for (const auto& [serial, counted] : due)
        if (auto written = plane.recordRefusedHandshakes(serial, counted.owner, counted.count,
                                                         counted.first, counted.last);
            !written)
            return statusOf(written);
    return Status::OK;
}

class PlatformService final : public v1::Platform::Service {
public:
    explicit PlatformService(Shared& shared)
        : shared_(shared)
    {
    }

    Status GetCaCertificate(ServerContext* /*context*/, const v1::GetCaCertificateRequest*,
                            v1::GetCaCertificateReply* reply) override
    {
        reply->set_certificate_pem(shared_.platform.certificateAuthority().certificatePem());
        return Status::OK;
    }

    Status GetSigningKeys(ServerContext* /*context*/, const v1::GetSigningKeysRequest*,
                          v1::GetSigningKeysReply* reply) override
    {
        reply->set_audit_public_key_pem(shared_.platform.signingKey().publicKey().toPem());
        reply->set_manifests_public_key_pem(shared_.platform.manifestsKey().publicKey().toPem());
        reply->set_checkpoints_public_key_pem(
            shared_.platform.checkpointsKey().publicKey().toPem());
        reply->set_registry_public_key_pem(shared_.platform.registryKey().publicKey().toPem());
        reply->set_artefact_root_pem(shared_.platform.artefactRoot().certificatePem());
        return Status::OK;
    }

    Status Backup(ServerContext* context, const v1::BackupRequest* request,
                  grpc::ServerWriter<v1::BackupChunk>* writer) override
    {
        return server_internal::streamBackup(shared_, *context, *request, *writer);
    }

    // For signed-in callers only (issue #27): the version tells an attacker which flaws to try.
    Status GetServerInfo(ServerContext* context, const v1::GetServerInfoRequest*,
                         v1::GetServerInfoReply* reply) override
    {
        core::ControlPlane& plane = shared_.platform.controlPlane();
        {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            auto caller =
                plane.identity().whoAmI(server_internal::callerOf(shared_, *context).token);
            if (!caller)
                return Internal::toStatus(caller.error());
        }
        const ServerOptions& options = shared_.options;
        reply->set_version(kVersion);
        reply->set_api_version(v1::GetServerInfoReply::descriptor()->file()->package());
        reply->set_session_idle_seconds(plane.options().sessionIdle.count());
        reply->set_session_max_seconds(plane.options().sessionMax.count());
        reply->set_max_uploads(options.maxUploads);
        reply->set_max_import_bytes(options.maxImportBytes);
        reply->set_max_watches(options.maxWatches);
        reply->set_max_audit_page(core::kMaxAuditPage);
        reply->set_max_password_checks(options.maxPasswordChecks);
        reply->set_max_spec_bytes(options.jobSpecLimits.maxBytes);
        reply->set_enrolment_code_lifetime_seconds(plane.options().enrolmentCodeLifetime.count());
        reply->set_audit_witnesses_outside(
            static_cast<std::uint32_t>(shared_.platform.witnessesOutside().size()));
        if (const auto health = shared_.platform.forwardHealth()) {
            auto* forwarding = reply->mutable_audit_forwarding();
            forwarding->set_kind(health->target.substr(0, health->target.find(':')));
            forwarding->set_delivered(health->delivered);
            forwarding->set_log_size(health->logSize);
            forwarding->set_head_size(health->headSize);
            forwarding->set_last_delivery_unix(health->lastDeliveryUnix.value_or(0));
            forwarding->set_failing_since_unix(health->failingSinceUnix.value_or(0));
            forwarding->set_failures(health->failures);
        }
        return Status::OK;
    }

private:
    Shared& shared_;
};

}  // namespace

struct ControlServer::State {
    explicit State(core::DataDirectory& platform, const ServerOptions& options)
        : shared{platform, options, {}, {}, {}, {}, {}, 0,  nullptr, {}, {}, {}, {},
                 0,        {},      0,  0,  {}, 0,  {}, {}, false,   {}, {}, {}, {}}
        , platformService(shared)
        , sessionsService(server_internal::makeSessionsService(shared))
        , usersService(server_internal::makeUsersService(shared))
        , accessService(server_internal::makeAccessService(shared))
        , datasetsService(server_internal::makeDatasetsService(shared))
        , auditService(server_internal::makeAuditService(shared))
        , trainingService(server_internal::makeTrainingService(shared))
        , jobsService(server_internal::makeJobsService(shared))
        , runsService(server_internal::makeRunsService(shared))
        , complianceService(server_internal::makeComplianceService(shared))
        , registryService(server_internal::makeRegistryService(shared))
        , workersService(server_internal::makeWorkersService(shared))
        , keyringService(server_internal::makeKeyringService(shared))
    {
    }

    // Re-queues the jobs of workers that stopped beating. Nothing is released until a whole
    // timeout has passed since the start: after a restart every worker gets that long to call
    // again, since the beats it sent while the control plane was down were never received.
    void reap(const std::stop_token& stop)
    {
        const auto started = std::chrono::steady_clock::now();
        std::mutex sleepLock;
        std::condition_variable_any wake;
        while (!stop.stop_requested()) {
            {
                std::unique_lock guard(sleepLock);
                wake.wait_for(guard, stop, std::chrono::seconds(1), [] { return false; });
            }
            if (stop.stop_requested())
                continue;
            // Anonymous refusals counted in a window that has passed are written now (issue #27),
            // and so are the handshakes refused (issue #54).
            const Status flushed =
                shared.inOwnGroup([&]() -> Status { return writeRefusals(shared, false); });
            if (!flushed.ok())
                sealtrain::log::warn("control", "Could not record counted refusals",
                                     {{"error", flushed.error_message()}});
            if (std::chrono::steady_clock::now() - started < shared.options.workerTimeout)
                continue;
            const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                                         shared.platform.clock().now().time_since_epoch())
                                         .count();
            const Status released = shared.inOwnGroup([&]() -> Status {
                return statusOf(shared.platform.controlPlane().scheduler().releaseSilent(
                    now, shared.options.workerTimeout.count()));
            });
            if (!released.ok())
                sealtrain::log::warn("control", "Could not re-queue the jobs of silent workers",
                                     {{"error", released.error_message()}});
        }
    }

    Shared shared;
    PlatformService platformService;
    std::unique_ptr<grpc::Service> sessionsService;
    std::unique_ptr<grpc::Service> usersService;
    std::unique_ptr<grpc::Service> accessService;
    std::unique_ptr<grpc::Service> datasetsService;
    std::unique_ptr<grpc::Service> auditService;
    std::unique_ptr<grpc::Service> trainingService;
    std::unique_ptr<grpc::Service> jobsService;
    std::unique_ptr<grpc::Service> runsService;
    std::unique_ptr<grpc::Service> complianceService;
    std::unique_ptr<grpc::Service> registryService;
    std::unique_ptr<grpc::Service> workersService;
    std::unique_ptr<grpc::Service> keyringService;
    std::vector<int> ports;
    std::unique_ptr<grpc::Server> server;
    // Last, so that it stops first.
    std::jthread reaper;
};

Result<std::unique_ptr<ControlServer>> ControlServer::start(core::DataDirectory& platform,
                                                            const ServerOptions& options)
{
    if (options.listen.empty())
        return Error(ErrorCode::InvalidArgument,
                     "Give sealtrain-control at least one address to listen on (--listen).");
    auto state = std::make_unique<State>(platform, options);
    state->shared.group =
        std::make_unique<core::CommitGroup>(platform.database(), state->shared.lock);
    // Revoked workers stay revoked across restarts (sessions' certificates end with the process).
    {
        auto revoked = platform.controlPlane().workers().revokedSerials();
        if (!revoked)
            return revoked.error();
        const auto now = crypto::CertificateClock::now();
        for (const std::string& serial : *revoked) {
            state->shared.revoked.insert(serial);
            state->shared.revocations.push_back({serial, now});
        }
    }
    SEALTRAIN_TRY(state->shared.publishCrl());

    // The server's own key and certificate, new at every start, from the platform CA.
    auto keyAndCsr = crypto::makeKeyAndCsr("sealtrain-control");
    if (!keyAndCsr)
        return keyAndCsr.error();
    crypto::IssueRequest issue;
    issue.csrPem = keyAndCsr->csrPem;
    issue.commonName = "sealtrain-control";
    issue.subjectAltNames.dns = options.dnsNames;
    issue.subjectAltNames.ip = options.ipAddresses;
    issue.purpose = crypto::CertificatePurpose::Server;
    issue.validFor = std::chrono::hours(24 * 30);
    auto certificate = platform.certificateAuthority().issue(issue);
    if (!certificate)
        return certificate.error();

    const std::string& caPem = platform.certificateAuthority().certificatePem();
    // gRPC takes the key as a std::string; it lives as long as the server's credentials.
    std::vector<grpc::experimental::IdentityKeyCertPair> identity{
        {std::string(reinterpret_cast<const char*>(keyAndCsr->privateKeyPem.bytes().data()),
                     keyAndCsr->privateKeyPem.size()),
         *certificate}};
    auto provider =
        std::make_shared<grpc::experimental::StaticDataCertificateProvider>(caPem, identity);
    grpc::experimental::TlsServerCredentialsOptions tls(provider);
    tls.watch_root_certs();
    tls.watch_identity_key_cert_pairs();
    // A client certificate is optional at the handshake (sign-in needs none) and, when given,
    // must chain to the platform CA, be valid now and not be revoked.
    tls.set_cert_request_type(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
    tls.set_certificate_verifier(
        grpc::experimental::ExternalCertificateVerifier::Create<RevocationVerifier>(state->shared));
    // What the compliance report says of client certificates, from what was configured here.
    state->shared.clientCertificatesVerified = true;
    const auto credentials = grpc::experimental::TlsServerCredentials(tls);

    grpc::ServerBuilder builder;
    state->ports.assign(options.listen.size(), 0);
    for (std::size_t i = 0; i < options.listen.size(); ++i)
        builder.AddListeningPort(options.listen[i], credentials, &state->ports[i]);
    builder.RegisterService(&state->platformService);
    builder.RegisterService(state->sessionsService.get());
    builder.RegisterService(state->usersService.get());
    builder.RegisterService(state->accessService.get());
    builder.RegisterService(state->datasetsService.get());
    builder.RegisterService(state->auditService.get());
    builder.RegisterService(state->trainingService.get());
    builder.RegisterService(state->jobsService.get());
    builder.RegisterService(state->runsService.get());
    builder.RegisterService(state->complianceService.get());
    builder.RegisterService(state->registryService.get());
    builder.RegisterService(state->workersService.get());
    builder.RegisterService(state->keyringService.get());
    // Uploads and bundles travel in pieces of at most 1 MiB; a message may carry a GPT-2
    // tokenizer's files (about 1.5 MB) in an import's header.
    builder.SetMaxReceiveMessageSize(16 << 20);
    // Clients ping every keepalive::kTime, also while an upload waits for its answer and while
    // idle; gRPC's default (one ping in five minutes) would count those as strikes and send
    // the client away mid-upload.
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                               static_cast<int>(keepalive::kServerMinInterval.count()));
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    state->server = builder.BuildAndStart();
    if (!state->server)
        return Error(ErrorCode::Io,
                     fmt::format("Cannot listen on {}; check that the addresses are free and the "
                                 "socket folders exist.",
                                 fmt::join(options.listen, ", ")));
    for (std::size_t i = 0; i < options.listen.size(); ++i) {
        if (options.listen[i].rfind("unix:", 0) == 0)
            state->ports[i] = 0;
        else if (state->ports[i] == 0)
            return Error(ErrorCode::Io, fmt::format("Cannot listen on '{}'; check that the "
                                                    "address is free.",
                                                    options.listen[i]));
    }
    State* running = state.get();
    state->reaper = std::jthread([running](const std::stop_token& stop) { running->reap(stop); });
    return std::unique_ptr<ControlServer>(new ControlServer(std::move(state)));
}

ControlServer::ControlServer(std::unique_ptr<State> state)
    : state_(std::move(state))
{
}

ControlServer::~ControlServer()
{
    if (state_ && state_->server)
        state_->server->Shutdown();
}

const std::vector<int>& ControlServer::ports() const noexcept
{
    return state_->ports;
}

Result<void> ControlServer::probe()
{
    return state_->shared.group->run([] {});
}

void ControlServer::shutdown(std::chrono::milliseconds grace)
{
    // The reaper first: once the server stops, its owner signs the audit head on the same
    // database, outside any group, and a reaper's group then would collide with it.
    state_->reaper.request_stop();
    if (state_->reaper.joinable())
        state_->reaper.join();
    state_->server->Shutdown(std::chrono::system_clock::now() + grace);
    // No call runs now: every refusal still counted is written before the owner signs the head.
    const Status flushed =
        state_->shared.inOwnGroup([&]() -> Status { return writeRefusals(state_->shared, true); });
    if (!flushed.ok())
        sealtrain::log::warn("control", "Could not record counted refusals at shutdown",
                             {{"error", flushed.error_message()}});
}

void ControlServer::wait()
{
    state_->server->Wait();
}

}  // namespace sealtrain::api
