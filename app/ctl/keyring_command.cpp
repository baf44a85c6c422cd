// `sealtrainctl keyfile …` and `sealtrainctl keyring …`: key files for operators, and the data
// directory's key hierarchy (docs/formats/keyring.md).
#include "commands.h"
#include "ctl.h"
#include "list_output.h"
#include "local_platform.h"
#include "passphrase.h"

#include "sealtrain/base/paths.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/database.h"
#include "sealtrain/core/password.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/keyring.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

// Where the keyring is and how to unlock it: the keyring alone, for creating and listing
// (changes open the whole data directory as a signed-in admin: local_platform.h).
struct KeyringOptions {
    std::string dataDir;
    std::string passphraseFile;
    std::string masterKeyFile;

    void addTo(CLI::App* command)
    {
        command->add_option(
            "--data-dir", dataDir,
            "Data directory holding keyring.json (default: " + defaultDataDir().string() + ")");
        auto* passphrase = command->add_option("--passphrase-file", passphraseFile,
                                               "Read the passphrase from this file's first line "
                                               "(mode 0600) instead of asking");
        auto* master = command->add_option("--master-key-file", masterKeyFile,
                                           "Unlock with a master key file (headless daemons)");
        passphrase->excludes(master);
    }

    [[nodiscard]] std::filesystem::path keyringPath() const
    {
        return (dataDir.empty() ? defaultDataDir() : std::filesystem::path(dataDir))
               / "keyring.json";
    }

    [[nodiscard]] Result<crypto::Keyring> unlock() const
    {
        if (!masterKeyFile.empty()) {
            auto master = crypto::readKekFile(masterKeyFile);
            if (!master)
                return master.error();
            return crypto::Keyring::unlockWithMasterKey(keyringPath(), *master);
        }
        auto passphrase = obtainPassphrase(passphraseFile, "Keyring passphrase", false);
        if (!passphrase)
            return passphrase.error();
        return crypto::Keyring::unlockWithPassphrase(keyringPath(), *passphrase);
    }
};

struct KeyfileOptions {
    std::string id;
    std::uint32_t version = 1;
    std::string out;
};

int generateKeyFile(const CommandRegistry& registry, const KeyfileOptions& options)
{
    auto kek = crypto::generateKek(options.id, options.version);
    if (!kek)
        return registry.fail(kek.error());
    if (auto written = crypto::writeKekFile(options.out, *kek); !written)
        return registry.fail(written.error());
    registry.out() << fmt::format("Wrote key '{}' version {} to {} (mode 0600). Keep a backup "
                                  "where only you can read it.\n",
                                  kek->id, kek->version, options.out);
    return kExitOk;
}

struct CreateOptions {
    KeyringOptions unlock;
    std::uint64_t argon2Ops = crypto::kArgon2Default.opsLimit;
    std::uint64_t argon2MemMiB = crypto::kArgon2Default.memLimitBytes >> 20;
};

// A new keyring at `path`, under the master key file or else a new passphrase.
Result<crypto::Keyring> newKeyring(const CreateOptions& options, const std::filesystem::path& path)
{
    if (!options.unlock.masterKeyFile.empty()) {
        auto master = crypto::readKekFile(options.unlock.masterKeyFile);
        if (!master)
            return master.error();
        return crypto::Keyring::createWithMasterKey(path, *master);
    }
    auto passphrase =
        obtainPassphrase(options.unlock.passphraseFile, "New keyring passphrase", true);
    if (!passphrase)
        return passphrase.error();
    SEALTRAIN_TRY(core::checkPassphrasePolicy(*passphrase));
    return crypto::Keyring::createWithPassphrase(path, *passphrase,
                                                 {options.argon2Ops, options.argon2MemMiB << 20});
}

int createKeyring(const CommandRegistry& registry, const CreateOptions& options)
{
    const auto path = options.unlock.keyringPath();
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
        return registry.fail(
            Error(ErrorCode::Io, fmt::format("Cannot create the data directory '{}': {}.",
                                             path.parent_path().string(), ec.message())));
    }
    auto keyring = newKeyring(options, path);
    if (!keyring)
        return registry.fail(keyring.error());
    registry.out() << fmt::format("Created {} with {} keys.\n", path.string(),
                                  keyring->list().size());
    return kExitOk;
}

