// Audit log throughput beside the machine's SHA-256 ceiling, in one run (docs/performance.md):
//   appends/s     AuditLog::append + commit into a MemoryStore, heads every 1000 entries
//   verify/s      LogVerifier streaming a whole log: strict decode, chain, tree frontier
//   bundle/s      verifyBundle on a complete export (roots recomputed from all entries; the
//                 per-entry inclusion proofs are checked for form only), beside the rate of
//                 leaf-hashing the same entries alone, timed in the same run
// The ceiling is `openssl speed -evp sha256` at 64- and 256-byte blocks, run as a subprocess.
// Rates are per second of the benchmark thread's CPU time.
// Usage: bench_audit [ENTRIES]   (default 10000000; the streamed log is never held in memory)
#include "sealtrain/audit/audit_log.h"
#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/memory_store.h"
#include "sealtrain/crypto/signing.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>

using namespace sealtrain;

// The thread's CPU time: the 2-core machines these run on are shared, and `openssl speed`
// reports CPU time too, so both sides of the ratio are measured the same way.
struct Clock {
    using duration = std::chrono::nanoseconds;
    using time_point = std::chrono::time_point<Clock, duration>;
    static time_point now()
    {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return time_point(duration(std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec));
    }
};

namespace {

double seconds(Clock::duration d)
{
    return std::chrono::duration<double>(d).count();
}

double peakRssMiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

struct Ceiling {
    double bytesPerSecond64 = 0;
    double bytesPerSecond256 = 0;
};

// Parses the "sha256" row of `openssl speed -evp sha256` ("...k" columns, 1000s of bytes/s).
Ceiling opensslCeiling()
{
    Ceiling ceiling;
    FILE* pipe = popen("openssl speed -seconds 2 -evp sha256 2>/dev/null", "r");
    if (pipe == nullptr)
        return ceiling;
    char line[512];
    while (fgets(line, sizeof line, pipe) != nullptr) {
        std::istringstream in(line);
        std::string name;
        in >> name;
        if (name != "sha256" && name != "SHA256")
            continue;
        std::string b16;
        std::string b64;
        std::string b256;
        in >> b16 >> b64 >> b256;
        ceiling.bytesPerSecond64 = std::strtod(b64.c_str(), nullptr) * 1000.0;
        ceiling.bytesPerSecond256 = std::strtod(b256.c_str(), nullptr) * 1000.0;
    }
    pclose(pipe);
    return ceiling;
}

audit::Entry entryNumber(std::uint64_t i)
{
    audit::Entry e;
    e.sequence = i;
    e.timeNs = 1796029200000000000ULL + i * 1000U;
    e.actor = {audit::ActorKind::User, i % 2 == 0 ? "alice" : "bob", "session-7", "password+totp"};
    e.action = i % 3 == 0 ? "job.approve" : "dataset.import";
    e.target = {"job", "job-" + std::to_string(i % 1000)};
    e.requestId = "req-" + std::to_string(i);
    e.details = {audit::textDetail("note", "benchmark entry")};
    return e;
}

audit::EntryDraft draftNumber(std::uint64_t i)
{
    const audit::Entry e = entryNumber(i);
    audit::EntryDraft d;
    d.actor = e.actor;
    d.action = e.action;
    d.target = e.target;
    d.requestId = e.requestId;
    d.details = e.details;
    return d;
}

class FixedClock final : public audit::Clock {
public:
    [[nodiscard]] std::chrono::system_clock::time_point now() const override
    {
        return std::chrono::system_clock::time_point{std::chrono::seconds{1796029200}};
    }
};

}  // namespace

