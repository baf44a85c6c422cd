// The control plane over gRPC (server.h): the TLS credentials, the table of session-bound client
// certificates, and one handler per call of the contract, each mapping onto one core service call.
#include "sealtrain/api/server.h"

#include "keepalive.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/logging.h"
#include "sealtrain/core/commit_group.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/scheduler.h"
#include "sealtrain/core/trainer_launcher.h"
#include "sealtrain/core/workers.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/manifest.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/trainer/checkpoint.h"
#include "sealtrain/trainer/trainer_keys.h"
#include "server_shared.h"
#include "status.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_certificate_verifier.h>
#include <grpcpp/security/tls_credentials_options.h>
#include <nlohmann/json.hpp>

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <thread>
#include <unordered_map>

namespace sealtrain::api {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;
using server_internal::Caller;
using server_internal::callerOf;
using server_internal::fillJob;
using server_internal::peerCertificate;
using server_internal::secretOf;
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

    Status GetSigningKeys(ServerContext* /*context*/, const v1::GetSigningKeysRequest*,
                          v1::GetSigningKeysReply* reply) override
    {
        reply->set_audit_public_key_pem(shared_.platform.signingKey().publicKey().toPem());
        reply->set_manifests_public_key_pem(shared_.platform.manifestsKey().publicKey().toPem());
        reply->set_checkpoints_public_key_pem(
            shared_.platform.checkpointsKey().publicKey().toPem());
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

    Status SignIn(ServerContext* context, const v1::SignInRequest* request,
                  v1::SignInReply* reply) override
    {
        core::ControlPlane& plane = shared_.platform.controlPlane();
        auto password = server_internal::takeSecret(request->password());
        if (!password)
            return Internal::toStatus(password.error());
        // The password's Argon2id runs on this thread, in no group, so that it delays no other
        // call: the account is read between groups, the password checked here, and the sign-in
        // (the account's state, the TOTP code, the session, the audit entry) commits in a group.
        core::SignInAttempt attempt = [&] {
            const std::lock_guard guard(shared_.lock);
            return plane.identity().startSignIn(request->user(),
                                                core::lockoutPeer(context->peer()));
        }();
        {
            // Each check holds 64 MiB or more: at most maxPasswordChecks at once (issue #27).
            auto slot = shared_.passwordCheck();
            if (!slot) {
                sealtrain::log::warn(
                    "control",
                    "A sign-in was turned away: every password check "
                    "slot stayed busy",
                    {{"slots", std::to_string(shared_.options.maxPasswordChecks)}});
                const Error busy(ErrorCode::ResourceExhausted,
                                 "The control plane is busy checking other sign-ins; try again in "
                                 "a few seconds.");
                // Audited too (issue #27, item 7), counted like other anonymous refusals.
                Status audited = shared_.inGroup(*context, [&]() -> Status {
                    return statusOf(plane.recordBusyRefusal("session.sign_in", "user", busy));
                });
                if (!audited.ok())
                    return audited;
                return Internal::toStatus(busy);
            }
            server_internal::atLowPriority([&] { attempt.checkPassword(*password); });
        }
        return shared_.inGroup(*context, [&]() -> Status {
            auto token = plane.identity().finishSignIn(attempt, *password, request->totp_code());
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

    // A read (the session's last use is written at most once a minute, in a transaction of its
    // own): served between groups rather than taking a slot in one.
    Status WhoAmI(ServerContext* context, const v1::WhoAmIRequest*, v1::WhoAmIReply* reply) override
    {
        (void)shared_.serialOf(peerCertificate(*context));  // parsed before the lock, when new
        const std::lock_guard guard(shared_.lock);
        const Shared::OriginScope origin(shared_, shared_.originOf(*context));
        const Caller caller = callerOf(shared_, *context);
        auto session = shared_.platform.controlPlane().identity().whoAmI(caller.token);
        if (!session)
            return Internal::toStatus(session.error());
        reply->set_user(session->user);
        reply->set_session_id(session->id);
        const auto binding = shared_.bindings.find(caller.serial);
        reply->set_expires_unix(binding == shared_.bindings.end() ? 0 : binding->second.expires);
        return Status::OK;
    }

    Status SignOut(ServerContext* context, const v1::SignOutRequest*, v1::SignOutReply*) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            const Caller caller = callerOf(shared_, *context);
            auto ended = shared_.platform.controlPlane().identity().signOut(caller.token);
            if (!ended)
                return Internal::toStatus(ended.error());
            shared_.bindings.erase(caller.serial);
            if (auto revoked = shared_.revoke({caller.serial}); !revoked)
                return Internal::toStatus(revoked.error());
            return Status::OK;
        });
    }

    Status ListSessions(ServerContext* context, const v1::ListSessionsRequest*,
                        v1::ListSessionsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto sessions = shared_.platform.controlPlane().identity().listSessions(
                callerOf(shared_, *context).token);
            if (!sessions)
                return Internal::toStatus(sessions.error());
            for (const core::SessionInfo& session : *sessions) {
                v1::Session* out = reply->add_sessions();
                out->set_id(session.id);
                out->set_user(session.user);
                out->set_created_unix(session.created);
                out->set_last_used_unix(session.lastUsed);
                out->set_revoked(session.revoked);
                out->set_expired(session.expired);
            }
            return Status::OK;
        });
    }

    Status RevokeSessions(ServerContext* context, const v1::RevokeSessionsRequest* request,
                          v1::RevokeSessionsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto ended = shared_.platform.controlPlane().identity().revokeSessions(
                callerOf(shared_, *context).token, request->user());
            if (!ended)
                return Internal::toStatus(ended.error());
            auto certificates = shared_.revokeCertificatesOf(request->user());
            if (!certificates)
                return Internal::toStatus(certificates.error());
            reply->set_certificates_revoked(static_cast<std::uint32_t>(*certificates));
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
        return shared_.inGroup(*context, [&]() -> Status {
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
                      v1::NewUserReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto created = shared_.platform.controlPlane().identity().createUser(
                callerOf(shared_, *context).token, request->name());
            if (!created)
                return Internal::toStatus(created.error());
            reply->set_user(created->user);
            reply->set_enrolment_code(created->enrolmentCode);
            return Status::OK;
        });
    }

    Status DisableUser(ServerContext* context, const v1::UserRequest* request,
                       v1::UserReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto disabled = shared_.platform.controlPlane().identity().disableUser(
                callerOf(shared_, *context).token, request->name());
            if (!disabled)
                return Internal::toStatus(disabled.error());
            return statusOf(shared_.revokeCertificatesOf(request->name()));
        });
    }

    Status EnableUser(ServerContext* context, const v1::UserRequest* request,
                      v1::UserReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().identity().enableUser(
                callerOf(shared_, *context).token, request->name()));
        });
    }

    Status ResetUser(ServerContext* context, const v1::UserRequest* request,
                     v1::ResetReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return answerReset(shared_.platform.controlPlane().identity().resetUser(
                                   callerOf(shared_, *context).token, request->name()),
                               *reply);
        });
    }

    Status ApproveReset(ServerContext* context, const v1::UserRequest* request,
                        v1::ResetReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return answerReset(shared_.platform.controlPlane().identity().approveReset(
                                   callerOf(shared_, *context).token, request->name()),
                               *reply);
        });
    }

    // Sessionless, like SignIn: the reset code is the credential.
    Status CompleteReset(ServerContext* context, const v1::CompleteResetRequest* request,
                         v1::CreateUserReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto password = server_internal::takeSecret(request->password());
            if (!password)
                return Internal::toStatus(password.error());
            auto enrolled = shared_.platform.controlPlane().identity().completeReset(
                request->user(), request->reset_code(), *password);
            server_internal::wipeRequestField(request->reset_code());
            if (!enrolled)
                return Internal::toStatus(enrolled.error());
            reply->set_otpauth_uri(enrolled->otpauthUri);
            return Status::OK;
        });
    }

