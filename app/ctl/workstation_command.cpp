// `sealtrainctl init|start|stop|status`: a workstation is a control plane of one's own on a local
// socket (docs/operations/control-daemon.md, "A workstation"). `init` creates the data directory
// (keyring, database, signing key, platform CA, first admin: docs/operations/data-directory.md)
// and names it in the client profile; `start` starts its sealtrain-control, which alone unlocks
// it (the passphrase goes on a pipe), and leaves it running; `stop` asks it to finish. Every
// other command is a client of that control plane, as of a shared one.
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "list_output.h"
#include "passphrase.h"
#include "secret_output.h"

#include "sealtrain/api/data_directory_tools.h"
#include "sealtrain/api/profile.h"
#include "sealtrain/base/paths.h"
#include "sealtrain/crypto/keyring.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {

namespace {

// How the keyring is unlocked: a passphrase (from a file, else asked) or a master key file.
struct UnlockFlags {
    std::string passphraseFile;
    std::string masterKeyFile;

    void addTo(CLI::App* command, const std::string& passphraseHelp)
    {
        auto* passphrase = command->add_option("--passphrase-file", passphraseFile, passphraseHelp);
        auto* master = command->add_option(
            "--master-key-file", masterKeyFile,
            "Unlock with a master key file instead of a passphrase (headless machines)");
        passphrase->excludes(master);
    }
};

struct InitOptions {
    ClientOptions client;
    std::string dataDir;
    UnlockFlags unlock;
    std::string admin;
    std::string adminPasswordFile;
    std::string totpUriFile;
    std::uint64_t argon2Ops = crypto::kArgon2Default.opsLimit;
    std::uint64_t argon2MemMiB = crypto::kArgon2Default.memLimitBytes >> 20;
    bool existing = false;

