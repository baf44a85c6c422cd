// The classifier's loss, fused so that the probabilities never exist as a tensor: logits
// (B,T,Vp) + targets (B,T) -> losses (B,T) and logSumExp (B,T) over the first V logits; backward:
// dlogits (B,T,Vp) = dloss·(softmax − onehot(target)), written over the logits in place. One
// block per row. Device code, then the launchers.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

constexpr unsigned kRowThreads = 512;
constexpr unsigned kRowWarps = kRowThreads / kWarp;

// A running (max, Σ exp(x − max)) pair; combining two is exact up to rounding and commutative,
// so the butterfly gives every lane the same bits.
struct SoftmaxState {
    float largest;
    float sum;
};

__device__ __forceinline__ SoftmaxState combine(SoftmaxState a, SoftmaxState b)
{
    const float largest = fmaxf(a.largest, b.largest);
    const float left = a.sum == 0.0F ? 0.0F : a.sum * expf(a.largest - largest);
    const float right = b.sum == 0.0F ? 0.0F : b.sum * expf(b.largest - largest);
    return {largest, left + right};
}

// The block's states combined (butterfly in each warp, then the warps in order), and the row's
// logsumexp and loss written by thread 0.
template <typename T>
__device__ __forceinline__ void finishRow(SoftmaxState state, float* losses, float* logSumExp,
                                          const T* z, const std::int32_t* targets, std::size_t row)
{
    __shared__ SoftmaxState warpStates[kRowWarps];
    for (int offset = 16; offset > 0; offset /= 2) {
        const SoftmaxState other{__shfl_xor_sync(0xffffffffU, state.largest, offset),
                                 __shfl_xor_sync(0xffffffffU, state.sum, offset)};
        state = combine(state, other);
    }
    if (threadIdx.x % kWarp == 0)
        warpStates[threadIdx.x / kWarp] = state;
    __syncthreads();
    if (threadIdx.x == 0) {
        SoftmaxState total = warpStates[0];
        for (unsigned w = 1; w < kRowWarps; ++w)
            total = combine(total, warpStates[w]);
        const float lse = logf(total.sum) + total.largest;
        logSumExp[row] = lse;
        const std::int32_t target = targets[row];
        losses[row] = target < 0 ? 0.0F : lse - toFloat(z[static_cast<std::size_t>(target)]);
    }
}
template <typename T>
__global__ void crossEntropyForwardKernel(float* losses, float* logSumExp, const T* logits,
                                          const std::int32_t* targets, CrossEntropyDims dims)
{
    const std::size_t row = blockIdx.x;
    const T* z = logits + row * dims.paddedVocab;
    SoftmaxState state{-INFINITY, 0.0F};
    for (std::size_t i = threadIdx.x; i < dims.vocab; i += kRowThreads) {
        const float x = toFloat(z[i]);
        if (x > state.largest) {
            state.sum = state.sum * expf(state.largest - x) + 1.0F;
            state.largest = x;
        } else {
            state.sum += expf(x - state.largest);
        }
    }
    finishRow(state, losses, logSumExp, z, targets, row);
}

template <typename T>
__global__ void crossEntropyBackwardKernel(T* dlogits, const T* logits, const float* logSumExp,
                                           const std::int32_t* targets, float dloss,
                                           CrossEntropyDims dims)
{
    const std::size_t row = blockIdx.x;
    const std::int32_t target = targets[row];
    const float lse = logSumExp[row];
    const T* z = logits + row * dims.paddedVocab;
    T* dz = dlogits + row * dims.paddedVocab;
    for (std::size_t i = threadIdx.x; i < dims.paddedVocab; i += kRowThreads) {
        float gradient = 0.0F;
        if (target >= 0 && i < dims.vocab) {
            const float p = expf(toFloat(z[i]) - lse);
            gradient = dloss * (p - (i == static_cast<std::size_t>(target) ? 1.0F : 0.0F));
        }
        dz[i] = fromFloat<T>(gradient);
    }
}

