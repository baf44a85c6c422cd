// The optimizer's settings as a checkpoint records them (checkpoint.h): AdamW's
// hyperparameters and the learning-rate schedule. A format, so the control plane reads them with
// none of the optimizer's code (trainer/optimizer.h runs them).
#pragma once

#include "sealtrain/base/result.h"

#include <cstddef>

namespace sealtrain::trainer {

struct AdamWParams {
    double beta1 = 0.9;
    double beta2 = 0.95;
    double epsilon = 1e-8;
    double weightDecay = 0.1;
};

// Linear warm-up from maxRate/warmupSteps to maxRate over the first warmupSteps steps, then a
// half cosine from maxRate down to minRate at totalSteps, and minRate after. Steps count from 0.
struct LearningRateSchedule {
    double maxRate = 6e-4;
    double minRate = 6e-5;
    std::size_t warmupSteps = 0;
    std::size_t totalSteps = 1;

    [[nodiscard]] Result<void> validate() const;
    [[nodiscard]] double at(std::size_t step) const;
};

}  // namespace sealtrain::trainer
