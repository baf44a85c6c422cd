// `sealtrainctl train` and `sealtrainctl sample`: train on a dataset of a local data directory,
// and generate text from one of its checkpoints. The control plane checks
// that the caller may read the dataset (authorizeDatasetRead, audited) before any key leaves the
// keyring; then sealtrain-train is spawned with the keys on a pipe (--keys-fd, never argv or
// the environment) and its JSON-lines metrics relayed to standard output.
#include "commands.h"
#include "ctl.h"
#include "local_platform.h"

#include "sealtrain/core/datasets.h"
#include "sealtrain/crypto/keyring.h"
#include "sealtrain/trainer/checkpoint.h"
#include "sealtrain/trainer/trainer_keys.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

extern char** environ;

namespace sealtrain::ctl {
namespace {

// Options the launcher sets itself; a user giving them would bypass its checks.
constexpr std::string_view kReservedOptions[] = {
    "--keys-fd", "--metrics-fd", "--dataset", "--dataset-id", "--dataset-signer", "--checkpoint"};

// Closes a descriptor when it goes out of scope.
struct Descriptor {
    int fd = -1;
    Descriptor() = default;
    Descriptor(const Descriptor&) = delete;
    Descriptor& operator=(const Descriptor&) = delete;
    ~Descriptor() { reset(); }
    void reset()
    {
        if (fd >= 0)
            ::close(fd);
        fd = -1;
    }
};

Result<void> makePipe(Descriptor& readEnd, Descriptor& writeEnd)
{
    int fds[2] = {-1, -1};
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return Error(ErrorCode::Io, std::string("Cannot create a pipe for the trainer: ")
                                        + std::strerror(errno) + "; check the process limits.");
    readEnd.fd = fds[0];
    writeEnd.fd = fds[1];
    return success();
}

// sealtrain-train beside this program (installed) or in the build tree's app/train/.
Result<std::string> findTrainer(const std::string& given)
{
    if (!given.empty())
        return given;
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error) {
        for (const auto& candidate :
             {self.parent_path() / "sealtrain-train",
              self.parent_path().parent_path() / "train" / "sealtrain-train"}) {
            if (::access(candidate.c_str(), X_OK) == 0)
                return candidate.string();
        }
    }
    return Error(ErrorCode::NotFound, "Cannot find the sealtrain-train executable beside "
                                      "sealtrainctl; pass its path with --trainer.");
}

// Every KEK version of `id` the keyring can still unwrap with (retired ones can not be used).
std::vector<const crypto::Kek*> usableKeks(const crypto::Keyring& keyring, std::string_view id)
{
    std::vector<const crypto::Kek*> keks;
    for (const auto& info : keyring.list()) {
        if (info.id != id || info.state == crypto::KekState::Retired)
            continue;
        if (auto kek = keyring.findKek(info.id, info.version); kek)
            keks.push_back(*kek);
    }
    return keks;
}

Result<void> writeAll(int fd, std::span<const std::uint8_t> bytes)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t wrote = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote <= 0)
            return Error(ErrorCode::Io, "The trainer stopped before it read its keys; see its "
                                        "message above.");
        done += static_cast<std::size_t>(wrote);
    }
    return success();
}

struct Options {
    UnlockOptions unlock;
    std::optional<std::filesystem::path> sessionFile;
    std::string dataset;
    std::string trainer;
};

