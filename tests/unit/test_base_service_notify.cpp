// The daemons' word to systemd (issue #52, base/service_notify.h), checked as systemd receives it:
// a datagram socket named by NOTIFY_SOCKET. READY=1 with a one-line status, STOPPING=1, nothing
// without a socket, the watchdog interval only for this process, and WATCHDOG=1 only while the
// health check answers.
#include "sealtrain/base/service_notify.h"

#include "notify_socket.h"

#include <QtTest/QtTest>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>

using namespace sealtrain;

// The socket named by NOTIFY_SOCKET for this process, as systemd sets it for a service.
class NotifyTarget {
public:
    explicit NotifyTarget(const QString& folder)
        : socket_((folder + "/notify").toStdString())
    {
        ::setenv("NOTIFY_SOCKET", socket_.path().c_str(), 1);
    }
    NotifyTarget(const NotifyTarget&) = delete;
    NotifyTarget& operator=(const NotifyTarget&) = delete;
    ~NotifyTarget() { ::unsetenv("NOTIFY_SOCKET"); }

    std::optional<std::string> receive(int waitMs) { return socket_.receive(waitMs); }
    void drain()
    {
        while (socket_.receive(0)) {
        }
    }

private:
    testing::NotifySocket socket_;
};

class TestBaseServiceNotify : public QObject {
    Q_OBJECT

private slots:
    void init()
    {
        ::unsetenv("NOTIFY_SOCKET");
        ::unsetenv("WATCHDOG_USEC");
        ::unsetenv("WATCHDOG_PID");
    }

    void nothingWithoutSystemd()
    {
        service::notifyReady("serving");
        service::notifyStopping("stopping");
        QVERIFY(!service::watchdogInterval());
    }

    void readyAndStoppingAreWhatSystemdReads()
    {
        QTemporaryDir folder;
        NotifyTarget socket(folder.path());
        service::notifyReady("serving /var/lib/sealtrain\non 7443");
        QCOMPARE(socket.receive(2000).value_or(""),
                 std::string("READY=1\nSTATUS=serving /var/lib/sealtrain on 7443"));
        service::notifyStatus("3 calls in flight");
        QCOMPARE(socket.receive(2000).value_or(""), std::string("STATUS=3 calls in flight"));
        service::notifyStopping("finishing the calls in flight");
        QCOMPARE(socket.receive(2000).value_or(""),
                 std::string("STOPPING=1\nSTATUS=finishing the calls in flight"));
    }

    void theWatchdogIntervalIsThisProcesss()
    {
        ::setenv("WATCHDOG_USEC", "200000", 1);
        QCOMPARE(service::watchdogInterval().value_or(std::chrono::microseconds(0)).count(),
                 200000L);
        ::setenv("WATCHDOG_PID", std::to_string(::getpid() + 1).c_str(), 1);
        QVERIFY(!service::watchdogInterval());  // another process's watchdog
        ::setenv("WATCHDOG_PID", std::to_string(::getpid()).c_str(), 1);
        QVERIFY(service::watchdogInterval());
        ::setenv("WATCHDOG_USEC", "0", 1);
        QVERIFY(!service::watchdogInterval());
    }

    // Pings come while the check answers true and stop while it answers false: systemd's
    // watchdog then fires. The intervals are far apart, so the test is not a timing race.
    void theWatchdogPingsOnlyWhileHealthy()
    {
        QTemporaryDir folder;
        NotifyTarget socket(folder.path());
        std::atomic<bool> healthy = true;
        service::Watchdog watchdog(std::chrono::milliseconds(200), [&] { return healthy.load(); });
        QCOMPARE(socket.receive(5000).value_or(""), std::string("WATCHDOG=1"));
        healthy = false;
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a ping on its way
        socket.drain();
        QVERIFY(!socket.receive(800));  // four periods: no ping
        healthy = true;
        QCOMPARE(socket.receive(5000).value_or(""), std::string("WATCHDOG=1"));
    }
};

QTEST_APPLESS_MAIN(TestBaseServiceNotify)
#include "test_base_service_notify.moc"
