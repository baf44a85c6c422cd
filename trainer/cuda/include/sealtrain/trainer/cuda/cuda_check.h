// Checking every CUDA runtime call (docs/development.md): the first error wins, with file and line,
// and is never swallowed. Host code calls SEALTRAIN_CUDA_CHECK(expr); a failure throws CudaError,
// which the backend turns into a Result at its boundary.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace sealtrain::trainer::cuda {

class CudaError final : public std::runtime_error {
public:
    CudaError(cudaError_t status, const char* expression, const char* file, int line);
    [[nodiscard]] cudaError_t status() const noexcept { return status_; }

private:
    cudaError_t status_;
};

void throwOnCudaError(cudaError_t status, const char* expression, const char* file, int line);

// Number of visible CUDA devices, or the reason there are none (driver missing, no GPU).
struct DeviceCount {
    int count = 0;
    std::string whyNone;
};
[[nodiscard]] DeviceCount visibleDevices();

}  // namespace sealtrain::trainer::cuda

#define SEALTRAIN_CUDA_CHECK(expr)                                                                 \
    ::sealtrain::trainer::cuda::throwOnCudaError((expr), #expr, __FILE__, __LINE__)
