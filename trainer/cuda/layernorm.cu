// LayerNorm fused with the residual addition before it: a (B,T,C) + b (B,T,C) -> residual
// (B,T,C) -> out (B,T,C), keeping mean and rstd (B,T) for the backward pass; backward:
// dout (B,T,C) -> din (B,T,C) (added into the residual stream's gradient) and, through
// column_sums.cu, dweight (C) and dbias (C). One warp per row. Device code, then the launchers.
#include "launch.cuh"
#include "sealtrain/trainer/cpu_ops.h"
#include "sealtrain/trainer/cuda/kernels.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

constexpr float kLayerNormEpsilon = static_cast<float>(cpu::kLayerNormEpsilon);

template <typename T>
__global__ void residualLayerNormForwardKernel(T* residualOut, T* out, float* mean, float* rstd,
                                               const T* a, const T* b, const T* weight,
                                               const T* bias, std::size_t rows, std::size_t width)
{
    const std::size_t row = warpRow();
    const unsigned lane = warpLane();
    if (row >= rows)
        return;
    const T* x = a + row * width;
    const T* y = b == nullptr ? nullptr : b + row * width;
    T* r = residualOut == nullptr ? nullptr : residualOut + row * width;
    // The input the LayerNorm sees: a, or a + b rounded to T (what residualOut stores).
    auto input = [&](std::size_t i) {
        return y == nullptr ? toFloat(x[i]) : roundTo<T>(toFloat(x[i]) + toFloat(y[i]));
    };
    float sum = 0.0F;
    for (std::size_t i = lane; i < width; i += kWarp) {
        const float value = input(i);
        if (r != nullptr)
            r[i] = fromFloat<T>(value);
        sum += value;
    }
    const float m = warpSum(sum) / static_cast<float>(width);
    float squares = 0.0F;
    for (std::size_t i = lane; i < width; i += kWarp) {
        const float d = input(i) - m;
        squares += d * d;
    }
    const float s = 1.0F / sqrtf(warpSum(squares) / static_cast<float>(width) + kLayerNormEpsilon);
    T* o = out + row * width;
    for (std::size_t i = lane; i < width; i += kWarp)
        o[i] = fromFloat<T>((input(i) - m) * s * toFloat(weight[i]) + toFloat(bias[i]));
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
}

template <typename T>
__global__ void layerNormBackwardInputKernel(T* din, const T* dout, const T* in, const T* weight,
                                             const float* mean, const float* rstd, std::size_t rows,
                                             std::size_t width)
{
    const std::size_t row = warpRow();
    const unsigned lane = warpLane();
    if (row >= rows)
        return;
    const T* x = in + row * width;
    const T* dy = dout + row * width;
    const float m = mean[row];
    const float s = rstd[row];
    float sumDnorm = 0.0F;
    float sumDnormNorm = 0.0F;
    for (std::size_t i = lane; i < width; i += kWarp) {
        const float norm = (toFloat(x[i]) - m) * s;
        const float dnorm = toFloat(dy[i]) * toFloat(weight[i]);
        sumDnorm += dnorm;
        sumDnormNorm += dnorm * norm;
    }
    const float meanDnorm = warpSum(sumDnorm) / static_cast<float>(width);
    const float meanDnormNorm = warpSum(sumDnormNorm) / static_cast<float>(width);
    T* dx = din + row * width;
    for (std::size_t i = lane; i < width; i += kWarp) {
        const float norm = (toFloat(x[i]) - m) * s;
        const float dnorm = toFloat(dy[i]) * toFloat(weight[i]);
        dx[i] = fromFloat<T>(toFloat(dx[i]) + s * (dnorm - meanDnorm - norm * meanDnormNorm));
    }
}

// The same two kernels with the row in registers and 16-byte loads and stores: one read of the
// inputs, one write of each output. For widths of whole packs up to kMaxPacks packs per lane
// (GPT-2's 768 in bf16: 3 packs of 8 per lane).
constexpr unsigned kMaxPacks = 4;

