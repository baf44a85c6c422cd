// RFC 5424 syslog messages over TLS (RFC 5425) to a SIEM's receiver, such as rsyslog's imtcp
// with a TLS stream driver (docs/formats/audit-forward.md, "syslog-tls"). RFC 5425 has no
// acknowledgement of its own: a delivery counts once the receiver's TCP has acknowledged every
// byte of it (the socket's send queue is empty), and a connection that breaks before that is
// opened again and the lines sent again.
#include "forward_targets.h"

#include "sealtrain/audit/tree_head.h"

#include <arpa/inet.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <thread>

namespace sealtrain::audit::internal {
namespace {

using Clock = std::chrono::steady_clock;

std::string openSslError()
{
    const unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code == 0)
        return "no further detail";
    char text[256] = {};
    ERR_error_string_n(code, text, sizeof text);
    return text;
}

struct Endpoint {
    std::string host;
    std::string port;
};

Result<Endpoint> parseEndpoint(std::string_view target)
{
    const auto rest = target.substr(kSyslogTlsScheme.size());
    const auto bad = [&] {
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("'{}' is not a syslog receiver; give "
                                 "syslog-tls://HOST:PORT, such as syslog-tls://siem.example:6514.",
                                 target));
    };
    Endpoint endpoint;
    std::string_view port;
    if (rest.starts_with('[')) {
        const auto close = rest.find(']');
        if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
            return bad();
        endpoint.host = std::string(rest.substr(1, close - 1));
        port = rest.substr(close + 2);
    } else {
        const auto colon = rest.rfind(':');
        if (colon == std::string_view::npos)
            return bad();
        endpoint.host = std::string(rest.substr(0, colon));
        port = rest.substr(colon + 1);
    }
    unsigned number = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (endpoint.host.empty() || ec != std::errc() || end != port.data() + port.size()
        || number == 0 || number > 65535
        || endpoint.host.find_first_of(" /?#@") != std::string::npos)
        return bad();
    endpoint.port = std::to_string(number);
    return endpoint;
}

// RFC 5424 HOSTNAME: 1 to 255 printable US-ASCII characters, else the nil value.
std::string syslogHostname()
{
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0')
        return "-";
    std::string text(name);
    for (const char c : text)
        if (c < 33 || c > 126)
            return "-";
    return text;
}

class SyslogTlsTarget final : public ForwardTarget {
public:
    SyslogTlsTarget(std::string target, Endpoint endpoint, TargetOptions options, SSL_CTX* context)
        : target_(std::move(target))
        , endpoint_(std::move(endpoint))
        , options_(std::move(options))
        , context_(context)
        , hostname_(syslogHostname())
    {
    }
    SyslogTlsTarget(const SyslogTlsTarget&) = delete;
    SyslogTlsTarget& operator=(const SyslogTlsTarget&) = delete;
    ~SyslogTlsTarget() override
    {
        disconnect();
        SSL_CTX_free(context_);
    }

    [[nodiscard]] std::string describe() const override { return target_; }

    Result<void> deliver(std::span<const ForwardLine> lines) override
    {
        std::string frames;
        for (const auto& line : lines)
            frames += syslogFrame(line, hostname_, static_cast<long>(::getpid()));
        const auto deadline = Clock::now() + options_.timeout;
        if (ssl_ == nullptr)
            if (auto connected = connect(deadline); !connected) {
                disconnect();
                return connected.error();
            }
        auto sent = send(frames, deadline);
        if (sent)
            sent = acknowledged(deadline);
        if (!sent)
            disconnect();
        return sent;
    }

private:
    [[nodiscard]] Error unavailable(const std::string& what) const
    {
        return Error(ErrorCode::Io,
                     fmt::format("The syslog receiver {} {}; the lines follow when it takes them.",
                                 target_, what));
    }

