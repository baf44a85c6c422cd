// Choosing and creating the backend (model_factory.h).
#include "sealtrain/trainer/model_factory.h"

#include "sealtrain/trainer/cpu_model.h"

namespace sealtrain::trainer {

std::string_view deviceName(Device device)
{
    switch (device) {
    case Device::Auto: return "auto";
    case Device::Cpu: return "cpu";
    case Device::Cuda: return "cuda";
    }
    return "auto";
}

std::optional<Device> parseDevice(std::string_view name)
{
    for (const Device device : {Device::Auto, Device::Cpu, Device::Cuda}) {
        if (name == deviceName(device))
            return device;
    }
    return std::nullopt;
}

Result<Device> resolveDevice(Device requested, const ModelBackends& backends)
{
    if (requested == Device::Cpu)
        return Device::Cpu;
    if (!backends.cuda) {
        if (requested == Device::Auto)
            return Device::Cpu;
        return Error(ErrorCode::Unsupported,
                     "This sealtrain-train was built without the CUDA parts, so it can not train "
                     "on a GPU; pass --device cpu, or rebuild on a machine with the CUDA toolkit "
                     "(SEALTRAIN_CUDA=ON).");
    }
    const GpuCount gpus = backends.cuda->visibleGpus();
    if (gpus.count > 0)
        return Device::Cuda;
    if (requested == Device::Auto)
        return Device::Cpu;
    return Error(ErrorCode::Unsupported,
                 "No CUDA GPU is visible (" + gpus.whyNone
                     + "), so --device cuda can not run here; run on a GPU node or pass "
                       "--device cpu.");
}

Result<std::unique_ptr<Model>> createModel(Device device, const ModelSpec& spec,
                                           const ModelBackends& backends, int rank)
{
    auto resolved = resolveDevice(device, backends);
    if (!resolved)
        return resolved.error();
    if (*resolved == Device::Cuda) {
        const int gpus = backends.cuda->visibleGpus().count;  // > 0 unless one just went away
        return backends.cuda->create(spec, gpus > 0 ? rank % gpus : 0);
    }
    auto model = CpuModel::create(spec);
    if (!model)
        return model.error();
    return std::unique_ptr<Model>(std::move(model).value());
}

}  // namespace sealtrain::trainer
