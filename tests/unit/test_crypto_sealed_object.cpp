// Sealed objects: round trips at the chunk boundaries (memory and file), inspection without
// keys, KEK rotation, the atomic writer, and the attacks of issue #3, each of which must be
// refused with one clear sentence and release no plaintext it could not authenticate.
#include "sealtrain/crypto/chunked.h"
#include "sealtrain/crypto/sealed.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::crypto;

namespace {

Kek makeKek(const std::string& id, std::uint32_t version)
{
    auto key = SecretBytes::random(32);
    if (!key)
        qFatal("cannot allocate a test key");
    return Kek{id, version, std::move(key).value()};
}

// A keyring stand-in: KEKs by (id, version), some of them retired.
struct TestKeys {
    std::map<std::pair<std::string, std::uint32_t>, const Kek*> keks;
    std::set<std::pair<std::string, std::uint32_t>> retired;

    void add(const Kek& kek) { keks[{kek.id, kek.version}] = &kek; }

    [[nodiscard]] KekResolver resolver() const
    {
        return [this](const std::string& id, std::uint32_t version) -> Result<const Kek*> {
            if (retired.count({id, version}) != 0) {
                return Error(ErrorCode::PermissionDenied,
                             "That KEK version is retired and can no longer unwrap keys.");
            }
            const auto found = keks.find({id, version});
            if (found == keks.end())
                return Error(ErrorCode::NotFound, "No such KEK; load the right keyring.");
            return found->second;
        };
    }
};

std::vector<std::uint8_t> patterned(std::size_t size, std::uint8_t seed)
{
    std::vector<std::uint8_t> bytes(size);
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<std::uint8_t>((i * 167 + seed) ^ (i >> 11));
    return bytes;
}

std::vector<std::uint8_t> sealToMemory(const Kek& kek, std::span<const std::uint8_t> message,
                                       const SealedMetadata& metadata = {"application/octet-stream",
                                                                         R"({"name":"test"})"})
{
    MemorySink sink;
    auto writer = SealedWriter::create(sink, kek, metadata);
    if (!writer || !writer->write(message).ok() || !writer->finish().ok())
        qFatal("sealing failed");
    return sink.take();
}

std::vector<std::uint8_t> readFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool allZero(std::span<const std::uint8_t> bytes)
{
    return std::all_of(bytes.begin(), bytes.end(), [](auto b) { return b == 0; });
}

// Opening must fail with one sentence; returns the code.
ErrorCode openFails(std::span<const std::uint8_t> object, const KekResolver& resolver)
{
    MemorySource source(object);
    auto reader = SealedReader::open(source, resolver);
    if (reader.ok())
        return ErrorCode::Internal;
    if (!isOneSentence(reader.error().message()))
        qFatal("not one sentence: %s", reader.error().message().c_str());
    return reader.error().code();
}

}  // namespace

// Every bit of the object is flipped in the default build. Under AddressSanitizer (CI's step 2) a
// flip inside a chunk costs about half a millisecond, 130 s for the 262,400 of them, so there every
// bit of every 16th byte of the chunks is flipped (and every bit outside them still is).
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kChunkByteStride = 16;
#else
constexpr std::size_t kChunkByteStride = 1;
#endif

class TestSealedObject : public QObject {
    Q_OBJECT

private:
    Kek kek_ = makeKek("datasets", 1);
    TestKeys keys_;

private slots:
    void initTestCase() { keys_.add(kek_); }

    void roundTrip_data()
    {
        QTest::addColumn<qulonglong>("size");
        QTest::newRow("0") << 0ULL;
        QTest::newRow("1") << 1ULL;
        QTest::newRow("chunk-1") << qulonglong{kChunkSize - 1};
        QTest::newRow("chunk") << qulonglong{kChunkSize};
        QTest::newRow("chunk+1") << qulonglong{kChunkSize + 1};
        QTest::newRow("many chunks") << qulonglong{150 * kChunkSize + 12345};
    }