private:
    // The reply to a reset or its approval; once it took effect, the user's sessions are over
    // and so are their client certificates.
    [[nodiscard]] Status answerReset(const Result<core::ResetOutcome>& reset, v1::ResetReply& reply)
    {
        if (!reset)
            return Internal::toStatus(reset.error());
        reply.set_user(reset->user);
        reply.set_pending(reset->pending());
        reply.set_reset_code(reset->resetCode);
        if (reset->pending())
            return Status::OK;
        return statusOf(shared_.revokeCertificatesOf(reset->user));
    }

    Shared& shared_;
};

class AccessService final : public v1::Access::Service {
public:
    explicit AccessService(Shared& shared)
        : shared_(shared)
    {
    }

    Status GrantRole(ServerContext* context, const v1::GrantRequest* request,
                     v1::GrantReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto granted = shared_.platform.controlPlane().access().grantRole(
                callerOf(shared_, *context).token, request->user(), request->role(),
                request->project());
            if (!granted)
                return Internal::toStatus(granted.error());
            reply->set_pending(granted->pending);
            return Status::OK;
        });
    }

    Status RevokeRole(ServerContext* context, const v1::GrantRequest* request,
                      v1::GrantReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().access().revokeRole(
                callerOf(shared_, *context).token, request->user(), request->role(),
                request->project()));
        });
    }

    Status GrantBreakGlass(ServerContext* context, const v1::BreakGlassRequest* request,
                           v1::GrantReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().access().grantBreakGlass(
                callerOf(shared_, *context).token, request->user(), request->role(),
                request->project(), request->reason(),
                std::chrono::seconds{request->duration_seconds()}));
        });
    }

    Status ListRoles(ServerContext* context, const v1::ListRolesRequest*,
                     v1::ListRolesReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto roles = shared_.platform.controlPlane().access().listRoles(
                callerOf(shared_, *context).token);
            if (!roles)
                return Internal::toStatus(roles.error());
            for (const core::RoleInfo& role : *roles) {
                v1::Role* out = reply->add_roles();
                out->set_name(role.name);
                out->set_builtin(role.builtin);
                for (const std::string& permission : role.permissions)
                    out->add_permissions(permission);
            }
            return Status::OK;
        });
    }

    Status CreateRole(ServerContext* context, const v1::CreateRoleRequest* request,
                      v1::RoleReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().access().createRole(
                callerOf(shared_, *context).token, request->name(),
                {request->permissions().begin(), request->permissions().end()}));
        });
    }

    Status DeleteRole(ServerContext* context, const v1::DeleteRoleRequest* request,
                      v1::RoleReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().access().deleteRole(
                callerOf(shared_, *context).token, request->name()));
        });
    }

