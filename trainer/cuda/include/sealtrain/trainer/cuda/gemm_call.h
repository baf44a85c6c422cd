// The model's matrix products as cuBLAS(Lt) calls, built without CUDA so that the CPU tests can
// run each call on a reference and compare it with cpu_ops.h.
//
// cuBLAS is column-major: a row-major (rows, cols) array is the column-major (cols, rows)
// matrix, its transpose. So the row-major out = in · W (Conv1D's (in, out) weights) is the
// column-major outᵀ = Wᵀ · inᵀ with both operands as stored, and so on for each product below;
// each builder's comment gives the row-major product and, after "as", the column-major call.
// Pointers are device pointers of the activation type; sizes, leading dimensions and strides
// count elements.
#pragma once

#include <cstddef>

namespace sealtrain::trainer::cuda {

enum class GemmEpilogue {
    None,
    Bias,          // D = A·B + bias (one per row of the column-major D)
    GeluBias,      // aux = A·B + bias, D = GELU(aux) (GPT-2's tanh approximation)
    GeluBackward,  // D = (A·B) ∘ GELU′(aux)
};

// D(m, n) = alpha · op(A)(m, k) · op(B)(k, n) + beta · D, column-major, with an epilogue.
struct GemmCall {
    bool transposeA = false;
    bool transposeB = false;
    std::size_t m = 0;
    std::size_t n = 0;
    std::size_t k = 0;
    const void* a = nullptr;
    std::size_t lda = 0;
    const void* b = nullptr;
    std::size_t ldb = 0;
    void* d = nullptr;
    std::size_t ldd = 0;
    float alpha = 1.0F;
    float beta = 0.0F;
    GemmEpilogue epilogue = GemmEpilogue::None;
    const void* bias = nullptr;  // m elements, Bias and GeluBias
    void* aux = nullptr;  // (m, n), leading dimension ldd; GeluBias writes, GeluBackward reads
};

// `batch` products of the same shape, matrix i at a + i·strideA (and so on), no epilogue.
struct BatchedGemmCall {
    bool transposeA = false;
    bool transposeB = false;
    std::size_t m = 0;
    std::size_t n = 0;
    std::size_t k = 0;
    const void* a = nullptr;
    std::size_t lda = 0;
    std::size_t strideA = 0;
    const void* b = nullptr;
    std::size_t ldb = 0;
    std::size_t strideB = 0;
    void* c = nullptr;
    std::size_t ldc = 0;
    std::size_t strideC = 0;
    std::size_t batch = 0;
    float alpha = 1.0F;
    float beta = 0.0F;
};

struct LinearShape {
    std::size_t rows = 0;
    std::size_t inWidth = 0;
    std::size_t outWidth = 0;
};

// out(rows, out) = in(rows, in) · W(in, out) [+ bias, GELU]; as outᵀ = Wᵀ · inᵀ.
[[nodiscard]] GemmCall linearForwardCall(void* out, const void* in, const void* weight,
                                         const void* bias, const LinearShape& shape,
                                         GemmEpilogue epilogue, void* aux = nullptr);
// din(rows, in) = dout · Wᵀ [∘ GELU′(aux)], written; as dinᵀ = W · doutᵀ (W's storage transposed).
[[nodiscard]] GemmCall linearInputGradientCall(void* din, const void* dout, const void* weight,
                                               const LinearShape& shape,
                                               GemmEpilogue epilogue = GemmEpilogue::None,
                                               const void* aux = nullptr);
// dW(in, out) += inᵀ · dout; as dWᵀ += doutᵀ · in.
[[nodiscard]] GemmCall linearWeightGradientCall(void* dweight, const void* dout, const void* in,
                                                const LinearShape& shape);

// The tied LM head with wte (paddedVocab, width): logits(rows, V) = in · wteᵀ, written; as
// logitsᵀ = wte · inᵀ (wte's storage transposed).
[[nodiscard]] GemmCall lmHeadForwardCall(void* logits, const void* in, const void* wte,
                                         std::size_t rows, std::size_t width,
                                         std::size_t paddedVocab);
// din(rows, width) = dlogits · wte, written; as dinᵀ = wteᵀ · dlogitsᵀ.
[[nodiscard]] GemmCall lmHeadInputGradientCall(void* din, const void* dlogits, const void* wte,
                                               std::size_t rows, std::size_t width,
                                               std::size_t paddedVocab);
// dwte(V, width) += dlogitsᵀ · in; as dwteᵀ += inᵀ · dlogits.
[[nodiscard]] GemmCall lmHeadWeightGradientCall(void* dwte, const void* dlogits, const void* in,
                                                std::size_t rows, std::size_t width,
                                                std::size_t paddedVocab);

// Attention per (batch, head) matrix: q, k, v, y and their gradients are (seq, headSize) and
// scores/probabilities (seq, seq), each row-major and packed `matrices` deep.
struct AttentionGemmShape {
    std::size_t matrices = 0;
    std::size_t seq = 0;
    std::size_t headSize = 0;
};
// scores = q · kᵀ / √headSize (causal masking is the softmax's); as scoresᵀ = k · qᵀ.
[[nodiscard]] BatchedGemmCall attentionScoresCall(void* scores, const void* q, const void* k,
                                                  const AttentionGemmShape& shape);
// y = probs · v; as yᵀ = vᵀ · probsᵀ.
[[nodiscard]] BatchedGemmCall attentionOutputCall(void* y, const void* probs, const void* v,
                                                  const AttentionGemmShape& shape);
// dprobs = dy · vᵀ; as dprobsᵀ = v · dyᵀ.
[[nodiscard]] BatchedGemmCall attentionProbsGradientCall(void* dprobs, const void* dy,
                                                         const void* v,
                                                         const AttentionGemmShape& shape);
// dv = probsᵀ · dy; as dvᵀ = dyᵀ · probs.
[[nodiscard]] BatchedGemmCall attentionValueGradientCall(void* dv, const void* probs,
                                                         const void* dy,
                                                         const AttentionGemmShape& shape);
// dq = dscores · k / √headSize; as dqᵀ = kᵀ · dscoresᵀ.
[[nodiscard]] BatchedGemmCall attentionQueryGradientCall(void* dq, const void* dscores,
                                                         const void* k,
                                                         const AttentionGemmShape& shape);
// dk = dscoresᵀ · q / √headSize; as dkᵀ = qᵀ · dscores.
[[nodiscard]] BatchedGemmCall attentionKeyGradientCall(void* dk, const void* dscores, const void* q,
                                                       const AttentionGemmShape& shape);

}  // namespace sealtrain::trainer::cuda
