// Workers (issue #16; docs/operations/workers.md): the registry of enrolled GPU nodes.
// An admin makes a one-time enrolment token for a named worker in a pool; the worker presents it
// once with a CSR and its two public keys (Ed25519, which signs its checkpoints; X25519, to which
// job keys are sealed) and gets a client certificate from the platform CA. From then on the
// worker is known by its certificate's serial, which survives control-plane restarts (it is in
// the database). Revoking a worker ends its certificate (the server adds it to the CRL) and
// re-queues its job. Tokens are stored only as their SHA-256; each works once, until it expires.
// Every change is audited; heartbeats are not (they only update last-seen and the inventory).
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/store/list_page.h"
#include "sealtrain/node/inventory.h"

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;
class Database;

// What a worker reports about its node: the node library's type (node/inventory.h), which the
// worker writes and the control plane parses.
using node::GpuInfo;
using node::parseWorkerInventory;
using node::WorkerInventory;
using node::workerInventoryJson;

enum class WorkerState { Active, Revoked };
[[nodiscard]] const char* workerStateName(WorkerState state) noexcept;

struct WorkerInfo {
    std::int64_t id = 0;
    std::string name;  // [a-z0-9][a-z0-9.-]{0,62}
    std::string pool;
    WorkerState state = WorkerState::Active;
    std::string serial;         // of its certificate, lowercase hex
    std::string signingKeyPem;  // Ed25519 public key (PEM): checkpoints it signs verify with it
    std::array<std::uint8_t, 32> boxKey{};  // X25519 public key: job keys are sealed to it
    WorkerInventory inventory;
    std::int64_t enrolled = 0;
    std::int64_t lastSeen = 0;    // Unix seconds of its last heartbeat (0: never)
    std::int64_t currentJob = 0;  // the job it runs (0: none)
    // An operator declared the interconnect of its nodes encrypted (Workers::declareInterconnect):
    // only then does it get jobs on more than one node. The inventory's own claim does not count.
    bool interconnectDeclared = false;
    // Unix seconds of its certificate's notAfter: after it the worker is refused until re-enrolled.
    std::int64_t certificateExpires = 0;
};

// Workers are listed by name, in enrolment order under one name (store/list_page.h).
[[nodiscard]] inline std::string pageKey(const WorkerInfo& worker)
{
    return worker.name + '\n' + orderedNumber(static_cast<std::uint64_t>(worker.id));
}

struct EnrollToken {
    std::string token;  // "swt_" + 43 base64url characters; shown once, stored as its SHA-256
    std::string worker;
    std::string pool;
    std::int64_t expires = 0;
};

// What a worker sends to enroll.
struct EnrollRequest {
    std::string token;
    std::string signingKeyPem;
    std::array<std::uint8_t, 32> boxKey{};
    WorkerInventory inventory;
};

class Workers final {
public:
    explicit Workers(AuditedTransactions& gate);

    // worker.enroll (the operator role; separation of duties keeps admins out): a one-time token
    // for a worker `name` in `pool`, valid for `validSeconds` (1 minute to 7 days). AlreadyExists
    // when an active worker has that name.
    [[nodiscard]] Result<EnrollToken> createEnrollToken(const std::string& session,
                                                        const std::string& name,
                                                        const std::string& pool,
                                                        std::int64_t validSeconds);
    // No session: the token is the credential. `issue(commonName)` signs the worker's CSR (the
    // server does it with the platform CA) and returns the certificate PEM, whose serial becomes
    // the worker's identity. Unauthenticated, audited, for an unknown, used or expired token
    // (one sentence that does not say which).
    [[nodiscard]] Result<WorkerInfo>
    enroll(const EnrollRequest& request,
           const std::function<Result<std::string>(const std::string& commonName)>& issue);
    // The worker whose certificate has `serial`: NotFound when none, PermissionDenied (audited)
    // when it was revoked.
    [[nodiscard]] Result<WorkerInfo> bySerial(const std::string& serial);
    // The worker making a worker-only call (`call`, e.g. "Workers.Heartbeat"), by the serial of
    // the certificate it presented (empty: none). A caller that is no enrolled worker (no
    // certificate, or another's: a user's session certificate) is Unauthenticated and audited
    // as worker.connect, an anonymous refusal counted per peer and window (the window's first
    // is written as itself, its certificate_serial naming the certificate presented; the rest
    // are counted; issue #54); a revoked worker is refused as bySerial does.
    [[nodiscard]] Result<WorkerInfo> caller(const std::string& serial, std::string_view call);
    // The worker called `name` (the control plane's own lookup, no session): NotFound when none.
    [[nodiscard]] Result<WorkerInfo> byName(const std::string& name);
    // Records a heartbeat (not audited): last seen now, and the inventory as reported (one row
    // update; docs/operations/limits.md has its cost).
    [[nodiscard]] Result<void> heartbeat(std::int64_t workerId, const WorkerInventory& inventory);
    // The heartbeat `worker` sent, its inventory as the JSON it wrote: read strictly
    // (parseWorkerInventory); one that is refused is audited as worker.heartbeat, denied, with
    // the worker as actor (issue #54), and nothing is updated.
    [[nodiscard]] Result<void> heartbeatFrom(const WorkerInfo& worker,
                                             std::string_view inventoryJson);
    // worker.read (the operator role): every worker, by name.
    // One page of the workers, by name (worker.read; audited as worker.list with detail
    // `after`).
    [[nodiscard]] Result<KeyedPaged<WorkerInfo>> list(const std::string& session,
                                                      const KeyedPage& page = {});
    // worker.enroll (the operator role): the worker is revoked for good; returns it (its serial
    // goes into the CRL, by the caller). The caller re-queues its job (Scheduler::releaseWorker).
    [[nodiscard]] Result<WorkerInfo> revoke(const std::string& session, const std::string& name,
                                            const std::string& reason);
    // worker.enroll (the operator role), audited as worker.interconnect: records whether the
    // interconnect between the nodes this worker launches on is encrypted (IPsec, WireGuard,
    // MACsec, or one fabric behind a locked door), as its operator has checked. Jobs on more than
    // one node go only to workers declared encrypted (Scheduler::take).
    [[nodiscard]] Result<WorkerInfo> declareInterconnect(const std::string& session,
                                                         const std::string& name, bool encrypted);
    // Every revoked worker's serial (loaded into the handshake's revocation set at start).
    [[nodiscard]] Result<std::vector<std::string>> revokedSerials();

private:
    AuditedTransactions& gate_;
    Database& database_;
};

}  // namespace sealtrain::core
