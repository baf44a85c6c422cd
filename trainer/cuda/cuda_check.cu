// Error reporting for CUDA runtime calls.
#include "sealtrain/trainer/cuda/cuda_check.h"

namespace sealtrain::trainer::cuda {

CudaError::CudaError(cudaError_t status, const char* expression, const char* file, int line)
    : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expression
                         + " failed: " + cudaGetErrorName(status) + " ("
                         + cudaGetErrorString(status) + ")")
    , status_(status)
{
}

void throwOnCudaError(cudaError_t status, const char* expression, const char* file, int line)
{
    if (status != cudaSuccess)
        throw CudaError(status, expression, file, line);
}

DeviceCount visibleDevices()
{
    DeviceCount result;
    const cudaError_t status = cudaGetDeviceCount(&result.count);
    if (status != cudaSuccess) {
        result.count = 0;
        result.whyNone = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
        (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    } else if (result.count == 0) {
        result.whyNone = "the CUDA runtime reports zero devices";
    }
    return result;
}

}  // namespace sealtrain::trainer::cuda
