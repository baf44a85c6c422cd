// The backends this executable was built with, for createModel (model_factory.h). Defined by the
// sealtrain_trainer_backends library: its CUDA variant (trainer/cuda/built_backends_cuda.cpp)
// links sealtrain_trainer_cuda and exists only where SEALTRAIN_CUDA_ENABLED; otherwise
// built_backends_cpu.cpp offers the CPU alone. Link that library to call this.
#pragma once

#include "sealtrain/trainer/model_factory.h"

namespace sealtrain::trainer {

[[nodiscard]] ModelBackends builtBackends();

}  // namespace sealtrain::trainer