// The same two kernels reading and writing 16-byte packs (paddedVocab a whole number of packs,
// aligned buffers): a row of GPT-2's 50304 logits is about 12 packs per thread. They use the
// fast exponential (__expf, a few ulp), since at 824 M logits a step the exact one bounds them.
template <typename T>
__global__ void packedCrossEntropyForwardKernel(float* losses, float* logSumExp, const T* logits,
                                                const std::int32_t* targets, CrossEntropyDims dims)
{
    constexpr unsigned n = Pack<T>::kSize;
    const std::size_t row = blockIdx.x;
    const T* z = logits + row * dims.paddedVocab;
    const auto vocab = static_cast<unsigned>(dims.vocab);
    const auto packs = static_cast<unsigned>((dims.vocab + n - 1) / n);
    SoftmaxState state{-INFINITY, 0.0F};
    for (unsigned j = threadIdx.x; j < packs; j += kRowThreads) {
        const Pack<T> in = loadPack(z + j * n);
#pragma unroll
        for (unsigned u = 0; u < n; ++u) {
            if (j * n + u >= vocab)
                break;
            const float x = toFloat(in.values[u]);
            if (x > state.largest) {
                state.sum = state.sum * __expf(state.largest - x) + 1.0F;
                state.largest = x;
            } else {
                state.sum += __expf(x - state.largest);
            }
        }
    }
    finishRow(state, losses, logSumExp, z, targets, row);
}

template <typename T>
__global__ void
packedCrossEntropyBackwardKernel(T* dlogits, const T* logits, const float* logSumExp,
                                 const std::int32_t* targets, float dloss, CrossEntropyDims dims)
{
    constexpr unsigned n = Pack<T>::kSize;
    const std::size_t row = blockIdx.x;
    const std::int32_t target = targets[row];
    const float lse = logSumExp[row];
    const T* z = logits + row * dims.paddedVocab;
    T* dz = dlogits + row * dims.paddedVocab;
    const auto vocab = static_cast<unsigned>(dims.vocab);
    const auto packs = static_cast<unsigned>(dims.paddedVocab / n);
    for (unsigned j = threadIdx.x; j < packs; j += kRowThreads) {
        Pack<T> out;
        if (target < 0 || j * n >= vocab) {
#pragma unroll
            for (unsigned u = 0; u < n; ++u)
                out.values[u] = fromFloat<T>(0.0F);
        } else {
            const Pack<T> in = loadPack(z + j * n);
#pragma unroll
            for (unsigned u = 0; u < n; ++u) {
                const unsigned i = j * n + u;
                float gradient = 0.0F;
                if (i < vocab) {
                    const float p = __expf(toFloat(in.values[u]) - lse);
                    gradient = dloss * (p - (i == static_cast<unsigned>(target) ? 1.0F : 0.0F));
                }
                out.values[u] = fromFloat<T>(gradient);
            }
        }
        storePack(dz + j * n, out);
    }
}

}  // namespace

template <typename T>
void crossEntropyForward(float* losses, float* logSumExp, const T* logits,
                         const std::int32_t* targets, const CrossEntropyDims& dims,
                         cudaStream_t stream)
{
    if (dims.rows == 0)
        return;
    if (packsFit<T>(dims.paddedVocab, dims.paddedVocab, logits)) {
        packedCrossEntropyForwardKernel<<<static_cast<unsigned>(dims.rows), kRowThreads, 0,
                                          stream>>>(losses, logSumExp, logits, targets, dims);
        checkLaunch();
        return;
    }
    crossEntropyForwardKernel<<<static_cast<unsigned>(dims.rows), kRowThreads, 0, stream>>>(
        losses, logSumExp, logits, targets, dims);
    checkLaunch();
}

template <typename T>
void crossEntropyBackward(T* dlogits, const T* logits, const float* logSumExp,
                          const std::int32_t* targets, float dloss, const CrossEntropyDims& dims,
                          cudaStream_t stream)
{
    if (dims.rows == 0)
        return;
    if (packsFit<T>(dims.paddedVocab, dims.paddedVocab, dlogits, logits)) {
        packedCrossEntropyBackwardKernel<<<static_cast<unsigned>(dims.rows), kRowThreads, 0,
                                           stream>>>(dlogits, logits, logSumExp, targets, dloss,
                                                     dims);
        checkLaunch();
        return;
    }
    crossEntropyBackwardKernel<<<static_cast<unsigned>(dims.rows), kRowThreads, 0, stream>>>(
        dlogits, logits, logSumExp, targets, dloss, dims);
    checkLaunch();
}

#define SEALTRAIN_INSTANTIATE_CLASSIFIER(T)                                                        \
    template void crossEntropyForward<T>(float*, float*, const T*, const std::int32_t*,            \
                                         const CrossEntropyDims&, cudaStream_t);                   \
    template void crossEntropyBackward<T>(T*, const T*, const float*, const std::int32_t*, float,  \
                                          const CrossEntropyDims&, cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_CLASSIFIER)

}  // namespace sealtrain::trainer::cuda::kernels
