// `sealtrainctl checkpoint verify`: a reviewer's offline check of a training checkpoint
// (docs/formats/checkpoint.md): the DSSE signature under a public key they trust and the
// in-toto lineage statement; with the checkpoints KEK also the decrypted content's SHA-256.
// `checkpoint list|download JOB`: a job's recorded checkpoints, and one of them, sealed with its
// envelope, from the control plane (Jobs.ListCheckpoints / DownloadCheckpoint, audited).
#include "client_options.h"
#include "commands.h"
#include "ctl.h"

#include "sealtrain/base/utf8.h"
#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/formats/checkpoint.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

void printLineage(std::ostream& out, const trainer::CheckpointLineage& lineage)
{
    out << "subject: " << lineage.subject.name << " sha256:" << lineage.subject.sha256 << '\n'
        << "run: " << lineage.run << '\n'
        << "job: " << (lineage.job.empty() ? "-" : lineage.job) << '\n'
        << "step: " << lineage.step << '\n'
        << "dataset: " << lineage.dataset << '\n'
        << "config: sha256:" << lineage.configSha256 << '\n'
        << "parent: "
        << (lineage.parent ? lineage.parent->name + " sha256:" + lineage.parent->sha256
                           : std::string("-"))
        << '\n';
}

struct CheckpointVerifyOptions {
    std::string checkpoint;
    std::vector<std::string> keys;
    std::string kekFile;
};

// With the checkpoints KEK: decrypts the content and checks it against the signed SHA-256.
int verifyContent(const CommandRegistry& registry, const CheckpointVerifyOptions& options,
                  const trainer::CheckpointFiles& files,
                  const std::vector<crypto::PublicKey>& trusted)
{
    auto kek = crypto::readKekFile(options.kekFile);
    if (!kek)
        return registry.fail(kek.error());
    auto loaded = trainer::loadCheckpoint(files, trusted, crypto::keyFileResolver(*kek));
    if (!loaded) {
        registry.out() << "verdict: NOT VERIFIED\n";
        return registry.fail(loaded.error());
    }
    const auto& model = loaded->checkpoint.state.config.model;
    registry.out() << "content: decrypted, SHA-256 matches; GPT " << model.layers << " layers, "
                   << model.heads << " heads, width " << model.width << ", context "
                   << model.contextLength << ", vocabulary " << model.vocabSize << '\n';
    return kExitOk;
}

int verifyCheckpoint(const CommandRegistry& registry, const CheckpointVerifyOptions& options)
{
    auto files = trainer::checkpointFilesFor(options.checkpoint);
    if (!files)
        return registry.fail(files.error());
    std::vector<crypto::PublicKey> trusted;
    for (const auto& path : options.keys) {
        auto key = crypto::PublicKey::fromPemFile(path);
        if (!key)
            return registry.fail(key.error());
        trusted.push_back(*key);
    }
    auto lineage = trainer::verifyCheckpointSignature(*files, trusted);
    if (!lineage) {
        registry.out() << "verdict: NOT VERIFIED\n";
        return registry.fail(lineage.error());
    }
    printLineage(registry.out(), *lineage);
    if (!options.kekFile.empty()) {
        if (const int code = verifyContent(registry, options, *files, trusted); code != kExitOk)
            return code;
    }
    registry.out() << "verdict: verified" << (options.kekFile.empty() ? " (signature)" : "")
                   << '\n';
    return kExitOk;
}

struct JobCheckpointOptions {
    ClientOptions client;
    std::int64_t job = 0;
    std::int64_t step = 0;
    std::string out;
    bool json = false;
};

