// sealtrainctl's command line: --version, --help, doctor, and clear usage errors.
#include "ctl_runner.h"

#include "sealtrain/base/version.h"

#include <QtTest/QtTest>

#include <sstream>

using sealtrain::testing::runCtl;

class TestCtl : public QObject {
    Q_OBJECT

private slots:
    void version()
    {
        const auto outcome = runCtl({"--version"});
        QCOMPARE(outcome.code, sealtrain::ctl::kExitOk);
        QVERIFY(outcome.out.find(sealtrain::kVersion) != std::string::npos);
    }

    void helpListsCommands()
    {
        const auto outcome = runCtl({"--help"});
        QCOMPARE(outcome.code, sealtrain::ctl::kExitOk);
        QVERIFY(outcome.out.find("doctor") != std::string::npos);
        QVERIFY(outcome.out.find("--log-level") != std::string::npos);
    }

    void doctorRunsAndWarnsWithoutFailing()
    {
        QTemporaryDir dir;
        const auto outcome = runCtl({"doctor", "--data-dir", dir.path().toStdString()});
        QCOMPARE(outcome.code, sealtrain::ctl::kExitOk);
        QVERIFY(outcome.out.find("OpenSSL") != std::string::npos);
        QVERIFY(outcome.out.find("Ready") != std::string::npos);
    }

    void doctorJson()
    {
        const auto outcome = runCtl({"doctor", "--json"});
        QCOMPARE(outcome.code, sealtrain::ctl::kExitOk);
        QVERIFY(outcome.out.find("\"checks\"") != std::string::npos);
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("no command") << QStringList{};
        QTest::newRow("unknown command") << QStringList{"frobnicate"};
        QTest::newRow("unknown option") << QStringList{"doctor", "--colour"};
        QTest::newRow("bad log level") << QStringList{"--log-level", "loud", "doctor"};
    }

    void usageErrors()
    {
        QFETCH(QStringList, args);
        std::vector<std::string> argv;
        for (const auto& arg : args)
            argv.push_back(arg.toStdString());
        const auto outcome = runCtl(argv);
        QCOMPARE(outcome.code, sealtrain::ctl::kExitUsage);
        QVERIFY(outcome.out.empty());
        QVERIFY2(outcome.err.find("sealtrainctl --help") != std::string::npos, outcome.err.c_str());
        QCOMPARE(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1L);
    }
};

QTEST_APPLESS_MAIN(TestCtl)
#include "test_ctl_cli.moc"
