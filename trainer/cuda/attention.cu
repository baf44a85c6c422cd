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

// The same layout changes and softmaxes with 128-bit loads and stores and 32-bit index math,
// used whenever packsFit allows (head size and T whole packs, aligned buffers, under 2^31
// elements): one thread moves one pack of a head's row, one warp walks a softmax row a pack per
// lane at a time. The scalar kernels above remain for the shapes that do not fit.
struct PackedDims {
    unsigned seq;
    unsigned heads;
    unsigned headSize;
};

// Where element e of a (B, T, H, HS) tensor lives in (B, H, T, HS), for e at a pack boundary.
__device__ __forceinline__ unsigned headMajorOf(unsigned e, const PackedDims& dims)
{
    const unsigned d = e % dims.headSize;
    const unsigned h = (e / dims.headSize) % dims.heads;
    const unsigned bt = e / (dims.headSize * dims.heads);
    return ((bt / dims.seq * dims.heads + h) * dims.seq + bt % dims.seq) * dims.headSize + d;
}

// Moves pack i of qkv (B, T, 3, H, HS) to q, k or v (B, H, T, HS), or back when `merge`.
template <typename T, bool merge>
__global__ void packedHeadsKernel(T* packedQkv, T* q, T* k, T* v, unsigned packs, PackedDims dims)
{
    constexpr unsigned n = Pack<T>::kSize;
    const unsigned width = dims.heads * dims.headSize;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < packs;
         i += gridDim.x * blockDim.x) {
        const unsigned e = i * n;
        const unsigned bt = e / (3 * width);
        const unsigned inRow = e - bt * 3 * width;
        const unsigned part = inRow / width;
        const unsigned split = headMajorOf(bt * width + inRow - part * width, dims);
        T* other = part == 0 ? q : (part == 1 ? k : v);
        if constexpr (merge)
            storePack(packedQkv + e, loadPack(other + split));
        else
            storePack(other + split, loadPack(packedQkv + e));
    }
}

// out (B, T, H·HS) from y (B, H, T, HS), or y from out when `inverse`.
template <typename T, bool inverse>
__global__ void packedConcatKernel(T* out, T* y, unsigned packs, PackedDims dims)
{
    constexpr unsigned n = Pack<T>::kSize;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < packs;
         i += gridDim.x * blockDim.x) {
        const unsigned e = i * n;
        const unsigned j = headMajorOf(e, dims);
        if constexpr (inverse)
            storePack(y + j, loadPack(out + e));
        else
            storePack(out + e, loadPack(y + j));
    }
}

// One warp per row: the running maximum and sum in one read (online softmax), then one pass that
// writes probabilities up to the diagonal and zeros after it.
template <typename T>
__global__ void packedCausalSoftmaxForwardKernel(T* probs, const T* scores, unsigned rows,
                                                 unsigned seq)
{
    constexpr unsigned n = Pack<T>::kSize;
    const unsigned row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    if (row >= rows)
        return;
    const unsigned t = row % seq;
    const T* x = scores + static_cast<std::size_t>(row) * seq;
    T* p = probs + static_cast<std::size_t>(row) * seq;
    const unsigned usedPacks = t / n + 1;
    float largest = -INFINITY;
    float sum = 0.0F;
    for (unsigned j = lane; j < usedPacks; j += kWarp) {
        const Pack<T> in = loadPack(x + j * n);
#pragma unroll
        for (unsigned u = 0; u < n; ++u) {
            if (j * n + u > t)
                break;
            const float value = toFloat(in.values[u]);
            if (value > largest) {
                sum = sum * expf(largest - value) + 1.0F;
                largest = value;
            } else {
                sum += expf(value - largest);
            }
        }
    }
    const float rowLargest = warpMax(largest);
    const float rowSum = warpSum(largest == -INFINITY ? 0.0F : sum * expf(largest - rowLargest));
    const float inverse = 1.0F / rowSum;
    for (unsigned j = lane; j < seq / n; j += kWarp) {
        Pack<T> out;
        if (j < usedPacks) {
            const Pack<T> in = loadPack(x + j * n);
#pragma unroll
            for (unsigned u = 0; u < n; ++u)
                out.values[u] = fromFloat<T>(
                    j * n + u <= t ? expf(toFloat(in.values[u]) - rowLargest) * inverse : 0.0F);
        } else {
#pragma unroll
            for (unsigned u = 0; u < n; ++u)
                out.values[u] = fromFloat<T>(0.0F);
        }
        storePack(p + j * n, out);
    }
}