    [[nodiscard]] std::filesystem::path resolvedDataDir() const
    {
        return dataDir.empty() ? defaultDataDir() : std::filesystem::path(dataDir);
    }
};

// The new directory's path, unlock and first admin; asks for the passphrase and the password
// that no file gives.
Result<api::NewDataDirectoryRequest> newDataDirectory(const InitOptions& options)
{
    api::NewDataDirectoryRequest request;
    request.dataDir = options.resolvedDataDir();
    request.admin = options.admin;
    request.argon2Ops = options.argon2Ops;
    request.argon2MemMiB = options.argon2MemMiB;
    if (!options.unlock.masterKeyFile.empty()) {
        request.masterKeyFile = options.unlock.masterKeyFile;
    } else {
        auto passphrase =
            obtainPassphrase(options.unlock.passphraseFile, "New keyring passphrase", true);
        if (!passphrase)
            return passphrase.error();
        request.passphrase = std::move(*passphrase);
    }
    auto password =
        obtainPassphrase(options.adminPasswordFile, fmt::format("Password for {}", options.admin),
                         true, "--admin-password-file FILE");
    if (!password)
        return password.error();
    request.adminPassword = std::move(*password);
    return request;
}

// The platform CA's fingerprint, which clients of another machine pin (sealtrainctl connect
// --ca-fingerprint), and `dataDir` named in this client's profile.
int nameInProfile(const CommandRegistry& registry, const InitOptions& options,
                  const std::filesystem::path& dataDir, const std::string& admin,
                  const std::string& fingerprint)
{
    registry.out() << fmt::format("Platform CA fingerprint: {}\n", fingerprint);
    const api::Profile profile = options.client.profile();
    if (auto named = profile.useWorkstation({dataDir, profile.folder() / "run"}); !named)
        return registry.fail(named.error());
    registry.out() << fmt::format("This client ({}) now uses it. Next: sealtrainctl start, then "
                                  "sealtrainctl sign-in --user {}\n",
                                  profile.folder().string(), admin);
    return kExitOk;
}

// Over the data directory tools of sealtrain-control (`init`, `describe`): this client never
// opens the data directory itself.
int initDataDirectory(const CommandRegistry& registry, const InitOptions& options)
{
    auto executable = controlExecutable();
    if (!executable)
        return registry.fail(executable.error());
    const api::DataDirectoryTools tools(*executable);
    if (options.existing) {
        auto fingerprint = tools.caFingerprint(options.resolvedDataDir());
        if (!fingerprint)
            return registry.fail(fingerprint.error());
        return nameInProfile(registry, options, options.resolvedDataDir(),
                             options.admin.empty() ? std::string("NAME") : options.admin,
                             *fingerprint);
    }
    if (options.admin.empty())
        return registry.failUsage("A new data directory needs its first admin: --admin NAME. Run "
                                  "'sealtrainctl init --help' for the options.");
    auto request = newDataDirectory(options);
    if (!request)
        return registry.fail(request.error());
    // Checked before the slow part so a taken URI file does not cost a half-made directory.
    if (!options.totpUriFile.empty() && std::filesystem::exists(options.totpUriFile))
        return registry.fail(Error(ErrorCode::AlreadyExists,
                                   fmt::format("The TOTP URI file '{}' already exists; choose a "
                                               "new file.",
                                               options.totpUriFile)));
    auto created = tools.init(*request);
    if (!created)
        return registry.fail(created.error());
    registry.out() << fmt::format("Initialised {} with the admin '{}'.\n",
                                  request->dataDir.string(), created->admin);
    if (auto shown = showEnrollment(registry.out(), created->admin, created->otpauthUri,
                                    options.totpUriFile);
        !shown)
        return registry.fail(shown.error());
    return nameInProfile(registry, options, request->dataDir, created->admin,
                         created->caFingerprint);
}

struct StartOptions {
    ClientOptions client;
    UnlockFlags unlock;
    std::vector<std::string> daemonArguments;
};

int start(const CommandRegistry& registry, const StartOptions& options)
{
    const api::Profile profile = options.client.profile();
    auto workstation = profile.workstation();
    if (!workstation)
        return registry.fail(workstation.error());
    if (!*workstation)
        return registry.fail(Error(ErrorCode::NotFound,
                                   "This client names no data directory of its own; run "
                                   "`sealtrainctl init` first (a shared control plane is started "
                                   "by its own operators)."));
    if (auto running = profile.workstationPid()) {
        registry.out() << fmt::format("The control plane of {} is already running (process "
                                      "{}).\n",
                                      (*workstation)->dataDir.string(), *running);
        return kExitOk;
    }
    auto executable = controlExecutable();
    if (!executable)
        return registry.fail(executable.error());
    std::vector<std::string> arguments;
    crypto::SecretBytes passphrase;
    if (!options.unlock.masterKeyFile.empty()) {
        arguments = {"--master-key-file", options.unlock.masterKeyFile};
    } else {
        auto read = obtainPassphrase(
            options.unlock.passphraseFile,
            fmt::format("Keyring passphrase for {}", (*workstation)->dataDir.string()), false);
        if (!read)
            return registry.fail(read.error());
        passphrase = std::move(*read);
    }
    arguments.insert(arguments.end(), options.daemonArguments.begin(),
                     options.daemonArguments.end());
    auto started = profile.startWorkstation(*executable, std::move(passphrase), arguments);
    if (!started)
        return registry.fail(started.error());
    registry.out() << fmt::format("Started the control plane of {} (process {}) on {}; its log is "
                                  "{}.\n",
                                  (*workstation)->dataDir.string(), *started,
                                  profile.endpoint()->address,
                                  ((*workstation)->runFolder / "control.log").string());
    return kExitOk;
}

int stop(const CommandRegistry& registry, const ClientOptions& options)
{
    const api::Profile profile = options.profile();
    auto workstation = profile.workstation();
    if (!workstation)
        return registry.fail(workstation.error());
    auto stopped = profile.stopWorkstation();
    if (!stopped)
        return registry.fail(stopped.error());
    const std::string dataDir = (*workstation)->dataDir.string();
    registry.out() << (*stopped
                           ? fmt::format("Stopped the control plane of {}; it signed its last "
                                         "audit entries.\n",
                                         dataDir)
                           : fmt::format("The control plane of {} was not running.\n", dataDir));
    return kExitOk;
}

struct StatusOptions {
    ClientOptions client;
    bool json = false;
};

int status(const CommandRegistry& registry, const StatusOptions& options)
{
    const api::Profile profile = options.client.profile();
    auto endpoint = profile.endpoint();
    auto workstation = profile.workstation();
    if (!workstation)
        return registry.fail(workstation.error());
    const auto pid = profile.workstationPid();
    nlohmann::json state{{"profile", profile.folder().string()},
                         {"address", endpoint ? endpoint->address : ""}};
    if (*workstation) {
        state["data_dir"] = (*workstation)->dataDir.string();
        state["running"] = pid.has_value();
        if (pid)
            state["pid"] = *pid;
    }
    nlohmann::json sessions = nlohmann::json::array();
    for (const api::StoredSession& session : profile.sessions())
        sessions.push_back({{"user", session.user}, {"expires_unix", session.expiresUnix}});
    state["sessions"] = sessions;
    if (options.json) {
        registry.out() << state.dump(2) << '\n';
        return kExitOk;
    }
    auto& out = registry.out();
    out << fmt::format("Profile:       {}\n", profile.folder().string());
    if (!endpoint) {
        out << "Control plane: none yet (sealtrainctl init, or sealtrainctl connect)\n";
        return kExitOk;
    }
    if (*workstation)
        out << fmt::format("Control plane: {} on {}, {}\n", (*workstation)->dataDir.string(),
                           endpoint->address,
                           pid ? fmt::format("running (process {})", *pid)
                               : std::string("stopped (sealtrainctl start)"));
    else
        out << fmt::format("Control plane: {} (shared)\n", endpoint->address);
    if (profile.sessions().empty())
        out << "Signed in:     nobody (sealtrainctl sign-in --user NAME)\n";
    for (const api::StoredSession& session : profile.sessions())
        out << fmt::format("Signed in:     {} {}\n", session.user,
                           session.expiresUnix > 0 ? "until " + utcText(session.expiresUnix)
                                                   : std::string("(ended: sign in again)"));
    return kExitOk;
}

}  // namespace

