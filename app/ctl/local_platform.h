// How sealtrainctl's commands reach a local data directory (core/data_directory.h, which opens
// it): the unlock options, the CLI's session file, and the runners that open the directory, run
// a command's body and sign a head over what it appended.
//
// How a command gets the caller's session: it adds the unlock options and the session options to
// its subcommand (SignedInOptions::addTo), and runs its body with runSignedIn, which opens the
// data directory and hands the body the token that `sealtrainctl session sign-in` stored for the
// chosen user (each user has a session file of their own: sessions/<user>.session); the
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
// Adds --session-file (default: the signed-in user's file in the data directory).
void addSessionFileOption(CLI::App* command, std::optional<std::filesystem::path>& sessionFile);

// The environment variable that chooses the signed-in user when --as is not given.
inline constexpr const char* kUserEnvironment = "SEALTRAIN_USER";

// `user`'s session file in the data directory: sessions/<user>.session.
[[nodiscard]] std::filesystem::path userSessionFile(const core::DataDirectory& platform,
                                                    const std::string& user);

// The session token stored in `file` (sealed under the `database` KEK).
[[nodiscard]] Result<std::string> readSession(const core::DataDirectory& platform,
                                              const std::filesystem::path& file);
// Stores a token (sealed under the `database` KEK, mode 0600, replacing an older one; the
// sessions folder is made with mode 0700).
[[nodiscard]] Result<void> storeSession(const core::DataDirectory& platform,
                                        const std::string& token,
                                        const std::filesystem::path& file);
// Deletes the stored token; no error when there is none.
[[nodiscard]] Result<void> forgetSession(const std::filesystem::path& file);

class CommandRegistry;

// Writes `secret` and a newline to `path`, a new file of mode 0600 (refused when it exists);
// `what` names the secret in the error ("TOTP URI").
[[nodiscard]] Result<void> writeNewSecretFile(const std::filesystem::path& path,
                                              const std::string& secret, std::string_view what);

// Shows a secret meant for one person: written to `file` (writeNewSecretFile, `what` naming it)
// and then the line `written` printed, when a file is given; else the line `printed` and the
// secret indented on the next line.
[[nodiscard]] Result<void> showSecret(std::ostream& out, const std::string& secret,
                                      const std::string& file, std::string_view what,
                                      const std::string& printed, const std::string& written);

// Shows a new enrollment's otpauth:// URI (it holds the TOTP secret): written to `uriFile`, a new
// file of mode 0600, when one is given, else printed to `out` with a warning.
[[nodiscard]] Result<void> showEnrollment(std::ostream& out, const core::Enrollment& enrollment,
                                          const std::string& uriFile);

// For command implementations: opens the data directory, runs `body`, then signs a head over
// its entries (also after a refusal, so that its audit entry gets a head). Prints the first
// error as one line and returns kExitFailure; kExitOk when everything succeeded.
[[nodiscard]] int runOnPlatform(const CommandRegistry& registry, const UnlockOptions& options,
                                const std::function<Result<void>(core::DataDirectory&)>& body);

// The options of a command that acts as a signed-in user: the unlock options, --session-file and
// --as (whose session, when several users are signed in to the data directory).
struct SignedInOptions {
    UnlockOptions unlock;
    std::optional<std::filesystem::path> sessionFile;
    std::string as;

    void addTo(CLI::App* command);
};

// The session file a command acts with: --session-file when given; else the file of the user
// --as or kUserEnvironment names; else the only session file in the data directory.
// Unauthenticated, in one sentence that says what to do, when there is none, or several and no
// choice.
[[nodiscard]] Result<std::filesystem::path> chosenSessionFile(const core::DataDirectory& platform,
                                                              const SignedInOptions& options);

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