// Runs sealtrain-train `subcommand` with `arguments`, the keys on a pipe (--keys-fd) and its
// output on another pipe (--metrics-fd for `train`, standard output for `sample`) relayed to
// the registry's output line by line. The keys are wiped once written.
Result<int> runTrainer(const CommandRegistry& registry, const std::string& trainer,
                       std::string_view subcommand, const std::vector<std::string>& arguments,
                       crypto::SecretBytes keysText)
{
    Descriptor keysRead;
    Descriptor keysWrite;
    Descriptor outputRead;
    Descriptor outputWrite;
    SEALTRAIN_TRY(makePipe(keysRead, keysWrite));
    SEALTRAIN_TRY(makePipe(outputRead, outputWrite));
    const bool metrics = subcommand == "train";
    std::vector<std::string> argvText{trainer, std::string(subcommand), "--keys-fd",
                                      std::to_string(keysRead.fd)};
    if (metrics) {
        argvText.emplace_back("--metrics-fd");
        argvText.push_back(std::to_string(outputWrite.fd));
    }
    argvText.insert(argvText.end(), arguments.begin(), arguments.end());
    std::vector<char*> argv;
    argv.reserve(argvText.size() + 1);
    for (auto& argument : argvText)
        argv.push_back(argument.data());
    argv.push_back(nullptr);

    // The child keeps exactly these ends: dup2 onto itself clears close-on-exec.
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, keysRead.fd, keysRead.fd);
    posix_spawn_file_actions_adddup2(&actions, outputWrite.fd,
                                     metrics ? outputWrite.fd : STDOUT_FILENO);
    pid_t child = 0;
    const int spawned =
        ::posix_spawn(&child, argvText[0].c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0)
        return Error(ErrorCode::Io, "Cannot start '" + argvText[0] + "': " + std::strerror(spawned)
                                        + "; check the path.");
    keysRead.reset();
    outputWrite.reset();

    // A trainer that exits before reading must not kill us with SIGPIPE.
    struct sigaction ignore {};
    struct sigaction previous {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &previous);
    const auto handed = writeAll(keysWrite.fd, keysText.bytes());
    keysText.wipe();
    keysWrite.reset();
    ::sigaction(SIGPIPE, &previous, nullptr);

    std::string pending;
    std::array<char, 4096> buffer{};
    for (;;) {
        const ssize_t got = ::read(outputRead.fd, buffer.data(), buffer.size());
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        pending.append(buffer.data(), static_cast<std::size_t>(got));
        for (auto newline = pending.find('\n'); newline != std::string::npos;
             newline = pending.find('\n')) {
            registry.out() << pending.substr(0, newline + 1) << std::flush;
            pending.erase(0, newline + 1);
        }
    }
    registry.out() << pending;
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!handed && !(WIFEXITED(status) && WEXITSTATUS(status) != 0))
        return handed.error();
    if (WIFEXITED(status))
        return WEXITSTATUS(status) == 0 ? kExitOk : kExitFailure;
    return Error(ErrorCode::Internal, "The trainer was killed by signal "
                                          + std::to_string(WTERMSIG(status))
                                          + "; its checkpoints so far are intact, so resume "
                                            "with --resume latest.");
}

Result<std::vector<const crypto::Kek*>> checkpointKeks(const crypto::Keyring& keyring)
{
    auto keks = usableKeks(keyring, trainer::kCheckpointsKekId);
    if (keks.empty())
        return Error(ErrorCode::NotFound, "The keyring has no usable 'checkpoints' KEK; add one "
                                          "with 'sealtrainctl keyring rotate checkpoints'.");
    return keks;
}

Result<int> launchTraining(const CommandRegistry& registry, LocalPlatform& platform,
                           const std::string& session, const Options& options,
                           const std::vector<std::string>& trainerArguments)
{
    // The release check: audited, and nothing is handed over unless it passes.
    auto info = platform.controlPlane().authorizeDatasetRead(session, options.dataset, "train");
    if (!info)
        return info.error();
    auto trainer = findTrainer(options.trainer);
    if (!trainer)
        return trainer.error();
    auto keks = usableKeks(platform.keyring(), datadir::kDatasetsKekId);
    auto forCheckpoints = checkpointKeks(platform.keyring());
    if (!forCheckpoints)
        return forCheckpoints.error();
    keks.insert(keks.end(), forCheckpoints->begin(), forCheckpoints->end());
    auto keysText = trainer::formatTrainerKeys(keks, &platform.signingKey(), {});
    if (!keysText)
        return keysText.error();

    const auto folder = core::datasetFolder(platform.dataDir() / datadir::kDatasets, info->id);
    std::vector<std::string> arguments{
        "--dataset",        folder.string(),
        "--dataset-id",     info->id,
        "--dataset-signer", (platform.dataDir() / datadir::kSigningPublicKey).string()};
    arguments.insert(arguments.end(), trainerArguments.begin(), trainerArguments.end());
    return runTrainer(registry, *trainer, "train", arguments, std::move(keysText).value());
}

