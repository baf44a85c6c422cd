// bench_dataset: dataset import MB/s and reader tokens/s (one core, decrypting) beside the
// unseal ceiling (SealedReader over the same shards, chunk by chunk), in one run (issue #6).
//
//   bench_dataset [--mb N]          import an N MB generated corpus (default 200), then read
//   bench_dataset --corpus-gb G     import a G GB corpus and print the peak RSS (the issue's
//                                   2 GB / 300 MB check)
//
// The corpus is generated into a temporary folder and removed afterwards. Times are wall
// clock for import (it reads and writes files) and this thread's CPU time for reading.
#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/sealed.h"
#include "sealtrain/dataset/import.h"
#include "sealtrain/dataset/reader.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

using namespace sealtrain;
using namespace sealtrain::dataset;
namespace fs = std::filesystem;

namespace {

double threadSeconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

[[noreturn]] void fail(const Error& error)
{
    fmt::print(stderr, "bench_dataset: {}\n", error.message());
    std::exit(1);
}

// Blank-line separated records of 1-8 KB of pseudo-random words, in 64 MB files.
void generateCorpus(const fs::path& folder, std::uint64_t bytes)
{
    fs::create_directories(folder);
    std::uint64_t state = 0x243F6A8885A308D3ULL;
    const auto next = [&] {
        state ^= state << 13U;
        state ^= state >> 7U;
        state ^= state << 17U;
        return state;
    };
    std::uint64_t written = 0;
    std::string record;
    for (int file = 0; written < bytes; ++file) {
        std::ofstream out(folder / fmt::format("part-{:04}.txt", file), std::ios::binary);
        std::uint64_t inFile = 0;
        while (inFile < (std::uint64_t{64} << 20U) && written < bytes) {
            record.clear();
            const std::uint64_t length = 1024 + next() % 7168;
            while (record.size() < length) {
                record += "word";
                record += std::to_string(next() % 50000);
                record.push_back(next() % 16 == 0 ? '\n' : ' ');
            }
            record += "\n\n";
            out << record;
            inFile += record.size();
            written += record.size();
        }
    }
}

long peakRssKiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv)
{
    std::uint64_t corpusBytes = 200'000'000;
    bool rssMode = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--mb") {
            corpusBytes = std::stoull(argv[i + 1]) * 1'000'000;
        } else if (flag == "--corpus-gb") {
            corpusBytes = std::stoull(argv[i + 1]) * 1'000'000'000;
            rssMode = true;
        } else {
            fmt::print(stderr, "usage: bench_dataset [--mb N | --corpus-gb G]\n");
            return 2;
        }
    }
    const fs::path work = fs::temp_directory_path() / fmt::format("bench_dataset-{}", ::getpid());
    fs::create_directories(work / "out");
    generateCorpus(work / "corpus", corpusBytes);
    const long rssBeforeImport = peakRssKiB();

    auto key = crypto::SecretBytes::random(32);
    if (!key)
        fail(key.error());
    const crypto::Kek kek{"datasets", 1, std::move(key).value()};
    ByteTokenizer tokenizer;
    ImportOptions options;
    options.inputs = {work / "corpus"};
    options.format = InputFormat::TextRecords;
    options.outputRoot = work / "out";
    options.maxRecordBytes = std::size_t{64} * 1024;
    const auto start = std::chrono::steady_clock::now();
    auto imported = importDataset(options, tokenizer, kek);
    if (!imported)
        fail(imported.error());
    const double importSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("import: {:.1f} MB in {:.2f} s = {:.1f} MB/s ({} records, {} train tokens)\n",
               static_cast<double>(imported->report.bytesRead) / 1e6, importSeconds,
               static_cast<double>(imported->report.bytesRead) / 1e6 / importSeconds,
               imported->report.recordsKept, imported->manifest.train.tokens);
    fmt::print("peak RSS: {:.1f} MiB (after generating the corpus: {:.1f} MiB)\n",
               static_cast<double>(peakRssKiB()) / 1024.0,
               static_cast<double>(rssBeforeImport) / 1024.0);

    if (!rssMode) {
        const crypto::KekResolver resolver = [&kek](const std::string&,
                                                    std::uint32_t) -> Result<const crypto::Kek*> {
            return &kek;
        };
        // Ceiling: every chunk of every train shard through SealedReader on this thread.
        std::vector<std::uint8_t> chunk(crypto::kChunkSize);
        double ceilingStart = threadSeconds();
        std::uint64_t ceilingBytes = 0;
        for (const ShardEntry& shard : imported->manifest.train.shards) {
            auto reader = crypto::SealedReader::open(imported->folder / shard.file, resolver);
            if (!reader)
                fail(reader.error());
            for (std::uint64_t c = 0; c < reader->chunkCount(); ++c) {
                auto got = reader->readChunk(c, chunk);
                if (!got)
                    fail(got.error());
                ceilingBytes += *got;
            }
        }
        const double ceilingSeconds = threadSeconds() - ceilingStart;
        const double ceilingTokens =
            static_cast<double>(ceilingBytes) / imported->manifest.tokenBytes / ceilingSeconds;
        // The reader, on this thread (no prefetch), shuffled, context 1024, batch 16.
        ReaderOptions ro;
        ro.context = 1024;
        ro.batchSize = 16;
        ro.seed = 1;
        ro.prefetchBatches = 0;
        auto reader = DatasetReader::open(imported->folder, imported->datasetId, resolver, ro);
        if (!reader)
            fail(reader.error());
        const double readStart = threadSeconds();
        std::uint64_t tokens = 0;
        for (std::uint64_t b = 0; b < (*reader)->batchesPerEpoch(); ++b) {
            auto batch = (*reader)->next();
            if (!batch)
                fail(batch.error());
            tokens += batch->sequences * (ro.context + 1);
        }
        const double readSeconds = threadSeconds() - readStart;
        fmt::print(
            "unseal ceiling (SealedReader, chunk by chunk): {:.1f} MB/s = {:.1f} M tokens/s\n",
            static_cast<double>(ceilingBytes) / 1e6 / ceilingSeconds, ceilingTokens / 1e6);
        fmt::print("reader (shuffled, context 1024, one core, decrypting): {:.1f} M tokens/s "
                   "({:.0f} % of the ceiling; goal 50 M tokens/s)\n",
                   static_cast<double>(tokens) / readSeconds / 1e6,
                   100.0 * static_cast<double>(tokens) / readSeconds / ceilingTokens);
    }
    fs::remove_all(work);
    return 0;
}
