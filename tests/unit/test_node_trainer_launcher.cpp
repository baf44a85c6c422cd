// The trainer's process as the launcher starts it (node/trainer_launcher.h, issue #27):
// whatever the launcher's own standard input, signal mask and open descriptors are (the daemon's
// were its passphrase file, SIGTERM blocked for its sigwait, its sockets), the child reads
// /dev/null, starts with an empty mask and default handlers, and holds no descriptor but its own.
#include "sealtrain/node/trainer_launcher.h"

#include <QTemporaryDir>
#include <QtTest/QtTest>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

using namespace sealtrain;

namespace {

constexpr const char* kPassphrase = "PASSPHRASE-ON-STDIN-5c1e";

// A stand-in trainer: reports what it can read on standard input, its blocked and ignored signals
// and its open descriptors, and the keys it was handed.
constexpr const char* kProbe = R"sh(#!/bin/sh
# argv: --keys-fd N
echo "stdin=$(head -c 200 2>/dev/null)"
echo "keys=$(head -c 200 <&$2)"
grep -E '^Sig(Blk|Ign):' /proc/self/status
echo "fds=$(ls /proc/$$/fd | sort -n | tr '\n' ' ')"
)sh";

}  // namespace

class TestCoreTrainerLauncher : public QObject {
    Q_OBJECT

private slots:
    void childInheritsNothingButItsPipes();
    void stopReasonKillsTheChild();
    void inputGoesOnStandardInput();
};

void TestCoreTrainerLauncher::childInheritsNothingButItsPipes()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string probe = tmp.filePath("probe.sh").toStdString();
    std::ofstream(probe) << kProbe;
    QCOMPARE(::chmod(probe.c_str(), 0700), 0);
    const std::string passphraseFile = tmp.filePath("passphrase").toStdString();
    std::ofstream(passphraseFile) << kPassphrase << "\n";

    // The launcher as the daemon is: the passphrase file on stdin, SIGTERM blocked, SIGPIPE
    // ignored, and a descriptor open without close-on-exec.
    const int savedStdin = ::dup(STDIN_FILENO);
    QVERIFY(savedStdin >= 0);
    const int passphrase = ::open(passphraseFile.c_str(), O_RDONLY);
    QVERIFY(passphrase >= 0);
    QVERIFY(::dup2(passphrase, STDIN_FILENO) == STDIN_FILENO);
    const int opened = ::open(passphraseFile.c_str(), O_RDONLY);
    const int leaked = ::fcntl(opened, F_DUPFD, 20);  // without close-on-exec
    QVERIFY(leaked >= 20);
    ::close(opened);
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigset_t previousMask;
    QCOMPARE(pthread_sigmask(SIG_BLOCK, &blocked, &previousMask), 0);
    struct sigaction ignore {};
    struct sigaction previousPipe {};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &previousPipe);

    std::string output;
    auto keys =
        crypto::SecretBytes::fromBytes({reinterpret_cast<const std::uint8_t*>("the-keys"), 8});
    QVERIFY(keys);
    auto status = node::runTrainer({"/bin/sh", probe, {}, {}, {}, {}}, std::move(keys).value(),
                                   [&](std::string_view line) { output += line; });

    ::sigaction(SIGPIPE, &previousPipe, nullptr);
    pthread_sigmask(SIG_SETMASK, &previousMask, nullptr);
    ::dup2(savedStdin, STDIN_FILENO);
    ::close(savedStdin);
    ::close(passphrase);
    ::close(leaked);

    QVERIFY2(status, status ? "" : status.error().message().c_str());
    QCOMPARE(*status, 0);
    const QString report = QString::fromStdString(output);
    QVERIFY2(!report.contains(kPassphrase), qPrintable(report));
    QVERIFY2(report.contains("stdin=\n"), qPrintable(report));
    QVERIFY2(report.contains("keys=the-keys"), qPrintable(report));
    QVERIFY2(report.contains(QRegularExpression("SigBlk:\\s+0+\n")), qPrintable(report));
    // Ignored: none of the signals a launcher sends or a pipe raises (glibc's own real-time
    // ones, 32 and 33, may show).
    bool hex = false;
    const qulonglong ignored = QRegularExpression("SigIgn:\\s+([0-9a-f]+)")
                                   .match(report)
                                   .captured(1)
                                   .toULongLong(&hex, 16);
    QVERIFY2(hex, qPrintable(report));
    for (const int signal : {SIGPIPE, SIGTERM, SIGINT, SIGHUP})
        QVERIFY2(((ignored >> (signal - 1)) & 1U) == 0, qPrintable(report));
    // The shell's descriptors: 0 to 2, the keys on 3 (and the one dash reads its script from);
    // never the launcher's leaked one.
    const auto fds = QRegularExpression("fds=([0-9 ]*)")
                         .match(report)
                         .captured(1)
                         .split(' ', Qt::SkipEmptyParts);
    QVERIFY2(fds.contains("3"), qPrintable(report));
    QVERIFY2(!fds.contains(QString::number(leaked)), qPrintable(report));
}

