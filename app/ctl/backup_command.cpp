// `sealtrainctl backup`, `backup verify` and `restore` (docs/operations/backup.md): a backup is
// taken by the control plane (platform.backup) and received here; its check needs only the
// platform's public audit key; a restore, like `init`, builds a new data directory on this
// machine and so needs the keyring's passphrase or master key file.
#include "client_options.h"
#include "commands.h"
#include "ctl.h"
#include "passphrase.h"

#include "sealtrain/api/backup_record.h"
#include "sealtrain/api/data_directory_tools.h"
#include "sealtrain/base/progress.h"

#include <fmt/format.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace sealtrain::ctl {
namespace {

struct BackupOptions {
    ClientOptions client;
    std::string out;
    std::uint64_t referenceOverMiB = 0;
};

int takeBackup(const CommandRegistry& registry, const BackupOptions& options)
{
    if (options.out.empty())
        return registry.failUsage("Name the archive to write with --out FILE (e.g. --out "
                                  "sealtrain-backup.tar).");
    auto client = signedInClient(options.client, registry.err());
    if (!client)
        return registry.fail(client.error());
    std::optional<ProgressReporter> progress;
    progress.emplace(
        registry.err(),
        ProgressOptions{"backup", "MiB", &registry.err() == &std::cerr && ::isatty(STDERR_FILENO),
                        std::chrono::milliseconds(100), std::chrono::milliseconds(5000)});
    registry.err() << "The control plane is writing the backup...\n";
    auto received = (*client)->platform().backup(
        options.out, options.referenceOverMiB << 20U, [&](std::uint64_t got, std::uint64_t total) {
            const ProgressSample sample{got, total, got >> 20U};
            if (got == total)
                progress->finish(sample);
            else
                progress->update(sample);
        });
    if (!received) {
        progress->abandon();
        return registry.fail(received.error());
    }
    registry.out() << fmt::format(
        "Wrote {} ({}): {} audit entries, {} files, {} referenced by digest ({}).\n"
        "SHA-256 {}\n"
        "Keep it with the passphrase apart from the machine; check it with `sealtrainctl backup "
        "verify {} --key signing.pub.pem`.\n",
        options.out, formatBytes(received->bytes), received->head, received->files,
        received->referenced, formatBytes(received->referencedBytes), received->sha256,
        options.out);
    if (received->referenced > 0)
        registry.out() << "A restore needs the referenced files too: keep a copy of the data "
                          "directory's datasets/, runs/, jobs/ and models/ (--objects-from).\n";
    const api::Profile profile = options.client.profile();
    const auto endpoint = profile.endpoint();
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    if (auto noted = api::rememberBackup(
            profile, {options.out, std::chrono::duration_cast<std::chrono::seconds>(now).count(),
                      endpoint ? endpoint->address : std::string(), *received});
        !noted)
        registry.err() << fmt::format("The backup is written, but noting it as the last one "
                                      "failed: {}\n",
                                      noted.error().message());
    return kExitOk;
}

// How long ago `takenUnix` was, for people: "3 days", "5 hours", "12 minutes".
std::string ageText(std::int64_t takenUnix)
{
    const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    const std::int64_t seconds = std::max<std::int64_t>(0, now - takenUnix);
    constexpr std::int64_t kHour = 3600;
    constexpr std::int64_t kDay = 24 * kHour;
    if (seconds >= 2 * kDay)
        return fmt::format("{} days", seconds / kDay);
    if (seconds >= 2 * kHour)
        return fmt::format("{} hours", seconds / kHour);
    return fmt::format("{} minutes", seconds / 60);
}

// `backup last`: the profile's note of the newest archive received, and whether it is still
// there; exit 1 when none was noted or it is gone (a cron job's check).
int lastBackup(const CommandRegistry& registry, const ClientOptions& client)
{
    auto record = api::lastBackup(client.profile());
    if (!record)
        return registry.fail(record.error());
    if (!*record)
        return registry.fail(Error(ErrorCode::NotFound,
                                   "This profile has taken no backup yet; take one with "
                                   "`sealtrainctl backup --out FILE`."));
    const api::BackupRecord& last = **record;
    std::error_code error;
    const bool there = std::filesystem::exists(last.archive, error);
    registry.out() << fmt::format("Last backup: {}\n"
                                  "Taken:       {} ago ({}), from {}\n"
                                  "Audit head:  {} entries; {} files ({} referenced by digest)\n"
                                  "SHA-256:     {}\n",
                                  last.archive.string(), ageText(last.takenUnix),
                                  utcText(last.takenUnix), last.endpoint, last.facts.head,
                                  last.facts.files, last.facts.referenced, last.facts.sha256);
    if (!there)
        return registry.fail(
            Error(ErrorCode::NotFound, fmt::format("The archive is no longer at {}; find where it "
                                                   "was moved, or take a new backup.",
                                                   last.archive.string())));
    return kExitOk;
}

struct BackupVerifyOptions {
    std::string archive;
    std::string key;
};

// Over sealtrain-control's `verify-backup`: the same check a control host runs.
int verifyBackup(const CommandRegistry& registry, const BackupVerifyOptions& options)
{
    auto executable = controlExecutable();
    if (!executable)
        return registry.fail(executable.error());
    auto manifest = api::DataDirectoryTools(*executable).verifyBackup(options.archive, options.key);
    if (!manifest) {
        registry.out() << "FAILED\n";
        return registry.fail(manifest.error());
    }
    registry.out() << fmt::format("VERIFIED {}: signed by the platform's audit key, every member "
                                  "matches its manifest.\n"
                                  "Created:    {} by Sealtrain {}\n"
                                  "Audit head: {} entries\n"
                                  "Files:      {} ({} referenced by digest)\n",
                                  options.archive, manifest->created, manifest->version,
                                  manifest->head, manifest->files, manifest->referenced);
    return kExitOk;
}

struct RestoreOptions {
    std::string archive;
    std::string dataDir;
    std::string witness;
    bool withoutWitness = false;
    bool acceptLoss = false;
    std::string objectsFrom;
    std::string key;
    std::string passphraseFile;
    std::string masterKeyFile;
};

// Over sealtrain-control's `restore`, which builds the directory and records the restore; the
// passphrase is asked here (or read from its file) and handed over on a pipe.
int restore(const CommandRegistry& registry, const RestoreOptions& options)
{
    auto executable = controlExecutable();
    if (!executable)
        return registry.fail(executable.error());
    api::RestoreSettings settings;
    settings.archive = options.archive;
    settings.dataDir = options.dataDir;
    settings.witness = options.witness;
    settings.withoutWitness = options.withoutWitness;
    settings.acceptLoss = options.acceptLoss;
    settings.objectsFrom = options.objectsFrom;
    settings.key = options.key;
    if (!options.masterKeyFile.empty()) {
        settings.masterKeyFile = options.masterKeyFile;
    } else {
        auto passphrase =
            obtainPassphrase(options.passphraseFile, "Keyring passphrase of the backup: ", false);
        if (!passphrase)
            return registry.fail(passphrase.error());
        settings.passphrase = std::move(*passphrase);
    }
    auto done = api::DataDirectoryTools(*executable)
                    .restore(settings, [&registry](const std::string& line) {
                        registry.err() << line << "...\n";
                    });
    if (!done)
        return registry.fail(done.error());
    registry.out() << fmt::format(
        "Restored the backup of {} ({} audit entries) into {}.\n"
        "The restore is audit entry {}{}.\n",
        done->created, done->head, options.dataDir, done->restoreEntry,
        done->lostEntries > 0
            ? fmt::format(", which records the {} entries lost after the backup", done->lostEntries)
            : std::string());
    registry.out() << fmt::format("Next: start its control plane (sealtrain-control --data-dir {}, "
                                  "or `sealtrainctl init --existing --data-dir {}` on a "
                                  "workstation); every session was revoked, so everyone signs "
                                  "in again; review the grants and accounts changed since the "
                                  "backup.\n",
                                  options.dataDir, options.dataDir);
    return kExitOk;
}

}  // namespace

