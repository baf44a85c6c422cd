// The GPU sum of squares against a double-precision CPU reference, across sizes that hit the
// edge cases (empty, one element, partial blocks, more blocks than the grid), and determinism.
#include "gpu_test.h"
#include "sealtrain/trainer/cuda/sum_of_squares.h"

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

using sealtrain::trainer::cuda::launchSumOfSquares;

float gpuSumOfSquares(const std::vector<float>& host)
{
    float* x = nullptr;
    float* accumulator = nullptr;
    SEALTRAIN_CUDA_CHECK(cudaMalloc(&x, sizeof(float) * (host.empty() ? 1 : host.size())));
    SEALTRAIN_CUDA_CHECK(cudaMalloc(&accumulator, sizeof(float)));
    if (!host.empty())
        SEALTRAIN_CUDA_CHECK(
            cudaMemcpy(x, host.data(), sizeof(float) * host.size(), cudaMemcpyHostToDevice));
    SEALTRAIN_CUDA_CHECK(cudaMemset(accumulator, 0, sizeof(float)));
    launchSumOfSquares(x, host.size(), accumulator, nullptr);
    float result = 0.0f;
    SEALTRAIN_CUDA_CHECK(cudaMemcpy(&result, accumulator, sizeof(float), cudaMemcpyDeviceToHost));
    SEALTRAIN_CUDA_CHECK(cudaFree(x));
    SEALTRAIN_CUDA_CHECK(cudaFree(accumulator));
    return result;
}

}  // namespace

int main()
{
    constexpr const char* kName = "test_cuda_sum_of_squares";
    if (sealtrain::gpu_test::skipWithoutGpu(kName))
        return sealtrain::gpu_test::kSkipped;

    sealtrain::gpu_test::Checker check;
    std::mt19937 rng(1234);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (std::size_t size : {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{256},
                             std::size_t{257}, std::size_t{1} << 20, (std::size_t{1} << 24) + 3}) {
        std::vector<float> values(size);
        for (auto& v : values)
            v = normal(rng);
        double reference = 0.0;
        for (float v : values)
            reference += static_cast<double>(v) * v;
        const float got = gpuSumOfSquares(values);
        const double tolerance = 1e-4 * std::max(1.0, reference);
        GPU_EXPECT(check, std::fabs(got - reference) <= tolerance);
        const float again = gpuSumOfSquares(values);
        GPU_EXPECT(check, std::memcmp(&got, &again, sizeof(float)) == 0);
    }
    return check.finish(kName);
}