private:
    Shared& shared_;
};

// An anonymous in-memory file (memfd): an upload's bytes, which the importer reads by the path
// /proc/self/fd/N and which vanish with the descriptor. Never on disk (it may be swapped, like
// any of the daemon's memory; production nodes run with encrypted swap or none).
class MemoryFile {
public:
    [[nodiscard]] static Result<MemoryFile> create(std::string name)
    {
        const int fd = ::memfd_create("sealtrain-upload", MFD_CLOEXEC);
        if (fd < 0)
            return Error(ErrorCode::Io, "The control plane could not hold the upload in memory; "
                                        "try again later or ask its operator.");
        return MemoryFile(fd, std::move(name));
    }

    MemoryFile(MemoryFile&& other) noexcept
        : fd_(std::exchange(other.fd_, -1))
        , name_(std::move(other.name_))
        , size_(other.size_)
    {
    }
    MemoryFile& operator=(MemoryFile&&) = delete;
    MemoryFile(const MemoryFile&) = delete;
    MemoryFile& operator=(const MemoryFile&) = delete;
    ~MemoryFile()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }

    [[nodiscard]] Result<void> append(const std::string& bytes)
    {
        std::size_t done = 0;
        while (done < bytes.size()) {
            const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return Error(ErrorCode::Io, "The control plane ran out of memory for the upload; "
                                            "import less at a time or ask its operator.");
            done += static_cast<std::size_t>(n);
        }
        size_ += bytes.size();
        return success();
    }

    [[nodiscard]] std::filesystem::path path() const
    {
        return "/proc/self/fd/" + std::to_string(fd_);
    }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] std::uint64_t size() const noexcept { return size_; }

private:
    MemoryFile(int fd, std::string name)
        : fd_(fd)
        , name_(std::move(name))
    {
    }

    int fd_;
    std::string name_;
    std::uint64_t size_ = 0;
};

// An upload as the stream delivered it: the header, each file in memory, the tokenizer files.
struct Upload {
    v1::ImportHeader header;
    std::vector<MemoryFile> files;
    std::optional<MemoryFile> vocab;
    std::optional<MemoryFile> merges;
};

Status invalidUpload(const std::string& sentence)
{
    return Internal::toStatus(Error(ErrorCode::InvalidArgument, sentence));
}

void fillDataset(const core::DatasetInfo& info, v1::Dataset& out)
{
    out.set_id(info.id);
    out.set_name(info.name);
    out.set_version(info.version);
    out.set_classification(info.classification);
    out.set_records(info.records);
    out.set_tokens(info.tokens);
}

void fillSplit(const dataset::SplitEntry& split, v1::DatasetSplit& out)
{
    out.set_records(split.records);
    out.set_tokens(split.tokens);
    out.set_shards(split.shards.size());
}

// What `dataset show` tells of a manifest: no source names, only how many.
void summarize(const dataset::Manifest& manifest, v1::ManifestSummary& out)
{
    out.set_tokenizer(manifest.tokenizer.id);
    out.set_input_format(manifest.inputFormat);
    fillSplit(manifest.train, *out.mutable_train());
    fillSplit(manifest.validation, *out.mutable_validation());
    for (const auto& [name, count] : manifest.counts)
        (*out.mutable_counts())[name] = count;
    out.set_sources(manifest.sources.size());
}

class DatasetsService final : public v1::Datasets::Service {
public:
    explicit DatasetsService(Shared& shared)
        : shared_(shared)
    {
    }