    void roundTrip()
    {
        QFETCH(qulonglong, size);
        const auto message = patterned(static_cast<std::size_t>(size), 1);
        const SealedMetadata metadata{"application/x-safetensors", R"({"step":42,"ü":"ok"})"};
        const auto object = sealToMemory(kek_, message, metadata);
        MemorySource source(object);

        auto info = inspectSealedObject(source);
        QVERIFY(info.ok());
        QCOMPARE(info->formatVersion, kSealedFormatVersion);
        QCOMPARE(info->suite, kSealedSuiteCobblestone256);
        QCOMPARE(info->metadata.contentType, metadata.contentType);
        QCOMPARE(info->metadata.metadata, metadata.metadata);
        QCOMPARE(info->kekId, std::string("datasets"));
        QCOMPARE(info->kekVersion, 1U);
        QCOMPARE(info->plaintextSize, size);
        QCOMPARE(info->payloadSize, chunkedCiphertextSize(size));

        auto reader = SealedReader::open(source, keys_.resolver());
        QVERIFY(reader.ok());
        QCOMPARE(reader->plaintextSize(), size);
        QCOMPARE(reader->chunkCount(), size / kChunkSize + 1);
        QCOMPARE(reader->metadata().metadata, metadata.metadata);
        QVERIFY(reader->info().objectId == info->objectId);
        MemorySink out;
        QVERIFY(reader->readAll(out).ok());
        QVERIFY(out.bytes() == message);
        std::vector<std::uint8_t> chunk(kChunkSize);
        for (std::uint64_t i = 0; i < reader->chunkCount(); i += 7) {
            auto got = reader->readChunk(i, chunk);
            QVERIFY(got.ok());
            QCOMPARE(*got, reader->chunkPlaintextSize(i));
            QVERIFY(std::equal(chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(*got),
                               message.begin() + static_cast<std::ptrdiff_t>(i * kChunkSize)));
        }
        if (size > 10) {
            std::vector<std::uint8_t> part(static_cast<std::size_t>(size) / 2);
            QVERIFY(reader->read(size / 3, part).ok());
            QVERIFY(std::equal(part.begin(), part.end(),
                               message.begin() + static_cast<std::ptrdiff_t>(size / 3)));
        }
    }

