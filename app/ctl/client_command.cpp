// The commands of a client of sealtrain-control (docs/api.md): `connect` pins a shared control
// plane's CA by the fingerprint an administrator gave; `sign-in` signs in with password and TOTP
// (or, with --reset-code-file, completes an enrolment or a reset) and keeps the session's key and
// certificate in the profile (api/profile.h, docs/formats/client-profile.md); `whoami`,
// `sign-out`, `user …` and `grant …` act on that session. The access administration (roles,
// sessions, resets, break-glass) is in access_command.cpp, datasets, the audit export and
// sampling in data_command.cpp. The profile holds no platform key: only each user's session.
#include "access_output.h"
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "list_output.h"
#include "passphrase.h"

#include "sealtrain/api/client.h"
#include "sealtrain/api/profile.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/paths.h"
#include "sealtrain/base/utf8.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {

Result<void> writeText(const std::filesystem::path& path, const std::string& text, unsigned mode)
{
    return writeFileAtomically(path,
                               {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()},
                               AtomicFileSink::Overwrite::Allow, mode);
}

api::Profile ClientOptions::profile() const
{
    return api::Profile(clientDir.empty() ? api::Profile::defaultFolder() : clientDir);
}

void addClientOptions(CLI::App* command, ClientOptions& options, bool withUser)
{
    command->add_option("--client-dir", options.clientDir,
                        "The client profile: the control plane it names and the sessions "
                        "signed in here (default $SEALTRAIN_CLIENT_DIR or "
                        "~/.config/sealtrain/client)");
    if (withUser)
        command->add_option("--as", options.user,
                            "Whose session to use (default $SEALTRAIN_USER, or the one user "
                            "signed in here)");
}

namespace {

// Another of Sealtrain's programs: $VARIABLE, else beside this one (installed) or in the build
// tree.
Result<std::filesystem::path> sealtrainProgram(const char* variable, std::string_view name,
                                               std::string_view buildFolder)
{
    if (const char* named = std::getenv(variable); named != nullptr && *named != '\0')
        return std::filesystem::path(named);
    if (auto found = siblingExecutable(name, buildFolder))
        return *found;
    return Error(ErrorCode::NotFound, fmt::format("Cannot find {} beside sealtrainctl; name it "
                                                  "with {}=PATH.",
                                                  name, variable));
}

}  // namespace

Result<std::filesystem::path> controlExecutable()
{
    return sealtrainProgram("SEALTRAIN_CONTROL", "sealtrain-control", "control");
}

Result<std::filesystem::path> trainerExecutable()
{
    return sealtrainProgram("SEALTRAIN_TRAIN", "sealtrain-train", "train");
}

Result<void> ensureControlPlane(const api::Profile& profile, std::ostream& err)
{
    auto workstation = profile.workstation();
    if (!workstation)
        return workstation.error();
    if (!*workstation || profile.workstationPid())
        return success();
    const std::string dataDir = (*workstation)->dataDir.string();
    if (::isatty(STDIN_FILENO) == 0)
        return Error(ErrorCode::Io,
                     fmt::format("The control plane of '{}' is not running; start it with "
                                 "`sealtrainctl start`.",
                                 dataDir));
    auto executable = controlExecutable();
    if (!executable)
        return executable.error();
    err << fmt::format("The control plane of {} is not running; starting it.\n", dataDir);
    auto passphrase = promptPassphrase(fmt::format("Keyring passphrase for {}", dataDir), false);
    if (!passphrase)
        return passphrase.error();
    auto started = profile.startWorkstation(*executable, std::move(*passphrase));
    if (!started)
        return started.error();
    err << fmt::format("Started it (process {}); `sealtrainctl stop` stops it.\n", *started);
    return success();
}

Result<std::unique_ptr<api::ControlClient>> signedInClient(const ClientOptions& options,
                                                           std::ostream& err)
{
    const api::Profile profile = options.profile();
    auto user = profile.chooseUser(options.user);
    if (!user)
        return user.error();
    SEALTRAIN_TRY(ensureControlPlane(profile, err));
    return profile.client(*user);
}

int runClientChange(const CommandRegistry& registry, const ClientOptions& options,
                    const std::function<Result<void>(api::ControlClient&)>& change,
                    const std::string& done)
{
    auto client = signedInClient(options, registry.err());
    if (!client)
        return registry.fail(client.error());
    if (auto changed = change(**client); !changed)
        return registry.fail(changed.error());
    registry.out() << done;
    return kExitOk;
}