    Status ListDatasets(ServerContext* context, const v1::ListDatasetsRequest*,
                        v1::ListDatasetsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto datasets =
                shared_.platform.controlPlane().datasets().list(callerOf(shared_, *context).token);
            if (!datasets)
                return Internal::toStatus(datasets.error());
            for (const core::DatasetInfo& dataset : *datasets)
                fillDataset(dataset, *reply->add_datasets());
            return Status::OK;
        });
    }

    Status ShowDataset(ServerContext* context, const v1::ShowDatasetRequest* request,
                       v1::ShowDatasetReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto info = shared_.platform.controlPlane().datasets().show(
                callerOf(shared_, *context).token, request->dataset());
            if (!info)
                return Internal::toStatus(info.error());
            fillDataset(*info, *reply->mutable_dataset());
            reply->set_parent(info->parent);
            reply->set_creator(info->creator);
            reply->set_signer(info->signer);
            reply->set_created_unix(info->created);
            for (const std::string& reader : info->readers)
                reply->add_readers(reader);
            const auto folder = core::datasetFolder(shared_.platform.datasetsRoot(), info->id);
            if (auto manifest = dataset::loadManifest(folder, info->id); manifest)
                summarize(*manifest, *reply->mutable_manifest());
            return Status::OK;
        });
    }

    Status GrantRead(ServerContext* context, const v1::ReadGrantRequest* request,
                     v1::ReadGrantReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().datasets().grantRead(
                callerOf(shared_, *context).token, request->dataset(), request->user()));
        });
    }

    Status RevokeRead(ServerContext* context, const v1::ReadGrantRequest* request,
                      v1::ReadGrantReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().datasets().revokeRead(
                callerOf(shared_, *context).token, request->dataset(), request->user()));
        });
    }

    Status ImportDataset(ServerContext* context, grpc::ServerReader<v1::ImportChunk>* reader,
                         v1::ImportDatasetReply* reply) override
    {
        // Only a signed-in caller may upload at all; whether they may import is decided (and
        // audited) by the import itself, before any file is written.
        const Caller caller = [&] {
            const std::lock_guard guard(shared_.lock);
            return callerOf(shared_, *context);
        }();
        {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            if (auto session = shared_.platform.controlPlane().identity().whoAmI(caller.token);
                !session)
                return Internal::toStatus(session.error());
        }
        const auto slot = shared_.uploadSlot();
        if (!slot) {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            return statusOf(shared_.platform.controlPlane().datasets().refuseBusyUpload(
                caller.token, fmt::format("The control plane is receiving {} uploads already; "
                                          "try again when one has finished.",
                                          shared_.options.maxUploads)));
        }
        // An upload that sends nothing for uploadIdleTimeout is cancelled, so a stalled stream
        // holds its thread, its slot and its memory no longer than that.
        std::atomic<std::int64_t> lastProgress{steadySeconds()};
        std::mutex idleLock;
        std::condition_variable_any idle;
        std::jthread watchdog([&](const std::stop_token& stop) {
            std::unique_lock held(idleLock);
            while (!stop.stop_requested()) {
                (void)idle.wait_for(held, stop, std::chrono::seconds(1), [] { return false; });
                if (!stop.stop_requested()
                    && steadySeconds() - lastProgress.load()
                           > shared_.options.uploadIdleTimeout.count()) {
                    context->TryCancel();
                    return;
                }
            }
        });
        Upload upload;
        // The import's permission is checked with the header, before a byte of data is held.
        const auto admit = [&](const v1::ImportHeader& header) -> Status {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            return statusOf(shared_.platform.controlPlane().datasets().admitUpload(caller.token,
                                                                                   header.name()));
        };
        auto received = receive(*reader, upload, admit, lastProgress);
        watchdog.request_stop();
        if (context->IsCancelled())
            return Internal::toStatus(Error(ErrorCode::ResourceExhausted,
                                            "The upload sent nothing for too long and was "
                                            "cancelled; import again."));
        if (!received.ok())
            return received;

        auto tokenizer = makeTokenizer(upload);
        if (!tokenizer)
            return Internal::toStatus(tokenizer.error());
        core::DatasetImportRequest request;
        request.name = upload.header.name();
        request.datasetsRoot = shared_.platform.datasetsRoot();
        if (auto options = importOptions(upload); options)
            request.options = std::move(options).value();
        else
            return Internal::toStatus(options.error());

        const std::lock_guard guard(shared_.lock);
        const Shared::OriginScope origin(shared_, shared_.originOf(*context));
        auto kek = shared_.platform.datasetsKek();
        if (!kek)
            return Internal::toStatus(kek.error());
        auto imported = shared_.platform.controlPlane().datasets().importDataset(
            caller.token, request, **tokenizer, **kek, shared_.platform.manifestsKey());
        if (!imported)
            return Internal::toStatus(imported.error());
        const core::DatasetInfo& info = imported->info;
        fillDataset(info, *reply->mutable_dataset());
        reply->set_parent(info.parent);
        reply->set_signer(info.signer);
        reply->set_report_json(imported->report.toJson());
        return Status::OK;
    }

