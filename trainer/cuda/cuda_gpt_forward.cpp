// EngineFor<T> (cuda_gpt_engine.h), the forward pass: tokens -> embedding -> each block's
// LayerNorm, attention, projection and MLP (each LayerNorm after the first fused with the
// residual addition before it) -> ln_f -> logits -> the loss, read back as one number.
#include "cuda_gpt_engine.h"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/kernels.h"

#include <algorithm>

namespace sealtrain::trainer::cuda::Internal {

template <typename T>
void EngineFor<T>::linearForward(T* out, const T* in, std::size_t weightTensor, std::size_t rows,
                                 std::size_t inWidth, std::size_t outWidth, GemmEpilogue epilogue,
                                 T* aux)
{
    gemm_->run(linearForwardCall(out, in, weight(weightTensor), weight(weightTensor + 1),
                                 {rows, inWidth, outWidth}, epilogue, aux),
               stream_);
}

// Per head: scores = q·kᵀ/√hs, causal softmax, y = probs·v, as cuBLAS strided-batched products
// over (batch · heads) matrices; probs stay in the layer's att buffer for backward.
template <typename T>
void EngineFor<T>::attentionForward(const Layer& layer)
{
    const kernels::AttentionDims dims{batch_, seq_, config_.heads, config_.headSize()};
    if constexpr (kLowPrecision) {
        if (flash_) {
            kernels::flashAttentionForward(layer.attY, layer.lse, layer.qkv, dims, stream_);
            return;
        }
    }
    const AttentionGemmShape shape{dims.batch * dims.heads, dims.seq, dims.headSize};
    kernels::splitHeads(q_, k_, vHeads_, layer.qkv, dims, stream_);
    gemm_->runBatched(attentionScoresCall(layer.att, q_, k_, shape), stream_);
    kernels::causalSoftmaxForward(layer.att, layer.att, shape.matrices, shape.seq, stream_);
    gemm_->runBatched(attentionOutputCall(y_, layer.att, vHeads_, shape), stream_);
    kernels::concatHeads(layer.attY, y_, dims, stream_);
}

template <typename T>
float EngineFor<T>::forward(std::span<const std::int32_t> tokens,
                            std::span<const std::int32_t> targets, std::size_t batch,
                            std::size_t seq)
{
    batch_ = batch;
    seq_ = seq;
    const std::size_t rows = batch * seq;
    const std::size_t c = config_.width;
    targetCount_ = static_cast<std::size_t>(
        std::count_if(targets.begin(), targets.end(), [](std::int32_t t) { return t >= 0; }));
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(tokens_, tokens.data(), tokens.size_bytes(),
                                         cudaMemcpyHostToDevice, stream_));
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(targets_, targets.data(), targets.size_bytes(),
                                         cudaMemcpyHostToDevice, stream_));
    // The embedding's backward pass sums each token's positions in a fixed order (plan.h).
    const TokenBuckets buckets = bucketTokens(tokens);
    tokenBuckets_ = buckets.tokens.size();
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(bucketTokens_, buckets.tokens.data(),
                                         buckets.tokens.size() * sizeof(std::int32_t),
                                         cudaMemcpyHostToDevice, stream_));
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(bucketStarts_, buckets.starts.data(),
                                         buckets.starts.size() * sizeof(std::int32_t),
                                         cudaMemcpyHostToDevice, stream_));
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(bucketPositions_, buckets.positions.data(),
                                         buckets.positions.size() * sizeof(std::int32_t),
                                         cudaMemcpyHostToDevice, stream_));

    constexpr std::size_t wte = 0;
    constexpr std::size_t wpe = 1;
    const std::size_t lnf = layout_.tensors().size() - 2;
    kernels::encoderForward(encoded_, tokens_, weight(wte), weight(wpe), batch, seq, c, stream_);
    // Each LayerNorm after the first is fused with the residual addition before it: the first
    // block's ln_1 reads the embedding, every later one (and ln_f) reads residual3 = residual2 +
    // the MLP's projection, computed in the same kernel.
    if (config_.layers > 0) {
        const BlockTensors first = blockTensors(0);
        kernels::residualLayerNormForward<T>(
            nullptr, layers_[0].ln1, layers_[0].ln1Mean, layers_[0].ln1Rstd, encoded_, nullptr,
            weight(first.ln1Weight), weight(first.ln1Bias), rows, c, stream_);
    }
    const T* residual = encoded_;
    for (std::size_t l = 0; l < config_.layers; ++l) {
        const BlockTensors p = blockTensors(l);
        Layer& a = layers_[l];
        linearForward(a.qkv, a.ln1, p.qkvWeight, rows, c, 3 * c, GemmEpilogue::Bias);
        attentionForward(a);
        linearForward(projection_, a.attY, p.attnProjWeight, rows, c, c, GemmEpilogue::Bias);
        kernels::residualLayerNormForward(a.residual2, a.ln2, a.ln2Mean, a.ln2Rstd, residual,
                                          projection_, weight(p.ln2Weight), weight(p.ln2Bias), rows,
                                          c, stream_);
        if (geluEpilogue_) {
            linearForward(a.fcGelu, a.ln2, p.fcWeight, rows, c, 4 * c, GemmEpilogue::GeluBias,
                          a.fc);
        } else {
            linearForward(a.fc, a.ln2, p.fcWeight, rows, c, 4 * c, GemmEpilogue::Bias);
            kernels::geluForward(a.fcGelu, a.fc, rows * 4 * c, stream_);
        }
        linearForward(projection_, a.fcGelu, p.fcProjWeight, rows, 4 * c, c, GemmEpilogue::Bias);
        const bool last = l + 1 == config_.layers;
        const BlockTensors next = blockTensors(last ? l : l + 1);
        kernels::residualLayerNormForward(a.residual3, last ? lnf_ : layers_[l + 1].ln1,
                                          last ? lnfMean_ : layers_[l + 1].ln1Mean,
                                          last ? lnfRstd_ : layers_[l + 1].ln1Rstd, a.residual2,
                                          projection_, weight(last ? lnf : next.ln1Weight),
                                          weight(last ? lnf + 1 : next.ln1Bias), rows, c, stream_);
        residual = a.residual3;
    }
    if (config_.layers == 0)
        kernels::residualLayerNormForward<T>(nullptr, lnf_, lnfMean_, lnfRstd_, encoded_, nullptr,
                                             weight(lnf), weight(lnf + 1), rows, c, stream_);
    gemm_->run(lmHeadForwardCall(logits_, lnf_, weight(wte), rows, c, config_.paddedVocabSize),
               stream_);
    const kernels::CrossEntropyDims ce{rows, config_.vocabSize, config_.paddedVocabSize};
    kernels::crossEntropyForward(losses_, logSumExp_, logits_, targets_, ce, stream_);
    SEALTRAIN_CUDA_CHECK(cudaMemcpyAsync(hostLosses_.data(), losses_, rows * sizeof(float),
                                         cudaMemcpyDeviceToHost, stream_));
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (targetCount_ == 0)
        return 0.0F;
    double sum = 0.0;
    for (std::size_t r = 0; r < rows; ++r)
        sum += hostLosses_[r];
    return static_cast<float>(sum / static_cast<double>(targetCount_));
}

// Each member once per activation type (the class is defined in pieces, so not as a whole).
// NOLINTBEGIN(bugprone-macro-parentheses): T is a type here.
#define SEALTRAIN_INSTANTIATE_ENGINE_FORWARD(T)                                                    \
    template void EngineFor<T>::linearForward(T*, const T*, std::size_t, std::size_t, std::size_t, \
                                              std::size_t, GemmEpilogue, T*);                      \
    template void EngineFor<T>::attentionForward(const Layer&);                                    \
    template float EngineFor<T>::forward(std::span<const std::int32_t>,                            \
                                         std::span<const std::int32_t>, std::size_t, std::size_t);

SEALTRAIN_INSTANTIATE_ENGINE_FORWARD(float)
SEALTRAIN_INSTANTIATE_ENGINE_FORWARD(__nv_bfloat16)
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace sealtrain::trainer::cuda::Internal
