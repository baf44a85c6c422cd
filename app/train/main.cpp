// sealtrain-train: the trainer executable, one process per rank (docs/trainer.md "Running the
// trainer"). Thin: parses the command line, reads the keys from the inherited descriptor, opens
// the collective and hands over to the trainer library with the backends it was built with.
#include "sealtrain/base/process.h"
#include "sealtrain/base/version.h"
#include "sealtrain/dataset/tokenizer.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/trainer_keys.h"
#include "sealtrain/trainer/built_backends.h"
#include "sealtrain/trainer/collective.h"
#include "sealtrain/trainer/platform_info.h"
#include "sealtrain/trainer/sampling.h"
#include "sealtrain/trainer/train_run.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <array>
#include <iostream>
#include <istream>
#include <string>

namespace {

using namespace sealtrain;

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

int fail(const Error& error)
{
    std::cerr << "sealtrain-train: " << error.message() << '\n';
    return kExitFailure;
}

int train(const trainer::TrainOptions& options, int keysFd, int metricsFd)
{
    auto collective = trainer::openCollective();
    if (!collective)
        return fail(collective.error());
    auto keys = trainer::readTrainerKeys(keysFd);
    if (!keys)
        return fail(keys.error());
    const trainer::TrainOutput output{metricsFd, (*collective)->rank() == 0 && ::isatty(2) != 0};
    auto summary =
        trainer::runTraining(options, *keys, **collective, output, trainer::builtBackends());
    if (!summary)
        return fail(summary.error());
    return kExitOk;
}

// The prompt a launcher wrote on standard input (--prompt-stdin), to its end.
Result<std::string> readPrompt(std::istream& in)
{
    constexpr std::size_t kMaxPrompt = std::size_t{1} << 20U;
    std::string prompt;
    std::array<char, 4096> buffer{};
    while (in.read(buffer.data(), buffer.size()) || in.gcount() > 0) {
        prompt.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
        if (prompt.size() > kMaxPrompt)
            return Error(ErrorCode::InvalidArgument,
                         "The prompt on standard input is over 1 MiB; shorten it.");
    }
    return prompt;
}

int sample(const std::string& checkpoint, const trainer::AuthorisedCheckpoint& authorised,
           int keysFd, trainer::Device device, const trainer::SampleOptions& options)
{
    auto keys = trainer::readTrainerKeys(keysFd);
    if (!keys)
        return fail(keys.error());
    auto files = trainer::checkpointFilesFor(checkpoint);
    if (!files)
        return fail(files.error());
    auto loaded = trainer::loadCheckpoint(*files, keys->trusted, keys->resolver());
    if (!loaded)
        return fail(loaded.error());
    if (auto same = trainer::checkAuthorised(*loaded, authorised); !same)
        return fail(same.error());
    const auto& state = loaded->checkpoint.state;
    if (state.tokenizer != "byte")
        return fail(Error(ErrorCode::Unsupported,
                          "Sampling decodes byte-level checkpoints only, and this one was "
                          "trained with the '"
                              + state.tokenizer + "' tokenizer."));
    const trainer::ModelSpec spec{state.config.model, {1, state.config.model.contextLength}, {}};
    auto model = trainer::createModel(device, spec, trainer::builtBackends());
    if (!model)
        return fail(model.error());
    if (auto set = (*model)->setParameters(loaded->checkpoint.parameters); !set)
        return fail(set.error());
    dataset::ByteTokenizer tokenizer;
    auto text = trainer::sampleText(**model, tokenizer, options);
    if (!text)
        return fail(text.error());
    std::cout << *text << '\n';
    return kExitOk;
}

}  // namespace

