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

}  // namespace

GemmCall linearForwardCall(void* out, const void* in, const void* weight, const void* bias,
                           const LinearShape& shape, GemmEpilogue epilogue, void* aux)
{
    GemmCall call;
    call.m = shape.outWidth;
    call.n = shape.rows;
    call.k = shape.inWidth;
    call.a = weight;
    call.lda = shape.outWidth;
    call.b = in;
    call.ldb = shape.inWidth;
    call.d = out;
    call.ldd = shape.outWidth;
    call.epilogue = epilogue;
    call.bias = bias;
    call.aux = aux;
    return call;
}

GemmCall linearInputGradientCall(void* din, const void* dout, const void* weight,
                                 const LinearShape& shape, GemmEpilogue epilogue, const void* aux)
{
    GemmCall call;
    call.transposeA = true;
    call.m = shape.inWidth;
    call.n = shape.rows;
    call.k = shape.outWidth;
    call.a = weight;
    call.lda = shape.outWidth;
    call.b = dout;
    call.ldb = shape.outWidth;
    call.d = din;
    call.ldd = shape.inWidth;
    call.epilogue = epilogue;
    call.aux = const_cast<void*>(aux);  // read, never written, by the GELU-backward epilogue
    return call;
}

GemmCall linearWeightGradientCall(void* dweight, const void* dout, const void* in,
                                  const LinearShape& shape)
{
    GemmCall call;
    call.transposeB = true;
    call.m = shape.outWidth;
    call.n = shape.inWidth;
    call.k = shape.rows;
    call.a = dout;
    call.lda = shape.outWidth;
    call.b = in;
    call.ldb = shape.inWidth;
    call.d = dweight;
    call.ldd = shape.outWidth;
    call.beta = 1.0F;
    return call;
}

GemmCall lmHeadForwardCall(void* logits, const void* in, const void* wte, std::size_t rows,
                           std::size_t width, std::size_t paddedVocab)
{
    GemmCall call;
    call.transposeA = true;
    call.m = paddedVocab;
    call.n = rows;
    call.k = width;
    call.a = wte;
    call.lda = width;
    call.b = in;
    call.ldb = width;
    call.d = logits;
    call.ldd = paddedVocab;
    return call;
}

GemmCall lmHeadInputGradientCall(void* din, const void* dlogits, const void* wte, std::size_t rows,
                                 std::size_t width, std::size_t paddedVocab)
{
    GemmCall call;
    call.m = width;
    call.n = rows;
    call.k = paddedVocab;
    call.a = wte;
    call.lda = width;
    call.b = dlogits;
    call.ldb = paddedVocab;
    call.d = din;
    call.ldd = width;
    return call;
}

GemmCall lmHeadWeightGradientCall(void* dwte, const void* dlogits, const void* in, std::size_t rows,
                                  std::size_t width, std::size_t paddedVocab)
{
    GemmCall call;
    call.transposeB = true;
    call.m = width;
    call.n = paddedVocab;
    call.k = rows;
    call.a = in;
    call.lda = width;
    call.b = dlogits;
    call.ldb = paddedVocab;
    call.d = dwte;
    call.ldd = width;
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
