// A SIEM's syslog receiver for tests: Debian's rsyslogd with its OpenSSL stream driver, taking
// RFC 5425 (syslog over TLS) on a loopback port and writing each message's MSG part as one line
// of a file. Its CA and server certificate are made with the openssl command on first start.
#pragma once

#include <QFile>
#include <QProcess>
#include <QtTest/QtTest>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sealtrain::testing {

class RsyslogReceiver {
public:
    static constexpr const char* kRsyslogd = "/usr/sbin/rsyslogd";

    explicit RsyslogReceiver(std::filesystem::path folder)
        : folder_(std::move(folder))
    {
        std::filesystem::create_directories(folder_);
    }
    RsyslogReceiver(const RsyslogReceiver&) = delete;
    RsyslogReceiver& operator=(const RsyslogReceiver&) = delete;
    ~RsyslogReceiver() { stop(); }

    [[nodiscard]] static bool available() { return QFile::exists(kRsyslogd); }
    [[nodiscard]] std::filesystem::path caFile() const { return folder_ / "ca.pem"; }
    [[nodiscard]] std::filesystem::path received() const { return folder_ / "received.jsonl"; }
    [[nodiscard]] int port() const { return port_; }

    // Starts rsyslogd (on the same port as before after a stop); false with `why` set when it
    // did not come up listening.
    bool start(std::string& why)
    {
        if (port_ == 0 && !makeCertificates(why))
            return false;
        if (port_ == 0)
            port_ = freeLoopbackPort();
        if (port_ == 0) {
            why = "no free loopback port";
            return false;
        }
        writeConfiguration();
        process_.setProcessChannelMode(QProcess::MergedChannels);
        process_.start(kRsyslogd, {"-n", "-f", path("rsyslog.conf"), "-i", path("rsyslog.pid")});
        if (!process_.waitForStarted()) {
            why = "rsyslogd did not start";
            return false;
        }
        for (int waited = 0; waited < 20000; waited += 100) {
            if (listening())
                return true;
            if (process_.state() == QProcess::NotRunning)
                break;
            QTest::qWait(100);
        }
        why = "rsyslogd never listened: " + process_.readAll().toStdString();
        return false;
    }

    // SIGTERM: rsyslogd writes what it received and ends (a receiver's outage).
    void stop()
    {
        if (process_.state() == QProcess::NotRunning)
            return;
        ::kill(static_cast<pid_t>(process_.processId()), SIGTERM);
        if (!process_.waitForFinished(20000))
            process_.kill();
        process_.waitForFinished(5000);
    }

    [[nodiscard]] std::string receivedText() const
    {
        std::ifstream in(received());
        return {std::istreambuf_iterator<char>(in), {}};
    }

private:
    static sockaddr_in loopback(int port)
    {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = htons(static_cast<std::uint16_t>(port));
        return address;
    }

    // A free loopback port, given back for rsyslogd to take.
    static int freeLoopbackPort()
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        auto address = loopback(0);
        socklen_t length = sizeof address;
        int port = 0;
        if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0
            && ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0)
            port = ntohs(address.sin_port);
        if (fd >= 0)
            ::close(fd);
        return port;
    }

    [[nodiscard]] bool listening() const
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        auto address = loopback(port_);
        const bool connected =
            fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
        if (fd >= 0)
            ::close(fd);
        return connected;
    }

    [[nodiscard]] QString path(const char* name) const
    {
        return QString::fromStdString((folder_ / name).string());
    }

    bool run(const QStringList& arguments, std::string& why) const
    {
        QProcess openssl;
        openssl.setProcessChannelMode(QProcess::MergedChannels);
        openssl.setWorkingDirectory(QString::fromStdString(folder_.string()));
        openssl.start("openssl", arguments);
        if (!openssl.waitForFinished(30000) || openssl.exitCode() != 0) {
            why = "openssl " + arguments.join(' ').toStdString() + ": "
                  + openssl.readAll().toStdString();
            return false;
        }
        return true;
    }

    bool makeCertificates(std::string& why) const
    {
        std::ofstream(folder_ / "server.ext") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
        return run({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj",
                    "/CN=Sealtrain test SIEM CA"},
                   why)
               && run({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                       "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=localhost"},
                      why)
               && run({"x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
                       "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile",
                       "server.ext"},
                      why);
    }

    void writeConfiguration() const
    {
        const auto dir = folder_.string();
        std::ofstream(folder_ / "rsyslog.conf")
            << "global(workDirectory=\"" << dir << "\" maxMessageSize=\"4m\"\n"
            << "  defaultNetstreamDriver=\"ossl\"\n"
            << "  defaultNetstreamDriverCAFile=\"" << dir << "/ca.pem\"\n"
            << "  defaultNetstreamDriverCertFile=\"" << dir << "/server.pem\"\n"
            << "  defaultNetstreamDriverKeyFile=\"" << dir << "/server.key\")\n"
            << "module(load=\"imtcp\" streamDriver.name=\"ossl\" streamDriver.mode=\"1\" "
               "streamDriver.authMode=\"anon\")\n"
            << "input(type=\"imtcp\" address=\"127.0.0.1\" port=\"" << port_ << "\")\n"
            << "template(name=\"lines\" type=\"string\" string=\"%msg%\\n\")\n"
            << "action(type=\"omfile\" file=\"" << dir << "/received.jsonl\" template=\"lines\")\n";
    }

    std::filesystem::path folder_;
    QProcess process_;
    int port_ = 0;
};

}  // namespace sealtrain::testing