private:
    static std::int64_t steadySeconds()
    {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    // Reads the stream into memory: a header first (which `admit` checks before anything else is
    // read), then each file's name and its bytes; `lastProgress` is set at every message.
    Status receive(grpc::ServerReader<v1::ImportChunk>& reader, Upload& upload,
                   const std::function<Status(const v1::ImportHeader&)>& admit,
                   std::atomic<std::int64_t>& lastProgress) const
    {
        v1::ImportChunk chunk;
        if (!reader.Read(&chunk) || !chunk.has_header())
            return invalidUpload("An import stream starts with its header; use a Sealtrain "
                                 "client of the same version.");
        lastProgress = steadySeconds();
        upload.header = chunk.header();
        if (Status admitted = admit(upload.header); !admitted.ok())
            return admitted;
        const std::uint64_t limit = shared_.options.maxImportBytes;
        if (upload.header.total_bytes() > limit)
            return Internal::toStatus(
                Error(ErrorCode::ResourceExhausted,
                      fmt::format("The upload ({} bytes) is over this control plane's limit of {} "
                                  "bytes; import it in parts, as versions, or ask the operator to "
                                  "raise --max-import-bytes.",
                                  upload.header.total_bytes(), limit)));
        std::uint64_t received = 0;
        for (const auto* part :
             {&upload.header.gpt2_vocab_json(), &upload.header.gpt2_merges_txt()}) {
            if (part->empty())
                continue;
            auto file = MemoryFile::create(part == &upload.header.gpt2_vocab_json() ? "vocab.json"
                                                                                    : "merges.txt");
            if (!file)
                return Internal::toStatus(file.error());
            if (auto written = file->append(*part); !written)
                return Internal::toStatus(written.error());
            (part == &upload.header.gpt2_vocab_json() ? upload.vocab : upload.merges)
                .emplace(std::move(file).value());
        }
        while (reader.Read(&chunk)) {
            lastProgress = steadySeconds();
            if (chunk.has_file()) {
                if (!dataset::isPlainInputName(chunk.file().name()))
                    return invalidUpload("An uploaded file's name must be a relative path of "
                                         "plain parts (no '..', no leading '/', no control "
                                         "characters); rename it and import again.");
                auto file = MemoryFile::create(chunk.file().name());
                if (!file)
                    return Internal::toStatus(file.error());
                upload.files.push_back(std::move(file).value());
            } else if (chunk.part_case() == v1::ImportChunk::kData) {
                if (upload.files.empty())
                    return invalidUpload("The upload sent bytes before naming their file; use a "
                                         "Sealtrain client of the same version.");
                received += chunk.data().size();
                if (received > limit)
                    return Internal::toStatus(Error(
                        ErrorCode::ResourceExhausted,
                        fmt::format("The upload is over this control plane's limit of {} bytes; "
                                    "import it in parts or ask the operator to raise "
                                    "--max-import-bytes.",
                                    limit)));
                if (auto written = upload.files.back().append(chunk.data()); !written)
                    return Internal::toStatus(written.error());
            } else {
                return invalidUpload("An import stream has one header; use a Sealtrain client "
                                     "of the same version.");
            }
        }
        if (upload.files.empty())
            return invalidUpload("The upload holds no files; name a file or a folder with text "
                                 "in it.");
        return Status::OK;
    }

    static Result<std::unique_ptr<dataset::Tokenizer>> makeTokenizer(const Upload& upload)
    {
        if (upload.vocab.has_value() != upload.merges.has_value())
            return Error(ErrorCode::InvalidArgument,
                         "A GPT-2 tokenizer needs both vocab.json and merges.txt; send both or "
                         "neither.");
        if (!upload.vocab)
            return std::unique_ptr<dataset::Tokenizer>(std::make_unique<dataset::ByteTokenizer>());
        auto bpe = dataset::Gpt2BpeTokenizer::load(upload.vocab->path(), upload.merges->path());
        if (!bpe)
            return bpe.error();
        return std::unique_ptr<dataset::Tokenizer>(std::move(bpe).value());
    }

    static Result<dataset::ImportOptions> importOptions(const Upload& upload)
    {
        const v1::ImportHeader& header = upload.header;
        auto format = dataset::parseInputFormat(header.format());
        if (!format)
            return format.error();
        dataset::ImportOptions options;
        for (const MemoryFile& file : upload.files) {
            options.inputs.push_back(file.path());
            options.inputNames.push_back(file.name());
        }
        options.format = *format;
        options.field = header.field();
        if (!header.classification().empty())
            options.classification = header.classification();
        if (header.policy() == "reject")
            options.policy = dataset::InvalidRecordPolicy::Reject;
        else if (header.policy().empty() || header.policy() == "skip")
            options.policy = dataset::InvalidRecordPolicy::Skip;
        else
            return Error(ErrorCode::InvalidArgument, "The record policy '" + header.policy()
                                                         + "' is unknown; use skip or "
                                                           "reject.");
        options.redactPii = header.redact_pii();
        if (header.max_record_bytes() != 0)
            options.maxRecordBytes = header.max_record_bytes();
        if (header.validation_basis_points() > 10000)
            return Error(ErrorCode::InvalidArgument,
                         "The validation share is out of 10000 basis points; give 0 to 10000.");
        options.validationBasisPoints = header.validation_basis_points();
        if (header.tokens_per_shard() != 0)
            options.tokensPerShard = header.tokens_per_shard();
        return options;
    }

    Shared& shared_;
};

class AuditService final : public v1::Audit::Service {
public:
    explicit AuditService(Shared& shared)
        : shared_(shared)
    {
    }

    Status ExportBundle(ServerContext* context, const v1::ExportBundleRequest* request,
                        grpc::ServerWriter<v1::BundleChunk>* writer) override
    {
        audit::ExportFilter filter;
        if (request->has_from_time_ns())
            filter.fromTimeNs = request->from_time_ns();
        if (request->has_to_time_ns())
            filter.toTimeNs = request->to_time_ns();
        filter.actor = request->actor();
        filter.action = request->action();
        filter.targetKind = request->target_kind();
        filter.targetId = request->target_id();
        Result<std::string> bundle = Error(ErrorCode::Internal, "No bundle.");
        {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            bundle = shared_.platform.controlPlane().auditQueries().exportBundle(
                callerOf(shared_, *context).token, filter);
        }
        if (!bundle)
            return Internal::toStatus(bundle.error());
        constexpr std::size_t kPiece = std::size_t{1} << 20U;
        v1::BundleChunk chunk;
        for (std::size_t at = 0; at < bundle->size(); at += kPiece) {
            chunk.set_data(bundle->substr(at, kPiece));
            if (!writer->Write(chunk))
                return {grpc::StatusCode::CANCELLED, "The client went away during the export."};
        }
        return Status::OK;
    }

private:
    Shared& shared_;
};

// What a caller may pass to `sealtrain-train sample` (docs/api.md, "Training").
constexpr std::string_view kSamplerOptions[] = {"--prompt", "--length", "--temperature", "--top-k",
                                                "--seed"};

