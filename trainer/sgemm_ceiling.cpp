// measureSgemmFlops (sgemm_ceiling.h).
#include "sealtrain/trainer/sgemm_ceiling.h"

#include "sealtrain/trainer/counter_rng.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace sealtrain::trainer {

double measureSgemmFlops(std::size_t order, std::size_t repetitions)
{
    const std::size_t count = order * order;
    std::vector<float> a(count);
    std::vector<float> b(count);
    std::vector<float> c(count);
    const CounterRng rng(1);
    for (std::size_t i = 0; i < count; ++i) {
        a[i] = static_cast<float>(rng.uniform(0, i));
        b[i] = static_cast<float>(rng.uniform(1, i));
    }
    const int n = static_cast<int>(order);
    auto multiply = [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0F, a.data(), n, b.data(),
                    n, 0.0F, c.data(), n);
    };
    multiply();
    double best = 0.0;
    for (std::size_t r = 0; r < repetitions; ++r) {
        const auto start = std::chrono::steady_clock::now();
        multiply();
        const double seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best =
            std::max(best, 2.0 * static_cast<double>(count) * static_cast<double>(order) / seconds);
    }
    return best;
}

}  // namespace sealtrain::trainer
