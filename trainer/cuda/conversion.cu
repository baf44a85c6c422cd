// Element type conversions between fp32 and the activation type: master weights (N) fp32 -> the
// weights the GEMMs read (N), rounded to nearest, and any buffer (N) back to fp32, exactly.
// Device code, then the launchers.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

template <typename T>
__global__ void convertFromFloatKernel(T* out, const float* in, std::size_t count)
{
    for (std::size_t i = firstElement(); i < count; i += elementStride())
        out[i] = fromFloat<T>(in[i]);
}

template <typename T>
__global__ void convertToFloatKernel(float* out, const T* in, std::size_t count)
{
    for (std::size_t i = firstElement(); i < count; i += elementStride())
        out[i] = toFloat(in[i]);
}

}  // namespace

template <typename T>
void convertFromFloat(T* out, const float* in, std::size_t count, cudaStream_t stream)
{
    launchElementwise(convertFromFloatKernel<T>, count, stream, out, in, count);
}

template <typename T>
void convertToFloat(float* out, const T* in, std::size_t count, cudaStream_t stream)
{
    launchElementwise(convertToFloatKernel<T>, count, stream, out, in, count);
}

#define SEALTRAIN_INSTANTIATE_CONVERSION(T)                                                        \
    template void convertFromFloat<T>(T*, const float*, std::size_t, cudaStream_t);                \
    template void convertToFloat<T>(float*, const T*, std::size_t, cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_CONVERSION)

}  // namespace sealtrain::trainer::cuda::kernels
