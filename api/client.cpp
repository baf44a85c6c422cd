// The control plane's client library (client.h): channel credentials that pin the platform CA
// and present the session's client certificate, one handle per service on the channel, and the
// SessionsClient, UsersClient and AccessClient (sessions_client.h, users_client.h,
// access_client.h).
#include "sealtrain/api/client.h"

#include "client_state.h"

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

#include <algorithm>
#include <chrono>
#include <thread>

namespace sealtrain::api {
namespace {

// How long a client process waits at exit for gRPC's own threads to finish tearing down.
constexpr auto kShutdownWait = std::chrono::seconds(5);

}  // namespace

std::shared_ptr<grpc::Channel>
client_internal::openChannel(const std::string& address, const std::string& serverName,
                             const std::shared_ptr<grpc::ChannelCredentials>& credentials,
                             bool pings)
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

namespace v1 = sealtrain::v1;
using client_internal::kLargestPage;
using client_internal::openChannel;
using client_internal::setDeadline;
using client_internal::withoutReply;

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
    auto state = std::make_unique<client_internal::ClientState>();
    state->endpoint = endpoint;
    state->presentsCertificate = identity != nullptr;
    state->credentials = grpc::SslCredentials(ssl);
    state->channel =
        openChannel(endpoint.address, endpoint.serverName, state->credentials, endpoint.keepalive);
    state->sessions = v1::Sessions::NewStub(state->channel);
    state->users = v1::Users::NewStub(state->channel);
    state->access = v1::Access::NewStub(state->channel);
    state->datasets = v1::Datasets::NewStub(state->channel);
    state->audit = v1::Audit::NewStub(state->channel);
    state->platform = v1::Platform::NewStub(state->channel);
    state->training = v1::Training::NewStub(state->channel);
    state->jobs = v1::Jobs::NewStub(state->channel);
    state->runs = v1::Runs::NewStub(state->channel);
    state->registry = v1::Registry::NewStub(state->channel);
    state->workers = v1::Workers::NewStub(state->channel);
    state->keyring = v1::Keyring::NewStub(state->channel);
    return std::unique_ptr<ControlClient>(new ControlClient(std::move(state)));
}

ControlClient::ControlClient(std::unique_ptr<client_internal::ClientState> state)
    : state_(std::move(state))
    , sessions_(*state_)
    , users_(*state_)
    , access_(*state_)
    , datasets_(*state_)
    , audit_(*state_)
    , compliance_(*state_)
    , platform_(*state_)
    , keyring_(*state_)
    , training_(*state_)
    , jobs_(*state_)
    , runs_(*state_)
    , registry_(*state_)
    , workers_(*state_)
    , worker_(*state_)
{
}

ControlClient::~ControlClient() = default;