// A model carries the classification of the data it was trained on: sampling from a
// checkpoint needs the same release as reading its dataset (audited as purpose "sample").
Result<int> launchSampling(const CommandRegistry& registry, LocalPlatform& platform,
                           const std::string& session, const std::string& trainerPath,
                           const std::filesystem::path& checkpoint,
                           const std::vector<std::string>& samplerArguments)
{
    auto files = trainer::checkpointFilesFor(checkpoint);
    if (!files)
        return files.error();
    const crypto::PublicKey platformKey = platform.signingKey().publicKey();
    auto lineage = trainer::verifyCheckpointSignature(*files, std::span(&platformKey, 1));
    if (!lineage)
        return lineage.error();
    auto info = platform.controlPlane().authorizeDatasetRead(session, lineage->dataset, "sample");
    if (!info)
        return info.error();
    auto trainer = findTrainer(trainerPath);
    if (!trainer)
        return trainer.error();
    auto keks = checkpointKeks(platform.keyring());
    if (!keks)
        return keks.error();
    auto keysText = trainer::formatTrainerKeys(*keks, nullptr, std::span(&platformKey, 1));
    if (!keysText)
        return keysText.error();
    std::vector<std::string> arguments{"--checkpoint", files->sealed.string()};
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

}  // namespace

namespace {

// Declares the launcher's own options; everything from the first option it does not know on goes
// to sealtrain-train (not up to sealtrainctl's global options, as other commands' unknown
// options do).
void addLauncherOptions(CLI::App* command, Options& options)
{
    addUnlockOptions(command, options.unlock);
    addSessionOption(command, options.sessionFile);
    command->add_option("--trainer", options.trainer,
                        "The sealtrain-train executable; default: beside sealtrainctl");
    command->fallthrough(false);
    command->prefix_command();
}

using Launch = std::function<Result<int>(LocalPlatform&, const std::string& session,
                                         const std::vector<std::string>& extras)>;

int runLauncher(const CommandRegistry& registry, const CLI::App* command, const Options& options,
                const Launch& launch)
{
    const std::vector<std::string> extras = command->remaining();
    if (const auto reserved = reservedOption(extras)) {
        registry.err() << "sealtrainctl: " << *reserved << " is set by 'sealtrainctl "
                       << command->get_name() << "' itself; leave it out. Run 'sealtrainctl "
                       << command->get_name() << " --help' for the options.\n";
        return kExitUsage;
    }
    int trainerCode = kExitOk;
    const int code =
        runSignedIn(registry, SignedInOptions{options.unlock, options.sessionFile},
                    [&](LocalPlatform& platform, const std::string& session) -> Result<void> {
                        auto launched = launch(platform, session, extras);
                        if (!launched)
                            return launched.error();
                        trainerCode = *launched;
                        return success();
                    });
    return code == kExitOk ? trainerCode : code;
}

}  // namespace

void registerTrainCommand(CLI::App& app, CommandRegistry& registry)
{
    auto options = std::make_shared<Options>();
    auto* command = app.add_subcommand(
        "train", "Train on a dataset of the data directory with sealtrain-train (its options "
                 "after these, e.g. --out DIR --steps 100; see docs/trainer.md)");
    command->add_option("--dataset", options->dataset, "Dataset id, NAME or NAME@VERSION")
        ->required();
    addLauncherOptions(command, *options);
    registry.onRun(command, [options, command, &registry] {
        return runLauncher(registry, command, *options,
                           [&](LocalPlatform& platform, const std::string& session,
                               const std::vector<std::string>& extras) {
                               return launchTraining(registry, platform, session, *options, extras);
                           });
    });

    auto sampleOptions = std::make_shared<Options>();
    auto checkpoint = std::make_shared<std::filesystem::path>();
    auto* sample = app.add_subcommand(
        "sample", "Generate text from a checkpoint with sealtrain-train sample (its options after "
                  "these: --prompt, --length, --temperature, --top-k, --seed); needs read access "
                  "to the checkpoint's dataset");
    sample->add_option("--checkpoint", *checkpoint, "The checkpoint's .sealed file")->required();
    addLauncherOptions(sample, *sampleOptions);
    registry.onRun(sample, [sampleOptions, checkpoint, sample, &registry] {
        return runLauncher(registry, sample, *sampleOptions,
                           [&](LocalPlatform& platform, const std::string& session,
                               const std::vector<std::string>& extras) {
                               return launchSampling(registry, platform, session,
                                                     sampleOptions->trainer, *checkpoint, extras);
                           });
    });
}

}  // namespace sealtrain::ctl
