// `sealtrainctl remote role …`, `remote session list|revoke`, `remote user reset` and `remote
// grant break-glass`: the access administration of role_command.cpp, session_command.cpp and
// user_command.cpp, run by sealtrain-control on the caller's session certificate. Options and
// output are the local commands' own (access_output.h); only the advice names `remote …`.
#include "access_output.h"
#include "list_output.h"
#include "remote_client.h"

#include <fmt/format.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

struct RemoteListOptions {
    ClientOptions client;
    bool json = false;
};

int remoteRoleList(const CommandRegistry& registry, const RemoteListOptions& options)
{
    auto client = signedInClient(options.client);
    if (!client)
        return registry.fail(client.error());
    auto roles = (*client)->listRoles();
    if (!roles)
        return registry.fail(roles.error());
    std::vector<core::RoleInfo> infos;
    for (const api::RoleSummary& role : *roles)
        infos.push_back({role.name, role.builtin, role.permissions});
    printList(registry.out(), options.json, infos, roleHeader(), roleJson, roleRow);
    return kExitOk;
}

struct RemoteRoleOptions {
    ClientOptions client;
    std::string name;
    std::vector<std::string> permissions;
};

int remoteRoleCreate(const CommandRegistry& registry, const RemoteRoleOptions& options)
{
    return runRemoteChange(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.createRole(options.name, options.permissions);
        },
        fmt::format("Created the role '{}'.\n", options.name));
}

int remoteRoleDelete(const CommandRegistry& registry, const RemoteRoleOptions& options)
{
    return runRemoteChange(
        registry, options.client,
        [&](api::ControlClient& client) { return client.deleteRole(options.name); },
        fmt::format("Deleted the role '{}'.\n", options.name));
}

int remoteSessionList(const CommandRegistry& registry, const ClientOptions& options)
{
    auto client = signedInClient(options);
    if (!client)
        return registry.fail(client.error());
    auto sessions = (*client)->listSessions();
    if (!sessions)
        return registry.fail(sessions.error());
    registry.out() << sessionHeader();
    for (const api::SessionSummary& session : *sessions)
        registry.out() << sessionRow({session.id, session.user, session.createdUnix,
                                      session.lastUsedUnix, session.revoked, session.expired});
    return kExitOk;
}

struct RemoteRevokeOptions {
    ClientOptions client;
    std::string user;
};

int remoteSessionRevoke(const CommandRegistry& registry, const RemoteRevokeOptions& options)
{
    auto client = signedInClient(options.client);
    if (!client)
        return registry.fail(client.error());
    auto certificates = (*client)->revokeSessions(options.user);
    if (!certificates)
        return registry.fail(certificates.error());
    registry.out() << fmt::format("Revoked every session of '{}' and {} client certificate{} "
                                  "bound to them.\n",
                                  options.user, *certificates, *certificates == 1 ? "" : "s");
    return kExitOk;
}

struct RemoteResetOptions {
    ClientOptions client;
    std::string name;
    bool approve = false;
    std::string codeFile;
};

int remoteUserReset(const CommandRegistry& registry, const RemoteResetOptions& options)
{
    auto client = signedInClient(options.client);
    if (!client)
        return registry.fail(client.error());
    auto reset = options.approve ? (*client)->approveReset(options.name)
                                 : (*client)->resetUser(options.name);
    if (!reset)
        return registry.fail(reset.error());
    if (auto shown = showReset(registry.out(), {reset->user, reset->resetCode}, options.codeFile,
                               CommandTree::Remote);
        !shown)
        return registry.fail(shown.error());
    return kExitOk;
}

struct RemoteBreakGlassOptions {
    ClientOptions client;
    std::string user;
    std::string role;
    std::string project;
    std::string reason;
    std::string duration;
};

int remoteBreakGlass(const CommandRegistry& registry, const RemoteBreakGlassOptions& options)
{
    const auto duration = parseDuration(options.duration);
    if (!duration)
        return registry.failUsage(badDurationSentence(CommandTree::Remote));
    return runRemoteChange(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.grantBreakGlass(options.user, options.role, options.project,
                                          options.reason, *duration);
        },
        breakGlassGranted(options.role, options.user, *duration));
}

