// The daemons' word to systemd (service_notify.h), through libsystemd's sd_notify.
#include "sealtrain/base/service_notify.h"

#include <systemd/sd-daemon.h>

#include <cstdint>
#include <string>
#include <utility>

namespace sealtrain::service {

namespace {

// STATUS= is one line: a newline in it would start another assignment.
std::string statusLine(std::string_view status)
{
    std::string line(status);
    for (char& c : line)
        if (c == '\n' || c == '\r')
            c = ' ';
    return line;
}

void send(const std::string& state)
{
    (void)sd_notify(0, state.c_str());
}

}  // namespace

void notifyReady(std::string_view status)
{
    send("READY=1\nSTATUS=" + statusLine(status));
}

void notifyStatus(std::string_view status)
{
    send("STATUS=" + statusLine(status));
}

void notifyStopping(std::string_view status)
{
    send("STOPPING=1\nSTATUS=" + statusLine(status));
}

std::optional<std::chrono::microseconds> watchdogInterval()
{
    std::uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) <= 0 || usec == 0)
        return std::nullopt;
    return std::chrono::microseconds(usec);
}

Watchdog::Watchdog(std::chrono::microseconds interval, std::function<bool()> healthy)
    : healthy_(std::move(healthy))
    , thread_([this, interval] { loop(interval); })
{
}

Watchdog::~Watchdog()
{
    {
        const std::lock_guard guard(lock_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void Watchdog::loop(std::chrono::microseconds interval)
{
    const auto period = interval / 2;
    std::unique_lock guard(lock_);
    while (!stopping_) {
        guard.unlock();
        const bool alive = healthy_();
        guard.lock();
        if (stopping_)
            break;
        if (alive)
            send("WATCHDOG=1");
        wake_.wait_for(guard, period, [this] { return stopping_; });
    }
}

}  // namespace sealtrain::service
