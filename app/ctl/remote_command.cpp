// `sealtrainctl connect` and `sealtrainctl remote …`: sealtrainctl as a client of
// sealtrain-control (issue #15, docs/api.md). connect pins the platform CA by the fingerprint an
// administrator gave (init prints it) and remembers the address; remote sign-in makes a key,
// signs in with password and TOTP and keeps the key (mode 0600) with the certificate the control
// plane issued for the session (or, with --reset-code-file, completes a reset without one); the
// other remote commands authenticate with that certificate. The access administration (roles,
// sessions, resets, break-glass) is in remote_access_command.cpp, the datasets, exports and
// sampling in remote_data_command.cpp.
// The client folder holds no platform key: only this user's session credential.
#include "access_output.h"
#include "audit_filter.h"
#include "commands.h"
#include "ctl.h"
#include "dataset_output.h"
#include "import_flags.h"
#include "input_file.h"
#include "local_platform.h"
#include "passphrase.h"
#include "remote_client.h"

#include "sealtrain/api/client.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/base/progress.h"
#include "sealtrain/dataset/import.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

inline constexpr const char* kClientDirEnvironment = "SEALTRAIN_CLIENT_DIR";

// $SEALTRAIN_CLIENT_DIR, else $XDG_CONFIG_HOME/sealtrain/client, else ~/.config/sealtrain/client.
std::filesystem::path defaultClientDir()
{
    if (const char* dir = std::getenv(kClientDirEnvironment); dir != nullptr && *dir != '\0')
        return dir;
    if (const char* config = std::getenv("XDG_CONFIG_HOME"); config != nullptr && *config != '\0')
        return std::filesystem::path(config) / "sealtrain" / "client";
    const char* home = std::getenv("HOME");
    return std::filesystem::path(home != nullptr ? home : ".") / ".config" / "sealtrain" / "client";
}

// The endpoint `connect` stored.
Result<api::Endpoint> loadEndpoint(const std::filesystem::path& dir)
{
    auto text = readWholeFile(dir / "endpoint.json");
    if (!text)
        return Error(ErrorCode::NotFound,
                     fmt::format("This client is not connected to a control plane (no '{}'); run "
                                 "`sealtrainctl connect ADDRESS --ca-fingerprint FINGERPRINT`.",
                                 (dir / "endpoint.json").string()));
    auto ca = readWholeFile(dir / "ca.crt");
    if (!ca)
        return ca.error();
    const auto json = nlohmann::json::parse(*text, nullptr, false);
    if (json.is_discarded() || !json.contains("address") || !json.contains("server_name"))
        return Error(ErrorCode::Integrity,
                     fmt::format("'{}' is not a client endpoint file; run `sealtrainctl connect` "
                                 "again.",
                                 (dir / "endpoint.json").string()));
    return api::Endpoint{json["address"].get<std::string>(), json["server_name"].get<std::string>(),
                         *ca};
}

Result<std::string> chosenUser(const ClientOptions& options)
{
    if (!options.user.empty())
        return options.user;
    if (const char* user = std::getenv(kUserEnvironment); user != nullptr && *user != '\0')
        return std::string(user);
    return Error(ErrorCode::InvalidArgument,
                 "Say whose session to use: --as USER, or set SEALTRAIN_USER.");
}

// The signed-in user's key and certificate.
Result<api::ClientIdentity> loadIdentity(const std::filesystem::path& dir, const std::string& user)
{
    auto keyText = readWholeFile(dir / (user + ".key"));
    auto certificate = readWholeFile(dir / (user + ".crt"));
    if (!keyText || !certificate)
        return Error(ErrorCode::NotFound,
                     fmt::format("'{}' has not signed in from this client; run `sealtrainctl "
                                 "remote sign-in --user {}`.",
                                 user, user));
    auto key = crypto::SecretBytes::fromBytes(
        {reinterpret_cast<const std::uint8_t*>(keyText->data()), keyText->size()});
    keyText->assign(keyText->size(), '\0');
    if (!key)
        return key.error();
    return api::ClientIdentity{std::move(key).value(), std::move(certificate).value()};
}

}  // namespace

Result<void> writeText(const std::filesystem::path& path, const std::string& text, unsigned mode)
{
    return writeFileAtomically(path,
                               {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()},
                               AtomicFileSink::Overwrite::Allow, mode);
}

