// EngineFor<T> (cuda_gpt_engine.h), the backward pass and the optimizer step: dlogits (in place
// of the logits) -> the LM head -> ln_f -> each block in reverse, one buffer carrying the residual
// stream's gradient -> the embeddings; each block's gradients all-reduced as soon as they are
// complete when a GradientReducer is given; then the global norm, clipping and AdamW.
#include "cuda_gpt_engine.h"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/kernels.h"

#include <cmath>

namespace sealtrain::trainer::cuda::Internal {

// din = dout · Wᵀ (written; with GeluBackward also multiplied by GELU′(aux)), dW += inᵀ · dout,
// db += Σ_rows dout.
template <typename T>
void EngineFor<T>::linearBackward(T* din, const T* dout, const T* in, std::size_t weightTensor,
                                  std::size_t rows, std::size_t inWidth, std::size_t outWidth,
                                  GemmEpilogue dinEpilogue, const T* aux)
{
    const LinearShape shape{rows, inWidth, outWidth};
    gemm_->run(linearInputGradientCall(din, dout, weight(weightTensor), shape, dinEpilogue, aux),
               stream_);
    gemm_->run(linearWeightGradientCall(gradient(weightTensor), dout, in, shape), stream_);
    kernels::biasBackward(gradient(weightTensor + 1), columnScratch_, dout, rows, outWidth,
                          stream_);
}

// q, k and v are split again from the layer's qkv rather than kept per layer.
template <typename T>
void EngineFor<T>::attentionBackward(T* dqkv, const T* dattY, const Layer& layer)
{
    const kernels::AttentionDims dims{batch_, seq_, config_.heads, config_.headSize()};
    if constexpr (kLowPrecision) {
        if (flash_) {
            kernels::flashAttentionBackward(dqkv, dots_, dattY, layer.attY, layer.qkv, layer.lse,
                                            dims, stream_);
            return;
        }
    }
    const AttentionGemmShape shape{dims.batch * dims.heads, dims.seq, dims.headSize};
    kernels::splitHeadOutputs(dy_, dattY, dims, stream_);
    kernels::splitHeads(q_, k_, vHeads_, layer.qkv, dims, stream_);
    gemm_->runBatched(attentionProbsGradientCall(datt_, dy_, vHeads_, shape), stream_);
    gemm_->runBatched(attentionValueGradientCall(dv_, layer.att, dy_, shape), stream_);
    kernels::causalSoftmaxBackward(datt_, datt_, layer.att, shape.matrices, shape.seq, stream_);
    gemm_->runBatched(attentionQueryGradientCall(dq_, datt_, k_, shape), stream_);
    gemm_->runBatched(attentionKeyGradientCall(dk_, datt_, q_, shape), stream_);
    kernels::mergeHeadGradients(dqkv, dq_, dk_, dv_, dims, stream_);
}

template <typename T>
void EngineFor<T>::backward(float lossScale, GradientReducer* reduce)
{
    const std::size_t rows = batch_ * seq_;
    const std::size_t c = config_.width;
    constexpr std::size_t wte = 0;
    constexpr std::size_t wpe = 1;
    const std::size_t lnf = layout_.tensors().size() - 2;
    const ReduceType reduceType = kLowPrecision ? ReduceType::BFloat16 : ReduceType::Float32;
    std::size_t nextBucket = 0;
    auto bucketReady = [&]() {
        if (reduce == nullptr) {
            ++nextBucket;
            return;
        }
        const GradientBucket& bucket = buckets_[nextBucket];
        SEALTRAIN_CUDA_CHECK(cudaEventRecord(bucketEvents_[nextBucket], stream_));
        reduce->reduceMeanAsync(gradients_ + bucket.offset, bucket.size, reduceType,
                                bucketEvents_[nextBucket]);
        ++nextBucket;
    };

    if (targetCount_ == 0) {
        // Nothing to add (every target masked), but the other ranks still reduce every bucket.
        for (std::size_t bucket = 0; bucket < buckets_.size(); ++bucket)
            bucketReady();
        if (reduce != nullptr)
            reduce->joinInto(stream_);
        return;
    }

    // One buffer holds the residual stream's gradient throughout: each branch reads it as its
    // output gradient and each LayerNorm adds into it, so the residual additions cost nothing.
    SEALTRAIN_CUDA_CHECK(cudaMemsetAsync(dresidual_, 0, rows * c * sizeof(T), stream_));
    const kernels::CrossEntropyDims ce{rows, config_.vocabSize, config_.paddedVocabSize};
    kernels::crossEntropyBackward(logits_, logits_, logSumExp_, targets_,
                                  lossScale / static_cast<float>(targetCount_), ce, stream_);
    gemm_->run(
        lmHeadInputGradientCall(dln_, logits_, weight(wte), rows, c, config_.paddedVocabSize),
        stream_);
    gemm_->run(
        lmHeadWeightGradientCall(gradient(wte), logits_, lnf_, rows, c, config_.paddedVocabSize),
        stream_);
    const T* lastResidual = config_.layers == 0 ? encoded_ : layers_.back().residual3;
    kernels::layerNormBackward(dresidual_, gradient(lnf), gradient(lnf + 1), columnScratch_, dln_,
                               lastResidual, weight(lnf), lnfMean_, lnfRstd_, rows, c, stream_);
    bucketReady();

    for (std::size_t l = config_.layers; l-- > 0;) {
        const BlockTensors p = blockTensors(l);
        const Layer& a = layers_[l];
        const T* residual = l == 0 ? encoded_ : layers_[l - 1].residual3;
        if (geluEpilogue_) {
            linearBackward(dfc_, dresidual_, a.fcGelu, p.fcProjWeight, rows, 4 * c, c,
                           GemmEpilogue::GeluBackward, a.fc);
        } else {
            linearBackward(dfcGelu_, dresidual_, a.fcGelu, p.fcProjWeight, rows, 4 * c, c);
            kernels::geluBackward(dfc_, dfcGelu_, a.fc, rows * 4 * c, stream_);
        }
        linearBackward(dln_, dfc_, a.ln2, p.fcWeight, rows, c, 4 * c);
        kernels::layerNormBackward(dresidual_, gradient(p.ln2Weight), gradient(p.ln2Bias),
                                   columnScratch_, dln_, a.residual2, weight(p.ln2Weight),
                                   a.ln2Mean, a.ln2Rstd, rows, c, stream_);
        linearBackward(dattY_, dresidual_, a.attY, p.attnProjWeight, rows, c, c);
        attentionBackward(dqkv_, dattY_, a);
        linearBackward(dln_, dqkv_, a.ln1, p.qkvWeight, rows, c, 3 * c);
        kernels::layerNormBackward(dresidual_, gradient(p.ln1Weight), gradient(p.ln1Bias),
                                   columnScratch_, dln_, residual, weight(p.ln1Weight), a.ln1Mean,
                                   a.ln1Rstd, rows, c, stream_);
        bucketReady();
    }
    kernels::encoderBackwardPositions(gradient(wpe), dresidual_, batch_, seq_, c, stream_);
    kernels::encoderBackwardTokens(gradient(wte), dresidual_, bucketTokens_, bucketStarts_,
                                   bucketPositions_, tokenBuckets_, c, stream_);
    bucketReady();
    if (reduce != nullptr)
        reduce->joinInto(stream_);
}

template <typename T>
double EngineFor<T>::optimizerStep(double learningRate, double maxGradientNorm,
                                   const AdamWParams& params)
{
    const std::size_t n = layout_.totalSize();
    // The norm, the clipping factor (clipByGlobalNorm's rule, folded into AdamW's read of the
    // gradient) and the update are queued back to back; the norm comes back to the host last.
    kernels::sumOfSquares(sumResult_, sumPartials_, gradients_, n, stream_);
    kernels::clipScale(clipScale_, sumResult_, maxGradientNorm, stream_);
    ++stepCount_;
    kernels::AdamWScalars scalars = kernels::adamwScalars(params, stepCount_, learningRate);
    scalars.weightDecay = static_cast<float>(params.weightDecay);
    kernels::adamwChunks(master_, low_, m_, v_, gradients_, adamwChunks_, adamwChunkCount_, scalars,
                         clipScale_, stream_);
    double sumSquares = 0.0;
    SEALTRAIN_CUDA_CHECK(
        cudaMemcpyAsync(&sumSquares, sumResult_, sizeof(double), cudaMemcpyDeviceToHost, stream_));
    SEALTRAIN_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const double norm = std::sqrt(sumSquares);
    return norm;
}

// Each member once per activation type (the class is defined in pieces, so not as a whole).
// NOLINTBEGIN(bugprone-macro-parentheses): T is a type here.
#define SEALTRAIN_INSTANTIATE_ENGINE_BACKWARD(T)                                                   \
    template void EngineFor<T>::linearBackward(T*, const T*, const T*, std::size_t, std::size_t,   \
                                               std::size_t, std::size_t, GemmEpilogue, const T*);  \
    template void EngineFor<T>::attentionBackward(T*, const T*, const Layer&);                     \
    template void EngineFor<T>::backward(float, GradientReducer*);                                 \
    template double EngineFor<T>::optimizerStep(double, double, const AdamWParams&);

SEALTRAIN_INSTANTIATE_ENGINE_BACKWARD(float)
SEALTRAIN_INSTANTIATE_ENGINE_BACKWARD(__nv_bfloat16)
// NOLINTEND(bugprone-macro-parentheses)

}  // namespace sealtrain::trainer::cuda::Internal
