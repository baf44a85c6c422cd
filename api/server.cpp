// The control plane over gRPC (server.h): the TLS credentials, the table of session-bound client
// certificates, and one handler per call of the contract, each mapping onto one core service call.
#include "sealtrain/api/server.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/core/commit_group.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "status.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <map>
#include <mutex>
#include <set>

namespace sealtrain::api {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

// A signed-in session as this server knows it, by its client certificate's serial.
struct Binding {
    std::string token;  // core's session token; never sent to the client
    std::string user;
    std::string sessionId;
    std::int64_t expires = 0;  // Unix seconds, the certificate's notAfter
};

// What the handlers share. Every call touches the control plane either in a group commit
// (inGroup) or holding `lock`, which the committer holds while it runs a group.
struct Shared {
    core::DataDirectory& platform;
    ServerOptions options;
    std::mutex lock;
    std::map<std::string, Binding> bindings;  // by certificate serial
    std::mutex revokedLock;                   // the verifier runs on gRPC's threads
    std::set<std::string> revoked;            // certificate serials, never accepted again
    std::vector<crypto::RevokedCertificate> revocations;
    std::uint64_t crlNumber = 0;
    std::unique_ptr<core::CommitGroup> group;  // the committer (core/commit_group.h)

    // A handler's body, run in the next group commit and answered only once the group's
    // transaction committed (a failed COMMIT fails every call of the group). Every handler that
    // touches the control plane has this shape:
    //     return shared_.inGroup([&]() -> Status { ... });
    // A handler that signs an audit head (an export) or holds the database for long takes
    // `const std::lock_guard guard(shared_.lock);` instead: it runs alone, between groups.
    template <typename Body>
    [[nodiscard]] Status inGroup(const Body& body)
    {
        Status status;
        auto committed = group->run([&] { status = body(); });
        if (!committed)
            return Internal::toStatus(committed.error());
        return status;
    }

    [[nodiscard]] bool isRevoked(const std::string& serial)
    {
        const std::lock_guard guard(revokedLock);
        return revoked.count(serial) > 0;
    }

    // Adds `serial` to the revoked set and publishes a new CRL in the run folder.
    [[nodiscard]] Result<void> revoke(const std::string& serial)
    {
        const auto now = crypto::CertificateClock::now();
        {
            const std::lock_guard guard(revokedLock);
            revoked.insert(serial);
        }
        revocations.push_back({serial, now});
        return publishCrl();
    }

    [[nodiscard]] Result<void> publishCrl()
    {
        auto crl = platform.certificateAuthority().issueCrl(revocations, ++crlNumber,
                                                            std::chrono::hours(24 * 7));
        if (!crl)
            return crl.error();
        return writeFileAtomically(
            options.runDir / "crl.pem",
            {reinterpret_cast<const std::uint8_t*>(crl->data()), crl->size()},
            AtomicFileSink::Overwrite::Allow, 0644U);
    }
};

// The peer's client certificate (PEM), or empty when it presented none.
std::string peerCertificate(const ServerContext& context)
{
    const auto auth = context.auth_context();
    if (!auth)
        return {};
    const auto values = auth->FindPropertyValues("x509_pem_cert");
    if (values.empty())
        return {};
    return {values.front().data(), values.front().size()};
}

// The caller's session token: the binding of its client certificate, or "" (which every core
// call refuses, and audits, as an unknown session) when it has none.
struct Caller {
    std::string token;
    std::string serial;
};

Caller callerOf(Shared& shared, const ServerContext& context)
{
    const std::string pem = peerCertificate(context);
    if (pem.empty())
        return {};
    auto serial = crypto::revocationFor(pem, crypto::CertificateClock::now());
    if (!serial)
        return {};
    const auto found = shared.bindings.find(serial->serialHex);
    if (found == shared.bindings.end())
        return {"", serial->serialHex};
    return {found->second.token, serial->serialHex};
}

// OK, or the error's status.
Status statusOf(const Result<void>& result)
{
    return result ? Status::OK : Internal::toStatus(result.error());
}

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
        if (!serial || shared_.isRevoked(serial->serialHex))
            *syncStatus = Status(grpc::StatusCode::UNAUTHENTICATED,
                                 "The client certificate was revoked; sign in again.");
        return true;
    }

    void Cancel(grpc::experimental::TlsCustomVerificationCheckRequest* /*request*/) override {}

private:
    Shared& shared_;
};

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

