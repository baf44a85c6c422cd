// The test-vector locator: explicit setting, default location, and a wrong setting.
#include "testvectors.h"

#include <QtTest/QtTest>

class TestTestVectors : public QObject {
    Q_OBJECT

private slots:
    void cleanup() { qunsetenv("SEALTRAIN_TEST_VECTORS"); }

    void explicitDirectoryWins()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        qputenv("SEALTRAIN_TEST_VECTORS", dir.path().toUtf8());
        const auto found = sealtrain::testing::findTestVectors();
        QVERIFY(found.has_value());
        QCOMPARE(QString::fromStdString(found->string()), dir.path());
    }

    void wrongSettingDoesNotFallBack()
    {
        qputenv("SEALTRAIN_TEST_VECTORS", "/nonexistent/sealtrain/vectors");
        QVERIFY(!sealtrain::testing::findTestVectors().has_value());
    }

    void messageSaysWhatToDo()
    {
        const auto message = sealtrain::testing::missingTestVectorsMessage("merkle");
        QVERIFY(message.find("SEALTRAIN_TEST_VECTORS") != std::string::npos);
        QVERIFY(message.find("merkle") != std::string::npos);
    }

    void sharedVectorsAreFound()
    {
        SEALTRAIN_REQUIRE_TEST_VECTORS(dir, "wycheproof");
        QVERIFY(std::filesystem::exists(dir.parent_path() / "README.md"));
    }
};

QTEST_APPLESS_MAIN(TestTestVectors)
#include "test_support_testvectors.moc"
