// The CLI side of a local data directory: its options, the session file, and the runners that
// open it (core::DataDirectory does the opening) around a command's body.
#include "local_platform.h"

#include "commands.h"
#include "ctl.h"
#include "passphrase.h"

#include "sealtrain/base/paths.h"

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <system_error>
#include <vector>

namespace sealtrain::ctl {

namespace {

constexpr std::string_view kSessionSuffix = ".session";

std::filesystem::path sessionsFolder(const core::DataDirectory& platform)
{
    return platform.path() / std::string(core::datadir::kSessions);
}

// The users with a session file in the data directory, sorted.
std::vector<std::string> signedInUsers(const core::DataDirectory& platform)
{
    std::vector<std::string> users;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(sessionsFolder(platform), ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file(ec) && name.ends_with(kSessionSuffix))
            users.push_back(name.substr(0, name.size() - kSessionSuffix.size()));
    }
    std::sort(users.begin(), users.end());
    return users;
}

Error notSignedIn(const core::DataDirectory& platform, const std::string& user)
{
    const std::string dir = platform.path().string();
    return Error(ErrorCode::Unauthenticated,
                 fmt::format("{} not signed in to '{}'; run 'sealtrainctl session sign-in "
                             "--data-dir {} --user {}' first.",
                             user.empty() ? "You are" : fmt::format("The user '{}' is", user), dir,
                             dir, user.empty() ? "NAME" : user));
}

// --as, else the environment; empty when neither names a user.
std::string chosenUser(const SignedInOptions& options)
{
    if (!options.as.empty())
        return options.as;
    const char* fromEnvironment = std::getenv(kUserEnvironment);
    return fromEnvironment != nullptr ? std::string(fromEnvironment) : std::string();
}

}  // namespace

std::filesystem::path UnlockOptions::resolvedDataDir() const
{
    return dataDir.empty() ? defaultDataDir() : dataDir;
}

core::KeyringUnlock UnlockOptions::keyringUnlock() const
{
    const std::string file = passphraseFile ? passphraseFile->string() : std::string();
    return {masterKeyFile, [file] { return obtainPassphrase(file, "Keyring passphrase", false); }};
}

void addUnlockOptions(CLI::App* command, UnlockOptions& options)
{
    command->add_option_function<std::string>(
        "--data-dir", [&options](const std::string& value) { options.dataDir = value; },
        "Data directory (default: " + defaultDataDir().string() + ")");
    auto* passphrase = command->add_option_function<std::string>(
        "--passphrase-file",
        [&options](const std::string& value) { options.passphraseFile = value; },
        "Read the keyring passphrase from this file's first line (mode 0600) instead of asking");
    auto* master = command->add_option_function<std::string>(
        "--master-key-file",
        [&options](const std::string& value) { options.masterKeyFile = value; },
        "Unlock with a master key file instead of a passphrase (headless daemons)");
    passphrase->excludes(master);
}

void addSessionFileOption(CLI::App* command, std::optional<std::filesystem::path>& sessionFile)
{
    command->add_option_function<std::string>(
        "--session-file", [&sessionFile](const std::string& value) { sessionFile = value; },
        "The session file from 'session sign-in' (default: the signed-in user's, in the data "
        "directory's 'sessions' folder)");
}

void SignedInOptions::addTo(CLI::App* command)
{
    addUnlockOptions(command, unlock);
    addSessionFileOption(command, sessionFile);
    command->add_option("--as", as,
                        fmt::format("Act as this signed-in user (default: ${}, else the only "
                                    "user signed in to the data directory)",
                                    kUserEnvironment));
}

std::filesystem::path userSessionFile(const core::DataDirectory& platform, const std::string& user)
{
    return sessionsFolder(platform) / (user + std::string(kSessionSuffix));
}

Result<std::filesystem::path> chosenSessionFile(const core::DataDirectory& platform,
                                                const SignedInOptions& options)
{
    if (options.sessionFile)
        return *options.sessionFile;
    if (const std::string user = chosenUser(options); !user.empty()) {
        // The name becomes part of a path: only a valid user name may.
        SEALTRAIN_TRY(core::requireValidName("user", user));
        return userSessionFile(platform, user);
    }
    const auto users = signedInUsers(platform);
    if (users.empty())
        return notSignedIn(platform, {});
    if (users.size() > 1)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("Several users are signed in to '{}' ({}); choose one with --as "
                                 "NAME or {}=NAME.",
                                 platform.path().string(), fmt::join(users, ", "),
                                 kUserEnvironment));
    return userSessionFile(platform, users.front());
}

