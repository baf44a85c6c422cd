// sealtrain-control as a separate process for the integration tests (issue #15): a data
// directory made through core before the daemon owns it (the first admin and more users with
// their roles), the daemon started on it with its passphrase on standard input and listening on
// a Unix socket and TCP loopback, clients signed in through the client library with TOTP codes
// rationed per user, and after SIGTERM the audit log read back. Failures in set-up end the test
// with qFatal: nothing after them could mean anything.
#pragma once

#include "../support/totp_clock.h"
#include "../unit/core_fixture.h"
#include "sealtrain/api/client.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/identity/totp.h"

#include <grpcpp/grpcpp.h>

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest/QTest>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::testing {

inline constexpr const char* kDaemonPassphrase = "a long test passphrase for the keyring";
inline constexpr const char* kDaemonPassword = "a long test password for each of the users";

// The whole of a file ("" when it can not be read): logs, /proc entries.
inline std::string fileText(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline core::KeyringUnlock daemonUnlock()
{
    core::KeyringUnlock unlock;
    unlock.passphrase = [] {
        return crypto::SecretBytes::fromBytes(secret(kDaemonPassphrase).bytes());
    };
    return unlock;
}

// A user to create before the daemon starts, with the global role granted to them (none when
// empty).
struct DaemonUser {
    std::string name;
    std::string role;
};

class DaemonFixture {
public:
    // Added to the test's environment as it is when the daemon starts (a test adds
    // NOTIFY_SOCKET, as systemd does).
    QProcessEnvironment environment;

    // The data directory under `root`, with `admin` as the first admin and `users` after it.
    void create(const std::filesystem::path& root, const std::string& admin,
                const std::vector<DaemonUser>& users)
    {
        dataDir_ = root / "data";
        runDir_ = root;
        core::NewDataDirectory request;
        request.path = dataDir_;
        request.passphrase = secret(kDaemonPassphrase);
        request.argon2 = crypto::kArgon2Floor;
        request.adminName = admin;
        request.adminPassword = secret(kDaemonPassword);
        auto created = core::DataDirectory::create(request);
        if (!created)
            qFatal("create: %s", created.error().message().c_str());
        uris_[admin] = created->otpauthUri;
        {
            auto platform = core::DataDirectory::open(dataDir_, daemonUnlock(), testClockOptions());
            if (!platform)
                qFatal("open: %s", platform.error().message().c_str());
            auto& plane = (*platform)->controlPlane();
            auto token = plane.identity().signIn(admin, secret(kDaemonPassword), code(admin));
            if (!token)
                qFatal("sign-in of %s: %s", admin.c_str(), token.error().message().c_str());
            // The admins last: with two, a separated duty waits for a second admin's grant
            // (issue #27), which the first admin made here gives.
            std::vector<DaemonUser> ordered;
            for (const bool admins : {false, true})
                for (const DaemonUser& user : users)
                    if ((user.role == "admin") == admins)
                        ordered.push_back(user);
            std::optional<std::string> secondAdmin;
            for (const DaemonUser& user : ordered) {
                auto enrolled =
                    enrolUser(plane.identity(), *token, user.name, secret(kDaemonPassword));
                if (!enrolled)
                    qFatal("create %s: %s", user.name.c_str(), enrolled.error().message().c_str());
                uris_[user.name] = enrolled->otpauthUri;
                if (user.role.empty())
                    continue;
                auto granted = plane.access().grantRole(*token, user.name, user.role, "");
                if (granted && granted->pending && secondAdmin)
                    granted = plane.access().grantRole(*secondAdmin, user.name, user.role, "");
                if (!granted || granted->pending)
                    qFatal("grant %s: %s", user.name.c_str(),
                           granted ? "waits for a second admin"
                                   : granted.error().message().c_str());
                if (user.role == "admin" && !secondAdmin) {
                    auto second = plane.identity().signIn(user.name, secret(kDaemonPassword),
                                                          code(user.name));
                    if (!second)
                        qFatal("sign-in of %s: %s", user.name.c_str(),
                               second.error().message().c_str());
                    secondAdmin = std::move(second).value();
                }
            }
            if (secondAdmin)
                (void)plane.identity().signOut(*secondAdmin);
            (void)plane.identity().signOut(*token);
            caPem_ = (*platform)->certificateAuthority().certificatePem();
            if (auto heads = (*platform)->signPendingEntries(); !heads)
                qFatal("sign: %s", heads.error().message().c_str());
        }
        ::chmod(dataDir_.c_str(), 0700);
    }

    // Starts sealtrain-control on the data directory, on a Unix socket and a loopback port,
    // with `extra` arguments; returns once it wrote its ready file. The passphrase comes on a
    // pipe, or from `passphraseFile` redirected onto standard input (as `< file` in a shell).
    // The daemon's working folder is the run folder (where a core dump would land).
    void start(const QStringList& extra = {}, const std::filesystem::path& passphraseFile = {})
    {
        const QString ready = QString::fromStdString((runDir_ / "ready.json").string());
        QFile::remove(ready);  // a previous run's, which a SIGKILL left behind
        unixAddress_ = "unix:" + (runDir_ / "control.sock").string();
        daemon_.setProgram(QStringLiteral(SEALTRAIN_CONTROL_TEST_EXECUTABLE));
        daemon_.setArguments(QStringList{"--data-dir", QString::fromStdString(dataDir_.string()),
                                         "--listen", QString::fromStdString(unixAddress_),
                                         "--listen", "127.0.0.1:0", "--ready-file", ready}
                             + extra);
        daemon_.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        QProcessEnvironment started = QProcessEnvironment::systemEnvironment();
        started.insert(environment);
        daemon_.setProcessEnvironment(started);
        daemon_.setWorkingDirectory(QString::fromStdString(runDir_.string()));
        if (!passphraseFile.empty())
            daemon_.setStandardInputFile(QString::fromStdString(passphraseFile.string()));
        daemon_.start();
        if (!daemon_.waitForStarted())
            qFatal("sealtrain-control did not start");
        if (passphraseFile.empty()) {
            daemon_.write(QByteArray(kDaemonPassphrase) + "\n");
            daemon_.waitForBytesWritten(10000);
            daemon_.closeWriteChannel();
        }
        for (int waited = 0; !QFile::exists(ready); waited += 100) {
            if (waited > 60000 || daemon_.state() == QProcess::NotRunning)
                qFatal("sealtrain-control never became ready");
            QTest::qWait(100);
        }
        QFile file(ready);
        if (!file.open(QIODevice::ReadOnly))
            qFatal("cannot read the ready file");
        const QJsonObject info = QJsonDocument::fromJson(file.readAll()).object();
        tcpPort_ = info["ports"].toArray().at(1).toInt();
        if (tcpPort_ <= 0)
            qFatal("the ready file names no TCP port");
        tcpAddress_ = "127.0.0.1:" + std::to_string(tcpPort_);
    }

    // SIGTERM: true when the daemon finished and exited 0.
    [[nodiscard]] bool stop()
    {
        if (daemon_.processId() <= 0)
            return false;
        ::kill(static_cast<pid_t>(daemon_.processId()), SIGTERM);
        return daemon_.waitForFinished(30000) && daemon_.exitStatus() == QProcess::NormalExit
               && daemon_.exitCode() == 0;
    }

    // SIGKILL: the daemon ends at once, without finishing anything (a crash).
    void kill()
    {
        if (daemon_.processId() <= 0)
            return;
        ::kill(static_cast<pid_t>(daemon_.processId()), SIGKILL);
        daemon_.waitForFinished(30000);
    }

    // Every entry of the audit log, read with the keyring once the daemon has stopped.
    [[nodiscard]] Result<std::vector<audit::Entry>> auditEntries() const
    {
        auto platform = core::DataDirectory::open(dataDir_, daemonUnlock());
        if (!platform)
            return platform.error();
        const auto& log = (*platform)->controlPlane().auditLog();
        auto stored = log.store().readEntries(0, log.size());
        if (!stored)
            return stored.error();
        std::vector<audit::Entry> entries;
        for (const audit::StoredEntry& bytes : *stored) {
            auto entry = audit::decodeEntry(bytes.bytes);
            if (!entry)
                return entry.error();
            entries.push_back(std::move(entry).value());
        }
        return entries;
    }

    // The next code of `user`: a step no earlier sign-in of theirs spent, the test clock moved
    // forward when it must be (tests/support/totp_clock.h).
    std::string code(const std::string& user) { return codes_.next(user, uris_.at(user)); }

    // A user's TOTP enrollment changed (a completed reset): later codes come from `uri`.
    void reenrolled(const std::string& user, const std::string& uri) { uris_[user] = uri; }

    [[nodiscard]] api::Endpoint endpoint() const { return {tcpAddress_, "localhost", caPem_}; }

    // A client without a certificate: sign-in, the CA and a reset's completion only.
    [[nodiscard]] std::unique_ptr<api::ControlClient> anonymous() const
    {
        auto client = api::ControlClient::connect(endpoint(), nullptr);
        if (!client)
            qFatal("connect: %s", client.error().message().c_str());
        return std::move(client).value();
    }

    // A new sign-in over TCP with `password` (default: the one every user was created with).
    api::SignedIn signIn(const std::string& user, const std::string& password = kDaemonPassword)
    {
        auto signedIn = anonymous()->sessions().signIn(user, secret(password), code(user));
        if (!signedIn)
            qFatal("sign-in of %s: %s", user.c_str(), signedIn.error().message().c_str());
        return std::move(signedIn).value();
    }

    // The user's session, signed in on first use and kept (sign-ins are rationed by TOTP steps).
    const api::ClientIdentity& session(const std::string& user)
    {
        if (sessions_.count(user) == 0)
            sessions_.emplace(user, signIn(user));
        return sessions_.at(user).identity;
    }

    // Forgets the kept session of `user` (it was ended), so that the next session() signs in.
    void forget(const std::string& user) { sessions_.erase(user); }

    // A client that presents `identity`'s certificate.
    [[nodiscard]] std::unique_ptr<api::ControlClient> as(const api::ClientIdentity& identity) const
    {
        auto client = api::ControlClient::connect(endpoint(), &identity);
        if (!client)
            qFatal("connect: %s", client.error().message().c_str());
        return std::move(client).value();
    }

    // A client as `user`, on their kept session.
    [[nodiscard]] std::unique_ptr<api::ControlClient> as(const std::string& user)
    {
        return as(session(user));
    }

    [[nodiscard]] pid_t pid() const { return static_cast<pid_t>(daemon_.processId()); }
    // Waits for the daemon to end (after a signal the test sent); false after `ms`.
    [[nodiscard]] bool waitForExit(int ms) { return daemon_.waitForFinished(ms); }
    [[nodiscard]] const std::filesystem::path& runDir() const { return runDir_; }
    [[nodiscard]] const std::filesystem::path& dataDir() const { return dataDir_; }
    [[nodiscard]] const std::string& caPem() const { return caPem_; }

    // A channel of its own to the daemon's TCP port, for a test that writes a raw call as an
    // attacker would: anonymous, or with the TLS key and certificate of `identity`.
    [[nodiscard]] std::shared_ptr<grpc::Channel>
    rawChannel(const api::ClientIdentity* identity = nullptr) const
    {
        grpc::SslCredentialsOptions ssl;
        ssl.pem_root_certs = caPem_;
        if (identity != nullptr) {
            ssl.pem_private_key.assign(
                reinterpret_cast<const char*>(identity->privateKeyPem.bytes().data()),
                identity->privateKeyPem.size());
            ssl.pem_cert_chain = identity->certificatePem;
        }
        grpc::ChannelArguments arguments;
        arguments.SetSslTargetNameOverride("localhost");
        return grpc::CreateCustomChannel(tcpAddress_, grpc::SslCredentials(ssl), arguments);
    }
    [[nodiscard]] const std::string& tcpAddress() const { return tcpAddress_; }
    [[nodiscard]] const std::string& unixAddress() const { return unixAddress_; }
    [[nodiscard]] int tcpPort() const { return tcpPort_; }

private:
    std::filesystem::path dataDir_;
    std::filesystem::path runDir_;
    std::map<std::string, std::string> uris_;
    testing::TotpCodes codes_;
    std::map<std::string, api::SignedIn> sessions_;
    std::string caPem_;
    QProcess daemon_;
    std::string unixAddress_;
    std::string tcpAddress_;
    int tcpPort_ = 0;
};

}  // namespace sealtrain::testing
