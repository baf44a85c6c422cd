// CounterRng (counter_rng.h).
#include "sealtrain/trainer/counter_rng.h"

#include <cmath>
#include <numbers>

namespace sealtrain::trainer {

namespace {

// SplitMix64's output function (Steele, Lea and Flood, 2014): a bijection that mixes well.
std::uint64_t mix(std::uint64_t z)
{
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31U);
}

}  // namespace

std::uint64_t CounterRng::bits(std::uint64_t stream, std::uint64_t index) const
{
    return mix(mix(mix(seed_) ^ stream) ^ index);
}

double CounterRng::uniform(std::uint64_t stream, std::uint64_t index) const
{
    // The top 53 bits, centred in their interval so that neither 0 nor 1 comes out.
    const auto top = static_cast<double>(bits(stream, index) >> 11U);
    return (top + 0.5) * 0x1.0p-53;
}

double CounterRng::normal(std::uint64_t stream, std::uint64_t index) const
{
    const double u1 = uniform(stream, 2 * index);
    const double u2 = uniform(stream, 2 * index + 1);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace sealtrain::trainer