int main(int argc, char** argv)
{
    const std::uint64_t total = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000000U;
    const Ceiling ceiling = opensslCeiling();

    // 1. Streaming whole-log verification, generated in chunks; only add() is timed.
    audit::LogVerifier verifier;
    constexpr std::uint64_t kChunk = 1U << 16U;
    std::vector<std::vector<std::uint8_t>> chunk;
    audit::Hash previous{};
    Clock::duration verifyTime{};
    std::uint64_t entryBytes = 0;
    for (std::uint64_t first = 0; first < total; first += kChunk) {
        chunk.clear();
        for (std::uint64_t i = first; i < std::min(total, first + kChunk); ++i) {
            audit::Entry e = entryNumber(i);
            e.previousLeafHash = previous;
            chunk.push_back(*audit::encodeEntry(e));
            previous = audit::leafHash(chunk.back());
            entryBytes += chunk.back().size();
        }
        const auto start = Clock::now();
        for (const auto& bytes : chunk) {
            if (!verifier.add(bytes)) {
                std::fprintf(stderr, "verification failed\n");
                return 1;
            }
        }
        verifyTime += Clock::now() - start;
    }
    const double verifyRate = static_cast<double>(total) / seconds(verifyTime);
    const double streamRss = peakRssMiB();

    // 2. Appends through AuditLog into a MemoryStore.
    const std::uint64_t appends = std::min<std::uint64_t>(total, 300000);
    auto key = crypto::SigningKey::generate();
    FixedClock clock;
    audit::MemoryStore store;
    auto log = audit::AuditLog::open(store, *key, nullptr, clock,
                                     {"bench.sealtrain/audit", {1000, {}, {}}, std::nullopt});
    const auto appendStart = Clock::now();
    for (std::uint64_t i = 0; i < appends; ++i) {
        auto transaction = store.begin();
        if (!(*log)->append(*transaction, draftNumber(i))) {
            std::fprintf(stderr, "append failed\n");
            return 1;
        }
        transaction->commit();
    }
    const double appendRate = static_cast<double>(appends) / seconds(Clock::now() - appendStart);

    // 3. A complete bundle of 100 000 entries, with an inclusion proof per entry.
    audit::MemoryStore bundleStore;
    auto bundleLog = audit::AuditLog::open(bundleStore, *key, nullptr, clock,
                                           {"bench.sealtrain/audit", {1000, {}, {}}, std::nullopt});
    const std::uint64_t bundleEntries = std::min<std::uint64_t>(total, 100000);
    for (std::uint64_t i = 0; i < bundleEntries; ++i) {
        auto transaction = bundleStore.begin();
        (void)(*bundleLog)->append(*transaction, draftNumber(i));
        transaction->commit();
    }
    const std::string bundle = *audit::exportBundle(**bundleLog, {});
    // The ceiling for this figure: SHA-256 leaf hashes of the same entries, nothing else.
    const auto stored = *bundleStore.readEntries(0, bundleEntries);
    const auto leafStart = Clock::now();
    audit::Hash leafSum{};
    for (const auto& entry : stored)
        leafSum[0] ^= audit::leafHash(entry.bytes)[0];
    const double leafRate = static_cast<double>(bundleEntries) / seconds(Clock::now() - leafStart);
    const auto bundleStart = Clock::now();
    audit::VerifyOptions options;
    options.trustedKey = key->publicKey().keyId();
    options.keepEntries = false;  // as `sealtrainctl audit verify`, which only counts them
    const auto report = audit::verifyBundle(bundle, options);
    const double bundleRate =
        static_cast<double>(bundleEntries) / seconds(Clock::now() - bundleStart);
    if (report.verdict() != audit::Verdict::Verified) {
        std::fprintf(stderr, "bundle verification failed: %s\n",
                     report.ok() ? report.warnings.front().c_str() : report.errors.front().c_str());
        return 1;
    }

    // Work per verified entry: the leaf hash over 0x00 || entry, and on average one node hash.
    const double meanEntry = static_cast<double>(entryBytes) / static_cast<double>(total);
    const double ceilingRate =
        ceiling.bytesPerSecond256 > 0
            ? 1.0 / ((meanEntry + 1) / ceiling.bytesPerSecond256 + 65.0 / ceiling.bytesPerSecond64)
            : 0;
    std::printf("SHA-256 ceiling (openssl speed -evp sha256): %.0f MB/s at 64 B, %.0f MB/s at "
                "256 B\n",
                ceiling.bytesPerSecond64 / 1e6, ceiling.bytesPerSecond256 / 1e6);
    std::printf("mean entry size: %.0f bytes; hashing ceiling for leaf + node: %.0f entries/s\n",
                meanEntry, ceilingRate);
    std::printf("verify (streaming, %llu entries): %.0f entries/s = %.2f of the ceiling; peak RSS "
                "%.1f MiB\n",
                static_cast<unsigned long long>(total), verifyRate,
                ceilingRate > 0 ? verifyRate / ceilingRate : 0, streamRss);
    std::printf("append (%llu entries, heads every 1000): %.0f entries/s = %.2f of the ceiling\n",
                static_cast<unsigned long long>(appends), appendRate,
                ceilingRate > 0 ? appendRate / ceilingRate : 0);
    std::printf("bundle verify (%llu entries, %.1f MB, complete export): %.0f entries/s = %.2f "
                "of the ceiling, %.2f of leaf-hashing the same entries alone (%.0f entries/s, "
                "checksum %02x)\n",
                static_cast<unsigned long long>(bundleEntries),
                static_cast<double>(bundle.size()) / 1e6, bundleRate,
                ceilingRate > 0 ? bundleRate / ceilingRate : 0, bundleRate / leafRate, leafRate,
                leafSum[0]);
    std::printf("peak RSS at exit: %.1f MiB\n", peakRssMiB());
    return 0;
}
