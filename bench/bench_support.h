// What the benchmarks share: a failure ends the program with the error's sentence (a benchmark
// that went on after one would measure something else), secrets from text, and the p50/p99 of a
// run's latencies.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/secret_bytes.h"

#include <fmt/format.h>

#include <errno.h>  // program_invocation_short_name

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::bench {

// Ends the bench at once, saying why. _Exit, not exit: an in-process control plane and the
// clients' gRPC threads are still running, and destroying statics under them crashed the process
// (a SEGFAULT in CI instead of this sentence).
[[noreturn]] inline void die(const Error& error)
{
    fmt::print(stderr, "{}: {}\n", program_invocation_short_name, error.message());
    std::fflush(stderr);
    std::fflush(stdout);
    std::_Exit(1);
}

template <typename T>
T take(Result<T> result)
{
    if (!result)
        die(result.error());
    return std::move(*result);
}

inline void check(const Result<void>& result)
{
    if (!result)
        die(result.error());
}

inline crypto::SecretBytes secret(const std::string& text)
{
    return take(crypto::SecretBytes::fromBytes(
        {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}));
}

struct Percentiles {
    double p50Ms = 0;
    double p99Ms = 0;
    std::size_t count = 0;
};

inline Percentiles percentiles(std::vector<double> milliseconds)
{
    Percentiles result;
    result.count = milliseconds.size();
    if (milliseconds.empty())
        return result;
    std::sort(milliseconds.begin(), milliseconds.end());
    result.p50Ms = milliseconds[milliseconds.size() / 2];
    result.p99Ms = milliseconds[std::min(milliseconds.size() - 1, milliseconds.size() * 99 / 100)];
    return result;
}

// A kibibyte count from /proc/self/status ("VmHWM:", "VmRSS:"); -1 when it has none.
inline long long statusKiB(const std::string& field)
{
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind(field, 0) == 0)
            return std::stoll(line.substr(field.size()));
    return -1;
}

}  // namespace sealtrain::bench
