// trainStep (training.h).
#include "sealtrain/trainer/training.h"

namespace sealtrain::trainer {

Result<TrainStepResult> trainStep(Gpt<float>& model, AdamW& optimizer,
                                  std::span<const MicroBatch> microBatches,
                                  const TrainStepParams& params, const GradientReduction& reduce)
{
    if (microBatches.empty())
        return Error(ErrorCode::InvalidArgument,
                     "A training step needs at least one micro-batch; give it one.");
    model.zeroGradients();
    const float lossScale = 1.0F / static_cast<float>(microBatches.size());
    double lossSum = 0.0;
    for (const MicroBatch& micro : microBatches) {
        auto loss = model.forward(micro.tokens, micro.targets, params.batch, params.seq);
        if (!loss)
            return loss.error();
        lossSum += static_cast<double>(*loss);
        model.backward(lossScale);
    }
    if (reduce)
        SEALTRAIN_TRY(reduce(model.gradients()));
    TrainStepResult result;
    result.loss = lossSum / static_cast<double>(microBatches.size());
    result.gradientNorm = clipByGlobalNorm(model.gradients(), params.maxGradientNorm);
    optimizer.step(model.parameters(), model.gradients(), params.learningRate);
    return result;
}

}  // namespace sealtrain::trainer
