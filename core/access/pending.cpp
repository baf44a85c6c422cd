// The requests waiting for a second admin (Access::listPendingRequests; access.h): the four
// tables a two-admin change is recorded in until the other admin makes the same call.
#include "sealtrain/core/access/access.h"

#include "sealtrain/core/store/database.h"
#include "store/audited_transaction.h"

#include <algorithm>

namespace sealtrain::core {
namespace {

constexpr const char* kSecondAdmin = "a second admin";

// The newline-separated permissions of a pending role, comma-separated for people.
std::string permissionsText(std::string permissions)
{
    std::replace(permissions.begin(), permissions.end(), '\n', ',');
    while (!permissions.empty() && permissions.back() == ',')
        permissions.pop_back();
    return permissions;
}

}  // namespace

Result<std::vector<PendingRequest>> Access::listPendingRequests(const std::string& session)
{
    return gate_.performReturning(
        session, {"access.list_pending", {}, {}, {"access", "*"}},
        [&](const Caller& caller, audit::EntryDraft&) -> Result<std::vector<PendingRequest>> {
            const bool grants = gate_.holds(caller, permission::kGrantManage, "");
            const bool roles = gate_.holds(caller, permission::kRoleManage, "");
            const bool users = gate_.holds(caller, permission::kUserManage, "");
            if (!grants && !roles && !users)
                return denied("Only admins who manage users, roles or grants see the requests "
                              "waiting for a second admin.");
            std::vector<PendingRequest> pending;
            if (grants)
                SEALTRAIN_TRY(database_.query(
                    "SELECT u.name, p.role, p.project, r.name, p.created, "
                    "u.reset_code_hash IS NOT NULL FROM pending_grants p JOIN users u ON "
                    "u.id = p.user_id JOIN users r ON r.id = p.requested_by ORDER BY p.created "
                    "LIMIT 1000",
                    {}, [&](const Statement& row) {
                        const std::string project = row.text(2);
                        pending.push_back(
                            {"grant", row.text(0),
                             row.text(1) + (project.empty() ? "" : "@" + project), row.text(3),
                             row.integer(4),
                             row.integer(5) != 0 ? "the user's own credentials" : kSecondAdmin});
                    }));
            if (roles)
                SEALTRAIN_TRY(database_.query(
                    "SELECT p.name, p.permissions, r.name, p.created FROM pending_roles p JOIN "
                    "users r ON r.id = p.requested_by ORDER BY p.created LIMIT 1000",
                    {}, [&](const Statement& row) {
                        pending.push_back({"role", row.text(0), permissionsText(row.text(1)),
                                           row.text(2), row.integer(3), kSecondAdmin});
                    }));
            if (users || grants)  // disabling an admin needs user.manage, revoking grant.manage
                SEALTRAIN_TRY(database_.query(
                    "SELECT u.name, p.action, r.name, p.created FROM pending_admin_changes p "
                    "JOIN users u ON u.id = p.user_id JOIN users r ON r.id = p.requested_by ORDER "
                    "BY "
                    "p.created LIMIT 1000",
                    {}, [&](const Statement& row) {
                        const std::string action = row.text(1);
                        if (action == "grant.revoke" ? grants : users)
                            pending.push_back({"admin-change", row.text(0), action, row.text(2),
                                               row.integer(3), kSecondAdmin});
                    }));
            if (users)
                SEALTRAIN_TRY(database_.query(
                    "SELECT u.name, r.name, p.created FROM pending_resets p JOIN users u ON "
                    "u.id = p.user_id JOIN users r ON r.id = p.requested_by ORDER BY p.created "
                    "LIMIT 1000",
                    {}, [&](const Statement& row) {
                        pending.push_back(
                            {"reset", row.text(0), "", row.text(1), row.integer(2), kSecondAdmin});
                    }));
            std::stable_sort(pending.begin(), pending.end(),
                             [](const PendingRequest& a, const PendingRequest& b) {
                                 return a.created < b.created;
                             });
            return pending;
        });
}

}  // namespace sealtrain::core
