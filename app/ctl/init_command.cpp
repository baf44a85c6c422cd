// `sealtrainctl init`: creates a data directory (keyring, database, signing key, platform CA) and
// the first admin with a TOTP second factor (docs/operations/data-directory.md).
#include "commands.h"
#include "ctl.h"
#include "local_platform.h"
#include "passphrase.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/paths.h"
#include "sealtrain/crypto/certificate_authority.h"

#include <fmt/format.h>

#include <memory>
#include <ostream>
#include <string>

namespace sealtrain::ctl {

namespace {

struct InitOptions {
    UnlockOptions unlock;
    std::string admin;
    std::string adminPasswordFile;
    std::string totpUriFile;
    std::uint64_t argon2Ops = crypto::kArgon2Default.opsLimit;
    std::uint64_t argon2MemMiB = crypto::kArgon2Default.memLimitBytes >> 20;
};

// The new directory's path, unlock and first admin; asks for the passphrase and the password
// that no file gives.
Result<core::NewDataDirectory> newDataDirectory(const InitOptions& options)
{
    core::NewDataDirectory request;
    request.path = options.unlock.resolvedDataDir();
    request.adminName = options.admin;
    request.argon2 = {options.argon2Ops, options.argon2MemMiB << 20};
    if (options.unlock.masterKeyFile) {
        request.masterKeyFile = options.unlock.masterKeyFile;
    } else {
        auto passphrase = obtainPassphrase(
            options.unlock.passphraseFile ? options.unlock.passphraseFile->string() : std::string(),
            "New keyring passphrase", true);
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

int initDataDirectory(const CommandRegistry& registry, const InitOptions& options)
{
    auto request = newDataDirectory(options);
    if (!request)
        return registry.fail(request.error());
    // Checked before the slow part so a taken URI file does not cost a half-made directory.
    if (!options.totpUriFile.empty() && std::filesystem::exists(options.totpUriFile))
        return registry.fail(Error(ErrorCode::AlreadyExists,
                                   fmt::format("The TOTP URI file '{}' already exists; choose a "
                                               "new file.",
                                               options.totpUriFile)));
    auto enrollment = core::DataDirectory::create(*request);
    if (!enrollment)
        return registry.fail(enrollment.error());
    registry.out() << fmt::format("Initialised {} with the admin '{}'.\n", request->path.string(),
                                  enrollment->user);
    if (auto shown = showEnrollment(registry.out(), *enrollment, options.totpUriFile); !shown)
        return registry.fail(shown.error());
    // What clients of sealtrain-control pin (sealtrainctl connect --ca-fingerprint).
    const std::string caFile = (request->path / core::datadir::kCaCertificate).string();
    auto caPem = readWholeFile(caFile);
    if (!caPem)
        return registry.fail(caPem.error());
    auto fingerprint = crypto::certificateFingerprint(*caPem);
    if (!fingerprint)
        return registry.fail(fingerprint.error());
    registry.out() << fmt::format("Platform CA fingerprint: {}\n", *fingerprint);
    registry.out() << fmt::format("Sign in with: sealtrainctl session sign-in --data-dir {} "
                                  "--user {}\n",
                                  request->path.string(), enrollment->user);
    return kExitOk;
}

}  // namespace

void registerInitCommand(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<InitOptions>();
    auto* init = app.add_subcommand(
        "init", "Create a data directory: keyring, encrypted database, signing key, platform CA "
                "and the first admin");
    addUnlockOptions(init, options->unlock);
    init->add_option("--admin", options->admin, "The first admin's user name (a-z 0-9 _ -)")
        ->required();
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
    init->footer("Example: sealtrainctl init --data-dir /srv/sealtrain --admin alice\n"
                 "Then: sealtrainctl session sign-in --data-dir /srv/sealtrain --user alice");
    registry.onRun(init, [options, &registry] { return initDataDirectory(registry, *options); });
}

}  // namespace sealtrain::ctl
