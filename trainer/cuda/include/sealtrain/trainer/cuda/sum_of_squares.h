// Sum of squares of a float vector on the GPU: the core of global-norm gradient clipping.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace sealtrain::trainer::cuda {

// Adds sum(x[i]^2) for i < count into *accumulator (device memory, fp32), on `stream`.
// Deterministic: a fixed grid and a fixed reduction order, so equal inputs give equal bits.
void launchSumOfSquares(const float* x, std::size_t count, float* accumulator, cudaStream_t stream);

}  // namespace sealtrain::trainer::cuda
