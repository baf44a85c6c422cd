// How the kernel files launch their kernels and how a thread finds its work: grid-stride loops
// over elements, one warp per row, and the check after every launch (the first error wins).
#pragma once

#include "device_math.cuh"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/plan.h"

#include <cstddef>
#include <cstdint>

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

// True when 128-bit accesses may be used: every pointer 16-byte aligned, `multiple` (a row length
// or head size) a whole number of packs, and `count` elements small enough for 32-bit indices.
template <typename T, typename... Pointers>
bool packsFit(std::size_t multiple, std::size_t count, const Pointers*... pointers)
{
    constexpr std::size_t pack = 16 / sizeof(T);
    const bool aligned = ((reinterpret_cast<std::uintptr_t>(pointers) % 16 == 0) && ...);
    return aligned && multiple % pack == 0 && count < (std::size_t{1} << 31U);
}

// A 32-bit grid-stride loop over `count` items with the usual block size.
inline unsigned packBlocks(std::size_t count)
{
    return elementwiseBlocks(count);
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