struct ListOptions {
    KeyringOptions unlock;
    bool json = false;
};

constexpr std::string_view kKekColumns = "{:<16} {:>7}  {:<13} {}\n";

int listKeks(const CommandRegistry& registry, const ListOptions& options)
{
    auto keyring = options.unlock.unlock();
    if (!keyring)
        return registry.fail(keyring.error());
    printList(
        registry.out(), options.json, keyring->list(),
        fmt::format(kKekColumns, "KEK", "VERSION", "STATE", "CREATED"),
        [](const crypto::KekInfo& info) {
            return nlohmann::json{{"id", info.id},
                                  {"version", info.version},
                                  {"state", crypto::kekStateName(info.state)},
                                  {"created", info.created},
                                  {"retired", info.retired}};
        },
        [](const crypto::KekInfo& info) {
            return fmt::format(kKekColumns, info.id, info.version, crypto::kekStateName(info.state),
                               info.created);
        });
    return kExitOk;
}

// The changes below act on the whole data directory as a signed-in holder of keyring.manage;
// each is audited (core/keyring_changes.h).
struct RotateOptions {
    SignedInOptions signedIn;
    std::string id;
};

// The control database, re-keyed to the active `database` KEK. When this stops half-way, the
// next open finds the older version that still opens the database and re-keys it there
// (core::Database::openWithKeyring).
Result<void> rekeyDatabase(core::DataDirectory& platform)
{
    auto key = core::deriveDatabaseKey(platform.keyring());
    if (!key)
        return key.error();
    return platform.database().rekey(*key);
}

int rotateKek(const CommandRegistry& registry, const RotateOptions& options)
{
    return runSignedIn(
        registry, options.signedIn,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            auto rotated = platform.controlPlane().keyringChanges().rotate(
                session, platform.keyring(), options.id);
            if (!rotated)
                return rotated.error();
            if (options.id == "database") {
                SEALTRAIN_TRY(rekeyDatabase(platform));
                registry.out() << "The control database is re-keyed under the new version.\n";
            }
            registry.out() << fmt::format("'{}' is now at version {}; re-wrap objects sealed "
                                          "under version {}, then retire it.\n",
                                          rotated->id, rotated->version, rotated->version - 1);
            return success();
        });
}

struct RetireOptions {
    SignedInOptions signedIn;
    std::string id;
    std::uint32_t version = 0;
    std::vector<std::filesystem::path> scan;
};

int retireKek(const CommandRegistry& registry, const RetireOptions& options)
{
    return runSignedIn(
        registry, options.signedIn,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            core::KekRetirement request{options.id, options.version, {platform.path()}};
            request.folders.insert(request.folders.end(), options.scan.begin(), options.scan.end());
            SEALTRAIN_TRY(platform.controlPlane().keyringChanges().retire(
                session, platform.keyring(), request));
            registry.out() << fmt::format("Retired '{}' version {}.\n", options.id,
                                          options.version);
            return success();
        });
}

struct RewrapOptions {
    SignedInOptions signedIn;
    std::vector<std::string> files;
};

// Every file is tried; a file that fails is named in its error line.
int rewrapSealedObjects(const CommandRegistry& registry, const RewrapOptions& options)
{
    int code = kExitOk;
    const int opened =
        runSignedIn(registry, options.signedIn,
                    [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                        for (const auto& file : options.files) {
                            auto done = platform.controlPlane().keyringChanges().rewrap(
                                session, platform.keyring(), file);
                            if (done)
                                registry.out() << *done;
                            else
                                code = registry.failItem(file, done.error());
                        }
                        return success();
                    });
    return opened != kExitOk ? opened : code;
}

struct ChangePassphraseOptions {
    SignedInOptions signedIn;
    std::string newPassphraseFile;
};

int changePassphrase(const CommandRegistry& registry, const ChangePassphraseOptions& options)
{
    return runSignedIn(
        registry, options.signedIn,
        [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
            auto passphrase = obtainPassphrase(options.newPassphraseFile, "New passphrase", true,
                                               "--new-passphrase-file FILE");
            if (!passphrase)
                return passphrase.error();
            SEALTRAIN_TRY(platform.controlPlane().keyringChanges().changePassphrase(
                session, platform.keyring(), *passphrase));
            registry.out() << "Passphrase changed; every KEK is re-wrapped under it.\n";
            return success();
        });
}

