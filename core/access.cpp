// Roles, grants, break-glass and the separation-of-duties rules, each decision audited.
#include "sealtrain/core/access.h"

#include "audited_transaction.h"

#include "sealtrain/core/identity.h"

#include <fmt/format.h>

#include <array>
#include <bitset>
#include <optional>
#include <utility>

namespace sealtrain::core {

namespace {

// The duties that separation of duties keeps apart, each a set of permission prefixes.
enum Duty : std::size_t { kAdministration, kInfrastructure, kDataAndJobs, kAudit, kDutyCount };

struct DutyClass {
    std::string_view name;  // as refusals say it
    std::vector<std::string_view> prefixes;
};

// Indexed by Duty.
const std::array<DutyClass, kDutyCount>& dutyClasses()
{
    static const std::array<DutyClass, kDutyCount> kClasses{{
        {"identity administration (user, role, grant, session, keyring)",
         {"user.", "role.", "grant.", "session.", "keyring."}},
        {"infrastructure (worker)", {"worker."}},
        {"data or job (dataset, job, model)", {"dataset.", "job.", "model."}},
        {"audit", {"audit."}},
    }};
    return kClasses;
}

// The one rule table of separation of duties: no role combines, and no user holds together, the
// two duties of a pair, however the grants are made (break-glass too) and by whomever (the
// holder too). Approving jobs is a job permission.
constexpr std::array<std::pair<Duty, Duty>, 4> kSeparatedDuties{{
    {kAdministration, kDataAndJobs},
    {kAdministration, kAudit},
    {kAdministration, kInfrastructure},
    {kInfrastructure, kDataAndJobs},
}};

using Duties = std::bitset<kDutyCount>;

Duties dutiesOf(const std::vector<std::string>& permissions)
{
    Duties duties;
    for (std::size_t duty = 0; duty < kDutyCount; ++duty)
        for (const auto prefix : dutyClasses()[duty].prefixes)
            for (const auto& p : permissions)
                duties[duty] = duties[duty] || p.starts_with(prefix);
    return duties;
}

// The first separated pair that `held` and `added` bring together: (what `held` has, what
// `added` brings).
std::optional<std::pair<Duty, Duty>> separatedPair(const Duties& held, const Duties& added)
{
    for (const auto& [first, second] : kSeparatedDuties) {
        if (held[first] && added[second])
            return std::pair{first, second};
        if (held[second] && added[first])
            return std::pair{second, first};
    }
    return std::nullopt;
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
        return denied("A role may not combine " + std::string(dutyClasses()[pair->first].name)
                      + " with " + std::string(dutyClasses()[pair->second].name)
                      + " permissions; make two roles.");
    return success();
}

// One column per duty, in Duty order: how many of the rows' permissions (`p.permission`) fall in
// it.
std::string dutySums()
{
    std::string sums;
    for (const auto& duty : dutyClasses()) {
        std::string any;
        for (const auto prefix : duty.prefixes)
            any += (any.empty() ? "" : " OR ") + std::string("p.permission LIKE '")
                   + std::string(prefix) + "%'";
        sums += (sums.empty() ? "" : ", ") + std::string("sum(") + any + ")";
    }
    return sums;
}

Result<Duties> dutiesFromSql(const Database& database, std::string_view from, SqlValues arguments)
{
    Duties duties;
    auto row = database.queryOne("SELECT " + dutySums() + " " + std::string(from), arguments,
                                 [&](const Statement& sums) {
                                     for (std::size_t duty = 0; duty < kDutyCount; ++duty)
                                         duties[duty] = sums.integer(static_cast<int>(duty)) > 0;
                                 });
    if (!row)
        return row.error();
    return duties;
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

Result<void> Access::requireAnotherAdmin(std::int64_t id, const std::string& what) const
{
    std::int64_t isThisUser = 0;
    auto admins = countAdmins(database_, id, isThisUser);
    if (!admins)
        return admins.error();
    if (isThisUser > 0 && *admins <= 1)
        return denied("Cannot " + what + ": it is the last admin; make another admin first.");
    return success();
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
    return held->test(kAdministration);
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
        return denied(
            "The user '" + user + "' holds " + std::string(dutyClasses()[pair->first].name)
            + " permissions and may not also hold " + std::string(dutyClasses()[pair->second].name)
            + " permissions; use a separate account.");
    return success();
}

Result<void> Access::createRole(const std::string& session, const std::string& name,
                                const std::vector<std::string>& permissions)
{
    return gate_.perform(
        session, {"role.create", permission::kRoleManage, {}, {"role", name}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
            SEALTRAIN_TRY(requireValidName("role", name));
            SEALTRAIN_TRY(checkRoleMix(permissions));
            if (auto done = database_.run("INSERT INTO roles (name) VALUES (?)", {name}); !done)
                return Error(ErrorCode::AlreadyExists,
                             "A role named '" + name + "' already exists; choose another name.");
            for (const auto& p : permissions) {
                SEALTRAIN_TRY(database_.run(
                    "INSERT OR IGNORE INTO role_permissions (role, permission) VALUES (?, ?)",
                    {name, p}));
                draft.details.push_back(audit::textDetail("permission", p));
            }
            return success();
        });
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
            SEALTRAIN_TRY(database_.run("DELETE FROM roles WHERE name = ?", {name}));
            if (database_.changes() == 0)
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
    std::vector<std::string> names;
    SEALTRAIN_TRY(database_.query(
        "SELECT DISTINCT u.name FROM users u JOIN grants g ON g.user_id = u.id WHERE g.role = ? "
        "AND g.project = '' AND g.break_glass = 0 AND g.expires = 0 AND u.disabled = 0 "
        "ORDER BY u.name",
        {std::string(kAdminRole)}, [&](const Statement& row) { names.push_back(row.text(0)); }));
    return names;
}

Result<bool> Access::needsSecondAdmin(const std::string& role) const
{
    auto separated = database_.exists(
        "SELECT 1 FROM role_permissions WHERE role = ? AND permission IN (?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?)",
        {role, std::string(permission::kUserManage), std::string(permission::kRoleManage),
         std::string(permission::kGrantManage), std::string(permission::kSessionManage),
         std::string(permission::kKeyringManage), std::string(permission::kDatasetImport),
         std::string(permission::kDatasetGrant), std::string(permission::kJobApprove),
         std::string(permission::kAuditRead), std::string(permission::kAuditExport)});
    if (!separated)
        return separated.error();
    if (!*separated)
        return false;
    auto admins = adminCount();
    if (!admins)
        return admins.error();
    return *admins >= 2;
}

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
            // Four eyes for separated duties (issue #27): a break-glass grant is an emergency
            // of its own, time-limited and flagged, and is made by one admin.
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
            if (!breakGlass && secondAdmin) {
                std::optional<std::pair<std::int64_t, std::string>> request;
                SEALTRAIN_TRY(database_.queryOne(
                    "SELECT r.id, r.name FROM pending_grants p JOIN users r ON "
                    "r.id = p.requested_by WHERE p.user_id = ? AND p.role = ? AND p.project = ?",
                    {*id, role, project},
                    [&](const Statement& row) { request.emplace(row.integer(0), row.text(1)); }));
                if (caller.userId == *id)
                    return denied("Nobody may request or approve a grant of '" + role
                                  + "' to themselves; another admin must.");
                if (!request) {
                    SEALTRAIN_TRY(database_.run(
                        "INSERT INTO pending_grants (user_id, role, project, requested_by, "
                        "created) VALUES (?, ?, ?, ?, ?)",
                        {*id, role, project, caller.userId, gate_.now()}));
                    draft.action = "grant.request";
                    draft.details.push_back(
                        audit::textDetail("pending", "waits for a second admin"));
                    outcome.pending = true;
                    return success();
                }
                if (request->first == caller.userId)
                    return denied("The grant of '" + role + "' to '" + user
                                  + "' waits for another admin's approval; ask one.");
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

Result<void> Access::revokeRole(const std::string& session, const std::string& user,
                                const std::string& role, const std::string& project)
{
    return gate_.perform(
        session, {"grant.revoke", permission::kGrantManage, project, {"user", user}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
            auto id = userIdByName(database_, user);
            if (!id)
                return id.error();
            if (role == kAdminRole && project.empty())
                SEALTRAIN_TRY(requireAnotherAdmin(*id, "revoke admin from '" + user + "'"));
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
            draft.details.push_back(audit::textDetail("role", role));
            return success();
        });
}

}  // namespace sealtrain::core
