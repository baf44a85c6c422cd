// The daemons under systemd (issue #52; docs/operations/control-daemon.md, "Under systemd";
// workers.md, "The systemd unit"): started with NOTIFY_SOCKET and WATCHDOG_USEC as a unit of
// Type=notify with WatchdogSec= would be, sealtrain-control says READY=1 only once it serves, then
// WATCHDOG=1 while an empty call still commits, and STOPPING=1 when SIGTERM stops it;
// sealtrain-worker says READY=1 once it serves, WATCHDOG=1 while its heartbeat loop turns, and
// STOPPING=1 when it stops.
#include "daemon_fixture.h"
#include "notify_socket.h"

#include "sealtrain/crypto/certificate_authority.h"

#include <QtTest/QtTest>

#include <csignal>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace sealtrain;

using testing::NotifySocket;

class TestControlSystemd : public QObject {
    Q_OBJECT

private slots:
    void readyWatchdogAndStopping()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const std::filesystem::path root(tmp.path().toStdString());
        testing::DaemonFixture daemon;
        daemon.create(root, "alice", {{"otto", "operator"}});

        NotifySocket socket((root / "notify").string());
        auto receive = [&socket](int waitMs) { return socket.receive(waitMs); };

        daemon.environment.insert("NOTIFY_SOCKET", QString::fromStdString(socket.path()));
        daemon.environment.insert("WATCHDOG_USEC", "400000");
        // Workers beat every 10 s, far apart next to the worker's 2 s watchdog below (its loop
        // must still count as turning between beats); the daemon returns once the ready file is
        // written, just before READY=1.
        daemon.start({"--heartbeat-ms", "10000"});
        const auto ready = receive(10000);
        QVERIFY2(ready && ready->rfind("READY=1\nSTATUS=serving ", 0) == 0,
                 ready.value_or("(nothing)").c_str());
        for (int ping = 0; ping < 2; ++ping)
            QCOMPARE(receive(5000).value_or("(nothing)"), std::string("WATCHDOG=1"));
        // From here the daemon's messages are read as systemd would, all along: a socket left
        // unread fills (net.unix.max_dgram_qlen) and the daemon's sd_notify would wait on it.
        std::mutex heardLock;
        std::vector<std::string> heard;
        std::jthread listener([&](const std::stop_token& stop) {
            while (!stop.stop_requested())
                if (auto message = socket.receive(100)) {
                    const std::lock_guard guard(heardLock);
                    heard.push_back(*message);
                }
        });

        // The worker, enrolled, then run under its own socket.
        // Its folder exists already, empty and private, as the package's tmpfiles.d rule makes
        // it: enroll takes it.
        const std::filesystem::path workerDir = root / "worker";
        std::filesystem::create_directory(workerDir);
        std::filesystem::permissions(workerDir, std::filesystem::perms::owner_all);
        auto token = daemon.as("otto")->workers().createEnrollToken("node-1", "cpu", 600);
        QVERIFY2(token, token ? "" : token.error().message().c_str());
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert("SEALTRAIN_ENROLL_TOKEN", QString::fromStdString(token->token));
        QProcess enroller;
        enroller.setProcessEnvironment(environment);
        enroller.setProcessChannelMode(QProcess::ForwardedChannels);
        enroller.start(
            SEALTRAIN_WORKER_EXECUTABLE,
            {"enroll", "--control", QString::fromStdString(daemon.unixAddress()),
             "--ca-fingerprint",
             QString::fromStdString(crypto::certificateFingerprint(daemon.caPem()).value()),
             "--dir", QString::fromStdString(workerDir.string())});
        QVERIFY(enroller.waitForFinished(60000));
        QCOMPARE(enroller.exitCode(), 0);
        NotifySocket workerSocket((root / "worker-notify").string());
        environment.remove("SEALTRAIN_ENROLL_TOKEN");
        environment.insert("NOTIFY_SOCKET", QString::fromStdString(workerSocket.path()));
        environment.insert("WATCHDOG_USEC", "2000000");  // a ping each second
        QProcess worker;
        worker.setProcessEnvironment(environment);
        worker.setProcessChannelMode(QProcess::ForwardedChannels);
        worker.start(SEALTRAIN_WORKER_EXECUTABLE,
                     {"run", "--dir", QString::fromStdString(workerDir.string()), "--trainer",
                      "/bin/false"});
        QVERIFY(worker.waitForStarted());
        const auto workerReady = workerSocket.receiveBesidesPings(30000);
        QVERIFY2(workerReady && workerReady->rfind("READY=1\nSTATUS=worker ", 0) == 0,
                 workerReady.value_or("(nothing)").c_str());
        // Pings without a gap across a beat interval: each within 2.5 s, for over 10 s.
        for (int ping = 0; ping < 12; ++ping)
            QCOMPARE(workerSocket.receive(2500).value_or("(nothing)"), std::string("WATCHDOG=1"));
        ::kill(static_cast<pid_t>(worker.processId()), SIGTERM);
        QVERIFY(worker.waitForFinished(30000));
        QCOMPARE(worker.exitCode(), 0);
        QCOMPARE(workerSocket.receiveBesidesPings(2000).value_or("(nothing)"),
                 std::string("STOPPING=1\nSTATUS=stopped"));

        QVERIFY(daemon.stop());
        listener.request_stop();
        listener.join();
        while (auto message = socket.receive(0))
            heard.push_back(*message);
        std::vector<std::string> besidesPings;
        for (const std::string& message : heard)
            if (message != "WATCHDOG=1")
                besidesPings.push_back(message);
        QCOMPARE(besidesPings,
                 std::vector<std::string>{"STOPPING=1\nSTATUS=finishing the calls in flight"});
        QVERIFY(heard.size() > besidesPings.size());  // it pinged while the worker ran
    }
};

QTEST_GUILESS_MAIN(TestControlSystemd)
#include "test_control_systemd.moc"
