// bench_sealed: seal and unseal throughput of sealed objects on one core, beside the AES-256-GCM
// ceiling that `openssl speed` measures on the same machine for the same 16 KiB chunks. Unseal is
// measured three ways: the whole object (readAll), and chunk by chunk with readChunk (the dataset
// reader's path) from memory and from a source that copies each chunk in, as a file read does.
//
//   bench_sealed [MiB]     (default 512 MiB per measurement; best of three runs)
//
// Both sides stay in memory so the figures are the crypto path, not the disk; times are this
// thread's CPU time. MB = 10^6 bytes, as openssl speed counts.
#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/sealed.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::crypto;

namespace {

class DiscardSink final : public ByteSink {
public:
    Result<void> write(std::span<const std::uint8_t> bytes) override
    {
        total_ += bytes.size();
        return success();
    }
    [[nodiscard]] std::uint64_t total() const { return total_; }

private:
    std::uint64_t total_ = 0;
};

// CPU time of this thread: `openssl speed` divides by CPU user time too, so both figures stay
// comparable on a machine shared with other work.
double threadSeconds()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

// Sealing `size` bytes written in 1 MiB pieces; returns MB/s.
double sealOnce(const Kek& kek, std::uint64_t size, ByteSink& sink)
{
    std::vector<std::uint8_t> block(std::size_t{1} << 20, 0x5a);
    const double start = threadSeconds();
    auto writer = SealedWriter::create(sink, kek, {"application/octet-stream", ""});
    if (!writer)
        std::abort();
    for (std::uint64_t done = 0; done < size; done += block.size()) {
        if (!writer->write(block))
            std::abort();
    }
    if (!writer->finish())
        std::abort();
    return static_cast<double>(size) / (threadSeconds() - start) / 1e6;
}

// A source that holds its bytes like a file in the page cache: readAt copies, there is no view.
class CopyingSource final : public RandomAccessSource {
public:
    explicit CopyingSource(const RandomAccessSource& base)
        : base_(&base)
    {
    }
    [[nodiscard]] std::uint64_t size() const override { return base_->size(); }
    [[nodiscard]] Result<void> readAt(std::uint64_t offset,
                                      std::span<std::uint8_t> out) const override
    {
        return base_->readAt(offset, out);
    }

private:
    const RandomAccessSource* base_;
};

// Unsealing every chunk with readChunk, as the dataset reader does; returns MB/s.
double unsealByChunk(const RandomAccessSource& source, const KekResolver& resolver,
                     std::uint64_t size)
{
    const double start = threadSeconds();
    auto reader = SealedReader::open(source, resolver);
    if (!reader)
        std::abort();
    std::vector<std::uint8_t> chunk(kChunkSize);
    for (std::uint64_t i = 0; i < reader->chunkCount(); ++i) {
        if (!reader->readChunk(i, chunk))
            std::abort();
    }
    return static_cast<double>(size) / (threadSeconds() - start) / 1e6;
}

// The `openssl speed` command for AES-256-GCM over 16 KiB buffers, encrypting or decrypting.
std::string speedCommand(bool decrypt)
{
    return fmt::format("openssl speed {}-evp aes-256-gcm -bytes {} -seconds 2",
                       decrypt ? "-decrypt " : "", kChunkSize);
}

// AES-256-GCM MB/s for 16 KiB buffers from `openssl speed`, or a negative number.
double opensslCeiling(bool decrypt)
{
    const std::string command = speedCommand(decrypt) + " 2>/dev/null";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    if (!pipe)
        return -1;
    std::string output;
    std::array<char, 512> line{};
    while (fgets(line.data(), static_cast<int>(line.size()), pipe.get()) != nullptr)
        output += line.data();
    // The last line reads "AES-256-GCM   1234567.89k": thousands of bytes per second.
    std::istringstream lines(output);
    std::string text;
    double kilobytes = -1;
    while (std::getline(lines, text)) {
        std::istringstream words(text);
        std::string name;
        std::string value;
        words >> name >> value;
        if ((name == "AES-256-GCM" || name == "aes-256-gcm") && !value.empty()
            && value.back() == 'k')
            kilobytes = std::strtod(value.c_str(), nullptr);
    }
    return kilobytes < 0 ? -1 : kilobytes * 1000 / 1e6;
}

}  // namespace

int main(int argc, char** argv)
{
    const std::uint64_t mebibytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 512;
    const std::uint64_t size = std::max<std::uint64_t>(mebibytes, 1) << 20;
    auto key = SecretBytes::random(32);
    if (!key)
        return 1;
    const Kek kek{"bench", 1, std::move(key).value()};
    const KekResolver resolver = [&kek](const std::string&, std::uint32_t) -> Result<const Kek*> {
        return &kek;
    };

    double seal = 0;
    for (int run = 0; run < 3; ++run) {
        DiscardSink sink;
        seal = std::max(seal, sealOnce(kek, size, sink));
    }

    MemorySink sealed;
    sealOnce(kek, size, sealed);
    MemorySource source(sealed.bytes());
    double unseal = 0;
    for (int run = 0; run < 3; ++run) {
        const double start = threadSeconds();
        auto reader = SealedReader::open(source, resolver);
        DiscardSink sink;
        if (!reader || !reader->readAll(sink) || sink.total() != size)
            return 1;
        unseal = std::max(unseal, static_cast<double>(size) / (threadSeconds() - start) / 1e6);
    }

    // The dataset reader's path: one readChunk per chunk, from memory and copied in as from a
    // file in the page cache.
    const CopyingSource copied(source);
    double byChunk = 0;
    double byCopiedChunk = 0;
    for (int run = 0; run < 3; ++run) {
        byChunk = std::max(byChunk, unsealByChunk(source, resolver, size));
        byCopiedChunk = std::max(byCopiedChunk, unsealByChunk(copied, resolver, size));
    }

    const double ceiling = opensslCeiling(false);
    const double decryptCeiling = opensslCeiling(true);
    fmt::print("sealed objects, {} KiB chunks, {} MiB per run, best of 3, one core\n",
               kChunkSize / 1024, mebibytes);
    fmt::print("  seal     {:8.0f} MB/s\n", seal);
    fmt::print("  unseal   {:8.0f} MB/s  (readAll)\n", unseal);
    fmt::print("  chunks   {:8.0f} MB/s  (readChunk, in memory)\n", byChunk);
    fmt::print("  copied   {:8.0f} MB/s  (readChunk, each chunk copied in as from a file)\n",
               byCopiedChunk);
    if (ceiling <= 0 || decryptCeiling <= 0) {
        fmt::print("  ceiling  unavailable (openssl speed did not run)\n");
        return 0;
    }
    fmt::print("  ceiling  {:8.0f} MB/s  ({})\n", ceiling, speedCommand(false));
    fmt::print("  decrypt  {:8.0f} MB/s  ({})\n", decryptCeiling, speedCommand(true));
    fmt::print("  ratio    seal {:.2f}, unseal {:.2f}, chunks {:.2f}, copied {:.2f} of the ceiling "
               "(goal: unseal >= 0.80)\n",
               seal / ceiling, unseal / ceiling, byChunk / ceiling, byCopiedChunk / ceiling);
    fmt::print("           unseal {:.2f}, chunks {:.2f} of the decrypt ceiling\n",
               unseal / decryptCeiling, byChunk / decryptCeiling);
    return 0;
}