namespace {

struct ConnectOptions {
    ClientOptions client;
    std::string address;
    std::string fingerprint;
    std::string serverName = "localhost";
};

int connect(const CommandRegistry& registry, const ConnectOptions& options)
{
    const api::Profile profile = options.client.profile();
    if (auto connected = profile.connect(options.address, options.serverName, options.fingerprint);
        !connected)
        return registry.fail(connected.error());
    registry.out() << fmt::format("Connected to {}; its CA ({}) is pinned in {}. Sign in with "
                                  "`sealtrainctl sign-in --user NAME`.\n",
                                  options.address, options.fingerprint, profile.folder().string());
    return kExitOk;
}

struct SignInOptions {
    ClientOptions client;
    std::string user;
    std::string passwordFile;
    std::string totpCode;
    std::string resetCodeFile;
    std::string totpUriFile;
};

// The first step in after an enrolment or a reset: the one-time code, a new password, and the
// new TOTP secret shown once. No session, and no certificate: the user signs in next with the
// new password and a code.
int runCompleteReset(const CommandRegistry& registry, const SignInOptions& options,
                     const api::Profile& profile)
{
    auto completion =
        readResetCompletion(options.user, options.resetCodeFile, options.passwordFile);
    if (!completion)
        return registry.fail(completion.error());
    auto uri = profile.completeReset(options.user, completion->code, completion->password);
    if (!uri)
        return registry.fail(uri.error());
    if (auto shown = showCompletedReset(registry.out(), options.user, *uri, options.totpUriFile);
        !shown)
        return registry.fail(shown.error());
    return kExitOk;
}

int runSignIn(const CommandRegistry& registry, const SignInOptions& options)
{
    const api::Profile profile = options.client.profile();
    if (auto running = ensureControlPlane(profile, registry.err()); !running)
        return registry.fail(running.error());
    if (!options.resetCodeFile.empty())
        return runCompleteReset(registry, options, profile);
    auto password =
        obtainPassphrase(options.passwordFile, fmt::format("Password for {}", options.user), false,
                         kPasswordFileOption);
    if (!password)
        return registry.fail(password.error());
    std::string code = options.totpCode;
    if (code.empty()) {
        auto typed = promptPassphrase("TOTP code", false, "--totp-code CODE");
        if (!typed)
            return registry.fail(typed.error());
        code.assign(typed->bytes().begin(), typed->bytes().end());
    }
    auto signedIn = profile.signIn(options.user, *password, code);
    if (!signedIn)
        return registry.fail(signedIn.error());
    registry.out() << fmt::format("Signed in as {} until {}; commands use this session with --as "
                                  "{} or SEALTRAIN_USER={} (or by default while nobody else is "
                                  "signed in here).\n",
                                  options.user, utcText(signedIn->expiresUnix), options.user,
                                  options.user);
    return kExitOk;
}

int runWhoAmI(const CommandRegistry& registry, const ClientOptions& options)
{
    return runClientCall(
        registry, options, [&](api::ControlClient& client) { return client.sessions().whoAmI(); },
        [&](const auto& who) {
            registry.out() << fmt::format("{} (session {}, until {})\n", who.user, who.sessionId,
                                          utcText(who.expiresUnix));
            registry.out() << fmt::format("  ends if unused until {} (idle limit {} min)\n",
                                          utcText(who.idleExpiresUnix),
                                          who.idleTimeoutSeconds / 60);
            for (const auto& [project, permissions] : who.permissions)
                registry.out() << fmt::format("  {}: {}\n",
                                              project.empty()
                                                  ? std::string("everywhere")
                                                  : "in project " + escapeControls(project),
                                              fmt::join(permissions, " "));
            if (who.permissions.empty())
                registry.out() << "  no permissions: ask an admin for a grant\n";
            if (who.breakGlass)
                registry.out() << "  break-glass: every action is flagged in the audit log\n";
            for (const std::string& warning : who.warnings)
                registry.out() << "warning: " << warning << '\n';
            return kExitOk;
        });
}

int runSignOut(const CommandRegistry& registry, const ClientOptions& options)
{
    const api::Profile profile = options.profile();
    auto user = profile.chooseUser(options.user);
    if (!user)
        return registry.fail(user.error());
    if (auto ended = profile.signOut(*user); !ended)
        return registry.fail(ended.error());
    registry.out() << fmt::format("Signed out {}; the session's certificate is revoked.\n", *user);
    return kExitOk;
}

struct PasswordChangeOptions {
    ClientOptions client;
    std::string currentFile;
    std::string newFile;
};

int runChangePassword(const CommandRegistry& registry, const PasswordChangeOptions& options)
{
    auto current = obtainPassphrase(options.currentFile, "Current password", false,
                                    "--current-password-file FILE");
    if (!current)
        return registry.fail(current.error());
    auto next = obtainPassphrase(options.newFile, "New password", true, "--new-password-file FILE");
    if (!next)
        return registry.fail(next.error());
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.sessions().changePassword(*current, *next);
        },
        [&](const auto& ended) {
            registry.out() << fmt::format("Password changed; {} other session{} of yours ended.\n",
                                          ended, ended == 1 ? "" : "s");
            return kExitOk;
        });
}

