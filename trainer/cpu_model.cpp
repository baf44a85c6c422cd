// CpuModel (cpu_model.h): the Model calls mapped onto Gpt<float> and AdamW.
#include "sealtrain/trainer/cpu_model.h"

#include <algorithm>

namespace sealtrain::trainer {

Result<std::unique_ptr<CpuModel>> CpuModel::create(const ModelSpec& spec)
{
    auto gpt = Gpt<float>::create(spec.config, spec.capacity.maxBatch, spec.capacity.maxSeq);
    if (!gpt)
        return gpt.error();
    const ParameterLayout& layout = gpt->layout();
    AdamW optimizer(parameterGroups(layout), layout.totalSize(), spec.adamw);
    return std::unique_ptr<CpuModel>(new CpuModel(std::move(gpt).value(), std::move(optimizer)));
}

CpuModel::CpuModel(Gpt<float> gpt, AdamW optimizer)
    : gpt_(std::move(gpt))
    , optimizer_(std::move(optimizer))
{
}

Result<void> CpuModel::initialize(std::uint64_t seed)
{
    gpt_.initialize(seed);
    std::fill(optimizer_.firstMoment().begin(), optimizer_.firstMoment().end(), 0.0F);
    std::fill(optimizer_.secondMoment().begin(), optimizer_.secondMoment().end(), 0.0F);
    optimizer_.setStepCount(0);
    return success();
}

Result<ModelState> CpuModel::state()
{
    return ModelState{gpt_.parameters(), optimizer_.firstMoment(), optimizer_.secondMoment(),
                      optimizer_.stepCount()};
}

Result<void> CpuModel::setState(const ModelState& state)
{
    const std::size_t count = layout().totalSize();
    SEALTRAIN_TRY(checkParameterCount(state.firstMoment.size(), count));
    SEALTRAIN_TRY(checkParameterCount(state.secondMoment.size(), count));
    SEALTRAIN_TRY(setParameters(state.parameters));
    std::copy(state.firstMoment.begin(), state.firstMoment.end(), optimizer_.firstMoment().begin());
    std::copy(state.secondMoment.begin(), state.secondMoment.end(),
              optimizer_.secondMoment().begin());
    optimizer_.setStepCount(state.optimizerStep);
    return success();
}

Result<void> CpuModel::setParameters(std::span<const float> parameters)
{
    SEALTRAIN_TRY(checkParameterCount(parameters.size(), layout().totalSize()));
    std::copy(parameters.begin(), parameters.end(), gpt_.parameters().begin());
    return success();
}

Result<void> CpuModel::joinRanks(Collective& ranks)
{
    ranks_ = &ranks;
    return success();
}

Result<float> CpuModel::forward(std::span<const std::int32_t> tokens,
                                std::span<const std::int32_t> targets, std::size_t batch,
                                std::size_t seq)
{
    return gpt_.forward(tokens, targets, batch, seq);
}

Result<void> CpuModel::probabilities(std::size_t row, std::span<float> out)
{
    const std::size_t padded = config().paddedVocabSize;
    const std::span<const float> all = gpt_.probabilities();
    SEALTRAIN_TRY(checkProbabilityRow(row, all.size() / padded, out.size(), config().vocabSize));
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(row * padded);
    std::copy(first, first + static_cast<std::ptrdiff_t>(out.size()), out.begin());
    return success();
}

Result<void> CpuModel::zeroGradients()
{
    gpt_.zeroGradients();
    return success();
}

Result<void> CpuModel::backward(float lossScale, bool lastOfStep)
{
    gpt_.backward(lossScale);
    if (lastOfStep && ranks_ != nullptr)
        return ranks_->allReduceMean(gpt_.gradients());
    return success();
}

Result<double> CpuModel::optimizerStep(double learningRate, double maxGradientNorm)
{
    const double norm = clipByGlobalNorm(gpt_.gradients(), maxGradientNorm);
    optimizer_.step(gpt_.parameters(), gpt_.gradients(), learningRate);
    return norm;
}

}  // namespace sealtrain::trainer