int listJobCheckpoints(const CommandRegistry& registry, const JobCheckpointOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) { return client.jobs().listCheckpoints(options.job); },
        [&](const auto& checkpoints) {
            if (options.json) {
                nlohmann::json array = nlohmann::json::array();
                for (const api::JobCheckpointView& c : checkpoints)
                    array.push_back({{"step", c.step},
                                     {"attempt", c.attempt},
                                     {"worker", c.worker},
                                     {"sealed_sha256", c.sealedSha256},
                                     {"plaintext_sha256", c.plaintextSha256},
                                     {"recorded_unix", c.recordedUnix}});
                registry.out() << array.dump(2) << '\n';
                return kExitOk;
            }
            if (checkpoints.empty()) {
                registry.out() << fmt::format("Job {} has no checkpoint yet.\n", options.job);
                return kExitOk;
            }
            registry.out() << fmt::format("{:>8}  {:>7}  {:<16} {}\n", "step", "attempt", "worker",
                                          "sealed sha256");
            for (const api::JobCheckpointView& c : checkpoints)
                registry.out() << fmt::format("{:>8}  {:>7}  {:<16} {}\n", c.step, c.attempt,
                                              escapeControls(c.worker),
                                              escapeControls(c.sealedSha256));
            return kExitOk;
        });
}

int downloadJobCheckpoint(const CommandRegistry& registry, const JobCheckpointOptions& options)
{
    const std::filesystem::path folder(options.out);
    std::error_code error;
    if (std::filesystem::exists(folder, error) && !std::filesystem::is_empty(folder, error))
        return registry.fail(
            Error(ErrorCode::AlreadyExists,
                  fmt::format("'{}' is not empty; name a new or empty folder.", options.out)));
    std::filesystem::create_directories(folder, error);
    if (error)
        return registry.fail(Error(
            ErrorCode::Io, fmt::format("Cannot create '{}': {}.", options.out, error.message())));
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.jobs().downloadCheckpoint(options.job, options.step, folder);
        },
        [&](const auto& files) {
            for (const std::filesystem::path& file : files)
                registry.out() << file.string() << '\n';
            registry.out()
                << "Still sealed under the job's key. Check its signed lineage with "
                   "`sealtrainctl checkpoint verify FILE.sealed --key WORKER.pub.pem` (the "
                   "worker's signing key: `sealtrainctl worker list --json`).\n";
            return kExitOk;
        });
}

}  // namespace

void registerCheckpointCommands(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<CheckpointVerifyOptions>();
    auto* group = app.add_subcommand(
        "checkpoint", "Training checkpoints: a job's list and download, and the offline check");
    group->require_subcommand(1);
    auto* command = group->add_subcommand(
        "verify", "Verify a checkpoint's signed lineage statement; with --key-file also its "
                  "decrypted content");
    command
        ->add_option("CHECKPOINT", options->checkpoint,
                     "The checkpoint's .sealed file (its .dsse.json envelope beside it)")
        ->required()
        ->check(CLI::ExistingFile);
    command->add_option("--key", options->keys, "Trusted public key, PEM; repeat for several")
        ->required()
        ->check(CLI::ExistingFile);
    command
        ->add_option("--key-file", options->kekFile,
                     "The checkpoints KEK as a key file, to decrypt and hash the content")
        ->check(CLI::ExistingFile);
    registry.onRun(command, [options, &registry] { return verifyCheckpoint(registry, *options); });

    auto listOptions = std::make_shared<JobCheckpointOptions>();
    auto* list = group->add_subcommand(
        "list", "The checkpoints the control plane recorded for a job (audited)");
    list->add_option("JOB", listOptions->job, "The job's number")->required();
    list->add_flag("--json", listOptions->json, "Print JSON");
    addClientOptions(list, listOptions->client, true);
    registry.onRun(list,
                   [listOptions, &registry] { return listJobCheckpoints(registry, *listOptions); });

    auto downloadOptions = std::make_shared<JobCheckpointOptions>();
    auto* download = group->add_subcommand(
        "download", "Download one of a job's checkpoints, sealed, with its signed envelope "
                    "(audited)");
    download->add_option("JOB", downloadOptions->job, "The job's number")->required();
    download->add_option("--step", downloadOptions->step, "Its step (default: the newest)");
    download->add_option("--out", downloadOptions->out, "A new or empty folder to write to")
        ->required();
    addClientOptions(download, downloadOptions->client, true);
    download->footer("Example: sealtrainctl checkpoint download 7 --out job7-checkpoint");
    registry.onRun(download, [downloadOptions, &registry] {
        return downloadJobCheckpoint(registry, *downloadOptions);
    });
}

}  // namespace sealtrain::ctl
