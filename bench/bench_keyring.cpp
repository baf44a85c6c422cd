// Argon2id cost at the keyring's parameters (default and floor), beside the reference `argon2`
// command (Debian package argon2) deriving the same key on the same machine: the ratio shows
// whether libsodium's implementation leaves speed on the table.
//
//   bench_keyring [repeats]      default 3 repeats per setting; the best time of each is shown
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/keyring.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;
using sealtrain::crypto::Argon2Params;

double bestSeconds(int repeats, const auto& work)
{
    double best = 1e9;
    for (int i = 0; i < repeats; ++i) {
        const auto start = Clock::now();
        work();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return best;
}

int log2KiB(std::uint64_t bytes)
{
    int log = 0;
    for (std::uint64_t kib = bytes >> 10; kib > 1; kib >>= 1)
        ++log;
    return log;
}

}  // namespace

int main(int argc, char** argv)
{
    const int repeats =
        argc > 1 ? std::max(1, static_cast<int>(std::strtol(argv[1], nullptr, 10))) : 3;
    const auto passphrase =
        sealtrain::crypto::SecretBytes::fromBytes(sealtrain::asBytes("benchmark passphrase"))
            .value();
    sealtrain::crypto::Argon2Salt salt{};
    const std::string saltText = "sealtrain-salt16";
    std::copy(saltText.begin(), saltText.end(), salt.begin());

    std::printf("Argon2id (one lane, 32-byte key), best of %d\n", repeats);
    std::printf("%-10s %6s %9s %12s %14s %7s\n", "setting", "passes", "memory", "sealtrain s",
                "argon2 cmd s", "ratio");
    const std::pair<const char*, Argon2Params> settings[] = {
        {"floor", sealtrain::crypto::kArgon2Floor}, {"default", sealtrain::crypto::kArgon2Default}};
    for (const auto& setting : settings) {
        const char* name = setting.first;
        const Argon2Params params = setting.second;
        const double ours = bestSeconds(repeats, [&] {
            if (!sealtrain::crypto::deriveArgon2id(passphrase, salt, params))
                std::abort();
        });
        const std::string command =
            fmt::format("printf 'benchmark passphrase' | argon2 {} -id -t {} -m {} -p 1 -l 32 -r "
                        ">/dev/null 2>&1",
                        saltText, params.opsLimit, log2KiB(params.memLimitBytes));
        double reference = -1;
        if (std::system("command -v argon2 >/dev/null 2>&1") == 0) {
            reference = bestSeconds(repeats, [&] {
                if (std::system(command.c_str()) != 0)
                    std::abort();
            });
        }
        if (reference > 0) {
            std::printf("%-10s %6llu %6llu MiB %12.3f %14.3f %7.2f\n", name,
                        static_cast<unsigned long long>(params.opsLimit),
                        static_cast<unsigned long long>(params.memLimitBytes >> 20), ours,
                        reference, reference / ours);
        } else {
            std::printf("%-10s %6llu %6llu MiB %12.3f %14s %7s\n", name,
                        static_cast<unsigned long long>(params.opsLimit),
                        static_cast<unsigned long long>(params.memLimitBytes >> 20), ours,
                        "(no argon2)", "-");
        }
    }
    std::printf("ratio = argon2 command time / sealtrain time (above 1: ours is faster; the "
                "command's time includes starting a process, about a millisecond).\n");
    return 0;
}
