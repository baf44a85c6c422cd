// `sealtrainctl checkpoint verify`: a reviewer's offline check of a training checkpoint
// (docs/formats/checkpoint.md): the DSSE signature under a public key they trust and the
// in-toto lineage statement; with the checkpoints KEK also the decrypted content's SHA-256.
#include "commands.h"
#include "ctl.h"

#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/trainer/checkpoint.h"

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

struct VerifyOptions {
    std::string checkpoint;
    std::vector<std::string> keys;
    std::string kekFile;
};

// With the checkpoints KEK: decrypts the content and checks it against the signed SHA-256.
int verifyContent(const CommandRegistry& registry, const VerifyOptions& options,
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

int verifyCheckpoint(const CommandRegistry& registry, const VerifyOptions& options)
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

}  // namespace

void registerCheckpointCommands(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<VerifyOptions>();
    auto* group = app.add_subcommand("checkpoint", "Check training checkpoints offline");
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
}

}  // namespace sealtrain::ctl
