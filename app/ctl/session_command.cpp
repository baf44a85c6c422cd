// `sealtrainctl session sign-in|sign-out|list|revoke`: the CLI's sessions on a local data
// directory. sign-in stores the token sealed in the user's own file, sessions/<user>.session (or
// --session-file), and every other command reads it from there (local_platform.h). After a
// reset, sign-in with --reset-code-file sets the user's new password and TOTP secret instead.
#include "access_output.h"
#include "commands.h"
#include "ctl.h"
#include "local_platform.h"
#include "passphrase.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

namespace sealtrain::ctl {
namespace {

struct SignInOptions {
    UnlockOptions unlock;
    std::optional<std::filesystem::path> sessionFile;
    std::string user;
    std::string passwordFile;
    std::string totpCode;
    std::string resetCodeFile;
    std::string totpUriFile;
};

// The TOTP code from --totp-code, else asked on the terminal.
Result<std::string> totpCode(const SignInOptions& options)
{
    if (!options.totpCode.empty())
        return options.totpCode;
    auto typed = promptPassphrase("TOTP code", false, "--totp-code CODE");
    if (!typed)
        return typed.error();
    return std::string(typed->bytes().begin(), typed->bytes().end());
}

// The first sign-in after a reset: the one-time code from the admin, a new password, and the new
// TOTP secret shown once. No session: the user signs in next with the new password and a code.
int completeReset(const CommandRegistry& registry, const SignInOptions& options)
{
    auto completion =
        readResetCompletion(options.user, options.resetCodeFile, options.passwordFile);
    if (!completion)
        return registry.fail(completion.error());
    return runOnPlatform(
        registry, options.unlock, [&](core::DataDirectory& platform) -> Result<void> {
            auto enrollment = platform.controlPlane().identity().completeReset(
                options.user, completion->code, completion->password);
            if (!enrollment)
                return enrollment.error();
            return showCompletedReset(registry.out(), *enrollment, options.totpUriFile);
        });
}

int signIn(const CommandRegistry& registry, const SignInOptions& options)
{
    if (!options.resetCodeFile.empty())
        return completeReset(registry, options);
    auto password =
        obtainPassphrase(options.passwordFile, fmt::format("Password for {}", options.user), false,
                         kPasswordFileOption);
    if (!password)
        return registry.fail(password.error());
    auto code = totpCode(options);
    if (!code)
        return registry.fail(code.error());
    return runOnPlatform(
        registry, options.unlock, [&](core::DataDirectory& platform) -> Result<void> {
            auto token = platform.controlPlane().identity().signIn(options.user, *password, *code);
            if (!token)
                return token.error();
            SEALTRAIN_TRY(storeSession(platform, *token,
                                       options.sessionFile
                                           ? *options.sessionFile
                                           : userSessionFile(platform, options.user)));
            registry.out() << fmt::format("Signed in as '{}'.\n", options.user);
            return success();
        });
}

int signOut(const CommandRegistry& registry, const SignedInOptions& options)
{
    return runSignedIn(
        registry, options,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            // The token is forgotten even when the session had already ended.
            auto file = chosenSessionFile(platform, options);
            if (!file)
                return file.error();
            auto signedOut = platform.controlPlane().identity().signOut(session);
            SEALTRAIN_TRY(forgetSession(*file));
            if (!signedOut && signedOut.error().code() != ErrorCode::Unauthenticated)
                return signedOut.error();
            registry.out() << "Signed out.\n";
            return success();
        });
}

int listSessions(const CommandRegistry& registry, const SignedInOptions& options)
{
    return runSignedInQuery(
        registry, options,
        [](core::ControlPlane& plane, const std::string& session) {
            return plane.identity().listSessions(session);
        },
        [&](const std::vector<core::SessionInfo>& sessions) {
            registry.out() << sessionHeader();
            for (const auto& session : sessions)
                registry.out() << sessionRow(session);
            return success();
        });
}

struct RevokeOptions {
    SignedInOptions signedIn;
    std::string user;
};

int revokeSessions(const CommandRegistry& registry, const RevokeOptions& options)
{
    return runSignedInChange(
        registry, options.signedIn,
        [&](core::ControlPlane& plane, const std::string& session) {
            return plane.identity().revokeSessions(session, options.user);
        },
        fmt::format("Revoked every session of '{}'.\n", options.user));
}

void registerSignIn(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<SignInOptions>();
    auto* command = group->add_subcommand(
        "sign-in", "Sign in with password and TOTP code; later commands act as this user");
    addUnlockOptions(command, options->unlock);
    addSessionFileOption(command, options->sessionFile);
    command->add_option("--user", options->user, "Your user name")->required();
    command->add_option("--password-file", options->passwordFile,
                        "Read the password (with --reset-code-file: the new one) from this "
                        "file's first line (mode 0600) instead of asking");
    auto* totp =
        command->add_option("--totp-code", options->totpCode,
                            "The 6-digit code from your authenticator app (asked when not given)");
    addResetCompletionOptions(command, totp, options->resetCodeFile, options->totpUriFile);
    command->footer("The session is stored for this user alone (sessions/NAME.session in the data "
                    "directory); it ends after 15 idle minutes or 12 hours, on sign-out, or when "
                    "an admin revokes it.");
    registry.onRun(command, [options, &registry] { return signIn(registry, *options); });
}

void registerSignOut(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<SignedInOptions>();
    auto* command = group->add_subcommand("sign-out", "End your session and forget its token");
    options->addTo(command);
    registry.onRun(command, [options, &registry] { return signOut(registry, *options); });
}

void registerAdminCommands(CLI::App* group, CommandRegistry& registry)
{
    auto list = std::make_shared<SignedInOptions>();
    auto* listCommand = group->add_subcommand("list", "List sessions, newest first (admins)");
    list->addTo(listCommand);
    registry.onRun(listCommand, [list, &registry] { return listSessions(registry, *list); });

    auto revoke = std::make_shared<RevokeOptions>();
    auto* revokeCommand =
        group->add_subcommand("revoke", "End every session of a user at once (admins)");
    revoke->signedIn.addTo(revokeCommand);
    revokeCommand->add_option("--user", revoke->user, "Whose sessions to end")->required();
    registry.onRun(revokeCommand,
                   [revoke, &registry] { return revokeSessions(registry, *revoke); });
}

}  // namespace

void registerSessionCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group =
        app.add_subcommand("session", "Sign in and out of a local data directory; list and "
                                      "revoke sessions");
    group->require_subcommand(1);
    registerSignIn(group, registry);
    registerSignOut(group, registry);
    registerAdminCommands(group, registry);
}

}  // namespace sealtrain::ctl
