// The client library's handle on the Access service, ControlClient::access() (docs/api.md). Roles,
// grants and the permissions they give (role.manage). Every call returns a Result whose error is
// the server's one sentence, or the client's own for a transport failure; no gRPC type crosses this
// header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/api/client_views.h"
#include "sealtrain/base/result.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::v1 {
class GrantReply;
}  // namespace sealtrain::v1

namespace sealtrain::api {

struct RoleSummary {
    std::string name;
    bool builtin = false;
    std::vector<std::string> permissions;
};

struct GrantResult {
    bool pending = false;
};

// A request waiting for a second admin (Access.ListPendingRequests): the same call by another
// admin makes it.
struct PendingRequestView {
    std::string kind;     // "grant", "role", "admin-change" or "reset"
    std::string subject;  // the user, or the role's name
    std::string detail;  // a grant's role[@project], a role's permissions, an admin change's action
    std::string requestedBy;
    std::int64_t createdUnix = 0;
    std::string waitsFor;  // "a second admin" or "the user's own credentials"
};

class AccessClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // `project` empty: a global grant.
    // `pending`: the role carries a separated duty and waits for another admin's same call.
    [[nodiscard]] Result<GrantResult> grantRole(const std::string& user, const std::string& role,
                                                const std::string& project);
    // `pending`: taking admin from one of two admins waits for the other admin's same call.
    [[nodiscard]] Result<ChangeResult> revokeRole(const std::string& user, const std::string& role,
                                                  const std::string& project);
    // An emergency grant that expires after `duration`; every action under it is flagged.
    [[nodiscard]] Result<void> grantBreakGlass(const std::string& user, const std::string& role,
                                               const std::string& project,
                                               const std::string& reason,
                                               std::chrono::seconds duration);
    // Every role, page by page, built-in ones first.
    [[nodiscard]] Result<std::vector<RoleSummary>> listRoles();
    // The requests waiting for a second admin that the caller could confirm, oldest first.
    [[nodiscard]] Result<std::vector<PendingRequestView>> listPendingRequests();
    // `pending`: the role gives a separated duty and waits for another admin's same call.
    [[nodiscard]] Result<ChangeResult> createRole(const std::string& name,
                                                  const std::vector<std::string>& permissions);
    [[nodiscard]] Result<void> deleteRole(const std::string& name);
    // Every permission the control plane knows, with what it lets one do.
    [[nodiscard]] Result<std::vector<PermissionView>> listPermissions();

private:
    [[nodiscard]] Result<void> changeGrant(const std::string& user, const std::string& role,
                                           const std::string& project, bool grant,
                                           sealtrain::v1::GrantReply& reply);
};

}  // namespace sealtrain::api
