// The audit log: appends entries inside the caller's transaction, keeps the RFC 6962 tree over
// them, and signs tree heads by policy (every N entries, every T seconds while entries wait,
// as an idle heartbeat, on demand and on export). It never signs a head that is smaller than, or
// inconsistent with, the newest one in the store, and hands every head to its witnesses
// (witness.h): the witness file when one is configured, and any others it is given. Several logs
// may share one store (two control planes on one database): each re-reads what the others appended
// under the store's write lock.
#pragma once

#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/merkle_tree.h"
#include "sealtrain/audit/selection_statement.h"
#include "sealtrain/audit/store.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/audit/witness.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace sealtrain::audit {

class Clock {
public:
    virtual ~Clock() = default;
    [[nodiscard]] virtual std::chrono::system_clock::time_point now() const = 0;
};

class SystemClock final : public Clock {
public:
    [[nodiscard]] std::chrono::system_clock::time_point now() const override
    {
        return std::chrono::system_clock::now();
    }
};

struct HeadPolicy {
    std::uint64_t everyEntries = 1000;     // sign once this many entries wait; 0: never
    std::chrono::seconds every{60};        // sign when entries have waited this long; 0: never
    std::chrono::seconds heartbeat{3600};  // re-sign the same size when idle this long; 0: never
};

// What the caller knows about an event; the log adds sequence, time and chain.
struct EntryDraft {
    Actor actor;
    std::string action;
    Target target;
    Outcome outcome = Outcome::Ok;
    std::string reason;
    std::string requestId;
    std::vector<std::string> approvalIds;
    std::vector<Detail> details;
    // Stored only as HMAC-SHA-256 under the audit key: (name, value).
    std::vector<std::pair<std::string, std::string>> sensitive;
};

class EntryForwarder;  // forward.h

struct LogOptions {
    std::string origin;  // the log's name: origin line and signing key name
    HeadPolicy policy;
    std::optional<std::filesystem::path> witnessFile;
    // Told after each commit (forward.h); must outlive the log.
    EntryForwarder* forwarder = nullptr;
    // Further witnesses (another file system, a TPM counter), checked at open and given every
    // head after the witness file; each must outlive the log.
    std::vector<HeadWitness*> witnesses{};
    // Open even when a witness's check fails (the operator accepted the loss, audited by the
    // caller): the failures are kept in lostWitnesses() and the caller resets each one.
    bool acceptWitnessLoss = false;
};

// A witness whose check failed at open, and why (its reasonCode() names what was found:
// witness_missing, witness_empty, witness_ahead, witness_differs, witness_behind).
struct LostWitness {
    HeadWitness* witness = nullptr;
    Error why;
};

class AuditLog final {
public:
    // Reads the store's entries and heads, re-hashes them and checks every stored head against
    // the tree (Integrity when the store was altered), then every witness (Integrity when the
    // store is older than what one kept: a restored backup or a rollback; or when one that must
    // hold heads is missing or empty). `signingKey`,
    // `auditKey` and `clock` must outlive the log; so must the store. `auditKey` may be null when
    // no entry is sensitive.
    [[nodiscard]] static Result<std::unique_ptr<AuditLog>>
    open(AuditStore& store, const crypto::SigningKey& signingKey, const AuditKey* auditKey,
         const Clock& clock, LogOptions options);

    AuditLog(const AuditLog&) = delete;
    AuditLog& operator=(const AuditLog&) = delete;
    ~AuditLog() = default;

    // Appends one entry inside `transaction`; returns its sequence number. The entry joins the
    // tree when the transaction commits and is forgotten when it rolls back. One transaction at
    // a time may append (the database has one writer).
    [[nodiscard]] Result<std::uint64_t> append(StoreTransaction& transaction,
                                               const EntryDraft& draft);

    // Signs a head over every committed entry now (on demand, and before an export).
    [[nodiscard]] Result<TreeHead> signHead();
    // Applies the time-based policy; call it periodically (every few seconds). Also reports an
    // error from a head signed after a commit.
    [[nodiscard]] Result<void> tick();
    // Signs an export's selection statement with the log key (bundle.h's exportBundle). The
    // statement's first line keeps it from ever reading as a tree head.
    [[nodiscard]] std::string signSelection(const SelectionStatement& statement) const;

    [[nodiscard]] std::uint64_t size() const noexcept { return tree_.size(); }
    [[nodiscard]] const MerkleTree& tree() const noexcept { return tree_; }
    [[nodiscard]] const AuditStore& store() const noexcept { return store_; }
    [[nodiscard]] NoteVerifier verifier() const;
    [[nodiscard]] const std::optional<TreeHead>& lastHead() const noexcept { return lastHead_; }
    [[nodiscard]] const std::string& origin() const noexcept { return options_.origin; }
    [[nodiscard]] const std::optional<std::filesystem::path>& witnessFile() const noexcept
    {
        return options_.witnessFile;
    }
    // The witness file first, then the others, in the order they were given.
    [[nodiscard]] const std::vector<HeadWitness*>& witnesses() const noexcept { return witnesses_; }
    // A witness that joins an open log (core attaches one the operator configured): it is given
    // every head signed from now on. The caller has given it the newest head already.
    void addWitness(HeadWitness& witness) { witnesses_.push_back(&witness); }
    // No longer gives heads to `witness` (its detach, at open, before any call).
    void removeWitness(const HeadWitness& witness) { std::erase(witnesses_, &witness); }
    // The witnesses whose check failed at open, with acceptWitnessLoss.
    [[nodiscard]] const std::vector<LostWitness>& lostWitnesses() const noexcept
    {
        return lostWitnesses_;
    }
    // The number of signed heads in the store, as this process last read it.
    [[nodiscard]] std::size_t storedHeads() const noexcept { return headsRead_; }

private:
    AuditLog(AuditStore& store, const crypto::SigningKey& signingKey, const AuditKey* auditKey,
             const Clock& clock, LogOptions options);
    void committed();
    void rolledBack();
    // Appends to the tree the entries the store gained since this process last looked (another
    // control plane on the same database), checking each as open() does.
    [[nodiscard]] Result<void> readNewEntries();
    // Checks the heads stored since this process last looked: signed by this log, matching the
    // tree, never smaller than an earlier one.
    [[nodiscard]] Result<void> readNewHeads();
    // Refuses a store older than, or different from, what any witness kept.
    [[nodiscard]] Result<void> checkWitnesses();
    // Signs and stores a head over the whole tree; returns the signed note.
    [[nodiscard]] Result<std::string> signHeadHoldingTheLock();

    AuditStore& store_;
    const crypto::SigningKey& signingKey_;
    const AuditKey* auditKey_;
    const Clock& clock_;
    LogOptions options_;
    std::unique_ptr<FileWitness> witnessFile_;  // from options_.witnessFile
    std::vector<HeadWitness*> witnesses_;
    std::vector<LostWitness> lostWitnesses_;
    MerkleTree tree_;
    std::optional<TreeHead> lastHead_;
    std::size_t headsRead_ = 0;
    std::chrono::system_clock::time_point lastHeadTime_;
    StoreTransaction* openTransaction_ = nullptr;
    std::vector<Hash> pending_;
    std::optional<Error> deferredError_;
};

}  // namespace sealtrain::audit
