// sealtrain-control init | restore | verify-backup | describe | versions
// (data_directory_tools.h, docs/formats/control-tools.md).
#include "data_directory_tools.h"

#include "secret_line.h"

#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/process.h"
#include "sealtrain/base/version.h"
#include "sealtrain/core/backup/backup.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/platform/versions.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/signing.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <pwd.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace sealtrain::control {
namespace {

using Json = nlohmann::json;

// One JSON line on standard output, written at once (a reader acts on each line as it comes).
void emit(const Json& line)
{
    const std::string text = line.dump() + "\n";
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
}

// The last line of every tool: {"result": …} and 0, or {"error": "One sentence.", "code": …} and 1.
int finish(const Result<Json>& result)
{
    if (!result) {
        emit(Json{{"error", result.error().message()},
                  {"code", errorCodeName(result.error().code())}});
        return 1;
    }
    emit(Json{{"result", *result}});
    return 0;
}

Result<std::string> caFingerprint(const std::filesystem::path& dataDir)
{
    auto pem = readWholeFile(dataDir / core::datadir::kCaCertificate);
    if (!pem)
        return Error(ErrorCode::NotFound,
                     fmt::format("'{}' is not a data directory (it has no platform CA); check "
                                 "the path, or run `sealtrainctl init` without --existing to "
                                 "make one.",
                                 dataDir.string()));
    return crypto::certificateFingerprint(*pem);
}

// The operating-system account that runs the tool, recorded in a restore's audit entry.
std::string operatorName()
{
    if (const passwd* user = ::getpwuid(::getuid()); user != nullptr && user->pw_name != nullptr)
        return user->pw_name;
    return fmt::format("uid-{}", ::getuid());
}

struct InitOptions {
    std::filesystem::path dataDir;
    std::string admin;
    std::filesystem::path masterKeyFile;
    std::uint64_t argon2Ops = crypto::kArgon2Default.opsLimit;
    std::uint64_t argon2MemMiB = crypto::kArgon2Default.memLimitBytes >> 20U;
};

// The passphrase (unless a master key file unlocks) and then the admin's password, one a line.
Result<Json> init(const InitOptions& options)
{
    core::NewDataDirectory request;
    request.path = options.dataDir;
    request.adminName = options.admin;
    request.argon2 = {options.argon2Ops, options.argon2MemMiB << 20U};
    if (!options.masterKeyFile.empty()) {
        request.masterKeyFile = options.masterKeyFile;
    } else {
        auto passphrase = readSecretLine("keyring passphrase", "give --master-key-file");
        if (!passphrase)
            return passphrase.error();
        request.passphrase = std::move(*passphrase);
    }
    auto password = readSecretLine("first admin's password", "give it on the next line");
    detachStandardInput();
    if (!password)
        return password.error();
    request.adminPassword = std::move(*password);
    auto enrollment = core::DataDirectory::create(request);
    if (!enrollment)
        return enrollment.error();
    auto fingerprint = caFingerprint(request.path);
    if (!fingerprint)
        return fingerprint.error();
    return Json{{"data_dir", request.path.string()},
                {"admin", enrollment->user},
                {"otpauth_uri", enrollment->otpauthUri},
                {"ca_fingerprint", *fingerprint}};
}

struct RestoreOptions {
    std::filesystem::path archive;
    std::filesystem::path dataDir;
    std::filesystem::path witness;
    bool withoutWitness = false;
    bool acceptLoss = false;
    std::filesystem::path objectsFrom;
    std::filesystem::path key;
    std::filesystem::path masterKeyFile;
};

Result<Json> restore(const RestoreOptions& options)
{
    core::RestoreRequest request;
    request.archive = options.archive;
    request.target = options.dataDir;
    if (!options.masterKeyFile.empty()) {
        request.unlock.masterKeyFile = options.masterKeyFile;
        detachStandardInput();
    } else {
        request.unlock.passphrase = [] {
            auto passphrase =
                readSecretLine("backup's keyring passphrase", "give --master-key-file");
            detachStandardInput();
            return passphrase;
        };
    }
    if (!options.witness.empty())
        request.witness = options.witness;
    request.withoutWitness = options.withoutWitness;
    request.acceptLoss = options.acceptLoss;
    if (!options.objectsFrom.empty())
        request.objectsFrom = options.objectsFrom;
    if (!options.key.empty()) {
        auto key = crypto::PublicKey::fromPemFile(options.key);
        if (!key)
            return key.error();
        request.trustedKey = *key;
    }
    request.operatorName = operatorName();
    request.progress = [](const std::string& line) { emit(Json{{"progress", line}}); };
    auto done = core::restoreBackup(request);
    if (!done)
        return done.error();
    return Json{{"created", done->manifest.created},
                {"version", done->manifest.version},
                {"head", done->manifest.head},
                {"restore_entry", done->restoreEntry},
                {"lost_entries", done->lostEntries},
                {"detached_witnesses", done->detachedWitnesses},
                {"files", done->files},
                {"referenced", done->referenced}};
}

Result<Json> verifyBackup(const std::filesystem::path& archive, const std::filesystem::path& key)
{
    detachStandardInput();
    auto trusted = crypto::PublicKey::fromPemFile(key);
    if (!trusted)
        return trusted.error();
    auto manifest = core::verifyBackup(archive, *trusted);
    if (!manifest)
        return manifest.error();
    return Json{{"created", manifest->created},
                {"version", manifest->version},
                {"head", manifest->head},
                {"files", manifest->files},
                {"referenced", manifest->referenced},
                {"referenced_bytes", manifest->referencedBytes}};
}

Result<Json> describe(const std::filesystem::path& dataDir)
{
    detachStandardInput();
    auto fingerprint = caFingerprint(dataDir);
    if (!fingerprint)
        return fingerprint.error();
    return Json{{"data_dir", dataDir.string()}, {"ca_fingerprint", *fingerprint}};
}

Result<Json> versions()
{
    detachStandardInput();
    const core::PlatformVersions found = core::platformVersions();
    return Json{{"sealtrain", kVersion},  {"qt", found.qt},     {"sqlcipher", found.sqlcipher},
                {"sqlite", found.sqlite}, {"grpc", found.grpc}, {"protobuf", found.protobuf}};
}

void addInit(CLI::App& app, std::optional<int>& exitCode)
{
    auto options = std::make_shared<InitOptions>();
    auto* command = app.add_subcommand(
        "init", "Create a data directory: keyring, database, signing key, platform CA and the "
                "first admin. Standard input: the keyring passphrase (unless "
                "--master-key-file), then the admin's password, one a line");
    command
        ->add_option("--data-dir", options->dataDir,
                     "The new data directory (refused when "
                     "it exists and is not empty)")
        ->required();
    command->add_option("--admin", options->admin, "The first admin's user name")->required();
    command->add_option("--master-key-file", options->masterKeyFile,
                        "Seal the keyring with this key file instead of a passphrase");
    command->add_option("--argon2-ops", options->argon2Ops, "Argon2id passes for the passphrase")
        ->capture_default_str();
    command
        ->add_option("--argon2-mem-mib", options->argon2MemMiB,
                     "Argon2id memory for the passphrase, in MiB")
        ->capture_default_str();
    command->callback([options, &exitCode] { exitCode = finish(init(*options)); });
}

void addRestore(CLI::App& app, std::optional<int>& exitCode)
{
    auto options = std::make_shared<RestoreOptions>();
    auto* command = app.add_subcommand(
        "restore", "Build a new data directory from a backup archive, audited as the restored "
                   "log's next entry. Standard input: the backup's keyring passphrase (unless "
                   "--master-key-file)");
    command->add_option("ARCHIVE", options->archive, "The backup archive")->required();
    command->add_option("--data-dir", options->dataDir, "The new data directory")->required();
    auto* witness = command->add_option("--witness", options->witness,
                                        "The newest copy of the platform's audit.witness");
    auto* without = command->add_flag("--without-witness", options->withoutWitness,
                                      "No copy of the witness file survives (recorded)");
    witness->excludes(without);
    command->add_flag("--accept-loss", options->acceptLoss,
                      "Restore although the witness recorded entries after the backup");
    command->add_option("--objects-from", options->objectsFrom,
                        "Where the files the backup references by digest are");
    command->add_option("--key", options->key,
                        "Require the archive to be signed by this audit public key");
    command->add_option("--master-key-file", options->masterKeyFile,
                        "Unlock with the backup's master key file");
    command->callback([options, &exitCode] { exitCode = finish(restore(*options)); });
}

}  // namespace

