// Ed25519 sign/verify per second and SHA-256 throughput, one core, beside the ceiling that
// `openssl speed -evp sha256` measures on the same machine for the same buffer size.
// Run: build/bench/bench_signing [seconds per figure, default 2]. docs/performance.md records it.
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/signing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

using namespace sealtrain::crypto;
namespace {

// CPU time of this thread: `openssl speed` divides by CPU user time too (unless -elapsed), so
// both figures stay comparable on a machine shared with other work.
double threadCpuSeconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

constexpr std::size_t kHashBuffer = 1 << 20;

// Runs `body` in batches until `seconds` of CPU time have passed; returns calls per CPU second.
template <typename Body>
double ratePerSecond(double seconds, std::size_t batch, Body&& body)
{
    std::size_t calls = 0;
    const double start = threadCpuSeconds();
    double elapsed = 0;
    do {
        for (std::size_t i = 0; i < batch; ++i)
            body();
        calls += batch;
        elapsed = threadCpuSeconds() - start;
    } while (elapsed < seconds);
    return static_cast<double>(calls) / elapsed;
}

// Bytes per second from `openssl speed -mr`, whose result line reads "+F:<n>:sha256:<bytes/s>";
// 0 when openssl is not there.
double opensslSha256Ceiling(double seconds)
{
    const std::string command =
        "openssl speed -mr -evp sha256 -bytes " + std::to_string(kHashBuffer) + " -seconds "
        + std::to_string(std::max(1L, std::lround(seconds))) + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (!pipe)
        return 0;
    char line[512];
    double bytesPerSecond = 0;
    while (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
        const std::string text(line);
        if (text.rfind("+F:", 0) != 0)
            continue;
        const auto last = text.rfind(':');
        bytesPerSecond = std::strtod(text.c_str() + last + 1, nullptr);
    }
    return bytesPerSecond;
}

}  // namespace

int main(int argc, char** argv)
{
    const double seconds = argc > 1 ? std::strtod(argv[1], nullptr) : 2.0;
    if (!(seconds > 0)) {
        std::fputs("bench_signing: the argument is seconds per figure, e.g. 2.\n", stderr);
        return 2;
    }
    auto key = SigningKey::generate();
    if (!key) {
        std::fprintf(stderr, "bench_signing: %s\n", key.error().message().c_str());
        return 1;
    }
    const std::vector<std::uint8_t> message(64, 0x5a);
    const auto signature = key->sign(message);
    Ed25519Signature sink{};
    const double signs = ratePerSecond(seconds, 256, [&] { sink = key->sign(message); });
    bool allVerified = true;
    const double verifies = ratePerSecond(seconds, 256, [&] {
        allVerified = key->publicKey().verify(message, signature) && allVerified;
    });

    const std::vector<std::uint8_t> buffer(kHashBuffer, 0xa5);
    Sha256Digest digest{};
    const double hashes = ratePerSecond(seconds, 4, [&] { digest = sha256(buffer); });
    const double oursMBps = hashes * static_cast<double>(kHashBuffer) / 1e6;
    const double ceilingMBps = opensslSha256Ceiling(seconds) / 1e6;

    std::printf("Ed25519 sign (64-byte message)    %12.0f /s\n", signs);
    std::printf("Ed25519 verify (64-byte message)  %12.0f /s\n", verifies);
    std::printf("SHA-256, 1 MiB buffers            %12.1f MB/s\n", oursMBps);
    if (ceilingMBps > 0) {
        std::printf("openssl speed -evp sha256 (1 MiB) %12.1f MB/s\n", ceilingMBps);
        std::printf("ratio ours / openssl              %12.2f\n", oursMBps / ceilingMBps);
    } else {
        std::printf("openssl speed -evp sha256         not available (install openssl)\n");
    }
    // Keep the results observable so the loops are not optimised away.
    volatile std::uint8_t observed = static_cast<std::uint8_t>(sink[0] ^ digest[0]);
    static_cast<void>(observed);
    return allVerified ? 0 : 1;
}