Result<void> makePrivateDir(const std::filesystem::path& dir)
{
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!ec)
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::replace, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot make the folder '{}': {}; check "
                                                "the path and its permissions.",
                                                dir.string(), ec.message()));
    return success();
}

std::filesystem::path ClientOptions::dir() const
{
    return clientDir.empty() ? defaultClientDir() : clientDir;
}

void addClientOptions(CLI::App* command, ClientOptions& options, bool withUser)
{
    command->add_option("--client-dir", options.clientDir,
                        "Where this client keeps the pinned CA and its session credentials "
                        "(default $SEALTRAIN_CLIENT_DIR or ~/.config/sealtrain/client)");
    if (withUser)
        command->add_option("--as", options.user, "Whose session to use (default $SEALTRAIN_USER)");
}

Result<std::unique_ptr<api::ControlClient>> signedInClient(const ClientOptions& options)
{
    auto endpoint = loadEndpoint(options.dir());
    if (!endpoint)
        return endpoint.error();
    auto user = chosenUser(options);
    if (!user)
        return user.error();
    auto identity = loadIdentity(options.dir(), *user);
    if (!identity)
        return identity.error();
    return api::ControlClient::connect(*endpoint, &*identity);
}

int runRemoteChange(const CommandRegistry& registry, const ClientOptions& options,
                    const std::function<Result<void>(api::ControlClient&)>& change,
                    const std::string& done)
{
    auto client = signedInClient(options);
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
    auto ca =
        api::fetchPinnedCaCertificate(options.address, options.serverName, options.fingerprint);
    if (!ca)
        return registry.fail(ca.error());
    const std::filesystem::path dir = options.client.dir();
    if (auto made = makePrivateDir(dir); !made)
        return registry.fail(made.error());
    const nlohmann::json endpoint{{"address", options.address},
                                  {"server_name", options.serverName}};
    if (auto written = writeText(dir / "ca.crt", *ca, 0644U); !written)
        return registry.fail(written.error());
    if (auto written = writeText(dir / "endpoint.json", endpoint.dump(2) + "\n", 0644U); !written)
        return registry.fail(written.error());
    registry.out() << fmt::format("Connected to {}; its CA ({}) is pinned in {}.\n",
                                  options.address, options.fingerprint, dir.string());
    return kExitOk;
}

struct RemoteSignInOptions {
    ClientOptions client;
    std::string user;
    std::string passwordFile;
    std::string totpCode;
    std::string resetCodeFile;
    std::string totpUriFile;
};

// The first step back in after a reset, as `session sign-in --reset-code-file` does it locally:
// the one-time code, a new password, and the new TOTP secret shown once. No session, and no
// certificate: the user signs in next with the new password and a code.
int remoteCompleteReset(const CommandRegistry& registry, const RemoteSignInOptions& options,
                        const api::Endpoint& endpoint)
{
    auto completion =
        readResetCompletion(options.user, options.resetCodeFile, options.passwordFile);
    if (!completion)
        return registry.fail(completion.error());
    auto client = api::ControlClient::connect(endpoint, nullptr);
    if (!client)
        return registry.fail(client.error());
    auto uri = (*client)->completeReset(options.user, completion->code, completion->password);
    if (!uri)
        return registry.fail(uri.error());
    if (auto shown = showCompletedReset(registry.out(), {options.user, *uri}, options.totpUriFile);
        !shown)
        return registry.fail(shown.error());
    return kExitOk;
}

int remoteSignIn(const CommandRegistry& registry, const RemoteSignInOptions& options)
{
    auto endpoint = loadEndpoint(options.client.dir());
    if (!endpoint)
        return registry.fail(endpoint.error());
    if (!options.resetCodeFile.empty())
        return remoteCompleteReset(registry, options, *endpoint);
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
    auto client = api::ControlClient::connect(*endpoint, nullptr);
    if (!client)
        return registry.fail(client.error());
    auto signedIn = (*client)->signIn(options.user, *password, code);
    if (!signedIn)
        return registry.fail(signedIn.error());
    const std::filesystem::path dir = options.client.dir();
    if (auto written = writeFileAtomically(dir / (options.user + ".key"),
                                           signedIn->identity.privateKeyPem.bytes(),
                                           AtomicFileSink::Overwrite::Allow);
        !written)
        return registry.fail(written.error());
    if (auto written =
            writeText(dir / (options.user + ".crt"), signedIn->identity.certificatePem, 0644U);
        !written)
        return registry.fail(written.error());
    registry.out() << fmt::format("Signed in as {} (session {}); use --as {} or "
                                  "SEALTRAIN_USER={} with the remote commands.\n",
                                  options.user, signedIn->sessionId, options.user, options.user);
    return kExitOk;
}

