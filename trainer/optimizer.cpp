// Gradient clipping and AdamW (optimizer.h); the learning-rate schedule is formats/'s
// (optimizer_settings.cpp).
#include "sealtrain/trainer/optimizer.h"

#include <cassert>
#include <cmath>
#include <numbers>
#include <utility>

namespace sealtrain::trainer {

double globalNorm(std::span<const float> gradients)
{
    double sum = 0.0;
    for (const float g : gradients)
        sum += static_cast<double>(g) * static_cast<double>(g);
    return std::sqrt(sum);
}

double clipByGlobalNorm(std::span<float> gradients, double maxNorm)
{
    const double norm = globalNorm(gradients);
    if (maxNorm <= 0.0)
        return norm;
    const double coefficient = maxNorm / (norm + 1e-6);
    if (coefficient < 1.0) {
        const auto scale = static_cast<float>(coefficient);
        for (float& g : gradients)
            g *= scale;
    }
    return norm;
}

std::vector<ParameterGroup> parameterGroups(const ParameterLayout& layout)
{
    std::vector<ParameterGroup> groups;
    for (const auto& tensor : layout.tensors()) {
        if (!groups.empty() && groups.back().weightDecay == tensor.weightDecay
            && groups.back().offset + groups.back().size == tensor.offset) {
            groups.back().size += tensor.size;
            continue;
        }
        groups.push_back({tensor.offset, tensor.size, tensor.weightDecay});
    }
    return groups;
}

AdamW::AdamW(std::vector<ParameterGroup> groups, std::size_t parameterCount, AdamWParams params)
    : groups_(std::move(groups))
    , params_(params)
    , m_(parameterCount)
    , v_(parameterCount)
{
}

void AdamW::step(std::span<float> parameters, std::span<const float> gradients, double learningRate)
{
    assert(parameters.size() == m_.size() && gradients.size() == m_.size());
    ++stepCount_;
    const auto t = static_cast<double>(stepCount_);
    // Scalars are formed in double and rounded once, as PyTorch does with its Python floats
    // (1 − β2 rounded from double, not 1 − float(β2), which is off by 1e-5 relative).
    const auto beta1 = static_cast<float>(params_.beta1);
    const auto beta2 = static_cast<float>(params_.beta2);
    const auto oneMinusBeta1 = static_cast<float>(1.0 - params_.beta1);
    const auto oneMinusBeta2 = static_cast<float>(1.0 - params_.beta2);
    const auto correction1 = static_cast<float>(1.0 - std::pow(params_.beta1, t));
    const auto correction2 = static_cast<float>(1.0 - std::pow(params_.beta2, t));
    const auto epsilon = static_cast<float>(params_.epsilon);
    const auto rate = static_cast<float>(learningRate);
    for (const ParameterGroup& group : groups_) {
        const float decay = group.weightDecay ? static_cast<float>(params_.weightDecay) : 0.0F;
        const std::size_t end = group.offset + group.size;
#pragma omp parallel for if (group.size >= (std::size_t{1} << 16U))
        for (std::size_t i = group.offset; i < end; ++i) {
            const float g = gradients[i];
            m_[i] = beta1 * m_[i] + oneMinusBeta1 * g;
            v_[i] = beta2 * v_[i] + oneMinusBeta2 * g * g;
            const float mHat = m_[i] / correction1;
            const float vHat = v_[i] / correction2;
            parameters[i] -= rate * (mHat / (std::sqrt(vHat) + epsilon) + decay * parameters[i]);
        }
    }
}

}  // namespace sealtrain::trainer
