// `sealtrainctl train` and `sealtrainctl sample`: train on a dataset of a local data directory,
// and generate text from one of its checkpoints. The control plane checks that the caller may
// read the dataset (Datasets::authorizeRead, audited) before any key leaves the keyring; then
// sealtrain-train is spawned with the keys on a pipe (core/trainer_launcher.h: --keys-fd, never
// argv or the environment) and its JSON-lines metrics relayed to standard output.
#include "commands.h"
#include "ctl.h"
#include "local_platform.h"

#include "sealtrain/base/paths.h"
#include "sealtrain/core/datasets.h"
#include "sealtrain/core/key_release.h"
#include "sealtrain/core/trainer_launcher.h"

#include <unistd.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace sealtrain::ctl {
namespace {

// Options the launcher sets itself; a user giving them would bypass its checks.
constexpr std::string_view kReservedOptions[] = {"--keys-fd",
                                                 "--metrics-fd",
                                                 "--dataset",
                                                 "--dataset-id",
                                                 "--dataset-signer",
                                                 "--checkpoint",
                                                 "--expect-checkpoint-sha256",
                                                 "--expect-dataset-id"};

// sealtrain-train beside this program (installed) or in the build tree's app/train/.
Result<std::string> findTrainer(const std::string& given)
{
    if (!given.empty())
        return given;
    if (auto found = siblingExecutable("sealtrain-train", "train"))
        return found->string();
    return Error(ErrorCode::NotFound, "Cannot find the sealtrain-train executable beside "
                                      "sealtrainctl; pass its path with --trainer.");
}

// What `train` and `sample` share: the data directory, the session and the trainer executable.
struct LauncherOptions {
    SignedInOptions signedIn;
    std::string trainer;
};

struct TrainOptions {
    LauncherOptions launcher;
    std::string dataset;
};

struct SampleOptions {
    LauncherOptions launcher;
    std::filesystem::path checkpoint;
};

// Runs sealtrain-train `subcommand` with `arguments` and `keys` (core/trainer_launcher.h), its
// output relayed to the registry's output line by line; the trainer's failure is ours.
Result<int> runTrainer(const CommandRegistry& registry, const std::string& trainer,
                       std::string_view subcommand, std::vector<std::string> arguments,
                       crypto::SecretBytes keys)
{
    auto status = core::runTrainer(
        {trainer, std::string(subcommand), std::move(arguments), {}, {}, {}}, std::move(keys),
        [&registry](std::string_view line) { registry.out() << line << std::flush; });
    if (!status)
        return status.error();
    return *status == 0 ? kExitOk : kExitFailure;
}

Result<int> launchTraining(const CommandRegistry& registry, core::DataDirectory& platform,
                           const std::string& session, const TrainOptions& options,
                           const std::vector<std::string>& trainerArguments)
{
    // The release check: audited, and nothing is handed over unless it passes.
    auto info = platform.controlPlane().datasets().authorizeRead(session, options.dataset, "train");
    if (!info)
        return info.error();
    auto trainer = findTrainer(options.launcher.trainer);
    if (!trainer)
        return trainer.error();
    // The data keys of this dataset's shards only (core/key_release.h), as a daemon's run gets.
    auto keysText = core::KeyRelease(platform).forOwnRun(info->id);
    if (!keysText)
        return keysText.error();

    const auto folder = core::datasetFolder(platform.datasetsRoot(), info->id);
    std::vector<std::string> arguments{
        "--dataset",        folder.string(),
        "--dataset-id",     info->id,
        "--dataset-signer", (platform.path() / core::datadir::kManifestsPublicKey).string()};
    arguments.insert(arguments.end(), trainerArguments.begin(), trainerArguments.end());
    return runTrainer(registry, *trainer, "train", arguments, std::move(keysText).value());
}

// A model carries the classification of the data it was trained on: sampling from a
// checkpoint needs the same release as reading its dataset (audited as purpose "sample").
Result<int> launchSampling(const CommandRegistry& registry, core::DataDirectory& platform,
                           const std::string& session, const SampleOptions& options,
                           const std::vector<std::string>& samplerArguments)
{
    const core::KeyRelease release(platform);
    auto checkpoint = release.checkpointAt(options.checkpoint);
    if (!checkpoint)
        return checkpoint.error();
    auto info =
        platform.controlPlane().datasets().authorizeRead(session, checkpoint->datasetId, "sample");
    if (!info)
        return info.error();
    auto trainer = findTrainer(options.launcher.trainer);
    if (!trainer)
        return trainer.error();
    auto keysText = release.forSampler(*checkpoint);
    if (!keysText)
        return keysText.error();
    // What was checked here is what the trainer must read (time of check, time of use): a
    // checkpoint swapped in meanwhile, even one signed by the platform, is refused there.
    std::vector<std::string> arguments{"--checkpoint", checkpoint->files.sealed.string()};
    arguments.insert(arguments.end(), {"--expect-checkpoint-sha256", checkpoint->plaintextSha256});
    arguments.insert(arguments.end(), {"--expect-dataset-id", info->id});
    arguments.insert(arguments.end(), samplerArguments.begin(), samplerArguments.end());
    return runTrainer(registry, *trainer, "sample", arguments, std::move(keysText).value());
}

// The launcher's options that the trainer must not get from the user.
std::optional<std::string> reservedOption(const std::vector<std::string>& arguments)
{
    for (const auto& argument : arguments) {
        const auto name = argument.substr(0, argument.find('='));
        if (std::find(std::begin(kReservedOptions), std::end(kReservedOptions), name)
            != std::end(kReservedOptions))
            return name;
    }
    return std::nullopt;
}

// Declares the launcher's own options; everything from the first option it does not know on goes
// to sealtrain-train (not up to sealtrainctl's global options, as other commands' unknown
// options do).
void addLauncherOptions(CLI::App* command, LauncherOptions& options)
{
    options.signedIn.addTo(command);
    command->add_option("--trainer", options.trainer,
                        "The sealtrain-train executable; default: beside sealtrainctl");
    command->fallthrough(false);
    command->prefix_command();
}

using Launch = std::function<Result<int>(core::DataDirectory&, const std::string& session)>;

// Runs `launch` as the signed-in user; its exit code is the trainer's. `command` names the
// sealtrainctl command and `extras` are the arguments it passes on to the trainer.
int runLauncher(const CommandRegistry& registry, const std::string& command,
                const LauncherOptions& options, const std::vector<std::string>& extras,
                const Launch& launch)
{
    if (const auto reserved = reservedOption(extras)) {
        return registry.failUsage(*reserved + " is set by 'sealtrainctl " + command
                                  + "' itself; leave it out. Run 'sealtrainctl " + command
                                  + " --help' for the options.");
    }
    int trainerCode = kExitOk;
    const int code =
        runSignedIn(registry, options.signedIn,
                    [&](core::DataDirectory& platform, const std::string& session) -> Result<void> {
                        auto launched = launch(platform, session);
                        if (!launched)
                            return launched.error();
                        trainerCode = *launched;
                        return success();
                    });
    return code == kExitOk ? trainerCode : code;
}

int train(const CommandRegistry& registry, const TrainOptions& options,
          const std::vector<std::string>& extras)
{
    return runLauncher(registry, "train", options.launcher, extras,
                       [&](core::DataDirectory& platform, const std::string& session) {
                           return launchTraining(registry, platform, session, options, extras);
                       });
}

int sample(const CommandRegistry& registry, const SampleOptions& options,
           const std::vector<std::string>& extras)
{
    return runLauncher(registry, "sample", options.launcher, extras,
                       [&](core::DataDirectory& platform, const std::string& session) {
                           return launchSampling(registry, platform, session, options, extras);
                       });
}

}  // namespace

