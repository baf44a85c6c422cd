// Causal self-attention's own kernels; its six products are cuBLAS batched GEMMs (gemm_call.h).
// Forward: qkv (B,T,3C) -> q, k, v (B,NH,T,HS) -> scores (B,NH,T,T) -> causal softmax -> probs
// (B,NH,T,T) -> y = probs·v (B,NH,T,HS) -> attY (B,T,C). Backward: dattY (B,T,C) -> dy
// (B,NH,T,HS) -> dprobs -> softmax backward -> dscores (B,NH,T,T) -> dq, dk, dv -> dqkv (B,T,3C).
// Here: the layout changes between (B,T,…) and (B,NH,T,HS) and the causal softmax with its
// backward (one warp per row). Device code, then the launchers.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

// Index of element (b, t, part, h, d) of qkv and of its place (b, h, t, d) in q, k or v.
struct HeadIndex {
    std::size_t packed;
    std::size_t split;
    std::size_t part;
};

__device__ __forceinline__ HeadIndex headIndex(std::size_t i, const AttentionDims& dims)
{
    const std::size_t width = dims.heads * dims.headSize;
    const std::size_t d = i % dims.headSize;
    const std::size_t h = (i / dims.headSize) % dims.heads;
    const std::size_t part = (i / width) % 3;
    const std::size_t t = (i / (3 * width)) % dims.seq;
    const std::size_t b = i / (3 * width * dims.seq);
    return {i, ((b * dims.heads + h) * dims.seq + t) * dims.headSize + d, part};
}

// Elements of q, k, v, y or attY: batch · seq · heads · headSize.
__host__ __device__ __forceinline__ std::size_t headElements(const AttentionDims& dims)
{
    return dims.batch * dims.seq * dims.heads * dims.headSize;
}

template <typename T>
__global__ void splitHeadsKernel(T* q, T* k, T* v, const T* qkv, AttentionDims dims)
{
    const std::size_t count = 3 * headElements(dims);
    for (std::size_t i = firstElement(); i < count; i += elementStride()) {
        const HeadIndex index = headIndex(i, dims);
        T* target = index.part == 0 ? q : (index.part == 1 ? k : v);
        target[index.split] = qkv[index.packed];
    }
}

template <typename T>
__global__ void mergeHeadGradientsKernel(T* dqkv, const T* dq, const T* dk, const T* dv,
                                         AttentionDims dims)
{
    const std::size_t count = 3 * headElements(dims);
    for (std::size_t i = firstElement(); i < count; i += elementStride()) {
        const HeadIndex index = headIndex(i, dims);
        const T* source = index.part == 0 ? dq : (index.part == 1 ? dk : dv);
        dqkv[index.packed] = source[index.split];
    }
}

// Element i of out(b, t, h, d) and its place in y(b, h, t, d).
__device__ __forceinline__ std::size_t headMajorIndex(std::size_t i, const AttentionDims& dims)
{
    const std::size_t d = i % dims.headSize;
    const std::size_t h = (i / dims.headSize) % dims.heads;
    const std::size_t t = (i / (dims.headSize * dims.heads)) % dims.seq;
    const std::size_t b = i / (dims.headSize * dims.heads * dims.seq);
    return ((b * dims.heads + h) * dims.seq + t) * dims.headSize + d;
}

template <typename T>
__global__ void concatHeadsKernel(T* out, const T* y, AttentionDims dims, bool inverse)
{
    const std::size_t count = headElements(dims);
    for (std::size_t i = firstElement(); i < count; i += elementStride()) {
        const std::size_t j = headMajorIndex(i, dims);
        if (inverse)
            out[j] = y[i];  // out is y(b, h, t, d) here, y is out(b, t, h, d)
        else
            out[i] = y[j];
    }
}

