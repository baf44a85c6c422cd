// The GPT's operations on the CPU: the readable reference every other backend is checked against.
//
// Each operation is a pair of free functions, forward and backward, templated on the float type
// (instantiated for float, which training uses, and double, which the finite-difference gradient
// checks use). Tensors are row-major arrays passed as pointers with their shape beside them.
//
// Conventions, the same for every operation:
// - forward writes (=) its outputs;
// - backward ADDS (+=) into every gradient it produces, inputs' and parameters' alike, so that a
//   tensor used twice (the residual stream, the tied embedding) and micro-batches accumulate;
//   callers zero gradients when they mean to start afresh;
// - results do not depend on the number of threads: threads only ever split work whose outputs
//   are disjoint, and every sum runs in one fixed order.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sealtrain::trainer::cpu {

// The threads the operations use: OpenMP's for the loops, OpenBLAS's for the GEMMs. Both default
// to every core (or OMP_NUM_THREADS / OPENBLAS_NUM_THREADS); setThreadCount(n) sets both to n.
[[nodiscard]] std::size_t threadCount();
void setThreadCount(std::size_t threads);

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]; tokens must be < the rows of wte.
template <typename Real>
void encoderForward(Real* out, const std::int32_t* tokens, const Real* wte, const Real* wpe,
                    std::size_t batch, std::size_t seq, std::size_t width);
template <typename Real>
void encoderBackward(Real* dwte, Real* dwpe, const Real* dout, const std::int32_t* tokens,
                     std::size_t batch, std::size_t seq, std::size_t width);

// LayerNorm over the last axis with GPT-2's epsilon (1e-5) and the biased variance; keeps each
// row's mean and reciprocal standard deviation for the backward pass.
inline constexpr double kLayerNormEpsilon = 1e-5;
template <typename Real>
void layerNormForward(Real* out, Real* mean, Real* rstd, const Real* in, const Real* weight,
                      const Real* bias, std::size_t rows, std::size_t width);
template <typename Real>
void layerNormBackward(Real* din, Real* dweight, Real* dbias, const Real* dout, const Real* in,
                       const Real* weight, const Real* mean, const Real* rstd, std::size_t rows,
                       std::size_t width);

// out(rows, outWidth) = in(rows, inWidth) · weight(inWidth, outWidth) + bias(outWidth), the
// Hugging Face Conv1D convention; `bias` / `dbias` may be null. GEMMs go through BLAS.
struct MatmulShape {
    std::size_t rows = 0;
    std::size_t inWidth = 0;
    std::size_t outWidth = 0;
};
template <typename Real>
void matmulForward(Real* out, const Real* in, const Real* weight, const Real* bias,
                   const MatmulShape& shape);
template <typename Real>
void matmulBackward(Real* din, Real* dweight, Real* dbias, const Real* dout, const Real* in,
                    const Real* weight, const MatmulShape& shape);

// The tied LM head: logits(rows, paddedVocab) = in(rows, width) · wteᵀ, wte being the token
// embedding (paddedVocab, width); dwte receives the head's share of the tied gradient.
struct LmHeadShape {
    std::size_t rows = 0;
    std::size_t width = 0;
    std::size_t paddedVocab = 0;
};
template <typename Real>
void lmHeadForward(Real* logits, const Real* in, const Real* wte, const LmHeadShape& shape);
template <typename Real>
void lmHeadBackward(Real* din, Real* dwte, const Real* dlogits, const Real* in, const Real* wte,
                    const LmHeadShape& shape);

// Causal multi-head self-attention on packed projections qkv(batch, seq, 3·width) = [q | k | v],
// head h owning channels [h·headSize, (h+1)·headSize) of each. out(batch, seq, width) holds the
// heads side by side; att(batch, heads, seq, seq) keeps the softmax probabilities (zero above the
// diagonal) for the backward pass. Scores are scaled by 1/sqrt(headSize). Each head's q·kᵀ and
// att·v products (and their gradients) are BLAS GEMMs; the backward pass overwrites `scratch`,
// batch·heads·seq·seq elements, with the scores' gradient.
struct AttentionShape {
    std::size_t batch = 0;
    std::size_t seq = 0;
    std::size_t heads = 0;
    std::size_t width = 0;
};
template <typename Real>
void attentionForward(Real* out, Real* att, const Real* qkv, const AttentionShape& shape);
template <typename Real>
void attentionBackward(Real* dqkv, Real* scratch, const Real* dout, const Real* qkv,
                       const Real* att, const AttentionShape& shape);

// GELU with GPT-2's tanh approximation: 0.5·x·(1 + tanh(sqrt(2/π)·(x + 0.044715·x³))).
template <typename Real>
void geluForward(Real* out, const Real* in, std::size_t count);
template <typename Real>
void geluBackward(Real* din, const Real* dout, const Real* in, std::size_t count);

// out = a + b (the residual stream).
template <typename Real>
void residualForward(Real* out, const Real* a, const Real* b, std::size_t count);
template <typename Real>
void residualBackward(Real* da, Real* db, const Real* dout, std::size_t count);

// Softmax over the first `vocab` of each row's `paddedVocab` logits (the padding gets
// probability 0) and the cross-entropy against targets; a target of -1 masks the row out (loss
// 0, no gradient). Writes probs(rows, paddedVocab) and losses(rows), and returns how many rows
// were not masked. Targets must be -1 or < vocab.
struct CrossEntropyShape {
    std::size_t rows = 0;
    std::size_t vocab = 0;
    std::size_t paddedVocab = 0;
};
template <typename Real>
std::size_t crossEntropyForward(Real* losses, Real* probs, const Real* logits,
                                const std::int32_t* targets, const CrossEntropyShape& shape);
// dlogits += dlosses[row] · (probs − onehot(target)) for each unmasked row, where `dlosses` is
// the gradient of the final loss with respect to each row's loss (e.g. 1/count for a mean).
template <typename Real>
void crossEntropyBackward(Real* dlogits, const Real* dlosses, const Real* probs,
                          const std::int32_t* targets, const CrossEntropyShape& shape);

}  // namespace sealtrain::trainer::cpu
