// What systemd listens on for a service's notifications (sd_notify): a Unix datagram socket,
// named to the process by NOTIFY_SOCKET. The daemons' tests read READY=1, WATCHDOG=1 and
// STOPPING=1 from it as systemd would (issue #52).
#pragma once

#include <QtGlobal>

#include <cstddef>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <utility>

namespace sealtrain::testing {

class NotifySocket {
public:
    explicit NotifySocket(std::string path)
        : path_(std::move(path))
    {
        fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        path_.copy(address.sun_path, sizeof(address.sun_path) - 1);
        if (fd_ < 0
            || ::bind(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) != 0)
            qFatal("cannot make the notify socket");
    }
    NotifySocket(const NotifySocket&) = delete;
    NotifySocket& operator=(const NotifySocket&) = delete;
    ~NotifySocket() { ::close(fd_); }

    [[nodiscard]] const std::string& path() const { return path_; }

    // The next message, or nullopt when none came within `waitMs`.
    std::optional<std::string> receive(int waitMs)
    {
        pollfd ready{fd_, POLLIN, 0};
        if (::poll(&ready, 1, waitMs) != 1)
            return std::nullopt;
        char buffer[4096];
        const ssize_t got = ::recv(fd_, buffer, sizeof(buffer), 0);
        if (got < 0)
            return std::nullopt;
        return std::string(buffer, static_cast<std::size_t>(got));
    }

    // The next message that is not a watchdog ping.
    std::optional<std::string> receiveBesidesPings(int waitMs)
    {
        std::optional<std::string> message;
        while ((message = receive(waitMs)) && *message == "WATCHDOG=1") {
        }
        return message;
    }

private:
    std::string path_;
    int fd_ = -1;
};

}  // namespace sealtrain::testing
