// Access: who may do what (docs/operations/access-control.md). Custom roles from the permission
// catalogue (core/access/permissions.h), grants of a role to a user globally or for one project,
// time-limited break-glass grants, and the separation-of-duties rules: the pairs of duty classes
// (core/access/permissions.h) that no role combines and no user holds together, four eyes derived
// from the same classes whenever there are two admins, and the last admin stays. Every call goes
// through the audited transaction (docs/operations/access-control.md).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/control_plane_options.h"
#include "sealtrain/core/store/list_page.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::audit {
struct EntryDraft;
}  // namespace sealtrain::audit

namespace sealtrain::core {

class AuditedTransactions;
class Database;
struct Caller;

struct RoleInfo {
    std::string name;
    bool builtin = false;
    std::vector<std::string> permissions;
};

// Roles are listed built-in ones first, each part by name (store/list_page.h).
[[nodiscard]] inline std::string pageKey(const RoleInfo& role)
{
    return (role.builtin ? "0" : "1") + role.name;
}

// The plain warning a single admin deserves (issue #27): with one admin, one person can make an
// account, grant it any role and act as it, so four eyes is not guaranteed; nullopt with two or
// more. Said by `doctor`, by every export of the audit log, and by the GUI's overview.
[[nodiscard]] std::optional<std::string> fourEyesWarning(const std::vector<std::string>& admins);

// A change recorded as a request that waits (issue #51, docs/operations/access-control.md,
// "Requests waiting"): the same call by another admin makes it.
struct PendingRequest {
    std::string kind;     // "grant", "role", "admin-change" or "reset"
    std::string subject;  // the user, or the role's name
    // A grant's role (and "@project"), a role's permissions (comma-separated), an admin
    // change's action (user.disable, role.revoke), nothing for a reset.
    std::string detail;
    std::string requestedBy;
    std::int64_t created = 0;  // Unix seconds
    // "a second admin", or, for a grant to a user who has not set their credentials yet,
    // "the user's own credentials".
    std::string waitsFor;
};

// What a change that may wait for a second admin did (issue #48).
struct ChangeOutcome {
    bool pending = false;  // recorded as a request; the same call by another admin makes it
};
using GrantOutcome = ChangeOutcome;

class Access final {
public:
    // `gate` and `options` must outlive this object.
    Access(AuditedTransactions& gate, const ControlPlaneOptions& options);

    // A custom role; a role may not combine two separated duties (see the class comment). With
    // two or more admins, a role that gives a separated duty is made by two: the first call
    // records the request (role.request, `pending`), the same role with the same permissions by
    // another admin makes it (role.create, naming who requested it).
    [[nodiscard]] Result<ChangeOutcome> createRole(const std::string& session,
                                                   const std::string& name,
                                                   const std::vector<std::string>& permissions);
    // Deletes a custom role nobody holds, or withdraws a request for one.
    [[nodiscard]] Result<void> deleteRole(const std::string& session, const std::string& name);
    // Every role with its permissions (role.manage).
    // One page of the roles, built-in ones first, by name (role.manage; audited as role.list
    // with detail `after`).
    [[nodiscard]] Result<KeyedPaged<RoleInfo>> listRoles(const std::string& session,
                                                         const KeyedPage& page = {});

    // Every request waiting for a second admin that the caller could confirm: grants with
    // grant.manage, roles with role.manage, admin changes and resets with user.manage; oldest
    // first. Refused (and audited) for a caller who holds none of the three; audited as
    // access.list_pending (core/access/pending.cpp).
    [[nodiscard]] Result<std::vector<PendingRequest>>
    listPendingRequests(const std::string& session);

    // `project` empty: global. A role that gives a separated duty class (every class the
    // separation table names: core/access/permissions.h) is granted by two admins whenever there
    // are two or more: the first call records the request (grant.request, `pending` true), the same
    // grant by another admin makes it (grant.create, naming who requested it). The requester and
    // the grantee never approve it. A grant to an account whose enrolment or reset code is still
    // open is only ever a request, made once the user has set their own credentials (by another
    // admin when there are two).
    [[nodiscard]] Result<GrantOutcome> grantRole(const std::string& session,
                                                 const std::string& user, const std::string& role,
                                                 const std::string& project);
    // Revoking a global admin grant that would leave fewer than two admins waits for another
    // admin (grant.revoke_request), as removeAdmin says.
    [[nodiscard]] Result<GrantOutcome> revokeRole(const std::string& session,
                                                  const std::string& user, const std::string& role,
                                                  const std::string& project);
    // A time-limited grant for an emergency: needs a reason, expires by itself, and every audit
    // entry its holder makes while it lasts is flagged `break_glass`. Never to an account whose
    // enrolment or reset code is still open.
    [[nodiscard]] Result<void> grantBreakGlass(const std::string& session, const std::string& user,
                                               const std::string& role, const std::string& project,
                                               const std::string& reason,
                                               std::chrono::seconds duration);

    // The enabled users holding the admin role globally (break-glass grants do not count), by
    // name. Reads only, for any caller that opened the data directory (doctor, exports).
    [[nodiscard]] Result<std::vector<std::string>> adminNames() const;

    // Whether granting `role` now needs a second admin: it gives a separated duty class and two
    // or more admins exist.
    [[nodiscard]] Result<bool> needsSecondAdmin(const std::string& role) const;

    // For a change inside another service's audited transaction (disabling a user, revoking a
    // global admin grant) that takes `userId` out of the admins: nothing to decide when they are
    // none (true); refused when they are the last (break-glass grants do not count: they expire;
    // `what` completes "Cannot …"); with exactly two, so that fewer than two would remain, the
    // first call records a request (the entry's action becomes ACTION_request, `pending`) and
    // returns false, and the same call by another admin (the user concerned too: their consent)
    // returns true, naming who requested it. True with three or more.
    [[nodiscard]] Result<bool> removeAdmin(const Caller& caller, std::int64_t userId,
                                           const std::string& what, audit::EntryDraft& draft);

    // How many enabled users hold the admin role globally (break-glass grants do not count).
    // With two or more, a reset waits for a second admin; with one, four eyes is not guaranteed
    // and the platform says so (docs/operations/access-control.md).
    [[nodiscard]] Result<std::int64_t> adminCount() const;

    // Whether `userId` holds any identity-administration permission (user.*, role.*, grant.*,
    // session.*) through an unexpired grant: such a user's reset needs a second admin.
    [[nodiscard]] Result<bool> administersIdentities(std::int64_t userId) const;

private:
    // Two or more enabled admins: changes that give a separated duty take two of them.
    [[nodiscard]] Result<bool> fourEyesApply() const;
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
