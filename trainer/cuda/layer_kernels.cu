// The transformer block's elementwise and row-wise kernels: encoder, fused residual + LayerNorm,
// column sums for bias gradients, GELU, attention's layout changes and its causal softmax.
// Device code first, then the launchers, then their instantiations (kernels.h documents each).
#include "device_math.cuh"
#include "sealtrain/trainer/cpu_ops.h"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/kernels.h"
#include "sealtrain/trainer/cuda/plan.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

constexpr float kLayerNormEpsilon = static_cast<float>(cpu::kLayerNormEpsilon);
constexpr unsigned kRowsPerBlock = 8;  // one warp per row, eight warps per block
constexpr unsigned kColumnTile = 32;
constexpr unsigned kColumnRowsInFlight = 8;

// ---- encoder ----

template <typename T>
__global__ void encoderForwardKernel(T* out, const std::int32_t* tokens, const T* wte, const T* wpe,
                                     std::size_t seq, std::size_t width, std::size_t count)
{
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
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
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
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

// ---- LayerNorm ----

template <typename T>
__global__ void residualLayerNormForwardKernel(T* residualOut, T* out, float* mean, float* rstd,
                                               const T* a, const T* b, const T* weight,
                                               const T* bias, std::size_t rows, std::size_t width)
{
    const std::size_t row =
        blockIdx.x * static_cast<std::size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
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
    const std::size_t row =
        blockIdx.x * static_cast<std::size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
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

// Pass 1 of a column sum: block (tile of 32 columns, chunk of rows) writes one partial per column
// and sum. With `in` set it sums LayerNorm's two parameter gradients (dout·norm, dout), else the
// plain column sum of dout.
template <typename T>
__global__ void columnPartialsKernel(float* scratch, const T* dout, const T* in, const float* mean,
                                     const float* rstd, std::size_t rows, std::size_t columns)
{
    __shared__ float normSums[kColumnRowsInFlight][kColumnTile];
    __shared__ float plainSums[kColumnRowsInFlight][kColumnTile];
    const std::size_t column = blockIdx.x * static_cast<std::size_t>(kColumnTile) + threadIdx.x;
    const std::size_t chunk = blockIdx.y;
    const std::size_t first = chunk * kRowsPerColumnChunk;
    const std::size_t last =
        first + kRowsPerColumnChunk < rows ? first + kRowsPerColumnChunk : rows;
    float normSum = 0.0F;
    float plainSum = 0.0F;
    if (column < columns) {
        for (std::size_t row = first + threadIdx.y; row < last; row += kColumnRowsInFlight) {
            const float dy = toFloat(dout[row * columns + column]);
            plainSum += dy;
            if (in != nullptr)
                normSum += dy * (toFloat(in[row * columns + column]) - mean[row]) * rstd[row];
        }
    }
    normSums[threadIdx.y][threadIdx.x] = normSum;
    plainSums[threadIdx.y][threadIdx.x] = plainSum;
    __syncthreads();
    if (threadIdx.y == 0 && column < columns) {
        float totalNorm = 0.0F;
        float totalPlain = 0.0F;
        for (unsigned j = 0; j < kColumnRowsInFlight; ++j) {
            totalNorm += normSums[j][threadIdx.x];
            totalPlain += plainSums[j][threadIdx.x];
        }
        if (in != nullptr) {
            scratch[(chunk * 2) * columns + column] = totalNorm;
            scratch[(chunk * 2 + 1) * columns + column] = totalPlain;
        } else {
            scratch[chunk * columns + column] = totalPlain;
        }
    }
}

// Pass 2: adds the partials of every chunk, in chunk order, into the gradients. With two sums
// (LayerNorm) the first goes to `first` (dweight) and the second to `second` (dbias).
template <typename T>
__global__ void columnFinishKernel(T* first, T* second, const float* scratch, std::size_t chunks,
                                   std::size_t columns)
{
    const std::size_t sums = second == nullptr ? 1 : 2;
    for (std::size_t column = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
         column < columns; column += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        float a = 0.0F;
        float b = 0.0F;
        for (std::size_t chunk = 0; chunk < chunks; ++chunk) {
            a += scratch[(chunk * sums) * columns + column];
            if (sums == 2)
                b += scratch[(chunk * sums + 1) * columns + column];
        }
        first[column] = fromFloat<T>(toFloat(first[column]) + a);
        if (sums == 2)
            second[column] = fromFloat<T>(toFloat(second[column]) + b);
    }
}

// ---- GELU ----

constexpr float kGeluScale = 0.7978845608028654F;  // sqrt(2/π)
constexpr float kGeluCubic = 0.044715F;

template <typename T>
__global__ void geluForwardKernel(T* out, const T* in, std::size_t count)
{
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float x = toFloat(in[i]);
        const float inner = kGeluScale * (x + kGeluCubic * x * x * x);
        out[i] = fromFloat<T>(0.5F * x * (1.0F + tanhf(inner)));
    }
}

template <typename T>
__global__ void geluBackwardKernel(T* din, const T* dout, const T* in, std::size_t count)
{
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const float x = toFloat(in[i]);
        const float inner = kGeluScale * (x + kGeluCubic * x * x * x);
        const float t = tanhf(inner);
        const float derivative =
            0.5F * (1.0F + t)
            + 0.5F * x * (1.0F - t * t) * kGeluScale * (1.0F + 3.0F * kGeluCubic * x * x);
        din[i] = fromFloat<T>(toFloat(dout[i]) * derivative);
    }
}

