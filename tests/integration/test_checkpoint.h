// A checkpoint as a job's trainer writes it (sealed under the job's checkpoint KEK, signed by
// the worker's key, with the lineage the test chooses), for tests of what the control plane
// accepts from a worker and of what its users then list and download.
#pragma once

#include "sealtrain/api/client.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/crypto/signing.h"
#include "sealtrain/formats/checkpoint.h"
#include "sealtrain/formats/trainer_keys.h"

#include <QtGlobal>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace sealtrain::testing {

inline trainer::TrainingConfig tinyCheckpointConfig()
{
    trainer::TrainingConfig config;
    config.model.vocabSize = 11;
    config.model.paddedVocabSize = 16;
    config.model.contextLength = 8;
    config.model.layers = 1;
    config.model.heads = 1;
    config.model.width = 8;
    config.batch = 2;
    config.seed = 7;
    return config;
}

// Parameters and moments drawn from `seed`: two seeds, two different checkpoints of one step.
struct TestTensors {
    std::vector<float> parameters, m, v;
    explicit TestTensors(std::uint64_t seed)
    {
        const trainer::ParameterLayout layout(tinyCheckpointConfig().model);
        std::mt19937_64 engine(seed);
        std::normal_distribution<float> normal(0.0F, 1.0F);
        for (auto* flat : {&parameters, &m, &v}) {
            flat->resize(layout.totalSize());
            for (float& value : *flat)
                value = normal(engine);
        }
        for (auto& value : v)
            value = value * value;
    }
    [[nodiscard]] trainer::CheckpointTensors view() const { return {parameters, m, v}; }
};

// The keys a worker opens from its job's sealed box.
inline trainer::TrainerKeys openJobKeys(const crypto::BoxKeyPair& box,
                                        const api::JobAssignment& job)
{
    auto opened = crypto::openSealedBox(box, job.sealedKeys);
    if (!opened)
        qFatal("the job's keys: %s", opened.error().message().c_str());
    auto keys = trainer::parseTrainerKeys(opened->bytes());
    if (!keys)
        qFatal("the job's keys: %s", keys.error().message().c_str());
    return std::move(keys).value();
}

// A checkpoint of `step` in `folder`, with the lineage fields given and `parent` (the checkpoint
// before it in the chain, if any); its files and its reference.
inline trainer::WrittenCheckpoint
writeChainedTestCheckpoint(const std::filesystem::path& folder, const trainer::TrainerKeys& keys,
                           const api::JobAssignment& assignment, const crypto::SigningKey& signing,
                           std::uint64_t step, std::uint64_t seed, const std::string& job,
                           const std::string& run, const std::string& dataset,
                           const std::optional<trainer::CheckpointReference>& parent,
                           const std::optional<trainer::CheckpointReference>& base = std::nullopt)
{
    trainer::CheckpointState state;
    state.config = tinyCheckpointConfig();
    state.step = step;
    state.optimizerStep = step;
    state.runId = run;
    state.jobId = job;
    state.datasetId = dataset;
    state.tokenizer = "byte";
    const TestTensors tensors(seed);
    const crypto::Kek* kek = keys.newest(assignment.checkpointKek);
    if (kek == nullptr)
        qFatal("the job's keys hold no KEK '%s'", assignment.checkpointKek.c_str());
    auto written =
        trainer::writeCheckpoint(folder, state, tensors.view(), parent, *kek, signing, 0, base);
    if (!written)
        qFatal("writeCheckpoint: %s", written.error().message().c_str());
    return std::move(written).value();
}

// A checkpoint of `step` in `folder`, with the lineage fields given; its files.
inline trainer::CheckpointFiles
writeTestCheckpoint(const std::filesystem::path& folder, const trainer::TrainerKeys& keys,
                    const api::JobAssignment& assignment, const crypto::SigningKey& signing,
                    std::uint64_t step, std::uint64_t seed, const std::string& job,
                    const std::string& run, const std::string& dataset)
{
    return writeChainedTestCheckpoint(folder, keys, assignment, signing, step, seed, job, run,
                                      dataset, std::nullopt)
        .files;
}

}  // namespace sealtrain::testing
