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

template <typename T>
__global__ void adamwKernel(float* parameters, T* parametersLow, float* m, float* v,
                            const T* gradients, std::size_t count, AdamWScalars s)
{
    for (std::size_t i = firstElement(); i < count; i += elementStride()) {
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

}  // namespace

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
                           cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_ADAMW)

}  // namespace sealtrain::trainer::cuda::kernels
