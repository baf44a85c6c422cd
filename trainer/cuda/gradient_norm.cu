// The sum of squares behind the global gradient norm: gradients (N) in the activation type ->
// Σ g² (one double), accumulated in double over a fixed grid (plan.h's sumOfSquaresBlocks) and
// added in a fixed order, so equal inputs give equal bits. Device code, then the launcher.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

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

}  // namespace

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

#define SEALTRAIN_INSTANTIATE_GRADIENT_NORM(T)                                                     \
    template void sumOfSquares<T>(double*, double*, const T*, std::size_t, cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_GRADIENT_NORM)

}  // namespace sealtrain::trainer::cuda::kernels
