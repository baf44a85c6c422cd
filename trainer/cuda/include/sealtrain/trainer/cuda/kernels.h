// The CUDA backend's kernels, each behind a launcher that enqueues it on a stream, grouped by the
// operation's file (encoder.cu, layernorm.cu, column_sums.cu, gelu.cu, attention.cu,
// classifier.cu, adamw.cu, gradient_norm.cu, conversion.cu). Every launcher is a template over
// the activation type T (the floatX switch): float for the checking mode, __nv_bfloat16 for
// training; arithmetic inside is fp32 (statistics and sums in fp32 or double), only loads and
// stores are in T.
//
// Conventions follow cpu_ops.h where the operation is the same, with one difference stated per
// launcher: outputs that start a new value are written (=), gradients that accumulate across
// micro-batches or branches are added (+=). No kernel uses floating-point atomics, so every
// result is bit-identical for equal inputs.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace sealtrain::trainer {
struct AdamWParams;  // optimizer.h
namespace cuda {
struct AdamWChunk;  // plan.h
}  // namespace cuda
}  // namespace sealtrain::trainer

namespace sealtrain::trainer::cuda::kernels {

// ---- encoder.cu ----

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:].
template <typename T>
void encoderForward(T* out, const std::int32_t* tokens, const T* wte, const T* wpe,
                    std::size_t batch, std::size_t seq, std::size_t width, cudaStream_t stream);
// dwpe[t,:] += Σ_b dout[b,t,:], the batch summed in order.
template <typename T>
void encoderBackwardPositions(T* dwpe, const T* dout, std::size_t batch, std::size_t seq,
                              std::size_t width, cudaStream_t stream);
// dwte[tokens[i],:] += Σ dout[p,:] over p in positions[starts[i] .. starts[i+1]), in order (the
// buckets of plan.h's bucketTokens, in device memory).
template <typename T>
void encoderBackwardTokens(T* dwte, const T* dout, const std::int32_t* tokens,
                           const std::int32_t* starts, const std::int32_t* positions,
                           std::size_t tokenCount, std::size_t width, cudaStream_t stream);

// ---- layernorm.cu ----

// residualOut = a + b (when b is not null), then out = LayerNorm(residualOut or a) with
// GPT-2's epsilon; mean and rstd (fp32, one per row) are kept for the backward pass. The
// residual is rounded to T before it is normalised, so backward sees exactly what forward did.
template <typename T>
void residualLayerNormForward(T* residualOut, T* out, float* mean, float* rstd, const T* a,
                              const T* b, const T* weight, const T* bias, std::size_t rows,
                              std::size_t width, cudaStream_t stream);
// din += ∂/∂in, dweight += Σ_rows dout·norm, dbias += Σ_rows dout. `scratch` holds
// plan.h's columnScratchFloats(rows, width, 2) floats.
template <typename T>
void layerNormBackward(T* din, T* dweight, T* dbias, float* scratch, const T* dout, const T* in,
                       const T* weight, const float* mean, const float* rstd, std::size_t rows,
                       std::size_t width, cudaStream_t stream);

// ---- column_sums.cu ----

// dbias += Σ_rows dout(rows, columns); `scratch` holds columnScratchFloats(rows, columns, 1).
template <typename T>
void biasBackward(T* dbias, float* scratch, const T* dout, std::size_t rows, std::size_t columns,
                  cudaStream_t stream);
// LayerNorm's parameter gradients, layerNormBackward's second half: dweight += Σ_rows dout·norm
// and dbias += Σ_rows dout with norm = (in − mean)·rstd; `scratch` as for layerNormBackward.
template <typename T>
void layerNormParameterBackward(T* dweight, T* dbias, float* scratch, const T* dout, const T* in,
                                const float* mean, const float* rstd, std::size_t rows,
                                std::size_t width, cudaStream_t stream);

// ---- gelu.cu ----

// GELU with GPT-2's tanh approximation. Backward writes din (=) rather than adding.
template <typename T>
void geluForward(T* out, const T* in, std::size_t count, cudaStream_t stream);
template <typename T>
void geluBackward(T* din, const T* dout, const T* in, std::size_t count, cudaStream_t stream);

// ---- attention.cu ----

// Attention's layout changes. qkv(batch, seq, 3, heads, headSize) → q, k, v each
// (batch, heads, seq, headSize), and back (the backward one writes dqkv, =).
struct AttentionDims {
    std::size_t batch = 0;
    std::size_t seq = 0;
    std::size_t heads = 0;
    std::size_t headSize = 0;
};
template <typename T>
void splitHeads(T* q, T* k, T* v, const T* qkv, const AttentionDims& dims, cudaStream_t stream);
template <typename T>
void mergeHeadGradients(T* dqkv, const T* dq, const T* dk, const T* dv, const AttentionDims& dims,
                        cudaStream_t stream);
// y(batch, heads, seq, headSize) → out(batch, seq, heads·headSize), and its exact inverse.
template <typename T>
void concatHeads(T* out, const T* y, const AttentionDims& dims, cudaStream_t stream);
template <typename T>
void splitHeadOutputs(T* y, const T* out, const AttentionDims& dims, cudaStream_t stream);

