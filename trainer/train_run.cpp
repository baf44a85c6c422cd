// The training run (train_run.h): data, the model on the chosen device, steps, validation,
// metrics and checkpoints.
#include "sealtrain/trainer/train_run.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/dataset/reader.h"
#include "sealtrain/formats/base_model.h"
#include "sealtrain/trainer/sgemm_ceiling.h"
#include "sealtrain/trainer/training.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>

extern "C" void openblas_set_num_threads(int threads);

namespace sealtrain::trainer {
namespace {

using Clock = std::chrono::steady_clock;

Error invalid(const std::string& sentence)
{
    return Error(ErrorCode::InvalidArgument, sentence);
}

// Every rank learns whether any rank failed; the failing rank keeps its own error.
Result<void> agree(Collective& collective, Result<void> local)
{
    std::array<double, 1> failed{local.ok() ? 0.0 : 1.0};
    if (auto reduced = collective.allReduceSum(failed); !reduced)
        return reduced.error();
    if (!local)
        return local;
    if (failed[0] > 0.0)
        return Error(ErrorCode::Internal,
                     "Another rank of the run failed; read its message above and fix that.");
    return success();
}

// Resident memory now, from /proc/self/statm (0 where it can not be read).
std::uint64_t residentBytes()
{
    std::ifstream statm("/proc/self/statm");
    std::uint64_t pages = 0;
    std::uint64_t resident = 0;
    statm >> pages >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// JSON lines on a descriptor, and the progress line on stderr; rank 0 only.
class Metrics final {
public:
    Metrics(const TrainOutput& output, bool enabled)
        : fd_(enabled ? output.metricsFd : -1)
        , progress_(enabled && output.progressLine)
    {
    }

    void line(const nlohmann::json& record)
    {
        if (fd_ < 0)
            return;
        const std::string text = record.dump() + "\n";
        std::size_t done = 0;
        while (done < text.size()) {
            const ssize_t wrote = ::write(fd_, text.data() + done, text.size() - done);
            if (wrote < 0 && errno == EINTR)
                continue;
            if (wrote <= 0) {
                fd_ = -1;  // a reader that went away stops the metrics, not the run
                return;
            }
            done += static_cast<std::size_t>(wrote);
        }
    }

    void progress(const std::string& text, bool last) const
    {
        if (progress_)
            std::fprintf(stderr, "\r%s\033[K%s", text.c_str(), last ? "\n" : "");
    }

private:
    int fd_;
    bool progress_;
};

struct Run {
    const TrainOptions& options;
    const TrainerKeys& keys;
    Collective& collective;
    TrainingConfig config;
    std::unique_ptr<dataset::DatasetReader> train;
    std::unique_ptr<dataset::DatasetReader> validation;
    std::uint64_t fullBatchesPerEpoch = 0;
    std::unique_ptr<Model> model;
    std::uint64_t step = 0;
    std::string runId;
    std::optional<CheckpointReference> parent;
    std::optional<CheckpointReference> base;  // the model a fine-tuning run started from
    std::string tokenizer;
    std::optional<crypto::PublicKey> datasetSigner;
    crypto::DataKeyResolver dataKeys;  // the shards' own keys, when those were handed over
};

// Every rank trains on the same kind of device (--device auto could differ between nodes).
Result<void> agreeOnDevice(Run& run)
{
    std::array<double, 1> onGpus{run.model->device() == deviceName(Device::Cuda) ? 1.0 : 0.0};
    SEALTRAIN_TRY(run.collective.allReduceSum(onGpus));
    if (onGpus[0] > 0.0 && onGpus[0] < static_cast<double>(run.collective.worldSize()))
        return invalid(fmt::format("{} of the run's {} ranks found a GPU and the others did not; "
                                   "pass the same --device cpu or --device cuda to every rank.",
                                   static_cast<int>(onGpus[0]), run.collective.worldSize()));
    return success();
}

Result<void> validateOptions(const TrainOptions& options, const TrainerKeys& keys,
                             const ModelBackends& backends)
{
    if (options.batch == 0 || options.gradAccum == 0 || options.steps == 0)
        return invalid("The batch, gradient accumulation and step counts must be at least 1; "
                       "raise them.");
    if (options.datasetDir.empty() || options.outDir.empty())
        return invalid("A training run needs --dataset and --out; give both.");
    // Without a signer anyone who can write the dataset's folder chooses what the model learns;
    // only a test may skip the check, and it has to say so.
    if (options.datasetSigner.empty() && !options.allowUnsignedDataset)
        return invalid("The dataset's signature can not be checked without --dataset-signer; "
                       "pass the control plane's manifests.pub.pem with --dataset-signer (or "
                       "--allow-unsigned-dataset for a test dataset made outside a control "
                       "plane).");
    if (!options.runId.empty() && !isValidRunId(options.runId))
        return invalid("The run id must be 1 to 64 characters of A-Z, a-z, 0-9, '.', '_' and "
                       "'-'; choose another.");
    if (!keys.signingKey)
        return invalid("The trainer was given no signing key, so it can not sign checkpoints; "
                       "hand one over with the keys.");
    if (!options.initFrom.empty() && !isSha256Hex(options.initSha256))
        return invalid("A run that starts from a model needs --init-sha256, the SHA-256 of its "
                       "plaintext that the control plane authorised; give it.");
    if (keys.newest(options.checkpointKek) == nullptr)
        return invalid(fmt::format("The trainer was given no '{}' KEK, so it can not seal "
                                   "checkpoints; hand one over with the keys.",
                                   options.checkpointKek));
    // Before any data is read: a device that is not there stops the run at once.
    if (auto device = resolveDevice(options.device, backends); !device)
        return device.error();
    return success();
}

// The public key a dataset's manifest must be signed by, from a PEM file.
Result<crypto::PublicKey> loadDatasetSigner(const std::filesystem::path& path)
{
    auto signer = crypto::PublicKey::fromPemFile(path);
    if (!signer && signer.error().code() == ErrorCode::NotFound)
        return Error(ErrorCode::NotFound,
                     fmt::format("The dataset signer's public key '{}' can not be read; pass the "
                                 "control plane's manifests.pub.pem with --dataset-signer.",
                                 path.string()));
    return signer;
}

Result<void> openData(Run& run)
{
    const TrainOptions& options = run.options;
    if (!options.datasetSigner.empty()) {
        auto signer = loadDatasetSigner(options.datasetSigner);
        if (!signer)
            return signer.error();
        run.datasetSigner = std::move(signer).value();
    }
    dataset::ReaderOptions readerOptions;
    readerOptions.signer = run.datasetSigner ? &*run.datasetSigner : nullptr;
    // Given the shards' data keys (the control plane's scoped release), the reader uses them
    // alone; a datasets KEK among the keys is then not asked.
    if (!run.keys.dataKeys.empty()) {
        run.dataKeys = run.keys.dataKeyResolver();
        readerOptions.dataKeys = &run.dataKeys;
    }
    readerOptions.split = dataset::Split::Train;
    readerOptions.context = options.context;
    readerOptions.batchSize = options.batch;
    readerOptions.seed = options.seed;
    readerOptions.rank = static_cast<std::uint32_t>(run.collective.rank());
    readerOptions.worldSize = static_cast<std::uint32_t>(run.collective.worldSize());
    auto train = dataset::DatasetReader::open(options.datasetDir, options.datasetId,
                                              run.keys.resolver(), readerOptions);
    if (!train)
        return train.error();
    run.train = std::move(train).value();
    // Every rank takes the same number of full batches per epoch, so all ranks stay at the same
    // position and it alone is the loader state (docs/trainer.md "Data").
    const std::uint64_t smallestShare =
        run.train->sequenceCount() / static_cast<std::uint64_t>(run.collective.worldSize());
    run.fullBatchesPerEpoch = smallestShare / options.batch;
    if (run.fullBatchesPerEpoch == 0)
        return invalid(fmt::format("The training split has {} sequences of {} tokens, too few "
                                   "for a batch of {} on each of {} ranks; use a smaller "
                                   "--batch or --context, or more data.",
                                   run.train->sequenceCount(), options.context + 1, options.batch,
                                   run.collective.worldSize()));
    if (options.valEvery > 0) {
        readerOptions.split = dataset::Split::Validation;
        readerOptions.shuffle = false;
        readerOptions.prefetchBatches = 0;
        auto validation = dataset::DatasetReader::open(options.datasetDir, options.datasetId,
                                                       run.keys.resolver(), readerOptions);
        if (!validation)
            return validation.error();
        if ((*validation)->sequenceCount() == 0)
            return invalid("The dataset's validation split has no sequence of the context "
                           "length; pass --val-every 0 or import with a larger validation "
                           "share.");
        run.validation = std::move(validation).value();
    }
    const auto& tokenizer = run.train->manifest().tokenizer;
    run.tokenizer = tokenizer.id;

    TrainingConfig& config = run.config;
    config.model.vocabSize = tokenizer.vocabSize;
    config.model.paddedVocabSize = GptConfig::padVocab(tokenizer.vocabSize);
    config.model.contextLength = options.context;
    config.model.layers = options.layers;
    config.model.heads = options.heads;
    config.model.width = options.width;
    SEALTRAIN_TRY(config.model.validate());
    config.batch = options.batch;
    config.gradAccum = options.gradAccum;
    config.worldSize = static_cast<std::size_t>(run.collective.worldSize());
    config.schedule = {options.learningRate, options.minLearningRate, options.warmup,
                       options.steps};
    SEALTRAIN_TRY(config.schedule.validate());
    config.adamw.weightDecay = options.weightDecay;
    config.maxGradientNorm = options.clip;
    config.seed = options.seed;
    return success();
}

// Rank 0 loads and verifies the checkpoint to resume from; every rank receives its state.
Result<void> resume(Run& run)
{
    const TrainOptions& options = run.options;
    std::array<std::uint64_t, 4> counters{};  // step, optimizer step, epoch, index
    std::vector<float> parameters;
    std::vector<float> firstMoment;
    std::vector<float> secondMoment;
    Result<void> loaded = success();
    if (run.collective.rank() == 0) {
        loaded = [&]() -> Result<void> {
            CheckpointFiles files;
            if (options.resume == "latest") {
                auto listed = listCheckpoints(options.outDir);
                if (!listed)
                    return listed.error();
                if (listed->empty())
                    return Error(ErrorCode::NotFound,
                                 fmt::format("There is no checkpoint in '{}' to resume from; "
                                             "start without --resume.",
                                             options.outDir.string()));
                files = listed->back();
            } else {
                auto named = checkpointFilesFor(options.resume);
                if (!named)
                    return named.error();
                files = std::move(named).value();
                // The run goes on writing into --out; a newer checkpoint there would collide.
                auto listed = listCheckpoints(options.outDir);
                if (!listed)
                    return listed.error();
                if (!listed->empty() && listed->back().step > files.step)
                    return Error(ErrorCode::AlreadyExists,
                                 fmt::format("The output folder '{}' holds checkpoints newer "
                                             "than step {}; resume from the newest or write "
                                             "into another folder.",
                                             options.outDir.string(), files.step));
            }
            auto checkpoint =
                loadCheckpointForResume(files, run.keys.trusted, run.keys.resolver(),
                                        {run.config, run.train->datasetId(), options.runId});
            if (!checkpoint)
                return checkpoint.error();
            DecodedCheckpoint& decoded = checkpoint->checkpoint;
            parameters = std::move(decoded.parameters);
            firstMoment = std::move(decoded.firstMoment);
            secondMoment = std::move(decoded.secondMoment);
            counters = {decoded.state.step, decoded.state.optimizerStep, decoded.state.loader.epoch,
                        decoded.state.loader.index};
            run.runId = decoded.state.runId;
            run.parent = checkpoint->lineage.subject;
            run.base = checkpoint->lineage.base;
            return success();
        }();
    }
    SEALTRAIN_TRY(agree(run.collective, std::move(loaded)));
    SEALTRAIN_TRY(run.collective.broadcast(std::as_writable_bytes(std::span(counters)), 0));
    // The checkpoint's configuration is the run's (checked above), so its tensors have the
    // layout's size on rank 0; the other ranks receive them into buffers of that size.
    const std::size_t count = run.model->layout().totalSize();
    for (std::vector<float>* tensor : {&parameters, &firstMoment, &secondMoment}) {
        tensor->resize(count);
        SEALTRAIN_TRY(run.collective.broadcast(std::as_writable_bytes(std::span(*tensor)), 0));
    }
    SEALTRAIN_TRY(agree(run.collective,
                        run.model->setState({parameters, firstMoment, secondMoment, counters[1]})));
    run.step = counters[0];
    return run.train->seek({counters[2], counters[3]});
}

// Rank 0 reads the model the run starts from; every rank receives its parameters, and AdamW's
// moments start at zero.
Result<void> startFrom(Run& run)
{
    const TrainOptions& options = run.options;
    std::vector<float> parameters;
    Result<void> loaded = success();
    if (run.collective.rank() == 0) {
        auto read =
            loadInitialParameters(options.initFrom, run.keys.dataKeyResolver(), run.keys.resolver(),
                                  options.initSha256, run.config.model);
        if (read)
            parameters = std::move(read).value();
        else
            loaded = read.error();
    }
    SEALTRAIN_TRY(agree(run.collective, std::move(loaded)));
    const std::size_t count = run.model->layout().totalSize();
    parameters.resize(count);
    SEALTRAIN_TRY(run.collective.broadcast(std::as_writable_bytes(std::span(parameters)), 0));
    const std::vector<float> zeros(count, 0.0F);
    SEALTRAIN_TRY(agree(run.collective, run.model->setState({parameters, zeros, zeros, 0})));
    run.base = CheckpointReference{options.initName.empty() ? options.initFrom.filename().string()
                                                            : options.initName,
                                   options.initSha256};
    return success();
}

// The next full batch; an epoch ends after fullBatchesPerEpoch of them on every rank.
Result<dataset::Batch> nextBatch(Run& run)
{
    const auto position = run.train->position();
    if (position.index >= run.fullBatchesPerEpoch * run.options.batch)
        SEALTRAIN_TRY(run.train->seek({position.epoch + 1, 0}));
    return run.train->next();
}

// Mean loss over up to valBatches validation batches of every rank, weighted by sequences.
Result<double> evaluate(Run& run)
{
    std::array<double, 2> sums{};  // loss · sequences, sequences
    Result<void> local = [&]() -> Result<void> {
        SEALTRAIN_TRY(run.validation->seek({0, 0}));
        const std::uint64_t batches =
            std::min<std::uint64_t>(run.options.valBatches, run.validation->batchesPerEpoch());
        for (std::uint64_t i = 0; i < batches; ++i) {
            auto batch = run.validation->next();
            if (!batch)
                return batch.error();
            auto loss = run.model->forward(batch->inputs, batch->targets, batch->sequences,
                                           run.options.context);
            if (!loss)
                return loss.error();
            sums[0] += static_cast<double>(*loss) * static_cast<double>(batch->sequences);
            sums[1] += static_cast<double>(batch->sequences);
        }
        return success();
    }();
    SEALTRAIN_TRY(agree(run.collective, std::move(local)));
    SEALTRAIN_TRY(run.collective.allReduceSum(sums));
    return sums[1] > 0 ? sums[0] / sums[1] : 0.0;
}

Result<WrittenCheckpoint> saveCheckpoint(Run& run)
{
    auto model = run.model->state();
    if (!model)
        return model.error();
    CheckpointState state;
    state.config = run.config;
    state.step = run.step;
    state.optimizerStep = model->optimizerStep;
    state.loader = run.train->position();
    state.runId = run.runId;
    state.jobId = run.options.jobId;
    state.datasetId = run.train->datasetId();
    state.tokenizer = run.tokenizer;
    const CheckpointTensors tensors{model->parameters, model->firstMoment, model->secondMoment};
    return writeCheckpoint(run.options.outDir, state, tensors, run.parent,
                           *run.keys.newest(run.options.checkpointKek), *run.keys.signingKey,
                           run.options.keep, run.base);
}

}  // namespace

// Over 100 lines: the training loop's stages (resume, step, validation, checkpoint,
// the ranks' agreement on each) share the loop's state, in the order a step runs them.
Result<TrainSummary> runTraining(const TrainOptions& options, const TrainerKeys& keys,
                                 Collective& collective, const TrainOutput& output,
                                 const ModelBackends& backends)
{
    SEALTRAIN_TRY(agree(collective, validateOptions(options, keys, backends)));
    if (options.threads > 0) {
        omp_set_num_threads(static_cast<int>(options.threads));
        openblas_set_num_threads(static_cast<int>(options.threads));
    }
    const bool leader = collective.rank() == 0;
    Metrics metrics(output, leader);
    Run run{options, keys, collective, {}, {}, {}, 0, {}, 0, options.runId, {}, {}, {}, {}, {}};
    SEALTRAIN_TRY(agree(collective, openData(run)));

    Result<void> ready = [&]() -> Result<void> {
        const ModelSpec spec{run.config.model, {options.batch, options.context}, run.config.adamw};
        auto model = createModel(options.device, spec, backends, collective.rank());
        if (!model)
            return model.error();
        run.model = std::move(model).value();
        SEALTRAIN_TRY(run.model->initialize(options.seed));
        if (options.resume.empty() && leader) {
            auto existing = listCheckpoints(options.outDir);
            if (!existing)
                return existing.error();
            if (!existing->empty())
                return Error(ErrorCode::AlreadyExists,
                             fmt::format("The output folder '{}' already holds checkpoints; pass "
                                         "--resume latest to continue them or choose an empty "
                                         "folder.",
                                         options.outDir.string()));
        }
        return success();
    }();
    SEALTRAIN_TRY(agree(collective, std::move(ready)));
    SEALTRAIN_TRY(agreeOnDevice(run));
    SEALTRAIN_TRY(agree(collective, run.model->joinRanks(collective)));
    if (!options.resume.empty())
        SEALTRAIN_TRY(resume(run));
    else if (!options.initFrom.empty())
        SEALTRAIN_TRY(startFrom(run));
    if (run.runId.empty())
        run.runId = toHex(crypto::randomBytes(8));

    const double flopsPerToken = trainingFlopsPerToken(run.config.model, options.context);
    // MFU is measured against this CPU's sgemm rate; a GPU run reports none yet.
    const bool onCpu = run.model->device() == deviceName(Device::Cpu);
    const double sgemmFlops = leader && onCpu ? measureSgemmFlops() : 0.0;
    const auto worldSize = static_cast<double>(collective.worldSize());
    const double tokensPerStep =
        static_cast<double>(options.batch * options.context * options.gradAccum) * worldSize;
    metrics.line({{"kind", "start"},
                  {"run", run.runId},
                  {"step", run.step},
                  {"steps", options.steps},
                  {"world_size", collective.worldSize()},
                  {"collective", std::string(collective.name())},
                  {"device", std::string(run.model->device())},
                  {"parameters", run.model->layout().totalSize()},
                  {"dataset", run.train->datasetId()},
                  {"flops_per_tok", flopsPerToken},
                  {"sgemm_flops", sgemmFlops}});

    TrainSummary summary;
    std::vector<std::vector<std::int32_t>> inputs(options.gradAccum);
    std::vector<std::vector<std::int32_t>> targets(options.gradAccum);
    std::vector<MicroBatch> microBatches(options.gradAccum);
    while (run.step < options.steps) {
        const auto started = Clock::now();
        Result<void> fetched = [&]() -> Result<void> {
            for (std::size_t i = 0; i < options.gradAccum; ++i) {
                auto batch = nextBatch(run);
                if (!batch)
                    return batch.error();
                inputs[i] = std::move(batch->inputs);
                targets[i] = std::move(batch->targets);
                microBatches[i] = {inputs[i], targets[i]};
            }
            return success();
        }();
        SEALTRAIN_TRY(agree(collective, std::move(fetched)));
        const double learningRate = run.config.schedule.at(run.step);
        auto result = trainStep(*run.model, microBatches,
                                {options.batch, options.context, learningRate, options.clip});
        if (!result)
            return result.error();
        std::array<double, 1> loss{result->loss};
        SEALTRAIN_TRY(collective.allReduceSum(loss));
        loss[0] /= worldSize;
        ++run.step;
        summary.lastLoss = loss[0];
        const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
        const double tokensPerSecond = seconds > 0 ? tokensPerStep / seconds : 0.0;
        const double mfu =
            sgemmFlops > 0 ? flopsPerToken * tokensPerSecond / (sgemmFlops * worldSize) : 0.0;
        nlohmann::json record{{"kind", "step"},
                              {"step", run.step},
                              {"loss", loss[0]},
                              {"lr", learningRate},
                              {"grad_norm", result->gradientNorm},
                              {"tok_per_s", tokensPerSecond},
                              {"mfu", mfu},
                              {"rss_bytes", residentBytes()}};
        const bool last = run.step == options.steps;
        if (run.validation && (run.step % options.valEvery == 0 || last)) {
            auto validationLoss = evaluate(run);
            if (!validationLoss)
                return validationLoss.error();
            record["val_loss"] = *validationLoss;
        }
        metrics.line(record);
        metrics.progress(fmt::format("step {}/{}  loss {:.4f}{}  lr {:.2e}  {:.0f} tok/s  MFU "
                                     "{:.1f}%",
                                     run.step, options.steps, loss[0],
                                     record.contains("val_loss") ? fmt::format(
                                         "  val {:.4f}", record["val_loss"].get<double>())
                                                                 : std::string(),
                                     learningRate, tokensPerSecond, mfu * 100.0),
                         last);

        if (last || (options.checkpointEvery > 0 && run.step % options.checkpointEvery == 0)) {
            Result<void> saved = success();
            if (leader) {
                auto written = saveCheckpoint(run);
                if (written) {
                    run.parent = written->reference;
                    summary.finalCheckpoint = written->files;
                    summary.finalReference = written->reference;
                    metrics.line({{"kind", "checkpoint"},
                                  {"step", run.step},
                                  {"file", written->files.sealed.string()},
                                  {"sha256", written->reference.sha256}});
                } else {
                    saved = written.error();
                }
            }
            SEALTRAIN_TRY(agree(collective, std::move(saved)));
        }
    }
    summary.steps = run.step;
    metrics.line({{"kind", "end"}, {"step", run.step}, {"loss", summary.lastLoss}});
    return summary;
}

}  // namespace sealtrain::trainer
