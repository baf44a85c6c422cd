// What CudaGpt::backward needs from a data-parallel collective: start the mean over ranks of
// one bucket of device gradients once an event says backward has finished them, and make the
// compute stream wait for every bucket started. NcclCollective implements it; failures throw
// (CudaError, or the collective's own error), which CudaGpt returns as its Result error.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace sealtrain::trainer::cuda {

enum class ReduceType { Float32, BFloat16 };

class GradientReducer {
public:
    GradientReducer() = default;
    GradientReducer(const GradientReducer&) = delete;
    GradientReducer& operator=(const GradientReducer&) = delete;
    GradientReducer(GradientReducer&&) = delete;
    GradientReducer& operator=(GradientReducer&&) = delete;
    virtual ~GradientReducer() = default;

    // Replaces data[0 .. count) (device memory) by its mean over the ranks, in place, after
    // `ready` has completed, on the reducer's own stream.
    virtual void reduceMeanAsync(void* data, std::size_t count, ReduceType type,
                                 cudaEvent_t ready) = 0;
    // Makes `stream` wait for every reduction started so far.
    virtual void joinInto(cudaStream_t stream) = 0;
};

}  // namespace sealtrain::trainer::cuda
