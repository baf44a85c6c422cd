// Sum of squares: device code, then its launcher.
//
// Pass 1: a fixed grid of blocks; each thread strides over the input, each block reduces its
// threads' partial sums in shared memory and writes one partial per block. Pass 2: one block
// reduces the partials in a fixed order and adds the total to the accumulator. No atomics on
// floats, so the result is bit-identical run to run.
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/sum_of_squares.h"

namespace sealtrain::trainer::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 1024;

__device__ float blockSum(float value)
{
    __shared__ float shared[kThreads];
    shared[threadIdx.x] = value;
    __syncthreads();
    for (int stride = kThreads / 2; stride > 0; stride /= 2) {
        if (static_cast<int>(threadIdx.x) < stride)
            shared[threadIdx.x] += shared[threadIdx.x + stride];
        __syncthreads();
    }
    return shared[0];
}

__global__ void partialSumsOfSquares(const float* x, std::size_t count, float* partials)
{
    float sum = 0.0f;
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * kThreads + threadIdx.x; i < count;
         i += stride) {
        sum += x[i] * x[i];
    }
    const float total = blockSum(sum);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = total;
}

__global__ void addPartials(const float* partials, int count, float* accumulator)
{
    float sum = 0.0f;
    for (int i = static_cast<int>(threadIdx.x); i < count; i += kThreads)
        sum += partials[i];
    const float total = blockSum(sum);
    if (threadIdx.x == 0)
        *accumulator += total;
}

}  // namespace

void launchSumOfSquares(const float* x, std::size_t count, float* accumulator, cudaStream_t stream)
{
    const std::size_t wanted = (count + kThreads - 1) / kThreads;
    const int blocks =
        static_cast<int>(wanted < kMaxBlocks ? (wanted == 0 ? 1 : wanted) : kMaxBlocks);
    float* partials = nullptr;
    SEALTRAIN_CUDA_CHECK(
        cudaMallocAsync(&partials, sizeof(float) * static_cast<std::size_t>(blocks), stream));
    partialSumsOfSquares<<<blocks, kThreads, 0, stream>>>(x, count, partials);
    SEALTRAIN_CUDA_CHECK(cudaGetLastError());
    addPartials<<<1, kThreads, 0, stream>>>(partials, blocks, accumulator);
    SEALTRAIN_CUDA_CHECK(cudaGetLastError());
    SEALTRAIN_CUDA_CHECK(cudaFreeAsync(partials, stream));
}

}  // namespace sealtrain::trainer::cuda