void registerTrainCommand(CLI::App& app, CommandRegistry& registry)
{
    auto trainOptions = std::make_shared<TrainOptions>();
    auto* trainCommand = app.add_subcommand(
        "train", "Train on a dataset of the data directory with sealtrain-train (its options "
                 "after these, e.g. --out DIR --steps 100; see docs/trainer.md)");
    trainCommand->add_option("--dataset", trainOptions->dataset, "Dataset id, NAME or NAME@VERSION")
        ->required();
    addLauncherOptions(trainCommand, trainOptions->launcher);
    // The arguments after the launcher's own are the trainer's (addLauncherOptions).
    registry.onRun(trainCommand, [trainOptions, trainCommand, &registry] {
        return train(registry, *trainOptions, trainCommand->remaining());
    });

    auto sampleOptions = std::make_shared<SampleOptions>();
    auto* sampleCommand = app.add_subcommand(
        "sample", "Generate text from a checkpoint with sealtrain-train sample (its options after "
                  "these: --prompt, --length, --temperature, --top-k, --seed); needs read access "
                  "to the checkpoint's dataset");
    sampleCommand
        ->add_option("--checkpoint", sampleOptions->checkpoint, "The checkpoint's .sealed file")
        ->required();
    addLauncherOptions(sampleCommand, sampleOptions->launcher);
    registry.onRun(sampleCommand, [sampleOptions, sampleCommand, &registry] {
        return sample(registry, *sampleOptions, sampleCommand->remaining());
    });
}

}  // namespace sealtrain::ctl
