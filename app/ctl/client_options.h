// What every command that talks to sealtrain-control shares: the profile's options (--client-dir,
// --as), the client signed in as the chosen user through the profile (api/profile.h), and the
// runner of a command that changes one thing on the control plane. On a workstation, a command
// that needs the control plane starts it when it is not running (asking for the passphrase on
// the terminal), as ssh-agent and gpg-agent do.
#pragma once

#include "commands.h"

#include "sealtrain/api/client.h"
#include "sealtrain/api/profile.h"
#include "sealtrain/base/result.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

namespace sealtrain::audit {
struct ExportFilter;
}  // namespace sealtrain::audit

namespace sealtrain::ctl {

struct ClientOptions {
    std::filesystem::path clientDir;
    std::string user;  // --as, else SEALTRAIN_USER, else the one user signed in

    // The profile in --client-dir, else $SEALTRAIN_CLIENT_DIR, else the XDG default.
    [[nodiscard]] api::Profile profile() const;
};

// Adds --client-dir and, when `withUser`, --as to `command`; `options` must outlive the parse.
void addClientOptions(CLI::App* command, ClientOptions& options, bool withUser);

// `text` written whole to `path` with `mode` (replacing what was there).
[[nodiscard]] Result<void> writeText(const std::filesystem::path& path, const std::string& text,
                                     unsigned mode);

// sealtrain-control: $SEALTRAIN_CONTROL, else beside this program (installed) or in the build
// tree; NotFound, saying how to name it, otherwise.
[[nodiscard]] Result<std::filesystem::path> controlExecutable();
// sealtrain-train, found the same way ($SEALTRAIN_TRAIN): `doctor` asks it for its libraries.
[[nodiscard]] Result<std::filesystem::path> trainerExecutable();

// On a workstation whose control plane is not running: starts it, asking for the keyring
// passphrase on the terminal, and says so on `err`; without a terminal, a sentence that says to
// run `sealtrainctl start`. Nothing to do for a profile connected to a shared control plane.
[[nodiscard]] Result<void> ensureControlPlane(const api::Profile& profile, std::ostream& err);

// A client for `options`' user, authenticated by their session certificate (ensureControlPlane
// first).
[[nodiscard]] Result<std::unique_ptr<api::ControlClient>>
signedInClient(const ClientOptions& options, std::ostream& err);

// The shape of most commands (issue #50, item 5): sign in as `options` say, make one call with the
// client (`call` returns a Result<T>), and hand its answer to `print`, which writes it and returns
// the exit code. The first error as one line and kExitFailure.
template <typename Call, typename Print>
[[nodiscard]] int runClientCall(const CommandRegistry& registry, const ClientOptions& options,
                                const Call& call, const Print& print)
{
    auto client = signedInClient(options, registry.err());
    if (!client)
        return registry.fail(client.error());
    auto answer = call(**client);
    if (!answer)
        return registry.fail(answer.error());
    return print(*answer);
}

// `change` with the signed-in client, then `done` (a line, its newline included) on standard
// output; the first error as one line and kExitFailure otherwise.
[[nodiscard]] int runClientChange(const CommandRegistry& registry, const ClientOptions& options,
                                  const std::function<Result<void>(api::ControlClient&)>& change,
                                  const std::string& done);

// `role …`, `session list|revoke`, `user reset` under `user` and `grant break-glass` under
// `grant` (access_command.cpp).
void registerAccessCommands(CLI::App& app, CLI::App* user, CLI::App* grant,
                            CommandRegistry& registry);

// `audit export` from the control plane, as a signed-in auditor: the entries `filter` selects
// under a head signed for them, written to `out` (data_command.cpp).
[[nodiscard]] int exportFromControlPlane(const CommandRegistry& registry,
                                         const ClientOptions& options,
                                         const audit::ExportFilter& filter, const std::string& out);

// "2026-12-01T03:58:47Z" (job_command.cpp).
[[nodiscard]] std::string utcText(std::int64_t unixSeconds);

}  // namespace sealtrain::ctl
