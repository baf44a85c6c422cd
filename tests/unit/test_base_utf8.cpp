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
        // Issue #54: a right-to-left override makes "report<RLO>txt.exe" read "reportexe.txt";
        // shown, it is named instead.
        QTest::newRow("right-to-left override")
            << QByteArray("report\xe2\x80\xaetxt.exe") << QByteArray("report\\u{202E}txt.exe");
        QTest::newRow("zero-width space, isolate, BOM, tag")
            << QByteArray("a\xe2\x80\x8b"
                          "b\xe2\x81\xa6"
                          "c\xef\xbb\xbf"
                          "d\xf3\xa0\x80\x81")
            << QByteArray("a\\u{200B}b\\u{2066}c\\u{FEFF}d\\u{E0001}");
    }

    // What counts as an invisible format character (Unicode's Cf), and what does not.
    void invisibleFormatCharacters()
    {
        for (const char32_t cp :
             {U'\u00AD', U'\u061C', U'\u200B', U'\u200E', U'\u200F', U'\u202A', U'\u202E',
              U'\u2066', U'\u2069', U'\u2060', U'\uFEFF', U'\U000E0001', U'\U000E007F'})
            QVERIFY2(sealtrain::isInvisibleFormatCharacter(cp),
                     QByteArray::number(static_cast<unsigned>(cp), 16).constData());
        for (const char32_t cp : {U'a', U'\u00E9', U'\u05D0', U'\u0627', U'\u20AC', U'\u2028',
                                  U'\uFE0F', U'\U0001F600', U'\u202F'})
            QVERIFY2(!sealtrain::isInvisibleFormatCharacter(cp),
                     QByteArray::number(static_cast<unsigned>(cp), 16).constData());
        QVERIFY(sealtrain::hasInvisibleFormatCharacter("report\xe2\x80\xaetxt.exe"));
        QVERIFY(!sealtrain::hasInvisibleFormatCharacter("na\xc3\xafve.txt"));
        QVERIFY(!sealtrain::hasInvisibleFormatCharacter("\xe2\x80"));
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
