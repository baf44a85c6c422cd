// `sealtrainctl keyfile …` and `sealtrainctl keyring …`: key files for operators, and the data
// directory's key hierarchy (docs/formats/keyring.md).
#include "commands.h"
#include "ctl.h"
#include "passphrase.h"

#include "sealtrain/base/paths.h"
#include "sealtrain/core/database.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/crypto/sealed.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>

namespace sealtrain::ctl {
namespace {

struct UnlockOptions {
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

// The data directory's control database, re-keyed to the active `database` KEK (a no-op when it
// already is, or when the directory has no database yet).
Result<void> rekeyDatabase(const UnlockOptions& unlock, const crypto::Keyring& keyring)
{
    const auto path = unlock.keyringPath().parent_path() / "control.db";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return success();
    auto database = core::Database::openWithKeyring(path, keyring);
    if (!database)
        return database.error();
    return success();
}

int fail(const CommandRegistry& registry, const Error& error)
{
    registry.err() << "sealtrainctl: " << error.message() << '\n';
    return kExitFailure;
}

void registerKeyfile(CLI::App& app, CommandRegistry& registry)
{
    auto* group = app.add_subcommand("keyfile", "Create key files for operators and daemons");
    group->require_subcommand(1);

    struct Options {
        std::string id;
        std::uint32_t version = 1;
        std::string out;
    };
    auto options = std::make_shared<Options>();
    auto* generate = group->add_subcommand(
        "generate", "Write a new random 32-byte key to a new file (mode 0600, never overwritten)");
    generate->add_option("--id", options->id, "Key id: 1-64 characters of a-z 0-9 . _ -")
        ->required();
    generate->add_option("--version", options->version, "Key version (default 1)")
        ->check(CLI::PositiveNumber);
    generate->add_option("--out", options->out, "The file to create")->required();
    registry.onRun(generate, [options, &registry] {
        auto kek = crypto::generateKek(options->id, options->version);
        if (!kek)
            return fail(registry, kek.error());
        if (auto written = crypto::writeKekFile(options->out, *kek); !written)
            return fail(registry, written.error());
        registry.out() << fmt::format("Wrote key '{}' version {} to {} (mode 0600). Keep a backup "
                                      "where only you can read it.\n",
                                      kek->id, kek->version, options->out);
        return kExitOk;
    });
}

void registerKeyringCreate(CLI::App* group, CommandRegistry& registry)
{
    struct Options {
        UnlockOptions unlock;
        std::uint64_t argon2Ops = crypto::kArgon2Default.opsLimit;
        std::uint64_t argon2MemMiB = crypto::kArgon2Default.memLimitBytes >> 20;
    };
    auto options = std::make_shared<Options>();
    auto* create = group->add_subcommand(
        "create", "Create the data directory's keyring with one KEK per purpose");
    options->unlock.addTo(create);
    create->add_option("--argon2-ops", options->argon2Ops, "Argon2id passes (floor 2)")
        ->capture_default_str();
    create
        ->add_option("--argon2-mem-mib", options->argon2MemMiB, "Argon2id memory in MiB (floor 64)")
        ->capture_default_str();
    registry.onRun(create, [options, &registry] {
        const auto path = options->unlock.keyringPath();
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec) {
            return fail(registry, Error(ErrorCode::Io,
                                        fmt::format("Cannot create the data directory '{}': {}.",
                                                    path.parent_path().string(), ec.message())));
        }
        Result<crypto::Keyring> keyring = Error(ErrorCode::Internal, "Not created.");
        if (!options->unlock.masterKeyFile.empty()) {
            auto master = crypto::readKekFile(options->unlock.masterKeyFile);
            if (!master)
                return fail(registry, master.error());
            keyring = crypto::Keyring::createWithMasterKey(path, *master);
        } else {
            auto passphrase =
                obtainPassphrase(options->unlock.passphraseFile, "New keyring passphrase", true);
            if (!passphrase)
                return fail(registry, passphrase.error());
            keyring = crypto::Keyring::createWithPassphrase(
                path, *passphrase, {options->argon2Ops, options->argon2MemMiB << 20});
        }
        if (!keyring)
            return fail(registry, keyring.error());
        registry.out() << fmt::format("Created {} with {} keys.\n", path.string(),
                                      keyring->list().size());
        return kExitOk;
    });
}

void registerKeyringList(CLI::App* group, CommandRegistry& registry)
{
    struct Options {
        UnlockOptions unlock;
        bool json = false;
    };
    auto options = std::make_shared<Options>();
    auto* list = group->add_subcommand("list", "Unlock the keyring and list its KEKs and states");
    options->unlock.addTo(list);
    list->add_flag("--json", options->json, "Print JSON for scripts");
    registry.onRun(list, [options, &registry] {
        auto keyring = options->unlock.unlock();
        if (!keyring)
            return fail(registry, keyring.error());
        const auto keys = keyring->list();
        if (options->json) {
            nlohmann::json array = nlohmann::json::array();
            for (const auto& info : keys) {
                array.push_back({{"id", info.id},
                                 {"version", info.version},
                                 {"state", crypto::kekStateName(info.state)},
                                 {"created", info.created},
                                 {"retired", info.retired}});
            }
            registry.out() << array.dump(2) << '\n';
            return kExitOk;
        }
        registry.out() << fmt::format("{:<16} {:>7}  {:<13} {}\n", "KEK", "VERSION", "STATE",
                                      "CREATED");
        for (const auto& info : keys) {
            registry.out() << fmt::format("{:<16} {:>7}  {:<13} {}\n", info.id, info.version,
                                          crypto::kekStateName(info.state), info.created);
        }
        return kExitOk;
    });
}

void registerKeyringChanges(CLI::App* group, CommandRegistry& registry)
{
    struct Options {
        UnlockOptions unlock;
        std::string id;
        std::uint32_t version = 0;
        std::string newPassphraseFile;
    };

    auto rotateOptions = std::make_shared<Options>();
    auto* rotate = group->add_subcommand(
        "rotate", "Add a new version of a KEK; the old one stays decrypt-only until retired");
    rotateOptions->unlock.addTo(rotate);
    rotate->add_option("ID", rotateOptions->id, "The KEK to rotate, e.g. datasets")->required();
    registry.onRun(rotate, [rotateOptions, &registry] {
        auto keyring = rotateOptions->unlock.unlock();
        if (!keyring)
            return fail(registry, keyring.error());
        auto rotated = keyring->rotate(rotateOptions->id);
        if (!rotated)
            return fail(registry, rotated.error());
        if (rotateOptions->id == "database") {
            if (auto rekeyed = rekeyDatabase(rotateOptions->unlock, *keyring); !rekeyed)
                return fail(registry, rekeyed.error());
            registry.out() << "The control database (if any) is re-keyed under the new version.\n";
        }
        registry.out() << fmt::format("'{}' is now at version {}; re-wrap objects sealed under "
                                      "version {}, then retire it.\n",
                                      (*rotated)->id, (*rotated)->version, (*rotated)->version - 1);
        return kExitOk;
    });

    auto retireOptions = std::make_shared<Options>();
    auto* retire = group->add_subcommand(
        "retire", "Erase a decrypt-only KEK version for good: nothing sealed under it opens again");
    retireOptions->unlock.addTo(retire);
    retire->add_option("ID", retireOptions->id, "The KEK id")->required();
    retire->add_option("VERSION", retireOptions->version, "The version to retire")->required();
    registry.onRun(retire, [retireOptions, &registry] {
        auto keyring = retireOptions->unlock.unlock();
        if (!keyring)
            return fail(registry, keyring.error());
        // Never retire the version a database is still keyed under.
        if (retireOptions->id == "database") {
            if (auto rekeyed = rekeyDatabase(retireOptions->unlock, *keyring); !rekeyed)
                return fail(registry, rekeyed.error());
        }
        if (auto retired = keyring->retire(retireOptions->id, retireOptions->version); !retired)
            return fail(registry, retired.error());
        registry.out() << fmt::format("Retired '{}' version {}.\n", retireOptions->id,
                                      retireOptions->version);
        return kExitOk;
    });

    struct RewrapOptions {
        UnlockOptions unlock;
        std::vector<std::string> files;
    };
    auto rewrapOptions = std::make_shared<RewrapOptions>();
    auto* rewrap = group->add_subcommand(
        "rewrap", "Re-wrap sealed objects' keys under the active KEK version (payloads untouched)");
    rewrapOptions->unlock.addTo(rewrap);
    rewrap->add_option("FILES", rewrapOptions->files, "Sealed objects to re-wrap")->required();
    registry.onRun(rewrap, [rewrapOptions, &registry] {
        auto keyring = rewrapOptions->unlock.unlock();
        if (!keyring)
            return fail(registry, keyring.error());
        int failures = 0;
        for (const auto& file : rewrapOptions->files) {
            auto info = crypto::inspectSealedObject(std::filesystem::path(file));
            Result<const crypto::Kek*> active =
                info ? keyring->activeKek(info->kekId) : Result<const crypto::Kek*>(info.error());
            if (!active) {
                registry.err() << fmt::format("sealtrainctl: {}: {}\n", file,
                                              active.error().message());
                ++failures;
                continue;
            }
            if ((*active)->version == info->kekVersion) {
                registry.out() << fmt::format("{}: already under '{}' version {}\n", file,
                                              info->kekId, info->kekVersion);
                continue;
            }
            if (auto done = crypto::rewrapKeyBlock(file, keyring->resolver(), **active); !done) {
                registry.err() << fmt::format("sealtrainctl: {}: {}\n", file,
                                              done.error().message());
                ++failures;
                continue;
            }
            registry.out() << fmt::format("{}: re-wrapped from '{}' version {} to version {}\n",
                                          file, info->kekId, info->kekVersion, (*active)->version);
        }
        return failures == 0 ? kExitOk : kExitFailure;
    });

    auto changeOptions = std::make_shared<Options>();
    auto* change = group->add_subcommand(
        "change-passphrase", "Re-wrap the KEKs under a new passphrase (no data is re-encrypted)");
    changeOptions->unlock.addTo(change);
    change->add_option("--new-passphrase-file", changeOptions->newPassphraseFile,
                       "Read the new passphrase from this file instead of asking");
    registry.onRun(change, [changeOptions, &registry] {
        auto keyring = changeOptions->unlock.unlock();
        if (!keyring)
            return fail(registry, keyring.error());
        auto passphrase =
            obtainPassphrase(changeOptions->newPassphraseFile, "New passphrase", true);
        if (!passphrase)
            return fail(registry, passphrase.error());
        if (auto changed = keyring->changePassphrase(*passphrase); !changed)
            return fail(registry, changed.error());
        registry.out() << "Passphrase changed; every KEK is re-wrapped under it.\n";
        return kExitOk;
    });
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
