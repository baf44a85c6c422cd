// The learning-rate schedule (optimizer_settings.h).
#include "sealtrain/formats/optimizer_settings.h"

#include <cmath>
#include <numbers>

namespace sealtrain::trainer {

Result<void> LearningRateSchedule::validate() const
{
    if (!(maxRate > 0.0) || !std::isfinite(maxRate))
        return Error(ErrorCode::InvalidArgument,
                     "The learning rate must be a positive number; give one such as 6e-4.");
    if (!(minRate >= 0.0) || minRate > maxRate)
        return Error(ErrorCode::InvalidArgument,
                     "The minimum learning rate must lie between 0 and the maximum; lower it.");
    if (totalSteps == 0 || warmupSteps > totalSteps)
        return Error(ErrorCode::InvalidArgument,
                     "The warm-up must not be longer than the training run; shorten the warm-up "
                     "or train for more steps.");
    return success();
}

double LearningRateSchedule::at(std::size_t step) const
{
    if (step < warmupSteps)
        return maxRate * static_cast<double>(step + 1) / static_cast<double>(warmupSteps);
    if (step >= totalSteps)
        return minRate;
    const double progress =
        static_cast<double>(step - warmupSteps) / static_cast<double>(totalSteps - warmupSteps);
    const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
    return minRate + cosine * (maxRate - minRate);
}

}  // namespace sealtrain::trainer
