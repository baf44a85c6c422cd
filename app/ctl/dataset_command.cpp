// `sealtrainctl dataset verify`: a dataset checked by the control plane (every shard decrypted
// there, for a reader of it), or a copy of a dataset folder checked offline, without keys,
// against the platform's manifest key (`sealtrainctl signing-keys` saves it): the manifest against
// its id and signature, every shard's hash (docs/formats/dataset.md). A shard's key re-wrapped
// under a foreign KEK shows only when it is decrypted: the hash leaves the key block out, so that
// rotation does not change a dataset's manifest.
#include "client_options.h"
#include "commands.h"
#include "ctl.h"

#include "sealtrain/crypto/signing.h"
#include "sealtrain/dataset/reader.h"

#include <fmt/format.h>

#include <memory>
#include <ostream>
#include <string>

namespace sealtrain::ctl {
namespace {

struct DatasetVerifyOptions {
    ClientOptions client;
    std::string reference;
    std::string folder;
    std::string key;
};

void printVerified(std::ostream& out, const dataset::VerifyReport& report,
                   const std::string& signer)
{
    const auto shards =
        report.manifest.train.shards.size() + report.manifest.validation.shards.size();
    out << fmt::format("Dataset OK: '{}' {}: manifest signed by {}, {} shards match the manifest",
                       report.manifest.name, report.datasetId, signer, shards);
    if (report.tokensChecked > 0)
        out << fmt::format(", {} tokens decrypted and authenticated", report.tokensChecked);
    out << ".\n";
}

// A copy of a dataset folder, checked without keys against the platform's public key.
int verifyDatasetCopy(const CommandRegistry& registry, const DatasetVerifyOptions& options)
{
    auto trusted = crypto::PublicKey::fromPemFile(options.key);
    if (!trusted)
        return registry.fail(trusted.error());
    auto report = dataset::verifyDataset(options.folder, "", nullptr, &*trusted);
    if (!report)
        return registry.fail(report.error());
    printVerified(registry.out(), *report, trusted->keyId());
    return kExitOk;
}

// A dataset of the control plane, checked there as the signed-in reader.
int verifyOnControlPlane(const CommandRegistry& registry, const DatasetVerifyOptions& options)
{
    return runClientCall(
        registry, options.client,
        [&](api::ControlClient& client) {
            return client.datasets().verifyDataset(options.reference);
        },
        [&](const auto& checked) {
            registry.out() << fmt::format(
                "Dataset OK: '{}' {}: manifest signed by {}, {} shards match the "
                "manifest, {} tokens decrypted and authenticated.\n",
                checked.dataset.name, checked.dataset.id, checked.signer, checked.shards,
                checked.tokens);
            return kExitOk;
        });
}

int verifyDatasetCommand(const CommandRegistry& registry, const DatasetVerifyOptions& options)
{
    if (options.folder.empty() == options.reference.empty())
        return registry.failUsage("Give either a DATASET (checked by the control plane) or "
                                  "--folder with --key (a copy, offline). Run 'sealtrainctl "
                                  "dataset verify --help' for the options.");
    return options.folder.empty() ? verifyOnControlPlane(registry, options)
                                  : verifyDatasetCopy(registry, options);
}

}  // namespace

void registerDatasetCommands(CLI::App& app, CommandRegistry& registry)
{
    auto* group = commandGroup(app, "dataset",
                               "Datasets: import, list, show, share and verify "
                               "(docs/operations/datasets.md)");
    auto options = std::make_shared<DatasetVerifyOptions>();
    auto* command = group->add_subcommand(
        "verify", "Check a dataset: its manifest against its id and the platform's signature and "
                  "every shard, decrypted by the control plane (DATASET), or a copy's shard hashes "
                  "offline (--folder, --key)");
    command->add_option("DATASET", options->reference,
                        "NAME, NAME@VERSION or the id, checked by the control plane");
    auto* folder = command->add_option("--folder", options->folder, "Offline: a dataset folder")
                       ->check(CLI::ExistingDirectory);
    auto* key = command
                    ->add_option("--key", options->key,
                                 "Offline: the platform's manifest key (manifests.pub.pem from "
                                 "`sealtrainctl signing-keys`)")
                    ->check(CLI::ExistingFile);
    folder->needs(key);
    key->needs(folder);
    addClientOptions(command, options->client, true);
    registry.onRun(command,
                   [options, &registry] { return verifyDatasetCommand(registry, *options); });
}

}  // namespace sealtrain::ctl