private:
    Shared& shared_;
};

class SessionsService final : public v1::Sessions::Service {
public:
    explicit SessionsService(Shared& shared)
        : shared_(shared)
    {
    }

    Status SignIn(ServerContext* /*context*/, const v1::SignInRequest* request,
                  v1::SignInReply* reply) override
    {
        return shared_.inGroup([&]() -> Status {
            core::ControlPlane& plane = shared_.platform.controlPlane();
            auto password = crypto::SecretBytes::fromBytes(
                {reinterpret_cast<const std::uint8_t*>(request->password().data()),
                 request->password().size()});
            if (!password)
                return Internal::toStatus(password.error());
            auto token = plane.identity().signIn(request->user(), *password, request->totp_code());
            if (!token)
                return Internal::toStatus(token.error());
            auto session = plane.identity().whoAmI(*token);
            if (!session)
                return Internal::toStatus(session.error());
            crypto::IssueRequest issue;
            issue.csrPem = request->csr_pem();
            issue.commonName = session->user;
            issue.subjectAltNames.uri = {"urn:sealtrain:session:" + session->id};
            issue.purpose = crypto::CertificatePurpose::Client;
            issue.validFor = shared_.options.sessionCertificateLifetime;
            auto certificate = shared_.platform.certificateAuthority().issue(issue);
            if (!certificate) {
                (void)plane.identity().signOut(*token);  // no certificate: no session either
                return Internal::toStatus(certificate.error());
            }
            auto serial = crypto::revocationFor(*certificate, crypto::CertificateClock::now());
            if (!serial) {
                (void)plane.identity().signOut(*token);
                return Internal::toStatus(serial.error());
            }
            const std::int64_t expires =
                std::chrono::duration_cast<std::chrono::seconds>(
                    (crypto::CertificateClock::now() + issue.validFor).time_since_epoch())
                    .count();
            shared_.bindings[serial->serialHex] = {*token, session->user, session->id, expires};
            reply->set_certificate_pem(*certificate);
            reply->set_session_id(session->id);
            reply->set_expires_unix(expires);
            return Status::OK;
        });
    }

    Status WhoAmI(ServerContext* context, const v1::WhoAmIRequest*, v1::WhoAmIReply* reply) override
    {
        return shared_.inGroup([&]() -> Status {
            const Caller caller = callerOf(shared_, *context);
            auto session = shared_.platform.controlPlane().identity().whoAmI(caller.token);
            if (!session)
                return Internal::toStatus(session.error());
            reply->set_user(session->user);
            reply->set_session_id(session->id);
            const auto binding = shared_.bindings.find(caller.serial);
            reply->set_expires_unix(binding == shared_.bindings.end() ? 0
                                                                      : binding->second.expires);
            return Status::OK;
        });
    }

    Status SignOut(ServerContext* context, const v1::SignOutRequest*, v1::SignOutReply*) override
    {
        return shared_.inGroup([&]() -> Status {
            const Caller caller = callerOf(shared_, *context);
            auto ended = shared_.platform.controlPlane().identity().signOut(caller.token);
            if (!ended)
                return Internal::toStatus(ended.error());
            shared_.bindings.erase(caller.serial);
            if (auto revoked = shared_.revoke(caller.serial); !revoked)
                return Internal::toStatus(revoked.error());
            return Status::OK;
        });
    }

private:
    Shared& shared_;
};

class UsersService final : public v1::Users::Service {
public:
    explicit UsersService(Shared& shared)
        : shared_(shared)
    {
    }

    Status ListUsers(ServerContext* context, const v1::ListUsersRequest*,
                     v1::ListUsersReply* reply) override
    {
        return shared_.inGroup([&]() -> Status {
            auto users = shared_.platform.controlPlane().identity().listUsers(
                callerOf(shared_, *context).token);
            if (!users)
                return Internal::toStatus(users.error());
            for (const core::UserInfo& user : *users) {
                v1::User* out = reply->add_users();
                out->set_name(user.name);
                out->set_disabled(user.disabled);
                for (const std::string& grant : user.grants)
                    out->add_grants(grant);
            }
            return Status::OK;
        });
    }

