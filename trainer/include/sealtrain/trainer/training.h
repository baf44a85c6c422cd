// One optimizer step of GPT training on any backend (model.h): gradient accumulation over
// micro-batches, the gradient all-reduce of a data-parallel run (the model's joined ranks),
// global-norm clipping and AdamW.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/trainer/model.h"

#include <cstddef>
#include <cstdint>
#include <span>

namespace sealtrain::trainer {

// Inputs and next-token targets of one micro-batch, each (batch, seq) row-major.
struct MicroBatch {
    std::span<const std::int32_t> tokens;
    std::span<const std::int32_t> targets;
};

struct TrainStepParams {
    std::size_t batch = 0;  // sequences per micro-batch
    std::size_t seq = 0;    // tokens per sequence
    double learningRate = 0.0;
    double maxGradientNorm = 1.0;  // <= 0: no clipping
};

struct TrainStepResult {
    double loss = 0.0;          // mean of the micro-batches' mean losses (this rank's)
    double gradientNorm = 0.0;  // global norm after the reduction, before clipping
};

// Zeroes the gradients, runs forward and backward on each micro-batch with loss scale 1/k (the
// last one averaging the gradients over the model's joined ranks), then clips and updates the
// parameters with AdamW.
[[nodiscard]] Result<TrainStepResult>
trainStep(Model& model, std::span<const MicroBatch> microBatches, const TrainStepParams& params);

}  // namespace sealtrain::trainer
