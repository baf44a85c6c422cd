// The Sessions service (control.proto, "Sessions"): sign-in with a password and a TOTP code on this
// thread, outside every group, a client certificate bound to the session, sign-out, resets
// completed by their user.
#include "server_shared.h"
#include "status.h"

#include "sealtrain/base/logging.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/crypto/certificate_authority.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <mutex>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

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
        // A CSR the CA would refuse (not P-256, altered) is refused before the password and the
        // TOTP code are spent on a sign-in that could never get a certificate (issue #29);
        // audited, counted like the other anonymous refusals.
        if (auto csr = crypto::checkCertificateRequest(request->csr_pem()); !csr) {
            Status audited = shared_.inGroup(*context, [&]() -> Status {
                return statusOf(plane.recordBusyRefusal("session.sign_in", "user", csr.error()));
            });
            if (!audited.ok())
                return audited;
            return Internal::toStatus(csr.error());
        }
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
            // Valid from a little before now (clock skew between machines) until exactly the
            // expiry the reply reports, not earlier.
            const auto now = crypto::CertificateClock::now();
            constexpr auto kSkew = std::chrono::minutes(5);
            issue.validFrom = now - kSkew;
            issue.validFor = shared_.options.sessionCertificateLifetime + kSkew;
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
                    (now + shared_.options.sessionCertificateLifetime).time_since_epoch())
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
        auto self = shared_.platform.controlPlane().identity().describeSelf(caller.token);
        if (!self)
            return Internal::toStatus(self.error());
        reply->set_user(self->session.user);
        reply->set_session_id(self->session.id);
        reply->set_idle_expires_unix(self->idleExpires);
        reply->set_absolute_expires_unix(self->absoluteExpires);
        reply->set_idle_timeout_seconds(self->idleSeconds);
        reply->set_break_glass(self->breakGlass);
        for (const auto& [project, permissions] : self->permissions) {
            v1::ScopedPermissions* scoped = reply->add_permissions();
            scoped->set_project(project);
            for (const std::string& permission : permissions)
                scoped->add_permissions(permission);
        }
        const auto binding = shared_.bindings.find(caller.serial);
        reply->set_expires_unix(binding == shared_.bindings.end() ? 0 : binding->second.expires);
        // Every user learns how far four eyes holds (issue #27, item 3).
        auto admins = shared_.platform.controlPlane().access().adminNames();
        if (!admins)
            return Internal::toStatus(admins.error());
        if (auto warning = core::fourEyesWarning(*admins))
            reply->add_warnings(*warning);
        return Status::OK;
    }

    Status SignOut(ServerContext* context, const v1::SignOutRequest*, v1::SignOutReply*) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            const Caller caller = callerOf(shared_, *context);
            auto ended = shared_.platform.controlPlane().identity().signOut(caller.token);
            if (!ended)
                return Internal::toStatus(ended.error());
            auto revoked = shared_.revoke({caller.serial});
            shared_.bindings.erase(caller.serial);
            if (!revoked)
                return Internal::toStatus(revoked.error());
            return Status::OK;
        });
    }

    Status ListSessions(ServerContext* context, const v1::ListSessionsRequest* request,
                        v1::ListSessionsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto sessions = shared_.platform.controlPlane().identity().listSessions(
                callerOf(shared_, *context).token, listPage(request->before(), request->limit()));
            if (!sessions)
                return Internal::toStatus(sessions.error());
            reply->set_next_before(sessions->nextBefore);
            for (const core::SessionInfo& session : sessions->items) {
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

    Status ChangePassword(ServerContext* context, const v1::ChangePasswordRequest* request,
                          v1::ChangePasswordReply* reply) override
    {
        core::ControlPlane& plane = shared_.platform.controlPlane();
        // The caller first (issue #27): an anonymous caller's passwords are never read or
        // checked; core refuses and audits the session.
        if (!shared_.isSignedIn(*context))
            return shared_.inGroup(*context, [&]() -> Status {
                return statusOf(plane.identity().finishPasswordChange(
                    plane.identity().startPasswordChange(callerOf(shared_, *context).token)));
            });
        auto current = server_internal::takeSecret(request->current_password());
        auto next = server_internal::takeSecret(request->new_password());
        if (!current)
            return Internal::toStatus(current.error());
        if (!next)
            return Internal::toStatus(next.error());
        const Caller caller = callerOf(shared_, *context);
        core::PasswordChange change = [&] {
            const std::lock_guard guard(shared_.lock);
            return plane.identity().startPasswordChange(caller.token);
        }();
        // Two Argon2id computations.
        if (auto busy = checkOutsideGroup([&] { change.check(*current, *next); }); !busy.ok())
            return busy;
        return shared_.inGroup(*context, [&]() -> Status {
            auto ended = plane.identity().finishPasswordChange(change);
            if (!ended) {
                if (ended.error().code() == ErrorCode::Unauthenticated)
                    endCallerCertificate(caller);  // the wrong password ended this session
                return Internal::toStatus(ended.error());
            }
            if (auto status = revokeOtherCertificates(caller); !status.ok())
                return status;
            reply->set_sessions_ended(*ended);
            return Status::OK;
        });
    }

    Status StartTotpChange(ServerContext* context, const v1::StartTotpChangeRequest* request,
                           v1::StartTotpChangeReply* reply) override
    {
        core::ControlPlane& plane = shared_.platform.controlPlane();
        // The caller first: an anonymous caller's password is never read or checked.
        if (!shared_.isSignedIn(*context))
            return shared_.inGroup(*context, [&]() -> Status {
                return statusOf(plane.identity().finishTotpStart(
                    plane.identity().startTotpChange(callerOf(shared_, *context).token), {}));
            });
        auto password = server_internal::takeSecret(request->password());
        if (!password)
            return Internal::toStatus(password.error());
        const Caller caller = callerOf(shared_, *context);
        core::TotpChange change = [&] {
            const std::lock_guard guard(shared_.lock);
            return plane.identity().startTotpChange(caller.token);
        }();
        if (auto busy = checkOutsideGroup([&] { change.check(*password); }); !busy.ok())
            return busy;
        return shared_.inGroup(*context, [&]() -> Status {
            auto pending = plane.identity().finishTotpStart(change, request->totp_code());
            if (!pending) {
                if (pending.error().code() == ErrorCode::Unauthenticated)
                    endCallerCertificate(caller);
                return Internal::toStatus(pending.error());
            }
            reply->set_otpauth_uri(pending->enrollment.otpauthUri);
            reply->set_expires_unix(pending->expires);
            return Status::OK;
        });
    }

    Status ConfirmTotpChange(ServerContext* context, const v1::ConfirmTotpChangeRequest* request,
                             v1::ConfirmTotpChangeReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            const Caller caller = callerOf(shared_, *context);
            auto ended = shared_.platform.controlPlane().identity().confirmTotpChange(
                caller.token, request->totp_code());
            if (!ended)
                return Internal::toStatus(ended.error());
            if (auto status = revokeOtherCertificates(caller); !status.ok())
                return status;
            reply->set_sessions_ended(*ended);
            return Status::OK;
        });
    }

