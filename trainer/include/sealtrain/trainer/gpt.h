// A GPT on the CPU: the model's parameters, their gradients and the activations of the last
// forward pass, each one flat array, plus the forward pass, the hand-written backward pass and
// GPT-2's initialisation, built from the operations in cpu_ops.h.
//
// Gpt<float> trains, behind the Model interface as CpuModel (cpu_model.h); Gpt<double> exists so
// that the whole model's gradient can be checked against finite differences. The CUDA backend
// keeps the same flat parameter layout (ParameterLayout), so checkpoints, the optimizer and the
// collectives see one format, and refuses the same batches (model_checks.h).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/formats/gpt_config.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace sealtrain::trainer {

template <typename Real>
class Gpt final {
public:
    // A model with zeroed parameters whose activations fit batches of up to `maxBatch`
    // sequences of up to `maxSeq` tokens (maxSeq <= contextLength).
    [[nodiscard]] static Result<Gpt> create(const GptConfig& config, std::size_t maxBatch,
                                            std::size_t maxSeq);

    // Moves keep the activation pointers valid (vectors move their storage); copies are refused.
    Gpt(Gpt&&) noexcept = default;
    Gpt& operator=(Gpt&&) noexcept = default;
    Gpt(const Gpt&) = delete;
    Gpt& operator=(const Gpt&) = delete;
    ~Gpt() = default;

    [[nodiscard]] const GptConfig& config() const { return config_; }
    [[nodiscard]] const ParameterLayout& layout() const { return layout_; }
    [[nodiscard]] std::size_t maxBatch() const { return maxBatch_; }
    [[nodiscard]] std::size_t maxSeq() const { return maxSeq_; }

    [[nodiscard]] std::span<Real> parameters() { return parameters_; }
    [[nodiscard]] std::span<const Real> parameters() const { return parameters_; }
    [[nodiscard]] std::span<Real> gradients() { return gradients_; }
    [[nodiscard]] std::span<const Real> gradients() const { return gradients_; }
    // One tensor's slice of parameters() or gradients().
    [[nodiscard]] std::span<Real> parameter(const ParameterTensor& tensor);
    [[nodiscard]] std::span<const Real> parameter(const ParameterTensor& tensor) const;
    [[nodiscard]] std::span<Real> gradient(const ParameterTensor& tensor);

    // GPT-2's initialisation from `seed` (ParameterTensor::initStd / initConstant); the padding
    // rows of wte are zero. Bit-identical for a seed on every platform.
    void initialize(std::uint64_t seed);

    // Runs the model on tokens(batch, seq) and returns the mean cross-entropy over the targets
    // that are not -1 (0 when all are). The batch must pass checkBatch (model_checks.h).
    [[nodiscard]] Result<Real> forward(std::span<const std::int32_t> tokens,
                                       std::span<const std::int32_t> targets, std::size_t batch,
                                       std::size_t seq);
    // The softmax of the last forward pass, (batch, seq, paddedVocabSize), for sampling.
    [[nodiscard]] std::span<const Real> probabilities() const;

    void zeroGradients();
    // Adds `lossScale` times the gradient of the last forward pass's loss to gradients():
    // 1/k for each of k micro-batches gives the gradient of their mean loss.
    void backward(Real lossScale = Real(1));

private:
    struct LayerActivations {
        Real *ln1, *ln1Mean, *ln1Rstd, *qkv, *attY, *att, *attProj, *residual2;
        Real *ln2, *ln2Mean, *ln2Rstd, *fc, *fcGelu, *fcProj, *residual3;
    };
    struct Activations {
        Real* encoded = nullptr;
        std::vector<LayerActivations> layers;
        Real *lnf = nullptr, *lnfMean = nullptr, *lnfRstd = nullptr;
        Real *logits = nullptr, *probs = nullptr, *losses = nullptr;
    };
    // Carves `base` into the activations of a (batch, seq) pass; returns the elements used.
    std::size_t carve(Activations& into, Real* base, std::size_t batch, std::size_t seq) const;

    Gpt(const GptConfig& config, std::size_t maxBatch, std::size_t maxSeq);
    [[nodiscard]] const Real* tensor(std::size_t index) const;
    [[nodiscard]] Real* gradientOf(std::size_t index);

    GptConfig config_;
    ParameterLayout layout_;
    std::size_t maxBatch_;
    std::size_t maxSeq_;
    std::vector<Real> parameters_;
    std::vector<Real> gradients_;
    std::vector<Real> activationBuffer_;
    std::vector<Real> activationGradientBuffer_;
    Activations acts_;
    Activations grads_;
    // What the last forward pass ran on, for backward().
    std::vector<std::int32_t> tokens_;
    std::vector<std::int32_t> targets_;
    std::size_t batch_ = 0;
    std::size_t seq_ = 0;
    std::size_t activeElements_ = 0;
    std::size_t targetCount_ = 0;
};

extern template class Gpt<float>;
extern template class Gpt<double>;

}  // namespace sealtrain::trainer
