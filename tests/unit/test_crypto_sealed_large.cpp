// A 1 GiB sealed object streamed through a file and back with bounded memory: the peak resident
// set (getrusage) is reported and must stay far below the object's size.
#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/sealed.h"

#include <sys/resource.h>

#include <QtTest/QtTest>

#include <chrono>
#include <cstring>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::crypto;

namespace {

constexpr std::uint64_t kObjectSize = std::uint64_t{1} << 30;
constexpr std::size_t kBlockSize = std::size_t{1} << 20;
constexpr long kMaxRssKiB = 256L * 1024;

// The plaintext is a function of the offset, so neither side has to keep it.
void fillAt(std::uint64_t offset, std::span<std::uint8_t> out)
{
    for (std::size_t i = 0; i < out.size(); ++i) {
        const std::uint64_t at = offset + i;
        out[i] = static_cast<std::uint8_t>((at >> 3) * 0x9e3779b97f4a7c15ULL >> (8 * (at & 7)));
    }
}

// Checks every byte it is given against fillAt().
class VerifyingSink final : public ByteSink {
public:
    Result<void> write(std::span<const std::uint8_t> bytes) override
    {
        expected_.resize(bytes.size());
        fillAt(received_, expected_);
        if (std::memcmp(expected_.data(), bytes.data(), bytes.size()) != 0)
            mismatch_ = true;
        received_ += bytes.size();
        return success();
    }
    [[nodiscard]] std::uint64_t received() const { return received_; }
    [[nodiscard]] bool mismatch() const { return mismatch_; }

private:
    std::vector<std::uint8_t> expected_;
    std::uint64_t received_ = 0;
    bool mismatch_ = false;
};

long peakRssKiB()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss;
}

}  // namespace

class TestSealedLarge : public QObject {
    Q_OBJECT

private slots:
    void oneGibibyteWithBoundedMemory()
    {
        QTemporaryDir dir;
        const std::filesystem::path path = dir.filePath("large.sealed").toStdString();
        auto key = SecretBytes::random(32);
        QVERIFY(key.ok());
        const Kek kek{"datasets", 1, std::move(key).value()};
        const KekResolver resolver = [&kek](const std::string&,
                                            std::uint32_t) -> Result<const Kek*> { return &kek; };

        const auto start = std::chrono::steady_clock::now();
        {
            auto writer = SealedWriter::create(path, kek, {"application/octet-stream", "{}"});
            QVERIFY(writer.ok());
            std::vector<std::uint8_t> block(kBlockSize);
            for (std::uint64_t offset = 0; offset < kObjectSize; offset += kBlockSize) {
                fillAt(offset, block);
                QVERIFY(writer->write(block).ok());
            }
            QVERIFY(writer->finish().ok());
        }
        const auto sealed = std::chrono::steady_clock::now();
        QCOMPARE(std::filesystem::file_size(path),
                 inspectSealedObject(path)->payloadOffset + chunkedCiphertextSize(kObjectSize));

        auto reader = SealedReader::open(path, resolver);
        QVERIFY(reader.ok());
        QCOMPARE(reader->plaintextSize(), kObjectSize);
        VerifyingSink sink;
        QVERIFY(reader->readAll(sink).ok());
        QCOMPARE(sink.received(), kObjectSize);
        QVERIFY(!sink.mismatch());
        const auto unsealed = std::chrono::steady_clock::now();

        // Random access far into the object.
        std::vector<std::uint8_t> part(100000);
        std::vector<std::uint8_t> expected(part.size());
        const std::uint64_t offset = kObjectSize - 123456789;
        QVERIFY(reader->read(offset, part).ok());
        fillAt(offset, expected);
        QVERIFY(part == expected);

        const long peak = peakRssKiB();
        const auto seconds = [](auto a, auto b) {
            return std::chrono::duration<double>(b - a).count();
        };
        qInfo("1 GiB sealed in %.1f s and unsealed in %.1f s through a file; peak RSS %ld KiB "
              "(limit %ld KiB)",
              seconds(start, sealed), seconds(sealed, unsealed), peak, kMaxRssKiB);
        QVERIFY(peak < kMaxRssKiB);
    }
};

QTEST_APPLESS_MAIN(TestSealedLarge)
#include "test_crypto_sealed_large.moc"
