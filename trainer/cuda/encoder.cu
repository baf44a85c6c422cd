// The embedding: tokens (B,T) -> wte (Vp,C) rows + wpe (T,C) rows -> encoded (B,T,C), and its
// backward pass, dencoded (B,T,C) -> dwpe (T,C) and dwte (Vp,C), summed in a fixed order without
// atomics (the token buckets of plan.h's bucketTokens). Device code, then the launchers.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

template <typename T>
__global__ void encoderForwardKernel(T* out, const std::int32_t* tokens, const T* wte, const T* wpe,
                                     std::size_t seq, std::size_t width, std::size_t count)
{
    for (std::size_t i = firstElement(); i < count; i += elementStride()) {
        const std::size_t row = i / width;
        const std::size_t c = i % width;
        const auto token = static_cast<std::size_t>(tokens[row]);
        const std::size_t t = row % seq;
        out[i] = fromFloat<T>(toFloat(wte[token * width + c]) + toFloat(wpe[t * width + c]));
    }
}

template <typename T>
__global__ void encoderBackwardPositionsKernel(T* dwpe, const T* dout, std::size_t batch,
                                               std::size_t seq, std::size_t width)
{
    const std::size_t count = seq * width;
    for (std::size_t i = firstElement(); i < count; i += elementStride()) {
        float sum = 0.0F;
        for (std::size_t b = 0; b < batch; ++b)
            sum += toFloat(dout[b * count + i]);
        dwpe[i] = fromFloat<T>(toFloat(dwpe[i]) + sum);
    }
}

template <typename T>
__global__ void encoderBackwardTokensKernel(T* dwte, const T* dout, const std::int32_t* tokens,
                                            const std::int32_t* starts,
                                            const std::int32_t* positions, std::size_t width)
{
    const std::size_t bucket = blockIdx.x;
    const auto token = static_cast<std::size_t>(tokens[bucket]);
    const std::int32_t begin = starts[bucket];
    const std::int32_t end = starts[bucket + 1];
    for (std::size_t c = threadIdx.x; c < width; c += blockDim.x) {
        float sum = 0.0F;
        for (std::int32_t p = begin; p < end; ++p)
            sum += toFloat(dout[static_cast<std::size_t>(positions[p]) * width + c]);
        dwte[token * width + c] = fromFloat<T>(toFloat(dwte[token * width + c]) + sum);
    }
}

}  // namespace

template <typename T>
void encoderForward(T* out, const std::int32_t* tokens, const T* wte, const T* wpe,
                    std::size_t batch, std::size_t seq, std::size_t width, cudaStream_t stream)
{
    const std::size_t count = batch * seq * width;
    launchElementwise(encoderForwardKernel<T>, count, stream, out, tokens, wte, wpe, seq, width,
                      count);
}

template <typename T>
void encoderBackwardPositions(T* dwpe, const T* dout, std::size_t batch, std::size_t seq,
                              std::size_t width, cudaStream_t stream)
{
    launchElementwise(encoderBackwardPositionsKernel<T>, seq * width, stream, dwpe, dout, batch,
                      seq, width);
}

template <typename T>
void encoderBackwardTokens(T* dwte, const T* dout, const std::int32_t* tokens,
                           const std::int32_t* starts, const std::int32_t* positions,
                           std::size_t tokenCount, std::size_t width, cudaStream_t stream)
{
    if (tokenCount == 0)
        return;
    encoderBackwardTokensKernel<<<static_cast<unsigned>(tokenCount), kElementwiseThreads, 0,
                                  stream>>>(dwte, dout, tokens, starts, positions, width);
    checkLaunch();
}

#define SEALTRAIN_INSTANTIATE_ENCODER(T)                                                           \
    template void encoderForward<T>(T*, const std::int32_t*, const T*, const T*, std::size_t,      \
                                    std::size_t, std::size_t, cudaStream_t);                       \
    template void encoderBackwardPositions<T>(T*, const T*, std::size_t, std::size_t, std::size_t, \
                                              cudaStream_t);                                       \
    template void encoderBackwardTokens<T>(T*, const T*, const std::int32_t*, const std::int32_t*, \
                                           const std::int32_t*, std::size_t, std::size_t,          \
                                           cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_ENCODER)

}  // namespace sealtrain::trainer::cuda::kernels
