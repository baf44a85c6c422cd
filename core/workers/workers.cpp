// The worker registry (workers.h): enrolment tokens kept as their SHA-256, enrolment with a
// certificate from the platform CA, revocation and heartbeats (tables of migration 6,
// docs/formats/database.md).
#include "sealtrain/core/workers/workers.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/logging.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/crypto/certificate_authority.h"
#include "sealtrain/crypto/hash.h"
#include "sealtrain/crypto/random.h"
#include "sealtrain/crypto/signing.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

namespace sealtrain::core {
namespace {

constexpr std::int64_t kMinTokenSeconds = 60;
constexpr std::int64_t kMaxTokenSeconds = std::int64_t{7} * 24 * 3600;
constexpr std::string_view kTokenPrefix = "swt_";
// The one answer to a token that is unknown, used or expired: it does not say which.
constexpr const char* kTokenRefused =
    "The enrolment token is not valid; ask an administrator for a new one.";
constexpr const char* kTokenAuth = "enrolment token";
constexpr const char* kCertificateAuth = "mtls";

// [a-z0-9][a-z0-9.-]{0,62}: a worker's name is also its certificate's common name.
bool isValidWorkerName(std::string_view name)
{
    if (name.empty() || name.size() > 63 || name.front() == '.' || name.front() == '-')
        return false;
    return std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    });
}

Result<void> requireValidWorkerName(std::string_view name)
{
    if (isValidWorkerName(name))
        return success();
    return Error(ErrorCode::InvalidArgument,
                 "A worker's name must be 1 to 63 of a-z, 0-9, '.' and '-', starting with a "
                 "letter or digit; choose another.");
}

// Two active workers never share a name (a revoked worker's may be enrolled again).
Result<void> requireNameFree(const Database& database, const std::string& name)
{
    auto taken =
        database.exists("SELECT 1 FROM workers WHERE name = ? AND state = 'active'", {name});
    if (!taken)
        return taken.error();
    if (*taken)
        return Error(ErrorCode::AlreadyExists, "An active worker is already named '" + name
                                                   + "'; revoke it first or choose another name.");
    return success();
}

crypto::Sha256Digest tokenHash(const std::string& token)
{
    return crypto::sha256(asBytes(token));
}

audit::Actor workerActor(const std::string& name, const char* authMethod)
{
    return {audit::ActorKind::Worker, name, "", authMethod};
}

constexpr std::string_view kWorkerColumns =
    "w.id, w.name, w.pool, w.state, w.serial, w.signing_key, w.box_key, w.inventory, w.enrolled, "
    "w.last_seen, w.interconnect_declared, w.certificate, COALESCE((SELECT j.id FROM jobs j WHERE "
    "j.worker_id = "
    "w.id AND j.state = "
    "'running' ORDER BY j.id LIMIT 1), 0) FROM workers w";

Error corruptWorker(const std::string& name)
{
    return Error(ErrorCode::Integrity,
                 "The worker '" + name
                     + "' is damaged in the database; restore the database from a backup.");
}

Result<WorkerInfo> readWorker(const Statement& row)
{
    WorkerInfo worker;
    worker.id = row.integer(0);
    worker.name = row.text(1);
    worker.pool = row.text(2);
    const std::string state = row.text(3);
    if (state != workerStateName(WorkerState::Active)
        && state != workerStateName(WorkerState::Revoked))
        return corruptWorker(worker.name);
    worker.state =
        state == workerStateName(WorkerState::Active) ? WorkerState::Active : WorkerState::Revoked;
    worker.serial = row.text(4);
    worker.signingKeyPem = row.text(5);
    const auto boxKey = row.blob(6);
    if (boxKey.size() != worker.boxKey.size())
        return corruptWorker(worker.name);
    std::copy(boxKey.begin(), boxKey.end(), worker.boxKey.begin());
    auto inventory = parseWorkerInventory(row.text(7));
    if (!inventory)
        return corruptWorker(worker.name);
    worker.inventory = std::move(*inventory);
    worker.enrolled = row.integer(8);
    worker.lastSeen = row.integer(9);
    worker.interconnectDeclared = row.integer(10) != 0;
    const auto expires = crypto::certificateExpiry(row.text(11));
    if (!expires)
        return corruptWorker(worker.name);
    worker.certificateExpires =
        std::chrono::duration_cast<std::chrono::seconds>(expires->time_since_epoch()).count();
    worker.currentJob = row.integer(12);
    return worker;
}

