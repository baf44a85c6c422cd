// Starting a child (base/child_process.h), the one function behind the trainer launcher and the
// worker's mpirun and sbatch: the child sees only what it is given (its standard input, the
// descriptors moved to the numbers it expects, even when they sit where another goes), a clean
// signal state whatever the parent blocked or ignored, and its output comes back line by line.
#include "sealtrain/base/child_process.h"

#include <QtTest/QtTest>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>
#include <vector>

using namespace sealtrain;

namespace {

// A pipe whose ends are closed with it.
struct Pipe {
    int read = -1;
    int write = -1;
    Pipe()
    {
        int fds[2] = {-1, -1};
        if (::pipe2(fds, O_CLOEXEC) != 0)
            qFatal("no pipe");
        read = fds[0];
        write = fds[1];
    }
    Pipe(const Pipe&) = delete;
    Pipe& operator=(const Pipe&) = delete;
    ~Pipe()
    {
        closeRead();
        closeWrite();
    }
    void closeRead()
    {
        if (read >= 0)
            ::close(read);
        read = -1;
    }
    void closeWrite()
    {
        if (write >= 0)
            ::close(write);
        write = -1;
    }
};

void put(int fd, const std::string& text)
{
    QCOMPARE(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

// Runs `script` under /bin/sh with its standard output on a pipe and `extra` descriptors, and
// returns what it printed, line by line.
std::vector<std::string> run(const std::string& script, std::vector<std::pair<int, int>> extra = {},
                             int standardInput = -1)
{
    Pipe out;
    ChildLaunch launch;
    launch.argv = {"/bin/sh", "-c", script};
    launch.standardInput = standardInput;
    launch.descriptors = std::move(extra);
    launch.descriptors.emplace_back(out.write, STDOUT_FILENO);
    auto pid = spawnChild(launch);
    if (!pid)
        qFatal("cannot start /bin/sh: %s", pid.error().message().c_str());
    out.closeWrite();
    std::vector<std::string> lines;
    relayLines(out.read, [&](std::string_view line) { lines.emplace_back(line); });
    auto status = waitChild(*pid, "The shell", "try again.");
    if (!status || *status != 0)
        qFatal("the shell failed");
    return lines;
}

}  // namespace

class TestBaseChildProcess : public QObject {
    Q_OBJECT

private slots:
    void linesComeBackWhole()
    {
        Pipe pipe;
        put(pipe.write, "first\nsec");
        put(pipe.write, "ond\nlast without newline");
        pipe.closeWrite();
        std::vector<std::string> lines;
        relayLines(pipe.read, [&](std::string_view line) { lines.emplace_back(line); });
        QCOMPARE(lines, (std::vector<std::string>{"first\n", "second\n", "last without newline"}));
    }

    // Standard input is /dev/null unless a descriptor is given; a descriptor the parent left
    // inheritable is closed; the signal mask is empty and SIGPIPE has its default action,
    // although the parent blocks SIGTERM and ignores SIGPIPE.
    void theChildSeesOnlyWhatItIsGiven()
    {
        const int leaked = ::open("/dev/null", O_RDONLY);  // no O_CLOEXEC: inheritable
        QVERIFY(leaked > 2);
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        sigset_t previousMask;
        QCOMPARE(pthread_sigmask(SIG_BLOCK, &term, &previousMask), 0);
        struct sigaction ignore {};
        struct sigaction previous {};
        ignore.sa_handler = SIG_IGN;
        ::sigaction(SIGPIPE, &ignore, &previous);

        const auto lines = run("readlink /proc/self/fd/0; "
                               "if [ -e /proc/self/fd/"
                               + std::to_string(leaked)
                               + " ]; then echo leaked; "
                                 "else echo closed; fi; "
                                 "grep -E '^Sig(Blk|Ign):' /proc/self/status");
        ::sigaction(SIGPIPE, &previous, nullptr);
        pthread_sigmask(SIG_SETMASK, &previousMask, nullptr);
        ::close(leaked);
        QCOMPARE(lines.size(), std::size_t{4});
        QCOMPARE(lines[0], std::string("/dev/null\n"));
        QCOMPARE(lines[1], std::string("closed\n"));
        QCOMPARE(lines[2], std::string("SigBlk:\t0000000000000000\n"));
        // Bit 13 (SIGPIPE) is not ignored; the shell itself may ignore nothing else we set.
        const unsigned long ignored =
            std::stoul(lines[3].substr(lines[3].find('\t') + 1), nullptr, 16);
        QCOMPARE(ignored & (1UL << (SIGPIPE - 1)), 0UL);
    }

    // Two descriptors that sit where the other goes are swapped, not overwritten; a given
    // standard input is read.
    void descriptorsReachTheirNumbers()
    {
        Pipe a;
        Pipe b;
        Pipe input;
        put(a.write, "from a\n");
        put(b.write, "from b\n");
        put(input.write, "from stdin\n");
        a.closeWrite();
        b.closeWrite();
        input.closeWrite();
        // Put a's read end on 5 and b's on 6, then ask for them the other way round.
        QVERIFY(::dup2(a.read, 5) == 5 && ::dup2(b.read, 6) == 6);
        const auto lines = run("cat <&6; cat <&5; cat", {{5, 6}, {6, 5}}, input.read);
        ::close(5);
        ::close(6);
        QCOMPARE(lines, (std::vector<std::string>{"from a\n", "from b\n", "from stdin\n"}));
    }

    // A daemon left running gets its standard error where it is told and a session of its own:
    // no controlling terminal, so a closed terminal or Ctrl-C there does not reach it.
    void aDaemonLeadsItsOwnSession()
    {
        Pipe out;
        Pipe errors;
        ChildLaunch launch;
        launch.argv = {"/bin/sh", "-c",
                       "echo session $(cut -d' ' -f6 /proc/self/stat) pid $$; echo to-stderr >&2"};
        launch.descriptors = {{out.write, STDOUT_FILENO}};
        launch.standardError = errors.write;
        launch.newSession = true;
        auto pid = spawnChild(launch);
        QVERIFY(pid);
        out.closeWrite();
        errors.closeWrite();
        std::vector<std::string> lines;
        relayLines(out.read, [&](std::string_view line) { lines.emplace_back(line); });
        std::vector<std::string> errorLines;
        relayLines(errors.read, [&](std::string_view line) { errorLines.emplace_back(line); });
        QVERIFY(waitChild(*pid, "The shell", "try again."));
        // /proc/self/stat's sixth field is the session id: the child's own pid when it leads one.
        QCOMPARE(lines, (std::vector<std::string>{"session " + std::to_string(*pid) + " pid "
                                                  + std::to_string(*pid) + "\n"}));
        QCOMPARE(errorLines, (std::vector<std::string>{"to-stderr\n"}));
    }

    void failuresSayWhatToDo()
    {
        ChildLaunch missing;
        missing.argv = {"sealtrain-no-such-program"};
        missing.searchPath = true;
        auto refused = spawnChild(missing);
        QVERIFY(!refused);
        QVERIFY(refused.error().message().find("on the PATH") != std::string::npos);
        QVERIFY(isOneSentence(refused.error().message()));
        ChildLaunch stderrTaken;
        stderrTaken.argv = {"/bin/true"};
        stderrTaken.descriptors = {{1, STDERR_FILENO}};
        QVERIFY(!spawnChild(stderrTaken));

        ChildLaunch killed;
        killed.argv = {"/bin/sh", "-c", "kill -9 $$"};
        auto pid = spawnChild(killed);
        QVERIFY(pid);
        auto status = waitChild(*pid, "The shell", "its work is lost.");
        QVERIFY(!status);
        QCOMPARE(QString::fromStdString(status.error().message()),
                 QStringLiteral("The shell was killed by signal 9; its work is lost."));
    }
};

QTEST_APPLESS_MAIN(TestBaseChildProcess)
#include "test_base_child_process.moc"