// ---- attention ----

// Index of element (b, t, part, h, d) of qkv and of its place (b, h, t, d) in q, k or v.
struct HeadIndex {
    std::size_t packed;
    std::size_t split;
    std::size_t part;
};

__device__ __forceinline__ HeadIndex headIndex(std::size_t i, const AttentionDims& dims)
{
    const std::size_t width = dims.heads * dims.headSize;
    const std::size_t d = i % dims.headSize;
    const std::size_t h = (i / dims.headSize) % dims.heads;
    const std::size_t part = (i / width) % 3;
    const std::size_t t = (i / (3 * width)) % dims.seq;
    const std::size_t b = i / (3 * width * dims.seq);
    return {i, ((b * dims.heads + h) * dims.seq + t) * dims.headSize + d, part};
}

template <typename T>
__global__ void splitHeadsKernel(T* q, T* k, T* v, const T* qkv, AttentionDims dims)
{
    const std::size_t count = dims.batch * dims.seq * 3 * dims.heads * dims.headSize;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const HeadIndex index = headIndex(i, dims);
        T* target = index.part == 0 ? q : (index.part == 1 ? k : v);
        target[index.split] = qkv[index.packed];
    }
}

template <typename T>
__global__ void mergeHeadGradientsKernel(T* dqkv, const T* dq, const T* dk, const T* dv,
                                         AttentionDims dims)
{
    const std::size_t count = dims.batch * dims.seq * 3 * dims.heads * dims.headSize;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const HeadIndex index = headIndex(i, dims);
        const T* source = index.part == 0 ? dq : (index.part == 1 ? dk : dv);
        dqkv[index.packed] = source[index.split];
    }
}

// Element i of out(b, t, h, d) and its place in y(b, h, t, d).
__device__ __forceinline__ std::size_t headMajorIndex(std::size_t i, const AttentionDims& dims)
{
    const std::size_t d = i % dims.headSize;
    const std::size_t h = (i / dims.headSize) % dims.heads;
    const std::size_t t = (i / (dims.headSize * dims.heads)) % dims.seq;
    const std::size_t b = i / (dims.headSize * dims.heads * dims.seq);
    return ((b * dims.heads + h) * dims.seq + t) * dims.headSize + d;
}

template <typename T>
__global__ void concatHeadsKernel(T* out, const T* y, AttentionDims dims, bool inverse)
{
    const std::size_t count = dims.batch * dims.seq * dims.heads * dims.headSize;
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
        const std::size_t j = headMajorIndex(i, dims);
        if (inverse)
            out[j] = y[i];  // out is y(b, h, t, d) here, y is out(b, t, h, d)
        else
            out[i] = y[j];
    }
}

template <typename T>
__global__ void causalSoftmaxForwardKernel(T* probs, const T* scores, std::size_t rows,
                                           std::size_t seq)
{
    const std::size_t row =
        blockIdx.x * static_cast<std::size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    if (row >= rows)
        return;
    const std::size_t t = row % seq;
    const T* x = scores + row * seq;
    T* p = probs + row * seq;
    float largest = -INFINITY;
    for (std::size_t j = lane; j <= t; j += kWarp)
        largest = fmaxf(largest, toFloat(x[j]));
    largest = warpMax(largest);
    float sum = 0.0F;
    for (std::size_t j = lane; j <= t; j += kWarp)
        sum += expf(toFloat(x[j]) - largest);
    sum = warpSum(sum);
    for (std::size_t j = lane; j < seq; j += kWarp)
        p[j] = fromFloat<T>(j <= t ? expf(toFloat(x[j]) - largest) / sum : 0.0F);
}