    Result<void> waitFor(short events, Clock::time_point deadline) const
    {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0)
            return unavailable("did not answer in time");
        pollfd entry{fd_, events, 0};
        const int ready = ::poll(&entry, 1, static_cast<int>(left.count()));
        if (ready == 0)
            return unavailable("did not answer in time");
        if (ready < 0 && errno != EINTR)
            return unavailable(fmt::format("could not be waited for ({})", std::strerror(errno)));
        return success();
    }

    Result<void> connectSocket(Clock::time_point deadline)
    {
        addrinfo hints{};
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_family = AF_UNSPEC;
        addrinfo* found = nullptr;
        if (const int rc =
                ::getaddrinfo(endpoint_.host.c_str(), endpoint_.port.c_str(), &hints, &found);
            rc != 0)
            return unavailable(fmt::format("could not be found ({})", ::gai_strerror(rc)));
        std::string why = "refused the connection";
        for (const addrinfo* at = found; at != nullptr; at = at->ai_next) {
            fd_ = ::socket(at->ai_family, at->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                           at->ai_protocol);
            if (fd_ < 0)
                continue;
            if (::connect(fd_, at->ai_addr, at->ai_addrlen) == 0
                || (errno == EINPROGRESS && waitFor(POLLOUT, deadline))) {
                int error = 0;
                socklen_t length = sizeof error;
                if (::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0) {
                    ::freeaddrinfo(found);
                    const int one = 1;
                    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    return success();
                }
                why = fmt::format("refused the connection ({})", std::strerror(error));
            } else {
                why = fmt::format("could not be reached ({})", std::strerror(errno));
            }
            ::close(fd_);
            fd_ = -1;
        }
        ::freeaddrinfo(found);
        return unavailable(why);
    }

    Result<void> connect(Clock::time_point deadline)
    {
        SEALTRAIN_TRY(connectSocket(deadline));
        ssl_ = SSL_new(context_);
        if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1)
            return unavailable("could not be given a TLS session (" + openSslError() + ")");
        in6_addr ip6{};
        in_addr ip4{};
        const bool isAddress = ::inet_pton(AF_INET, endpoint_.host.c_str(), &ip4) == 1
                               || ::inet_pton(AF_INET6, endpoint_.host.c_str(), &ip6) == 1;
        if (isAddress) {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), endpoint_.host.c_str());
        } else {
            // SSL_set_tlsext_host_name, without the macro's C cast.
            SSL_ctrl(ssl_, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                     endpoint_.host.data());
            SSL_set1_host(ssl_, endpoint_.host.c_str());
        }
        while (true) {
            const int rc = SSL_connect(ssl_);
            if (rc == 1)
                return success();
            const int error = SSL_get_error(ssl_, rc);
            if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
                SEALTRAIN_TRY(waitFor(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline));
                continue;
            }
            const long verified = SSL_get_verify_result(ssl_);
            if (verified != X509_V_OK)
                return Error(ErrorCode::Unauthenticated,
                             fmt::format("The syslog receiver {} presented a certificate that "
                                         "does not verify ({}); give its CA with "
                                         "--audit-forward-ca.",
                                         target_, X509_verify_cert_error_string(verified)));
            return unavailable("ended the TLS handshake (" + openSslError() + ")");
        }
    }

    Result<void> send(const std::string& frames, Clock::time_point deadline)
    {
        std::size_t done = 0;
        while (done < frames.size()) {
            std::size_t wrote = 0;
            const int rc = SSL_write_ex(ssl_, frames.data() + done, frames.size() - done, &wrote);
            if (rc == 1) {
                done += wrote;
                continue;
            }
            const int error = SSL_get_error(ssl_, rc);
            if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
                SEALTRAIN_TRY(waitFor(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline));
                continue;
            }
            return unavailable("closed the connection while lines were sent");
        }
        return success();
    }

    // Until the receiver's TCP has acknowledged every byte sent (SIOCOUTQ: bytes not yet
    // acknowledged), watching for the connection to close meanwhile.
    Result<void> acknowledged(Clock::time_point deadline)
    {
        while (true) {
            int waiting = 0;
            if (::ioctl(fd_, SIOCOUTQ, &waiting) != 0)
                return unavailable("could not be asked what it acknowledged");
            pollfd entry{fd_, POLLIN, 0};
            if (::poll(&entry, 1, 0) > 0) {
                if ((entry.revents & (POLLERR | POLLHUP)) != 0)
                    return unavailable("closed the connection before it acknowledged the lines");
                char byte = 0;
                std::size_t read = 0;
                const int rc = SSL_read_ex(ssl_, &byte, 1, &read);
                const int error = rc == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, rc);
                if (error != SSL_ERROR_NONE && error != SSL_ERROR_WANT_READ)
                    return unavailable("closed the connection before it acknowledged the lines");
            }
            if (waiting == 0)
                return success();
            if (Clock::now() >= deadline)
                return unavailable("did not acknowledge the lines in time");
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

    void disconnect()
    {
        if (ssl_ != nullptr)
            SSL_free(ssl_);
        ssl_ = nullptr;
        if (fd_ >= 0)
            ::close(fd_);
        fd_ = -1;
    }

    std::string target_;
    Endpoint endpoint_;
    TargetOptions options_;
    SSL_CTX* context_;
    std::string hostname_;
    SSL* ssl_ = nullptr;
    int fd_ = -1;
};

}  // namespace