// Row-wise causal softmax of scores (batch·heads, seq, seq), already scaled: row t keeps
// columns 0..t and writes 0 above the diagonal. In place is allowed (probs == scores).
template <typename T>
void causalSoftmaxForward(T* probs, const T* scores, std::size_t matrices, std::size_t seq,
                          cudaStream_t stream);
// dscores = probs ∘ (dprobs − Σ_j probs·dprobs) on the causal half, 0 above (=, in place allowed).
template <typename T>
void causalSoftmaxBackward(T* dscores, const T* dprobs, const T* probs, std::size_t matrices,
                           std::size_t seq, cudaStream_t stream);

// ---- flash_attention.cu ----

// Causal attention without the T×T matrices, bf16 only, for a head size of kFlashHeadSize and
// any T (flashAttentionFits says when): out (B,T,C) = softmax(q·kᵀ/√hs)·v straight from the
// packed qkv (B,T,3C), with lse (B,H,T) = each row's logsumexp kept for backward. Backward
// writes dqkv (B,T,3C) (=, not +=) from dout (B,T,C), the forward's out and lse; `dots` is
// scratch of B·H·T floats. No atomics: bit-identical for equal inputs.
inline constexpr std::size_t kFlashHeadSize = 64;
[[nodiscard]] bool flashAttentionFits(const AttentionDims& dims);
void flashAttentionForward(__nv_bfloat16* out, float* lse, const __nv_bfloat16* qkv,
                           const AttentionDims& dims, cudaStream_t stream);
void flashAttentionBackward(__nv_bfloat16* dqkv, float* dots, const __nv_bfloat16* dout,
                            const __nv_bfloat16* out, const __nv_bfloat16* qkv, const float* lse,
                            const AttentionDims& dims, cudaStream_t stream);

// ---- classifier.cu ----

// The classifier's loss without probabilities: for each row, over the first `vocab` of its
// `paddedVocab` logits, losses[r] = logsumexp − logits[target] (0 when target is −1) and
// logSumExp[r] is kept for the backward pass.
struct CrossEntropyDims {
    std::size_t rows = 0;
    std::size_t vocab = 0;
    std::size_t paddedVocab = 0;
};
template <typename T>
void crossEntropyForward(float* losses, float* logSumExp, const T* logits,
                         const std::int32_t* targets, const CrossEntropyDims& dims,
                         cudaStream_t stream);
// dlogits = dloss · (softmax − onehot(target)) for unmasked rows, 0 for masked rows and for the
// padding columns; written over `logits` in place when dlogits == logits (one read, one write).
template <typename T>
void crossEntropyBackward(T* dlogits, const T* logits, const float* logSumExp,
                          const std::int32_t* targets, float dloss, const CrossEntropyDims& dims,
                          cudaStream_t stream);

// ---- adamw.cu ----

// AdamW on a contiguous run of the flat buffers (PyTorch's update order, as optimizer.h):
// g = grad·gradientScale; m, v, master parameters in fp32; `parametersLow` (when not null) gets
// the updated parameters rounded to T for the next forward pass.
struct AdamWScalars {
    float beta1 = 0;
    float beta2 = 0;
    float oneMinusBeta1 = 0;
    float oneMinusBeta2 = 0;
    float correction1 = 1;
    float correction2 = 1;
    float epsilon = 0;
    float learningRate = 0;
    float weightDecay = 0;
    float gradientScale = 1;
};
template <typename T>
void adamw(float* parameters, T* parametersLow, float* m, float* v, const T* gradients,
           std::size_t count, const AdamWScalars& scalars, cudaStream_t stream);
// The same over every chunk of planAdamWChunks in one launch (`chunks` on the device): a chunk's
// group decays by scalars.weightDecay or not at all, and the gradient scale is read from the
// device (*gradientScale, written by clipScale), so no value goes back to the host in between.
template <typename T>
void adamwChunks(float* parameters, T* parametersLow, float* m, float* v, const T* gradients,
                 const AdamWChunk* chunks, std::size_t chunkCount, const AdamWScalars& scalars,
                 const float* gradientScale, cudaStream_t stream);
// *scale = clipByGlobalNorm's factor for the gradient whose Σ x² is *sumSquares: min(1,
// maxNorm / (norm + 1e-6)), computed in double as the CPU does; 1 when maxNorm <= 0.
void clipScale(float* scale, const double* sumSquares, double maxNorm, cudaStream_t stream);
// The scalars of AdamW step number `step` (counted from 1) at `learningRate`, with no weight
// decay and a gradient scale of 1 (the caller sets both).
[[nodiscard]] AdamWScalars adamwScalars(const AdamWParams& params, std::uint64_t step,
                                        double learningRate);

// ---- gradient_norm.cu ----

// *result = Σ x², accumulated in double with a fixed grid and order (deterministic). `partials`
// holds plan.h's sumOfSquaresBlocks(count) doubles.
template <typename T>
void sumOfSquares(double* result, double* partials, const T* x, std::size_t count,
                  cudaStream_t stream);

// ---- conversion.cu ----

// Element type conversions: to T (round to nearest) and back to float (exact).
template <typename T>
void convertFromFloat(T* out, const float* in, std::size_t count, cudaStream_t stream);
template <typename T>
void convertToFloat(float* out, const T* in, std::size_t count, cudaStream_t stream);

}  // namespace sealtrain::trainer::cuda::kernels
