// `sealtrainctl role …` and `sealtrainctl grant …`: roles as sets of permissions and who holds
// them, globally or per project, including time-limited break-glass grants
// (docs/operations/access-control.md).
#include "commands.h"
#include "ctl.h"
#include "list_output.h"
#include "local_platform.h"

#include "sealtrain/core/permissions.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <charconv>
#include <memory>
#include <ostream>

namespace sealtrain::ctl {
namespace {

struct RoleOptions {
    SignedInOptions signedIn;
    std::string name;
    std::vector<std::string> permissions;
};

constexpr std::string_view kRoleColumns = "{:<16} {:<8} {}\n";

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
    registry.onRun(createCommand, [create, &registry] {
        return runSignedIn(
            registry, create->signedIn,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                SEALTRAIN_TRY(platform.controlPlane().access().createRole(session, create->name,
                                                                          create->permissions));
                registry.out() << fmt::format("Created the role '{}'.\n", create->name);
                return success();
            });
    });

    auto remove = std::make_shared<RoleOptions>();
    auto* deleteCommand = group->add_subcommand(
        "delete", "Delete a custom role that nobody holds (default roles stay)");
    remove->signedIn.addTo(deleteCommand);
    deleteCommand->add_option("NAME", remove->name, "The role name")->required();
    registry.onRun(deleteCommand, [remove, &registry] {
        return runSignedIn(
            registry, remove->signedIn,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                SEALTRAIN_TRY(platform.controlPlane().access().deleteRole(session, remove->name));
                registry.out() << fmt::format("Deleted the role '{}'.\n", remove->name);
                return success();
            });
    });

    addListCommand(
        group, registry, "List roles and their permissions",
        [](core::ControlPlane& plane, const std::string& session) {
            return plane.access().listRoles(session);
        },
        fmt::format(kRoleColumns, "ROLE", "KIND", "PERMISSIONS"),
        [](const core::RoleInfo& role) {
            return nlohmann::json{
                {"name", role.name}, {"builtin", role.builtin}, {"permissions", role.permissions}};
        },
        [](const core::RoleInfo& role) {
            return fmt::format(kRoleColumns, role.name, role.builtin ? "default" : "custom",
                               fmt::join(role.permissions, " "));
        });

    auto* permissions = group->add_subcommand(
        "permissions", "List every permission this build knows (no data directory needed)");
    registry.onRun(permissions, [&registry] {
        for (const auto& permission : core::permission::all())
            registry.out() << permission << '\n';
        return kExitOk;
    });
}

// "90", "90s", "30m", "4h": seconds; nullopt for anything else.
std::optional<std::chrono::seconds> parseDuration(const std::string& text)
{
    std::int64_t value = 0;
    const char* end = text.data() + text.size();
    auto [rest, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || rest == text.data() || value <= 0)
        return std::nullopt;
    const std::string_view unit(rest, static_cast<std::size_t>(end - rest));
    std::int64_t factor = 0;
    if (unit.empty() || unit == "s")
        factor = 1;
    else if (unit == "m")
        factor = 60;
    else if (unit == "h")
        factor = 3600;
    if (factor == 0 || value > std::numeric_limits<std::int64_t>::max() / factor)
        return std::nullopt;
    return std::chrono::seconds{value * factor};
}

struct GrantOptions {
    SignedInOptions signedIn;
    std::string user;
    std::string role;
    std::string project;
    std::string reason;
    std::string duration;
};

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
    registry.onRun(addCommand, [add, &registry] {
        return runSignedIn(
            registry, add->signedIn,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                SEALTRAIN_TRY(platform.controlPlane().access().grantRole(session, add->user,
                                                                         add->role, add->project));
                registry.out() << fmt::format(
                    "Granted '{}' to '{}'{}.\n", add->role, add->user,
                    add->project.empty() ? "" : " in project '" + add->project + "'");
                return success();
            });
    });

    auto remove = std::make_shared<GrantOptions>();
    auto* removeCommand = addGrantCommand(
        group, "remove", "Take a role away from a user (the last admin keeps theirs)", *remove);
    registry.onRun(removeCommand, [remove, &registry] {
        return runSignedIn(
            registry, remove->signedIn,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                SEALTRAIN_TRY(platform.controlPlane().access().revokeRole(
                    session, remove->user, remove->role, remove->project));
                registry.out() << fmt::format("Removed '{}' from '{}'.\n", remove->role,
                                              remove->user);
                return success();
            });
    });

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
    registry.onRun(breakGlassCommand, [breakGlass, &registry] {
        const auto duration = parseDuration(breakGlass->duration);
        if (!duration) {
            registry.err() << "sealtrainctl: --duration takes a positive number of seconds, "
                              "optionally ending in s, m or h (e.g. 2h). Run 'sealtrainctl grant "
                              "break-glass --help' for the options.\n";
            return kExitUsage;
        }
        return runSignedIn(
            registry, breakGlass->signedIn,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                SEALTRAIN_TRY(platform.controlPlane().access().grantBreakGlass(
                    session, breakGlass->user, breakGlass->role, breakGlass->project,
                    breakGlass->reason, *duration));
                registry.out() << fmt::format(
                    "Granted '{}' to '{}' for {} seconds as break-glass; every "
                    "action under it is flagged in the audit log.\n",
                    breakGlass->role, breakGlass->user, duration->count());
                return success();
            });
    });

    auto list = std::make_shared<GrantOptions>();
    auto* listCommand = group->add_subcommand("list", "List who holds which roles");
    list->signedIn.addTo(listCommand);
    listCommand->add_option("USER", list->user, "Only this user");
    registry.onRun(listCommand, [list, &registry] {
        return runSignedIn(
            registry, list->signedIn,
            [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                auto users = platform.controlPlane().identity().listUsers(session);
                if (!users)
                    return users.error();
                registry.out() << fmt::format("{:<24} {:<16} {:<16} {}\n", "USER", "ROLE",
                                              "PROJECT", "KIND");
                bool found = list->user.empty();
                for (const auto& user : *users) {
                    if (!list->user.empty() && user.name != list->user)
                        continue;
                    found = true;
                    for (std::string grant : user.grants) {
                        const bool emergency = !grant.empty() && grant.back() == '!';
                        if (emergency)
                            grant.pop_back();
                        const auto at = grant.find('@');
                        registry.out() << fmt::format(
                            "{:<24} {:<16} {:<16} {}\n", user.name, grant.substr(0, at),
                            at == std::string::npos ? "(global)" : grant.substr(at + 1),
                            emergency ? "break-glass" : "standing");
                    }
                }
                if (!found)
                    return Error(ErrorCode::NotFound, "There is no user '" + list->user
                                                          + "'; check the name with 'user list'.");
                return success();
            });
    });
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
