// CudaModel (cuda_model.h): the Model calls mapped onto CudaGpt.
#include "sealtrain/trainer/cuda/cuda_model.h"

#include "sealtrain/trainer/cpu_ops.h"

#include <algorithm>

namespace sealtrain::trainer::cuda {

Result<std::unique_ptr<CudaModel>> CudaModel::create(const ModelSpec& spec, Precision precision,
                                                     int gpu, ReducerOpener openReducer)
{
    CudaGptOptions options;
    options.maxBatch = spec.capacity.maxBatch;
    options.maxSeq = spec.capacity.maxSeq;
    options.precision = precision;
    options.device = gpu;
    auto gpt = CudaGpt::create(spec.config, options);
    if (!gpt)
        return gpt.error();
    return std::unique_ptr<CudaModel>(
        new CudaModel(std::move(gpt).value(), spec, gpu, std::move(openReducer)));
}

CudaModel::CudaModel(CudaGpt gpt, const ModelSpec& spec, int gpu, ReducerOpener openReducer)
    : gpt_(std::move(gpt))
    , adamw_(spec.adamw)
    , gpu_(gpu)
    , openReducer_(std::move(openReducer))
{
}

Result<void> CudaModel::initialize(std::uint64_t seed)
{
    return gpt_.initialize(seed);
}

Result<ModelState> CudaModel::state()
{
    const std::size_t count = layout().totalSize();
    parameters_.resize(count);
    firstMoment_.resize(count);
    secondMoment_.resize(count);
    SEALTRAIN_TRY(gpt_.downloadParameters(parameters_));
    SEALTRAIN_TRY(gpt_.downloadOptimizerState(firstMoment_, secondMoment_));
    return ModelState{parameters_, firstMoment_, secondMoment_, gpt_.optimizerStepCount()};
}

Result<void> CudaModel::setState(const ModelState& state)
{
    SEALTRAIN_TRY(gpt_.uploadParameters(state.parameters));
    return gpt_.uploadOptimizerState(state.firstMoment, state.secondMoment, state.optimizerStep);
}

Result<void> CudaModel::setParameters(std::span<const float> parameters)
{
    return gpt_.uploadParameters(parameters);
}

Result<void> CudaModel::joinRanks(Collective& ranks)
{
    if (ranks.worldSize() == 1)
        return success();
    if (!openReducer_)
        return Error(ErrorCode::Unsupported,
                     "This sealtrain-train's CUDA backend was built without NCCL, so it trains on "
                     "one GPU only; run one rank, pass --device cpu, or rebuild with NCCL.");
    auto reducer = openReducer_(ranks, gpu_);
    if (!reducer)
        return reducer.error();
    reducer_ = std::move(reducer).value();
    return success();
}

Result<float> CudaModel::forward(std::span<const std::int32_t> tokens,
                                 std::span<const std::int32_t> targets, std::size_t batch,
                                 std::size_t seq)
{
    return gpt_.forward(tokens, targets, batch, seq);
}

Result<void> CudaModel::probabilities(std::size_t row, std::span<float> out)
{
    const GptConfig& shape = config();
    SEALTRAIN_TRY(checkProbabilityRow(row, gpt_.forwardRows(), out.size(), shape.vocabSize));
    logits_.resize(shape.paddedVocabSize);
    SEALTRAIN_TRY(gpt_.downloadLogits(row, logits_));
    // The CPU reference's softmax over the row, so both backends sample alike from equal logits.
    std::vector<float> probabilities(shape.paddedVocabSize);
    float loss = 0.0F;
    const std::int32_t noTarget = -1;
    cpu::crossEntropyForward(&loss, probabilities.data(), logits_.data(), &noTarget,
                             {1, shape.vocabSize, shape.paddedVocabSize});
    std::copy_n(probabilities.begin(), out.size(), out.begin());
    return success();
}

Result<void> CudaModel::zeroGradients()
{
    return gpt_.zeroGradients();
}

Result<void> CudaModel::backward(float lossScale, bool lastOfStep)
{
    return gpt_.backward(lossScale, lastOfStep ? reducer_.get() : nullptr);
}

Result<double> CudaModel::optimizerStep(double learningRate, double maxGradientNorm)
{
    return gpt_.optimizerStep(learningRate, maxGradientNorm, adamw_);
}

}  // namespace sealtrain::trainer::cuda