// The caller's arguments when every option is one of `allowed` and has its value, as
// "--name=value" or "--name value"; InvalidArgument naming the first that is not.
Result<std::vector<std::string>>
callerArguments(const google::protobuf::RepeatedPtrField<std::string>& given,
                std::span<const std::string_view> allowed)
{
    std::vector<std::string> arguments;
    std::string pending;  // an option still waiting for its value
    for (const std::string& argument : given) {
        if (!pending.empty()) {
            arguments.push_back(argument);
            pending.clear();
            continue;
        }
        const std::string name = argument.substr(0, argument.find('='));
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end())
            return Error(ErrorCode::InvalidArgument,
                         fmt::format("'{}' is not an option a caller may give the trainer; "
                                     "the control plane sets paths, keys and the dataset itself "
                                     "(allowed: {}).",
                                     name.substr(0, 64), fmt::join(allowed, " ")));
        arguments.push_back(argument);
        if (argument.find('=') == std::string::npos)
            pending = name;
    }
    if (!pending.empty())
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("The option '{}' needs a value.", pending));
    return arguments;
}

// The keys of one training run, scoped to it: the data key of each shard of the dataset
// (unwrapped here; the datasets KEK never leaves), the checkpoints KEKs that can still unwrap,
// and the checkpoints signing key (docs/formats/trainer-keys.md).
Result<crypto::SecretBytes> scopedTrainerKeys(const core::DataDirectory& platform,
                                              const core::DatasetInfo& info)
{
    auto dataKeys = server_internal::datasetDataKeys(platform, info.id);
    if (!dataKeys)
        return dataKeys.error();
    const auto keks = platform.usableKeks(trainer::kCheckpointsKekId);
    if (keks.empty())
        return Error(ErrorCode::NotFound,
                     "The keyring has no usable 'checkpoints' KEK; its administrator adds one "
                     "with 'sealtrainctl keyring rotate checkpoints'.");
    return trainer::formatTrainerKeys(keks, &platform.checkpointsKey(), {}, *dataKeys);
}

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
        Status started = shared_.inGroup(*context, [&]() -> Status {
            auto running = shared_.platform.controlPlane().jobs().start(job.id);
            return running ? Status::OK : Internal::toStatus(running.error());
        });
        if (!started.ok())
            return started;
        std::vector<std::string> arguments = core::trainerArguments(*spec);
        arguments.insert(arguments.end(), {"--job-id", std::to_string(job.id)});
        const auto began = std::chrono::steady_clock::now();
        int exitCode = -1;
        Status ran = runAndStream(*info, arguments, writer, &exitCode);
        const double hours = std::chrono::duration<double, std::ratio<3600>>(
                                 std::chrono::steady_clock::now() - began)
                                 .count();
        const double gpuHours =
            hours * static_cast<double>(spec->resources.nodes * spec->resources.gpusPerNode);
        const bool succeeded = ran.ok() && exitCode == 0;
        Status finished = shared_.inGroup(*context, [&]() -> Status {
            auto ended = shared_.platform.controlPlane().jobs().finish(
                job.id, succeeded, gpuHours,
                succeeded ? std::string()
                          : fmt::format("the trainer stopped with exit status {}", exitCode));
            return ended ? Status::OK : Internal::toStatus(ended.error());
        });
        return ran.ok() ? finished : ran;
    }

private:
    // Runs the trainer on `info`'s dataset with the run's scoped keys and `arguments` (the
    // caller's hyper-parameters or a job's settings), streaming its metrics, then how it ended.
    Status runAndStream(const core::DatasetInfo& info, const std::vector<std::string>& arguments,
                        grpc::ServerWriter<v1::TrainEvent>* writer, int* exitCode = nullptr) const
    {
        auto keys = scopedTrainerKeys(shared_.platform, info);
        if (!keys)
            return Internal::toStatus(keys.error());
        const std::string runId = "run-" + toHex(crypto::randomBytes(8));
        const auto runFolder = shared_.platform.path() / "runs" / runId;
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
                (void)writer->Write(event);  // a client gone away does not stop the run
            });
        if (!status)
            return Internal::toStatus(status.error());
        if (exitCode != nullptr)
            *exitCode = *status;
        auto checkpoints = trainer::listCheckpoints(runFolder);
        v1::TrainFinished* finished = event.mutable_finished();
        finished->set_run_id(runId);
        finished->set_exit_code(*status);
        finished->set_checkpoints(checkpoints ? checkpoints->size() : 0);
        (void)writer->Write(event);
        return Status::OK;
    }