// Issue #27, item 11: a sampler whose caller went away (or that ran past its time) is killed,
// not left running: the launcher asks stopReason while the child runs, kills it once it answers,
// and fails with that reason; the child is gone when runTrainer returns.
void TestCoreTrainerLauncher::stopReasonKillsTheChild()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string sleeper = tmp.filePath("sleeper.sh").toStdString();
    const std::string marker = tmp.filePath("ran-to-the-end").toStdString();
    std::ofstream(sleeper) << "#!/bin/sh\necho \"pid=$$\"\nsleep 3 </dev/null >/dev/null 2>&1\n"
                           << "echo late > " << marker << "\n";
    QCOMPARE(::chmod(sleeper.c_str(), 0700), 0);
    std::string output;
    int asked = 0;
    node::TrainerLaunch launch{"/bin/sh",
                               sleeper,
                               {},
                               {},
                               [&]() -> std::optional<std::string> {
                                   if (++asked < 3)
                                       return std::nullopt;
                                   return std::string("The caller went away.");
                               },
                               {}};
    auto keys = crypto::SecretBytes::fromBytes({reinterpret_cast<const std::uint8_t*>("k"), 1});
    QVERIFY(keys);
    auto status = node::runTrainer(launch, std::move(keys).value(),
                                   [&](std::string_view line) { output += line; });
    QVERIFY(!status);
    QCOMPARE(status.error().code(), ErrorCode::ResourceExhausted);
    QCOMPARE(status.error().message(), std::string("The caller went away."));
    QCOMPARE(asked, 3);
    const auto pid = QRegularExpression("pid=([0-9]+)").match(QString::fromStdString(output));
    QVERIFY2(pid.hasMatch(), output.c_str());
    QCOMPARE(::kill(static_cast<pid_t>(pid.captured(1).toInt()), 0), -1);
    QCOMPARE(errno, ESRCH);
    QVERIFY2(!std::filesystem::exists(marker), "the stand-in ran to its end: it was not killed");
}

// Issue #27, item 4: a sampler's prompt reaches it on standard input, never in its argv (which
// every user of the host reads in the process list), and it still gets its keys.
void TestCoreTrainerLauncher::inputGoesOnStandardInput()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const std::string probe = tmp.filePath("probe.sh").toStdString();
    std::ofstream(probe) << "#!/bin/sh\necho \"stdin=$(cat)\"\necho \"keys=$(cat <&$2)\"\n"
                         << "echo \"argv=$(tr '\\0' ' ' </proc/$$/cmdline)\"\n";
    QCOMPARE(::chmod(probe.c_str(), 0700), 0);
    // Larger than a pipe's buffer, so the write must go on while the child reads.
    const std::string prompt = "PROMPT-" + std::string(std::size_t{100} * 1024, 'p');
    auto keys = crypto::SecretBytes::fromBytes({reinterpret_cast<const std::uint8_t*>("k2"), 2});
    QVERIFY(keys);
    std::string output;
    auto status =
        node::runTrainer({"/bin/sh", probe, {"--prompt-stdin"}, {}, {}, prompt},
                         std::move(keys).value(), [&](std::string_view line) { output += line; });
    QVERIFY2(status, status ? "" : status.error().message().c_str());
    QCOMPARE(*status, 0);
    QVERIFY2(output.find("stdin=" + prompt + "\n") != std::string::npos,
             output.substr(0, 200).c_str());
    QVERIFY2(output.find("keys=k2\n") != std::string::npos, output.substr(0, 200).c_str());
    const auto argv = output.substr(output.find("argv="));
    QVERIFY2(argv.find("--prompt-stdin") != std::string::npos, argv.c_str());
    QVERIFY2(argv.find("PROMPT-") == std::string::npos, argv.c_str());

    // A child that never reads its standard input does not hang the launcher.
    std::ofstream(probe, std::ios::trunc) << "#!/bin/sh\ncat <&$2 >/dev/null\necho done\n";
    auto more = crypto::SecretBytes::fromBytes({reinterpret_cast<const std::uint8_t*>("k"), 1});
    QVERIFY(more);
    output.clear();
    status = node::runTrainer({"/bin/sh", probe, {}, {}, {}, prompt}, std::move(more).value(),
                              [&](std::string_view line) { output += line; });
    QVERIFY2(status, status ? "" : status.error().message().c_str());
    QCOMPARE(output, std::string("done\n"));
}

QTEST_APPLESS_MAIN(TestCoreTrainerLauncher)
#include "test_node_trainer_launcher.moc"