// The first worker matching `condition` (SQL over the alias `w`); nullopt when none.
Result<std::optional<WorkerInfo>> findWorker(const Database& database, std::string_view condition,
                                             SqlValues arguments)
{
    std::optional<Result<WorkerInfo>> found;
    SEALTRAIN_TRY(database.queryOne(
        "SELECT " + std::string(kWorkerColumns) + " WHERE " + std::string(condition), arguments,
        [&](const Statement& row) { found = readWorker(row); }));
    if (!found)
        return std::optional<WorkerInfo>();
    if (!*found)
        return found->error();
    return std::optional<WorkerInfo>(std::move(**found));
}

// The active worker called `name`; NotFound saying where to look when there is none.
Result<WorkerInfo> activeWorker(const Database& database, const std::string& name)
{
    auto worker = findWorker(database, "w.name = ? AND w.state = 'active'", {name});
    if (!worker)
        return worker.error();
    if (!*worker)
        return Error(ErrorCode::NotFound,
                     "No active worker is named '" + name + "'; see 'worker list'.");
    return std::move(**worker);
}

}  // namespace

const char* workerStateName(WorkerState state) noexcept
{
    switch (state) {
    case WorkerState::Active: return "active";
    case WorkerState::Revoked: return "revoked";
    }
    return "unknown";
}

Workers::Workers(AuditedTransactions& gate)
    : gate_(gate)
    , database_(gate.database())
{
}

