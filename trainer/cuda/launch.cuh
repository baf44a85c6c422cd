// How the kernel files launch their kernels and how a thread finds its work: grid-stride loops
// over elements, one warp per row, and the check after every launch (the first error wins).
#pragma once

#include "device_math.cuh"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/plan.h"

#include <cstddef>

namespace sealtrain::trainer::cuda::kernels {

inline constexpr unsigned kRowsPerBlock = 8;  // one warp per row, eight warps per block

// A grid-stride loop: for (i = firstElement(); i < count; i += elementStride()).
__device__ __forceinline__ std::size_t firstElement()
{
    return blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
}
__device__ __forceinline__ std::size_t elementStride()
{
    return static_cast<std::size_t>(gridDim.x) * blockDim.x;
}

// The row a warp of a per-row kernel works on, and the thread's lane in that warp.
__device__ __forceinline__ std::size_t warpRow()
{
    return blockIdx.x * static_cast<std::size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
}
__device__ __forceinline__ unsigned warpLane()
{
    return threadIdx.x % kWarp;
}

inline void checkLaunch()
{
    SEALTRAIN_CUDA_CHECK(cudaGetLastError());
}

// Runs `kernel` over `count` elements (a grid-stride loop) on `stream`; nothing when count is 0.
template <typename... Params, typename... Args>
void launchElementwise(void (*kernel)(Params...), std::size_t count, cudaStream_t stream,
                       Args... args)
{
    if (count == 0)
        return;
    kernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(args...);
    checkLaunch();
}

// Runs `kernel` with one warp per row of `rows` on `stream`; nothing when rows is 0.
template <typename... Params, typename... Args>
void launchPerRow(void (*kernel)(Params...), std::size_t rows, cudaStream_t stream, Args... args)
{
    if (rows == 0)
        return;
    const auto blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
    kernel<<<blocks, kRowsPerBlock * kWarp, 0, stream>>>(args...);
    checkLaunch();
}

}  // namespace sealtrain::trainer::cuda::kernels