int remoteWhoAmI(const CommandRegistry& registry, const ClientOptions& options)
{
    auto client = signedInClient(options);
    if (!client)
        return registry.fail(client.error());
    auto who = (*client)->whoAmI();
    if (!who)
        return registry.fail(who.error());
    registry.out() << fmt::format("{} (session {})\n", who->user, who->sessionId);
    return kExitOk;
}

int remoteSignOut(const CommandRegistry& registry, const ClientOptions& options)
{
    auto client = signedInClient(options);
    if (!client)
        return registry.fail(client.error());
    if (auto ended = (*client)->signOut(); !ended)
        return registry.fail(ended.error());
    const std::string user = chosenUser(options).value();
    std::error_code ec;
    std::filesystem::remove(options.dir() / (user + ".key"), ec);
    std::filesystem::remove(options.dir() / (user + ".crt"), ec);
    registry.out() << fmt::format("Signed out {}; the session's certificate is revoked.\n", user);
    return kExitOk;
}

int remoteUserList(const CommandRegistry& registry, const ClientOptions& options)
{
    auto client = signedInClient(options);
    if (!client)
        return registry.fail(client.error());
    auto users = (*client)->listUsers();
    if (!users)
        return registry.fail(users.error());
    for (const api::UserSummary& user : *users)
        registry.out() << fmt::format("{}{}\t{}\n", user.name, user.disabled ? " (disabled)" : "",
                                      fmt::join(user.grants, ","));
    return kExitOk;
}

struct RemoteUserOptions {
    ClientOptions client;
    std::string name;
    std::string codeFile;
};

int remoteUserCreate(const CommandRegistry& registry, const RemoteUserOptions& options)
{
    // Checked before the call, so a taken file does not leave a user whose code is lost.
    if (!options.codeFile.empty() && std::filesystem::exists(options.codeFile))
        return registry.fail(Error(ErrorCode::AlreadyExists,
                                   fmt::format("The code file '{}' already exists; choose a new "
                                               "file.",
                                               options.codeFile)));
    auto client = signedInClient(options.client);
    if (!client)
        return registry.fail(client.error());
    auto code = (*client)->createUser(options.name);
    if (!code)
        return registry.fail(code.error());
    if (auto shown = showNewUser(registry.out(), {options.name, *code}, options.codeFile,
                                 CommandTree::Remote);
        !shown)
        return registry.fail(shown.error());
    return kExitOk;
}

int remoteUserToggle(const CommandRegistry& registry, const RemoteUserOptions& options, bool enable)
{
    auto client = signedInClient(options.client);
    if (!client)
        return registry.fail(client.error());
    auto done = enable ? (*client)->enableUser(options.name) : (*client)->disableUser(options.name);
    if (!done)
        return registry.fail(done.error());
    registry.out() << fmt::format("{} {}.\n", enable ? "Enabled" : "Disabled", options.name);
    return kExitOk;
}

struct RemoteGrantOptions {
    ClientOptions client;
    std::string user;
    std::string role;
    std::string project;
};

int remoteGrant(const CommandRegistry& registry, const RemoteGrantOptions& options, bool add)
{
    auto client = signedInClient(options.client);
    if (!client)
        return registry.fail(client.error());
    if (add) {
        auto granted = (*client)->grantRole(options.user, options.role, options.project);
        if (!granted)
            return registry.fail(granted.error());
        registry.out() << grantSentence(options.role, options.user, options.project,
                                        granted->pending);
        return kExitOk;
    }
    auto done = (*client)->revokeRole(options.user, options.role, options.project);
    if (!done)
        return registry.fail(done.error());
    registry.out() << fmt::format("Revoked {} from {}{}.\n", options.role, options.user,
                                  options.project.empty() ? "" : " in project " + options.project);
    return kExitOk;
}

}  // namespace

