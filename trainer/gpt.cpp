// Gpt<Real> (gpt.h): buffers, GPT-2 initialisation, and the forward and backward passes.
#include "sealtrain/trainer/gpt.h"

#include "sealtrain/trainer/counter_rng.h"
#include "sealtrain/trainer/cpu_ops.h"
#include "sealtrain/trainer/model_checks.h"

#include <algorithm>

namespace sealtrain::trainer {

template <typename Real>
Gpt<Real>::Gpt(const GptConfig& config, std::size_t maxBatch, std::size_t maxSeq)
    : config_(config)
    , layout_(config)
    , maxBatch_(maxBatch)
    , maxSeq_(maxSeq)
    , parameters_(layout_.totalSize())
    , gradients_(layout_.totalSize())
{
    Activations sizing;
    const std::size_t elements = carve(sizing, nullptr, maxBatch, maxSeq);
    activationBuffer_.resize(elements);
    activationGradientBuffer_.resize(elements);
}

template <typename Real>
Result<Gpt<Real>> Gpt<Real>::create(const GptConfig& config, std::size_t maxBatch,
                                    std::size_t maxSeq)
{
    SEALTRAIN_TRY(checkCapacity(config, {maxBatch, maxSeq}));
    return Gpt(config, maxBatch, maxSeq);
}

template <typename Real>
std::size_t Gpt<Real>::carve(Activations& into, Real* base, std::size_t batch,
                             std::size_t seq) const
{
    // With base == nullptr this only counts; pointer arithmetic then starts from an offset.
    std::size_t used = 0;
    auto take = [&](std::size_t count) {
        Real* where = base == nullptr ? nullptr : base + used;
        used += count;
        return where;
    };
    const std::size_t rows = batch * seq;
    const std::size_t c = config_.width;
    into.encoded = take(rows * c);
    into.layers.resize(config_.layers);
    for (auto& layer : into.layers) {
        layer.ln1 = take(rows * c);
        layer.ln1Mean = take(rows);
        layer.ln1Rstd = take(rows);
        layer.qkv = take(rows * 3 * c);
        layer.attY = take(rows * c);
        layer.att = take(batch * config_.heads * seq * seq);
        layer.attProj = take(rows * c);
        layer.residual2 = take(rows * c);
        layer.ln2 = take(rows * c);
        layer.ln2Mean = take(rows);
        layer.ln2Rstd = take(rows);
        layer.fc = take(rows * 4 * c);
        layer.fcGelu = take(rows * 4 * c);
        layer.fcProj = take(rows * c);
        layer.residual3 = take(rows * c);
    }
    into.lnf = take(rows * c);
    into.lnfMean = take(rows);
    into.lnfRstd = take(rows);
    into.logits = take(rows * config_.paddedVocabSize);
    into.probs = take(rows * config_.paddedVocabSize);
    into.losses = take(rows);
    return used;
}

template <typename Real>
const Real* Gpt<Real>::tensor(std::size_t index) const
{
    return parameters_.data() + layout_.tensors()[index].offset;
}

template <typename Real>
Real* Gpt<Real>::gradientOf(std::size_t index)
{
    return gradients_.data() + layout_.tensors()[index].offset;
}

template <typename Real>
std::span<Real> Gpt<Real>::parameter(const ParameterTensor& tensor)
{
    return std::span<Real>(parameters_).subspan(tensor.offset, tensor.size);
}

template <typename Real>
std::span<const Real> Gpt<Real>::parameter(const ParameterTensor& tensor) const
{
    return std::span<const Real>(parameters_).subspan(tensor.offset, tensor.size);
}

template <typename Real>
std::span<Real> Gpt<Real>::gradient(const ParameterTensor& tensor)
{
    return std::span<Real>(gradients_).subspan(tensor.offset, tensor.size);
}

template <typename Real>
void Gpt<Real>::initialize(std::uint64_t seed)
{
    const CounterRng rng(seed);
    const auto& tensors = layout_.tensors();
    for (std::size_t index = 0; index < tensors.size(); ++index) {
        const ParameterTensor& info = tensors[index];
        std::span<Real> values = parameter(info);
        if (info.initStd == 0.0) {
            std::fill(values.begin(), values.end(), static_cast<Real>(info.initConstant));
            continue;
        }
        // Stream = tensor index: each tensor's values do not depend on the others' sizes.
        for (std::size_t i = 0; i < values.size(); ++i)
            values[i] = static_cast<Real>(info.initStd * rng.normal(index, i));
    }
    // The padding rows of wte are never looked up and are masked out of the softmax.
    std::span<Real> wte = parameter(tensors[0]);
    std::fill(wte.begin() + static_cast<std::ptrdiff_t>(config_.vocabSize * config_.width),
              wte.end(), Real(0));
}

template <typename Real>
Result<Real> Gpt<Real>::forward(std::span<const std::int32_t> tokens,
                                std::span<const std::int32_t> targets, std::size_t batch,
                                std::size_t seq)
{
    SEALTRAIN_TRY(checkBatch(config_, {maxBatch_, maxSeq_}, tokens, targets, batch, seq));
    const std::size_t rows = batch * seq;
    tokens_.assign(tokens.begin(), tokens.end());
    targets_.assign(targets.begin(), targets.end());
    batch_ = batch;
    seq_ = seq;
    activeElements_ = carve(acts_, activationBuffer_.data(), batch, seq);
    carve(grads_, activationGradientBuffer_.data(), batch, seq);

    const std::size_t c = config_.width;
    const std::size_t wte = 0;
    const std::size_t wpe = 1;
    cpu::encoderForward(acts_.encoded, tokens_.data(), tensor(wte), tensor(wpe), batch, seq, c);
    const cpu::AttentionShape attention{batch, seq, config_.heads, c};
    const Real* residual = acts_.encoded;
    for (std::size_t l = 0; l < config_.layers; ++l) {
        const BlockTensors p = blockTensors(l);
        LayerActivations& a = acts_.layers[l];
        cpu::layerNormForward(a.ln1, a.ln1Mean, a.ln1Rstd, residual, tensor(p.ln1Weight),
                              tensor(p.ln1Bias), rows, c);
        cpu::matmulForward(a.qkv, a.ln1, tensor(p.qkvWeight), tensor(p.qkvBias), {rows, c, 3 * c});
        cpu::attentionForward(a.attY, a.att, a.qkv, attention);
        cpu::matmulForward(a.attProj, a.attY, tensor(p.attnProjWeight), tensor(p.attnProjBias),
                           {rows, c, c});
        cpu::residualForward(a.residual2, residual, a.attProj, rows * c);
        cpu::layerNormForward(a.ln2, a.ln2Mean, a.ln2Rstd, a.residual2, tensor(p.ln2Weight),
                              tensor(p.ln2Bias), rows, c);
        cpu::matmulForward(a.fc, a.ln2, tensor(p.fcWeight), tensor(p.fcBias), {rows, c, 4 * c});
        cpu::geluForward(a.fcGelu, a.fc, rows * 4 * c);
        cpu::matmulForward(a.fcProj, a.fcGelu, tensor(p.fcProjWeight), tensor(p.fcProjBias),
                           {rows, 4 * c, c});
        cpu::residualForward(a.residual3, a.residual2, a.fcProj, rows * c);
        residual = a.residual3;
    }
    const std::size_t lnf = layout_.tensors().size() - 2;
    cpu::layerNormForward(acts_.lnf, acts_.lnfMean, acts_.lnfRstd, residual, tensor(lnf),
                          tensor(lnf + 1), rows, c);
    cpu::lmHeadForward(acts_.logits, acts_.lnf, tensor(wte), {rows, c, config_.paddedVocabSize});
    const cpu::CrossEntropyShape ce{rows, config_.vocabSize, config_.paddedVocabSize};
    targetCount_ =
        cpu::crossEntropyForward(acts_.losses, acts_.probs, acts_.logits, targets_.data(), ce);
    if (targetCount_ == 0)
        return Real(0);
    Real sum = 0;
    for (std::size_t r = 0; r < rows; ++r)
        sum += acts_.losses[r];
    return sum / static_cast<Real>(targetCount_);
}

template <typename Real>
std::span<const Real> Gpt<Real>::probabilities() const
{
    return {acts_.probs, batch_ * seq_ * config_.paddedVocabSize};
}

template <typename Real>
void Gpt<Real>::zeroGradients()
{
    std::fill(gradients_.begin(), gradients_.end(), Real(0));
}

template <typename Real>
void Gpt<Real>::backward(Real lossScale)
{
    if (batch_ == 0 || targetCount_ == 0)
        return;
    std::fill_n(activationGradientBuffer_.begin(), activeElements_, Real(0));
    const std::size_t batch = batch_;
    const std::size_t seq = seq_;
    const std::size_t rows = batch * seq;
    const std::size_t c = config_.width;
    const std::size_t wte = 0;
    const std::size_t wpe = 1;
    const Activations& a = acts_;
    Activations& d = grads_;

    // The loss is the mean over unmasked targets.
    const Real perTarget = lossScale / static_cast<Real>(targetCount_);
    for (std::size_t r = 0; r < rows; ++r)
        d.losses[r] = targets_[r] < 0 ? Real(0) : perTarget;
    const cpu::CrossEntropyShape ce{rows, config_.vocabSize, config_.paddedVocabSize};
    cpu::crossEntropyBackward(d.logits, d.losses, a.probs, targets_.data(), ce);
    cpu::lmHeadBackward(d.lnf, gradientOf(wte), d.logits, a.lnf, tensor(wte),
                        {rows, c, config_.paddedVocabSize});
    const std::size_t lnf = layout_.tensors().size() - 2;
    const Real* lastResidual = config_.layers == 0 ? a.encoded : a.layers.back().residual3;
    Real* dLastResidual = config_.layers == 0 ? d.encoded : d.layers.back().residual3;
    cpu::layerNormBackward(dLastResidual, gradientOf(lnf), gradientOf(lnf + 1), d.lnf, lastResidual,
                           tensor(lnf), a.lnfMean, a.lnfRstd, rows, c);

    const cpu::AttentionShape attention{batch, seq, config_.heads, c};
    for (std::size_t l = config_.layers; l-- > 0;) {
        const BlockTensors p = blockTensors(l);
        const LayerActivations& la = a.layers[l];
        LayerActivations& ld = d.layers[l];
        const Real* residual = l == 0 ? a.encoded : a.layers[l - 1].residual3;
        Real* dresidual = l == 0 ? d.encoded : d.layers[l - 1].residual3;

        cpu::residualBackward(ld.residual2, ld.fcProj, ld.residual3, rows * c);
        cpu::matmulBackward(ld.fcGelu, gradientOf(p.fcProjWeight), gradientOf(p.fcProjBias),
                            ld.fcProj, la.fcGelu, tensor(p.fcProjWeight), {rows, 4 * c, c});
        cpu::geluBackward(ld.fc, ld.fcGelu, la.fc, rows * 4 * c);
        cpu::matmulBackward(ld.ln2, gradientOf(p.fcWeight), gradientOf(p.fcBias), ld.fc, la.ln2,
                            tensor(p.fcWeight), {rows, c, 4 * c});
        cpu::layerNormBackward(ld.residual2, gradientOf(p.ln2Weight), gradientOf(p.ln2Bias), ld.ln2,
                               la.residual2, tensor(p.ln2Weight), la.ln2Mean, la.ln2Rstd, rows, c);
        cpu::residualBackward(dresidual, ld.attProj, ld.residual2, rows * c);
        cpu::matmulBackward(ld.attY, gradientOf(p.attnProjWeight), gradientOf(p.attnProjBias),
                            ld.attProj, la.attY, tensor(p.attnProjWeight), {rows, c, c});
        // The gradient buffer's att slot is free: it serves as the scores' gradient.
        cpu::attentionBackward(ld.qkv, ld.att, ld.attY, la.qkv, la.att, attention);
        cpu::matmulBackward(ld.ln1, gradientOf(p.qkvWeight), gradientOf(p.qkvBias), ld.qkv, la.ln1,
                            tensor(p.qkvWeight), {rows, c, 3 * c});
        cpu::layerNormBackward(dresidual, gradientOf(p.ln1Weight), gradientOf(p.ln1Bias), ld.ln1,
                               residual, tensor(p.ln1Weight), la.ln1Mean, la.ln1Rstd, rows, c);
    }
    cpu::encoderBackward(gradientOf(wte), gradientOf(wpe), d.encoded, tokens_.data(), batch, seq,
                         c);
}

template class Gpt<float>;
template class Gpt<double>;

}  // namespace sealtrain::trainer
