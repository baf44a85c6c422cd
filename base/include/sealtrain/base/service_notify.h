// The daemons' word to systemd (issue #52; docs/operations/control-daemon.md, "Under systemd"):
// a unit of Type=notify learns that the daemon serves (READY=1) only once it does, what it is
// doing (STATUS=), that it stops (STOPPING=1), and, with WatchdogSec=, that it is still alive
// (WATCHDOG=1): a daemon whose health check stops answering is killed and restarted. Each call
// does nothing when systemd did not ask (no NOTIFY_SOCKET), so the daemons run the same by hand.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

namespace sealtrain::service {

void notifyReady(std::string_view status);
void notifyStatus(std::string_view status);
void notifyStopping(std::string_view status);

// The watchdog's interval when the unit has WatchdogSec= (WATCHDOG_USEC, for this process:
// WATCHDOG_PID, when set, must be ours); nullopt when there is none.
[[nodiscard]] std::optional<std::chrono::microseconds> watchdogInterval();

// Pings WATCHDOG=1 from a thread of its own, every half interval, each time `healthy` answers
// true; a check that answers false or never returns lets systemd's watchdog fire. Stops (and joins)
// when destroyed.
class Watchdog final {
public:
    Watchdog(std::chrono::microseconds interval, std::function<bool()> healthy);
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;
    ~Watchdog();

private:
    void loop(std::chrono::microseconds interval);

    std::function<bool()> healthy_;
    std::mutex lock_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace sealtrain::service