template <typename T>
__global__ void causalSoftmaxForwardKernel(T* probs, const T* scores, std::size_t rows,
                                           std::size_t seq)
{
    const std::size_t row = warpRow();
    const unsigned lane = warpLane();
    if (row >= rows)
        return;
    const std::size_t t = row % seq;
    const T* x = scores + row * seq;
    T* p = probs + row * seq;
    float largest = -INFINITY;
    for (std::size_t j = lane; j <= t; j += kWarp)
        largest = fmaxf(largest, toFloat(x[j]));
    largest = warpMax(largest);
    float sum = 0.0F;
    for (std::size_t j = lane; j <= t; j += kWarp)
        sum += expf(toFloat(x[j]) - largest);
    sum = warpSum(sum);
    for (std::size_t j = lane; j < seq; j += kWarp)
        p[j] = fromFloat<T>(j <= t ? expf(toFloat(x[j]) - largest) / sum : 0.0F);
}

template <typename T>
__global__ void causalSoftmaxBackwardKernel(T* dscores, const T* dprobs, const T* probs,
                                            std::size_t rows, std::size_t seq)
{
    const std::size_t row = warpRow();
    const unsigned lane = warpLane();
    if (row >= rows)
        return;
    const std::size_t t = row % seq;
    const T* p = probs + row * seq;
    const T* dp = dprobs + row * seq;
    T* ds = dscores + row * seq;
    float dot = 0.0F;
    for (std::size_t j = lane; j <= t; j += kWarp)
        dot += toFloat(p[j]) * toFloat(dp[j]);
    dot = warpSum(dot);
    for (std::size_t j = lane; j < seq; j += kWarp)
        ds[j] = fromFloat<T>(j <= t ? toFloat(p[j]) * (toFloat(dp[j]) - dot) : 0.0F);
}

}  // namespace

template <typename T>
void splitHeads(T* q, T* k, T* v, const T* qkv, const AttentionDims& dims, cudaStream_t stream)
{
    launchElementwise(splitHeadsKernel<T>, 3 * headElements(dims), stream, q, k, v, qkv, dims);
}

template <typename T>
void mergeHeadGradients(T* dqkv, const T* dq, const T* dk, const T* dv, const AttentionDims& dims,
                        cudaStream_t stream)
{
    launchElementwise(mergeHeadGradientsKernel<T>, 3 * headElements(dims), stream, dqkv, dq, dk, dv,
                      dims);
}

template <typename T>
void concatHeads(T* out, const T* y, const AttentionDims& dims, cudaStream_t stream)
{
    launchElementwise(concatHeadsKernel<T>, headElements(dims), stream, out, y, dims, false);
}

template <typename T>
void splitHeadOutputs(T* y, const T* out, const AttentionDims& dims, cudaStream_t stream)
{
    launchElementwise(concatHeadsKernel<T>, headElements(dims), stream, y, out, dims, true);
}

template <typename T>
void causalSoftmaxForward(T* probs, const T* scores, std::size_t matrices, std::size_t seq,
                          cudaStream_t stream)
{
    const std::size_t rows = matrices * seq;
    launchPerRow(causalSoftmaxForwardKernel<T>, rows, stream, probs, scores, rows, seq);
}

template <typename T>
void causalSoftmaxBackward(T* dscores, const T* dprobs, const T* probs, std::size_t matrices,
                           std::size_t seq, cudaStream_t stream)
{
    const std::size_t rows = matrices * seq;
    launchPerRow(causalSoftmaxBackwardKernel<T>, rows, stream, dscores, dprobs, probs, rows, seq);
}

#define SEALTRAIN_INSTANTIATE_ATTENTION(T)                                                         \
    template void splitHeads<T>(T*, T*, T*, const T*, const AttentionDims&, cudaStream_t);         \
    template void mergeHeadGradients<T>(T*, const T*, const T*, const T*, const AttentionDims&,    \
                                        cudaStream_t);                                             \
    template void concatHeads<T>(T*, const T*, const AttentionDims&, cudaStream_t);                \
    template void splitHeadOutputs<T>(T*, const T*, const AttentionDims&, cudaStream_t);           \
    template void causalSoftmaxForward<T>(T*, const T*, std::size_t, std::size_t, cudaStream_t);   \
    template void causalSoftmaxBackward<T>(T*, const T*, const T*, std::size_t, std::size_t,       \
                                           cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_ATTENTION)

}  // namespace sealtrain::trainer::cuda::kernels
