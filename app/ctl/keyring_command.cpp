// `sealtrainctl keyfile …` and `sealtrainctl keyring …`: key files for operators, and the data
// directory's key hierarchy (docs/formats/keyring.md), which the control plane changes while it
// serves (Keyring API, keyring.manage): this client never unlocks the keyring.
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "list_output.h"
#include "passphrase.h"

#include "sealtrain/crypto/key_file.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

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

struct KeyringListOptions {
    ClientOptions client;
    bool json = false;
};

constexpr std::string_view kKekColumns = "{:<16} {:>7}  {:<13} {}\n";

int listKeks(const CommandRegistry& registry, const KeyringListOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.keyring().listKeks(); },
        [&](const auto& keks) {
            printList(
                registry.out(), options.json, keks,
                fmt::format(kKekColumns, "KEK", "VERSION", "STATE", "CREATED"),
                [](const api::KekSummary& kek) {
                    return nlohmann::json{{"id", kek.id},
                                          {"version", kek.version},
                                          {"state", kek.state},
                                          {"created", kek.created},
                                          {"retired", kek.retired}};
                },
                [](const api::KekSummary& kek) {
                    return fmt::format(kKekColumns, kek.id, kek.version, kek.state, kek.created);
                });
            return kExitOk;
        });
}

struct KekOptions {
    ClientOptions client;
    std::string id;
    std::uint32_t version = 0;
};

int rotateKek(const CommandRegistry& registry, const KekOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.keyring().rotateKek(options.id); },
        [&](const auto& version) {
            if (options.id == "database")
                registry.out() << "The control database is re-keyed under the new version.\n";
            registry.out() << fmt::format(
                "'{}' is now at version {}; run `sealtrainctl keyring rewrap "
                "{}`, then retire version {}.\n",
                options.id, version, options.id, version - 1);
            return kExitOk;
        });
}

int rewrapObjects(const CommandRegistry& registry, const KekOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.keyring().rewrapObjects(options.id); },
        [&](const auto& done) {
            for (const std::string& line : done.lines)
                registry.out() << line;
            registry.out() << fmt::format(
                "Re-wrapped {} object(s) under the active version of '{}'.\n", done.rewrapped,
                options.id);
            return kExitOk;
        });
}

int retireKek(const CommandRegistry& registry, const KekOptions& options)
{
    return runClientChange(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.keyring().retireKek(options.id, options.version);
        },
        fmt::format("Retired '{}' version {}.\n", options.id, options.version));
}

struct ChangePassphraseOptions {
    ClientOptions client;
    std::string passphraseFile;
    std::string newPassphraseFile;
};

int changePassphrase(const CommandRegistry& registry, const ChangePassphraseOptions& options)
{
    auto current = obtainPassphrase(options.passphraseFile, "Current keyring passphrase", false);
    if (!current)
        return registry.fail(current.error());
    auto next = obtainPassphrase(options.newPassphraseFile, "New keyring passphrase", true,
                                 "--new-passphrase-file FILE");
    if (!next)
        return registry.fail(next.error());
    return runClientChange(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.keyring().changePassphrase(*current, *next);
        },
        "Passphrase changed; every KEK is re-wrapped under it.\n");
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

void registerKeyringChanges(CLI::App* group, CommandRegistry& registry)
{
    auto list = std::make_shared<KeyringListOptions>();
    auto* listCommand = group->add_subcommand("list", "List the KEKs, their versions and states");
    listCommand->add_flag("--json", list->json, "Print JSON for scripts");
    addClientOptions(listCommand, list->client, true);
    registry.onRun(listCommand, [list, &registry] { return listKeks(registry, *list); });

    auto rotate = std::make_shared<KekOptions>();
    auto* rotateCommand = group->add_subcommand(
        "rotate", "Add a new version of a KEK; the old one stays decrypt-only until retired");
    rotateCommand->add_option("ID", rotate->id, "The KEK to rotate, e.g. datasets")->required();
    addClientOptions(rotateCommand, rotate->client, true);
    registry.onRun(rotateCommand, [rotate, &registry] { return rotateKek(registry, *rotate); });

    auto rewrap = std::make_shared<KekOptions>();
    auto* rewrapCommand = group->add_subcommand(
        "rewrap", "Re-wrap every object of the data directory sealed under an older version of a "
                  "KEK under its active version (payloads untouched)");
    rewrapCommand->add_option("ID", rewrap->id, "The KEK, e.g. datasets")->required();
    addClientOptions(rewrapCommand, rewrap->client, true);
    registry.onRun(rewrapCommand, [rewrap, &registry] { return rewrapObjects(registry, *rewrap); });

    auto retire = std::make_shared<KekOptions>();
    auto* retireCommand = group->add_subcommand(
        "retire", "Erase a decrypt-only KEK version for good: nothing sealed under it opens again "
                  "(refused while an object is still wrapped under it)");
    retireCommand->add_option("ID", retire->id, "The KEK id")->required();
    retireCommand->add_option("VERSION", retire->version, "The version to retire")->required();
    addClientOptions(retireCommand, retire->client, true);
    registry.onRun(retireCommand, [retire, &registry] { return retireKek(registry, *retire); });

    auto change = std::make_shared<ChangePassphraseOptions>();
    auto* changeCommand = group->add_subcommand(
        "change-passphrase", "Re-wrap the KEKs under a new passphrase (no data is re-encrypted); "
                             "the current one is asked for too");
    changeCommand->add_option("--passphrase-file", change->passphraseFile,
                              "Read the current passphrase from this file instead of asking");
    changeCommand->add_option("--new-passphrase-file", change->newPassphraseFile,
                              "Read the new passphrase from this file instead of asking");
    addClientOptions(changeCommand, change->client, true);
    registry.onRun(changeCommand,
                   [change, &registry] { return changePassphrase(registry, *change); });
}

}  // namespace

void registerKeyringCommands(CLI::App& app, CommandRegistry& registry)
{
    registerKeyfile(app, registry);
    auto* group = app.add_subcommand(
        "keyring", "The data directory's key hierarchy, changed by the control plane (admin)");
    group->require_subcommand(1);
    registerKeyringChanges(group, registry);
}

}  // namespace sealtrain::ctl