template <typename T>
__global__ void packedResidualLayerNormForwardKernel(T* residualOut, T* out, float* mean,
                                                     float* rstd, const T* a, const T* b,
                                                     const T* weight, const T* bias, unsigned rows,
                                                     unsigned width)
{
    constexpr unsigned n = Pack<T>::kSize;
    const unsigned row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    if (row >= rows)
        return;
    const std::size_t offset = static_cast<std::size_t>(row) * width;
    const unsigned packs = width / n;
    float values[kMaxPacks][n];
    float sum = 0.0F;
#pragma unroll
    for (unsigned k = 0; k < kMaxPacks; ++k) {
        const unsigned j = lane + k * kWarp;
        if (j >= packs)
            break;
        const Pack<T> x = loadPack(a + offset + j * n);
        Pack<T> stored;
        if (b != nullptr) {
            const Pack<T> y = loadPack(b + offset + j * n);
#pragma unroll
            for (unsigned u = 0; u < n; ++u) {
                stored.values[u] = fromFloat<T>(toFloat(x.values[u]) + toFloat(y.values[u]));
                values[k][u] = toFloat(stored.values[u]);
            }
        } else {
#pragma unroll
            for (unsigned u = 0; u < n; ++u) {
                stored.values[u] = x.values[u];
                values[k][u] = toFloat(x.values[u]);
            }
        }
        if (residualOut != nullptr)
            storePack(residualOut + offset + j * n, stored);
#pragma unroll
        for (unsigned u = 0; u < n; ++u)
            sum += values[k][u];
    }
    const float m = warpSum(sum) / static_cast<float>(width);
    float squares = 0.0F;
#pragma unroll
    for (unsigned k = 0; k < kMaxPacks; ++k) {
        if (lane + k * kWarp >= packs)
            break;
#pragma unroll
        for (unsigned u = 0; u < n; ++u) {
            const float d = values[k][u] - m;
            squares += d * d;
        }
    }
    const float s = 1.0F / sqrtf(warpSum(squares) / static_cast<float>(width) + kLayerNormEpsilon);
#pragma unroll
    for (unsigned k = 0; k < kMaxPacks; ++k) {
        const unsigned j = lane + k * kWarp;
        if (j >= packs)
            break;
        const Pack<T> w = loadPack(weight + j * n);
        const Pack<T> c = loadPack(bias + j * n);
        Pack<T> o;
#pragma unroll
        for (unsigned u = 0; u < n; ++u)
            o.values[u] =
                fromFloat<T>((values[k][u] - m) * s * toFloat(w.values[u]) + toFloat(c.values[u]));
        storePack(out + offset + j * n, o);
    }
    if (lane == 0) {
        mean[row] = m;
        rstd[row] = s;
    }
}

