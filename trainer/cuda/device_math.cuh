// Device helpers the kernel files share: conversions between the activation type and float, and
// warp reductions. The reductions use a butterfly (xor shuffles), so every lane ends with the
// same bits and the order of additions is fixed: deterministic.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <type_traits>

namespace sealtrain::trainer::cuda::kernels {

__device__ __forceinline__ float toFloat(float x)
{
    return x;
}
__device__ __forceinline__ float toFloat(__nv_bfloat16 x)
{
    return __bfloat162float(x);
}

template <typename T>
__device__ __forceinline__ T fromFloat(float x)
{
    if constexpr (std::is_same_v<T, float>)
        return x;
    else
        return __float2bfloat16_rn(x);
}

// x rounded to T and back: the value a T buffer would hold.
template <typename T>
__device__ __forceinline__ float roundTo(float x)
{
    return toFloat(fromFloat<T>(x));
}

__device__ __forceinline__ float warpSum(float value)
{
    for (int offset = 16; offset > 0; offset /= 2)
        value += __shfl_xor_sync(0xffffffffU, value, offset);
    return value;
}

__device__ __forceinline__ float warpMax(float value)
{
    for (int offset = 16; offset > 0; offset /= 2)
        value = fmaxf(value, __shfl_xor_sync(0xffffffffU, value, offset));
    return value;
}

inline constexpr unsigned kWarp = 32;

// Sixteen bytes of T, moved by one 128-bit load or store: 8 bf16 or 4 float. The address must be
// 16-byte aligned (packsFit on the host says when every pointer and row length allows it).
template <typename T>
struct alignas(16) Pack {
    static constexpr unsigned kSize = 16 / sizeof(T);
    T values[kSize];
};

template <typename T>
__device__ __forceinline__ Pack<T> loadPack(const T* address)
{
    const int4 raw = *reinterpret_cast<const int4*>(address);
    Pack<T> pack;
    static_assert(sizeof(pack) == sizeof(raw));
    __builtin_memcpy(&pack, &raw, sizeof(raw));
    return pack;
}

template <typename T>
__device__ __forceinline__ void storePack(T* address, const Pack<T>& pack)
{
    int4 raw;
    __builtin_memcpy(&raw, &pack, sizeof(raw));
    *reinterpret_cast<int4*>(address) = raw;
}

}  // namespace sealtrain::trainer::cuda::kernels

// Explicit instantiation of a launcher template for both activation types.
#define SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(MACRO)                                                  \
    MACRO(float)                                                                                   \
    MACRO(__nv_bfloat16)