template <typename T>
__global__ void causalSoftmaxBackwardKernel(T* dscores, const T* dprobs, const T* probs,
                                            std::size_t rows, std::size_t seq)
{
    const std::size_t row =
        blockIdx.x * static_cast<std::size_t>(kRowsPerBlock) + threadIdx.x / kWarp;
    const unsigned lane = threadIdx.x % kWarp;
    if (row >= rows)
        return;
    const std::size_t t = row % seq;
    const T* p = probs + row * seq;
    const T* dp = dprobs + row * seq;
    T* ds = dscores + row * seq;
    float dot = 0.0F;
    for (std::size_t j = lane; j <= t; j += kWarp)
        dot += toFloat(p[j]) * toFloat(dp[j]);
    dot = warpSum(dot);
    for (std::size_t j = lane; j < seq; j += kWarp)
        ds[j] = fromFloat<T>(j <= t ? toFloat(p[j]) * (toFloat(dp[j]) - dot) : 0.0F);
}

unsigned rowBlocks(std::size_t rows)
{
    return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

void checkLaunch()
{
    SEALTRAIN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

template <typename T>
void encoderForward(T* out, const std::int32_t* tokens, const T* wte, const T* wpe,
                    std::size_t batch, std::size_t seq, std::size_t width, cudaStream_t stream)
{
    const std::size_t count = batch * seq * width;
    if (count == 0)
        return;
    encoderForwardKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(
        out, tokens, wte, wpe, seq, width, count);
    checkLaunch();
}

template <typename T>
void encoderBackwardPositions(T* dwpe, const T* dout, std::size_t batch, std::size_t seq,
                              std::size_t width, cudaStream_t stream)
{
    if (seq * width == 0)
        return;
    encoderBackwardPositionsKernel<<<elementwiseBlocks(seq * width), kElementwiseThreads, 0,
                                     stream>>>(dwpe, dout, batch, seq, width);
    checkLaunch();
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

template <typename T>
void residualLayerNormForward(T* residualOut, T* out, float* mean, float* rstd, const T* a,
                              const T* b, const T* weight, const T* bias, std::size_t rows,
                              std::size_t width, cudaStream_t stream)
{
    if (rows == 0)
        return;
    residualLayerNormForwardKernel<<<rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(
        residualOut, out, mean, rstd, a, b, weight, bias, rows, width);
    checkLaunch();
}

template <typename T>
void layerNormBackward(T* din, T* dweight, T* dbias, float* scratch, const T* dout, const T* in,
                       const T* weight, const float* mean, const float* rstd, std::size_t rows,
                       std::size_t width, cudaStream_t stream)
{
    if (rows == 0)
        return;
    layerNormBackwardInputKernel<<<rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(
        din, dout, in, weight, mean, rstd, rows, width);
    checkLaunch();
    const dim3 grid(static_cast<unsigned>((width + kColumnTile - 1) / kColumnTile),
                    static_cast<unsigned>(columnChunks(rows)));
    columnPartialsKernel<<<grid, dim3(kColumnTile, kColumnRowsInFlight), 0, stream>>>(
        scratch, dout, in, mean, rstd, rows, width);
    checkLaunch();
    columnFinishKernel<<<elementwiseBlocks(width), kElementwiseThreads, 0, stream>>>(
        dweight, dbias, scratch, columnChunks(rows), width);
    checkLaunch();
}

template <typename T>
void biasBackward(T* dbias, float* scratch, const T* dout, std::size_t rows, std::size_t columns,
                  cudaStream_t stream)
{
    if (rows == 0 || columns == 0)
        return;
    const dim3 grid(static_cast<unsigned>((columns + kColumnTile - 1) / kColumnTile),
                    static_cast<unsigned>(columnChunks(rows)));
    columnPartialsKernel<T><<<grid, dim3(kColumnTile, kColumnRowsInFlight), 0, stream>>>(
        scratch, dout, nullptr, nullptr, nullptr, rows, columns);
    checkLaunch();
    columnFinishKernel<T><<<elementwiseBlocks(columns), kElementwiseThreads, 0, stream>>>(
        dbias, nullptr, scratch, columnChunks(rows), columns);
    checkLaunch();
}

template <typename T>
void geluForward(T* out, const T* in, std::size_t count, cudaStream_t stream)
{
    if (count == 0)
        return;
    geluForwardKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(out, in, count);
    checkLaunch();
}

template <typename T>
void geluBackward(T* din, const T* dout, const T* in, std::size_t count, cudaStream_t stream)
{
    if (count == 0)
        return;
    geluBackwardKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(din, dout, in,
                                                                                     count);
    checkLaunch();
}

template <typename T>
void splitHeads(T* q, T* k, T* v, const T* qkv, const AttentionDims& dims, cudaStream_t stream)
{
    const std::size_t count = dims.batch * dims.seq * 3 * dims.heads * dims.headSize;
    if (count == 0)
        return;
    splitHeadsKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(q, k, v, qkv,
                                                                                   dims);
    checkLaunch();
}

template <typename T>
void mergeHeadGradients(T* dqkv, const T* dq, const T* dk, const T* dv, const AttentionDims& dims,
                        cudaStream_t stream)
{
    const std::size_t count = dims.batch * dims.seq * 3 * dims.heads * dims.headSize;
    if (count == 0)
        return;
    mergeHeadGradientsKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(
        dqkv, dq, dk, dv, dims);
    checkLaunch();
}

template <typename T>
void concatHeads(T* out, const T* y, const AttentionDims& dims, cudaStream_t stream)
{
    const std::size_t count = dims.batch * dims.seq * dims.heads * dims.headSize;
    if (count == 0)
        return;
    concatHeadsKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(out, y, dims,
                                                                                    false);
    checkLaunch();
}

template <typename T>
void splitHeadOutputs(T* y, const T* out, const AttentionDims& dims, cudaStream_t stream)
{
    const std::size_t count = dims.batch * dims.seq * dims.heads * dims.headSize;
    if (count == 0)
        return;
    concatHeadsKernel<<<elementwiseBlocks(count), kElementwiseThreads, 0, stream>>>(y, out, dims,
                                                                                    true);
    checkLaunch();
}

template <typename T>
void causalSoftmaxForward(T* probs, const T* scores, std::size_t matrices, std::size_t seq,
                          cudaStream_t stream)
{
    const std::size_t rows = matrices * seq;
    if (rows == 0)
        return;
    causalSoftmaxForwardKernel<<<rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(probs, scores,
                                                                                      rows, seq);
    checkLaunch();
}

template <typename T>
void causalSoftmaxBackward(T* dscores, const T* dprobs, const T* probs, std::size_t matrices,
                           std::size_t seq, cudaStream_t stream)
{
    const std::size_t rows = matrices * seq;
    if (rows == 0)
        return;
    causalSoftmaxBackwardKernel<<<rowBlocks(rows), kRowsPerBlock * kWarp, 0, stream>>>(
        dscores, dprobs, probs, rows, seq);
    checkLaunch();
}

#define SEALTRAIN_INSTANTIATE_LAYER_KERNELS(T)                                                     \
    template void encoderForward<T>(T*, const std::int32_t*, const T*, const T*, std::size_t,      \
                                    std::size_t, std::size_t, cudaStream_t);                       \
    template void encoderBackwardPositions<T>(T*, const T*, std::size_t, std::size_t, std::size_t, \
                                              cudaStream_t);                                       \
    template void encoderBackwardTokens<T>(T*, const T*, const std::int32_t*, const std::int32_t*, \
                                           const std::int32_t*, std::size_t, std::size_t,          \
                                           cudaStream_t);                                          \
    template void residualLayerNormForward<T>(T*, T*, float*, float*, const T*, const T*,          \
                                              const T*, const T*, std::size_t, std::size_t,        \
                                              cudaStream_t);                                       \
    template void layerNormBackward<T>(T*, T*, T*, float*, const T*, const T*, const T*,           \
                                       const float*, const float*, std::size_t, std::size_t,       \
                                       cudaStream_t);                                              \
    template void biasBackward<T>(T*, float*, const T*, std::size_t, std::size_t, cudaStream_t);   \
    template void geluForward<T>(T*, const T*, std::size_t, cudaStream_t);                         \
    template void geluBackward<T>(T*, const T*, const T*, std::size_t, cudaStream_t);              \
    template void splitHeads<T>(T*, T*, T*, const T*, const AttentionDims&, cudaStream_t);         \
    template void mergeHeadGradients<T>(T*, const T*, const T*, const T*, const AttentionDims&,    \
                                        cudaStream_t);                                             \
    template void concatHeads<T>(T*, const T*, const AttentionDims&, cudaStream_t);                \
    template void splitHeadOutputs<T>(T*, const T*, const AttentionDims&, cudaStream_t);           \
    template void causalSoftmaxForward<T>(T*, const T*, std::size_t, std::size_t, cudaStream_t);   \
    template void causalSoftmaxBackward<T>(T*, const T*, const T*, std::size_t, std::size_t,       \
                                           cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_LAYER_KERNELS)

}  // namespace sealtrain::trainer::cuda::kernels