public:
    Status Sample(ServerContext* context, const v1::SampleRequest* request,
                  v1::SampleReply* reply) override
    {
        // The caller first (issue #27): an anonymous caller learns nothing of which runs or jobs
        // have checkpoints; core refuses and audits the unknown session.
        if (!shared_.isSignedIn(*context)) {
            auto refused = authorizeRead(*context, "", "sample");
            return Internal::toStatus(refused ? Error(ErrorCode::Unauthenticated, "Sign in first.")
                                              : refused.error());
        }
        auto given = callerArguments(request->sampler_arguments(), kSamplerOptions);
        if (!given)
            return Internal::toStatus(given.error());
        core::JobPolicy::Sampling limits;
        Status read = shared_.inGroup(*context, [&]() -> Status {
            limits = shared_.platform.controlPlane().jobs().policy().sampling;
            return Status::OK;
        });
        if (!read.ok())
            return read;
        // Within the policy's length and prompt caps (issue #27, item 11).
        auto call = core::samplerArguments(limits, std::move(given).value());
        if (!call)
            return Internal::toStatus(call.error());
        if (auto trainer = configuredTrainer(); !trainer.ok())
            return trainer;
        if (request->job() != 0)
            return sampleJob(*context, *request, *call, limits, *reply);
        if (!trainer::isValidRunId(request->run_id()))
            return Internal::toStatus(Error(ErrorCode::InvalidArgument,
                                            "Name a run by the id training printed, e.g. "
                                            "run-0123456789abcdef."));
        auto files = checkpointOf(request->run_id(), request->step());
        if (!files)
            return Internal::toStatus(files.error());
        // A model carries the classification of its data: sampling needs the same release as
        // reading the dataset, and only a checkpoint this platform signed counts.
        const crypto::PublicKey signer = shared_.platform.checkpointsKey().publicKey();
        auto lineage = trainer::verifyCheckpointSignature(*files, std::span(&signer, 1));
        if (!lineage)
            return Internal::toStatus(lineage.error());
        auto info = authorizeRead(*context, lineage->dataset, "sample");
        if (!info)
            return Internal::toStatus(info.error());
        const auto keks = shared_.platform.usableKeks(trainer::kCheckpointsKekId);
        auto keys = trainer::formatTrainerKeys(keks, nullptr, std::span(&signer, 1));
        if (!keys)
            return Internal::toStatus(keys.error());
        return runSampler(*context, std::move(keys).value(), files->sealed, *lineage, info->id,
                          *call, limits, files->step, *reply);
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
        auto signer = crypto::PublicKey::fromPem(signerPems[chosen->worker]);
        if (!signer)
            return Internal::toStatus(signer.error());
        const trainer::CheckpointFiles files = trainer::checkpointFiles(
            server_internal::jobFolder(shared_.platform, request.job()) / "checkpoints",
            static_cast<std::uint64_t>(chosen->step));
        auto lineage = trainer::verifyCheckpointSignature(files, std::span(&*signer, 1));
        if (!lineage)
            return Internal::toStatus(lineage.error());
        if (lineage->subject.sha256 != chosen->plaintextSha256)
            return Internal::toStatus(Error(
                ErrorCode::Integrity,
                fmt::format("The checkpoint of job {} at step {} is not the one the audit log "
                            "records; restore it from a backup.",
                            request.job(), chosen->step)));
        auto info = authorizeRead(context, lineage->dataset, "sample");
        if (!info)
            return Internal::toStatus(info.error());
        auto kek = server_internal::jobKey(shared_.platform, request.job());
        if (!kek)
            return Internal::toStatus(kek.error());
        const crypto::Kek* keks[] = {&*kek};
        auto keys = trainer::formatTrainerKeys(keks, nullptr, std::span(&*signer, 1));
        if (!keys)
            return Internal::toStatus(keys.error());
        return runSampler(context, std::move(keys).value(), files.sealed, *lineage, info->id, call,
                          limits, static_cast<std::uint64_t>(chosen->step), reply);
    }

    // Runs `sealtrain-train sample` on a checkpoint whose signature was verified (`lineage`) and
    // whose dataset's release was authorised, checking that it reads exactly that file. The
    // sampler is killed when the caller goes away or after the policy's max_seconds.
    Status runSampler(const ServerContext& context, crypto::SecretBytes keys,
                      const std::filesystem::path& sealed,
                      const trainer::CheckpointLineage& lineage, const std::string& datasetId,
                      const core::SamplerCall& call, const core::JobPolicy::Sampling& limits,
                      std::uint64_t step, v1::SampleReply& reply) const
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
        std::vector<std::string> samplerArguments{
            "--checkpoint",         sealed.string(),       "--expect-checkpoint-sha256",
            lineage.subject.sha256, "--expect-dataset-id", datasetId};
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
        reply.set_step(step);
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

    // The checkpoint `step` of the run (0: its newest).
    [[nodiscard]] Result<trainer::CheckpointFiles> checkpointOf(const std::string& runId,
                                                                std::uint64_t step) const
    {
        auto checkpoints = trainer::listCheckpoints(shared_.platform.path() / "runs" / runId);
        if (!checkpoints)
            return checkpoints.error();
        for (auto it = checkpoints->rbegin(); it != checkpoints->rend(); ++it) {
            if (step == 0 || it->step == step)
                return *it;
        }
        return Error(ErrorCode::NotFound,
                     step == 0
                         ? fmt::format("The run '{}' has no checkpoint; check the run id.", runId)
                         : fmt::format("The run '{}' has no checkpoint at step {}; leave "
                                       "out --step for its newest.",
                                       runId, step));
    }

    Shared& shared_;
};

class JobsService final : public v1::Jobs::Service {
public:
    explicit JobsService(Shared& shared)
        : shared_(shared)
    {
    }

    Status SubmitJob(ServerContext* context, const v1::SubmitJobRequest* request,
                     v1::JobReply* reply) override
    {
        const Result<core::JobSpec> spec = readSpec(*context, request->spec_text());
        return answer(*context, reply, [&](core::Jobs& jobs, const std::string& session) {
            return jobs.submit(session, spec);
        });
    }