void registerRemoteCommands(CLI::App& app, CommandRegistry& registry)
{
    auto connectOptions = std::make_shared<ConnectOptions>();
    auto* connectCommand = app.add_subcommand(
        "connect", "Pin a control plane's CA by its fingerprint (from `sealtrainctl init` or its "
                   "admin) and remember its address, for the remote commands");
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

    auto* remote = app.add_subcommand(
        "remote", "Commands that run on sealtrain-control over TLS (after `sealtrainctl connect`)");
    remote->require_subcommand(1);

    auto signInOptions = std::make_shared<RemoteSignInOptions>();
    auto* signIn = remote->add_subcommand(
        "sign-in", "Sign in with password and TOTP; keeps a key and the session's certificate");
    signIn->add_option("--user", signInOptions->user, "Who signs in")->required();
    signIn->add_option("--password-file", signInOptions->passwordFile,
                       "Read the password from this file instead of asking");
    auto* totp = signIn->add_option("--totp-code", signInOptions->totpCode,
                                    "The current code from the authenticator app");
    addResetCompletionOptions(signIn, totp, signInOptions->resetCodeFile,
                              signInOptions->totpUriFile);
    addClientOptions(signIn, signInOptions->client, false);
    registry.onRun(signIn,
                   [&registry, signInOptions] { return remoteSignIn(registry, *signInOptions); });

    const auto leaf = [&](CLI::App* parent, const std::string& name, const std::string& help,
                          int (*run)(const CommandRegistry&, const ClientOptions&)) {
        auto options = std::make_shared<ClientOptions>();
        auto* command = parent->add_subcommand(name, help);
        addClientOptions(command, *options, true);
        registry.onRun(command, [&registry, options, run] { return run(registry, *options); });
    };
    leaf(remote, "whoami", "Show the signed-in user and session", remoteWhoAmI);
    leaf(remote, "sign-out", "End the session; its certificate is revoked", remoteSignOut);
    auto* user = remote->add_subcommand("user", "Users (admin)");
    user->require_subcommand(1);
    leaf(user, "list", "List users and their grants", remoteUserList);
    auto createOptions = std::make_shared<RemoteUserOptions>();
    auto* create = user->add_subcommand(
        "create", "Create a user; prints their one-time enrolment code, with which they set their "
                  "own password and TOTP");
    create->add_option("name", createOptions->name, "The new user's name (a-z 0-9 _ -)")
        ->required();
    create->add_option("--code-file", createOptions->codeFile,
                       "Write the enrolment code to this new file (mode 0600) instead of printing "
                       "it");
    addClientOptions(create, createOptions->client, true);
    registry.onRun(
        create, [&registry, createOptions] { return remoteUserCreate(registry, *createOptions); });
    for (const bool enable : {false, true}) {
        auto toggleOptions = std::make_shared<RemoteUserOptions>();
        auto* toggle =
            user->add_subcommand(enable ? "enable" : "disable",
                                 enable ? "Enable a user" : "Disable a user (ends their sessions)");
        toggle->add_option("name", toggleOptions->name, "The user")->required();
        addClientOptions(toggle, toggleOptions->client, true);
        registry.onRun(toggle, [&registry, toggleOptions, enable] {
            return remoteUserToggle(registry, *toggleOptions, enable);
        });
    }
    auto* grant = remote->add_subcommand("grant", "Roles granted to users (admin)");
    grant->require_subcommand(1);
    for (const bool add : {true, false}) {
        auto grantOptions = std::make_shared<RemoteGrantOptions>();
        auto* command = grant->add_subcommand(add ? "add" : "remove",
                                              add ? "Grant a role (separation of duties checked)"
                                                  : "Take a role away");
        command->add_option("user", grantOptions->user, "The user")->required();
        command->add_option("role", grantOptions->role, "The role")->required();
        command->add_option("--project", grantOptions->project,
                            "Only in this project (default: everywhere)");
        addClientOptions(command, grantOptions->client, true);
        registry.onRun(command, [&registry, grantOptions, add] {
            return remoteGrant(registry, *grantOptions, add);
        });
    }
    registerRemoteAccessCommands(remote, user, grant, registry);
    registerRemoteJobCommands(remote, registry);
    registerRemoteWorkerCommands(remote, registry);
    registerRemoteDataCommands(remote, registry);
}

}  // namespace sealtrain::ctl
