// A worker that a test enrolls and drives itself through the client library, as sealtrain-worker
// would (its own TLS, signing and box keys), to take a job and report what the test wants: for
// tests of what the control plane accepts from a worker, and of what its users then see.
#pragma once

#include "daemon_fixture.h"

#include "sealtrain/core/workers/workers.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/sealed_box.h"
#include "sealtrain/crypto/signing.h"

#include <optional>
#include <string>

namespace sealtrain::testing {

struct TestWorker {
    std::unique_ptr<api::ControlClient> client;
    std::optional<api::ClientIdentity> identity;  // for a raw stream of its own
    std::optional<crypto::SigningKey> signing;    // signs its checkpoints
    std::optional<crypto::BoxKeyPair> box;        // its job keys are sealed to it
};

// Enrolls worker `name` in `pool` with a token that `operatorUser` (the operator role) makes;
// ends the test with qFatal when a step fails.
inline TestWorker enrollTestWorker(DaemonFixture& daemon, const std::string& operatorUser,
                                   const std::string& name, const std::string& pool)
{
    TestWorker worker;
    auto token = daemon.as(operatorUser)->workers().createEnrollToken(name, pool, 600);
    if (!token)
        qFatal("enrolment token: %s", token.error().message().c_str());
    auto tls = crypto::makeKeyAndCsr("sealtrain-worker");
    if (!tls)
        qFatal("worker key: %s", tls.error().message().c_str());
    worker.signing.emplace(crypto::SigningKey::generate().value());
    worker.box.emplace(crypto::BoxKeyPair::generate().value());
    api::WorkerEnrollment enrollment;
    enrollment.token = token->token;
    enrollment.csrPem = tls->csrPem;
    enrollment.signingPublicKeyPem = worker.signing->publicKey().toPem();
    enrollment.boxPublicKey.assign(worker.box->publicKey().begin(), worker.box->publicKey().end());
    core::WorkerInventory inventory;
    inventory.cpuCores = 2;
    enrollment.inventoryJson = core::workerInventoryJson(inventory);
    auto enrolled = daemon.anonymous()->worker().enrollWorker(enrollment);
    if (!enrolled)
        qFatal("enrolment: %s", enrolled.error().message().c_str());
    api::ClientIdentity identity;
    identity.privateKeyPem = std::move(tls->privateKeyPem);
    identity.certificatePem = enrolled->certificatePem;
    worker.client = daemon.as(identity);
    worker.identity.emplace(std::move(identity));
    return worker;
}

}  // namespace sealtrain::testing