    Status EditJob(ServerContext* context, const v1::EditJobRequest* request,
                   v1::JobReply* reply) override
    {
        const Result<core::JobSpec> spec = readSpec(*context, request->spec_text());
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
        return answer(*context, reply,
                      [&](core::Jobs& jobs, const std::string& session) -> Result<core::JobInfo> {
                          auto approved =
                              jobs.approve(session, request->id(), request->spec_sha256());
                          if (!approved)
                              return approved;
                          return shared_.platform.controlPlane().scheduler().enqueue(approved->id);
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

    Status ListJobs(ServerContext* context, const v1::ListJobsRequest* /*request*/,
                    v1::ListJobsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto jobs =
                shared_.platform.controlPlane().jobs().list(callerOf(shared_, *context).token);
            if (!jobs)
                return Internal::toStatus(jobs.error());
            for (const core::JobInfo& job : *jobs)
                fillJob(job, reply->add_jobs());
            return Status::OK;
        });
    }

    Status JobMetrics(ServerContext* context, const v1::JobMetricsRequest* request,
                      v1::JobMetricsReply* reply) override
    {
        // An anonymous caller is refused (and audited) by core before any field is looked at.
        const bool logs = request->what() == "logs";
        if (!logs && request->what() != "metrics" && !request->what().empty()
            && shared_.isSignedIn(*context))
            return Internal::toStatus(
                Error(ErrorCode::InvalidArgument, "Ask for a job's 'metrics' or its 'logs'."));
        return shared_.inGroup(*context, [&]() -> Status {
            auto lines = shared_.platform.controlPlane().scheduler().metrics(
                callerOf(shared_, *context).token, request->id(), logs ? 0 : request->from_step());
            if (!lines)
                return Internal::toStatus(lines.error());
            for (const core::MetricsLine& line : *lines) {
                if ((line.kind == "log") != logs)
                    continue;
                if (!logs) {
                    reply->add_lines(line.json);
                    continue;
                }
                // A log line is kept as a JSON string.
                const auto text = nlohmann::json::parse(line.json, nullptr, false);
                reply->add_lines(text.is_string() ? text.get<std::string>() : line.json);
            }
            return Status::OK;
        });
    }

private:
    // The caller first (issue #27): an anonymous caller's spec is never read, and a signed-in
    // caller's is parsed here, on this call's own thread, never on the thread that commits every
    // call; parseJobSpec bounds what it may cost. Core refuses a bad session before the spec.
    [[nodiscard]] Result<core::JobSpec> readSpec(const ServerContext& context,
                                                 const std::string& text)
    {
        if (!shared_.isSignedIn(context))
            return Error(ErrorCode::Unauthenticated, "Sign in first; the job spec was not read.");
        return core::parseJobSpec(text, shared_.options.jobSpecLimits);
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

void server_internal::fillJob(const core::JobInfo& job, sealtrain::v1::Job* out)
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
    out->set_created_unix(job.created);
    out->set_updated_unix(job.updated);
    out->set_worker(job.worker);
    out->set_attempt(job.attempt);
}

struct ControlServer::State {
    explicit State(core::DataDirectory& platform, const ServerOptions& options)
        : shared{platform, options, {}, {}, {}, {}, {}, 0, nullptr, {}, {}, {}, {}, 0, {}, 0}
        , platformService(shared)
        , sessionsService(shared)
        , usersService(shared)
        , accessService(shared)
        , datasetsService(shared)
        , auditService(shared)
        , trainingService(shared)
        , jobsService(shared)
        , workersService(server_internal::makeWorkersService(shared))
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
            // Anonymous refusals counted in a window that has passed are written now (issue #27).
            const Status flushed = shared.inOwnGroup([&]() -> Status {
                return statusOf(shared.platform.controlPlane().flushAnonymousRefusals(false));
            });
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
    SessionsService sessionsService;
    UsersService usersService;
    AccessService accessService;
    DatasetsService datasetsService;
    AuditService auditService;
    TrainingService trainingService;
    JobsService jobsService;
    std::unique_ptr<grpc::Service> workersService;
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
    builder.RegisterService(&state->auditService);
    builder.RegisterService(&state->trainingService);
    builder.RegisterService(&state->jobsService);
    builder.RegisterService(state->workersService.get());
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

void ControlServer::shutdown(std::chrono::milliseconds grace)
{
    // The reaper first: once the server stops, its owner signs the audit head on the same
    // database, outside any group, and a reaper's group then would collide with it.
    state_->reaper.request_stop();
    if (state_->reaper.joinable())
        state_->reaper.join();
    state_->server->Shutdown(std::chrono::system_clock::now() + grace);
    // No call runs now: every refusal still counted is written before the owner signs the head.
    const Status flushed = state_->shared.inOwnGroup([&]() -> Status {
        return statusOf(state_->shared.platform.controlPlane().flushAnonymousRefusals(true));
    });
    if (!flushed.ok())
        sealtrain::log::warn("control", "Could not record counted refusals at shutdown",
                             {{"error", flushed.error_message()}});
}

void ControlServer::wait()
{
    state_->server->Wait();
}

}  // namespace sealtrain::api