void registerWorkstationCommands(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<InitOptions>();
    auto* init = app.add_subcommand(
        "init", "Create a data directory (keyring, encrypted database, signing key, platform CA, "
                "first admin) and make it this client's own control plane");
    init->add_option("--data-dir", options->dataDir,
                     "Where to create it (default: " + defaultDataDir().string() + ")");
    options->unlock.addTo(init, "Read the new keyring passphrase from this file's first line "
                                "(mode 0600) instead of asking");
    init->add_option("--admin", options->admin,
                     "The first admin's user name (a-z 0-9 _ -); required for a new directory");
    init->add_flag("--existing", options->existing,
                   "Create nothing: make an existing data directory (--data-dir) this client's "
                   "own control plane, as after a restore or from a new profile");
    init->add_option("--admin-password-file", options->adminPasswordFile,
                     "Read the admin's password from this file's first line (mode 0600) instead "
                     "of asking");
    init->add_option("--totp-uri-file", options->totpUriFile,
                     "Write the admin's otpauth:// URI to this new file (mode 0600) instead of "
                     "printing it");
    init->add_option("--argon2-ops", options->argon2Ops,
                     "Argon2id passes for the keyring (floor 2)")
        ->capture_default_str();
    init->add_option("--argon2-mem-mib", options->argon2MemMiB,
                     "Argon2id memory in MiB for the keyring (floor 64)")
        ->capture_default_str();
    addClientOptions(init, options->client, false);
    init->footer("Example: sealtrainctl init --admin alice\n"
                 "Then: sealtrainctl start; sealtrainctl sign-in --user alice\n"
                 "An existing one: sealtrainctl init --existing --data-dir DIR");
    registry.onRun(init, [options, &registry] { return initDataDirectory(registry, *options); });

    auto startOptions = std::make_shared<StartOptions>();
    auto* startCommand = app.add_subcommand(
        "start", "Start the control plane of this client's data directory (sealtrain-control, "
                 "which alone unlocks it) and leave it running");
    startOptions->unlock.addTo(startCommand, "Read the keyring passphrase from this file's first "
                                             "line (mode 0600) instead of asking");
    addClientOptions(startCommand, startOptions->client, false);
    startCommand->add_option("DAEMON-OPTIONS", startOptions->daemonArguments,
                             "After --: options for sealtrain-control (see sealtrain-control "
                             "--help), such as --heartbeat-ms 1000");
    startCommand->footer("It also starts by itself, asking for the passphrase, when a command "
                         "needs it. Its messages: the run folder's control.log.");
    registry.onRun(startCommand,
                   [startOptions, &registry] { return start(registry, *startOptions); });

    auto stopOptions = std::make_shared<ClientOptions>();
    auto* stopCommand = app.add_subcommand(
        "stop", "Stop this client's own control plane: it finishes the calls in flight and signs "
                "its last audit entries");
    addClientOptions(stopCommand, *stopOptions, false);
    registry.onRun(stopCommand, [stopOptions, &registry] { return stop(registry, *stopOptions); });

    auto statusOptions = std::make_shared<StatusOptions>();
    auto* statusCommand = app.add_subcommand(
        "status", "Which control plane this client uses, whether it runs, and who is signed in");
    statusCommand->add_flag("--json", statusOptions->json, "Print JSON for scripts");
    addClientOptions(statusCommand, statusOptions->client, false);
    registry.onRun(statusCommand,
                   [statusOptions, &registry] { return status(registry, *statusOptions); });
}

}  // namespace sealtrain::ctl