Result<std::string> readSession(const core::DataDirectory& platform,
                                const std::filesystem::path& path)
{
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
        const bool ownFile = path.parent_path() == sessionsFolder(platform);
        return notSignedIn(platform, ownFile ? path.stem().string() : std::string());
    }
    auto token = platform.readSessionToken(path);
    if (!token)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The session file '{}' can not be read with this keyring; sign "
                                 "in again.",
                                 path.string()));
    return token;
}

Result<void> storeSession(const core::DataDirectory& platform, const std::string& token,
                          const std::filesystem::path& file)
{
    if (file.parent_path() == sessionsFolder(platform)
        && ::mkdir(file.parent_path().c_str(), 0700) != 0 && errno != EEXIST)
        return Error(ErrorCode::Io, fmt::format("Cannot create the sessions folder '{}' ({}); "
                                                "check the data directory's permissions.",
                                                file.parent_path().string(), std::strerror(errno)));
    return platform.writeSessionToken(file, token);
}

Result<void> forgetSession(const std::filesystem::path& file)
{
    std::error_code ec;
    std::filesystem::remove(file, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot remove the session file ({}); delete it "
                                                "by hand.",
                                                ec.message()));
    return success();
}

int runOnPlatform(const CommandRegistry& registry, const UnlockOptions& options,
                  const std::function<Result<void>(core::DataDirectory&)>& body)
{
    auto platform = core::DataDirectory::open(options.resolvedDataDir(), options.keyringUnlock());
    if (!platform)
        return registry.fail(platform.error());
    auto outcome = body(**platform);
    auto finished = (*platform)->signPendingEntries();
    if (!outcome)
        return registry.fail(outcome.error());
    if (!finished)
        return registry.fail(finished.error());
    return kExitOk;
}

int runSignedIn(
    const CommandRegistry& registry, const SignedInOptions& options,
    const std::function<Result<void>(core::DataDirectory&, const std::string& session)>& body)
{
    return runOnPlatform(registry, options.unlock,
                         [&](core::DataDirectory& platform) -> Result<void> {
                             auto file = chosenSessionFile(platform, options);
                             if (!file)
                                 return file.error();
                             auto session = readSession(platform, *file);
                             if (!session)
                                 return session.error();
                             return body(platform, *session);
                         });
}

int runSignedInChange(
    const CommandRegistry& registry, const SignedInOptions& options,
    const std::function<Result<void>(core::ControlPlane&, const std::string& session)>& change,
    const std::string& done)
{
    return runSignedIn(
        registry, options,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            SEALTRAIN_TRY(change(platform.controlPlane(), session));
            registry.out() << done;
            return success();
        });
}

Result<void> writeNewSecretFile(const std::filesystem::path& path, const std::string& secret,
                                std::string_view what)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return Error(ErrorCode::Io, fmt::format("Cannot create '{}' (it must not exist yet); "
                                                "choose a new file for the {}.",
                                                path.string(), what));
    const std::string line = secret + "\n";
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())
                         && ::fsync(fd) == 0;
    ::close(fd);
    if (!written)
        return Error(ErrorCode::Io,
                     fmt::format("Writing '{}' failed; check the disk.", path.string()));
    return success();
}

Result<void> showSecret(std::ostream& out, const std::string& secret, const std::string& file,
                        std::string_view what, const std::string& printed,
                        const std::string& written)
{
    if (file.empty()) {
        out << printed << "\n  " << secret << "\n";
        return success();
    }
    SEALTRAIN_TRY(writeNewSecretFile(file, secret, what));
    out << written << "\n";
    return success();
}

Result<void> showEnrollment(std::ostream& out, const core::Enrollment& enrollment,
                            const std::string& uriFile)
{
    return showSecret(out, enrollment.otpauthUri, uriFile, "TOTP URI",
                      fmt::format("Add this to {}'s authenticator app (it holds the TOTP secret; "
                                  "do not share it):",
                                  enrollment.user),
                      fmt::format("Wrote {}'s TOTP enrollment URI to {} (mode 0600); import it "
                                  "into an authenticator app, then delete the file.",
                                  enrollment.user, uriFile));
}

}  // namespace sealtrain::ctl