void registerKeyfile(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand("keyfile", "Create key files for operators and daemons");
    group->require_subcommand(1);
    auto options = std::make_shared<KeyfileOptions>();
    auto* command = group->add_subcommand(
        "generate", "Write a new random 32-byte key to a new file (mode 0600, never overwritten)");
    command->add_option("--id", options->id, "Key id: 1-64 characters of a-z 0-9 . _ -")
        ->required();
    command->add_option("--version", options->version, "Key version (default 1)")
        ->check(CLI::PositiveNumber);
    command->add_option("--out", options->out, "The file to create")->required();
    registry.onRun(command, [options, &registry] { return generateKeyFile(registry, *options); });
}

void registerKeyringCreate(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<CreateOptions>();
    auto* command = group->add_subcommand(
        "create", "Create the data directory's keyring with one KEK per purpose");
    options->unlock.addTo(command);
    command->add_option("--argon2-ops", options->argon2Ops, "Argon2id passes (floor 2)")
        ->capture_default_str();
    command
        ->add_option("--argon2-mem-mib", options->argon2MemMiB, "Argon2id memory in MiB (floor 64)")
        ->capture_default_str();
    registry.onRun(command, [options, &registry] { return createKeyring(registry, *options); });
}

void registerKeyringList(CLI::App* group, CommandRegistry& registry)
{
    auto options = std::make_shared<ListOptions>();
    auto* command =
        group->add_subcommand("list", "Unlock the keyring and list its KEKs and states");
    options->unlock.addTo(command);
    command->add_flag("--json", options->json, "Print JSON for scripts");
    registry.onRun(command, [options, &registry] { return listKeks(registry, *options); });
}

void registerKeyringChanges(CLI::App* group, CommandRegistry& registry)
{
    auto rotate = std::make_shared<RotateOptions>();
    auto* rotateCommand = group->add_subcommand(
        "rotate", "Add a new version of a KEK; the old one stays decrypt-only until retired");
    rotate->signedIn.addTo(rotateCommand);
    rotateCommand->add_option("ID", rotate->id, "The KEK to rotate, e.g. datasets")->required();
    registry.onRun(rotateCommand, [rotate, &registry] { return rotateKek(registry, *rotate); });

    auto retire = std::make_shared<RetireOptions>();
    auto* retireCommand = group->add_subcommand(
        "retire", "Erase a decrypt-only KEK version for good: nothing sealed under it opens again");
    retire->signedIn.addTo(retireCommand);
    retireCommand->add_option("ID", retire->id, "The KEK id")->required();
    retireCommand->add_option("VERSION", retire->version, "The version to retire")->required();
    retireCommand->add_option("--scan", retire->scan,
                              "Also search this folder for objects still sealed under the "
                              "version (checkpoint folders; repeatable)");
    registry.onRun(retireCommand, [retire, &registry] { return retireKek(registry, *retire); });

    auto rewrap = std::make_shared<RewrapOptions>();
    auto* rewrapCommand = group->add_subcommand(
        "rewrap", "Re-wrap sealed objects' keys under the active KEK version (payloads untouched)");
    rewrap->signedIn.addTo(rewrapCommand);
    rewrapCommand->add_option("FILES", rewrap->files, "Sealed objects to re-wrap")->required();
    registry.onRun(rewrapCommand,
                   [rewrap, &registry] { return rewrapSealedObjects(registry, *rewrap); });

    auto change = std::make_shared<ChangePassphraseOptions>();
    auto* changeCommand = group->add_subcommand(
        "change-passphrase", "Re-wrap the KEKs under a new passphrase (no data is re-encrypted)");
    change->signedIn.addTo(changeCommand);
    changeCommand->add_option("--new-passphrase-file", change->newPassphraseFile,
                              "Read the new passphrase from this file instead of asking");
    registry.onRun(changeCommand,
                   [change, &registry] { return changePassphrase(registry, *change); });
}

}  // namespace

void registerKeyringCommands(CLI::App& app, CommandRegistry& registry)
{
    registerKeyfile(app, registry);
    auto* group = app.add_subcommand("keyring", "Manage the data directory's key hierarchy");
    group->require_subcommand(1);
    registerKeyringCreate(group, registry);
    registerKeyringList(group, registry);
    registerKeyringChanges(group, registry);
}

}  // namespace sealtrain::ctl
