// The GPT as the training run, checkpoints and sampling use it, whichever backend computes it:
// the CPU reference (cpu_model.h) or the CUDA backend (trainer/cuda's cuda_model.h);
// model_factory.h chooses. What crosses this interface is host fp32 in ParameterLayout's order,
// so a checkpoint written from either backend resumes on the other. Every call that can fail
// returns a Result; a backend whose device failed returns that first error from then on.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/formats/gpt_config.h"
#include "sealtrain/trainer/collective.h"
#include "sealtrain/trainer/model_checks.h"
#include "sealtrain/trainer/optimizer.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace sealtrain::trainer {

// What a model is built for.
struct ModelSpec {
    GptConfig config;
    BatchCapacity capacity;
    AdamWParams adamw;
};

// The parameters and AdamW's state: what a checkpoint holds.
struct ModelState {
    std::span<const float> parameters;
    std::span<const float> firstMoment;
    std::span<const float> secondMoment;
    std::uint64_t optimizerStep = 0;
};

class Model {
public:
    Model() = default;
    Model(const Model&) = delete;
    Model& operator=(const Model&) = delete;
    Model(Model&&) = delete;
    Model& operator=(Model&&) = delete;
    virtual ~Model() = default;

    // "cpu" or "cuda", for people and metrics.
    [[nodiscard]] virtual std::string_view device() const = 0;
    [[nodiscard]] virtual const GptConfig& config() const = 0;
    [[nodiscard]] virtual const ParameterLayout& layout() const = 0;

    // GPT-2's initialisation from `seed` (the same bits on every backend), AdamW's moments zero
    // and its step count 0.
    [[nodiscard]] virtual Result<void> initialize(std::uint64_t seed) = 0;
    // The current state; the spans stay valid until the next call on the model.
    [[nodiscard]] virtual Result<ModelState> state() = 0;
    // Replaces the whole state (a resume); each span holds layout().totalSize() values.
    [[nodiscard]] virtual Result<void> setState(const ModelState& state) = 0;
    // Replaces the parameters only (sampling from a checkpoint).
    [[nodiscard]] virtual Result<void> setParameters(std::span<const float> parameters) = 0;

    // From now on, the last backward pass of each step averages the gradients over the ranks of
    // `ranks`, which must outlive the model. Collective: every rank calls it, once.
    [[nodiscard]] virtual Result<void> joinRanks(Collective& ranks) = 0;

    // Runs the model on a batch that checkBatch accepts for config() and the spec's capacity and
    // returns the mean cross-entropy over the targets that are not -1 (0 when all are).
    [[nodiscard]] virtual Result<float> forward(std::span<const std::int32_t> tokens,
                                                std::span<const std::int32_t> targets,
                                                std::size_t batch, std::size_t seq) = 0;
    // The softmax over the vocabulary (config().vocabSize values) at position `row` (b·seq + t)
    // of the last forward pass, for sampling; before that pass's backward.
    [[nodiscard]] virtual Result<void> probabilities(std::size_t row, std::span<float> out) = 0;
    [[nodiscard]] virtual Result<void> zeroGradients() = 0;
    // Adds lossScale × the gradient of the last forward pass's loss to the gradients, once per
    // forward pass: 1/k for each of k micro-batches gives the gradient of their mean loss. With
    // `lastOfStep`, the accumulated gradients are then averaged over the joined ranks.
    [[nodiscard]] virtual Result<void> backward(float lossScale, bool lastOfStep) = 0;
    // Global-norm clipping (clipByGlobalNorm's rule; maxGradientNorm <= 0 only measures) and one
    // AdamW step with the spec's parameters; returns the gradient norm before clipping.
    [[nodiscard]] virtual Result<double> optimizerStep(double learningRate,
                                                       double maxGradientNorm) = 0;
};

}  // namespace sealtrain::trainer
