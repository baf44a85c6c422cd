// AuditLog: entry sequencing and chaining, the tree, and the head-signing policy.
#include "sealtrain/audit/audit_log.h"

#include "sealtrain/audit/witness.h"
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

    auto count = store.entryCount();
    if (!count)
        return count.error();
    Hash previous{};
    for (std::uint64_t first = 0; first < *count; first += kLoadPage) {
        auto page = store.readEntries(first, kLoadPage);
        if (!page)
            return page.error();
        for (const auto& stored : *page) {
            const std::string where = "Audit entry " + std::to_string(stored.sequence);
            auto entry = decodeEntry(stored.bytes);
            if (!entry)
                return entry.error().withContext(where);
            if (entry->sequence != log->tree_.size() || stored.sequence != entry->sequence
                || entry->previousLeafHash != previous || leafHash(stored.bytes) != stored.leafHash)
                return Error(ErrorCode::Integrity,
                             where
                                 + " in the store was altered, moved or removed; restore the "
                                   "database from a backup and verify it.");
            previous = stored.leafHash;
            log->tree_.append(stored.leafHash);
        }
    }

    auto heads = store.readHeads();
    if (!heads)
        return heads.error();
    const NoteVerifier own = log->verifier();
    for (const auto& note : *heads) {
        auto head = verifyTreeHead(note, own);
        if (!head)
            return head.error().withContext("A stored audit tree head");
        auto root = log->tree_.rootAt(head->size);
        if (!root || *root != head->root)
            return Error(ErrorCode::Integrity,
                         "The stored audit log does not match its signed head at size "
                             + std::to_string(head->size)
                             + "; the database was altered or rolled back.");
        log->lastHead_ = *head;
        log->lastHeadTime_ =
            std::chrono::system_clock::time_point{std::chrono::seconds{head->timeSeconds}};
    }
    return log;
}

Result<std::uint64_t> AuditLog::append(StoreTransaction& transaction, const EntryDraft& draft)
{
    if (openTransaction_ != nullptr && openTransaction_ != &transaction)
        return Error(ErrorCode::Internal,
                     "Another transaction is appending to the audit log; commit or roll it back "
                     "first.");
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
}

void AuditLog::rolledBack()
{
    pending_.clear();
    openTransaction_ = nullptr;
}

Result<TreeHead> AuditLog::signHead()
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
        // The rule of c2sp.org/tlog-checkpoint: never sign a head inconsistent with an earlier
        // one. Our tree only grows, so this fails only if memory was corrupted.
        auto earlier = tree_.rootAt(lastHead_->size);
        if (head.size < lastHead_->size || !earlier || *earlier != lastHead_->root)
            return Error(ErrorCode::Internal,
                         "The audit tree no longer contains its last signed head; refusing to "
                         "sign an inconsistent head.");
        head.timeSeconds = std::max(head.timeSeconds, lastHead_->timeSeconds);
    }
    const std::string note = signTreeHead(head, signingKey_);
    SEALTRAIN_TRY(store_.appendHead(note));
    if (options_.witnessFile)
        SEALTRAIN_TRY(appendWitness(*options_.witnessFile, note));
    lastHead_ = head;
    lastHeadTime_ = now;
    return head;
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
