// C2SP chunked encryption (Cobblestone-256): every vector of Wycheproof's
// c2sp_chunked_encryption_aes_256_gcm_test.json through each way of reading (whole, streaming
// with PartialPlaintext semantics, random access, length authentication, raw mode) and both
// deterministic ways of encrypting (raw mode, injected salt); then round trips at the chunk
// boundaries with writes split in awkward places, and chunk-wise reads from a file.
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/chunked.h"

#include "testvectors.h"

#include <nlohmann/json.hpp>
#include <openssl/evp.h>
#include <zlib.h>

#include "test_helpers.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::crypto;

using sealtrain::testing::hex;
using sealtrain::testing::secret;

namespace {

std::vector<std::uint8_t> inflateAll(const std::vector<std::uint8_t>& compressed)
{
    z_stream stream{};
    if (inflateInit(&stream) != Z_OK)
        qFatal("inflateInit failed");
    std::vector<std::uint8_t> out;
    std::vector<std::uint8_t> block(1 << 16);
    stream.next_in = const_cast<Bytef*>(compressed.data());  // zlib's API is not const-correct
    stream.avail_in = static_cast<uInt>(compressed.size());
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        stream.next_out = block.data();
        stream.avail_out = static_cast<uInt>(block.size());
        rc = inflate(&stream, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END)
            qFatal("inflate failed: %d", rc);
        out.insert(out.end(), block.begin(),
                   block.begin() + static_cast<std::ptrdiff_t>(block.size() - stream.avail_out));
    }
    inflateEnd(&stream);
    return out;
}

std::string sha512Hex(std::span<const std::uint8_t> data)
{
    std::array<std::uint8_t, 64> digest{};
    unsigned int length = 0;
    if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha512(), nullptr) != 1)
        qFatal("SHA-512 failed");
    return toHex(digest);
}

// Bytes that differ at every offset, so misplaced data shows.
std::vector<std::uint8_t> patterned(std::size_t size, std::uint8_t seed)
{
    std::vector<std::uint8_t> bytes(size);
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<std::uint8_t>((i * 131 + seed) ^ (i >> 9));
    return bytes;
}

// `message` sealed under `key` with an empty context.
std::vector<std::uint8_t> sealed(const SecretBytes& key, std::span<const std::uint8_t> message)
{
    MemorySink sink;
    auto writer = ChunkedWriter::create(key, {}, sink);
    if (!writer || !writer->write(message) || !writer->finish())
        qFatal("cannot seal the test message");
    return sink.take();
}

struct Vector {
    int id = 0;
    std::string comment;
    std::vector<std::uint8_t> key;
    std::vector<std::uint8_t> context;
    std::vector<std::uint8_t> ciphertext;
    std::vector<std::uint8_t> aeadKey;
    std::vector<std::uint8_t> baseNonce;
    std::size_t messageLength = 0;
    std::string messageSha512;
    bool valid = false;
    std::set<std::string> flags;
};

std::vector<Vector> loadVectors(const std::filesystem::path& dir)
{
    std::ifstream in(dir / "c2sp_chunked_encryption_aes_256_gcm_test.json");
    const auto json = nlohmann::json::parse(in);
    std::vector<Vector> vectors;
    for (const auto& group : json.at("testGroups")) {
        if (group.at("aead") != "AEAD_AES_256_GCM" || group.at("sha") != "SHA-512")
            qFatal("unexpected test group");
        for (const auto& test : group.at("tests")) {
            Vector v;
            v.id = test.at("tcId").get<int>();
            v.comment = test.at("comment").get<std::string>();
            v.key = hex(test.at("key"));
            v.context = hex(test.at("ctx"));
            v.ciphertext = inflateAll(hex(test.at("ct")));
            if (test.contains("aeadKey"))
                v.aeadKey = hex(test.at("aeadKey"));
            if (test.contains("baseNonce"))
                v.baseNonce = hex(test.at("baseNonce"));
            // Vectors refused at the header describe no message.
            v.messageLength = test.value("msgLength", std::size_t{0});
            v.messageSha512 = test.value("msgSha512", std::string());
            v.valid = test.at("result") == "valid";
            for (const auto& flag : test.at("flags"))
                v.flags.insert(flag.get<std::string>());
            vectors.push_back(std::move(v));
        }
    }
    return vectors;
}

