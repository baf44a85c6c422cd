// What the benchmarks of an in-process sealtrain-control share (bench_control_load,
// bench_workers): a new data directory with alice as its first admin (Argon2id at its floor),
// users that alice makes and grants roles to through core, api::ControlServer serving it on
// 127.0.0.1 with a port of its own, and clients that sign in over TLS 1.3 as a user would
// (password and the current TOTP code).
#pragma once

#include "bench_support.h"
#include "sealtrain/api/client.h"
#include "sealtrain/api/server.h"
#include "sealtrain/api/tls_policy.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/core/identity/totp.h"
#include "sealtrain/core/store/database.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace sealtrain::bench {

// Creates `dir` and its run folder and makes the process TLS 1.3 only (api/tls_policy.h): call
// it first in main(), before anything uses OpenSSL.
inline void prepareBenchFolder(const std::filesystem::path& dir)
{
    std::filesystem::create_directories(dir / "run");
    check(api::requireTls13(dir / "run" / "openssl.cnf"));
}

// A data directory in dir/data and the control plane serving it in this process. Removes `dir`
// when it goes.
class InProcessControl final {
public:
    static constexpr const char* kPassphrase = "the benchmark's data directory passphrase";
    static constexpr const char* kPassword = "the benchmark users' long password";

    InProcessControl(std::filesystem::path dir, const core::DataDirectoryOptions& options)
        : dir_(std::move(dir))
    {
        core::NewDataDirectory request;
        request.path = dir_ / "data";
        request.passphrase = secret(kPassphrase);
        request.argon2 = crypto::kArgon2Floor;
        request.adminName = "alice";
        request.adminPassword = secret(kPassword);
        (void)take(core::DataDirectory::create(request));
        core::KeyringUnlock unlock;
        unlock.passphrase = [] {
            return crypto::SecretBytes::fromBytes(secret(kPassphrase).bytes());
        };
        platform_ = take(core::DataDirectory::open(request.path, unlock, options));
        alice_ = take(platform_->controlPlane().identity().signIn("alice", secret(kPassword),
                                                                  totpCode("alice")));
    }

    InProcessControl(const InProcessControl&) = delete;
    InProcessControl& operator=(const InProcessControl&) = delete;

    ~InProcessControl()
    {
        if (server_) {
            server_->shutdown(std::chrono::seconds(5));
            server_.reset();
        }
        platform_.reset();
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }

    [[nodiscard]] core::DataDirectory& platform() { return *platform_; }

    // A user alice makes, with each of `roles` granted globally. With two admins a grant waits
    // for a second one (docs/operations/access-control.md): the first admin added after alice,
    // signed in here once, makes it; a grant still waiting stops the benchmark.
    void addUser(const std::string& name, const std::vector<std::string>& roles)
    {
        auto& identity = platform_->controlPlane().identity();
        auto& access = platform_->controlPlane().access();
        const core::NewUser created = take(identity.createUser(alice_, name));
        (void)take(identity.completeReset(name, created.enrolmentCode, secret(kPassword)));
        for (const std::string& role : roles) {
            auto granted = take(access.grantRole(alice_, name, role, ""));
            if (granted.pending && !secondAdmin_.empty())
                granted = take(access.grantRole(secondAdmin_, name, role, ""));
            if (granted.pending)
                check(Result<void>(Error(ErrorCode::Internal, "The grant of " + role + " to " + name
                                                                  + " waits for a second admin.")));
            if (role == core::kAdminRole && secondAdmin_.empty())
                secondAdmin_ = take(identity.signIn(name, secret(kPassword), totpCode(name)));
        }
    }

    // Starts serving on 127.0.0.1 at a free port; `options`' listen and run folder are set here.
    void serve(api::ServerOptions options)
    {
        options.listen = {"127.0.0.1:0"};
        options.runDir = dir_ / "run";
        server_ = take(api::ControlServer::start(*platform_, options));
        port_ = server_->ports().front();
        endpoint_ = {"127.0.0.1:" + std::to_string(port_), "localhost",
                     platform_->certificateAuthority().certificatePem()};
    }

    [[nodiscard]] const api::Endpoint& endpoint() const { return endpoint_; }
    [[nodiscard]] int port() const { return port_; }

    // A client on a channel of its own, without a certificate (sign-in, a worker's enrolment).
    [[nodiscard]] std::unique_ptr<api::ControlClient> anonymous() const
    {
        return take(api::ControlClient::connect(endpoint_, nullptr));
    }

    // A client signed in as `user`, on a channel of its own with the session's certificate.
    [[nodiscard]] std::unique_ptr<api::ControlClient> signIn(const std::string& user)
    {
        const api::SignedIn signedIn =
            take(anonymous()->sessions().signIn(user, secret(kPassword), totpCode(user)));
        return take(api::ControlClient::connect(endpoint_, &signedIn.identity));
    }

private:
    // The current TOTP code of `user`, from the secret in the database.
    [[nodiscard]] std::string totpCode(const std::string& user)
    {
        auto row =
            take(platform_->database().prepare("SELECT totp_secret FROM users WHERE name = ?"));
        row.bindAll({user});
        (void)take(row.step());
        const auto totp = take(crypto::SecretBytes::fromBytes(row.blob(0)));
        return core::totpCode(totp, core::totpStep(std::chrono::system_clock::now()));
    }

    std::filesystem::path dir_;
    std::unique_ptr<core::DataDirectory> platform_;
    std::string alice_;
    std::string secondAdmin_;  // a session of the first admin added after alice
    std::unique_ptr<api::ControlServer> server_;
    int port_ = 0;
    api::Endpoint endpoint_;
};

}  // namespace sealtrain::bench
