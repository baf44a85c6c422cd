// trainStep (training.h).
#include "sealtrain/trainer/training.h"

namespace sealtrain::trainer {

Result<TrainStepResult> trainStep(Model& model, std::span<const MicroBatch> microBatches,
                                  const TrainStepParams& params)
{
    if (microBatches.empty())
        return Error(ErrorCode::InvalidArgument,
                     "A training step needs at least one micro-batch; give it one.");
    SEALTRAIN_TRY(model.zeroGradients());
    const float lossScale = 1.0F / static_cast<float>(microBatches.size());
    double lossSum = 0.0;
    for (std::size_t i = 0; i < microBatches.size(); ++i) {
        const MicroBatch& micro = microBatches[i];
        auto loss = model.forward(micro.tokens, micro.targets, params.batch, params.seq);
        if (!loss)
            return loss.error();
        lossSum += static_cast<double>(*loss);
        SEALTRAIN_TRY(model.backward(lossScale, i + 1 == microBatches.size()));
    }
    auto norm = model.optimizerStep(params.learningRate, params.maxGradientNorm);
    if (!norm)
        return norm.error();
    TrainStepResult result;
    result.loss = lossSum / static_cast<double>(microBatches.size());
    result.gradientNorm = *norm;
    return result;
}

}  // namespace sealtrain::trainer
