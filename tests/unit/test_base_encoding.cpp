// Hex and base64 codecs: RFC 4648 section 10 vectors, round trips, and strict refusals; canonical
// decimals as the audit log, its tree heads and checkpoints parse them.
#include "sealtrain/base/encoding.h"

#include <QtTest/QtTest>

using namespace sealtrain;

class TestEncoding : public QObject {
    Q_OBJECT

private slots:
    void rfc4648_data()
    {
        QTest::addColumn<QString>("plain");
        QTest::addColumn<QString>("base64");
        QTest::addColumn<QString>("hex");
        QTest::newRow("empty") << ""
                               << ""
                               << "";
        QTest::newRow("f") << "f"
                           << "Zg=="
                           << "66";
        QTest::newRow("fo") << "fo"
                            << "Zm8="
                            << "666f";
        QTest::newRow("foo") << "foo"
                             << "Zm9v"
                             << "666f6f";
        QTest::newRow("foob") << "foob"
                              << "Zm9vYg=="
                              << "666f6f62";
        QTest::newRow("fooba") << "fooba"
                               << "Zm9vYmE="
                               << "666f6f6261";
        QTest::newRow("foobar") << "foobar"
                                << "Zm9vYmFy"
                                << "666f6f626172";
    }

    void rfc4648()
    {
        QFETCH(QString, plain);
        QFETCH(QString, base64);
        QFETCH(QString, hex);
        const std::string text = plain.toStdString();
        QCOMPARE(QString::fromStdString(toBase64(asBytes(text))), base64);
        QCOMPARE(QString::fromStdString(toHex(asBytes(text))), hex);
        const auto decoded = fromBase64(base64.toStdString());
        QVERIFY(decoded.has_value());
        QCOMPARE(std::string(decoded->begin(), decoded->end()), text);
        const auto fromHexText = fromHex(hex.toUpper().toStdString());
        QVERIFY(fromHexText.has_value());
        QCOMPARE(std::string(fromHexText->begin(), fromHexText->end()), text);
        const auto url = fromBase64Url(toBase64Url(asBytes(text)));
        QVERIFY(url.has_value());
        QCOMPARE(std::string(url->begin(), url->end()), text);
    }

    void allBytesRoundTrip()
    {
        std::vector<std::uint8_t> bytes(256);
        for (int i = 0; i < 256; ++i)
            bytes[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
        QCOMPARE(*fromBase64(toBase64(bytes)), bytes);
        QCOMPARE(*fromBase64Url(toBase64Url(bytes)), bytes);
        QCOMPARE(*fromHex(toHex(bytes)), bytes);
        QVERIFY(toBase64Url(bytes).find_first_of("+/=") == std::string::npos);
    }

    void refusals_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("bad length") << "Zm9";
        QTest::newRow("bad char") << "Zm9*";
        QTest::newRow("too much padding") << "Zg===";
        QTest::newRow("missing padding") << "Zg";
        QTest::newRow("non-canonical bits") << "Zh==";
        QTest::newRow("padding inside") << "Zg==Zg==";
    }

    void refusals()
    {
        QFETCH(QString, text);
        QVERIFY(!fromBase64(text.toStdString()).has_value());
    }

    void hexRefusals()
    {
        QVERIFY(!fromHex("abc").has_value());
        QVERIFY(!fromHex("zz").has_value());
    }

    // Times in manifests and `dataset list` are UTC to the second, with a 'Z'.
    void rfc3339()
    {
        QCOMPARE(toRfc3339(0), std::string("1970-01-01T00:00:00Z"));
        QCOMPARE(toRfc3339(1'700'000'000), std::string("2023-11-14T22:13:20Z"));
    }

    void decimals_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<qulonglong>("value");
        QTest::newRow("zero") << "0" << true << 0ULL;
        QTest::newRow("number") << "1024" << true << 1024ULL;
        QTest::newRow("largest") << "18446744073709551615" << true << 18446744073709551615ULL;
        QTest::newRow("overflow") << "18446744073709551616" << false << 0ULL;
        QTest::newRow("leading zero") << "01" << false << 0ULL;
        QTest::newRow("double zero") << "00" << false << 0ULL;
        QTest::newRow("sign") << "+1" << false << 0ULL;
        QTest::newRow("negative") << "-1" << false << 0ULL;
        QTest::newRow("space") << " 1" << false << 0ULL;
        QTest::newRow("trailing") << "1 " << false << 0ULL;
        QTest::newRow("hex") << "0x10" << false << 0ULL;
        QTest::newRow("empty") << "" << false << 0ULL;
    }

    // Sizes and sequence numbers have one spelling each, so a signed text can not be re-spelled.
    void decimals()
    {
        QFETCH(QString, text);
        QFETCH(bool, valid);
        QFETCH(qulonglong, value);
        const auto parsed = parseDecimal(text.toStdString());
        QCOMPARE(parsed.has_value(), valid);
        if (valid)
            QCOMPARE(*parsed, static_cast<std::uint64_t>(value));
    }
};

QTEST_APPLESS_MAIN(TestEncoding)
#include "test_base_encoding.moc"