    void fileRoundTripAndAtomicWriter()
    {
        QTemporaryDir dir;
        const std::filesystem::path path = dir.filePath("object.sealed").toStdString();
        const auto message = patterned(3 * kChunkSize + 5, 2);
        {
            auto writer = SealedWriter::create(path, kek_, {"text/plain", "{}"});
            QVERIFY(writer.ok());
            QVERIFY(writer->write(message).ok());
            // Destroyed without finish(): nothing may be left behind.
        }
        QVERIFY(std::filesystem::is_empty(dir.path().toStdString()));
        {
            auto writer = SealedWriter::create(path, kek_, {"text/plain", "{}"});
            QVERIFY(writer.ok());
            QVERIFY(writer->write(message).ok());
            QVERIFY(writer->finish().ok());
            QVERIFY(!writer->finish().ok());
        }
        QCOMPARE(std::distance(std::filesystem::directory_iterator(dir.path().toStdString()),
                               std::filesystem::directory_iterator()),
                 1);
        QCOMPARE(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
                 std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
        auto again = SealedWriter::create(path, kek_, {"text/plain", "{}"});
        QVERIFY(!again.ok());
        QCOMPARE(again.error().code(), ErrorCode::AlreadyExists);

        auto info = inspectSealedObject(path);
        QVERIFY(info.ok());
        QCOMPARE(info->plaintextSize, message.size());
        auto reader = SealedReader::open(path, keys_.resolver());
        QVERIFY(reader.ok());
        MemorySink out;
        QVERIFY(reader->readAll(out).ok());
        QVERIFY(out.bytes() == message);

        auto missing = SealedReader::open(std::filesystem::path(dir.filePath("nope").toStdString()),
                                          keys_.resolver());
        QVERIFY(!missing.ok());
        QCOMPARE(missing.error().code(), ErrorCode::NotFound);
    }

    void refusesBadMetadata()
    {
        MemorySink sink;
        QVERIFY(!SealedWriter::create(sink, kek_, {std::string(256, 'a'), ""}).ok());
        QVERIFY(!SealedWriter::create(sink, kek_, {"text/plain\n", ""}).ok());
        QVERIFY(!SealedWriter::create(sink, kek_, {"", std::string(65536, 'a')}).ok());
        QVERIFY(!SealedWriter::create(sink, kek_, {"", "\xff\xfe"}).ok());
        const Kek badId{"Datasets!", 1, SecretBytes::random(32).value()};
        QVERIFY(!SealedWriter::create(sink, badId, {}).ok());
        QVERIFY(sink.bytes().empty());
    }

    void everyBitFlipIsRefused()
    {
        // Two full chunks and a short one: header, key block, salt, commitment, three chunks.
        const auto message = patterned(2 * kChunkSize + 100, 3);
        auto object = sealToMemory(kek_, message);
        const auto info = inspectSealedObject(MemorySource(object)).value();
        const auto resolver = keys_.resolver();
        const std::uint64_t chunksStart = info.payloadOffset + kChunkedHeaderSize;
        const std::uint64_t finalChunkStart = chunksStart + 2 * kEncryptedChunkSize;
        // A flip inside a non-final chunk leaves everything open() checks intact, so one reader
        // over the (mutated in place) bytes serves for all of them; every other flip gets a
        // fresh open(), which must fail.
        MemorySource live(object);
        auto chunkReader = SealedReader::open(live, resolver);
        QVERIFY(chunkReader.ok());
        std::vector<std::uint8_t> chunk(kChunkSize, 0);
        std::size_t refusedAtOpen = 0;
        std::size_t refusedAtChunk = 0;
        std::size_t chunkBytesFlipped = 0;
        for (std::size_t byte = 0; byte < object.size(); ++byte) {
            const bool inChunk = byte >= chunksStart && byte < finalChunkStart;
            if (inChunk && (byte - chunksStart) % kChunkByteStride != 0)
                continue;
            chunkBytesFlipped += inChunk ? 1 : 0;
            for (unsigned bit = 0; bit < 8; ++bit) {
                object[byte] ^= static_cast<std::uint8_t>(1U << bit);
                if (!inChunk || (bit == 0 && byte % 997 == 0)) {
                    MemorySource source(object);
                    auto reader = SealedReader::open(source, resolver);
                    if (!inChunk) {
                        QVERIFY2(!reader.ok(), qPrintable(QString("byte %1").arg(byte)));
                        QVERIFY(isOneSentence(reader.error().message()));
                        ++refusedAtOpen;
                    } else {
                        QVERIFY(reader.ok());
                    }
                }
                if (inChunk) {
                    const std::uint64_t index = (byte - chunksStart) / kEncryptedChunkSize;
                    std::fill(chunk.begin(), chunk.end(), 0xaa);
                    auto got = chunkReader->readChunk(index, chunk);
                    QVERIFY2(!got.ok(), qPrintable(QString("byte %1").arg(byte)));
                    QCOMPARE(got.error().code(), ErrorCode::Integrity);
                    QVERIFY(allZero(chunk));
                    if (bit == 0 && byte % 97 == 0) {
                        MemorySink out;
                        QVERIFY(!chunkReader->readAll(out).ok());
                        QCOMPARE(out.bytes().size(), index * kChunkSize);
                        QVERIFY(
                            std::equal(out.bytes().begin(), out.bytes().end(), message.begin()));
                    }
                    ++refusedAtChunk;
                }
                object[byte] ^= static_cast<std::uint8_t>(1U << bit);
            }
        }
        qInfo("%zu single-bit flips: %zu refused at open, %zu refused at their chunk (one byte in "
              "%zu "
              "of the chunks flipped)",
              refusedAtOpen + refusedAtChunk, refusedAtOpen, refusedAtChunk, kChunkByteStride);
        const std::size_t outsideChunks = object.size() - 2 * kEncryptedChunkSize;
        QCOMPARE(refusedAtOpen, outsideChunks * 8);
        QCOMPARE(chunkBytesFlipped,
                 (2 * kEncryptedChunkSize + kChunkByteStride - 1) / kChunkByteStride);
        QCOMPARE(refusedAtChunk, chunkBytesFlipped * 8);
    }

    void truncationAndExtensionAreRefused()
    {
        const auto message = patterned(3 * kChunkSize + 50, 4);
        const auto object = sealToMemory(kek_, message);
        MemorySource pristine(object);
        const auto info = inspectSealedObject(pristine).value();
        const auto resolver = keys_.resolver();
        std::set<std::size_t> cuts;
        for (std::size_t n = 0; n <= info.payloadOffset + kChunkedHeaderSize + 1; ++n)
            cuts.insert(n);  // inside the header, key block, salt and commitment
        for (std::uint64_t k = 0; k <= 4; ++k) {
            const std::size_t boundary = info.payloadOffset + kChunkedHeaderSize
                                         + static_cast<std::size_t>(k) * kEncryptedChunkSize;
            for (std::size_t delta : {0U, 1U, 15U, 16U, 17U, 8000U}) {
                cuts.insert(boundary + delta);
                if (boundary >= delta)
                    cuts.insert(boundary - delta);
            }
        }
        std::size_t tried = 0;
        for (const std::size_t cut : cuts) {
            if (cut >= object.size())
                continue;
            QVERIFY2(openFails(std::span(object).first(cut), resolver) != ErrorCode::Internal,
                     qPrintable(QString("cut at %1").arg(cut)));
            ++tried;
        }
        // Appended bytes: a few zeros, a tag's worth, a whole chunk's worth, a copy of a chunk.
        for (std::size_t extra : {1U, 16U, 17U, static_cast<unsigned>(kEncryptedChunkSize)}) {
            auto longer = object;
            longer.resize(object.size() + extra, 0);
            QVERIFY(openFails(longer, resolver) != ErrorCode::Internal);
            ++tried;
        }
        auto duplicated = object;
        const auto chunk0 =
            std::span(object).subspan(info.payloadOffset + kChunkedHeaderSize, kEncryptedChunkSize);
        duplicated.insert(duplicated.end(), chunk0.begin(), chunk0.end());
        QVERIFY(openFails(duplicated, resolver) != ErrorCode::Internal);
        qInfo("%zu truncations and extensions refused at open", tried + 1);
    }

    void swappedAndForeignChunksAreRefused()
    {
        const auto message = patterned(3 * kChunkSize + 50, 5);
        const auto object = sealToMemory(kek_, message);
        const auto other = sealToMemory(kek_, patterned(3 * kChunkSize + 50, 6));
        MemorySource pristine(object);
        const auto info = inspectSealedObject(pristine).value();
        const auto chunkAt = [&](std::uint64_t k) {
            return static_cast<std::ptrdiff_t>(info.payloadOffset + kChunkedHeaderSize
                                               + k * kEncryptedChunkSize);
        };
        const auto len = static_cast<std::ptrdiff_t>(kEncryptedChunkSize);

        auto swapped = object;
        std::swap_ranges(swapped.begin() + chunkAt(0), swapped.begin() + chunkAt(0) + len,
                         swapped.begin() + chunkAt(1));
        auto foreign = object;
        std::copy(other.begin() + chunkAt(1), other.begin() + chunkAt(1) + len,
                  foreign.begin() + chunkAt(1));

        for (const auto* altered : {&swapped, &foreign}) {
            MemorySource source(*altered);
            auto reader = SealedReader::open(source, keys_.resolver());
            QVERIFY(reader.ok());  // the final chunk is intact, so only the bad chunks fail
            std::vector<std::uint8_t> chunk(kChunkSize);
            auto got = reader->readChunk(1, chunk);
            QVERIFY(!got.ok());
            QCOMPARE(got.error().code(), ErrorCode::Integrity);
            QVERIFY(isOneSentence(got.error().message()));
            QVERIFY(allZero(chunk));
            std::vector<std::uint8_t> range(100);
            QVERIFY(!reader->read(kChunkSize + 10, range).ok());
            QVERIFY(allZero(range));
            MemorySink out;
            QVERIFY(!reader->readAll(out).ok());
            const std::size_t firstBad = altered == &swapped ? 0 : 1;
            QCOMPARE(out.bytes().size(), firstBad * kChunkSize);
        }
    }

    void wrongAndRetiredKeysAreRefused()
    {
        const auto message = patterned(1000, 7);
        const auto object = sealToMemory(kek_, message);

        const Kek impostor = makeKek("datasets", 1);  // same name, other key (wrong key file)
        TestKeys wrong;
        wrong.add(impostor);
        QCOMPARE(openFails(object, wrong.resolver()), ErrorCode::Unauthenticated);

        TestKeys unknown;
        const Kek otherPurpose = makeKek("checkpoints", 1);
        unknown.add(otherPurpose);
        QCOMPARE(openFails(object, unknown.resolver()), ErrorCode::NotFound);

        TestKeys retired;
        retired.add(kek_);
        retired.retired.insert({"datasets", 1});
        QCOMPARE(openFails(object, retired.resolver()), ErrorCode::PermissionDenied);
    }

    // A reader handed one object's data key (a trainer: the shards of one dataset) opens that
    // object and no other; a key for another object fails the commitment, and an object whose
    // key it was not given is refused without a KEK being asked.
    void dataKeysOpenTheirObjectOnly()
    {
        const auto message = patterned(40000, 3);
        const auto object = sealToMemory(kek_, message);
        const auto other = sealToMemory(kek_, patterned(1000, 4));
        MemorySource source(object);
        MemorySource otherSource(other);
        auto dek = unwrapDataKey(source, keys_.resolver());
        QVERIFY(dek);
        const SealedObjectId id = inspectSealedObject(source)->objectId;
        const DataKeyResolver handed = [&](const SealedObjectId& asked) -> Result<SecretBytes> {
            if (asked != id)
                return Error(ErrorCode::NotFound, "Not handed over.");
            return dek->copy();
        };
        auto reader = SealedReader::open(source, handed);
        QVERIFY2(reader, reader ? "" : reader.error().message().c_str());
        std::vector<std::uint8_t> plaintext(message.size());
        QVERIFY(reader->read(0, plaintext));
        QVERIFY(plaintext == message);

        auto notHanded = SealedReader::open(otherSource, handed);
        QVERIFY(!notHanded);
        QCOMPARE(notHanded.error().code(), ErrorCode::NotFound);
        // The first object's key offered for the second (a swapped key line) opens nothing.
        const DataKeyResolver swapped = [&](const SealedObjectId&) { return dek->copy(); };
        auto wrongKey = SealedReader::open(otherSource, swapped);
        QVERIFY(!wrongKey);
        QCOMPARE(wrongKey.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(isOneSentence(wrongKey.error().message()));
        // Unwrapping needs the KEK: a wrong one yields no data key.
        TestKeys wrong;
        const Kek impostor = makeKek("datasets", 1);
        wrong.add(impostor);
        QVERIFY(!unwrapDataKey(source, wrong.resolver()));
    }

    void headerFromAnotherObjectIsRefused()
    {
        const SealedMetadata metadata{"application/octet-stream", "{}"};
        const auto a = sealToMemory(kek_, patterned(5000, 8), metadata);
        const auto b = sealToMemory(kek_, patterned(5000, 9), metadata);
        MemorySource sourceA(a);
        const auto info = inspectSealedObject(sourceA).value();
        const auto headerEnd = static_cast<std::ptrdiff_t>(info.headerSize);
        const auto keyBlockEnd = static_cast<std::ptrdiff_t>(info.payloadOffset);

        // B's header on A's key block and payload: the key block is bound to A's object id.
        auto headerSwap = a;
        std::copy(b.begin(), b.begin() + headerEnd, headerSwap.begin());
        QCOMPARE(openFails(headerSwap, keys_.resolver()), ErrorCode::Unauthenticated);
        // B's header and key block on A's payload: B's DEK does not commit to A's payload.
        auto prefixSwap = a;
        std::copy(b.begin(), b.begin() + keyBlockEnd, prefixSwap.begin());
        QCOMPARE(openFails(prefixSwap, keys_.resolver()), ErrorCode::Integrity);
        // A's own metadata edited (same length): the payload's context no longer matches.
        auto edited = a;
        edited[static_cast<std::size_t>(headerEnd) - 2] = '[';
        QCOMPARE(openFails(edited, keys_.resolver()), ErrorCode::Integrity);
    }

    void rotationRewrapsOnlyTheKeyBlock()
    {
        QTemporaryDir dir;
        const std::filesystem::path path = dir.filePath("rotate.sealed").toStdString();
        const auto message = patterned(2 * kChunkSize + 3, 10);
        {
            auto writer = SealedWriter::create(path, kek_, {"text/plain", "{}"});
            QVERIFY(writer.ok() && writer->write(message).ok() && writer->finish().ok());
        }
        const auto before = readFile(path);
        const auto infoBefore = inspectSealedObject(path).value();

        const Kek next = makeKek("datasets", 2);
        TestKeys onlyNew;
        onlyNew.add(next);
        // Wrong resolver: refused, file untouched.
        auto refused = rewrapKeyBlock(path, onlyNew.resolver(), next);
        QVERIFY(!refused.ok());
        QVERIFY(readFile(path) == before);

        QVERIFY(rewrapKeyBlock(path, keys_.resolver(), next).ok());
        const auto after = readFile(path);
        const auto infoAfter = inspectSealedObject(path).value();
        QCOMPARE(infoAfter.kekVersion, 2U);
        QVERIFY(infoAfter.objectId == infoBefore.objectId);
        // Header and payload bytes are the same; only the key block changed.
        QVERIFY(std::equal(before.begin(),
                           before.begin() + static_cast<std::ptrdiff_t>(infoBefore.headerSize),
                           after.begin()));
        QVERIFY(std::equal(
            before.begin() + static_cast<std::ptrdiff_t>(infoBefore.payloadOffset), before.end(),
            after.begin() + static_cast<std::ptrdiff_t>(infoAfter.payloadOffset), after.end()));
        QVERIFY(!std::equal(before.begin() + static_cast<std::ptrdiff_t>(infoBefore.headerSize),
                            before.begin() + static_cast<std::ptrdiff_t>(infoBefore.payloadOffset),
                            after.begin() + static_cast<std::ptrdiff_t>(infoAfter.headerSize)));

        auto reader = SealedReader::open(path, onlyNew.resolver());
        QVERIFY(reader.ok());
        MemorySink out;
        QVERIFY(reader->readAll(out).ok());
        QVERIFY(out.bytes() == message);

        // Version 1 retired: an old copy of the file can no longer be opened.
        TestKeys rotated;
        rotated.add(kek_);
        rotated.add(next);
        rotated.retired.insert({"datasets", 1});
        QCOMPARE(openFails(before, rotated.resolver()), ErrorCode::PermissionDenied);
        QVERIFY(SealedReader::open(path, rotated.resolver()).ok());
        QCOMPARE(std::distance(std::filesystem::directory_iterator(dir.path().toStdString()),
                               std::filesystem::directory_iterator()),
                 1);
    }

    void inspectRefusesOtherFiles()
    {
        const std::vector<std::uint8_t> junk{'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0};
        MemorySource source(junk);
        auto info = inspectSealedObject(source);
        QVERIFY(!info.ok());
        QCOMPARE(info.error().code(), ErrorCode::InvalidArgument);
        auto object = sealToMemory(kek_, patterned(10, 1));
        object[9] = 2;  // format version 2
        MemorySource future(object);
        auto unsupported = inspectSealedObject(future);
        QVERIFY(!unsupported.ok());
        QCOMPARE(unsupported.error().code(), ErrorCode::Unsupported);
    }
};

QTEST_APPLESS_MAIN(TestSealedObject)
#include "test_crypto_sealed_object.moc"
