// How sealtrainctl's commands reach a local data directory (core/data_directory.h, which opens
// it): the unlock options, the CLI's session file, and the runners that open the directory, run
// a command's body and sign a head over what it appended.
//
// How a command gets the caller's session: it adds the unlock options and the session option to
// its subcommand (SignedInOptions::addTo), and runs its body with runSignedIn, which opens the
// data directory and hands the body the token that `sealtrainctl session sign-in` stored; the
// body passes it to the control plane's services. Every check (expiry, revocation, permission)
// happens inside the control plane, never here. Before it returns, runOnPlatform signs a head
// over the command's entries and appends it to the witness file.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/data_directory.h"
#include "sealtrain/core/identity.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace sealtrain::ctl {

// How to find and unlock a data directory.
struct UnlockOptions {
    std::filesystem::path dataDir;  // empty: defaultDataDir() (base/paths.h)
    std::optional<std::filesystem::path> passphraseFile;
    std::optional<std::filesystem::path> masterKeyFile;

    [[nodiscard]] std::filesystem::path resolvedDataDir() const;
    // The master key file, or the passphrase from --passphrase-file, else asked without echo.
    [[nodiscard]] core::KeyringUnlock keyringUnlock() const;
};

// Adds --data-dir, --passphrase-file and --master-key-file to `command`; `options` must outlive
// the parse.
void addUnlockOptions(CLI::App* command, UnlockOptions& options);
// Adds --session-file (default: the data directory's `session` file).
void addSessionOption(CLI::App* command, std::optional<std::filesystem::path>& sessionFile);

// The session token `session sign-in` stored: from `sessionFile` when given, else the data
// directory's `session` file. Unauthenticated ("sign in first") when there is none.
[[nodiscard]] Result<std::string>
readSession(const core::DataDirectory& platform,
            const std::optional<std::filesystem::path>& sessionFile = std::nullopt);
// Stores a token (sealed under the `database` KEK, mode 0600, replacing an older one).
[[nodiscard]] Result<void>
storeSession(const core::DataDirectory& platform, const std::string& token,
             const std::optional<std::filesystem::path>& sessionFile = std::nullopt);
// Deletes the stored token; no error when there is none.
[[nodiscard]] Result<void>
forgetSession(const core::DataDirectory& platform,
              const std::optional<std::filesystem::path>& sessionFile = std::nullopt);

class CommandRegistry;

// Shows a new enrollment's otpauth:// URI (it holds the TOTP secret): written to `uriFile`, a new
// file of mode 0600, when one is given, else printed to `out` with a warning.
[[nodiscard]] Result<void> showEnrollment(std::ostream& out, const core::Enrollment& enrollment,
                                          const std::string& uriFile);

// For command implementations: opens the data directory, runs `body`, then signs a head over
// its entries (also after a refusal, so that its audit entry gets a head). Prints the first
// error as one line and returns kExitFailure; kExitOk when everything succeeded.
[[nodiscard]] int runOnPlatform(const CommandRegistry& registry, const UnlockOptions& options,
                                const std::function<Result<void>(core::DataDirectory&)>& body);

// The options of a command that acts as a signed-in user: the unlock options and --session-file.
struct SignedInOptions {
    UnlockOptions unlock;
    std::optional<std::filesystem::path> sessionFile;

    void addTo(CLI::App* command)
    {
        addUnlockOptions(command, unlock);
        addSessionOption(command, sessionFile);
    }
};

// runOnPlatform with the stored session token handed to `body`.
[[nodiscard]] int runSignedIn(
    const CommandRegistry& registry, const SignedInOptions& options,
    const std::function<Result<void>(core::DataDirectory&, const std::string& session)>& body);

// runSignedIn for a command that changes one thing: `change` on the control plane as the
// signed-in user, then `done` (a line, its newline included) on standard output.
[[nodiscard]] int runSignedInChange(
    const CommandRegistry& registry, const SignedInOptions& options,
    const std::function<Result<void>(core::ControlPlane&, const std::string& session)>& change,
    const std::string& done);

// runSignedIn for a command that reads: `fetch(controlPlane, session)` as the signed-in user
// (a Result), then `print(what it found)` (a Result<void>).
template <typename Fetch, typename Print>
[[nodiscard]] int runSignedInQuery(const CommandRegistry& registry, const SignedInOptions& options,
                                   Fetch fetch, Print print)
{
    return runSignedIn(
        registry, options,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            auto found = fetch(platform.controlPlane(), session);
            if (!found)
                return found.error();
            return print(*found);
        });
}

}  // namespace sealtrain::ctl
