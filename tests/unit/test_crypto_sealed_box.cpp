// X25519 and sealed boxes: every Wycheproof X25519 case (valid and acceptable shared secrets
// match; low-order points, whose shared secret is all zero, are refused), RFC 7748's test,
// round trips, and boxes that were altered, truncated or sealed to another worker.
#include "testvectors.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/sealed_box.h"

#include "test_helpers.h"

#include <QtTest/QtTest>

#include <string>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::crypto;

using sealtrain::testing::hex;
using sealtrain::testing::secret;

namespace {

BoxPublicKey point(const std::vector<std::uint8_t>& bytes)
{
    BoxPublicKey out{};
    if (bytes.size() != out.size())
        qFatal("a test point must have 32 bytes");
    std::copy(bytes.begin(), bytes.end(), out.begin());
    return out;
}

BoxKeyPair freshPair()
{
    auto pair = BoxKeyPair::generate();
    if (!pair)
        qFatal("%s", pair.error().message().c_str());
    return std::move(*pair);
}

}  // namespace

class TestSealedBox : public QObject {
    Q_OBJECT

private slots:
    void wycheproofX25519()
    {
        SEALTRAIN_REQUIRE_TEST_VECTORS(dir, "wycheproof");
        QFile file(QString::fromStdString((dir / "x25519_test.json").string()));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto json = QJsonDocument::fromJson(file.readAll()).object();
        int matched = 0;
        int refused = 0;
        for (const auto& groupValue : json["testGroups"].toArray()) {
            const auto group = groupValue.toObject();
            QCOMPARE(group["curve"].toString(), QString("curve25519"));
            for (const auto& testValue : group["tests"].toArray()) {
                const auto test = testValue.toObject();
                const auto id = "tcId " + std::to_string(test["tcId"].toInt());
                const auto result = test["result"].toString();
                const auto flags = test["flags"].toArray();
                const bool zeroShared = flags.contains(QString("ZeroSharedSecret"));
                const auto shared = x25519(secret(hex(test["private"].toString().toStdString())),
                                           point(hex(test["public"].toString().toStdString())));
                // Our policy (docs/formats/keys.md): a valid case must match; an acceptable
                // one must match too unless its shared secret is all zero, which we refuse
                // (libsodium's crypto_scalarmult does); there are no invalid X25519 cases.
                QVERIFY2(result == "valid" || result == "acceptable", id.c_str());
                if (zeroShared) {
                    QVERIFY2(result == "acceptable", id.c_str());
                    QVERIFY2(!shared.ok(), id.c_str());
                    QCOMPARE(shared.error().code(), ErrorCode::InvalidArgument);
                    ++refused;
                } else {
                    QVERIFY2(shared.ok(), id.c_str());
                    QVERIFY2(toHex(shared->bytes()) == test["shared"].toString().toStdString(),
                             id.c_str());
                    ++matched;
                }
            }
        }
        QCOMPARE(matched + refused, json["numberOfTests"].toInt());
        QVERIFY(refused > 0);
    }

    void rfc7748DiffieHellman()
    {
        // RFC 7748 section 6.1, so the check runs without the vector files.
        const auto alice =
            secret(hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"));
        const auto bob =
            secret(hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"));
        const auto alicePair = BoxKeyPair::fromSecretKey(alice);
        const auto bobPair = BoxKeyPair::fromSecretKey(bob);
        QVERIFY(alicePair.ok() && bobPair.ok());
        QCOMPARE(toHex(alicePair->publicKey()),
                 std::string("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"));
        const auto one = x25519(alice, bobPair->publicKey());
        const auto two = x25519(bob, alicePair->publicKey());
        QVERIFY(one.ok() && two.ok());
        QCOMPARE(toHex(one->bytes()),
                 std::string("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"));
        QVERIFY(one->equals(*two));
    }

    void roundTrip_data()
    {
        QTest::addColumn<int>("size");
        QTest::newRow("empty") << 0;
        QTest::newRow("dek") << 32;
        QTest::newRow("larger") << 4099;
    }

    void roundTrip()
    {
        QFETCH(int, size);
        const auto worker = freshPair();
        const auto plaintext = randomBytesForTest(static_cast<std::size_t>(size));
        const auto box = sealToPublicKey(worker.publicKey(), plaintext);
        QVERIFY(box.ok());
        QCOMPARE(box->size(), plaintext.size() + kSealedBoxOverhead);
        const auto opened = openSealedBox(worker, *box);
        QVERIFY(opened.ok());
        QVERIFY(std::equal(plaintext.begin(), plaintext.end(), opened->bytes().begin(),
                           opened->bytes().end()));
        // Each box has its own ephemeral key: sealing twice never gives the same bytes.
        QVERIFY(*sealToPublicKey(worker.publicKey(), plaintext) != *box);
    }

    void everyBitFlipIsRefused()
    {
        const auto worker = freshPair();
        const auto box = sealToPublicKey(worker.publicKey(), randomBytesForTest(32));
        QVERIFY(box.ok());
        for (std::size_t bit = 0; bit < box->size() * 8; ++bit) {
            auto flipped = *box;
            flipped[bit / 8] ^= static_cast<std::uint8_t>(1U << (bit % 8));
            const auto opened = openSealedBox(worker, flipped);
            QVERIFY2(!opened.ok(), std::to_string(bit).c_str());
            QCOMPARE(opened.error().code(), ErrorCode::Unauthenticated);
        }
    }

    void wrongWorkerAndTruncationAreRefused()
    {
        const auto worker = freshPair();
        const auto other = freshPair();
        const auto box = sealToPublicKey(worker.publicKey(), randomBytesForTest(32));
        QVERIFY(box.ok());
        const auto wrong = openSealedBox(other, *box);
        QVERIFY(!wrong.ok());
        QCOMPARE(wrong.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(isOneSentence(wrong.error().message()));
        for (std::size_t length = 0; length < box->size(); ++length) {
            const auto cut = std::span(*box).first(length);
            QVERIFY2(!openSealedBox(worker, cut).ok(), std::to_string(length).c_str());
        }
        auto extended = *box;
        extended.push_back(0);
        QVERIFY(!openSealedBox(worker, extended).ok());
    }

    void lowOrderPublicKeyIsRefused()
    {
        // u = 0 and u = 1 are low-order points: no secret survives sealing to them.
        for (const std::uint8_t u : {std::uint8_t{0}, std::uint8_t{1}}) {
            BoxPublicKey lowOrder{};
            lowOrder[0] = u;
            const auto box = sealToPublicKey(lowOrder, randomBytesForTest(32));
            QVERIFY(!box.ok());
            QCOMPARE(box.error().code(), ErrorCode::InvalidArgument);
        }
    }

    void secretKeyRestoresTheSamePair()
    {
        const auto worker = freshPair();
        const auto restored = BoxKeyPair::fromSecretKey(worker.secretKey());
        QVERIFY(restored.ok());
        QVERIFY(restored->publicKey() == worker.publicKey());
        QVERIFY(!BoxKeyPair::fromSecretKey(secret(std::vector<std::uint8_t>(31, 1))).ok());
    }

private:
    static std::vector<std::uint8_t> randomBytesForTest(std::size_t size)
    {
        std::vector<std::uint8_t> bytes(size);
        for (std::size_t i = 0; i < size; ++i)
            bytes[i] = static_cast<std::uint8_t>((i * 29 + 3) & 0xff);
        return bytes;
    }
};

QTEST_APPLESS_MAIN(TestSealedBox)
#include "test_crypto_sealed_box.moc"
