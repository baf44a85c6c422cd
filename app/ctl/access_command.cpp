// `sealtrainctl role …`, `session list|revoke`, `pending`, `user reset` and `grant break-glass`:
// the access administration, decided by sealtrain-control on the caller's session certificate
// (lines and JSON: access_output.h).
#include "access_output.h"
#include "client_options.h"
#include "list_output.h"

#include "sealtrain/base/utf8.h"

#include <fmt/format.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

struct AccessListOptions {
    ClientOptions client;
    bool json = false;
};

int runRoleList(const CommandRegistry& registry, const AccessListOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.access().listRoles(); },
        [&](const auto& roles) {
            printList(registry.out(), options.json, roles, roleHeader(), roleJson, roleRow);
            return kExitOk;
        });
}

// `pending`: the requests waiting for a second admin that the caller could confirm; confirming
// one is making the same call again (docs/operations/access-control.md, "Requests waiting").
int runPendingList(const CommandRegistry& registry, const AccessListOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.access().listPendingRequests(); },
        [&](const auto& pending) {
            printList(
                registry.out(), options.json, pending,
                fmt::format("{:<13} {:<16} {:<28} {:<14} {:<24} {}\n", "KIND", "SUBJECT", "DETAIL",
                            "REQUESTED BY", "SINCE", "WAITS FOR"),
                [](const api::PendingRequestView& p) {
                    return nlohmann::json{{"kind", p.kind},
                                          {"subject", p.subject},
                                          {"detail", p.detail},
                                          {"requested_by", p.requestedBy},
                                          {"since", utcText(p.createdUnix)},
                                          {"waits_for", p.waitsFor}};
                },
                [](const api::PendingRequestView& p) {
                    return fmt::format("{:<13} {:<16} {:<28} {:<14} {:<24} {}\n", p.kind,
                                       escapeControls(p.subject), escapeControls(p.detail),
                                       escapeControls(p.requestedBy), utcText(p.createdUnix),
                                       p.waitsFor);
                });
            return kExitOk;
        });
}

// `role permissions`: the catalogue with each permission's duty class, from which separation of
// duties and four eyes follow (docs/operations/access-control.md).
int runRolePermissions(const CommandRegistry& registry, const AccessListOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.access().listPermissions(); },
        [&](const auto& permissions) {
            printList(
                registry.out(), options.json, permissions,
                fmt::format("{:<18} {:<16} {}\n", "PERMISSION", "DUTY CLASS", "LETS ONE"),
                [](const api::PermissionView& p) {
                    return nlohmann::json{
                        {"name", p.name}, {"duty", p.duty}, {"description", p.description}};
                },
                [](const api::PermissionView& p) {
                    return fmt::format("{:<18} {:<16} {}\n", p.name, p.duty, p.description);
                });
            return kExitOk;
        });
}

struct RoleOptions {
    ClientOptions client;
    std::string name;
    std::vector<std::string> permissions;
};

int runRoleCreate(const CommandRegistry& registry, const RoleOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.access().createRole(options.name, options.permissions);
        },
        [&](const auto& created) {
            if (created.pending)
                registry.out() << fmt::format(
                    "Requested the role '{}': it gives a separated duty, so it is made when "
                    "another admin "
                    "runs the same 'role create' with the same permissions.\n",
                    options.name);
            else
                registry.out() << fmt::format("Created the role '{}'.\n", options.name);
            return kExitOk;
        });
}

int runRoleDelete(const CommandRegistry& registry, const RoleOptions& options)
{
    return runClientChange(
        registry, options.client,
        [&](api::ControlClient& client) { return client.access().deleteRole(options.name); },
        fmt::format("Deleted the role '{}'.\n", options.name));
}

int runSessionList(const CommandRegistry& registry, const AccessListOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.sessions().listSessions(); },
        [&](const auto& sessions) {
            printList(
                registry.out(), options.json, sessions, sessionHeader(),
                [](const api::SessionSummary& session) {
                    return nlohmann::json{{"id", session.id},
                                          {"user", session.user},
                                          {"created_unix", session.createdUnix},
                                          {"last_used_unix", session.lastUsedUnix},
                                          {"revoked", session.revoked},
                                          {"expired", session.expired}};
                },
                sessionRow);
            return kExitOk;
        });
}

struct RevokeOptions {
    ClientOptions client;
    std::string user;
};

int runSessionRevoke(const CommandRegistry& registry, const RevokeOptions& options)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto certificates = (*client)->sessions().revokeSessions(options.user);
    if (!certificates)
        return registry.fail(certificates.error());
    registry.out() << fmt::format("Revoked every session of '{}' and {} client certificate{} "
                                  "bound to them.\n",
                                  options.user, *certificates, *certificates == 1 ? "" : "s");
    return kExitOk;
}

struct ResetOptions {
    ClientOptions client;
    std::string name;
    bool approve = false;
    std::string codeFile;
};

int runUserReset(const CommandRegistry& registry, const ResetOptions& options)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto reset = options.approve ? (*client)->users().approveReset(options.name)
                                 : (*client)->users().resetUser(options.name);
    if (!reset)
        return registry.fail(reset.error());
    if (auto shown = showReset(registry.out(), *reset, options.codeFile); !shown)
        return registry.fail(shown.error());
    return kExitOk;
}

struct BreakGlassOptions {
    ClientOptions client;
    std::string user;
    std::string role;
    std::string project;
    std::string reason;
    std::string duration;
};

