// One optimizer step of GPT training on the CPU: gradient accumulation over micro-batches, a
// hook where data parallelism reduces the gradients, global-norm clipping and AdamW.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/trainer/gpt.h"
#include "sealtrain/trainer/optimizer.h"

#include <cstddef>
#include <cstdint>
#include <functional>
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

// Called once per step with the accumulated gradients (mean over this rank's micro-batches),
// before clipping: a data-parallel run averages them across ranks here.
using GradientReduction = std::function<Result<void>(std::span<float> gradients)>;

// Zeroes the gradients, runs forward and backward on each micro-batch with loss scale 1/k,
// reduces, clips and updates the parameters with AdamW.
[[nodiscard]] Result<TrainStepResult> trainStep(Gpt<float>& model, AdamW& optimizer,
                                                std::span<const MicroBatch> microBatches,
                                                const TrainStepParams& params,
                                                const GradientReduction& reduce = {});

}  // namespace sealtrain::trainer