void registerBackupCommands(CLI::App& app, CommandRegistry& registry)
{
    auto backupOptions = std::make_shared<BackupOptions>();
    auto* backup = app.add_subcommand(
        "backup", "Have the control plane write an encrypted, signed backup of itself while it "
                  "serves (platform.backup)");
    backup->require_subcommand(0, 1);
    backup->add_option("--out", backupOptions->out, "The archive to write (refused if it exists)");
    backup->add_option("--reference-over", backupOptions->referenceOverMiB,
                       "Reference dataset, checkpoint and model files bigger than this many MiB "
                       "by digest instead of copying them (default: the control plane's, 256)");
    addClientOptions(backup, backupOptions->client, true);
    backup->footer("Example: sealtrainctl backup --out /backups/sealtrain-2026-12-05.tar\n"
                   "Restore with: sealtrainctl restore ARCHIVE --data-dir NEW --witness FILE");

    auto verifyOptions = std::make_shared<BackupVerifyOptions>();
    auto* verify = backup->add_subcommand(
        "verify", "Check an archive offline: its signature under the platform's audit key and "
                  "every member against its signed manifest");
    verify->add_option("ARCHIVE", verifyOptions->archive, "The backup archive")->required();
    verify
        ->add_option("--key", verifyOptions->key,
                     "The platform's audit public key (signing.pub.pem, or `sealtrainctl "
                     "signing-keys`)")
        ->required();
    auto lastOptions = std::make_shared<ClientOptions>();
    auto* last = backup->add_subcommand(
        "last", "Where this profile's newest backup went, how old it is and whether the archive "
                "is still there (exit 1 when there is none)");
    addClientOptions(last, *lastOptions, false);
    registry.onRun(last, [lastOptions, &registry] { return lastBackup(registry, *lastOptions); });
    // `backup verify` before `backup`: both are parsed when the subcommand is chosen.
    registry.onRun(verify,
                   [verifyOptions, &registry] { return verifyBackup(registry, *verifyOptions); });
    registry.onRun(backup,
                   [backupOptions, &registry] { return takeBackup(registry, *backupOptions); });

    auto restoreOptions = std::make_shared<RestoreOptions>();
    auto* restoreCommand = app.add_subcommand(
        "restore", "Build a new data directory from a backup archive (needs its keyring "
                   "passphrase or master key file); audited as the restored log's next entry");
    restoreCommand->add_option("ARCHIVE", restoreOptions->archive, "The backup archive")
        ->required();
    restoreCommand
        ->add_option("--data-dir", restoreOptions->dataDir,
                     "The new data directory (must not exist, or be empty)")
        ->required();
    auto* witness = restoreCommand->add_option(
        "--witness", restoreOptions->witness,
        "The newest copy of the platform's audit.witness there is: a newer head than the "
        "backup's is refused unless --accept-loss");
    auto* without = restoreCommand->add_flag("--without-witness", restoreOptions->withoutWitness,
                                             "No copy of the witness file survives (recorded)");
    witness->excludes(without);
    restoreCommand->add_flag("--accept-loss", restoreOptions->acceptLoss,
                             "Restore although the witness recorded entries after the backup: "
                             "they are lost, and the restore entry says how many");
    restoreCommand->add_option(
        "--objects-from", restoreOptions->objectsFrom,
        "Where the files the backup references by digest are (the old "
        "data directory, or a copy of its datasets/, runs/, jobs/, models/)");
    restoreCommand->add_option("--key", restoreOptions->key,
                               "Require the archive to be signed by this audit public key "
                               "(signing.pub.pem)");
    auto* passphrase = restoreCommand->add_option(
        "--passphrase-file", restoreOptions->passphraseFile,
        "Read the backup's keyring passphrase from this file's first line (default: ask)");
    auto* master = restoreCommand->add_option("--master-key-file", restoreOptions->masterKeyFile,
                                              "Unlock with the backup's master key file instead");
    passphrase->excludes(master);
    restoreCommand->footer("Example: sealtrainctl restore sealtrain-2026-12-05.tar --data-dir "
                           "/var/lib/sealtrain.restored --witness /mnt/worm/audit.witness");
    registry.onRun(restoreCommand,
                   [restoreOptions, &registry] { return restore(registry, *restoreOptions); });
}

}  // namespace sealtrain::ctl
