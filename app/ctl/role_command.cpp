// `sealtrainctl role …` and `sealtrainctl grant …`: roles as sets of permissions and who holds
// them, globally or per project, including time-limited break-glass grants
// (docs/operations/access-control.md).
#include "access_output.h"
#include "commands.h"
#include "ctl.h"
#include "list_output.h"
#include "local_platform.h"

#include "sealtrain/core/permissions.h"

#include <fmt/format.h>

#include <memory>
#include <ostream>

namespace sealtrain::ctl {
namespace {

struct RoleOptions {
    SignedInOptions signedIn;
    std::string name;
    std::vector<std::string> permissions;
};

int createRole(const CommandRegistry& registry, const RoleOptions& options)
{
    return runSignedInChange(
        registry, options.signedIn,
        [&](core::ControlPlane& plane, const std::string& session) {
            return plane.access().createRole(session, options.name, options.permissions);
        },
        fmt::format("Created the role '{}'.\n", options.name));
}

int deleteRole(const CommandRegistry& registry, const RoleOptions& options)
{
    return runSignedInChange(
        registry, options.signedIn,
        [&](core::ControlPlane& plane, const std::string& session) {
            return plane.access().deleteRole(session, options.name);
        },
        fmt::format("Deleted the role '{}'.\n", options.name));
}

int listPermissions(const CommandRegistry& registry)
{
    for (const auto& permission : core::permission::all())
        registry.out() << permission << '\n';
    return kExitOk;
}

void registerRoleCommands(CLI::App* group, CommandRegistry& registry)
{
    auto create = std::make_shared<RoleOptions>();
    auto* createCommand =
        group->add_subcommand("create", "Create a custom role from known permissions");
    create->signedIn.addTo(createCommand);
    createCommand->add_option("NAME", create->name, "The role name (a-z 0-9 _ -)")->required();
    createCommand
        ->add_option("--permission", create->permissions,
                     "A permission the role holds; repeat it (see 'role permissions')")
        ->required();
    createCommand->footer("A role may not mix identity administration (user., role., grant., "
                          "session.) with other permissions, nor worker. with dataset. or job.");
    registry.onRun(createCommand, [create, &registry] { return createRole(registry, *create); });

    auto remove = std::make_shared<RoleOptions>();
    auto* deleteCommand = group->add_subcommand(
        "delete", "Delete a custom role that nobody holds (default roles stay)");
    remove->signedIn.addTo(deleteCommand);
    deleteCommand->add_option("NAME", remove->name, "The role name")->required();
    registry.onRun(deleteCommand, [remove, &registry] { return deleteRole(registry, *remove); });

    addListCommand(
        group, registry, "List roles and their permissions",
        [](core::ControlPlane& plane, const std::string& session) {
            return plane.access().listRoles(session);
        },
        roleHeader(), roleJson, roleRow);

    auto* permissions = group->add_subcommand(
        "permissions", "List every permission this build knows (no data directory needed)");
    registry.onRun(permissions, [&registry] { return listPermissions(registry); });
}

struct GrantOptions {
    SignedInOptions signedIn;
    std::string user;
    std::string role;
    std::string project;
    std::string reason;
    std::string duration;
};

int addGrant(const CommandRegistry& registry, const GrantOptions& options)
{
    return runSignedInQuery(
        registry, options.signedIn,
        [&](core::ControlPlane& plane, const std::string& session) {
            return plane.access().grantRole(session, options.user, options.role, options.project);
        },
        [&](const core::GrantOutcome& outcome) -> Result<void> {
            registry.out() << grantSentence(options.role, options.user, options.project,
                                            outcome.pending);
            return success();
        });
}

int removeGrant(const CommandRegistry& registry, const GrantOptions& options)
{
    return runSignedInChange(
        registry, options.signedIn,
        [&](core::ControlPlane& plane, const std::string& session) {
            return plane.access().revokeRole(session, options.user, options.role, options.project);
        },
        fmt::format("Removed '{}' from '{}'.\n", options.role, options.user));
}

int grantBreakGlass(const CommandRegistry& registry, const GrantOptions& options)
{
    const auto duration = parseDuration(options.duration);
    if (!duration)
        return registry.failUsage(badDurationSentence(CommandTree::Local));
    return runSignedInChange(
        registry, options.signedIn,
        [&](core::ControlPlane& plane, const std::string& session) {
            return plane.access().grantBreakGlass(session, options.user, options.role,
                                                  options.project, options.reason, *duration);
        },
        breakGlassGranted(options.role, options.user, *duration));
}

// One line a grant: ROLE or ROLE@PROJECT, ending in '!' for break-glass.
std::string grantLine(const std::string& user, std::string grant)
{
    const bool emergency = !grant.empty() && grant.back() == '!';
    if (emergency)
        grant.pop_back();
    const auto at = grant.find('@');
    return fmt::format("{:<24} {:<16} {:<16} {}\n", user, grant.substr(0, at),
                       at == std::string::npos ? "(global)" : grant.substr(at + 1),
                       emergency ? "break-glass" : "standing");
}

int listGrants(const CommandRegistry& registry, const GrantOptions& options)
{
    return runSignedInQuery(
        registry, options.signedIn,
        [](core::ControlPlane& plane, const std::string& session) {
            return plane.identity().listUsers(session);
        },
        [&](const std::vector<core::UserInfo>& users) -> Result<void> {
            registry.out() << fmt::format("{:<24} {:<16} {:<16} {}\n", "USER", "ROLE", "PROJECT",
                                          "KIND");
            bool found = options.user.empty();
            for (const auto& user : users) {
                if (!options.user.empty() && user.name != options.user)
                    continue;
                found = true;
                for (const std::string& grant : user.grants)
                    registry.out() << grantLine(user.name, grant);
            }
            if (!found)
                return Error(ErrorCode::NotFound, "There is no user '" + options.user
                                                      + "'; check the name with 'user list'.");
            return success();
        });
}

CLI::App* addGrantCommand(CLI::App* group, const char* name, const char* help,
                          GrantOptions& options)
{
    auto* command = group->add_subcommand(name, help);
    options.signedIn.addTo(command);
    command->add_option("USER", options.user, "The user")->required();
    command->add_option("ROLE", options.role, "The role")->required();
    command->add_option("--project", options.project, "Only within this project (default: global)");
    return command;
}

void registerGrantCommands(CLI::App* group, CommandRegistry& registry)
{
    auto add = std::make_shared<GrantOptions>();
    auto* addCommand = addGrantCommand(group, "add", "Give a user a role", *add);
    addCommand->footer("Infrastructure operators (worker.*) can not also hold dataset.* or job.* "
                       "permissions; nobody can grant themselves more than they hold.");
    registry.onRun(addCommand, [add, &registry] { return addGrant(registry, *add); });

    auto remove = std::make_shared<GrantOptions>();
    auto* removeCommand = addGrantCommand(
        group, "remove", "Take a role away from a user (the last admin keeps theirs)", *remove);
    registry.onRun(removeCommand, [remove, &registry] { return removeGrant(registry, *remove); });

    auto breakGlass = std::make_shared<GrantOptions>();
    auto* breakGlassCommand = addGrantCommand(
        group, "break-glass",
        "An emergency grant that expires by itself; every action under it is flagged in the "
        "audit log",
        *breakGlass);
    breakGlassCommand->add_option("--reason", breakGlass->reason, "Why (recorded in the audit log)")
        ->required();
    breakGlassCommand
        ->add_option("--duration", breakGlass->duration,
                     "How long it lasts: seconds, or with s, m or h (e.g. 2h; at most 4h)")
        ->required();
    registry.onRun(breakGlassCommand,
                   [breakGlass, &registry] { return grantBreakGlass(registry, *breakGlass); });

    auto list = std::make_shared<GrantOptions>();
    auto* listCommand = group->add_subcommand("list", "List who holds which roles");
    list->signedIn.addTo(listCommand);
    listCommand->add_option("USER", list->user, "Only this user");
    registry.onRun(listCommand, [list, &registry] { return listGrants(registry, *list); });
}

}  // namespace

void registerRoleAndGrantCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* roles = app.add_subcommand("role", "Manage roles (sets of permissions)");
    roles->require_subcommand(1);
    registerRoleCommands(roles, registry);
    auto* grants = app.add_subcommand("grant", "Give and take roles, globally or per project");
    grants->require_subcommand(1);
    registerGrantCommands(grants, registry);
}

}  // namespace sealtrain::ctl
