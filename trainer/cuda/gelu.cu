// GELU with GPT-2's tanh approximation, the MLP's activation where cuBLASLt's GELU epilogues do
// not run: fc (B,T,4C) -> fcGelu (B,T,4C), and backward dfcGelu (B,T,4C) -> dfc (B,T,4C), written
// rather than added. Device code, then the launchers.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

constexpr float kGeluScale = 0.7978845608028654F;  // sqrt(2/π)
constexpr float kGeluCubic = 0.044715F;

template <typename T>
__global__ void geluForwardKernel(T* out, const T* in, std::size_t count)
{
    for (std::size_t i = firstElement(); i < count; i += elementStride()) {
        const float x = toFloat(in[i]);
        const float inner = kGeluScale * (x + kGeluCubic * x * x * x);
        out[i] = fromFloat<T>(0.5F * x * (1.0F + tanhf(inner)));
    }
}

template <typename T>
__global__ void geluBackwardKernel(T* din, const T* dout, const T* in, std::size_t count)
{
    for (std::size_t i = firstElement(); i < count; i += elementStride()) {
        const float x = toFloat(in[i]);
        const float inner = kGeluScale * (x + kGeluCubic * x * x * x);
        const float t = tanhf(inner);
        const float derivative =
            0.5F * (1.0F + t)
            + 0.5F * x * (1.0F - t * t) * kGeluScale * (1.0F + 3.0F * kGeluCubic * x * x);
        din[i] = fromFloat<T>(toFloat(dout[i]) * derivative);
    }
}

}  // namespace

template <typename T>
void geluForward(T* out, const T* in, std::size_t count, cudaStream_t stream)
{
    launchElementwise(geluForwardKernel<T>, count, stream, out, in, count);
}

template <typename T>
void geluBackward(T* din, const T* dout, const T* in, std::size_t count, cudaStream_t stream)
{
    launchElementwise(geluBackwardKernel<T>, count, stream, din, dout, in, count);
}

#define SEALTRAIN_INSTANTIATE_GELU(T)                                                              \
    template void geluForward<T>(T*, const T*, std::size_t, cudaStream_t);                         \
    template void geluBackward<T>(T*, const T*, const T*, std::size_t, cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_GELU)

}  // namespace sealtrain::trainer::cuda::kernels
