// AdamW on the flat buffers, PyTorch's update order (optimizer.h), fused with the gradient's
// clipping factor and the bf16 copy of the weights: master (N) fp32, m (N), v (N), grad (N) in
// the activation type -> master, m, v updated and the low-precision weights (N) rewritten.
// Device code, then the launcher and the host-side scalars of a step.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"
#include "sealtrain/trainer/optimizer.h"

#include <cmath>

namespace sealtrain::trainer::cuda::kernels {
namespace {

// Element i's update, PyTorch's order of operations.
template <typename T>
__device__ __forceinline__ void update(std::size_t i, float* parameters, T* parametersLow, float* m,
                                       float* v, const T* gradients, const AdamWScalars& s,
                                       float gradientScale, float weightDecay)
{
    const float g = toFloat(gradients[i]) * gradientScale;
    const float mi = s.beta1 * m[i] + s.oneMinusBeta1 * g;
    const float vi = s.beta2 * v[i] + s.oneMinusBeta2 * g * g;
    m[i] = mi;
    v[i] = vi;
    const float mHat = mi / s.correction1;
    const float vHat = vi / s.correction2;
    float p = parameters[i];
    p -= s.learningRate * (mHat / (sqrtf(vHat) + s.epsilon) + weightDecay * p);
    parameters[i] = p;
    if (parametersLow != nullptr)
        parametersLow[i] = fromFloat<T>(p);
}

template <typename T>
__global__ void adamwKernel(float* parameters, T* parametersLow, float* m, float* v,
                            const T* gradients, std::size_t count, AdamWScalars s)
{
    for (std::size_t i = firstElement(); i < count; i += elementStride())
        update(i, parameters, parametersLow, m, v, gradients, s, s.gradientScale, s.weightDecay);
}

// One block per chunk.
template <typename T>
__global__ void adamwChunksKernel(float* parameters, T* parametersLow, float* m, float* v,
                                  const T* gradients, const AdamWChunk* chunks, AdamWScalars s,
                                  const float* gradientScale)
{
    const AdamWChunk chunk = chunks[blockIdx.x];
    const float scale = *gradientScale;
    const float weightDecay = chunk.weightDecay != 0 ? s.weightDecay : 0.0F;
    for (unsigned j = threadIdx.x; j < chunk.size; j += blockDim.x) {
        update(chunk.offset + j, parameters, parametersLow, m, v, gradients, s, scale, weightDecay);
    }
}

__global__ void clipScaleKernel(float* scale, const double* sumSquares, double maxNorm)
{
    float factor = 1.0F;
    if (maxNorm > 0.0) {
        const double coefficient = maxNorm / (sqrt(*sumSquares) + 1e-6);
        if (coefficient < 1.0)
            factor = static_cast<float>(coefficient);
    }
    *scale = factor;
}

}  // namespace

template <typename T>
void adamwChunks(float* parameters, T* parametersLow, float* m, float* v, const T* gradients,
                 const AdamWChunk* chunks, std::size_t chunkCount, const AdamWScalars& scalars,
                 const float* gradientScale, cudaStream_t stream)
{
    if (chunkCount == 0)
        return;
    adamwChunksKernel<<<static_cast<unsigned>(chunkCount), kElementwiseThreads, 0, stream>>>(
        parameters, parametersLow, m, v, gradients, chunks, scalars, gradientScale);
    checkLaunch();
}

void clipScale(float* scale, const double* sumSquares, double maxNorm, cudaStream_t stream)
{
    clipScaleKernel<<<1, 1, 0, stream>>>(scale, sumSquares, maxNorm);
    checkLaunch();
}

template <typename T>
void adamw(float* parameters, T* parametersLow, float* m, float* v, const T* gradients,
           std::size_t count, const AdamWScalars& scalars, cudaStream_t stream)
{
    launchElementwise(adamwKernel<T>, count, stream, parameters, parametersLow, m, v, gradients,
                      count, scalars);
}

AdamWScalars adamwScalars(const AdamWParams& params, std::uint64_t step, double learningRate)
{
    const auto t = static_cast<double>(step);
    AdamWScalars scalars;
    scalars.beta1 = static_cast<float>(params.beta1);
    scalars.beta2 = static_cast<float>(params.beta2);
    scalars.oneMinusBeta1 = static_cast<float>(1.0 - params.beta1);
    scalars.oneMinusBeta2 = static_cast<float>(1.0 - params.beta2);
    scalars.correction1 = static_cast<float>(1.0 - std::pow(params.beta1, t));
    scalars.correction2 = static_cast<float>(1.0 - std::pow(params.beta2, t));
    scalars.epsilon = static_cast<float>(params.epsilon);
    scalars.learningRate = static_cast<float>(learningRate);
    return scalars;
}

#define SEALTRAIN_INSTANTIATE_ADAMW(T)                                                             \
    template void adamw<T>(float*, T*, float*, float*, const T*, std::size_t, const AdamWScalars&, \
                           cudaStream_t);                                                          \
    template void adamwChunks<T>(float*, T*, float*, float*, const T*, const AdamWChunk*,          \
                                 std::size_t, const AdamWScalars&, const float*, cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_ADAMW)

}  // namespace sealtrain::trainer::cuda::kernels
