// Roles, grants, break-glass and the separation-of-duties rules, each decision audited.
#include "sealtrain/core/access/access.h"

#include "store/audited_transaction.h"

#include "sealtrain/core/access/users.h"
#include "sealtrain/core/store/reason_codes.h"

#include <fmt/format.h>

#include <algorithm>
#include <bitset>
#include <optional>
#include <utility>

namespace sealtrain::core {

namespace {

using permission::DutyClass;
using Duties = std::bitset<permission::kDutyClassCount>;

std::size_t bit(DutyClass duty)
{
    return static_cast<std::size_t>(duty);
}

// The classes `permissions` declare (permissions.cpp); a permission this build does not know
// counts as every class, so that nothing unknown slips past a rule.
Duties dutiesOf(const std::vector<std::string>& permissions)
{
    Duties duties;
    for (const auto& p : permissions) {
        if (const auto duty = permission::dutyOf(p))
            duties.set(bit(*duty));
        else
            duties.set();
    }
    return duties;
}

// The first separated pair that `held` and `added` bring together: (what `held` has, what
// `added` brings).
std::optional<std::pair<DutyClass, DutyClass>> separatedPair(const Duties& held,
                                                             const Duties& added)
{
    for (const auto& [first, second] : permission::separatedDuties()) {
        if (held[bit(first)] && added[bit(second)])
            return std::pair{first, second};
        if (held[bit(second)] && added[bit(first)])
            return std::pair{second, first};
    }
    return std::nullopt;
}

// Whether `duties` hold a class that separation of duties keeps apart: a grant, a role's
// creation or a change giving it takes a second admin when there are two (issue #48).
bool givesSeparatedDuty(const Duties& duties)
{
    for (std::size_t duty = 0; duty < permission::kDutyClassCount; ++duty)
        if (duties[duty] && permission::isSeparated(static_cast<DutyClass>(duty)))
            return true;
    return false;
}

std::string className(DutyClass duty)
{
    return duty == DutyClass::Administration ? "identity administration"
                                             : std::string(permission::dutyClassName(duty));
}

// The separation-of-duties rules for one role's permissions.
Result<void> checkRoleMix(const std::vector<std::string>& permissions)
{
    for (const auto& p : permissions)
        if (!permission::isKnown(p))
            return Error(ErrorCode::InvalidArgument,
                         "The permission '" + p + "' is unknown; see 'role permissions'.");
    const Duties duties = dutiesOf(permissions);
    if (auto pair = separatedPair(duties, duties))
        return denied("A role may not combine " + className(pair->first) + " with "
                      + className(pair->second) + " permissions; make two roles.")
            .because(reason::kDutiesCombined);
    return success();
}

// The duties of the permissions that `from` (a FROM clause naming `p.permission`) selects.
Result<Duties> dutiesFromSql(const Database& database, std::string_view from, SqlValues arguments)
{
    std::vector<std::string> permissions;
    auto listed = database.query("SELECT DISTINCT p.permission " + std::string(from), arguments,
                                 [&](const Statement& row) { permissions.push_back(row.text(0)); });
    if (!listed)
        return listed.error();
    return dutiesOf(permissions);
}

// The duties `userId` holds through unexpired grants, in any project, break-glass included.
Result<Duties> dutiesHeld(const Database& database, std::int64_t userId, std::int64_t now)
{
    return dutiesFromSql(database,
                         "FROM grants g JOIN role_permissions p ON p.role = g.role "
                         "WHERE g.user_id = ? AND (g.expires = 0 OR g.expires > ?)",
                         {userId, now});
}

// The enabled users holding the admin role globally (not break-glass, not expiring), and in
// `isThisUser` whether `userId` is one of them.
Result<std::int64_t> countAdmins(const Database& database, std::int64_t userId,
                                 std::int64_t& isThisUser)
{
    std::int64_t admins = 0;
    SEALTRAIN_TRY(database.queryOne(
        "SELECT count(DISTINCT u.id), sum(u.id = ?) FROM users u JOIN grants g ON g.user_id = u.id "
        "WHERE g.role = ? AND g.project = '' AND g.break_glass = 0 AND g.expires = 0 "
        "AND u.disabled = 0",
        {userId, kAdminRole}, [&](const Statement& row) {
            admins = row.integer(0);
            isThisUser = row.integer(1);
        }));
    return admins;
}

}  // namespace

Access::Access(AuditedTransactions& gate, const ControlPlaneOptions& options)
    : gate_(gate)
    , database_(gate.database())
    , options_(options)
{
}

Result<std::int64_t> Access::adminCount() const
{
    std::int64_t ignored = 0;
    return countAdmins(database_, 0, ignored);
}

Result<bool> Access::administersIdentities(std::int64_t userId) const
{
    auto held = dutiesHeld(database_, userId, gate_.now());
    if (!held)
        return held.error();
    return held->test(bit(DutyClass::Administration));
}

Result<void> Access::requireSeparateDuties(std::int64_t id, const std::string& user,
                                           const std::string& role) const
{
    auto granted = dutiesFromSql(database_, "FROM role_permissions p WHERE p.role = ?", {role});
    if (!granted)
        return granted.error();
    auto held = dutiesHeld(database_, id, gate_.now());
    if (!held)
        return held.error();
    if (auto pair = separatedPair(*held, *granted))
        return denied("The user '" + user + "' holds " + className(pair->first)
                      + " permissions and may not also hold " + className(pair->second)
                      + " permissions; use a separate account.");
    return success();
}

namespace {

// A role's permissions as a pending request keeps them: sorted, once each, one per line.
std::string canonicalPermissions(std::vector<std::string> permissions)
{
    std::sort(permissions.begin(), permissions.end());
    permissions.erase(std::unique(permissions.begin(), permissions.end()), permissions.end());
    std::string joined;
    for (const auto& p : permissions)
        joined += (joined.empty() ? "" : "\n") + p;
    return joined;
}

struct RoleRequest {
    std::string permissions;
    std::int64_t requesterId = 0;
    std::string requester;
};

}  // namespace

Result<ChangeOutcome> Access::createRole(const std::string& session, const std::string& name,
                                         const std::vector<std::string>& permissions)
{
    ChangeOutcome outcome;
    auto performed = gate_.perform(
        session, {"role.create", permission::kRoleManage, {}, {"role", name}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            SEALTRAIN_TRY(requireValidName("role", name));
            SEALTRAIN_TRY(checkRoleMix(permissions));
            for (const auto& p : permissions)
                draft.details.push_back(audit::textDetail("permission", p));
            bool exists = false;
            SEALTRAIN_ASSIGN(exists,
                             database_.exists("SELECT 1 FROM roles WHERE name = ?", {name}));
            if (exists)
                return Error(ErrorCode::AlreadyExists,
                             "A role named '" + name + "' already exists; choose another name.");
            bool twoAdmins = false;
            SEALTRAIN_ASSIGN(twoAdmins, fourEyesApply());
            if (twoAdmins && givesSeparatedDuty(dutiesOf(permissions))) {
                const std::string wanted = canonicalPermissions(permissions);
                std::optional<RoleRequest> request;
                SEALTRAIN_TRY(database_.queryOne(
                    "SELECT p.permissions, r.id, r.name FROM pending_roles p JOIN users r ON "
                    "r.id = p.requested_by WHERE p.name = ?",
                    {name}, [&](const Statement& row) {
                        request = RoleRequest{row.text(0), row.integer(1), row.text(2)};
                    }));
                if (!request) {
                    SEALTRAIN_TRY(database_.run(
                        "INSERT INTO pending_roles (name, permissions, requested_by, created) "
                        "VALUES (?, ?, ?, ?)",
                        {name, wanted, caller.userId, gate_.now()}));
                    draft.action = "role.request";
                    draft.details.push_back(
                        audit::textDetail("pending", "waits for a second admin"));
                    outcome.pending = true;
                    return success();
                }
                if (request->permissions != wanted)
                    return Error(ErrorCode::FailedPrecondition,
                                 "A role named '" + name
                                     + "' with other permissions waits for a second admin; "
                                       "choose another name or delete that request first.");
                if (request->requesterId == caller.userId)
                    return denied("The role '" + name
                                  + "' waits for another admin's approval; ask one.")
                        .because(reason::kOwnApproval);
                SEALTRAIN_TRY(database_.run("DELETE FROM pending_roles WHERE name = ?", {name}));
                draft.details.push_back(audit::textDetail("requested_by", request->requester));
            }
            SEALTRAIN_TRY(database_.run("INSERT INTO roles (name) VALUES (?)", {name}));
            for (const auto& p : permissions)
                SEALTRAIN_TRY(database_.run(
                    "INSERT OR IGNORE INTO role_permissions (role, permission) VALUES (?, ?)",
                    {name, p}));
            return success();
        });
    if (!performed)
        return performed.error();
    return outcome;
}

Result<void> Access::deleteRole(const std::string& session, const std::string& name)
{
    return gate_.perform(
        session, {"role.delete", permission::kRoleManage, {}, {"role", name}},
        [&](const Caller&, audit::EntryDraft&) -> Result<void> {
            auto builtin =
                database_.exists("SELECT 1 FROM roles WHERE name = ? AND builtin = 1", {name});
            if (!builtin)
                return builtin.error();
            if (*builtin)
                return denied("The role '" + name + "' is a default role and can not be deleted.");
            auto inUse = database_.exists("SELECT 1 FROM grants WHERE role = ?", {name});
            if (!inUse)
                return inUse.error();
            if (*inUse)
                return Error(ErrorCode::InvalidArgument,
                             "The role '" + name + "' is still granted; revoke its grants first.");
            SEALTRAIN_TRY(database_.run("DELETE FROM pending_roles WHERE name = ?", {name}));
            const bool requested = database_.changes() > 0;
            SEALTRAIN_TRY(database_.run("DELETE FROM roles WHERE name = ?", {name}));
            if (database_.changes() == 0 && !requested)
                return Error(ErrorCode::NotFound,
                             "There is no role '" + name + "'; check the name.");
            return success();
        });
}

Result<KeyedPaged<RoleInfo>> Access::listRoles(const std::string& session, const KeyedPage& page)
{
    return gate_.performGroupedListing<RoleInfo>(
        session, {"role.list", permission::kRoleManage, {}, {"role", "*"}},
        "SELECT r.name, r.builtin, p.permission FROM roles r LEFT JOIN role_permissions p "
        "ON p.role = r.name ORDER BY r.builtin DESC, r.name, p.permission",
        page,
        [](RoleInfo& role, const Statement& row) { role.permissions.push_back(row.text(2)); });
}

Result<GrantOutcome> Access::grantRole(const std::string& session, const std::string& user,
                                       const std::string& role, const std::string& project)
{
    return grant(session, user, role, project, {}, std::chrono::seconds{0});
}

Result<void> Access::grantBreakGlass(const std::string& session, const std::string& user,
                                     const std::string& role, const std::string& project,
                                     const std::string& reason, std::chrono::seconds duration)
{
    auto granted = grant(session, user, role, project, reason, duration);
    if (!granted)
        return granted.error();
    return success();
}

std::optional<std::string> fourEyesWarning(const std::vector<std::string>& admins)
{
    if (admins.size() >= 2)
        return std::nullopt;
    return fmt::format("Four eyes is not guaranteed: this control plane has {} ({}), who can "
                       "make an account, grant it any role and act as it unseen by anyone "
                       "else; make a second admin.",
                       admins.empty() ? "no admin" : "a single admin",
                       admins.empty() ? "nobody" : admins.front());
}

Result<std::vector<std::string>> Access::adminNames() const
{
    return enabledAdminNames(database_);
}

Result<bool> Access::fourEyesApply() const
{
    auto admins = adminCount();
    if (!admins)
        return admins.error();
    return *admins >= 2;
}

Result<bool> Access::needsSecondAdmin(const std::string& role) const
{
    auto given = dutiesFromSql(database_, "FROM role_permissions p WHERE p.role = ?", {role});
    if (!given)
        return given.error();
    if (!givesSeparatedDuty(*given))
        return false;
    return fourEyesApply();
}

Result<bool> Access::removeAdmin(const Caller& caller, std::int64_t userId, const std::string& what,
                                 audit::EntryDraft& draft)
{
    std::int64_t isThisUser = 0;
    auto admins = countAdmins(database_, userId, isThisUser);
    if (!admins)
        return admins.error();
    if (isThisUser == 0)
        return true;
    if (*admins <= 1)
        return denied("Cannot " + what + ": it is the last admin; make another admin first.")
            .because(reason::kLastAdmin);
    if (*admins >= 3)
        return true;
    // Two admins: one of them alone would return the plane to single-admin mode (issue #48).
    std::optional<std::pair<std::int64_t, std::string>> request;
    SEALTRAIN_TRY(database_.queryOne(
        "SELECT r.id, r.name FROM pending_admin_changes p JOIN users r ON r.id = p.requested_by "
        "WHERE p.user_id = ? AND p.action = ?",
        {userId, draft.action},
        [&](const Statement& row) { request.emplace(row.integer(0), row.text(1)); }));
    if (!request) {
        SEALTRAIN_TRY(database_.run("INSERT INTO pending_admin_changes (user_id, action, "
                                    "requested_by, created) VALUES (?, ?, ?, ?)",
                                    {userId, draft.action, caller.userId, gate_.now()}));
        draft.action += "_request";
        draft.details.push_back(audit::textDetail("pending", "waits for a second admin"));
        return false;
    }
    if (request->first == caller.userId)
        return denied("You asked to " + what
                      + " yourself and it would leave one admin; another admin must agree.")
            .because(reason::kOwnApproval);
    SEALTRAIN_TRY(
        database_.run("DELETE FROM pending_admin_changes WHERE user_id = ? AND action = ?",
                      {userId, draft.action}));
    draft.details.push_back(audit::textDetail("requested_by", request->second));
    return true;
}

// Over 100 lines: one audited transaction whose checks (role, project, separation of
// duties, break-glass, second admin) must all run inside it, in the documented order.
Result<GrantOutcome> Access::grant(const std::string& session, const std::string& user,
                                   const std::string& role, const std::string& project,
                                   const std::string& reason, std::chrono::seconds duration)
{
    const bool breakGlass = duration.count() != 0 || !reason.empty();
    GrantOutcome outcome;
    auto performed = gate_.perform(
        session,
        {breakGlass ? "grant.break_glass" : "grant.create",
         permission::kGrantManage,
         project,
         {"user", user}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            if (!project.empty())
                SEALTRAIN_TRY(requireValidName("project", project));
            if (breakGlass
                && (reason.empty() || duration.count() <= 0 || duration > options_.maxBreakGlass))
                return Error(ErrorCode::InvalidArgument,
                             "A break-glass grant needs a reason and a duration of at most "
                                 + std::to_string(options_.maxBreakGlass.count())
                                 + " seconds; give both.");
            auto id = userIdByName(database_, user);
            if (!id)
                return id.error();
            auto known = database_.exists("SELECT 1 FROM roles WHERE name = ?", {role});
            if (!known)
                return known.error();
            if (!*known)
                return Error(ErrorCode::NotFound,
                             "There is no role '" + role + "'; check the name with 'role list'.");
            SEALTRAIN_TRY(requireSeparateDuties(*id, user, role));
            draft.details.push_back(audit::textDetail("role", role));
            // Whoever holds an account's open enrolment or reset code could redeem it and act
            // with the grant (issue #48): such a grant waits until the user set their own
            // credentials, and no emergency grant goes to such an account.
            bool unredeemed = false;
            SEALTRAIN_ASSIGN(unredeemed, database_.exists("SELECT 1 FROM users WHERE id = ? AND "
                                                          "reset_code_hash IS NOT NULL",
                                                          {*id}));
            if (breakGlass && unredeemed)
                return denied("The user '" + user
                              + "' has not set their own credentials yet; a break-glass grant "
                                "goes only to someone who has.");
            // Four eyes for separated duties (issues #27, #48): a break-glass grant is an
            // emergency of its own, time-limited and flagged, and is made by one admin.
            bool secondAdmin = false;
            SEALTRAIN_ASSIGN(secondAdmin, needsSecondAdmin(role));
            bool held = false;
            SEALTRAIN_ASSIGN(
                held, database_.exists("SELECT 1 FROM grants WHERE user_id = ? AND role = ? AND "
                                       "project = ?",
                                       {*id, role, project}));
            if (held)
                return Error(ErrorCode::AlreadyExists,
                             "The user '" + user + "' already holds the role '" + role
                                 + "' there; revoke it first to change it.");
            if (!breakGlass && (secondAdmin || unredeemed)) {
                std::optional<std::pair<std::int64_t, std::string>> request;
                SEALTRAIN_TRY(database_.queryOne(
                    "SELECT r.id, r.name FROM pending_grants p JOIN users r ON "
                    "r.id = p.requested_by WHERE p.user_id = ? AND p.role = ? AND p.project = ?",
                    {*id, role, project},
                    [&](const Statement& row) { request.emplace(row.integer(0), row.text(1)); }));
                if (caller.userId == *id)
                    return denied("Nobody may request or approve a grant of '" + role
                                  + "' to themselves; another admin must.")
                        .because(reason::kOwnApproval);
                if (!request) {
                    SEALTRAIN_TRY(database_.run(
                        "INSERT INTO pending_grants (user_id, role, project, requested_by, "
                        "created) VALUES (?, ?, ?, ?, ?)",
                        {*id, role, project, caller.userId, gate_.now()}));
                    draft.action = "grant.request";
                    draft.details.push_back(audit::textDetail(
                        "pending", unredeemed ? "waits for the user's own credentials"
                                              : "waits for a second admin"));
                    outcome.pending = true;
                    return success();
                }
                if (unredeemed)
                    return Error(ErrorCode::FailedPrecondition,
                                 "The grant of '" + role + "' to '" + user + "' waits until '"
                                     + user
                                     + "' has set their own credentials with their code; make "
                                       "it again after that.");
                if (secondAdmin && request->first == caller.userId)
                    return denied("The grant of '" + role + "' to '" + user
                                  + "' waits for another admin's approval; ask one.")
                        .because(reason::kOwnApproval);
                SEALTRAIN_TRY(database_.run(
                    "DELETE FROM pending_grants WHERE user_id = ? AND role = ? AND project = ?",
                    {*id, role, project}));
                draft.details.push_back(audit::textDetail("requested_by", request->second));
            }
            if (auto done = database_.run(
                    "INSERT INTO grants (user_id, role, project, expires, break_glass, reason) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    {*id, role, project,
                     breakGlass ? gate_.now() + duration.count() : std::int64_t{0},
                     std::int64_t{breakGlass ? 1 : 0}, reason});
                !done)
                return Error(ErrorCode::AlreadyExists,
                             "The user '" + user + "' already holds the role '" + role
                                 + "' there; revoke it first to change it.");
            if (breakGlass) {
                draft.details.push_back(audit::textDetail("break_glass", "true"));
                draft.details.push_back(
                    audit::textDetail("expires_in_s", std::to_string(duration.count())));
                draft.details.push_back(audit::textDetail("break_glass_reason", reason));
            }
            return success();
        });
    if (!performed)
        return performed.error();
    return outcome;
}

