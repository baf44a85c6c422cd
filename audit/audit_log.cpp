// AuditLog: entry sequencing and chaining, the tree, and the head-signing policy.
#include "sealtrain/audit/audit_log.h"

#include "sealtrain/audit/forward.h"

#include "sealtrain/base/logging.h"

namespace sealtrain::audit {
namespace {

constexpr std::uint64_t kLoadPage = 4096;

std::int64_t toSeconds(std::chrono::system_clock::time_point time)
{
    return std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
}

}  // namespace

AuditLog::AuditLog(AuditStore& store, const crypto::SigningKey& signingKey,
                   const AuditKey* auditKey, const Clock& clock, LogOptions options)
    : store_(store)
    , signingKey_(signingKey)
    , auditKey_(auditKey)
    , clock_(clock)
    , options_(std::move(options))
    , lastHeadTime_(clock.now())
{
    if (options_.witnessFile) {
        witnessFile_ = std::make_unique<FileWitness>(*options_.witnessFile);
        witnesses_.push_back(witnessFile_.get());
    }
    witnesses_.insert(witnesses_.end(), options_.witnesses.begin(), options_.witnesses.end());
}

NoteVerifier AuditLog::verifier() const
{
    return NoteVerifier{options_.origin, signingKey_.publicKey()};
}

Result<std::unique_ptr<AuditLog>> AuditLog::open(AuditStore& store,
                                                 const crypto::SigningKey& signingKey,
                                                 const AuditKey* auditKey, const Clock& clock,
                                                 LogOptions options)
{
    if (options.origin.empty() || options.origin.find_first_of(" +\n") != std::string::npos)
        return Error(ErrorCode::InvalidArgument,
                     "The audit log's origin must be a non-empty name without spaces or '+'.");
    std::unique_ptr<AuditLog> log(
        new AuditLog(store, signingKey, auditKey, clock, std::move(options)));
    SEALTRAIN_TRY(log->readNewEntries());
    SEALTRAIN_TRY(log->readNewHeads());
    SEALTRAIN_TRY(log->checkWitnesses());
    return log;
}

Result<void> AuditLog::readNewEntries()
{
    // The store may be shared (two control planes on one database): first make sure it still
    // ends, where this process last looked, with the leaf this process knows.
    Hash previous{};
    if (tree_.size() > 0) {
        previous = tree_.leaf(tree_.size() - 1);
        auto known = store_.readEntries(tree_.size() - 1, 1);
        if (!known)
            return known.error();
        if (known->empty() || known->front().leafHash != previous)
            return Error(ErrorCode::Integrity,
                         "Audit entry " + std::to_string(tree_.size() - 1)
                             + " changed in the store while this process had it open; restore "
                               "the database from a backup and verify it.");
    }
    auto count = store_.entryCount();
    if (!count)
        return count.error();
    for (std::uint64_t first = tree_.size(); first < *count; first += kLoadPage) {
        auto page = store_.readEntries(first, kLoadPage);
        if (!page)
            return page.error();
        for (const auto& stored : *page) {
            const std::string where = "Audit entry " + std::to_string(stored.sequence);
            auto entry = decodeEntry(stored.bytes);
            if (!entry)
                return entry.error().withContext(where);
            if (entry->sequence != tree_.size() || stored.sequence != entry->sequence
                || entry->previousLeafHash != previous || leafHash(stored.bytes) != stored.leafHash)
                return Error(ErrorCode::Integrity,
                             where
                                 + " in the store was altered, moved or removed; restore the "
                                   "database from a backup and verify it.");
            previous = stored.leafHash;
            tree_.append(stored.leafHash);
        }
    }
    return success();
}

Result<void> AuditLog::readNewHeads()
{
    auto heads = store_.readHeads();
    if (!heads)
        return heads.error();
    const NoteVerifier own = verifier();
    for (std::size_t i = headsRead_; i < heads->size(); ++i) {
        auto head = verifyTreeHead((*heads)[i], own);
        if (!head)
            return head.error().withContext("A stored audit tree head");
        auto root = tree_.rootAt(head->size);
        if (!root || *root != head->root)
            return Error(ErrorCode::Integrity,
                         "The stored audit log does not match its signed head at size "
                             + std::to_string(head->size)
                             + "; the database was altered or rolled back.");
        // A smaller head after a larger one would make every later export fail its
        // consistency check: no writer may store one (signHead re-reads under the lock).
        if (lastHead_ && head->size < lastHead_->size)
            return Error(ErrorCode::Integrity,
                         "A stored audit tree head of size " + std::to_string(head->size)
                             + " follows one of size " + std::to_string(lastHead_->size)
                             + "; the database was altered, restore it from a backup.");
        lastHead_ = *head;
        lastHeadTime_ =
            std::chrono::system_clock::time_point{std::chrono::seconds{head->timeSeconds}};
    }
    headsRead_ = heads->size();
    return success();
}

Result<void> AuditLog::checkWitnesses()
{
    const WitnessedLog log{tree_, headsRead_, verifier()};
    for (auto* witness : witnesses_) {
        auto checked = witness->check(log);
        if (checked)
            continue;
        if (!options_.acceptWitnessLoss)
            return checked.error();
        lostWitnesses_.push_back(LostWitness{witness, checked.error()});
    }
    return success();
}

Result<std::uint64_t> AuditLog::append(StoreTransaction& transaction, const EntryDraft& draft)
{
    if (openTransaction_ != nullptr && openTransaction_ != &transaction)
        return Error(ErrorCode::Internal,
                     "Another transaction is appending to the audit log; commit or roll it back "
                     "first.");
    // Another writer on the same store may have appended since: this transaction holds the
    // write lock now, so what it reads before its first entry is the newest committed log.
    if (pending_.empty())
        SEALTRAIN_TRY(readNewEntries());
    Entry entry;
    entry.sequence = tree_.size() + pending_.size();
    entry.timeNs = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(clock_.now().time_since_epoch())
            .count());
    if (!pending_.empty())
        entry.previousLeafHash = pending_.back();
    else if (tree_.size() > 0)
        entry.previousLeafHash = tree_.leaf(tree_.size() - 1);
    entry.actor = draft.actor;
    entry.action = draft.action;
    entry.target = draft.target;
    entry.outcome = draft.outcome;
    entry.reason = draft.reason;
    entry.requestId = draft.requestId;
    entry.approvalIds = draft.approvalIds;
    entry.details = draft.details;
    if (!draft.sensitive.empty()) {
        if (auditKey_ == nullptr)
            return Error(ErrorCode::InvalidArgument,
                         "The audit entry has sensitive values but the log has no audit key; "
                         "open the log with one.");
        entry.keyedHashKeyId = auditKey_->keyId();
        for (const auto& [name, value] : draft.sensitive)
            entry.details.push_back(auditKey_->keyedDetail(name, value));
    }
    auto bytes = encodeEntry(entry);
    if (!bytes)
        return bytes.error();
    StoredEntry stored{entry.sequence, std::move(*bytes), {}};
    stored.leafHash = leafHash(stored.bytes);
    SEALTRAIN_TRY(store_.appendEntry(transaction, stored));
    if (openTransaction_ == nullptr) {
        openTransaction_ = &transaction;
        transaction.onCommit([this] { committed(); });
        transaction.onRollback([this] { rolledBack(); });
    }
    pending_.push_back(stored.leafHash);
    return entry.sequence;
}

