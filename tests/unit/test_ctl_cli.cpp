// sealtrainctl's command line: --version, --help, doctor, clear usage errors, and prompts that
// name the option that answers them when there is no terminal.
#include "ctl_runner.h"

#include "sealtrain/base/version.h"

#include <QtTest/QtTest>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

using sealtrain::testing::runCtl;

namespace {

// runCtl in a child process without a controlling terminal (its own session), as under cron or
// CI: a prompt can not be asked there. Only the exit status and standard error come back.
sealtrain::testing::CtlOutcome runWithoutTerminal(const std::vector<std::string>& args)
{
    int fds[2];
    if (::pipe(fds) != 0)
        return {-1, {}, "pipe failed"};
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(fds[0]);
        (void)::setsid();
        const auto outcome = runCtl(args);
        const std::string report = std::to_string(outcome.code) + "\n" + outcome.err;
        const bool written =
            ::write(fds[1], report.data(), report.size()) == static_cast<ssize_t>(report.size());
        ::_exit(written ? 0 : 1);
    }
    ::close(fds[1]);
    std::string report;
    char buffer[4096];
    for (ssize_t got = 0; (got = ::read(fds[0], buffer, sizeof buffer)) > 0;)
        report.append(buffer, static_cast<std::size_t>(got));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(child, &status, 0);
    const auto newline = report.find('\n');
    if (newline == std::string::npos)
        return {-1, {}, report};
    return {std::stoi(report.substr(0, newline)), {}, report.substr(newline + 1)};
}

}  // namespace

class TestCtl : public QObject {
    Q_OBJECT

private slots:
    // `init` runs sealtrain-control's tool; the CLI finds it before it asks for any secret.
    void initTestCase() { ::setenv("SEALTRAIN_CONTROL", SEALTRAIN_CONTROL_EXECUTABLE, 1); }

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

    // Issue #13 item 19: `user create` without --password-file said "pass --passphrase-file
    // FILE", an option that answers another question.
    void promptsNameTheOptionThatAnswersThem_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("option");
        QTest::newRow("init: keyring passphrase")
            << QStringList{"init", "--data-dir", "DIR", "--admin", "alice"}
            << "--passphrase-file FILE";
        QTest::newRow("init: admin password")
            << QStringList{"init", "--data-dir", "DIR",  "--master-key-file",
                           "KEY",  "--admin",    "alice"}
            << "--admin-password-file FILE";
        QTest::newRow("sign-in: password")
            << QStringList{"sign-in", "--user", "carol", "--client-dir", "DIR"}
            << "--password-file FILE";
        QTest::newRow("sign-in: TOTP code")
            << QStringList{"sign-in", "--user",          "carol",   "--client-dir",
                           "DIR",     "--password-file", "PASSWORD"}
            << "--totp-code CODE";
        QTest::newRow("sign-in: new password after a reset")
            << QStringList{"sign-in",           "--user",  "carol", "--client-dir", "DIR",
                           "--reset-code-file", "PASSWORD"}
            << "--password-file FILE";
        QTest::newRow("keyring change-passphrase: current passphrase")
            << QStringList{"keyring", "change-passphrase", "--client-dir", "DIR", "--as", "alice"}
            << "--passphrase-file FILE";
    }

    void promptsNameTheOptionThatAnswersThem()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, option);
        QTemporaryDir dir;
        const std::string password = dir.filePath("password").toStdString();
        std::ofstream(password) << "a long enough passphrase\n";
        ::chmod(password.c_str(), 0600);
        std::vector<std::string> argv;
        for (const auto& arg : args) {
            const std::string word = arg.toStdString();
            argv.push_back(word == "DIR"        ? dir.filePath("data").toStdString()
                           : word == "KEY"      ? dir.filePath("master.key").toStdString()
                           : word == "PASSWORD" ? password
                                                : word);
        }
        const auto outcome = runWithoutTerminal(argv);
        QCOMPARE(outcome.code, sealtrain::ctl::kExitFailure);
        QVERIFY2(outcome.err.find("There is no terminal") != std::string::npos,
                 outcome.err.c_str());
        QVERIFY2(outcome.err.find("pass " + option.toStdString() + ".") != std::string::npos,
                 outcome.err.c_str());
        QCOMPARE(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1L);
    }
};

QTEST_APPLESS_MAIN(TestCtl)
#include "test_ctl_cli.moc"
