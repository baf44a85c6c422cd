// AES-256-GCM and HKDF conformance: Wycheproof (aes_gcm, hkdf_sha512, hkdf_sha256) from
// ../shared/testvectors, NIST CAVP GCM .rsp files and RFC 5869 from Debian's
// python3-cryptography-vectors, plus the properties the sealed-object code relies on (a wrong
// tag is Unauthenticated and leaves no plaintext behind).
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/aead.h"
#include "sealtrain/crypto/hkdf.h"

#include "cavp.h"
#include "cryptography_vectors.h"
#include "testvectors.h"

#include <nlohmann/json.hpp>

#include "test_helpers.h"

#include <QtTest/QtTest>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace sealtrain;
using namespace sealtrain::crypto;

using sealtrain::testing::hex;
using sealtrain::testing::loadJson;
using sealtrain::testing::secret;

namespace {

GcmNonce nonceFrom(const std::vector<std::uint8_t>& bytes)
{
    GcmNonce nonce{};
    std::copy_n(bytes.begin(), nonce.size(), nonce.begin());
    return nonce;
}

std::vector<std::uint8_t> concat(std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b)
{
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace

class TestAead : public QObject {
    Q_OBJECT

private slots:
    void roundTripAndTamper()
    {
        auto key = SecretBytes::random(32);
        QVERIFY(key.ok());
        const GcmNonce nonce{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        const std::vector<std::uint8_t> aad{'a', 'a', 'd'};
        const std::vector<std::uint8_t> message(100, 0x5a);
        auto sealed = aes256GcmSeal(*key, nonce, aad, message);
        QVERIFY(sealed.ok());
        QCOMPARE(sealed->size(), message.size() + kGcmTagSize);
        auto opened = aes256GcmOpen(*key, nonce, aad, *sealed);
        QVERIFY(opened.ok());
        QVERIFY(*opened == message);

        auto cipher = Aes256Gcm::create(*key);
        QVERIFY(cipher.ok());
        for (std::size_t bit = 0; bit < sealed->size() * 8; bit += 7) {
            auto altered = *sealed;
            altered[bit / 8] ^= static_cast<std::uint8_t>(1U << (bit % 8));
            std::vector<std::uint8_t> out(message.size(), 0xee);
            auto result = cipher->open(nonce, aad, altered, out);
            QVERIFY(!result.ok());
            QCOMPARE(result.error().code(), ErrorCode::Unauthenticated);
            QVERIFY(std::all_of(out.begin(), out.end(), [](auto b) { return b == 0; }));
        }
        const std::vector<std::uint8_t> otherAad{'b'};
        auto wrongAad = aes256GcmOpen(*key, nonce, otherAad, *sealed);
        QVERIFY(!wrongAad.ok());
        QCOMPARE(wrongAad.error().code(), ErrorCode::Unauthenticated);
        auto shortInput = aes256GcmOpen(*key, nonce, aad, std::vector<std::uint8_t>(15));
        QVERIFY(!shortInput.ok());
        auto badKey = aes256GcmSeal(secret(std::vector<std::uint8_t>(16)), nonce, aad, message);
        QVERIFY(!badKey.ok());
        QCOMPARE(badKey.error().code(), ErrorCode::InvalidArgument);

        auto secretOut = aes256GcmOpenSecret(*key, nonce, aad, *sealed);
        QVERIFY(secretOut.ok());
        QVERIFY(std::equal(message.begin(), message.end(), secretOut->bytes().begin()));
    }

    void wycheproofAesGcm()
    {
        SEALTRAIN_REQUIRE_TEST_VECTORS(dir, "wycheproof");
        const auto json = loadJson(dir / "aes_gcm_test.json");
        int valid = 0;
        int refused = 0;
        int otherNonceSizes = 0;
        for (const auto& group : json.at("testGroups")) {
            if (group.at("keySize").get<int>() != 256)
                continue;
            QCOMPARE(group.at("tagSize").get<int>(), 128);
            for (const auto& test : group.at("tests")) {
                const auto id = test.at("tcId").get<int>();
                const auto key = secret(hex(test.at("key")));
                const auto iv = hex(test.at("iv"));
                const auto aad = hex(test.at("aad"));
                const auto msg = hex(test.at("msg"));
                const auto ct = concat(hex(test.at("ct")), hex(test.at("tag")));
                const bool isValid = test.at("result") == "valid";
                if (iv.size() != kGcmNonceSize) {
                    // Our API takes only 12-byte nonces, so it can not even be asked.
                    ++otherNonceSizes;
                    continue;
                }
                auto opened = aes256GcmOpen(key, nonceFrom(iv), aad, ct);
                if (isValid) {
                    QVERIFY2(opened.ok(), qPrintable(QString("tcId %1").arg(id)));
                    QVERIFY2(*opened == msg, qPrintable(QString("tcId %1").arg(id)));
                    auto sealed = aes256GcmSeal(key, nonceFrom(iv), aad, msg);
                    QVERIFY(sealed.ok());
                    QVERIFY2(*sealed == ct, qPrintable(QString("tcId %1").arg(id)));
                    ++valid;
                } else {
                    QVERIFY2(!opened.ok(), qPrintable(QString("tcId %1").arg(id)));
                    QCOMPARE(opened.error().code(), ErrorCode::Unauthenticated);
                    ++refused;
                }
            }
        }
        qInfo("Wycheproof AES-256-GCM: %d valid decrypted and re-encrypted, %d invalid refused, "
              "%d with non-96-bit nonces not applicable",
              valid, refused, otherNonceSizes);
        QVERIFY(valid >= 39);
        QVERIFY(refused >= 27);
    }

    void nistGcm()
    {
        SEALTRAIN_REQUIRE_CRYPTOGRAPHY_VECTORS(dir);
        int decrypted = 0;
        int refused = 0;
        for (const char* name : {"gcmDecrypt256.rsp", "gcmEncryptExtIV256.rsp"}) {
            const auto records =
                sealtrain::testing::readCavpRecords(dir / "ciphers" / "AES" / "GCM" / name);
            QVERIFY2(!records.empty(), name);
            for (const auto& record : records) {
                if (record.at("IVlen") != "96" || record.at("Taglen") != "128")
                    continue;
                const auto key = secret(hex(record.at("Key")));
                const auto nonce = nonceFrom(hex(record.at("IV")));
                const auto aad = hex(record.at("AAD"));
                const auto ct = concat(hex(record.at("CT")), hex(record.at("Tag")));
                auto opened = aes256GcmOpen(key, nonce, aad, ct);
                if (record.count("FAIL") != 0) {
                    QVERIFY(!opened.ok());
                    QCOMPARE(opened.error().code(), ErrorCode::Unauthenticated);
                    ++refused;
                } else {
                    QVERIFY(opened.ok());
                    QVERIFY(*opened == hex(record.at("PT")));
                    auto sealed = aes256GcmSeal(key, nonce, aad, *opened);
                    QVERIFY(sealed.ok() && *sealed == ct);
                    ++decrypted;
                }
            }
        }
        qInfo("NIST CAVP GCM (256-bit key, 96-bit IV, 128-bit tag): %d verified, %d refused",
              decrypted, refused);
        QVERIFY(decrypted > 100);
        QVERIFY(refused > 20);
    }

    void wycheproofHkdf_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("hash");
        QTest::newRow("HKDF-SHA-512") << "hkdf_sha512_test.json" << int(HkdfHash::Sha512);
        QTest::newRow("HKDF-SHA-256") << "hkdf_sha256_test.json" << int(HkdfHash::Sha256);
    }

    void wycheproofHkdf()
    {
        QFETCH(QString, file);
        QFETCH(int, hash);
        SEALTRAIN_REQUIRE_TEST_VECTORS(dir, "wycheproof");
        const auto json = loadJson(dir / file.toStdString());
        int valid = 0;
        int refused = 0;
        for (const auto& group : json.at("testGroups")) {
            for (const auto& test : group.at("tests")) {
                const auto id = test.at("tcId").get<int>();
                const auto size = test.at("size").get<std::size_t>();
                auto okm = hkdf(static_cast<HkdfHash>(hash), hex(test.at("ikm")),
                                hex(test.at("salt")), hex(test.at("info")), size);
                if (test.at("result") == "valid") {
                    QVERIFY2(okm.ok(), qPrintable(QString("tcId %1").arg(id)));
                    const auto expected = hex(test.at("okm"));
                    QVERIFY2(std::equal(expected.begin(), expected.end(), okm->bytes().begin(),
                                        okm->bytes().end()),
                             qPrintable(QString("tcId %1").arg(id)));
                    ++valid;
                } else {
                    QVERIFY2(!okm.ok(), qPrintable(QString("tcId %1").arg(id)));
                    QCOMPARE(okm.error().code(), ErrorCode::InvalidArgument);
                    ++refused;
                }
            }
        }
        qInfo("Wycheproof %s: %d valid, %d refused", qPrintable(file), valid, refused);
        QVERIFY(valid >= 80);
        QVERIFY(refused >= 3);
    }

    void rfc5869()
    {
        SEALTRAIN_REQUIRE_CRYPTOGRAPHY_VECTORS(dir);
        const auto records =
            sealtrain::testing::readCavpRecords(dir / "KDF" / "rfc-5869-HKDF-SHA256.txt");
        int checked = 0;
        for (const auto& record : records) {
            if (record.count("OKM") == 0)
                continue;
            QCOMPARE(record.at("Hash"), std::string("SHA-256"));
            const auto ikm = hex(record.at("IKM"));
            const auto salt = hex(record.at("salt"));
            const auto info = hex(record.at("info"));
            const auto length = static_cast<std::size_t>(std::stoul(record.at("L")));
            auto prk = hkdfExtract(HkdfHash::Sha256, ikm, salt);
            QVERIFY(prk.ok());
            const auto expectedPrk = hex(record.at("PRK"));
            QVERIFY(std::equal(expectedPrk.begin(), expectedPrk.end(), prk->bytes().begin(),
                               prk->bytes().end()));
            auto expanded = hkdfExpand(HkdfHash::Sha256, prk->bytes(), info, length);
            auto oneShot = hkdf(HkdfHash::Sha256, ikm, salt, info, length);
            QVERIFY(expanded.ok() && oneShot.ok());
            const auto okm = hex(record.at("OKM"));
            QVERIFY(std::equal(okm.begin(), okm.end(), expanded->bytes().begin(),
                               expanded->bytes().end()));
            QVERIFY(oneShot->equals(*expanded));
            ++checked;
        }
        qInfo("RFC 5869 HKDF-SHA-256: %d cases", checked);
        QCOMPARE(checked, 3);
    }

    void hkdfLimits()
    {
        const std::vector<std::uint8_t> ikm(32, 1);
        QVERIFY(hkdf(HkdfHash::Sha512, ikm, {}, {}, std::size_t{255} * 64).ok());
        QVERIFY(!hkdf(HkdfHash::Sha512, ikm, {}, {}, std::size_t{255} * 64 + 1).ok());
        QVERIFY(!hkdf(HkdfHash::Sha256, ikm, {}, {}, 0).ok());
        QVERIFY(!hkdfExpand(HkdfHash::Sha512, {}, {}, 32).ok());
    }
};

QTEST_APPLESS_MAIN(TestAead)
#include "test_crypto_aead.moc"