struct ClientListOptions {
    ClientOptions client;
    bool json = false;
};

constexpr std::string_view kUserColumns = "{:<20} {:<9} {}\n";

int runUserList(const CommandRegistry& registry, const ClientListOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.users().listUsers(); },
        [&](const auto& users) {
            printList(
                registry.out(), options.json, users,
                fmt::format(kUserColumns, "USER", "STATE", "GRANTS"),
                [](const api::UserSummary& user) {
                    return nlohmann::json{
                        {"name", user.name}, {"disabled", user.disabled}, {"grants", user.grants}};
                },
                [](const api::UserSummary& user) {
                    return fmt::format(kUserColumns, user.name,
                                       user.disabled ? "disabled" : "enabled",
                                       fmt::join(user.grants, " "));
                });
            return kExitOk;
        });
}

struct UserOptions {
    ClientOptions client;
    std::string name;
    std::string codeFile;
};

int runUserCreate(const CommandRegistry& registry, const UserOptions& options)
{
    // Checked before the call, so a taken file does not leave a user whose code is lost.
    if (!options.codeFile.empty() && std::filesystem::exists(options.codeFile))
        return registry.fail(Error(ErrorCode::AlreadyExists,
                                   fmt::format("The code file '{}' already exists; choose a new "
                                               "file.",
                                               options.codeFile)));
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.users().createUser(options.name); },
        [&](const auto& code) {
            if (auto shown = showNewUser(registry.out(), options.name, code, options.codeFile);
                !shown)
                return registry.fail(shown.error());
            return kExitOk;
        });
}

int runUserToggle(const CommandRegistry& registry, const UserOptions& options, bool enable)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    if (enable) {
        if (auto done = (*client)->users().enableUser(options.name); !done)
            return registry.fail(done.error());
        registry.out() << fmt::format("Enabled {}.\n", options.name);
        return kExitOk;
    }
    auto done = (*client)->users().disableUser(options.name);
    if (!done)
        return registry.fail(done.error());
    if (done->pending)
        registry.out() << fmt::format(
            "Requested disabling {}: it would leave one admin, so it takes effect when the other "
            "admin runs the same 'user disable'.\n",
            options.name);
    else
        registry.out() << fmt::format("Disabled {}.\n", options.name);
    return kExitOk;
}

struct GrantOptions {
    ClientOptions client;
    std::string user;
    std::string role;
    std::string project;
};

int runGrant(const CommandRegistry& registry, const GrantOptions& options, bool add)
{
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    if (add) {
        auto granted = (*client)->access().grantRole(options.user, options.role, options.project);
        if (!granted)
            return registry.fail(granted.error());
        registry.out() << grantSentence(options.role, options.user, options.project,
                                        granted->pending);
        return kExitOk;
    }
    auto done = (*client)->access().revokeRole(options.user, options.role, options.project);
    if (!done)
        return registry.fail(done.error());
    if (done->pending)
        registry.out() << fmt::format(
            "Requested revoking {} from {}: it would leave one admin, so it takes effect when "
            "the other admin runs the same 'grant remove'.\n",
            options.role, options.user);
    else
        registry.out() << fmt::format("Revoked {} from {}{}.\n", options.role, options.user,
                                      options.project.empty() ? ""
                                                              : " in project " + options.project);
    return kExitOk;
}

}  // namespace