Result<GrantOutcome> Access::revokeRole(const std::string& session, const std::string& user,
                                        const std::string& role, const std::string& project)
{
    GrantOutcome outcome;
    auto performed = gate_.perform(
        session, {"grant.revoke", permission::kGrantManage, project, {"user", user}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            auto id = userIdByName(database_, user);
            if (!id)
                return id.error();
            draft.details.push_back(audit::textDetail("role", role));
            if (role == kAdminRole && project.empty()) {
                bool now = false;
                SEALTRAIN_ASSIGN(
                    now, removeAdmin(caller, *id, "revoke admin from '" + user + "'", draft));
                if (!now) {
                    outcome.pending = true;
                    return success();
                }
            }
            SEALTRAIN_TRY(database_.run(
                "DELETE FROM pending_grants WHERE user_id = ? AND role = ? AND project = ?",
                {*id, role, project}));
            const bool requested = database_.changes() > 0;
            SEALTRAIN_TRY(
                database_.run("DELETE FROM grants WHERE user_id = ? AND role = ? AND project = ?",
                              {*id, role, project}));
            if (database_.changes() == 0 && !requested)
                return Error(ErrorCode::NotFound, "The user '" + user + "' does not hold the role '"
                                                      + role + "' there; check with 'user list'.");
            return success();
        });
    if (!performed)
        return performed.error();
    return outcome;
}

}  // namespace sealtrain::core
