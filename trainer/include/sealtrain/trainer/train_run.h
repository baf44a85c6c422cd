// A whole training run of `sealtrain-train train` (docs/trainer.md "Running the trainer"): the
// sealed dataset through the reader, each rank its own disjoint batches, the model on the chosen
// device (model_factory.h), trainStep with the gradients averaged over the ranks, validation,
// metrics as JSON lines, and sealed signed checkpoints that rank 0 writes and a later run resumes
// from bit-exactly. One call per rank.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/trainer_keys.h"
#include "sealtrain/trainer/collective.h"
#include "sealtrain/trainer/model_factory.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace sealtrain::trainer {

struct TrainOptions {
    // The model's shape; the vocabulary is the dataset's.
    std::size_t layers = 4;
    std::size_t heads = 4;
    std::size_t width = 128;
    std::size_t context = 128;
    // Optimisation.
    std::size_t batch = 8;  // sequences per micro-batch on each rank
    std::size_t gradAccum = 1;
    std::size_t steps = 100;
    double learningRate = 6e-4;
    std::size_t warmup = 0;
    double minLearningRate = 6e-5;
    double weightDecay = 0.1;
    double clip = 1.0;
    std::uint64_t seed = 1337;
    // Data, output and schedule of side work.
    std::filesystem::path datasetDir;  // the dataset's folder (manifest.json and shards)
    std::string datasetId;             // "sha256:…"; empty: the folder's name
    // The control plane's public key (PEM): the manifest's signature (manifest.sig) must verify
    // under it. Required unless allowUnsignedDataset says the run is a test on a dataset made
    // outside a control plane, whose signature is then not checked.
    std::filesystem::path datasetSigner;
    bool allowUnsignedDataset = false;
    std::filesystem::path outDir;     // the run's checkpoints
    std::size_t checkpointEvery = 0;  // 0: only at the end
    std::size_t keep = 3;             // checkpoints kept; 0 keeps all
    std::string resume;               // "", "latest" (in outDir) or a checkpoint's path
    // Fine-tuning (base_model.h): the sealed base model or checkpoint the parameters start from
    // (AdamW's moments at zero, step 0), its plaintext's SHA-256, which the file must have, and
    // the name its checkpoints' lineage gives it ("NAME@VERSION"; default: the file's name).
    // Ignored when resuming: the resumed checkpoint already started from it.
    std::filesystem::path initFrom;
    std::string initSha256;
    std::string initName;
    std::size_t valEvery = 0;    // 0: no validation
    std::size_t valBatches = 8;  // per rank
    std::string runId;           // empty: a new random id (or the resumed run's)
    std::string jobId;
    // The KEK (newest version of this id among the keys) that seals checkpoints: a worker's
    // trainer gets its job's own key ("job-<id>") instead of the platform's `checkpoints` KEK.
    std::string checkpointKek = kCheckpointsKekId;
    std::size_t threads = 0;       // OpenMP and OpenBLAS threads per rank; 0 leaves their defaults
    Device device = Device::Auto;  // the backend (model_factory.h's createModel)
};

// Where metrics and progress go.
struct TrainOutput {
    int metricsFd = 1;          // JSON lines (docs/trainer.md "Metrics"); -1: none
    bool progressLine = false;  // a human line on stderr, rewritten in place
};

struct TrainSummary {
    std::uint64_t steps = 0;  // optimizer steps the run has done in all, resumed ones too
    double lastLoss = 0.0;    // the last step's loss, mean over ranks (0 when none ran)
    std::optional<CheckpointFiles> finalCheckpoint;
    std::optional<CheckpointReference> finalReference;
};

// Trains. Every rank calls it with the same options; failures on any rank stop all of them with
// the failing rank's sentence there. The checkpoints KEK ("checkpoints"), the signing key and
// the datasets KEK must be among `keys`; `backends` are those options.device may choose from
// (built_backends.h's builtBackends() in an executable).
[[nodiscard]] Result<TrainSummary> runTraining(const TrainOptions& options, const TrainerKeys& keys,
                                               Collective& collective, const TrainOutput& output,
                                               const ModelBackends& backends);

}  // namespace sealtrain::trainer