// Over 100 lines: one CLI11 declaration per option of these subcommands, in the order
// `--help` prints them.
void registerClientCommands(CLI::App& app, CommandRegistry& registry)
{
    auto connectOptions = std::make_shared<ConnectOptions>();
    auto* connectCommand = app.add_subcommand(
        "connect", "Use a shared control plane: pin its CA by the fingerprint its admin gave "
                   "(`sealtrainctl init` printed it) and remember its address");
    connectCommand
        ->add_option("address", connectOptions->address,
                     "host:port or unix:/path of sealtrain-control")
        ->required();
    connectCommand
        ->add_option("--ca-fingerprint", connectOptions->fingerprint,
                     "sha256:… as `sealtrainctl init` printed it")
        ->required();
    connectCommand->add_option("--server-name", connectOptions->serverName,
                               "The name the server's certificate carries (default localhost)");
    addClientOptions(connectCommand, connectOptions->client, false);
    registry.onRun(connectCommand,
                   [&registry, connectOptions] { return connect(registry, *connectOptions); });

    auto signInOptions = std::make_shared<SignInOptions>();
    auto* signIn = app.add_subcommand(
        "sign-in", "Sign in with password and TOTP; keeps a key and the session's certificate "
                   "in the profile (with --reset-code-file: enrol, or come back after a reset)");
    signIn->add_option("--user", signInOptions->user, "Who signs in")->required();
    signIn->add_option("--password-file", signInOptions->passwordFile,
                       "Read the password from this file instead of asking");
    auto* totp = signIn->add_option("--totp-code", signInOptions->totpCode,
                                    "The current code from the authenticator app");
    addResetCompletionOptions(signIn, totp, signInOptions->resetCodeFile,
                              signInOptions->totpUriFile);
    addClientOptions(signIn, signInOptions->client, false);
    registry.onRun(signIn,
                   [&registry, signInOptions] { return runSignIn(registry, *signInOptions); });

    const auto leaf = [&](CLI::App* parent, const std::string& name, const std::string& help,
                          int (*run)(const CommandRegistry&, const ClientOptions&)) {
        auto options = std::make_shared<ClientOptions>();
        auto* command = parent->add_subcommand(name, help);
        addClientOptions(command, *options, true);
        registry.onRun(command, [&registry, options, run] { return run(registry, *options); });
    };
    leaf(&app, "whoami", "Show the signed-in user, the session and what every user should know",
         runWhoAmI);
    leaf(&app, "sign-out", "End the session; its certificate is revoked", runSignOut);
    auto passwordOptions = std::make_shared<PasswordChangeOptions>();
    auto* password = app.add_subcommand(
        "change-password", "Change your own password; your other sessions end (a wrong current "
                           "password ends this one too)");
    password->add_option("--current-password-file", passwordOptions->currentFile,
                         "Read the current password from this file instead of asking");
    password->add_option("--new-password-file", passwordOptions->newFile,
                         "Read the new password from this file instead of asking");
    addClientOptions(password, passwordOptions->client, true);
    registry.onRun(password, [&registry, passwordOptions] {
        return runChangePassword(registry, *passwordOptions);
    });
    auto* user = app.add_subcommand("user", "Users (admin)");
    user->require_subcommand(1);
    auto listOptions = std::make_shared<ClientListOptions>();
    auto* list = user->add_subcommand("list", "List users and their grants");
    list->add_flag("--json", listOptions->json, "Print JSON for scripts");
    addClientOptions(list, listOptions->client, true);
    registry.onRun(list, [&registry, listOptions] { return runUserList(registry, *listOptions); });
    auto createOptions = std::make_shared<UserOptions>();
    auto* create = user->add_subcommand(
        "create", "Create a user; prints their one-time enrolment code, with which they set their "
                  "own password and TOTP");
    create->add_option("name", createOptions->name, "The new user's name (a-z 0-9 _ -)")
        ->required();
    create->add_option("--code-file", createOptions->codeFile,
                       "Write the enrolment code to this new file (mode 0600) instead of printing "
                       "it");
    addClientOptions(create, createOptions->client, true);
    registry.onRun(create,
                   [&registry, createOptions] { return runUserCreate(registry, *createOptions); });
    for (const bool enable : {false, true}) {
        auto toggleOptions = std::make_shared<UserOptions>();
        auto* toggle =
            user->add_subcommand(enable ? "enable" : "disable",
                                 enable ? "Enable a user" : "Disable a user (ends their sessions)");
        toggle->add_option("name", toggleOptions->name, "The user")->required();
        addClientOptions(toggle, toggleOptions->client, true);
        registry.onRun(toggle, [&registry, toggleOptions, enable] {
            return runUserToggle(registry, *toggleOptions, enable);
        });
    }
    auto* grant = app.add_subcommand("grant", "Roles granted to users (admin)");
    grant->require_subcommand(1);
    for (const bool add : {true, false}) {
        auto grantOptions = std::make_shared<GrantOptions>();
        auto* command = grant->add_subcommand(add ? "add" : "remove",
                                              add ? "Grant a role (separation of duties checked)"
                                                  : "Take a role away");
        command->add_option("user", grantOptions->user, "The user")->required();
        command->add_option("role", grantOptions->role, "The role")->required();
        command->add_option("--project", grantOptions->project,
                            "Only in this project (default: everywhere)");
        addClientOptions(command, grantOptions->client, true);
        registry.onRun(command, [&registry, grantOptions, add] {
            return runGrant(registry, *grantOptions, add);
        });
    }
    registerAccessCommands(app, user, grant, registry);
}

}  // namespace sealtrain::ctl
