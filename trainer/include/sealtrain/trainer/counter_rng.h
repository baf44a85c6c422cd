// A counter-based random number generator: the value at (seed, stream, index) is a pure function
// of the three, so initialisation gives the same bits on every platform, in any order, on any
// number of threads, and the CUDA backend can reproduce it element by element.
#pragma once

#include <cstdint>

namespace sealtrain::trainer {

class CounterRng final {
public:
    explicit CounterRng(std::uint64_t seed)
        : seed_(seed)
    {
    }

    // 64 well-mixed bits for (stream, index): SplitMix64's finaliser applied in a chain.
    [[nodiscard]] std::uint64_t bits(std::uint64_t stream, std::uint64_t index) const;
    // Uniform in the open interval (0, 1), 53 bits of precision.
    [[nodiscard]] double uniform(std::uint64_t stream, std::uint64_t index) const;
    // Standard normal by Box–Muller from the uniforms at 2·index and 2·index + 1.
    [[nodiscard]] double normal(std::uint64_t stream, std::uint64_t index) const;

private:
    std::uint64_t seed_;
};

}  // namespace sealtrain::trainer
