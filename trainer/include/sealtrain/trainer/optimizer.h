// The optimizer side of a training step: global-norm gradient clipping, AdamW with decay
// groups, and the warm-up + cosine learning-rate schedule. Everything is elementwise or summed
// in one fixed order, so a step is bit-identical for the same inputs.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/formats/gpt_config.h"
#include "sealtrain/formats/optimizer_settings.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sealtrain::trainer {

// sqrt(Σ g²) over all gradients, summed in double in index order.
[[nodiscard]] double globalNorm(std::span<const float> gradients);

// Scales the gradients by maxNorm / (norm + 1e-6) when their global norm exceeds maxNorm, as
// torch.nn.utils.clip_grad_norm_ does; returns the norm before clipping. maxNorm <= 0 only
// measures.
double clipByGlobalNorm(std::span<float> gradients, double maxNorm);

// A contiguous run of parameters that AdamW treats alike.
struct ParameterGroup {
    std::size_t offset = 0;
    std::size_t size = 0;
    bool weightDecay = false;
};

// GPT's groups from its layout: 2-D tensors (the four linear weights of each block, and the
// wte and wpe embeddings, as nanoGPT does) decay; biases and LayerNorm parameters do not.
[[nodiscard]] std::vector<ParameterGroup> parameterGroups(const ParameterLayout& layout);

// AdamW (Loshchilov and Hutter, decoupled weight decay) with PyTorch's update order:
//   m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,
//   p ← p − lr·( m/(1−β1ᵗ) / (sqrt(v/(1−β2ᵗ)) + ε) + λ·p )   with λ = 0 outside decay groups.
// State (m, v, t) is fp32 and flat, in the parameters' layout, for checkpoints and sharding.
class AdamW final {
public:
    AdamW(std::vector<ParameterGroup> groups, std::size_t parameterCount, AdamWParams params);

    // One update of `parameters` from `gradients` at learning rate `learningRate`.
    void step(std::span<float> parameters, std::span<const float> gradients, double learningRate);

    [[nodiscard]] const AdamWParams& params() const { return params_; }
    [[nodiscard]] std::uint64_t stepCount() const { return stepCount_; }
    [[nodiscard]] std::span<float> firstMoment() { return m_; }
    [[nodiscard]] std::span<float> secondMoment() { return v_; }
    // For resuming from a checkpoint: the moments are restored through the spans above.
    void setStepCount(std::uint64_t count) { stepCount_ = count; }

private:
    std::vector<ParameterGroup> groups_;
    AdamWParams params_;
    std::vector<float> m_;
    std::vector<float> v_;
    std::uint64_t stepCount_ = 0;
};

}  // namespace sealtrain::trainer