private:
    // A signed-in user's own password checked (`check`, Argon2id) outside any group, at low
    // priority, in a slot of the sign-ins' bound (issue #27).
    template <typename Check>
    Status checkOutsideGroup(const Check& check)
    {
        auto slot = shared_.passwordCheck();
        if (!slot)
            return Internal::toStatus(Error(ErrorCode::ResourceExhausted,
                                            "The control plane is busy checking passwords; try "
                                            "again in a few seconds."));
        server_internal::atLowPriority(check);
        return Status::OK;
    }

    // A wrong current factor ended this session: its certificate goes too.
    void endCallerCertificate(const Caller& caller)
    {
        (void)shared_.revoke({caller.serial});
        shared_.bindings.erase(caller.serial);
    }

    // The user's other sessions ended: their certificates go too, the caller's stays.
    Status revokeOtherCertificates(const Caller& caller)
    {
        const auto bound = shared_.bindings.find(caller.serial);
        const std::string user =
            bound == shared_.bindings.end() ? std::string() : bound->second.user;
        auto certificates = shared_.revokeCertificatesOf(user, caller.serial);
        if (!certificates)
            return Internal::toStatus(certificates.error());
        return Status::OK;
    }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeSessionsService(Shared& shared)
{
    return std::make_unique<SessionsService>(shared);
}

}  // namespace sealtrain::api::server_internal
