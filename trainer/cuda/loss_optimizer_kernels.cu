// The classifier's fused cross-entropy (forward and backward without a probabilities tensor),
// AdamW over the flat fp32 master weights, the deterministic sum of squares behind the global
// gradient norm, and type conversions. Device code, then launchers, then instantiations.
#include "device_math.cuh"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/kernels.h"
#include "sealtrain/trainer/cuda/plan.h"

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

template <typename T>
__global__ void crossEntropyForwardKernel(float* losses, float* logSumExp, const T* logits,
                                          const std::int32_t* targets, CrossEntropyDims dims)
{
    __shared__ SoftmaxState warpStates[kRowWarps];
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

template <typename T>
__global__ void adamwKernel(float* parameters, T* parametersLow, float* m, float* v,
                            const T* gradients, std::size_t count, AdamWScalars s)
{
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float g = toFloat(gradients[i]) * s.gradientScale;
        const float mi = s.beta1 * m[i] + s.oneMinusBeta1 * g;
        const float vi = s.beta2 * v[i] + s.oneMinusBeta2 * g * g;
        m[i] = mi;
        v[i] = vi;
        const float mHat = mi / s.correction1;
        const float vHat = vi / s.correction2;
        float p = parameters[i];
        p -= s.learningRate * (mHat / (sqrtf(vHat) + s.epsilon) + s.weightDecay * p);
        parameters[i] = p;
        if (parametersLow != nullptr)
            parametersLow[i] = fromFloat<T>(p);
    }
}

__device__ double blockSumDouble(double value)
{
    __shared__ double shared[kSumOfSquaresThreads];
    shared[threadIdx.x] = value;
    __syncthreads();
    for (unsigned stride = kSumOfSquaresThreads / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride)
            shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    return shared[0];
}

template <typename T>
__global__ void partialSumsOfSquaresKernel(double* partials, const T* x, std::size_t count)
{
    double sum = 0.0;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kSumOfSquaresThreads) + threadIdx.x;
         i < count; i += static_cast<std::size_t>(gridDim.x) * kSumOfSquaresThreads) {
        const double value = toFloat(x[i]);
        sum += value * value;
    }
    const double total = blockSumDouble(sum);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = total;
}

__global__ void finishSumOfSquaresKernel(double* result, const double* partials, unsigned count)
{
    double sum = 0.0;
    for (unsigned i = threadIdx.x; i < count; i += kSumOfSquaresThreads)
        sum += partials[i];
    const double total = blockSumDouble(sum);
    if (threadIdx.x == 0)
        *result = total;
}

template <typename T>
__global__ void convertFromFloatKernel(T* out, const float* in, std::size_t count)
{
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        out[i] = fromFloat<T>(in[i]);
}

template <typename T>
__global__ void convertToFloatKernel(float* out, const T* in, std::size_t count)
{
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        out[i] = toFloat(in[i]);
}

void checkLaunch()
{
    SEALTRAIN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

template <typename T>
void crossEntropyForward(float* losses, float* logSumExp, const T* logits,
                         const std::int32_t* targets, const CrossEntropyDims& dims,
                         cudaStream_t stream)
{
    if (dims.rows == 0)
        return;
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
    crossEntropyBackwardKernel<<<static_cast<unsigned>(dims.rows), kRowThreads, 0, stream>>>(
        dlogits, logits, logSumExp, targets, dloss, dims);
    checkLaunch();
}

template <typename T>
void adamw(float* parameters, T* parametersLow, float* m, float* v, const T* gradients,
           std::size_t count, const AdamWScalars& scalars, cudaStream_t stream)
{
    if (count == 0)
        return;
    adamwKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(
        parameters, parametersLow, m, v, gradients, count, scalars);
    checkLaunch();
}

template <typename T>
void sumOfSquares(double* result, double* partials, const T* x, std::size_t count,
                  cudaStream_t stream)
{
    const unsigned blocks = sumOfSquaresBlocks(count);
    partialSumsOfSquaresKernel<<<blocks, kSumOfSquaresThreads, 0, stream>>>(partials, x, count);
    checkLaunch();
    finishSumOfSquaresKernel<<<1, kSumOfSquaresThreads, 0, stream>>>(result, partials, blocks);
    checkLaunch();
}

template <typename T>
void convertFromFloat(T* out, const float* in, std::size_t count, cudaStream_t stream)
{
    if (count == 0)
        return;
    convertFromFloatKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(out, in,
                                                                                         count);
    checkLaunch();
}

template <typename T>
void convertToFloat(float* out, const T* in, std::size_t count, cudaStream_t stream)
{
    if (count == 0)
        return;
    convertToFloatKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(out, in,
                                                                                       count);
    checkLaunch();
}

#define SEALTRAIN_INSTANTIATE_LOSS_KERNELS(T)                                                      \
    template void crossEntropyForward<T>(float*, float*, const T*, const std::int32_t*,            \
                                         const CrossEntropyDims&, cudaStream_t);                   \
    template void crossEntropyBackward<T>(T*, const T*, const float*, const std::int32_t*, float,  \
                                          const CrossEntropyDims&, cudaStream_t);                  \
    template void adamw<T>(float*, T*, float*, float*, const T*, std::size_t, const AdamWScalars&, \
                           cudaStream_t);                                                          \
    template void sumOfSquares<T>(double*, double*, const T*, std::size_t, cudaStream_t);          \
    template void convertFromFloat<T>(T*, const float*, std::size_t, cudaStream_t);                \
    template void convertToFloat<T>(float*, const T*, std::size_t, cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_LOSS_KERNELS)

}  // namespace sealtrain::trainer::cuda::kernels