GcmNonce toNonce(const std::vector<std::uint8_t>& bytes)
{
    GcmNonce nonce{};
    std::copy_n(bytes.begin(), nonce.size(), nonce.begin());
    return nonce;
}

// Reads the whole message through ChunkedStream in uneven pieces; returns the bytes it gave
// and whether it ended cleanly. After an error it reads again to check the error sticks.
std::pair<std::vector<std::uint8_t>, bool> streamAll(ChunkedReader& reader)
{
    ChunkedStream stream(reader);
    std::vector<std::uint8_t> out;
    std::vector<std::uint8_t> piece(10007);
    for (;;) {
        auto got = stream.read(piece);
        if (!got) {
            for (int again = 0; again < 3; ++again) {
                auto next = stream.read(piece);
                if (next.ok())
                    qFatal("the stream reported success after an error");
            }
            return {out, false};
        }
        if (*got == 0)
            return {out, true};
        out.insert(out.end(), piece.begin(), piece.begin() + static_cast<std::ptrdiff_t>(*got));
    }
}

}  // namespace

class TestChunked : public QObject {
    Q_OBJECT

private slots:
    void nonceDerivation()
    {
        const GcmNonce base{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
        QVERIFY(chunkNonce(base, 0) == base);
        const auto n = chunkNonce(base, 0x0102030405ULL);
        const GcmNonce expected{0, 1, 2, 3, 4, 5, 6, 7 ^ 1, 8 ^ 2, 9 ^ 3, 10 ^ 4, 11 ^ 5};
        QVERIFY(n == expected);
    }

    void wycheproofVectors()
    {
        SEALTRAIN_REQUIRE_TEST_VECTORS(dir, "wycheproof");
        const auto vectors = loadVectors(dir);
        int valid = 0;
        int invalid = 0;
        for (const auto& v : vectors) {
            const QByteArray label =
                QString("tcId %1 (%2)").arg(v.id).arg(QString::fromStdString(v.comment)).toUtf8();
            const auto key = secret(v.key);
            MemorySource source(v.ciphertext);
            auto reader = ChunkedReader::open(key, v.context, source);
            if (v.valid) {
                QVERIFY2(reader.ok(), label.constData());
                // Whole message.
                MemorySink sink;
                QVERIFY2(reader->readAll(sink).ok(), label.constData());
                QCOMPARE(sink.bytes().size(), v.messageLength);
                QCOMPARE(sha512Hex(sink.bytes()), v.messageSha512);
                const auto message = sink.bytes();
                // Length authentication, streaming and random access.
                auto length = reader->authenticateLength();
                QVERIFY2(length.ok() && *length == v.messageLength, label.constData());
                auto [streamed, clean] = streamAll(*reader);
                QVERIFY2(clean && streamed == message, label.constData());
                std::vector<std::uint8_t> ranged(message.size());
                QVERIFY(reader->read(0, ranged).ok());
                QVERIFY(ranged == message);
                if (message.size() > 20000) {
                    std::vector<std::uint8_t> middle(5000);
                    QVERIFY(reader->read(15000, middle).ok());
                    QVERIFY(std::equal(middle.begin(), middle.end(), message.begin() + 15000));
                }
                std::vector<std::uint8_t> chunk(kChunkSize);
                const std::uint64_t last = reader->chunkCount() - 1;
                for (std::uint64_t index : {std::uint64_t{0}, last / 2, last}) {
                    auto got = reader->readChunk(index, chunk);
                    QVERIFY2(got.ok(), label.constData());
                    QVERIFY(std::equal(
                        chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(*got),
                        message.begin() + static_cast<std::ptrdiff_t>(index * kChunkSize)));
                }
                // Raw mode decrypts the chunks alone.
                const std::span<const std::uint8_t> chunks =
                    std::span(v.ciphertext).subspan(kChunkedHeaderSize);
                MemorySource rawSource(chunks);
                const auto aeadKey = secret(v.aeadKey);
                auto raw = ChunkedReader::openRaw(aeadKey, toNonce(v.baseNonce), rawSource);
                QVERIFY(raw.ok());
                MemorySink rawSink;
                QVERIFY(raw->readAll(rawSink).ok());
                QVERIFY(rawSink.bytes() == message);
                // Raw mode encryption is deterministic.
                MemorySink rawOut;
                auto rawWriter = ChunkedWriter::createRaw(aeadKey, toNonce(v.baseNonce), rawOut);
                QVERIFY(rawWriter.ok());
                QVERIFY(rawWriter->write(message).ok());
                QVERIFY(rawWriter->finish().ok());
                QVERIFY2(std::equal(rawOut.bytes().begin(), rawOut.bytes().end(), chunks.begin(),
                                    chunks.end()),
                         label.constData());
                // So is encryption with the vector's salt, written in uneven pieces.
                ChunkedSalt salt{};
                std::copy_n(v.ciphertext.begin(), salt.size(), salt.begin());
                MemorySink full;
                auto writer = ChunkedWriter::create(key, v.context, full, salt);
                QVERIFY(writer.ok());
                for (std::size_t at = 0; at < message.size(); at += 7001) {
                    const auto take = std::min<std::size_t>(7001, message.size() - at);
                    QVERIFY(writer->write(std::span(message).subspan(at, take)).ok());
                }
                QVERIFY(writer->finish().ok());
                QVERIFY2(full.bytes() == v.ciphertext, label.constData());
                QCOMPARE(chunkedCiphertextSize(message.size()), v.ciphertext.size());
                ++valid;
                continue;
            }

            ++invalid;
            const bool partial = v.flags.count("PartialPlaintext") != 0;
            if (v.flags.count("HeaderFailure") != 0) {
                QVERIFY2(!reader.ok(), label.constData());
                if (v.flags.count("InvalidKeySize") != 0)
                    QCOMPARE(reader.error().code(), ErrorCode::InvalidArgument);
                continue;
            }
            if (!reader.ok())
                continue;  // refused before any chunk: allowed for every invalid vector
            // Whole message: must fail, releasing at most the valid prefix.
            MemorySink sink;
            QVERIFY2(!reader->readAll(sink).ok(), label.constData());
            QVERIFY2(sink.bytes().size() <= (partial ? v.messageLength : 0), label.constData());
            if (partial && sink.bytes().size() == v.messageLength)
                QCOMPARE(sha512Hex(sink.bytes()), v.messageSha512);
            // Streaming: same, and the error sticks.
            auto [streamed, clean] = streamAll(*reader);
            QVERIFY2(!clean, label.constData());
            QVERIFY2(streamed.size() <= (partial ? v.messageLength : 0), label.constData());
            QVERIFY(std::equal(streamed.begin(), streamed.end(), sink.bytes().begin(),
                               sink.bytes().end())
                    || streamed.size() <= sink.bytes().size());
            // Random access over the whole message fails.
            std::vector<std::uint8_t> ranged(static_cast<std::size_t>(reader->plaintextSize()));
            QVERIFY2(!reader->read(0, ranged).ok(), label.constData());
            // Length authentication fails unless the final chunk itself is intact.
            auto length = reader->authenticateLength();
            if (v.flags.count("ValidFinalChunk") == 0)
                QVERIFY2(!length.ok(), label.constData());
            // Raw mode refuses the chunks too.
            if (!v.aeadKey.empty()) {
                MemorySource rawSource(std::span(v.ciphertext).subspan(kChunkedHeaderSize));
                const auto aeadKey = secret(v.aeadKey);
                auto raw = ChunkedReader::openRaw(aeadKey, toNonce(v.baseNonce), rawSource);
                if (raw.ok()) {
                    MemorySink rawSink;
                    QVERIFY2(!raw->readAll(rawSink).ok(), label.constData());
                }
            }
        }
        qInfo("C2SP chunked encryption (AES-256-GCM): %d valid vectors decrypted and "
              "re-encrypted, %d invalid refused, of %zu",
              valid, invalid, vectors.size());
        QCOMPARE(static_cast<std::size_t>(valid + invalid), vectors.size());
        QVERIFY(valid >= 10);
        QVERIFY(invalid >= 25);
    }

    void roundTrip_data()
    {
        QTest::addColumn<qulonglong>("size");
        QTest::addColumn<qulonglong>("piece");
        for (const qulonglong size :
             {0ULL, 1ULL, 16383ULL, 16384ULL, 16385ULL, 32768ULL, 100ULL * 16384 + 77}) {
            for (const qulonglong piece : {1ULL, 4097ULL, 16384ULL, 1ULL << 22}) {
                if (piece == 1 && size > 40000)
                    continue;
                QTest::addRow("%llu bytes in pieces of %llu", size, piece) << size << piece;
            }
        }
    }

    void roundTrip()
    {
        QFETCH(qulonglong, size);
        QFETCH(qulonglong, piece);
        const auto message = patterned(static_cast<std::size_t>(size), 3);
        auto key = SecretBytes::random(32);
        QVERIFY(key.ok());
        const std::vector<std::uint8_t> context{'c', 't', 'x'};
        MemorySink sink;
        auto writer = ChunkedWriter::create(*key, context, sink);
        QVERIFY(writer.ok());
        for (std::size_t at = 0; at < message.size(); at += piece) {
            const auto take = std::min<std::size_t>(piece, message.size() - at);
            QVERIFY(writer->write(std::span(message).subspan(at, take)).ok());
        }
        QVERIFY(writer->finish().ok());
        QVERIFY(!writer->write(message).ok());  // finished writers refuse more
        QCOMPARE(writer->plaintextSize(), size);
        QCOMPARE(sink.bytes().size(), chunkedCiphertextSize(size));

        MemorySource source(sink.bytes());
        auto reader = ChunkedReader::open(*key, context, source);
        QVERIFY(reader.ok());
        QCOMPARE(reader->plaintextSize(), size);
        QCOMPARE(reader->chunkCount(), size / kChunkSize + 1);
        auto length = reader->authenticateLength();
        QVERIFY(length.ok() && *length == size);
        MemorySink out;
        QVERIFY(reader->readAll(out).ok());
        QVERIFY(out.bytes() == message);
        auto [streamed, clean] = streamAll(*reader);
        QVERIFY(clean && streamed == message);
        if (size > 3) {
            std::vector<std::uint8_t> range(static_cast<std::size_t>(size) - 3);
            QVERIFY(reader->read(2, range).ok());
            QVERIFY(std::equal(range.begin(), range.end(), message.begin() + 2));
        }
        std::vector<std::uint8_t> beyond(2);
        QVERIFY(!reader->read(size, beyond).ok());

        const std::vector<std::uint8_t> otherContext{'c', 't', 'y'};
        auto wrongContext = ChunkedReader::open(*key, otherContext, source);
        QVERIFY(!wrongContext.ok());
        QCOMPARE(wrongContext.error().code(), ErrorCode::Unauthenticated);
    }

    // read() and readChunk() reuse the reader's one-chunk buffers (the dataset reader's path):
    // from a file, which has no view in place, any mix of whole and partial chunks reads right,
    // in any order, and a chunk tampered with afterwards fails every read that touches it,
    // leaving no plaintext in the caller's buffer, while the chunks around it still read.
    void chunkReadsReuseTheirBuffers()
    {
        auto key = SecretBytes::random(32);
        QVERIFY(key.ok());
        const auto message = patterned(5 * kChunkSize + 100, 5);
        std::vector<std::uint8_t> bytes = sealed(*key, message);
        QTemporaryDir dir;
        const std::filesystem::path path = dir.filePath("message").toStdString();
        const auto writeFile = [&] {
            std::ofstream(path, std::ios::binary | std::ios::trunc)
                .write(reinterpret_cast<const char*>(bytes.data()),
                       static_cast<std::streamsize>(bytes.size()));
        };
        writeFile();
        auto file = FileSource::open(path);
        QVERIFY(file.ok());
        auto reader = ChunkedReader::open(*key, {}, **file);
        QVERIFY(reader.ok());
        const std::pair<std::size_t, std::size_t> ranges[] = {{0, message.size()},
                                                              {kChunkSize, 2 * kChunkSize},
                                                              {100, 3 * kChunkSize},
                                                              {kChunkSize - 1, 2},
                                                              {5 * kChunkSize + 99, 1}};
        for (const auto& [offset, length] : ranges) {
            std::vector<std::uint8_t> out(length);
            QVERIFY(reader->read(offset, out).ok());
            QVERIFY(std::equal(out.begin(), out.end(), message.begin() + std::ptrdiff_t(offset)));
        }
        std::vector<std::uint8_t> chunk(kChunkSize);
        for (const std::uint64_t index : {4U, 0U, 5U, 2U}) {
            auto got = reader->readChunk(index, chunk);
            QVERIFY(got.ok() && *got == reader->chunkPlaintextSize(index));
            QVERIFY(std::equal(chunk.begin(), chunk.begin() + std::ptrdiff_t(*got),
                               message.begin() + std::ptrdiff_t(index * kChunkSize)));
        }

        bytes[kChunkedHeaderSize + 2 * kEncryptedChunkSize + 10] ^= 0x01;
        writeFile();
        const auto noPlaintext = [](const std::vector<std::uint8_t>& buffer) {
            return std::all_of(buffer.begin(), buffer.end(), [](std::uint8_t b) { return b == 0; });
        };
        for (const auto& [offset, length] : {std::pair<std::size_t, std::size_t>{0, message.size()},
                                             {2 * kChunkSize + 5, 10},
                                             {kChunkSize + 7, kChunkSize}}) {
            std::vector<std::uint8_t> out(length);
            QVERIFY(!reader->read(offset, out).ok());
            QVERIFY(noPlaintext(out));
        }
        std::fill(chunk.begin(), chunk.end(), 0);
        QVERIFY(!reader->readChunk(2, chunk).ok());
        QVERIFY(noPlaintext(chunk));
        QVERIFY(reader->readChunk(3, chunk).ok());
        std::vector<std::uint8_t> after(kChunkSize);
        QVERIFY(reader->read(3 * kChunkSize, after).ok());
        QVERIFY(std::equal(after.begin(), after.end(), message.begin() + 3 * kChunkSize));
    }

    void truncationAtEveryLength()
    {
        auto key = SecretBytes::random(32);
        QVERIFY(key.ok());
        const auto full = sealed(*key, patterned(2 * kChunkSize + 10, 9));
        // Every shorter length and a few longer ones: never a clean, complete read.
        std::vector<std::size_t> lengths;
        for (std::size_t n = 0; n < full.size();
             n += (n % 997 == 0 ? std::size_t{1} : std::size_t{13}))
            lengths.push_back(n);
        for (std::size_t extra : {1U, 15U, 16U, 17U, 16400U})
            lengths.push_back(full.size() + extra);
        for (const std::size_t n : lengths) {
            std::vector<std::uint8_t> altered(
                full.begin(), full.begin() + static_cast<std::ptrdiff_t>(std::min(n, full.size())));
            altered.resize(n, 0);
            MemorySource source(altered);
            auto reader = ChunkedReader::open(*key, {}, source);
            if (!reader.ok())
                continue;
            MemorySink out;
            QVERIFY2(!reader->readAll(out).ok(), qPrintable(QString("length %1").arg(n)));
            QVERIFY(!reader->authenticateLength().ok());
        }
    }
};

QTEST_APPLESS_MAIN(TestChunked)
#include "test_crypto_chunked.moc"
