// Strict UTF-8: what decodes, and the malformed sequences every layer must refuse.
#include "sealtrain/base/utf8.h"

#include <QtTest/QtTest>

class TestUtf8 : public QObject {
    Q_OBJECT

private slots:
    void validity_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("firstInvalid");  // -1: valid
        QTest::newRow("empty") << QByteArray() << -1;
        QTest::newRow("ascii, longer than a word") << QByteArray("hello, sealed world") << -1;
        QTest::newRow("two, three, four bytes")
            << QByteArray("\xc3\xa9\xe2\x82\xac\xf0\x9f\x94\x92") << -1;
        QTest::newRow("largest code point") << QByteArray("\xf4\x8f\xbf\xbf") << -1;
        QTest::newRow("overlong slash") << QByteArray("ab\xc0\xaf") << 2;
        QTest::newRow("overlong three bytes") << QByteArray("\xe0\x80\xaf") << 0;
        QTest::newRow("surrogate") << QByteArray("x\xed\xa0\x80") << 1;
        QTest::newRow("above U+10FFFF") << QByteArray("\xf4\x90\x80\x80") << 0;
        QTest::newRow("lone continuation") << QByteArray("abcdefgh\x80") << 8;
        QTest::newRow("truncated") << QByteArray("ok\xe2\x82") << 2;
        QTest::newRow("invalid lead") << QByteArray("\xff") << 0;
    }

    void validity()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(int, firstInvalid);
        const std::string_view text(bytes.constData(), static_cast<std::size_t>(bytes.size()));
        const std::size_t expected =
            firstInvalid < 0 ? text.size() : static_cast<std::size_t>(firstInvalid);
        QCOMPARE(sealtrain::firstInvalidUtf8(text), expected);
        QCOMPARE(sealtrain::isValidUtf8(text), firstInvalid < 0);
    }

    void decodes()
    {
        const std::string_view text("\xe2\x82\xac");
        char32_t codePoint = 0;
        QCOMPARE(sealtrain::decodeUtf8(text, 0, codePoint), std::size_t{3});
        QCOMPARE(static_cast<std::uint32_t>(codePoint), 0x20acu);
    }
};

QTEST_APPLESS_MAIN(TestUtf8)
#include "test_base_utf8.moc"
