// The control plane served over gRPC (issue #15, docs/api.md): the contract of
// api/proto/sealtrain/v1/control.proto mapped one to one onto core's services, over TLS 1.3
// (tls_policy.h), with the platform CA's certificates on both sides. A client signs in with
// password, TOTP and a CSR and gets a short-lived client certificate bound to its new session;
// every later call is authenticated by that certificate alone (the session token never leaves
// this process), and a signed-out session's certificate is refused at the next handshake.
// docs/decisions/0009-session-bound-client-certificates.md says why.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/data_directory/data_directory.h"
#include "sealtrain/formats/job_spec.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace sealtrain::api {

struct ServerOptions {
    // "unix:/absolute/path" or "host:port" (port 0 picks a free one); at least one.
    std::vector<std::string> listen;
    // The server's own folder (mode 0700): its published CRL (crl.pem) is written here.
    std::filesystem::path runDir;
    // The names and addresses in the server's certificate, which clients check.
    std::vector<std::string> dnsNames = {"localhost"};
    std::vector<std::string> ipAddresses = {"127.0.0.1", "::1"};
    // How long a sign-in's client certificate is valid (the session's own limits still apply).
    std::chrono::seconds sessionCertificateLifetime{std::chrono::hours(12)};
    // The most bytes one dataset upload may hold: it is kept in memory (never on disk in the
    // clear) until the import has sealed it.
    std::uint64_t maxImportBytes = std::uint64_t{4} << 30U;
    // The sealtrain-train the control plane runs for Training calls, set by its operator;
    // empty: training is refused.
    std::filesystem::path trainer;
    // Workers (docs/operations/workers.md): how long an enrolled worker's certificate is valid,
    // how often workers beat, and after how long without a beat a worker's job is re-queued.
    std::chrono::seconds workerCertificateLifetime{std::chrono::hours(24 * 365)};
    std::chrono::milliseconds heartbeatInterval{std::chrono::seconds(5)};
    std::chrono::seconds workerTimeout{std::chrono::seconds(30)};
    // How many sign-ins may check a password at once (Argon2id, 64 MiB or more each); the rest
    // wait up to passwordCheckWait, then are answered that the control plane is busy (issue #27:
    // 32 parallel anonymous sign-ins took the daemon from 0.9 to 2.2 GB).
    unsigned maxPasswordChecks = 4;
    std::chrono::milliseconds passwordCheckWait{std::chrono::seconds(10)};
    // Dataset uploads received at once (each held in memory until sealed), and how long one may
    // send nothing before it is cancelled (issue #27: stalled uploads held threads forever).
    unsigned maxUploads = 4;
    // Export downloads sent at once (each staged sealed on disk, issue #48); more are told to
    // try again.
    unsigned maxDownloads = 4;
    std::chrono::seconds uploadIdleTimeout{std::chrono::seconds(60)};
    // Jobs.WatchJob streams open at once (each holds a thread of the server while it lasts),
    // and how often each looks for news.
    unsigned maxWatches = 32;
    // Of them, one user's at most (issue #54).
    unsigned maxWatchesPerUser = 8;
    std::chrono::milliseconds watchInterval{500};
    // The most bytes one checkpoint upload (sealed file and envelope) may hold.
    std::uint64_t maxCheckpointBytes = std::uint64_t{64} << 30U;
    // What a caller's job spec may cost to read (size, nesting, values), each within
    // formats::kJobSpecFloor and formats::kJobSpecCeiling.
    formats::JobSpecLimits jobSpecLimits;
};

class ControlServer final {
public:
    // Issues the server's certificate from the platform CA and starts serving. `platform` must
    // outlive the server; every call runs under one lock (the control plane is the single
    // writer of its database and audit log).
    [[nodiscard]] static Result<std::unique_ptr<ControlServer>> start(core::DataDirectory& platform,
                                                                      const ServerOptions& options);

    ControlServer(const ControlServer&) = delete;
    ControlServer& operator=(const ControlServer&) = delete;
    ~ControlServer();

    // The TCP ports bound, in the order of options.listen (0 for a Unix socket).
    [[nodiscard]] const std::vector<int>& ports() const noexcept;
    // The daemon's health for systemd's watchdog (issue #52): an empty call committed through the
    // committer, so it answers only while the committer thread, its lock and the database do;
    // a stuck one never returns, and the watchdog then fires.
    [[nodiscard]] Result<void> probe();
    // Stops taking calls, lets the calls in flight finish (at most `grace`), and returns.
    void shutdown(std::chrono::milliseconds grace);
    // Blocks until shutdown.
    void wait();

private:
    struct State;
    explicit ControlServer(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

}  // namespace sealtrain::api
