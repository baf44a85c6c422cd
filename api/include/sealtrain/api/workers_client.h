// The client library's handle on the Workers service, ControlClient::workers() (docs/api.md).
// Workers, for administrators: one-time enrolment tokens, the list, the interconnect, revocation.
// Every call returns a Result whose error is the server's one sentence, or the client's own for a
// transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::api {

struct EnrollTokenGrant {
    std::string token;  // shown once; hand it to the node's operator out of band
    std::int64_t expiresUnix = 0;
};

// An enrolled worker as the control plane reports it (docs/api.md, "Workers").
struct WorkerSummary {
    std::string name;
    std::string pool;
    std::string state;  // active, revoked
    std::string serial;
    std::int64_t enrolledUnix = 0;
    std::int64_t lastSeenUnix = 0;
    std::int64_t currentJob = 0;
    std::string inventoryJson;
    std::string signingPublicKeyPem;          // checkpoints it signed verify with it
    bool interconnectDeclared = false;        // an operator declared its interconnect encrypted
    std::int64_t certificateExpiresUnix = 0;  // its certificate's notAfter: re-enrol it before
};

class WorkersClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // Workers, for administrators: a one-time enrolment token, the list, revocation.
    [[nodiscard]] Result<EnrollTokenGrant> createEnrollToken(const std::string& worker,
                                                             const std::string& pool,
                                                             std::int64_t validSeconds);
    // Every worker, page by page, by name.
    [[nodiscard]] Result<std::vector<WorkerSummary>> listWorkers();
    // worker.enroll: declares the interconnect of the worker's nodes encrypted (or not).
    [[nodiscard]] Result<WorkerSummary> declareInterconnect(const std::string& worker,
                                                            bool encrypted);
    [[nodiscard]] Result<WorkerSummary> revokeWorker(const std::string& worker,
                                                     const std::string& reason);
};

}  // namespace sealtrain::api
