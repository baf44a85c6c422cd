// Result<T> and the one-sentence rule for user-facing error messages.
#include "sealtrain/base/result.h"

#include <QtTest/QtTest>

#include <memory>

using sealtrain::Error;
using sealtrain::ErrorCode;
using sealtrain::Result;

namespace {

Result<int> parsePositive(int value)
{
    if (value <= 0)
        return Error(ErrorCode::InvalidArgument, "The value must be positive; pass 1 or more.");
    return value;
}

Result<int> doubled(int value)
{
    auto parsed = parsePositive(value);
    if (!parsed)
        return parsed.error().withContext("Cannot double the value");
    return *parsed * 2;
}

Result<void> chained(int value)
{
    SEALTRAIN_TRY(parsePositive(value));
    return sealtrain::success();
}

}  // namespace

class TestResult : public QObject {
    Q_OBJECT

private slots:
    void valueAndError()
    {
        const auto good = parsePositive(3);
        QVERIFY(good.ok());
        QCOMPARE(*good, 3);

        const auto bad = parsePositive(-1);
        QVERIFY(!bad.ok());
        QCOMPARE(bad.error().code(), ErrorCode::InvalidArgument);
        QVERIFY(sealtrain::isOneSentence(bad.error().message()));
    }

    void contextKeepsOneSentence()
    {
        const auto bad = doubled(0);
        QVERIFY(!bad);
        QCOMPARE(
            QString::fromStdString(bad.error().message()),
            QStringLiteral("Cannot double the value: the value must be positive; pass 1 or more."));
        QVERIFY(sealtrain::isOneSentence(bad.error().message()));
        QCOMPARE(*doubled(4), 8);
    }

    void tryPropagates()
    {
        QVERIFY(chained(1).ok());
        const auto failed = chained(0);
        QVERIFY(!failed.ok());
        QCOMPARE(failed.error().code(), ErrorCode::InvalidArgument);
    }

    void moveOnlyValues()
    {
        Result<std::unique_ptr<int>> holder = std::make_unique<int>(7);
        QVERIFY(holder.ok());
        std::unique_ptr<int> taken = std::move(holder).value();
        QCOMPARE(*taken, 7);
    }

    void oneSentence_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("expected");
        QTest::newRow("plain") << "The file is missing." << true;
        QTest::newRow("with advice") << "The key is wrong; check --key-file." << true;
        QTest::newRow("quoted start") << "'data.csv' has no column 'text'." << true;
        QTest::newRow("path inside") << "Cannot read /tmp/a.b/c.txt: permission denied." << true;
        QTest::newRow("no full stop") << "The file is missing" << false;
        QTest::newRow("two sentences") << "The file is missing. Try again." << false;
        QTest::newRow("line break") << "The file\nis missing." << false;
        QTest::newRow("lowercase start") << "the file is missing." << false;
        QTest::newRow("empty") << "" << false;
    }

    void oneSentence()
    {
        QFETCH(QString, text);
        QFETCH(bool, expected);
        QCOMPARE(sealtrain::isOneSentence(text.toStdString()), expected);
    }

    void foreignMessagesBecomeClauses_data()
    {
        QTest::addColumn<QString>("foreign");
        QTest::addColumn<QString>("clause");
        QTest::newRow("sqlite") << "database is locked"
                                << "database is locked";
        QTest::newRow("full stop") << "file is not a database."
                                   << "file is not a database";
        QTest::newRow("two sentences") << "Out of memory. Free some memory."
                                       << "Out of memory; Free some memory";
        QTest::newRow("lines") << "cudaMalloc failed\n  out of memory\n"
                               << "cudaMalloc failed out of memory";
        QTest::newRow("empty") << ""
                               << "";
    }

    // Another library's words go inside our sentence, which must stay one sentence.
    void foreignMessagesBecomeClauses()
    {
        QFETCH(QString, foreign);
        QFETCH(QString, clause);
        const std::string made = sealtrain::asClause(foreign.toStdString());
        QCOMPARE(QString::fromStdString(made), clause);
        QVERIFY(sealtrain::isOneSentence("The call failed (" + made + "); try again."));
    }

    void codeNamesAreDistinct()
    {
        QSet<QString> names;
        for (int i = 0; i <= static_cast<int>(ErrorCode::Internal); ++i)
            names.insert(QString::fromLatin1(sealtrain::errorCodeName(static_cast<ErrorCode>(i))));
        QCOMPARE(names.size(), static_cast<int>(ErrorCode::Internal) + 1);
    }
};

QTEST_APPLESS_MAIN(TestResult)
#include "test_base_result.moc"