int runBreakGlass(const CommandRegistry& registry, const BreakGlassOptions& options)
{
    const auto duration = parseDuration(options.duration);
    if (!duration)
        return registry.failUsage(badDurationSentence());
    return runClientChange(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.access().grantBreakGlass(options.user, options.role, options.project,
                                                   options.reason, *duration);
        },
        breakGlassGranted(options.role, options.user, *duration));
}

void registerRoles(CLI::App& app, CommandRegistry& registry)
{
    auto* role = app.add_subcommand("role", "Roles, sets of permissions (admin)");
    role->require_subcommand(1);
    auto listOptions = std::make_shared<AccessListOptions>();
    auto* list = role->add_subcommand("list", "List roles and their permissions");
    list->add_flag("--json", listOptions->json, "Print JSON for scripts");
    addClientOptions(list, listOptions->client, true);
    registry.onRun(list, [&registry, listOptions] { return runRoleList(registry, *listOptions); });

    auto permissionsOptions = std::make_shared<AccessListOptions>();
    auto* permissions = role->add_subcommand(
        "permissions", "List every permission with its duty class and what it lets one do");
    permissions->add_flag("--json", permissionsOptions->json, "Print JSON for scripts");
    addClientOptions(permissions, permissionsOptions->client, true);
    registry.onRun(permissions, [&registry, permissionsOptions] {
        return runRolePermissions(registry, *permissionsOptions);
    });

    auto createOptions = std::make_shared<RoleOptions>();
    auto* create = role->add_subcommand("create", "Create a custom role from known permissions");
    create->add_option("NAME", createOptions->name, "The role name (a-z 0-9 _ -)")->required();
    create
        ->add_option("--permission", createOptions->permissions,
                     "A permission the role holds; repeat it (`sealtrainctl role permissions` "
                     "shows them)")
        ->required();
    create->footer("Every permission has a duty class (`sealtrainctl role permissions`). A role "
                   "may not mix administration with any other class, nor infrastructure with "
                   "data, jobs or model approval. With two or more admins, a role giving any of "
                   "these classes is made when a second admin runs the same 'role create'.");
    addClientOptions(create, createOptions->client, true);
    registry.onRun(create,
                   [&registry, createOptions] { return runRoleCreate(registry, *createOptions); });

    auto deleteOptions = std::make_shared<RoleOptions>();
    auto* remove = role->add_subcommand(
        "delete", "Delete a custom role that nobody holds (default roles stay)");
    remove->add_option("NAME", deleteOptions->name, "The role name")->required();
    addClientOptions(remove, deleteOptions->client, true);
    registry.onRun(remove,
                   [&registry, deleteOptions] { return runRoleDelete(registry, *deleteOptions); });
}

void registerSessions(CLI::App& app, CommandRegistry& registry)
{
    auto* session = app.add_subcommand("session", "Everyone's sessions (admin)");
    session->require_subcommand(1);
    auto listOptions = std::make_shared<AccessListOptions>();
    auto* list = session->add_subcommand("list", "List sessions, newest first");
    list->add_flag("--json", listOptions->json, "Print JSON for scripts");
    addClientOptions(list, listOptions->client, true);
    registry.onRun(list,
                   [&registry, listOptions] { return runSessionList(registry, *listOptions); });

    auto revokeOptions = std::make_shared<RevokeOptions>();
    auto* revoke = session->add_subcommand(
        "revoke", "End every session of a user at once; their client certificates are refused");
    revoke->add_option("--user", revokeOptions->user, "Whose sessions to end")->required();
    addClientOptions(revoke, revokeOptions->client, true);
    registry.onRun(
        revoke, [&registry, revokeOptions] { return runSessionRevoke(registry, *revokeOptions); });
}

}  // namespace

void registerAccessCommands(CLI::App& app, CLI::App* user, CLI::App* grant,
                            CommandRegistry& registry)
{
    registerRoles(app, registry);
    registerSessions(app, registry);

    auto pendingOptions = std::make_shared<AccessListOptions>();
    auto* pending = app.add_subcommand(
        "pending", "The requests waiting for a second admin that you could confirm (grants, "
                   "roles, admin changes, resets), oldest first (admin)");
    pending->add_flag("--json", pendingOptions->json, "Print JSON for scripts");
    pending->footer("Confirm one by making the same call: `grant add USER ROLE`, `role create "
                    "NAME --permission …`, `user disable USER`, `user reset USER --approve`.");
    addClientOptions(pending, pendingOptions->client, true);
    registry.onRun(
        pending, [&registry, pendingOptions] { return runPendingList(registry, *pendingOptions); });

    auto resetOptions = std::make_shared<ResetOptions>();
    auto* reset = user->add_subcommand(
        "reset", "Take away a user's password and TOTP secret and give a one-time code with which "
                 "they set new ones; ends their sessions and revokes their certificates");
    addResetOptions(reset, resetOptions->name, resetOptions->approve, resetOptions->codeFile);
    addClientOptions(reset, resetOptions->client, true);
    registry.onRun(reset,
                   [&registry, resetOptions] { return runUserReset(registry, *resetOptions); });

    auto breakGlassOptions = std::make_shared<BreakGlassOptions>();
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
        return runBreakGlass(registry, *breakGlassOptions);
    });
}

}  // namespace sealtrain::ctl
