// Strict UTF-8: what decodes, and the malformed sequences every layer must refuse.
#include "sealtrain/base/utf8.h"

#include <QtTest/QtTest>

class TestUtf8 : public QObject {
    Q_OBJECT

private slots:
    // Issue #27: text another user chose reaches a terminal only with its controls made visible
    // (an approver's `job show` was cleared by a reason holding ESC [2J).
    void controlsAreEscapedForTerminals_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QByteArray>("shown");
        QTest::newRow("plain text stays") << QByteArray("approve it, caf\xc3\xa9 \xe2\x82\xac")
                                          << QByteArray("approve it, caf\xc3\xa9 \xe2\x82\xac");
        QTest::newRow("clear screen")
            << QByteArray("ok\x1b[2J\x1b[Hforged") << QByteArray("ok\\x1b[2J\\x1b[Hforged");
        QTest::newRow("a forged line")
            << QByteArray("fine\napproved by ann\r") << QByteArray("fine\\napproved by ann\\r");
        QTest::newRow("tab, DEL, NUL")
            << QByteArray("a\tb\x7f", 4) + QByteArray(1, '\0') << QByteArray("a\\tb\\x7f\\x00");
        QTest::newRow("C1 control (CSI)") << QByteArray("x\xc2\x9b"
                                                        "2J")
                                          << QByteArray("x\\xc2\\x9b2J");
        QTest::newRow("not UTF-8") << QByteArray("\xff\xfe!") << QByteArray("\\xff\\xfe!");
    }

    void controlsAreEscapedForTerminals()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QByteArray, shown);
        const std::string out = sealtrain::escapeControls(
            std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
        QCOMPARE(QByteArray::fromStdString(out), shown);
    }

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
