// Sums over the rows of a gradient, without atomics and in a fixed order: a linear layer's bias
// gradient, dout (rows, C) -> dbias (C), and LayerNorm's parameter gradients, dout (rows, C) and
// in (rows, C) with its mean and rstd (rows) -> dweight (C) = Σ dout·norm and dbias (C) = Σ dout.
// Two passes: chunks of plan.h's kRowsPerColumnChunk rows write partial sums to the scratch, then
// the partials are added in chunk order. Device code, then the launchers.
#include "launch.cuh"
#include "sealtrain/trainer/cuda/kernels.h"

namespace sealtrain::trainer::cuda::kernels {
namespace {

constexpr unsigned kColumnTile = 32;
constexpr unsigned kColumnRowsInFlight = 8;

// Pass 1: block (tile of 32 columns, chunk of rows) writes one partial per column and sum. With
// `in` set it sums LayerNorm's two parameter gradients (dout·norm, dout), else the plain column
// sum of dout.
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
    for (std::size_t column = firstElement(); column < columns; column += elementStride()) {
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

// Both passes; `in`, `mean`, `rstd` and `second` are null for the plain sum.
template <typename T>
void columnSums(T* first, T* second, float* scratch, const T* dout, const T* in, const float* mean,
                const float* rstd, std::size_t rows, std::size_t columns, cudaStream_t stream)
{
    if (rows == 0 || columns == 0)
        return;
    const dim3 grid(static_cast<unsigned>((columns + kColumnTile - 1) / kColumnTile),
                    static_cast<unsigned>(columnChunks(rows)));
    columnPartialsKernel<T><<<grid, dim3(kColumnTile, kColumnRowsInFlight), 0, stream>>>(
        scratch, dout, in, mean, rstd, rows, columns);
    checkLaunch();
    launchElementwise(columnFinishKernel<T>, columns, stream, first, second, scratch,
                      columnChunks(rows), columns);
}

}  // namespace

template <typename T>
void biasBackward(T* dbias, float* scratch, const T* dout, std::size_t rows, std::size_t columns,
                  cudaStream_t stream)
{
    columnSums<T>(dbias, nullptr, scratch, dout, nullptr, nullptr, nullptr, rows, columns, stream);
}

template <typename T>
void layerNormParameterBackward(T* dweight, T* dbias, float* scratch, const T* dout, const T* in,
                                const float* mean, const float* rstd, std::size_t rows,
                                std::size_t width, cudaStream_t stream)
{
    columnSums(dweight, dbias, scratch, dout, in, mean, rstd, rows, width, stream);
}

#define SEALTRAIN_INSTANTIATE_COLUMN_SUMS(T)                                                       \
    template void biasBackward<T>(T*, float*, const T*, std::size_t, std::size_t, cudaStream_t);   \
    template void layerNormParameterBackward<T>(T*, T*, float*, const T*, const T*, const float*,  \
                                                const float*, std::size_t, std::size_t,            \
                                                cudaStream_t);

SEALTRAIN_FOR_EACH_ACTIVATION_TYPE(SEALTRAIN_INSTANTIATE_COLUMN_SUMS)

}  // namespace sealtrain::trainer::cuda::kernels