void registerRoles(CLI::App* remote, CommandRegistry& registry)
{
    auto* role = remote->add_subcommand("role", "Roles, sets of permissions (admin)");
    role->require_subcommand(1);
    auto listOptions = std::make_shared<RemoteListOptions>();
    auto* list = role->add_subcommand("list", "List roles and their permissions");
    list->add_flag("--json", listOptions->json, "Print JSON for scripts");
    addClientOptions(list, listOptions->client, true);
    registry.onRun(list,
                   [&registry, listOptions] { return remoteRoleList(registry, *listOptions); });

    auto createOptions = std::make_shared<RemoteRoleOptions>();
    auto* create = role->add_subcommand("create", "Create a custom role from known permissions");
    create->add_option("NAME", createOptions->name, "The role name (a-z 0-9 _ -)")->required();
    create
        ->add_option("--permission", createOptions->permissions,
                     "A permission the role holds; repeat it (see 'sealtrainctl role permissions')")
        ->required();
    create->footer("A role may not mix identity administration (user., role., grant., session.) "
                   "with other permissions, nor worker. with dataset. or job.");
    addClientOptions(create, createOptions->client, true);
    registry.onRun(
        create, [&registry, createOptions] { return remoteRoleCreate(registry, *createOptions); });

    auto deleteOptions = std::make_shared<RemoteRoleOptions>();
    auto* remove = role->add_subcommand(
        "delete", "Delete a custom role that nobody holds (default roles stay)");
    remove->add_option("NAME", deleteOptions->name, "The role name")->required();
    addClientOptions(remove, deleteOptions->client, true);
    registry.onRun(
        remove, [&registry, deleteOptions] { return remoteRoleDelete(registry, *deleteOptions); });
}

void registerSessions(CLI::App* remote, CommandRegistry& registry)
{
    auto* session = remote->add_subcommand("session", "Everyone's sessions (admin)");
    session->require_subcommand(1);
    auto listOptions = std::make_shared<ClientOptions>();
    auto* list = session->add_subcommand("list", "List sessions, newest first");
    addClientOptions(list, *listOptions, true);
    registry.onRun(list,
                   [&registry, listOptions] { return remoteSessionList(registry, *listOptions); });

    auto revokeOptions = std::make_shared<RemoteRevokeOptions>();
    auto* revoke = session->add_subcommand(
        "revoke", "End every session of a user at once; their client certificates are refused");
    revoke->add_option("--user", revokeOptions->user, "Whose sessions to end")->required();
    addClientOptions(revoke, revokeOptions->client, true);
    registry.onRun(revoke, [&registry, revokeOptions] {
        return remoteSessionRevoke(registry, *revokeOptions);
    });
}

}  // namespace

void registerRemoteAccessCommands(CLI::App* remote, CLI::App* user, CLI::App* grant,
                                  CommandRegistry& registry)
{
    registerRoles(remote, registry);
    registerSessions(remote, registry);

    auto resetOptions = std::make_shared<RemoteResetOptions>();
    auto* reset = user->add_subcommand(
        "reset", "Take away a user's password and TOTP secret and give a one-time code with which "
                 "they set new ones; ends their sessions and revokes their certificates");
    addResetOptions(reset, resetOptions->name, resetOptions->approve, resetOptions->codeFile,
                    CommandTree::Remote);
    addClientOptions(reset, resetOptions->client, true);
    registry.onRun(reset,
                   [&registry, resetOptions] { return remoteUserReset(registry, *resetOptions); });

    auto breakGlassOptions = std::make_shared<RemoteBreakGlassOptions>();
    auto* breakGlass = grant->add_subcommand(
        "break-glass", "An emergency grant that expires by itself; every action under it is "
                       "flagged in the audit log");
    breakGlass->add_option("user", breakGlassOptions->user, "The user")->required();
    breakGlass->add_option("role", breakGlassOptions->role, "The role")->required();
    breakGlass->add_option("--project", breakGlassOptions->project,
                           "Only in this project (default: everywhere)");
    breakGlass->add_option("--reason", breakGlassOptions->reason, "Why (recorded in the audit log)")
        ->required();
    breakGlass
        ->add_option("--duration", breakGlassOptions->duration,
                     "How long it lasts: seconds, or with s, m or h (e.g. 2h; at most 4h)")
        ->required();
    addClientOptions(breakGlass, breakGlassOptions->client, true);
    registry.onRun(breakGlass, [&registry, breakGlassOptions] {
        return remoteBreakGlass(registry, *breakGlassOptions);
    });
}

}  // namespace sealtrain::ctl
