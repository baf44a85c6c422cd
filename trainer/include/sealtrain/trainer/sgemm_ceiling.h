// The machine's fp32 matmul rate through the trainer's BLAS: the ceiling that model FLOPs
// utilisation (MFU) is measured against, on this machine, in the same run.
#pragma once

#include <cstddef>

namespace sealtrain::trainer {

// Best FLOP/s of `repetitions` square sgemm calls C = A·B of order `order` (2·n³ FLOPs each),
// after one untimed call.
[[nodiscard]] double measureSgemmFlops(std::size_t order = 1024, std::size_t repetitions = 5);

}  // namespace sealtrain::trainer
