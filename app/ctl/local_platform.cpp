// The CLI side of a local data directory: its options, the session file, and the runners that
// open it (core::DataDirectory does the opening) around a command's body.
#include "local_platform.h"

#include "commands.h"
#include "ctl.h"
#include "passphrase.h"

#include "sealtrain/base/paths.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <unistd.h>

#include <ostream>
#include <system_error>

namespace sealtrain::ctl {

namespace {

std::filesystem::path sessionPath(const core::DataDirectory& platform,
                                  const std::optional<std::filesystem::path>& sessionFile)
{
    return sessionFile ? *sessionFile : platform.path() / std::string(core::datadir::kSession);
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

void addSessionOption(CLI::App* command, std::optional<std::filesystem::path>& sessionFile)
{
    command->add_option_function<std::string>(
        "--session-file", [&sessionFile](const std::string& value) { sessionFile = value; },
        "The session file from 'session sign-in' (default: the data directory's 'session')");
}

Result<std::string> readSession(const core::DataDirectory& platform,
                                const std::optional<std::filesystem::path>& sessionFile)
{
    const auto path = sessionPath(platform, sessionFile);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("You are not signed in to '{}'; run 'sealtrainctl session "
                                 "sign-in --data-dir {} --user NAME' first.",
                                 platform.path().string(), platform.path().string()));
    auto token = platform.readSessionToken(path);
    if (!token)
        return Error(ErrorCode::Unauthenticated,
                     fmt::format("The session file '{}' can not be read with this keyring; sign "
                                 "in again.",
                                 path.string()));
    return token;
}

Result<void> storeSession(const core::DataDirectory& platform, const std::string& token,
                          const std::optional<std::filesystem::path>& sessionFile)
{
    return platform.writeSessionToken(sessionPath(platform, sessionFile), token);
}

Result<void> forgetSession(const core::DataDirectory& platform,
                           const std::optional<std::filesystem::path>& sessionFile)
{
    std::error_code ec;
    std::filesystem::remove(sessionPath(platform, sessionFile), ec);
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
                             auto session = readSession(platform, options.sessionFile);
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

namespace {

Result<void> writeOtpauthFile(const std::filesystem::path& path, const std::string& uri)
{
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return Error(ErrorCode::Io, fmt::format("Cannot create '{}' (it must not exist yet); "
                                                "choose a new file for the TOTP URI.",
                                                path.string()));
    const std::string line = uri + "\n";
    const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size())
                         && ::fsync(fd) == 0;
    ::close(fd);
    if (!written)
        return Error(ErrorCode::Io,
                     fmt::format("Writing '{}' failed; check the disk.", path.string()));
    return success();
}

}  // namespace

Result<void> showEnrollment(std::ostream& out, const core::Enrollment& enrollment,
                            const std::string& uriFile)
{
    if (uriFile.empty()) {
        out << fmt::format("Add this to {}'s authenticator app (it holds the TOTP secret; do not "
                           "share it):\n  {}\n",
                           enrollment.user, enrollment.otpauthUri);
        return success();
    }
    SEALTRAIN_TRY(writeOtpauthFile(uriFile, enrollment.otpauthUri));
    out << fmt::format("Wrote {}'s TOTP enrollment URI to {} (mode 0600); import it into an "
                       "authenticator app, then delete the file.\n",
                       enrollment.user, uriFile);
    return success();
}

}  // namespace sealtrain::ctl
