// SHA-256 and HMAC-SHA-256: NIST CAVP short and long messages and RFC 4231 (from Debian's
// python3-cryptography-vectors), known answers that need no files, streaming that equals
// one-shot at every split point, and file hashing.
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include "cavp.h"
#include "cryptography_vectors.h"

#include "test_helpers.h"

#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::crypto;

using sealtrain::testing::hex;
using sealtrain::testing::secret;

namespace {

std::vector<std::uint8_t> pattern(std::size_t size)
{
    std::vector<std::uint8_t> bytes(size);
    for (std::size_t i = 0; i < size; ++i)
        bytes[i] = static_cast<std::uint8_t>((i * 131 + 7) & 0xff);
    return bytes;
}

}  // namespace

class TestHash : public QObject {
    Q_OBJECT

private slots:
    void knownAnswers_data()
    {
        QTest::addColumn<QByteArray>("message");
        QTest::addColumn<QString>("digest");
        // FIPS 180-2 appendix B examples.
        QTest::newRow("empty")
            << QByteArray() << "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        QTest::newRow("abc") << QByteArray("abc")
                             << "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        QTest::newRow("two blocks")
            << QByteArray("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
            << "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1";
    }

    void knownAnswers()
    {
        QFETCH(QByteArray, message);
        QFETCH(QString, digest);
        const std::span<const std::uint8_t> bytes(
            reinterpret_cast<const std::uint8_t*>(message.constData()),
            static_cast<std::size_t>(message.size()));
        QCOMPARE(QString::fromStdString(toHex(sha256(bytes))), digest);
    }

    void nistSha256()
    {
        SEALTRAIN_REQUIRE_CRYPTOGRAPHY_VECTORS(vectors);
        int checked = 0;
        for (const char* file : {"SHA256ShortMsg.rsp", "SHA256LongMsg.rsp"}) {
            const auto records =
                sealtrain::testing::readCavpRecords(vectors / "hashes" / "SHA2" / file);
            QVERIFY2(records.size() > 60, file);
            for (const auto& record : records) {
                const auto bits = std::stoul(record.at("Len"));
                auto message = hex(record.at("Msg"));
                message.resize(bits / 8);  // Len = 0 is written as Msg = 00
                QCOMPARE(toHex(sha256(message)), record.at("MD"));
                ++checked;
            }
        }
        QVERIFY(checked > 120);
    }

    void rfc4231HmacSha256()
    {
        SEALTRAIN_REQUIRE_CRYPTOGRAPHY_VECTORS(vectors);
        const auto records =
            sealtrain::testing::readCavpRecords(vectors / "HMAC" / "rfc-4231-sha256.txt");
        QCOMPARE(records.size(), std::size_t{6});
        for (const auto& record : records) {
            const auto key = secret(hex(record.at("Key")));
            const auto message = hex(record.at("Msg"));
            QCOMPARE(toHex(hmacSha256(key, message)), record.at("MD"));
        }
    }

    void hmacKnownAnswer()
    {
        // RFC 4231 test case 2, without the vector files.
        const auto key = secret({'J', 'e', 'f', 'e'});
        QCOMPARE(toHex(hmacSha256(key, asBytes("what do ya want for nothing?"))),
                 std::string("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));
    }

    void streamingEqualsOneShotAtEverySplit()
    {
        const auto message = pattern(300);  // spans several 64-byte blocks
        const auto key = secret(pattern(40));
        const auto expected = sha256(message);
        const auto expectedMac = hmacSha256(key, message);
        const std::span<const std::uint8_t> all(message);
        for (std::size_t split = 0; split <= message.size(); ++split) {
            Sha256 hasher;
            hasher.update(all.first(split));
            hasher.update(all.subspan(split));
            QVERIFY2(hasher.finish() == expected, std::to_string(split).c_str());

            HmacSha256 mac(key);
            mac.update(all.first(split));
            mac.update(all.subspan(split));
            QVERIFY2(mac.finish() == expectedMac, std::to_string(split).c_str());
        }
        // Three pieces, every pair of split points over the first two blocks and a bit.
        for (std::size_t first = 0; first <= 140; first += 3) {
            for (std::size_t second = first; second <= 140; second += 5) {
                Sha256 hasher;
                hasher.update(all.first(first));
                hasher.update(all.subspan(first, second - first));
                hasher.update(all.subspan(second));
                QVERIFY(hasher.finish() == expected);
            }
        }
    }

    void finishStartsAFreshMessage()
    {
        const auto key = secret(pattern(16));
        Sha256 hasher;
        HmacSha256 mac(key);
        hasher.update(asBytes("first"));
        mac.update(asBytes("first"));
        QVERIFY(hasher.finish() == sha256(asBytes("first")));
        QVERIFY(mac.finish() == hmacSha256(key, asBytes("first")));
        hasher.update(asBytes("second"));
        mac.update(asBytes("second"));
        QVERIFY(hasher.finish() == sha256(asBytes("second")));
        QVERIFY(mac.finish() == hmacSha256(key, asBytes("second")));
    }

    void differentKeysDifferentMacs()
    {
        const auto a = secret(pattern(32));
        auto otherBytes = pattern(32);
        otherBytes[31] ^= 1;
        const auto b = secret(otherBytes);
        QVERIFY(hmacSha256(a, asBytes("m")) != hmacSha256(b, asBytes("m")));
        QVERIFY(!digestsEqual(hmacSha256(a, asBytes("m")), hmacSha256(b, asBytes("m"))));
        QVERIFY(digestsEqual(hmacSha256(a, asBytes("m")), hmacSha256(a, asBytes("m"))));
    }

    void fileHash_data()
    {
        QTest::addColumn<int>("size");
        QTest::newRow("empty") << 0;
        QTest::newRow("one byte") << 1;
        QTest::newRow("one buffer") << 65536;
        QTest::newRow("buffers and a bit") << 3 * 65536 + 17;
    }

    void fileHash()
    {
        QFETCH(int, size);
        QTemporaryDir dir;
        const auto path = std::filesystem::path(dir.path().toStdString()) / "data.bin";
        const auto content = pattern(static_cast<std::size_t>(size));
        {
            std::ofstream out(path, std::ios::binary);
            out.write(reinterpret_cast<const char*>(content.data()),
                      static_cast<std::streamsize>(content.size()));
        }
        const auto digest = sha256File(path);
        QVERIFY(digest.ok());
        QVERIFY(*digest == sha256(content));
    }

    void missingFileIsNotFound()
    {
        QTemporaryDir dir;
        const auto digest = sha256File(std::filesystem::path(dir.path().toStdString()) / "none");
        QVERIFY(!digest.ok());
        QCOMPARE(digest.error().code(), ErrorCode::NotFound);
        QVERIFY(isOneSentence(digest.error().message()));
    }
};

QTEST_APPLESS_MAIN(TestHash)
#include "test_crypto_hash.moc"