std::string syslogFrame(const ForwardLine& line, std::string_view hostname, long processId)
{
    const auto seconds = static_cast<std::int64_t>(line.timeNs / 1000000000);
    const auto micros = static_cast<std::int64_t>((line.timeNs % 1000000000) / 1000);
    auto time = formatUtcSeconds(seconds);  // "…:ssZ"
    time.insert(time.size() - 1, fmt::format(".{:06}", micros));
    // PRI 110: facility 13 (log audit), severity 6 (informational). No structured data: the
    // line holds every field.
    const auto message = fmt::format("<110>1 {} {} sealtrain-control {} {} - {}", time, hostname,
                                     processId, line.kind, line.text);
    return fmt::format("{} {}", message.size(), message);
}

Result<std::unique_ptr<ForwardTarget>> syslogTlsTarget(std::string_view target,
                                                       const TargetOptions& options)
{
    auto endpoint = parseEndpoint(target);
    if (!endpoint)
        return endpoint.error();
    SSL_CTX* context = SSL_CTX_new(TLS_client_method());
    if (context == nullptr)
        return Error(ErrorCode::Internal, "Cannot make a TLS context (" + openSslError() + ").");
    const auto fail = [&](const std::string& message) {
        SSL_CTX_free(context);
        return Error(ErrorCode::InvalidArgument, message);
    };
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nullptr);
    const bool cas =
        options.caFile.empty()
            ? SSL_CTX_set_default_verify_paths(context) == 1
            : SSL_CTX_load_verify_locations(context, options.caFile.c_str(), nullptr) == 1;
    if (!cas)
        return fail(fmt::format("Cannot read the syslog receiver's CA certificates from '{}' ({}); "
                                "give a PEM file with --audit-forward-ca.",
                                options.caFile.string(), openSslError()));
    if (options.certificateFile.empty() != options.keyFile.empty())
        return fail("A client certificate for the syslog receiver needs its key, and a key its "
                    "certificate: give both --audit-forward-cert and --audit-forward-key.");
    if (!options.certificateFile.empty()) {
        if (SSL_CTX_use_certificate_chain_file(context, options.certificateFile.c_str()) != 1
            || SSL_CTX_use_PrivateKey_file(context, options.keyFile.c_str(), SSL_FILETYPE_PEM) != 1
            || SSL_CTX_check_private_key(context) != 1)
            return fail(fmt::format("Cannot use '{}' with '{}' as the client certificate for the "
                                    "syslog receiver; give a PEM certificate and its own key.",
                                    options.certificateFile.string(), options.keyFile.string()));
    }
    return std::unique_ptr<ForwardTarget>(std::make_unique<SyslogTlsTarget>(
        std::string(target), std::move(*endpoint), options, context));
}

}  // namespace sealtrain::audit::internal
