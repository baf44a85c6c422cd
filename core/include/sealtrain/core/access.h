// Access: who may do what (docs/operations/access-control.md). Custom roles from the permission
// catalogue (core/permissions.h), grants of a role to a user globally or for one project,
// time-limited break-glass grants, and the separation-of-duties rules: one table of duties that
// no role combines and no user holds together (identity administration apart from data, jobs,
// audit and infrastructure; infrastructure apart from data and jobs), and the last admin stays.
// Every call goes through the audited transaction (docs/operations/access-control.md).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/control_plane_options.h"
#include "sealtrain/core/list_page.h"
#include "sealtrain/core/permissions.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;
class Database;

struct RoleInfo {
    std::string name;
    bool builtin = false;
    std::vector<std::string> permissions;
};

// Roles are listed built-in ones first, each part by name (list_page.h).
[[nodiscard]] inline std::string pageKey(const RoleInfo& role)
{
    return (role.builtin ? "0" : "1") + role.name;
}

// The plain warning a single admin deserves (issue #27): with one admin, one person can make an
// account, grant it any role and act as it, so four eyes is not guaranteed; nullopt with two or
// more. Said by `doctor`, by every export of the audit log, and by the GUI's overview.
[[nodiscard]] std::optional<std::string> fourEyesWarning(const std::vector<std::string>& admins);

struct GrantOutcome {
    bool pending = false;  // the grant waits for a second admin
};

class Access final {
public:
    // `gate` and `options` must outlive this object.
    Access(AuditedTransactions& gate, const ControlPlaneOptions& options);

    // A custom role; a role may not combine two separated duties (see the class comment).
    [[nodiscard]] Result<void> createRole(const std::string& session, const std::string& name,
                                          const std::vector<std::string>& permissions);
    [[nodiscard]] Result<void> deleteRole(const std::string& session, const std::string& name);
    // Every role with its permissions (role.manage).
    // One page of the roles, built-in ones first, by name (role.manage; audited as role.list
    // with detail `after`).
    [[nodiscard]] Result<KeyedPaged<RoleInfo>> listRoles(const std::string& session,
                                                         const KeyedPage& page = {});

    // `project` empty: global. A role that carries a separated duty (identity administration,
    // dataset import or grants, job approval, audit: admin, steward, approver, auditor) is
    // granted by two admins whenever there are two or more: the first call records the request
    // (grant.request, `pending` true), the same grant by another admin makes it (grant.create,
    // naming who requested it). The requester and the grantee never approve it.
    [[nodiscard]] Result<GrantOutcome> grantRole(const std::string& session,
                                                 const std::string& user, const std::string& role,
                                                 const std::string& project);
    [[nodiscard]] Result<void> revokeRole(const std::string& session, const std::string& user,
                                          const std::string& role, const std::string& project);
    // A time-limited grant for an emergency: needs a reason, expires by itself, and every audit
    // entry its holder makes while it lasts is flagged `break_glass`.
    [[nodiscard]] Result<void> grantBreakGlass(const std::string& session, const std::string& user,
                                               const std::string& role, const std::string& project,
                                               const std::string& reason,
                                               std::chrono::seconds duration);

    // The enabled users holding the admin role globally (break-glass grants do not count), by
    // name. Reads only, for any caller that opened the data directory (doctor, exports).
    [[nodiscard]] Result<std::vector<std::string>> adminNames() const;

    // Whether granting `role` now needs a second admin: it carries a separated duty and two or
    // more admins exist.
    [[nodiscard]] Result<bool> needsSecondAdmin(const std::string& role) const;

    // For a change inside another service's audited transaction (disabling a user): refuses
    // when `userId` is the only enabled user holding the admin role globally (break-glass grants
    // do not count: they expire). `what` completes "Cannot …".
    [[nodiscard]] Result<void> requireAnotherAdmin(std::int64_t userId,
                                                   const std::string& what) const;

    // How many enabled users hold the admin role globally (break-glass grants do not count).
    // With two or more, a reset waits for a second admin; with one, four eyes is not guaranteed
    // and the platform says so (docs/operations/access-control.md).
    [[nodiscard]] Result<std::int64_t> adminCount() const;

    // Whether `userId` holds any identity-administration permission (user.*, role.*, grant.*,
    // session.*) through an unexpired grant: such a user's reset needs a second admin.
    [[nodiscard]] Result<bool> administersIdentities(std::int64_t userId) const;

private:
    // grantRole and grantBreakGlass (a break-glass grant when `reason` or `duration` is given).
    [[nodiscard]] Result<GrantOutcome> grant(const std::string& session, const std::string& user,
                                             const std::string& role, const std::string& project,
                                             const std::string& reason,
                                             std::chrono::seconds duration);
    // The grant-time half of the separation-of-duties table (access.cpp): refuses a grant of
    // `role` that would give `user` two separated duties, whatever the project, however the grant
    // is made (break-glass too) and whoever makes it (the user too).
    [[nodiscard]] Result<void> requireSeparateDuties(std::int64_t userId, const std::string& user,
                                                     const std::string& role) const;

    AuditedTransactions& gate_;
    Database& database_;
    const ControlPlaneOptions& options_;
};

}  // namespace sealtrain::core
