// builtBackends (built_backends.h) of a build with the CUDA parts: the CPU and the CUDA backend,
// which trains in bf16 and, with NCCL built (SEALTRAIN_WITH_NCCL), across several GPUs.
#include "sealtrain/trainer/built_backends.h"
#include "sealtrain/trainer/cuda/cuda_check.h"
#include "sealtrain/trainer/cuda/cuda_model.h"

#if SEALTRAIN_WITH_NCCL
#include "sealtrain/trainer/cuda/nccl_collective.h"
#endif

namespace sealtrain::trainer {
namespace {

cuda::CudaModel::ReducerOpener ncclReducer()
{
#if SEALTRAIN_WITH_NCCL
    return [](Collective& ranks, int gpu) -> Result<std::unique_ptr<cuda::GradientReducer>> {
        auto nccl = cuda::NcclCollective::open(ranks, gpu);
        if (!nccl)
            return nccl.error();
        return std::unique_ptr<cuda::GradientReducer>(std::move(nccl).value());
    };
#else
    return {};
#endif
}

}  // namespace

ModelBackends builtBackends()
{
    CudaBackend backend;
    backend.visibleGpus = [] {
        const cuda::DeviceCount devices = cuda::visibleDevices();
        return GpuCount{devices.count, devices.whyNone};
    };
    backend.create = [](const ModelSpec& spec, int gpu) -> Result<std::unique_ptr<Model>> {
        auto model = cuda::CudaModel::create(spec, cuda::Precision::BFloat16, gpu, ncclReducer());
        if (!model)
            return model.error();
        return std::unique_ptr<Model>(std::move(model).value());
    };
    return {std::move(backend)};
}

}  // namespace sealtrain::trainer
