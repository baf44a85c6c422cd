// The Users service (control.proto, "Users"): accounts, enrolment codes and resets, each a core
// Identity call audited there.
#include "server_shared.h"
#include "status.h"

#include "sealtrain/core/control_plane.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

class UsersService final : public v1::Users::Service {
public:
    explicit UsersService(Shared& shared)
        : shared_(shared)
    {
    }

    Status ListPendingResets(ServerContext* context, const v1::ListPendingResetsRequest*,
                             v1::ListPendingResetsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto resets = shared_.platform.controlPlane().identity().listPendingResets(
                callerOf(shared_, *context).token);
            if (!resets)
                return Internal::toStatus(resets.error());
            for (const core::PendingReset& reset : *resets) {
                v1::PendingReset* out = reply->add_resets();
                out->set_user(reset.user);
                out->set_requested_by(reset.requestedBy);
                out->set_requested_unix(reset.requested);
            }
            return Status::OK;
        });
    }

    Status ListUsers(ServerContext* context, const v1::ListUsersRequest* request,
                     v1::ListUsersReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto users = shared_.platform.controlPlane().identity().listUsers(
                callerOf(shared_, *context).token, keyedPage(*request));
            if (!users)
                return Internal::toStatus(users.error());
            for (const core::UserInfo& user : *users) {
                v1::User* out = reply->add_users();
                out->set_name(user.name);
                out->set_disabled(user.disabled);
                for (const std::string& grant : user.grants)
                    out->add_grants(grant);
            }
            reply->set_next_after(users->nextAfter);
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
            reply->set_code_expires_unix(created->codeExpires);
            return Status::OK;
        });
    }

    Status DisableUser(ServerContext* context, const v1::UserRequest* request,
                       v1::UserReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto disabled = shared_.platform.controlPlane().identity().disableUser(
                callerOf(shared_, *context).token, request->name());
            if (!disabled)
                return Internal::toStatus(disabled.error());
            reply->set_pending(disabled->pending);
            if (disabled->pending)
                return Status::OK;
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

    // Sessionless, like SignIn: the reset code is the credential. The new password is hashed
    // (Argon2id) only for a code that works, outside any group, at low priority and in one of the
    // sign-ins' password-check slots (issue #48); the redemption commits in a group, checking
    // the code again.
    Status CompleteReset(ServerContext* context, const v1::CompleteResetRequest* request,
                         v1::CreateUserReply* reply) override
    {
        core::ControlPlane& plane = shared_.platform.controlPlane();
        // Refused before the redemption's own entry (a malformed or weak password): audited as
        // an anonymous refusal, counted per peer and window (issue #54).
        const auto refuse = [&](const Error& why) -> Status {
            server_internal::wipeRequestField(request->reset_code());
            Status audited = shared_.inGroup(*context, [&]() -> Status {
                return statusOf(plane.recordBusyRefusal("user.complete_reset", "user", why));
            });
            return audited.ok() ? Internal::toStatus(why) : audited;
        };
        auto password = server_internal::takeSecret(request->password());
        if (!password)
            return refuse(password.error());
        const bool works = [&] {
            const std::lock_guard guard(shared_.lock);
            return plane.identity().resetCodeWorks(request->user(), request->reset_code());
        }();
        std::optional<core::NewCredentials> credentials;
        if (works) {
            auto slot = shared_.passwordCheck();
            if (!slot) {
                const Error busy(ErrorCode::ResourceExhausted,
                                 "The control plane is busy checking other passwords; try again "
                                 "in a few seconds.");
                Status audited = shared_.inGroup(*context, [&]() -> Status {
                    return statusOf(plane.recordBusyRefusal("user.complete_reset", "user", busy));
                });
                server_internal::wipeRequestField(request->reset_code());
                if (!audited.ok())
                    return audited;
                return Internal::toStatus(busy);
            }
            Result<core::NewCredentials> made =
                Error(ErrorCode::Internal, "The credentials were not made.");
            server_internal::atLowPriority(
                [&] { made = plane.identity().makeCredentials(request->user(), *password); });
            if (!made)
                return refuse(made.error());
            credentials = std::move(*made);
        }
        return shared_.inGroup(*context, [&]() -> Status {
            // A code that did not work a moment ago is refused here without a hash: the
            // redemption checks it first, and no credentials are stored without one.
            static const core::NewCredentials kNone{};
            auto enrolled = plane.identity().completeReset(request->user(), request->reset_code(),
                                                           credentials ? *credentials : kNone);
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
        reply.set_code_expires_unix(reset->codeExpires);
        if (reset->pending())
            return Status::OK;
        return statusOf(shared_.revokeCertificatesOf(reset->user));
    }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeUsersService(Shared& shared)
{
    return std::make_unique<UsersService>(shared);
}

}  // namespace sealtrain::api::server_internal
