// `sealtrainctl checkpoint verify`: a reviewer's offline check of a training checkpoint
// (docs/formats/checkpoint.md): the DSSE signature under a public key they trust and the
// in-toto lineage statement; with the checkpoints KEK also the decrypted content's SHA-256.
#include "commands.h"
#include "ctl.h"

#include "sealtrain/crypto/key_file.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/trainer/checkpoint.h"

#include <fstream>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

int fail(const CommandRegistry& registry, const Error& error)
{
    registry.err() << "sealtrainctl: " << error.message() << '\n';
    return kExitFailure;
}

Result<crypto::PublicKey> readPublicKey(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Error(ErrorCode::NotFound,
                     "Cannot read the public key '" + path + "'; check the path.");
    const std::string pem((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto key = crypto::PublicKey::fromPem(pem);
    if (!key)
        return key.error().withContext("In '" + path + "'");
    return key;
}

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

}  // namespace

void registerCheckpointCommands(CLI::App& app, CommandRegistry& registry)
{
    struct Options {
        std::string checkpoint;
        std::vector<std::string> keys;
        std::string kekFile;
    };
    auto options = std::make_shared<Options>();
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
    registry.onRun(command, [options, &registry] {
        auto files = trainer::checkpointFilesFor(options->checkpoint);
        if (!files)
            return fail(registry, files.error());
        std::vector<crypto::PublicKey> trusted;
        for (const auto& path : options->keys) {
            auto key = readPublicKey(path);
            if (!key)
                return fail(registry, key.error());
            trusted.push_back(*key);
        }
        auto lineage = trainer::verifyCheckpointSignature(*files, trusted);
        if (!lineage) {
            registry.out() << "verdict: NOT VERIFIED\n";
            return fail(registry, lineage.error());
        }
        printLineage(registry.out(), *lineage);
        if (!options->kekFile.empty()) {
            auto kek = crypto::readKekFile(options->kekFile);
            if (!kek)
                return fail(registry, kek.error());
            const crypto::KekResolver resolver =
                [&kek](const std::string& id, std::uint32_t version) -> Result<const crypto::Kek*> {
                if (id == kek->id && version == kek->version)
                    return &*kek;
                return Error(ErrorCode::NotFound, "The checkpoint is sealed under KEK '" + id
                                                      + "' version " + std::to_string(version)
                                                      + ", not the one in the key file; "
                                                        "pass that key.");
            };
            auto loaded = trainer::loadCheckpoint(*files, trusted, resolver);
            if (!loaded) {
                registry.out() << "verdict: NOT VERIFIED\n";
                return fail(registry, loaded.error());
            }
            const auto& model = loaded->checkpoint.state.config.model;
            registry.out() << "content: decrypted, SHA-256 matches; GPT " << model.layers
                           << " layers, " << model.heads << " heads, width " << model.width
                           << ", context " << model.contextLength << ", vocabulary "
                           << model.vocabSize << '\n';
        }
        registry.out() << "verdict: verified" << (options->kekFile.empty() ? " (signature)" : "")
                       << '\n';
        return kExitOk;
    });
}

}  // namespace sealtrain::ctl
