// Which backend computes the model (`sealtrain-train --device`): the CPU reference always, the
// CUDA backend when the executable was built with the CUDA parts. This library links no CUDA:
// the CUDA backend reaches it through the CudaBackend hook, which sealtrain_trainer_backends
// fills in (built_backends.h) only where SEALTRAIN_CUDA_ENABLED.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/trainer/model.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sealtrain::trainer {

enum class Device { Auto, Cpu, Cuda };

[[nodiscard]] std::string_view deviceName(Device device);  // "auto", "cpu", "cuda"
[[nodiscard]] std::optional<Device> parseDevice(std::string_view name);

// GPUs the CUDA runtime sees, or none and why.
struct GpuCount {
    int count = 0;
    std::string whyNone;
};

// The CUDA backend as this library sees it.
struct CudaBackend {
    std::function<GpuCount()> visibleGpus;
    // A model on GPU `gpu` (0 <= gpu < visibleGpus().count).
    std::function<Result<std::unique_ptr<Model>>(const ModelSpec& spec, int gpu)> create;
};

struct ModelBackends {
    std::optional<CudaBackend> cuda;  // empty: built without the CUDA parts
};

// The device `requested` runs on here: Auto is Cuda when the CUDA backend was built and sees a
// GPU, Cpu otherwise; Cuda without either is refused with one sentence that says what to do.
[[nodiscard]] Result<Device> resolveDevice(Device requested, const ModelBackends& backends);

// A model of `spec` on resolveDevice(device). Rank r of a data-parallel run takes GPU r mod the
// number visible (one rank per GPU on each node).
[[nodiscard]] Result<std::unique_ptr<Model>>
createModel(Device device, const ModelSpec& spec, const ModelBackends& backends, int rank = 0);

}  // namespace sealtrain::trainer
