// The Access service (control.proto, "Access"): roles, grants (a second admin's for separated
// duties), break-glass, each a core Access call.
#include "server_shared.h"
#include "status.h"

#include "sealtrain/core/control_plane.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <memory>
#include <string>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

class AccessService final : public v1::Access::Service {
public:
    explicit AccessService(Shared& shared)
        : shared_(shared)
    {
    }

    // The catalogue is no secret, but only signed-in callers are answered (issue #27).
    Status ListPermissions(ServerContext* context, const v1::ListPermissionsRequest*,
                           v1::ListPermissionsReply* reply) override
    {
        {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            auto caller = shared_.platform.controlPlane().identity().whoAmI(
                callerOf(shared_, *context).token);
            if (!caller)
                return Internal::toStatus(caller.error());
        }
        for (const std::string_view permission : core::permission::all()) {
            v1::PermissionInfo* out = reply->add_permissions();
            out->set_name(std::string(permission));
            out->set_description(std::string(core::permission::description(permission)));
            if (const auto duty = core::permission::dutyOf(permission))
                out->set_duty(std::string(core::permission::dutyClassName(*duty)));
        }
        return Status::OK;
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
                      v1::GrantReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto revoked = shared_.platform.controlPlane().access().revokeRole(
                callerOf(shared_, *context).token, request->user(), request->role(),
                request->project());
            if (!revoked)
                return Internal::toStatus(revoked.error());
            reply->set_pending(revoked->pending);
            return Status::OK;
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

    Status ListRoles(ServerContext* context, const v1::ListRolesRequest* request,
                     v1::ListRolesReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto roles = shared_.platform.controlPlane().access().listRoles(
                callerOf(shared_, *context).token, keyedPage(*request));
            if (!roles)
                return Internal::toStatus(roles.error());
            for (const core::RoleInfo& role : *roles) {
                v1::Role* out = reply->add_roles();
                out->set_name(role.name);
                out->set_builtin(role.builtin);
                for (const std::string& permission : role.permissions)
                    out->add_permissions(permission);
            }
            reply->set_next_after(roles->nextAfter);
            return Status::OK;
        });
    }

    Status ListPendingRequests(ServerContext* context, const v1::ListPendingRequestsRequest*,
                               v1::ListPendingRequestsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto pending = shared_.platform.controlPlane().access().listPendingRequests(
                callerOf(shared_, *context).token);
            if (!pending)
                return Internal::toStatus(pending.error());
            for (const core::PendingRequest& request : *pending) {
                v1::PendingRequest* out = reply->add_requests();
                out->set_kind(request.kind);
                out->set_subject(request.subject);
                out->set_detail(request.detail);
                out->set_requested_by(request.requestedBy);
                out->set_created_unix(request.created);
                out->set_waits_for(request.waitsFor);
            }
            return Status::OK;
        });
    }

    Status CreateRole(ServerContext* context, const v1::CreateRoleRequest* request,
                      v1::RoleReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto created = shared_.platform.controlPlane().access().createRole(
                callerOf(shared_, *context).token, request->name(),
                {request->permissions().begin(), request->permissions().end()});
            if (!created)
                return Internal::toStatus(created.error());
            reply->set_pending(created->pending);
            return Status::OK;
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

}  // namespace

std::unique_ptr<grpc::Service> makeAccessService(Shared& shared)
{
    return std::make_unique<AccessService>(shared);
}

}  // namespace sealtrain::api::server_internal