Result<EnrollToken> Workers::createEnrollToken(const std::string& session, const std::string& name,
                                               const std::string& pool, std::int64_t validSeconds)
{
    return gate_.performReturning(
        session, {"worker.enroll_token", permission::kWorkerEnroll, "", {"worker", name}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<EnrollToken> {
            SEALTRAIN_TRY(requireValidWorkerName(name));
            SEALTRAIN_TRY(requireValidName("pool", pool));
            if (validSeconds < kMinTokenSeconds || validSeconds > kMaxTokenSeconds)
                return Error(ErrorCode::InvalidArgument,
                             "An enrolment token is valid for 1 minute to 7 days; choose a time "
                             "in that range.");
            SEALTRAIN_TRY(requireNameFree(database_, name));
            EnrollToken token;
            token.token = std::string(kTokenPrefix) + toBase64Url(crypto::randomBytes(32));
            token.worker = name;
            token.pool = pool;
            const std::int64_t now = gate_.now();
            token.expires = now + validSeconds;
            SEALTRAIN_TRY(database_.run(
                "INSERT INTO worker_tokens (token_hash, worker, pool, created_by, created, "
                "expires) VALUES (?, ?, ?, ?, ?, ?)",
                {SqlValue::blob(tokenHash(token.token)), name, pool, caller.userId, now,
                 token.expires}));
            draft.details.push_back(audit::textDetail("pool", pool));
            draft.details.push_back(audit::textDetail("expires", toRfc3339(token.expires)));
            return token;
        });
}

Result<WorkerInfo>
Workers::enroll(const EnrollRequest& request,
                const std::function<Result<std::string>(const std::string& commonName)>& issue)
{
    std::int64_t id = 0;
    if (auto done = gate_.performWithoutSession(
            {"worker.enroll", "", "", {"worker", ""}},
            [&](audit::EntryDraft& draft) -> Result<void> {
                draft.actor = workerActor("unknown", kTokenAuth);
                std::int64_t tokenId = 0;
                std::string name;
                std::string pool;
                std::int64_t expires = 0;
                bool used = false;
                auto known = database_.queryOne(
                    "SELECT id, worker, pool, expires, used IS NOT NULL FROM worker_tokens WHERE "
                    "token_hash = ?",
                    {SqlValue::blob(tokenHash(request.token))}, [&](const Statement& row) {
                        tokenId = row.integer(0);
                        name = row.text(1);
                        pool = row.text(2);
                        expires = row.integer(3);
                        used = row.integer(4) != 0;
                    });
                if (!known)
                    return known.error();
                const std::int64_t now = gate_.now();
                // The entry says which (for the auditor); the answer does not (for whoever holds
                // the token).
                std::string refusal;
                if (!*known)
                    refusal = "unknown enrolment token";
                else if (used)
                    refusal = "enrolment token already used";
                else if (now >= expires)
                    refusal = "enrolment token expired";
                if (*known) {
                    draft.actor = workerActor(name, kTokenAuth);
                    draft.target.id = name;
                }
                if (!refusal.empty()) {
                    draft.outcome = audit::Outcome::Denied;
                    draft.reason = refusal;
                    return Error(ErrorCode::Unauthenticated, kTokenRefused);
                }
                if (!crypto::PublicKey::fromPem(request.signingKeyPem))
                    return Error(ErrorCode::InvalidArgument,
                                 "The worker's signing key is not an Ed25519 public key in PEM; "
                                 "send the one its checkpoints are signed with.");
                if (std::all_of(request.boxKey.begin(), request.boxKey.end(),
                                [](std::uint8_t b) { return b == 0; }))
                    return Error(ErrorCode::InvalidArgument,
                                 "The worker's X25519 public key is all zeros; send its real "
                                 "public key.");
                SEALTRAIN_TRY(requireNameFree(database_, name));
                // Spent in the same transaction as the enrolment (which holds the write lock
                // since it read the token): once that commits, a retry is refused as a used
                // token; when anything below fails, neither happened.
                SEALTRAIN_TRY(database_.run("UPDATE worker_tokens SET used = ? WHERE id = ?",
                                            {now, tokenId}));
                auto certificate = issue(name);
                if (!certificate)
                    return certificate.error();
                auto revocation = crypto::revocationFor(*certificate, gate_.clock().now());
                if (!revocation)
                    return revocation.error();
                SEALTRAIN_TRY(database_.run(
                    "INSERT INTO workers (name, pool, state, serial, certificate, signing_key, "
                    "box_key, inventory, enrolled, last_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, "
                    "?)",
                    {name, pool, workerStateName(WorkerState::Active), revocation->serialHex,
                     *certificate, request.signingKeyPem, SqlValue::blob(request.boxKey),
                     workerInventoryJson(request.inventory), now, now}));
                id = database_.lastInsertId();
                draft.details.push_back(audit::textDetail("pool", pool));
                draft.details.push_back(audit::textDetail("serial", revocation->serialHex));
                return success();
            });
        !done)
        return done.error();
    auto worker = findWorker(database_, "w.id = ?", {id});
    if (!worker)
        return worker.error();
    if (!*worker)
        return Error(ErrorCode::Internal, "The enrolled worker vanished; try again.");
    return std::move(**worker);
}

Result<WorkerInfo> Workers::bySerial(const std::string& serial)
{
    auto worker = findWorker(database_, "w.serial = ?", {serial});
    if (!worker)
        return worker.error();
    if (!*worker)
        return Error(ErrorCode::NotFound,
                     "No worker is enrolled with this certificate; enroll with a new token.");
    if ((*worker)->state == WorkerState::Active)
        return std::move(**worker);
    const std::string name = (*worker)->name;
    auto recorded = gate_.performWithoutSession(
        {"worker.connect", "", "", {"worker", name}}, [&](audit::EntryDraft& draft) {
            draft.actor = workerActor(name, kCertificateAuth);
            draft.outcome = audit::Outcome::Denied;
            draft.reason = "worker revoked";
            draft.details.push_back(audit::textDetail("serial", serial));
            return success();
        });
    if (!recorded)
        return recorded.error();
    return denied("The worker '" + name + "' was revoked; enroll it again with a new token.");
}

Result<WorkerInfo> Workers::caller(const std::string& serial, std::string_view call)
{
    std::optional<Error> refusal;
    if (serial.empty()) {
        refusal = Error(ErrorCode::Unauthenticated,
                        fmt::format("{} needs an enrolled worker's certificate; enroll the worker "
                                    "first ('sealtrain-worker enroll').",
                                    call));
    } else {
        auto worker = bySerial(serial);
        if (worker || worker.error().code() != ErrorCode::NotFound)
            return worker;
        refusal = Error(ErrorCode::Unauthenticated,
                        fmt::format("{} was called with a certificate that is not an enrolled "
                                    "worker's; enroll the worker first ('sealtrain-worker "
                                    "enroll').",
                                    call));
    }
    if (auto recorded =
            gate_.recordAnonymousRefusal({"worker.connect", "", "", {"worker", "*"}}, *refusal);
        !recorded)
        log::warn("audit", "could not record a refused worker call in the audit log",
                  {{"error", recorded.error().message()}});
    return *refusal;
}

Result<void> Workers::heartbeatFrom(const WorkerInfo& worker, std::string_view inventoryJson)
{
    auto inventory = parseWorkerInventory(inventoryJson);
    if (inventory)
        return heartbeat(worker.id, *inventory);
    auto recorded = gate_.performWithoutSession(
        {"worker.heartbeat", "", "", {"worker", worker.name}}, [&](audit::EntryDraft& draft) {
            draft.actor = workerActor(worker.name, kCertificateAuth);
            draft.outcome = audit::Outcome::Denied;
            draft.reason = inventory.error().message();
            draft.details.push_back(audit::textDetail("worker", worker.name));
            return success();
        });
    if (!recorded)
        log::warn("audit", "could not record a refused heartbeat in the audit log",
                  {{"error", recorded.error().message()}});
    return inventory.error();
}

Result<WorkerInfo> Workers::byName(const std::string& name)
{
    // A name freed by a revocation may be enrolled again: the newest worker of that name.
    auto worker = findWorker(database_, "w.name = ? ORDER BY w.id DESC LIMIT 1", {name});
    if (!worker)
        return worker.error();
    if (!*worker)
        return Error(ErrorCode::NotFound, "No worker is called '" + name + "'; check the name.");
    return std::move(**worker);
}

Result<void> Workers::heartbeat(std::int64_t workerId, const WorkerInventory& inventory)
{
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    SEALTRAIN_TRY(database_.run(
        "UPDATE workers SET last_seen = ?, inventory = ? WHERE id = ? AND state = 'active'",
        {gate_.now(), workerInventoryJson(inventory), workerId}));
    if (database_.changes() != 1)
        return Error(ErrorCode::NotFound, "No active worker has the number "
                                              + std::to_string(workerId) + "; enroll it again.");
    return (*transaction)->commit();
}

Result<KeyedPaged<WorkerInfo>> Workers::list(const std::string& session, const KeyedPage& page)
{
    return gate_.performReturning(
        session, {"worker.list", permission::kWorkerRead, "", {"worker", "*"}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<KeyedPaged<WorkerInfo>> {
            draft.details.push_back(audit::textDetail("after", page.after));
            SEALTRAIN_TRY(checkKeyedPage(page));
            std::vector<WorkerInfo> workers;
            Result<void> failure = success();
            SEALTRAIN_TRY(
                database_.query("SELECT " + std::string(kWorkerColumns) + " ORDER BY w.name, w.id",
                                {}, [&](const Statement& row) {
                                    auto worker = readWorker(row);
                                    if (!worker)
                                        failure = worker.error();
                                    else
                                        workers.push_back(std::move(*worker));
                                }));
            if (!failure)
                return failure.error();
            return pageAfter(std::move(workers), page,
                             [](const WorkerInfo& worker) { return pageKey(worker); });
        });
}

Result<WorkerInfo> Workers::revoke(const std::string& session, const std::string& name,
                                   const std::string& reason)
{
    return gate_.performReturning(
        session, {"worker.revoke", permission::kWorkerEnroll, "", {"worker", name}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<WorkerInfo> {
            if (!reason.empty())
                draft.details.push_back(audit::textDetail("reason", reason));
            auto worker = activeWorker(database_, name);
            if (!worker)
                return worker.error();
            draft.details.push_back(audit::textDetail("serial", worker->serial));
            SEALTRAIN_TRY(database_.run("UPDATE workers SET state = ? WHERE id = ?",
                                        {workerStateName(WorkerState::Revoked), worker->id}));
            worker->state = WorkerState::Revoked;
            return worker;
        });
}

Result<WorkerInfo> Workers::declareInterconnect(const std::string& session, const std::string& name,
                                                bool encrypted)
{
    return gate_.performReturning(
        session, {"worker.interconnect", permission::kWorkerEnroll, "", {"worker", name}},
        [&](const Caller&, audit::EntryDraft& draft) -> Result<WorkerInfo> {
            draft.details.push_back(audit::textDetail("encrypted", encrypted ? "true" : "false"));
            auto worker = activeWorker(database_, name);
            if (!worker)
                return worker.error();
            SEALTRAIN_TRY(database_.run("UPDATE workers SET interconnect_declared = ? WHERE id = ?",
                                        {std::int64_t{encrypted ? 1 : 0}, worker->id}));
            worker->interconnectDeclared = encrypted;
            return worker;
        });
}

Result<std::vector<std::string>> Workers::revokedSerials()
{
    std::vector<std::string> serials;
    SEALTRAIN_TRY(database_.query("SELECT serial FROM workers WHERE state = 'revoked' ORDER BY id",
                                  {},
                                  [&](const Statement& row) { serials.push_back(row.text(0)); }));
    return serials;
}

}  // namespace sealtrain::core
