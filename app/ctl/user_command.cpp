// `sealtrainctl user create|disable|enable|reset|list`: people and their credentials, on a local
// data directory, as a signed-in admin (docs/operations/access-control.md).
#include "access_output.h"
#include "commands.h"
#include "ctl.h"
#include "list_output.h"
#include "local_platform.h"
#include "passphrase.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

namespace sealtrain::ctl {
namespace {

struct UserOptions {
    SignedInOptions signedIn;
    std::string name;
    std::string codeFile;
};

constexpr std::string_view kUserColumns = "{:<24} {:<9} {}\n";

struct ResetOptions {
    SignedInOptions signedIn;
    std::string name;
    bool approve = false;
    std::string codeFile;
};

// Creates a user with no credential, then shows the one-time enrolment code with which they
// set their own password and TOTP secret.
int createUser(const CommandRegistry& registry, const UserOptions& options)
{
    // Checked before the change, so a taken file does not leave a user whose code is lost.
    if (!options.codeFile.empty() && std::filesystem::exists(options.codeFile))
        return registry.fail(Error(ErrorCode::AlreadyExists,
                                   fmt::format("The code file '{}' already exists; choose a new "
                                               "file.",
                                               options.codeFile)));
    return runSignedIn(
        registry, options.signedIn,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            auto created = platform.controlPlane().identity().createUser(session, options.name);
            if (!created)
                return created.error();
            return showNewUser(registry.out(), *created, options.codeFile, CommandTree::Local);
        });
}

int resetUser(const CommandRegistry& registry, const ResetOptions& options)
{
    return runSignedIn(
        registry, options.signedIn,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            auto& identity = platform.controlPlane().identity();
            auto reset = options.approve ? identity.approveReset(session, options.name)
                                         : identity.resetUser(session, options.name);
            if (!reset)
                return reset.error();
            return showReset(registry.out(), *reset, options.codeFile, CommandTree::Local);
        });
}

// `user disable` when `disable`, else `user enable`.
int setUserDisabled(const CommandRegistry& registry, const UserOptions& options, bool disable)
{
    return runSignedInChange(
        registry, options.signedIn,
        [&](core::ControlPlane& plane, const std::string& session) {
            auto& identity = plane.identity();
            return disable ? identity.disableUser(session, options.name)
                           : identity.enableUser(session, options.name);
        },
        fmt::format("{} the user '{}'.\n", disable ? "Disabled" : "Enabled", options.name));
}

void registerCredentialCommands(CLI::App* group, CommandRegistry& registry)
{
    auto create = std::make_shared<UserOptions>();
    auto* createCommand = group->add_subcommand(
        "create", "Create a user and print their one-time enrolment code, with which they set "
                  "their own password and TOTP second factor");
    create->signedIn.addTo(createCommand);
    createCommand->add_option("NAME", create->name, "The user name (a-z 0-9 _ -)")->required();
    createCommand->add_option("--code-file", create->codeFile,
                              "Write the enrolment code to this new file (mode 0600) instead of "
                              "printing it");
    createCommand->footer(
        "The new user holds no role yet: give one with 'sealtrainctl grant add'.");
    registry.onRun(createCommand, [create, &registry] { return createUser(registry, *create); });

    auto reset = std::make_shared<ResetOptions>();
    auto* resetCommand = group->add_subcommand(
        "reset", "Take away a user's password and TOTP secret and give a one-time code with which "
                 "they set new ones; ends their sessions and lockout");
    reset->signedIn.addTo(resetCommand);
    addResetOptions(resetCommand, reset->name, reset->approve, reset->codeFile, CommandTree::Local);
    registry.onRun(resetCommand, [reset, &registry] { return resetUser(registry, *reset); });
}

void registerStateCommands(CLI::App* group, CommandRegistry& registry)
{
    for (const bool disable : {true, false}) {
        auto options = std::make_shared<UserOptions>();
        auto* command = group->add_subcommand(
            disable ? "disable" : "enable",
            disable ? "Disable a user: they can not sign in and their sessions end (the last "
                      "admin can not be disabled)"
                    : "Enable a disabled user again and clear their lockout");
        options->signedIn.addTo(command);
        command->add_option("NAME", options->name, "The user name")->required();
        registry.onRun(command, [options, disable, &registry] {
            return setUserDisabled(registry, *options, disable);
        });
    }

    auto* listCommand = addListCommand(
        group, registry, "List users, their state and their grants",
        [](core::ControlPlane& plane, const std::string& session) {
            return plane.identity().listUsers(session);
        },
        fmt::format(kUserColumns, "USER", "STATE", "GRANTS"),
        [](const core::UserInfo& user) {
            return nlohmann::json{
                {"name", user.name}, {"disabled", user.disabled}, {"grants", user.grants}};
        },
        [](const core::UserInfo& user) {
            return fmt::format(kUserColumns, user.name, user.disabled ? "disabled" : "enabled",
                               fmt::join(user.grants, " "));
        });
    listCommand->footer("Grants read ROLE, ROLE@PROJECT for a project, and end in '!' when they "
                        "are break-glass.");
}

}  // namespace

void registerUserCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand("user", "Manage users on a local data directory (admins)");
    group->require_subcommand(1);
    group->footer("Every user command acts as the user signed in with 'sealtrainctl session "
                  "sign-in'.");
    registerCredentialCommands(group, registry);
    registerStateCommands(group, registry);
}

}  // namespace sealtrain::ctl
