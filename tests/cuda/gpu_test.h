// A minimal harness for GPU test executables: checks that count failures, the skip rule, the
// main() they share, and the one-rank collective without MPI (the stand-alone build has none).
#pragma once

#include "sealtrain/trainer/collective.h"
#include "sealtrain/trainer/cuda/cuda_check.h"

#include <cstdio>
#include <exception>

namespace sealtrain::gpu_test {

inline constexpr int kSkipped = 77;  // CTest's SKIP_RETURN_CODE for these tests

// Returns true (and prints why) when no GPU is visible, so main() can return kSkipped.
inline bool skipWithoutGpu(const char* testName)
{
    const auto devices = sealtrain::trainer::cuda::visibleDevices();
    if (devices.count > 0)
        return false;
    std::printf("SKIP %s: no CUDA GPU visible (%s); run it on a GPU node.\n", testName,
                devices.whyNone.c_str());
    return true;
}

class Checker {
public:
    void expect(bool condition, const char* what, const char* file, int line)
    {
        ++checks_;
        if (!condition) {
            ++failures_;
            std::printf("FAIL %s:%d: %s\n", file, line, what);
        }
    }
    [[nodiscard]] int finish(const char* testName) const
    {
        std::printf("%s: %d checks, %d failed\n", testName, checks_, failures_);
        return failures_ == 0 ? 0 : 1;
    }

private:
    int checks_ = 0;
    int failures_ = 0;
};

// True when `result` (a Result) holds a value; otherwise prints its error, counts a failure and
// returns false.
template <typename Result>
bool ok(Checker& check, const Result& result, const char* what)
{
    if (result)
        return true;
    std::printf("FAIL %s: %s\n", what, result.error().message().c_str());
    check.expect(false, what, __FILE__, __LINE__);
    return false;
}

// What main() does: skips (kSkipped) without a GPU, runs `checks` on a Checker, counts an
// exception that escapes as a failure, and returns 0 when every check held, 1 otherwise.
template <typename Checks>
int runGpuTest(const char* testName, Checks&& checks)
{
    if (skipWithoutGpu(testName))
        return kSkipped;
    Checker check;
    try {
        checks(check);
    } catch (const std::exception& failure) {
        std::printf("FAIL %s: %s\n", testName, failure.what());
        return 1;
    }
    return check.finish(testName);
}

// The one-rank collective: every call leaves the data as it is.
class OneRank final : public sealtrain::trainer::Collective {
public:
    [[nodiscard]] int rank() const override { return 0; }
    [[nodiscard]] int worldSize() const override { return 1; }
    [[nodiscard]] std::string_view name() const override { return "single"; }
    [[nodiscard]] Result<void> allReduceMean(std::span<float>) override { return success(); }
    [[nodiscard]] Result<void> allReduceSum(std::span<double>) override { return success(); }
    [[nodiscard]] Result<void> broadcast(std::span<std::byte>, int) override { return success(); }
    [[nodiscard]] Result<void> barrier() override { return success(); }
};

}  // namespace sealtrain::gpu_test

#define GPU_EXPECT(checker, condition) (checker).expect((condition), #condition, __FILE__, __LINE__)