template <typename T>
__global__ void packedCausalSoftmaxBackwardKernel(T* dscores, const T* dprobs, const T* probs,
                                                  unsigned rows, unsigned seq)
{
    constexpr unsigned n = Pack<T>::kSize;
    const unsigned row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    if (row >= rows)
        return;
    const unsigned t = row % seq;
    const std::size_t offset = static_cast<std::size_t>(row) * seq;
    const unsigned usedPacks = t / n + 1;
    float dot = 0.0F;
    for (unsigned j = lane; j < usedPacks; j += kWarp) {
        const Pack<T> p = loadPack(probs + offset + j * n);
        const Pack<T> dp = loadPack(dprobs + offset + j * n);
#pragma unroll
        for (unsigned u = 0; u < n; ++u)
            if (j * n + u <= t)
                dot += toFloat(p.values[u]) * toFloat(dp.values[u]);
    }
    dot = warpSum(dot);
    for (unsigned j = lane; j < seq / n; j += kWarp) {
        Pack<T> out;
        if (j < usedPacks) {
            const Pack<T> p = loadPack(probs + offset + j * n);
            const Pack<T> dp = loadPack(dprobs + offset + j * n);
#pragma unroll
            for (unsigned u = 0; u < n; ++u)
                out.values[u] = fromFloat<T>(
                    j * n + u <= t ? toFloat(p.values[u]) * (toFloat(dp.values[u]) - dot) : 0.0F);
        } else {
#pragma unroll
            for (unsigned u = 0; u < n; ++u)
                out.values[u] = fromFloat<T>(0.0F);
        }
        storePack(dscores + offset + j * n, out);
    }
}

PackedDims packedDims(const AttentionDims& dims)
{
    return {static_cast<unsigned>(dims.seq), static_cast<unsigned>(dims.heads),
            static_cast<unsigned>(dims.headSize)};
}

template <typename Kernel, typename... Args>
void launchPacked(Kernel kernel, std::size_t packs, cudaStream_t stream, Args... args)
{
    kernel<<<packBlocks(packs), kElementwiseThreads, 0, stream>>>(args...);
    checkLaunch();
}

}  // namespace

template <typename T>
void splitHeads(T* q, T* k, T* v, const T* qkv, const AttentionDims& dims, cudaStream_t stream)
{
    const std::size_t count = 3 * headElements(dims);
    if (count > 0 && packsFit<T>(dims.headSize, count, q, k, v, qkv)) {
        launchPacked(packedHeadsKernel<T, false>, count / Pack<T>::kSize, stream,
                     const_cast<T*>(qkv), q, k, v, static_cast<unsigned>(count / Pack<T>::kSize),
                     packedDims(dims));
        return;
    }
    launchElementwise(splitHeadsKernel<T>, 3 * headElements(dims), stream, q, k, v, qkv, dims);
}

template <typename T>
void mergeHeadGradients(T* dqkv, const T* dq, const T* dk, const T* dv, const AttentionDims& dims,
                        cudaStream_t stream)
{
    const std::size_t count = 3 * headElements(dims);
    if (count > 0 && packsFit<T>(dims.headSize, count, dqkv, dq, dk, dv)) {
        launchPacked(packedHeadsKernel<T, true>, count / Pack<T>::kSize, stream, dqkv,
                     const_cast<T*>(dq), const_cast<T*>(dk), const_cast<T*>(dv),
                     static_cast<unsigned>(count / Pack<T>::kSize), packedDims(dims));
        return;
    }
    launchElementwise(mergeHeadGradientsKernel<T>, 3 * headElements(dims), stream, dqkv, dq, dk, dv,
                      dims);
}

template <typename T>
void concatHeads(T* out, const T* y, const AttentionDims& dims, cudaStream_t stream)
{
    const std::size_t count = headElements(dims);
    if (count > 0 && packsFit<T>(dims.headSize, count, out, y)) {
        launchPacked(packedConcatKernel<T, false>, count / Pack<T>::kSize, stream, out,
                     const_cast<T*>(y), static_cast<unsigned>(count / Pack<T>::kSize),
                     packedDims(dims));
        return;
    }
    launchElementwise(concatHeadsKernel<T>, headElements(dims), stream, out, y, dims, false);
}

template <typename T>
void splitHeadOutputs(T* y, const T* out, const AttentionDims& dims, cudaStream_t stream)
{
    const std::size_t count = headElements(dims);
    if (count > 0 && packsFit<T>(dims.headSize, count, out, y)) {
        launchPacked(packedConcatKernel<T, true>, count / Pack<T>::kSize, stream,
                     const_cast<T*>(out), y, static_cast<unsigned>(count / Pack<T>::kSize),
                     packedDims(dims));
        return;
    }
    launchElementwise(concatHeadsKernel<T>, headElements(dims), stream, y, out, dims, true);
}

template <typename T>
void causalSoftmaxForward(T* probs, const T* scores, std::size_t matrices, std::size_t seq,
                          cudaStream_t stream)
{
    const std::size_t rows = matrices * seq;
    if (rows > 0 && packsFit<T>(seq, rows, probs, scores)) {
        launchPerRow(packedCausalSoftmaxForwardKernel<T>, rows, stream, probs, scores,
                     static_cast<unsigned>(rows), static_cast<unsigned>(seq));
        return;
    }
    launchPerRow(causalSoftmaxForwardKernel<T>, rows, stream, probs, scores, rows, seq);
}

template <typename T>
void causalSoftmaxBackward(T* dscores, const T* dprobs, const T* probs, std::size_t matrices,
                           std::size_t seq, cudaStream_t stream)
{
    const std::size_t rows = matrices * seq;
    if (rows > 0 && packsFit<T>(seq, rows, dscores, dprobs, probs)) {
        launchPerRow(packedCausalSoftmaxBackwardKernel<T>, rows, stream, dscores, dprobs, probs,
                     static_cast<unsigned>(rows), static_cast<unsigned>(seq));
        return;
    }
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
