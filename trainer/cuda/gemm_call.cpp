// The model's matrix products as cuBLAS(Lt) calls (gemm_call.h). Each builder's header comment
// gives the row-major product and its column-major form; here are the shapes that form needs.
#include "sealtrain/trainer/cuda/gemm_call.h"

#include <cmath>

namespace sealtrain::trainer::cuda {
namespace {

float attentionScale(std::size_t headSize)
{
    return 1.0F / std::sqrt(static_cast<float>(headSize));
}

// A batched call over `shape.matrices` (seq, headSize) / (seq, seq) matrices.
BatchedGemmCall attentionCall(const AttentionGemmShape& shape, bool transposeA, bool transposeB,
                              std::size_t m, const void* a, std::size_t lda, std::size_t strideA,
                              const void* b, std::size_t ldb, std::size_t strideB, void* c,
                              std::size_t ldc, std::size_t strideC, float alpha)
{
    BatchedGemmCall call;
    call.transposeA = transposeA;
    call.transposeB = transposeB;
    call.m = m;
    call.n = shape.seq;
    call.k = transposeA ? shape.headSize : shape.seq;
    call.a = a;
    call.lda = lda;
    call.strideA = strideA;
    call.b = b;
    call.ldb = ldb;
    call.strideB = strideB;
    call.c = c;
    call.ldc = ldc;
    call.strideC = strideC;
    call.batch = shape.matrices;
    call.alpha = alpha;
    return call;
}

// A plain product D(m, n) = op(A) · op(B) over (m, k) and (k, n), each operand given as its
// pointer and leading dimension.
struct Operand {
    const void* data;
    std::size_t leading;
};

GemmCall productCall(bool transposeA, bool transposeB, std::size_t m, std::size_t n, std::size_t k,
                     Operand a, Operand b, void* d, std::size_t ldd)
{
    GemmCall call;
    call.transposeA = transposeA;
    call.transposeB = transposeB;
    call.m = m;
    call.n = n;
    call.k = k;
    call.a = a.data;
    call.lda = a.leading;
    call.b = b.data;
    call.ldb = b.leading;
    call.d = d;
    call.ldd = ldd;
    return call;
}

}  // namespace

GemmCall linearForwardCall(void* out, const void* in, const void* weight, const void* bias,
                           const LinearShape& shape, GemmEpilogue epilogue, void* aux)
{
    GemmCall call = productCall(false, false, shape.outWidth, shape.rows, shape.inWidth,
                                {weight, shape.outWidth}, {in, shape.inWidth}, out, shape.outWidth);
    call.epilogue = epilogue;
    call.bias = bias;
    call.aux = aux;
    return call;
}

GemmCall linearInputGradientCall(void* din, const void* dout, const void* weight,
                                 const LinearShape& shape, GemmEpilogue epilogue, const void* aux)
{
    GemmCall call =
        productCall(true, false, shape.inWidth, shape.rows, shape.outWidth,
                    {weight, shape.outWidth}, {dout, shape.outWidth}, din, shape.inWidth);
    call.epilogue = epilogue;
    call.aux = const_cast<void*>(aux);  // read, never written, by the GELU-backward epilogue
    return call;
}

GemmCall linearWeightGradientCall(void* dweight, const void* dout, const void* in,
                                  const LinearShape& shape)
{
    GemmCall call =
        productCall(false, true, shape.outWidth, shape.inWidth, shape.rows, {dout, shape.outWidth},
                    {in, shape.inWidth}, dweight, shape.outWidth);
    call.beta = 1.0F;
    return call;
}

GemmCall lmHeadForwardCall(void* logits, const void* in, const void* wte, std::size_t rows,
                           std::size_t width, std::size_t paddedVocab)
{
    return productCall(true, false, paddedVocab, rows, width, {wte, width}, {in, width}, logits,
                       paddedVocab);
}

GemmCall lmHeadInputGradientCall(void* din, const void* dlogits, const void* wte, std::size_t rows,
                                 std::size_t width, std::size_t paddedVocab)
{
    return productCall(false, false, width, rows, paddedVocab, {wte, width}, {dlogits, paddedVocab},
                       din, width);
}

GemmCall lmHeadWeightGradientCall(void* dwte, const void* dlogits, const void* in, std::size_t rows,
                                  std::size_t width, std::size_t paddedVocab)
{
    GemmCall call = productCall(false, true, width, paddedVocab, rows, {in, width},
                                {dlogits, paddedVocab}, dwte, width);
    call.beta = 1.0F;
    return call;
}

BatchedGemmCall attentionScoresCall(void* scores, const void* q, const void* k,
                                    const AttentionGemmShape& shape)
{
    const std::size_t t = shape.seq;
    const std::size_t hs = shape.headSize;
    return attentionCall(shape, true, false, t, k, hs, t * hs, q, hs, t * hs, scores, t, t * t,
                         attentionScale(hs));
}

BatchedGemmCall attentionOutputCall(void* y, const void* probs, const void* v,
                                    const AttentionGemmShape& shape)
{
    const std::size_t t = shape.seq;
    const std::size_t hs = shape.headSize;
    return attentionCall(shape, false, false, hs, v, hs, t * hs, probs, t, t * t, y, hs, t * hs,
                         1.0F);
}

BatchedGemmCall attentionProbsGradientCall(void* dprobs, const void* dy, const void* v,
                                           const AttentionGemmShape& shape)
{
    const std::size_t t = shape.seq;
    const std::size_t hs = shape.headSize;
    return attentionCall(shape, true, false, t, v, hs, t * hs, dy, hs, t * hs, dprobs, t, t * t,
                         1.0F);
}

BatchedGemmCall attentionValueGradientCall(void* dv, const void* probs, const void* dy,
                                           const AttentionGemmShape& shape)
{
    const std::size_t t = shape.seq;
    const std::size_t hs = shape.headSize;
    return attentionCall(shape, false, true, hs, dy, hs, t * hs, probs, t, t * t, dv, hs, t * hs,
                         1.0F);
}

BatchedGemmCall attentionQueryGradientCall(void* dq, const void* dscores, const void* k,
                                           const AttentionGemmShape& shape)
{
    const std::size_t t = shape.seq;
    const std::size_t hs = shape.headSize;
    return attentionCall(shape, false, false, hs, k, hs, t * hs, dscores, t, t * t, dq, hs, t * hs,
                         attentionScale(hs));
}

BatchedGemmCall attentionKeyGradientCall(void* dk, const void* dscores, const void* q,
                                         const AttentionGemmShape& shape)
{
    const std::size_t t = shape.seq;
    const std::size_t hs = shape.headSize;
    return attentionCall(shape, false, true, hs, q, hs, t * hs, dscores, t, t * t, dk, hs, t * hs,
                         attentionScale(hs));
}

}  // namespace sealtrain::trainer::cuda