    Status CreateUser(ServerContext* context, const v1::CreateUserRequest* request,
                      v1::CreateUserReply* reply) override
    {
        return shared_.inGroup([&]() -> Status {
            auto password = crypto::SecretBytes::fromBytes(
                {reinterpret_cast<const std::uint8_t*>(request->password().data()),
                 request->password().size()});
            if (!password)
                return Internal::toStatus(password.error());
            auto enrolled = shared_.platform.controlPlane().identity().createUser(
                callerOf(shared_, *context).token, request->name(), *password);
            if (!enrolled)
                return Internal::toStatus(enrolled.error());
            reply->set_otpauth_uri(enrolled->otpauthUri);
            return Status::OK;
        });
    }

    Status DisableUser(ServerContext* context, const v1::UserRequest* request,
                       v1::UserReply* /*reply*/) override
    {
        return shared_.inGroup([&]() -> Status {
            return statusOf(shared_.platform.controlPlane().identity().disableUser(
                callerOf(shared_, *context).token, request->name()));
        });
    }

    Status EnableUser(ServerContext* context, const v1::UserRequest* request,
                      v1::UserReply* /*reply*/) override
    {
        return shared_.inGroup([&]() -> Status {
            return statusOf(shared_.platform.controlPlane().identity().enableUser(
                callerOf(shared_, *context).token, request->name()));
        });
    }

private:
    Shared& shared_;
};

class AccessService final : public v1::Access::Service {
public:
    explicit AccessService(Shared& shared)
        : shared_(shared)
    {
    }

    Status GrantRole(ServerContext* context, const v1::GrantRequest* request,
                     v1::GrantReply* /*reply*/) override
    {
        return shared_.inGroup([&]() -> Status {
            return statusOf(shared_.platform.controlPlane().access().grantRole(
                callerOf(shared_, *context).token, request->user(), request->role(),
                request->project()));
        });
    }

    Status RevokeRole(ServerContext* context, const v1::GrantRequest* request,
                      v1::GrantReply* /*reply*/) override
    {
        return shared_.inGroup([&]() -> Status {
            return statusOf(shared_.platform.controlPlane().access().revokeRole(
                callerOf(shared_, *context).token, request->user(), request->role(),
                request->project()));
        });
    }

private:
    Shared& shared_;
};

class DatasetsService final : public v1::Datasets::Service {
public:
    explicit DatasetsService(Shared& shared)
        : shared_(shared)
    {
    }

    Status ListDatasets(ServerContext* context, const v1::ListDatasetsRequest*,
                        v1::ListDatasetsReply* reply) override
    {
        return shared_.inGroup([&]() -> Status {
            auto datasets =
                shared_.platform.controlPlane().datasets().list(callerOf(shared_, *context).token);
            if (!datasets)
                return Internal::toStatus(datasets.error());
            for (const core::DatasetInfo& dataset : *datasets) {
                v1::Dataset* out = reply->add_datasets();
                out->set_id(dataset.id);
                out->set_name(dataset.name);
                out->set_version(dataset.version);
                out->set_classification(dataset.classification);
                out->set_records(dataset.records);
                out->set_tokens(dataset.tokens);
            }
            return Status::OK;
        });
    }

private:
    Shared& shared_;
};

}  // namespace

struct ControlServer::State {
    explicit State(core::DataDirectory& platform, const ServerOptions& options)
        : shared{platform, options, {}, {}, {}, {}, {}, 0, nullptr}
        , platformService(shared)
        , sessionsService(shared)
        , usersService(shared)
        , accessService(shared)
        , datasetsService(shared)
    {
    }

    Shared shared;
    PlatformService platformService;
    SessionsService sessionsService;
    UsersService usersService;
    AccessService accessService;
    DatasetsService datasetsService;
    std::vector<int> ports;
    std::unique_ptr<grpc::Server> server;
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
    const auto credentials = grpc::experimental::TlsServerCredentials(tls);

    grpc::ServerBuilder builder;
    state->ports.assign(options.listen.size(), 0);
    for (std::size_t i = 0; i < options.listen.size(); ++i)
        builder.AddListeningPort(options.listen[i], credentials, &state->ports[i]);
    builder.RegisterService(&state->platformService);
    builder.RegisterService(&state->sessionsService);
    builder.RegisterService(&state->usersService);
    builder.RegisterService(&state->accessService);
    builder.RegisterService(&state->datasetsService);
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

void ControlServer::shutdown(std::chrono::milliseconds grace)
{
    state_->server->Shutdown(std::chrono::system_clock::now() + grace);
}

void ControlServer::wait()
{
    state_->server->Wait();
}

}  // namespace sealtrain::api