template <typename T>
__global__ void packedLayerNormBackwardInputKernel(T* din, const T* dout, const T* in,
                                                   const T* weight, const float* mean,
                                                   const float* rstd, unsigned rows, unsigned width)
{
    constexpr unsigned n = Pack<T>::kSize;
    const unsigned row = blockIdx.x * kRowsPerBlock + threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    if (row >= rows)
        return;
    const std::size_t offset = static_cast<std::size_t>(row) * width;
    const unsigned packs = width / n;
    const float m = mean[row];
    const float s = rstd[row];
    float norms[kMaxPacks][n];
    float dnorms[kMaxPacks][n];
    float sumDnorm = 0.0F;
    float sumDnormNorm = 0.0F;
#pragma unroll
    for (unsigned k = 0; k < kMaxPacks; ++k) {
        const unsigned j = lane + k * kWarp;
        if (j >= packs)
            break;
        const Pack<T> x = loadPack(in + offset + j * n);
        const Pack<T> dy = loadPack(dout + offset + j * n);
        const Pack<T> w = loadPack(weight + j * n);
#pragma unroll
        for (unsigned u = 0; u < n; ++u) {
            norms[k][u] = (toFloat(x.values[u]) - m) * s;
            dnorms[k][u] = toFloat(dy.values[u]) * toFloat(w.values[u]);
            sumDnorm += dnorms[k][u];
            sumDnormNorm += dnorms[k][u] * norms[k][u];
        }
    }
    const float meanDnorm = warpSum(sumDnorm) / static_cast<float>(width);
    const float meanDnormNorm = warpSum(sumDnormNorm) / static_cast<float>(width);
#pragma unroll
    for (unsigned k = 0; k < kMaxPacks; ++k) {
        const unsigned j = lane + k * kWarp;
        if (j >= packs)
            break;
        Pack<T> dx = loadPack(din + offset + j * n);
#pragma unroll
        for (unsigned u = 0; u < n; ++u)
            dx.values[u] =
                fromFloat<T>(toFloat(dx.values[u])
                             + s * (dnorms[k][u] - meanDnorm - norms[k][u] * meanDnormNorm));
        storePack(din + offset + j * n, dx);
    }
}

// True when the packed kernels apply: whole packs, at most kMaxPacks per lane, aligned rows.
template <typename T, typename... Pointers>
bool packedRowsFit(std::size_t rows, std::size_t width, const Pointers*... pointers)
{
    constexpr std::size_t pack = Pack<T>::kSize;
    return width % pack == 0 && width / pack <= kMaxPacks * kWarp
           && packsFit<T>(width, rows * width, pointers...);
}

}  // namespace

template <typename T>
void residualLayerNormForward(T* residualOut, T* out, float* mean, float* rstd, const T* a,
                              const T* b, const T* weight, const T* bias, std::size_t rows,
                              std::size_t width, cudaStream_t stream)
{
    // Null pointers are aligned for packsFit; the kernels skip them.
    if (rows > 0 && packedRowsFit<T>(rows, width, residualOut, out, a, b, weight, bias)) {
        launchPerRow(packedResidualLayerNormForwardKernel<T>, rows, stream, residualOut, out, mean,
                     rstd, a, b, weight, bias, static_cast<unsigned>(rows),
                     static_cast<unsigned>(width));
        return;
    }
    launchPerRow(residualLayerNormForwardKernel<T>, rows, stream, residualOut, out, mean, rstd, a,
                 b, weight, bias, rows, width);
}

template <typename T>
void layerNormBackward(T* din, T* dweight, T* dbias, float* scratch, const T* dout, const T* in,
                       const T* weight, const float* mean, const float* rstd, std::size_t rows,
                       std::size_t width, cudaStream_t stream)
{
    if (rows == 0)
        return;
    if (packedRowsFit<T>(rows, width, din, dout, in, weight)) {
        launchPerRow(packedLayerNormBackwardInputKernel<T>, rows, stream, din, dout, in, weight,
                     mean, rstd, static_cast<unsigned>(rows), static_cast<unsigned>(width));
    } else {
        launchPerRow(layerNormBackwardInputKernel<T>, rows, stream, din, dout, in, weight, mean,
                     rstd, rows, width);
    }
    layerNormParameterBackward(dweight, dbias, scratch, dout, in, mean, rstd, rows, width, stream);
}

#define SEALTRAIN_INSTANTIATE_LAYERNORM(T)                                                         \
    template void residualLayerNormForward<T>(T*, T*, float*, float*, const T*, const T*,          \
                                              const T*, const T*, std::size_t, std::size_t,        \
                                              cudaStream_t);                                       \
    template void layerNormBackward<T>(T*, T*, T*, float*, const T*, const T*, const T*,           \
                                       const float*, const float*, std::size_t, std::size_t,       \
                                       cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_LAYERNORM)

}  // namespace sealtrain::trainer::cuda::kernels