// Over 100 lines: the trainer's subcommands and options, one CLI11 declaration each, read
// top to bottom as `--help` prints them.
int main(int argc, char** argv)
{
    sealtrain::disableCoreDumps();
    CLI::App app{"sealtrain-train: trains a GPT on a sealed dataset and writes sealed, signed "
                 "checkpoints; one process per rank (mpirun -np N sealtrain-train train ...)."};
    app.require_subcommand(1);
    app.footer("Keys arrive on --keys-fd (docs/formats/trainer-keys.md), never in arguments or "
               "the environment.");

    // --device of both commands: which backend computes the model (model_factory.h).
    const auto addDeviceOption = [](CLI::App* command, std::string& device) {
        command
            ->add_option("--device", device,
                         "auto (CUDA when built and a GPU is visible, else the CPU), cpu or cuda")
            ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
            ->capture_default_str();
    };
    trainer::TrainOptions options;
    std::string trainDevice = "auto";
    int keysFd = 0;
    int metricsFd = 1;
    auto* trainCommand = app.add_subcommand("train", "Train, checkpoint and resume");
    trainCommand->add_option("--layers", options.layers, "Transformer blocks")
        ->capture_default_str();
    trainCommand->add_option("--heads", options.heads, "Attention heads")->capture_default_str();
    trainCommand->add_option("--width", options.width, "Channels (a multiple of --heads)")
        ->capture_default_str();
    trainCommand->add_option("--context", options.context, "Sequence length")
        ->capture_default_str();
    trainCommand->add_option("--batch", options.batch, "Sequences per micro-batch per rank")
        ->capture_default_str();
    trainCommand->add_option("--grad-accum", options.gradAccum, "Micro-batches per step")
        ->capture_default_str();
    trainCommand->add_option("--steps", options.steps, "Optimizer steps in all")
        ->capture_default_str();
    trainCommand->add_option("--lr", options.learningRate, "Peak learning rate")
        ->capture_default_str();
    trainCommand->add_option("--warmup", options.warmup, "Warm-up steps")->capture_default_str();
    trainCommand->add_option("--min-lr", options.minLearningRate, "Learning rate at the end")
        ->capture_default_str();
    trainCommand->add_option("--weight-decay", options.weightDecay, "AdamW weight decay")
        ->capture_default_str();
    trainCommand->add_option("--clip", options.clip, "Global gradient norm bound; 0: none")
        ->capture_default_str();
    trainCommand->add_option("--seed", options.seed, "Initialisation and data order")
        ->capture_default_str();
    trainCommand->add_option("--dataset", options.datasetDir, "The sealed dataset's folder")
        ->required();
    trainCommand->add_option("--dataset-id", options.datasetId,
                             "The dataset id (sha256:...); default: the folder's name");
    auto* signerOption = trainCommand->add_option(
        "--dataset-signer", options.datasetSigner,
        "The control plane's manifest key (manifests.pub.pem): the dataset's "
        "manifest signature must verify under it; required unless "
        "--allow-unsigned-dataset");
    trainCommand
        ->add_flag("--allow-unsigned-dataset", options.allowUnsignedDataset,
                   "Tests only: train on a dataset made outside a control plane without checking "
                   "its manifest signature")
        ->excludes(signerOption);
    trainCommand->add_option("--out", options.outDir, "Folder for the run's checkpoints")
        ->required();
    trainCommand
        ->add_option("--checkpoint-every", options.checkpointEvery,
                     "Steps between checkpoints; 0: only at the end")
        ->capture_default_str();
    trainCommand->add_option("--keep", options.keep, "Checkpoints kept; 0: all")
        ->capture_default_str();
    trainCommand->add_option("--resume", options.resume,
                             "'latest' (in --out) or a checkpoint's .sealed file");
    auto* initOption = trainCommand->add_option(
        "--init-from", options.initFrom,
        "Fine-tune: start from this sealed base model or checkpoint (its data key among the keys)");
    trainCommand
        ->add_option("--init-sha256", options.initSha256,
                     "The SHA-256 the --init-from plaintext must have (what was authorised)")
        ->needs(initOption);
    trainCommand
        ->add_option("--init-name", options.initName,
                     "The name the checkpoints' lineage gives the --init-from model (NAME@VERSION)")
        ->needs(initOption);
    trainCommand->add_option("--val-every", options.valEvery, "Steps between validations; 0: none")
        ->capture_default_str();
    trainCommand->add_option("--val-batches", options.valBatches, "Validation batches per rank")
        ->capture_default_str();
    trainCommand->add_option("--run-id", options.runId, "The run's id; default: random");
    trainCommand->add_option("--job-id", options.jobId, "The control plane's job id");
    trainCommand
        ->add_option("--checkpoint-kek", options.checkpointKek,
                     "The id of the KEK (among the keys) that seals checkpoints")
        ->capture_default_str();
    trainCommand->add_option("--threads", options.threads, "Threads per rank; 0: the default")
        ->capture_default_str();
    addDeviceOption(trainCommand, trainDevice);
    trainCommand->add_option("--keys-fd", keysFd, "Descriptor the keys are read from")
        ->capture_default_str();
    trainCommand->add_option("--metrics-fd", metricsFd, "Descriptor for the JSON-lines metrics")
        ->capture_default_str();

    std::string checkpoint;
    int sampleKeysFd = 0;
    trainer::SampleOptions sampleOptions;
    std::string sampleDevice = "auto";
    auto* versionsCommand = app.add_subcommand(
        "versions", "The MPI and BLAS libraries this trainer runs on, as JSON (for doctor)");
    auto* sampleCommand =
        app.add_subcommand("sample", "Verify a checkpoint, then generate text from it");
    sampleCommand->add_option("--checkpoint", checkpoint, "The checkpoint's .sealed file")
        ->required();
    sampleCommand->add_option("--keys-fd", sampleKeysFd, "Descriptor the keys are read from")
        ->capture_default_str();
    trainer::AuthorisedCheckpoint authorised;
    // Required: the sampler runs only the checkpoint its launcher (the control plane) checked.
    sampleCommand
        ->add_option("--expect-checkpoint-sha256", authorised.sha256,
                     "Refuse a checkpoint whose plaintext SHA-256 (hex) is not this one: what the "
                     "launcher checked")
        ->required();
    sampleCommand
        ->add_option("--expect-dataset-id", authorised.datasetId,
                     "Refuse a checkpoint trained on another dataset (sha256:...) than the one "
                     "the launcher released")
        ->required();
    auto* promptOption = sampleCommand->add_option("--prompt", sampleOptions.prompt,
                                                   "Text to continue (shown in the process list: "
                                                   "launchers use --prompt-stdin)");
    bool promptOnStdin = false;
    sampleCommand
        ->add_flag("--prompt-stdin", promptOnStdin,
                   "Read the text to continue from standard input, to its end (1 MiB at most)")
        ->excludes(promptOption);
    sampleCommand->add_option("--length", sampleOptions.length, "Tokens to generate")
        ->capture_default_str();
    sampleCommand->add_option("--temperature", sampleOptions.temperature, "0: greedy")
        ->capture_default_str();
    sampleCommand->add_option("--top-k", sampleOptions.topK, "Sample among the K likeliest; 0: all")
        ->capture_default_str();
    sampleCommand->add_option("--seed", sampleOptions.seed, "Sampling seed")->capture_default_str();
    addDeviceOption(sampleCommand, sampleDevice);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        std::cout << app.help();
        return kExitOk;
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) {
            std::cout << app.help();
            return kExitOk;
        }
        std::string what = e.what();
        if (!what.empty() && what.back() != '.')
            what += '.';
        std::cerr << "sealtrain-train: " << what << " Run 'sealtrain-train --help' for usage.\n";
        return kExitUsage;
    }
    if (versionsCommand->parsed()) {
        // The tools' answer form (docs/formats/control-tools.md), for `sealtrainctl doctor`.
        const nlohmann::json versions{{"sealtrain", sealtrain::kVersion},
                                      {"mpi", trainer::mpiLibraryVersion()},
                                      {"blas", trainer::blasDescription()}};
        std::cout << nlohmann::json{{"result", versions}}.dump() << '\n';
        return kExitOk;
    }
    if (trainCommand->parsed()) {
        options.device = trainer::parseDevice(trainDevice).value_or(trainer::Device::Auto);
        return train(options, keysFd, metricsFd);
    }
    if (promptOnStdin) {
        auto prompt = readPrompt(std::cin);
        if (!prompt)
            return fail(prompt.error());
        sampleOptions.prompt = std::move(prompt).value();
    }
    return sample(checkpoint, authorised, sampleKeysFd,
                  trainer::parseDevice(sampleDevice).value_or(trainer::Device::Auto),
                  sampleOptions);
}