void addDataDirectoryTools(CLI::App& app, std::optional<int>& exitCode)
{
    addInit(app, exitCode);
    addRestore(app, exitCode);

    auto archive = std::make_shared<std::filesystem::path>();
    auto key = std::make_shared<std::filesystem::path>();
    auto* verify = app.add_subcommand(
        "verify-backup", "Check a backup archive offline: its signature under the platform's "
                         "audit key and every member against its signed manifest");
    verify->add_option("ARCHIVE", *archive, "The backup archive")->required();
    verify->add_option("--key", *key, "The platform's audit public key (signing.pub.pem)")
        ->required();
    verify->callback(
        [archive, key, &exitCode] { exitCode = finish(verifyBackup(*archive, *key)); });

    auto dataDir = std::make_shared<std::filesystem::path>();
    auto* describeCommand = app.add_subcommand(
        "describe", "A data directory's public facts: its platform CA's fingerprint");
    describeCommand->add_option("--data-dir", *dataDir, "The data directory")->required();
    describeCommand->callback([dataDir, &exitCode] { exitCode = finish(describe(*dataDir)); });

    app.add_subcommand("versions", "The versions of the libraries this control plane runs on")
        ->callback([&exitCode] { exitCode = finish(versions()); });
}

}  // namespace sealtrain::control
