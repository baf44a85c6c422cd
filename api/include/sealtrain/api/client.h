// The client library of the control plane's gRPC contract (docs/api.md), which sealtrainctl,
// the GUI and the worker share: one ControlClient per channel, and on it one handle per service of
// the contract (client.jobs(), .datasets(), .registry(), .audit(), …, and .worker() for a
// worker's own calls), each declared beside its views in its own header. Every call returns a
// Result whose error is the server's one sentence, or one of our own for a transport failure. No
// gRPC type crosses these headers.
#pragma once

#include "sealtrain/api/access_client.h"
#include "sealtrain/api/audit_client.h"
#include "sealtrain/api/client_call.h"
#include "sealtrain/api/compliance_client.h"
#include "sealtrain/api/datasets_client.h"
#include "sealtrain/api/jobs_client.h"
#include "sealtrain/api/keyring_client.h"
#include "sealtrain/api/platform_client.h"
#include "sealtrain/api/registry_client.h"
#include "sealtrain/api/runs_client.h"
#include "sealtrain/api/sessions_client.h"
#include "sealtrain/api/training_client.h"
#include "sealtrain/api/users_client.h"
#include "sealtrain/api/worker_client.h"
#include "sealtrain/api/workers_client.h"
#include "sealtrain/base/result.h"

#include <memory>
#include <string>

namespace sealtrain::api {

// Holds gRPC's runtime for a client process's lifetime: one object in main, made before any
// channel and destroyed after the last. Its destructor tears the runtime down on this thread and
// waits (up to a few seconds) for any teardown gRPC had handed to one of its own threads, so that
// the process does not exit while a connection's TLS state is still being freed (LeakSanitizer
// saw `sealtrainctl connect` exit mid-teardown under load; docs/development.md).
class GrpcRuntime final {
public:
    GrpcRuntime();
    GrpcRuntime(const GrpcRuntime&) = delete;
    GrpcRuntime& operator=(const GrpcRuntime&) = delete;
    ~GrpcRuntime();
};

// The platform CA's certificate from the server at `address`, fetched before anything is
// trusted and returned only when its fingerprint (crypto::certificateFingerprint) is
// `fingerprint`; Unauthenticated, in one sentence, otherwise.
[[nodiscard]] Result<std::string> fetchPinnedCaCertificate(const std::string& address,
                                                           const std::string& serverName,
                                                           const std::string& fingerprint);
class ControlClient final {
public:
    // A channel to `endpoint` that presents `identity` when given (every call after sign-in),
    // or no client certificate (sign-in). Nothing is sent until the first call.
    [[nodiscard]] static Result<std::unique_ptr<ControlClient>>
    connect(const Endpoint& endpoint, const ClientIdentity* identity);

    ControlClient(const ControlClient&) = delete;
    ControlClient& operator=(const ControlClient&) = delete;
    ~ControlClient();

    // One handle per service, all over this client's one channel; each lives as long as the
    // client.
    [[nodiscard]] SessionsClient& sessions() noexcept { return sessions_; }
    [[nodiscard]] UsersClient& users() noexcept { return users_; }
    [[nodiscard]] AccessClient& access() noexcept { return access_; }
    [[nodiscard]] DatasetsClient& datasets() noexcept { return datasets_; }
    [[nodiscard]] AuditClient& audit() noexcept { return audit_; }
    [[nodiscard]] ComplianceClient& compliance() noexcept { return compliance_; }
    [[nodiscard]] PlatformClient& platform() noexcept { return platform_; }
    [[nodiscard]] KeyringClient& keyring() noexcept { return keyring_; }
    [[nodiscard]] TrainingClient& training() noexcept { return training_; }
    [[nodiscard]] JobsClient& jobs() noexcept { return jobs_; }
    [[nodiscard]] RunsClient& runs() noexcept { return runs_; }
    [[nodiscard]] RegistryClient& registry() noexcept { return registry_; }
    [[nodiscard]] WorkersClient& workers() noexcept { return workers_; }
    [[nodiscard]] WorkerClient& worker() noexcept { return worker_; }

private:
    explicit ControlClient(std::unique_ptr<client_internal::ClientState> state);

    std::unique_ptr<client_internal::ClientState> state_;
    SessionsClient sessions_;
    UsersClient users_;
    AccessClient access_;
    DatasetsClient datasets_;
    AuditClient audit_;
    ComplianceClient compliance_;
    PlatformClient platform_;
    KeyringClient keyring_;
    TrainingClient training_;
    JobsClient jobs_;
    RunsClient runs_;
    RegistryClient registry_;
    WorkersClient workers_;
    WorkerClient worker_;
};

}  // namespace sealtrain::api