void AuditLog::committed()
{
    for (const auto& hash : pending_)
        tree_.append(hash);
    pending_.clear();
    openTransaction_ = nullptr;
    const std::uint64_t signedSize = lastHead_ ? lastHead_->size : 0;
    if (options_.policy.everyEntries != 0
        && tree_.size() - signedSize >= options_.policy.everyEntries) {
        auto head = signHead();
        if (!head) {
            log::warn("audit", "could not sign a tree head after a commit",
                      {{"error", head.error().message()}});
            deferredError_ = head.error();
        }
    }
    // After the head the commit may have signed, so that the forwarder sends both at once.
    if (options_.forwarder != nullptr)
        options_.forwarder->committed(tree_.size());
}

void AuditLog::rolledBack()
{
    pending_.clear();
    openTransaction_ = nullptr;
}

Result<TreeHead> AuditLog::signHead()
{
    if (openTransaction_ != nullptr)
        return Error(ErrorCode::Internal,
                     "A tree head was requested while a transaction appends to the audit log; "
                     "commit it first.");
    std::string note;
    auto locked = store_.underWriteLock([&]() -> Result<void> {
        // Under the lock, what other writers stored is final: take it all in, then sign.
        SEALTRAIN_TRY(readNewEntries());
        SEALTRAIN_TRY(readNewHeads());
        auto signedNote = signHeadHoldingTheLock();
        if (!signedNote)
            return signedNote.error();
        note = std::move(*signedNote);
        return success();
    });
    if (!locked)
        return locked.error();
    // Every witness is given the head, even after one failed: the first failure is reported.
    std::optional<Error> failed;
    for (auto* witness : witnesses_) {
        auto recorded = witness->record(note, headsRead_);
        if (!recorded && !failed)
            failed = recorded.error().withContext("Witness " + witness->location());
    }
    if (failed)
        return *failed;
    return *lastHead_;
}

Result<std::string> AuditLog::signHeadHoldingTheLock()
{
    const auto now = clock_.now();
    TreeHead head;
    head.origin = options_.origin;
    head.size = tree_.size();
    auto root = tree_.rootAt(head.size);
    if (!root)
        return root.error();
    head.root = *root;
    head.timeSeconds = toSeconds(now);
    if (lastHead_) {
        // The rule of c2sp.org/tlog-checkpoint: never sign a head smaller than, or inconsistent
        // with, the newest stored one (which readNewHeads has just read).
        auto earlier = tree_.rootAt(lastHead_->size);
        if (head.size < lastHead_->size || !earlier || *earlier != lastHead_->root)
            return Error(ErrorCode::Internal,
                         "The audit tree no longer contains its last signed head; refusing to "
                         "sign an inconsistent head.");
        head.timeSeconds = std::max(head.timeSeconds, lastHead_->timeSeconds);
    }
    std::string note = signTreeHead(head, signingKey_);
    SEALTRAIN_TRY(store_.appendHead(note));
    ++headsRead_;
    lastHead_ = head;
    lastHeadTime_ = now;
    return note;
}

Result<void> AuditLog::tick()
{
    if (deferredError_) {
        Error error = *deferredError_;
        deferredError_.reset();
        return error;
    }
    const auto now = clock_.now();
    const auto waited = now - lastHeadTime_;
    const std::uint64_t signedSize = lastHead_ ? lastHead_->size : 0;
    const bool entriesWait = tree_.size() > signedSize;
    const auto& policy = options_.policy;
    const bool due = (entriesWait && policy.every.count() != 0 && waited >= policy.every)
                     || (policy.heartbeat.count() != 0 && waited >= policy.heartbeat);
    if (due) {
        auto head = signHead();
        if (!head)
            return head.error();
    }
    return success();
}

std::string AuditLog::signSelection(const SelectionStatement& statement) const
{
    return signSelectionStatement(statement, signingKey_);
}

}  // namespace sealtrain::audit
