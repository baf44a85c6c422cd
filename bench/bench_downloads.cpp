// Export downloads as the daemon serves them (issue #48): 16 at once, each folder built one at a
// time (as inside the commit group), staged sealed on disk (core/registry/exports/staging.h) and
// streamed from there in 1 MiB pieces, in one run beside what bounds it:
//   throughput   every byte sent, over the wall time, beside the ceiling: the same bytes sealed
//                and opened in memory by the chunked cipher (crypto/chunked.h) on every core, the
//                work a download cannot avoid
//   memory       the process's peak resident growth beside its bound (one folder being built,
//                plus a piece per download and 16 MiB of slack), and beside what holding each
//                built folder until it was sent cost before (16 folders)
// The "build" is a folder of the given size filled in memory: the decryption and conversion of a
// real export are timed by bench_checkpoint.
// Usage: bench_downloads [MiB-PER-FOLDER] [DIR]   (default 128, the system's temporary folder)
#include "bench_support.h"

#include "sealtrain/core/registry/exports/staging.h"
#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/random.h"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace sealtrain;

namespace {

using WallClock = std::chrono::steady_clock;
constexpr int kDownloads = 16;
constexpr std::size_t kPiece = std::size_t{1} << 20;  // api/file_transfer.h's kChunkBytes
constexpr double kMiB = 1024.0 * 1024.0;

// Resets the peak resident size to the current one (Linux 4.0 and later).
void resetPeak()
{
    std::ofstream("/proc/self/clear_refs") << "5";
}

core::ExportFolder buildFolder(std::size_t bytes, std::uint8_t seed)
{
    core::ExportFolder folder;
    folder.digest = "sha256:bench";
    std::vector<std::uint8_t> weights(bytes);
    for (std::size_t i = 0; i < weights.size(); i += 4096)
        weights[i] = static_cast<std::uint8_t>(seed + i);
    folder.files.push_back({"model.safetensors", std::move(weights)});
    folder.files.push_back({"config.json", std::vector<std::uint8_t>(800, '{')});
    folder.files.push_back({"model.sig", std::vector<std::uint8_t>(3000, 's')});
    return folder;
}

// Seals and opens `bytes` in memory with the chunked cipher on `threads` threads; bytes/s.
double cipherCeiling(std::size_t bytes, unsigned threads)
{
    const auto start = WallClock::now();
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < threads; ++t)
        workers.emplace_back([bytes] {
            const auto key = bench::take(crypto::SecretBytes::random(32));
            const std::vector<std::uint8_t> plain(bytes, 7);
            MemorySink sealed;
            auto writer = bench::take(crypto::ChunkedWriter::create(key, {}, sealed));
            bench::check(writer.write(plain));
            bench::check(writer.finish());
            const MemorySource source(sealed.bytes());
            auto reader = bench::take(crypto::ChunkedReader::open(key, {}, source));
            MemorySink opened;
            bench::check(reader.readAll(opened));
        });
    for (auto& worker : workers)
        worker.join();
    const double seconds = std::chrono::duration<double>(WallClock::now() - start).count();
    return static_cast<double>(bytes) * threads / seconds;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc > 1 && (std::string_view(argv[1]) == "--help" || std::string_view(argv[1]) == "-h")) {
        fmt::print("Usage: bench_downloads [MiB-PER-FOLDER] [DIR]\n"
                   "  MiB-PER-FOLDER  1 to 2048, default 128 (GPT-2 124M in fp32 is ~475)\n"
                   "  DIR             where the downloads are staged, default the system's "
                   "temporary folder\n");
        return 0;
    }
    const long mib = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 128;
    if (mib < 1 || mib > 2048) {
        fmt::print(stderr, "bench_downloads: MiB-PER-FOLDER must be 1 to 2048.\n");
        return 2;
    }
    const std::size_t bytes = static_cast<std::size_t>(mib) << 20;
    const std::filesystem::path base =
        argc > 2 ? std::filesystem::path(argv[2]) : std::filesystem::temp_directory_path();
    const auto root = base / fmt::format("bench_downloads-{}", ::getpid()) / "downloads";
    crypto::ensureInitialized();

    const long long before = bench::statusKiB("VmRSS:");
    resetPeak();
    std::mutex group;  // the commit group: one build at a time
    std::atomic<std::uint64_t> sent{0};
    std::atomic<std::uint64_t> checksum{0};
    const auto start = WallClock::now();
    std::vector<std::thread> downloads;
    downloads.reserve(kDownloads);
    for (int d = 0; d < kDownloads; ++d)
        downloads.emplace_back([&, d] {
            std::optional<core::StagedExport> staged;
            {
                const std::lock_guard guard(group);
                staged = bench::take(core::StagedExport::stage(
                    buildFolder(bytes, static_cast<std::uint8_t>(d)), root));
            }
            for (std::size_t i = 0; i < staged->files().size(); ++i)
                bench::check(staged->read(i, kPiece, [&](std::span<const std::uint8_t> piece) {
                    std::uint64_t sum = 0;
                    for (std::size_t b = 0; b < piece.size(); b += 4096)
                        sum += piece[b];
                    checksum += sum;
                    sent += piece.size();
                    return true;
                }));
        });
    for (auto& download : downloads)
        download.join();
    const double seconds = std::chrono::duration<double>(WallClock::now() - start).count();
    const long long peak = bench::statusKiB("VmHWM:");
    std::error_code ec;
    std::filesystem::remove_all(root.parent_path(), ec);

    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    const double rate = static_cast<double>(sent.load()) / seconds;
    const double ceiling = cipherCeiling(std::min<std::size_t>(bytes, std::size_t{64} << 20),
                                         std::min<unsigned>(cores, kDownloads));
    const double growthMiB = static_cast<double>(peak - before) / 1024.0;
    const double boundMiB =
        static_cast<double>(bytes) / kMiB + kDownloads * static_cast<double>(kPiece) / kMiB + 16.0;
    const double heldBeforeMiB = kDownloads * static_cast<double>(bytes) / kMiB;

    fmt::print("bench_downloads: {} downloads at once of a {} MiB export, {} cores "
               "(checksum {})\n",
               kDownloads, mib, cores, checksum.load());
    fmt::print("  sent          {:>8.1f} MiB/s   ceiling (chunked cipher, seal+open, in memory, "
               "{} threads) {:>8.1f} MiB/s   ratio {:.2f}\n",
               rate / kMiB, std::min<unsigned>(cores, kDownloads), ceiling / kMiB, rate / ceiling);
    fmt::print("  peak memory   +{:>7.1f} MiB     bound (one build + a piece per download + 16) "
               "{:>7.1f} MiB   held before issue #48 {:>7.1f} MiB\n",
               growthMiB, boundMiB, heldBeforeMiB);
    if (sent.load() != static_cast<std::uint64_t>(kDownloads) * (bytes + 3800)) {
        fmt::print(stderr, "bench_downloads: {} bytes were sent, not every download's.\n",
                   sent.load());
        return 1;
    }
    return 0;
}
