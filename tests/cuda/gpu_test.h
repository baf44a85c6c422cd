// A minimal harness for GPU test executables: checks that count failures, and the skip rule.
#pragma once

#include "sealtrain/trainer/cuda/cuda_check.h"

#include <cstdio>

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

}  // namespace sealtrain::gpu_test

#define GPU_EXPECT(checker, condition) (checker).expect((condition), #condition, __FILE__, __LINE__)
