// DSSE v1 envelopes: the PAE bytes of the specification's example, sign/verify, JSON round trip,
// and every way an envelope can be altered or left unsigned.
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/dsse.h"

#include <QtTest/QtTest>

#include <string>

using namespace sealtrain;
using namespace sealtrain::crypto;

namespace {

SigningKey freshKey()
{
    auto key = SigningKey::generate();
    if (!key)
        qFatal("%s", key.error().message().c_str());
    return std::move(*key);
}

std::string text(const std::vector<std::uint8_t>& bytes)
{
    return {bytes.begin(), bytes.end()};
}

}  // namespace

class TestDsse : public QObject {
    Q_OBJECT

private slots:
    void paeMatchesSpecification()
    {
        // The example in the DSSE protocol document.
        QCOMPARE(text(dssePae("http://example.com/HelloWorld", asBytes("hello world"))),
                 std::string("DSSEv1 29 http://example.com/HelloWorld 11 hello world"));
        QCOMPARE(text(dssePae("", {})), std::string("DSSEv1 0  0 "));
    }

    void signVerifyAndJsonRoundTrip()
    {
        const auto key = freshKey();
        const auto envelope = signDsse("application/vnd.in-toto+json", asBytes(R"({"a":1})"), key);
        QCOMPARE(envelope.signatures.size(), std::size_t{1});
        QCOMPARE(envelope.signatures[0].keyid, key.publicKey().keyId());
        QVERIFY(verifyDsse(envelope, key.publicKey()).ok());

        const auto json = envelope.toJson();
        QVERIFY(json.find("\"payload\":\"eyJhIjoxfQ==\"") != std::string::npos);
        const auto parsed = DsseEnvelope::fromJson(json);
        QVERIFY(parsed.ok());
        QCOMPARE(parsed->payloadType, envelope.payloadType);
        QVERIFY(parsed->payload == envelope.payload);
        QVERIFY(parsed->signatures[0].sig == envelope.signatures[0].sig);
        QVERIFY(verifyDsse(*parsed, key.publicKey()).ok());
    }

    void urlSafeBase64IsAccepted()
    {
        const auto key = freshKey();
        // Bytes whose standard base64 has '+' and '/', which base64url writes as '-' and '_'.
        const std::vector<std::uint8_t> payload{0xfb, 0xff, 0xfe};
        const auto envelope = signDsse("t", payload, key);
        auto json = envelope.toJson();
        const auto standard = toBase64(payload);
        const auto urlSafe = toBase64Url(payload);
        QVERIFY(standard != urlSafe);
        json.replace(json.find(standard), standard.size(), urlSafe);
        const auto parsed = DsseEnvelope::fromJson(json);
        QVERIFY(parsed.ok());
        QVERIFY(verifyDsse(*parsed, key.publicKey()).ok());
    }

    void tamperingIsRefused_data()
    {
        QTest::addColumn<int>("change");
        QTest::newRow("payload byte") << 0;
        QTest::newRow("payload appended") << 1;
        QTest::newRow("payloadType") << 2;
        QTest::newRow("signature bit") << 3;
        QTest::newRow("no signatures") << 4;
        QTest::newRow("signature by another key") << 5;
        QTest::newRow("type and payload moved across the boundary") << 6;
        QTest::newRow("keyid names the trusted key, signature by another") << 7;
    }

    void tamperingIsRefused()
    {
        QFETCH(int, change);
        const auto key = freshKey();
        const auto other = freshKey();
        auto envelope = signDsse("type/a", asBytes("payload"), key);
        switch (change) {
        case 0: envelope.payload[0] ^= 1; break;
        case 1: envelope.payload.push_back('!'); break;
        case 2: envelope.payloadType = "type/b"; break;
        case 3: envelope.signatures[0].sig[10] ^= 0x40; break;
        case 4: envelope.signatures.clear(); break;
        case 5: envelope = signDsse("type/a", asBytes("payload"), other); break;
        case 6: {
            // PAE lengths make "type/a p" + "ayload" differ from "type/a" + "payload".
            envelope.payloadType = "type/a p";
            envelope.payload = {'a', 'y', 'l', 'o', 'a', 'd'};
            break;
        }
        case 7: {
            envelope = signDsse("type/a", asBytes("payload"), other);
            envelope.signatures[0].keyid = key.publicKey().keyId();
            break;
        }
        default: QFAIL("unknown change");
        }
        const auto verdict = verifyDsse(envelope, key.publicKey());
        QVERIFY(!verdict.ok());
        QCOMPARE(verdict.error().code(), ErrorCode::Unauthenticated);
        QVERIFY(isOneSentence(verdict.error().message()));
    }

    void oneGoodSignatureAmongBadOnesVerifies()
    {
        const auto key = freshKey();
        const auto other = freshKey();
        auto envelope = signDsse("t", asBytes("p"), other);
        envelope.signatures.push_back({"", std::vector<std::uint8_t>(7, 1)});
        const auto mine = signDsse("t", asBytes("p"), key);
        envelope.signatures.push_back(mine.signatures[0]);
        QVERIFY(verifyDsse(envelope, key.publicKey()).ok());
        QVERIFY(verifyDsse(envelope, other.publicKey()).ok());
        QVERIFY(!verifyDsse(envelope, freshKey().publicKey()).ok());
    }

    void malformedJsonIsRefused_data()
    {
        QTest::addColumn<QString>("json");
        QTest::newRow("not json") << "{";
        QTest::newRow("array") << "[]";
        QTest::newRow("no payload") << R"({"payloadType":"t","signatures":[]})";
        QTest::newRow("no type") << R"({"payload":"","signatures":[]})";
        QTest::newRow("no signatures") << R"({"payload":"","payloadType":"t"})";
        QTest::newRow("bad base64") << R"({"payload":"a?","payloadType":"t","signatures":[]})";
        QTest::newRow("bad sig")
            << R"({"payload":"","payloadType":"t","signatures":[{"sig":"%"}]})";
        QTest::newRow("sig missing") << R"({"payload":"","payloadType":"t","signatures":[{}]})";
        QTest::newRow("keyid number")
            << R"({"payload":"","payloadType":"t","signatures":[{"keyid":1,"sig":""}]})";
    }

    void malformedJsonIsRefused()
    {
        QFETCH(QString, json);
        const auto parsed = DsseEnvelope::fromJson(json.toStdString());
        QVERIFY(!parsed.ok());
        QCOMPARE(parsed.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(isOneSentence(parsed.error().message()));
    }
};

QTEST_APPLESS_MAIN(TestDsse)
#include "test_crypto_dsse.moc"