Result<SignedIn> SessionsClient::signIn(const std::string& user,
                                        const crypto::SecretBytes& password,
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

Result<WhoAmI> SessionsClient::whoAmI()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::WhoAmIReply reply;
    const grpc::Status status = state_->sessions->WhoAmI(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    WhoAmI who;
    who.user = reply.user();
    who.sessionId = reply.session_id();
    who.expiresUnix = reply.expires_unix();
    who.warnings = {reply.warnings().begin(), reply.warnings().end()};
    who.idleExpiresUnix = reply.idle_expires_unix();
    who.absoluteExpiresUnix = reply.absolute_expires_unix();
    who.idleTimeoutSeconds = reply.idle_timeout_seconds();
    who.breakGlass = reply.break_glass();
    for (const v1::ScopedPermissions& scoped : reply.permissions())
        who.permissions[scoped.project()] = {scoped.permissions().begin(),
                                             scoped.permissions().end()};
    return who;
}

bool WhoAmI::holds(const std::string& permission, const std::string& project) const
{
    for (const auto& [scope, held] : permissions) {
        if (!scope.empty() && !project.empty() && scope != project)
            continue;
        if (std::find(held.begin(), held.end(), permission) != held.end())
            return true;
    }
    return false;
}

Result<void> SessionsClient::signOut()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::SignOutReply reply;
    const grpc::Status status = state_->sessions->SignOut(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    return success();
}

Result<Page<SessionSummary>> SessionsClient::listSessionsPage(std::int64_t before,
                                                              std::uint32_t limit)
{
    v1::ListSessionsRequest request;
    request.set_before(before);
    request.set_limit(limit);
    auto reply = state_->call(*state_->sessions, &v1::Sessions::Stub::ListSessions, request);
    if (!reply)
        return reply.error();
    Page<SessionSummary> page;
    for (const v1::Session& session : reply->sessions())
        page.items.push_back({session.id(), session.user(), session.created_unix(),
                              session.last_used_unix(), session.revoked(), session.expired()});
    page.nextBefore = reply->next_before();
    return page;
}

Result<std::vector<SessionSummary>> SessionsClient::listSessions()
{
    return allPages<SessionSummary>(
        [this](std::int64_t before) { return listSessionsPage(before, kLargestPage); });
}

Result<std::uint32_t> SessionsClient::revokeSessions(const std::string& user)
{
    v1::RevokeSessionsRequest request;
    request.set_user(user);
    auto reply = state_->call(*state_->sessions, &v1::Sessions::Stub::RevokeSessions, request);
    if (!reply)
        return reply.error();
    return reply->certificates_revoked();
}

Result<std::vector<UserSummary>> UsersClient::listUsers()
{
    return state_->allKeyedPages<UserSummary>(
        *state_->users, &v1::Users::Stub::ListUsers,
        [](const v1::ListUsersReply& reply, std::vector<UserSummary>& users) {
            for (const v1::User& user : reply.users())
                users.push_back(
                    {user.name(), user.disabled(), {user.grants().begin(), user.grants().end()}});
        });
}

Result<NewUserResult> UsersClient::createUser(const std::string& name)
{
    v1::CreateUserRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    setDeadline(context);
    v1::NewUserReply reply;
    const grpc::Status status = state_->users->CreateUser(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    return NewUserResult{reply.enrolment_code(), reply.code_expires_unix()};
}

Result<ChangeResult> UsersClient::disableUser(const std::string& name)
{
    v1::UserRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    setDeadline(context);
    v1::UserReply reply;
    SEALTRAIN_TRY(state_->result(state_->users->DisableUser(&context, request, &reply)));
    return ChangeResult{reply.pending()};
}

Result<void> UsersClient::enableUser(const std::string& name)
{
    v1::UserRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    setDeadline(context);
    v1::UserReply reply;
    return state_->result(state_->users->EnableUser(&context, request, &reply));
}

Result<ResetResult> UsersClient::resetUser(const std::string& name)
{
    return changeReset(name, false);
}

Result<ResetResult> UsersClient::approveReset(const std::string& name)
{
    return changeReset(name, true);
}

Result<ResetResult> UsersClient::changeReset(const std::string& name, bool approve)
{
    v1::UserRequest request;
    request.set_name(name);
    auto reply = state_->call(
        *state_->users, approve ? &v1::Users::Stub::ApproveReset : &v1::Users::Stub::ResetUser,
        request);
    if (!reply)
        return reply.error();
    return ResetResult{reply->user(), reply->pending(), reply->reset_code(),
                       reply->code_expires_unix()};
}

Result<std::uint32_t> SessionsClient::changePassword(const crypto::SecretBytes& current,
                                                     const crypto::SecretBytes& next)
{
    v1::ChangePasswordRequest request;
    request.set_current_password(
        std::string(reinterpret_cast<const char*>(current.bytes().data()), current.size()));
    request.set_new_password(
        std::string(reinterpret_cast<const char*>(next.bytes().data()), next.size()));
    auto reply = state_->call(*state_->sessions, &v1::Sessions::Stub::ChangePassword, request);
    request.mutable_current_password()->assign(request.current_password().size(), '\0');
    request.mutable_new_password()->assign(request.new_password().size(), '\0');
    if (!reply)
        return reply.error();
    return reply->sessions_ended();
}

Result<PendingTotpView> SessionsClient::startTotpChange(const crypto::SecretBytes& password,
                                                        const std::string& currentCode)
{
    v1::StartTotpChangeRequest request;
    request.set_password(
        std::string(reinterpret_cast<const char*>(password.bytes().data()), password.size()));
    request.set_totp_code(currentCode);
    auto reply = state_->call(*state_->sessions, &v1::Sessions::Stub::StartTotpChange, request);
    request.mutable_password()->assign(request.password().size(), '\0');
    if (!reply)
        return reply.error();
    PendingTotpView pending{reply->otpauth_uri(), reply->expires_unix()};
    reply->mutable_otpauth_uri()->assign(reply->otpauth_uri().size(), '\0');
    return pending;
}

Result<std::uint32_t> SessionsClient::confirmTotpChange(const std::string& newCode)
{
    v1::ConfirmTotpChangeRequest request;
    request.set_totp_code(newCode);
    auto reply = state_->call(*state_->sessions, &v1::Sessions::Stub::ConfirmTotpChange, request);
    if (!reply)
        return reply.error();
    return reply->sessions_ended();
}

Result<std::string> UsersClient::completeReset(const std::string& user,
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

Result<GrantResult> AccessClient::grantRole(const std::string& user, const std::string& role,
                                            const std::string& project)
{
    v1::GrantReply reply;
    SEALTRAIN_TRY(changeGrant(user, role, project, true, reply));
    return GrantResult{reply.pending()};
}

Result<ChangeResult> AccessClient::revokeRole(const std::string& user, const std::string& role,
                                              const std::string& project)
{
    v1::GrantReply reply;
    SEALTRAIN_TRY(changeGrant(user, role, project, false, reply));
    return ChangeResult{reply.pending()};
}

Result<void> AccessClient::changeGrant(const std::string& user, const std::string& role,
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

Result<void> AccessClient::grantBreakGlass(const std::string& user, const std::string& role,
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

Result<std::vector<RoleSummary>> AccessClient::listRoles()
{
    return state_->allKeyedPages<RoleSummary>(
        *state_->access, &v1::Access::Stub::ListRoles,
        [](const v1::ListRolesReply& reply, std::vector<RoleSummary>& roles) {
            for (const v1::Role& role : reply.roles())
                roles.push_back({role.name(),
                                 role.builtin(),
                                 {role.permissions().begin(), role.permissions().end()}});
        });
}

Result<std::vector<PendingRequestView>> AccessClient::listPendingRequests()
{
    auto reply = state_->call(*state_->access, &v1::Access::Stub::ListPendingRequests,
                              v1::ListPendingRequestsRequest{});
    if (!reply)
        return reply.error();
    std::vector<PendingRequestView> pending;
    for (const v1::PendingRequest& request : reply->requests())
        pending.push_back({request.kind(), request.subject(), request.detail(),
                           request.requested_by(), request.created_unix(), request.waits_for()});
    return pending;
}

Result<ChangeResult> AccessClient::createRole(const std::string& name,
                                              const std::vector<std::string>& permissions)
{
    v1::CreateRoleRequest request;
    request.set_name(name);
    for (const std::string& permission : permissions)
        request.add_permissions(permission);
    auto reply = state_->call(*state_->access, &v1::Access::Stub::CreateRole, request);
    if (!reply)
        return reply.error();
    return ChangeResult{reply->pending()};
}

Result<void> AccessClient::deleteRole(const std::string& name)
{
    v1::DeleteRoleRequest request;
    request.set_name(name);
    return withoutReply(state_->call(*state_->access, &v1::Access::Stub::DeleteRole, request));
}

}  // namespace sealtrain::api
