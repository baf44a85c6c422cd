// Roles, grants, break-glass and the separation-of-duties rules, each decision audited.
#include "sealtrain/core/access.h"

#include "audited_transaction.h"

#include "sealtrain/core/identity.h"

#include <algorithm>

namespace sealtrain::core {

namespace {

// Permission classes for separation of duties: operators of the infrastructure hold `worker.*`
// and never data or job permissions.
bool isInfrastructure(std::string_view permission)
{
    return permission.starts_with("worker.");
}

bool isDataOrJob(std::string_view permission)
{
    return permission.starts_with("dataset.") || permission.starts_with("job.");
}

bool isAdministration(std::string_view permission)
{
    return permission == permission::kUserManage || permission == permission::kRoleManage
           || permission == permission::kGrantManage || permission == permission::kSessionManage;
}

// The separation-of-duties rules for one role's permissions.
Result<void> checkRoleMix(const std::vector<std::string>& permissions)
{
    bool administration = false;
    bool other = false;
    for (const auto& p : permissions) {
        if (!permission::isKnown(p))
            return Error(ErrorCode::InvalidArgument,
                         "The permission '" + p + "' is unknown; see 'role permissions'.");
        (isAdministration(p) ? administration : other) = true;
    }
    if (administration && other)
        return denied("A role may not combine identity administration with data, job "
                      "or audit permissions; make two roles.");
    const bool infrastructure = std::any_of(permissions.begin(), permissions.end(),
                                            [](const auto& p) { return isInfrastructure(p); });
    const bool data = std::any_of(permissions.begin(), permissions.end(),
                                  [](const auto& p) { return isDataOrJob(p); });
    if (infrastructure && data)
        return denied("A role may not combine infrastructure (worker) permissions with "
                      "data or job permissions; make two roles.");
    return success();
}

// The two permission classes that one user may not hold together, as SQL sums.
constexpr std::string_view kClasses =
    "sum(p.permission LIKE 'worker.%'), "
    "sum(p.permission LIKE 'dataset.%' OR p.permission LIKE 'job.%')";

struct PermissionClasses {
    bool infrastructure = false;
    bool dataOrJob = false;
};

Result<PermissionClasses> permissionClasses(const Database& database, const std::string& sql,
                                            SqlValues arguments)
{
    PermissionClasses classes;
    auto row = database.queryOne(sql, arguments, [&](const Statement& sums) {
        classes.infrastructure = sums.integer(0) > 0;
        classes.dataOrJob = sums.integer(1) > 0;
    });
    if (!row)
        return row.error();
    return classes;
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
    std::int64_t admins = 0;
    std::int64_t isThisUser = 0;
    SEALTRAIN_TRY(database_.queryOne(
        "SELECT count(DISTINCT u.id), sum(u.id = ?) FROM users u JOIN grants g ON g.user_id = u.id "
        "WHERE g.role = ? AND g.project = '' AND g.break_glass = 0 AND g.expires = 0 "
        "AND u.disabled = 0",
        {id, kAdminRole}, [&](const Statement& row) {
            admins = row.integer(0);
            isThisUser = row.integer(1);
        }));
    if (isThisUser > 0 && admins <= 1)
        return denied("Cannot " + what + ": it is the last admin; make another admin first.");
    return success();
}

Result<void> Access::requireSeparateOperator(std::int64_t id, const std::string& user,
                                             const std::string& role) const
{
    auto granted = permissionClasses(
        database_, "SELECT " + std::string(kClasses) + " FROM role_permissions p WHERE p.role = ?",
        {role});
    if (!granted)
        return granted.error();
    if (!granted->infrastructure && !granted->dataOrJob)
        return success();
    auto held = permissionClasses(database_,
                                  "SELECT " + std::string(kClasses)
                                      + " FROM grants g JOIN role_permissions p ON p.role = g.role "
                                        "WHERE g.user_id = ? AND (g.expires = 0 OR g.expires > ?)",
                                  {id, gate_.now()});
    if (!held)
        return held.error();
    if (granted->dataOrJob && held->infrastructure)
        return denied("The user '" + user
                      + "' operates infrastructure and may not hold data or job permissions; "
                        "use a separate account.");
    if (granted->infrastructure && held->dataOrJob)
        return denied("The user '" + user
                      + "' holds data or job permissions and may not operate infrastructure; "
                        "use a separate account.");
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

Result<std::vector<RoleInfo>> Access::listRoles(const std::string& session)
{
    return gate_.performGroupedListing<RoleInfo>(
        session, {"role.list", permission::kRoleManage, {}, {"role", "*"}},
        "SELECT r.name, r.builtin, p.permission FROM roles r LEFT JOIN role_permissions p "
        "ON p.role = r.name ORDER BY r.builtin DESC, r.name, p.permission",
        [](RoleInfo& role, const Statement& row) { role.permissions.push_back(row.text(2)); });
}

Result<void> Access::grantRole(const std::string& session, const std::string& user,
                               const std::string& role, const std::string& project)
{
    return grantBreakGlass(session, user, role, project, {}, std::chrono::seconds{0});
}

Result<void> Access::grantBreakGlass(const std::string& session, const std::string& user,
                                     const std::string& role, const std::string& project,
                                     const std::string& reason, std::chrono::seconds duration)
{
    const bool breakGlass = duration.count() != 0 || !reason.empty();
    return gate_.perform(
        session,
        {breakGlass ? "grant.break_glass" : "grant.create",
         permission::kGrantManage,
         project,
         {"user", user}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<void> {
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
            SEALTRAIN_TRY(requireSeparateOperator(*id, user, role));
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
            draft.details.push_back(audit::textDetail("role", role));
            if (breakGlass) {
                draft.details.push_back(audit::textDetail("break_glass", "true"));
                draft.details.push_back(
                    audit::textDetail("expires_in_s", std::to_string(duration.count())));
                draft.details.push_back(audit::textDetail("break_glass_reason", reason));
            }
            return success();
        });
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
            SEALTRAIN_TRY(
                database_.run("DELETE FROM grants WHERE user_id = ? AND role = ? AND project = ?",
                              {*id, role, project}));
            if (database_.changes() == 0)
                return Error(ErrorCode::NotFound, "The user '" + user + "' does not hold the role '"
                                                      + role + "' there; check with 'user list'.");
            draft.details.push_back(audit::textDetail("role", role));
            return success();
        });
}

}  // namespace sealtrain::core
