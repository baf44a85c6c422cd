// Audit entries and heads as rows of the control plane's database.
#include "sealtrain/core/sql_audit_store.h"

#include <algorithm>
#include <limits>

namespace sealtrain::core {

Result<void> SqlAuditStore::appendEntry(audit::StoreTransaction& transaction,
                                        const audit::StoredEntry& entry)
{
    auto* ours = dynamic_cast<Transaction*>(&transaction);
    if (ours == nullptr || &ours->database() != &database_ || !ours->open())
        return Error(ErrorCode::Internal,
                     "The audit entry was appended outside an open transaction of its database.");
    if (entry.sequence > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return Error(ErrorCode::Internal, "The audit sequence number is out of range.");
    if (auto done =
            database_.run("INSERT INTO audit_entries (sequence, bytes, leaf_hash) VALUES (?, ?, ?)",
                          {static_cast<std::int64_t>(entry.sequence), SqlValue::blob(entry.bytes),
                           SqlValue::blob(entry.leafHash)});
        !done)
        return done.error().withContext("Cannot append the audit entry");
    return success();
}

Result<void> SqlAuditStore::requireNoTransaction() const
{
    if (database_.inTransaction())
        return Error(ErrorCode::Internal,
                     "The audit log was read inside an open transaction; commit it first.");
    return success();
}

Result<std::uint64_t> SqlAuditStore::entryCount() const
{
    SEALTRAIN_TRY(requireNoTransaction());
    auto count = database_.queryInteger("SELECT count(*) FROM audit_entries", {});
    if (!count)
        return count.error();
    return static_cast<std::uint64_t>(*count);
}

Result<std::vector<audit::StoredEntry>> SqlAuditStore::readEntries(std::uint64_t first,
                                                                   std::uint64_t count) const
{
    SEALTRAIN_TRY(requireNoTransaction());
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    std::vector<audit::StoredEntry> entries;
    bool malformed = false;
    SEALTRAIN_TRY(database_.query("SELECT sequence, bytes, leaf_hash FROM audit_entries "
                                  "WHERE sequence >= ? ORDER BY sequence LIMIT ?",
                                  {static_cast<std::int64_t>(std::min(first, kMax)),
                                   static_cast<std::int64_t>(std::min(count, kMax))},
                                  [&](const Statement& row) {
                                      audit::StoredEntry entry;
                                      entry.sequence = static_cast<std::uint64_t>(row.integer(0));
                                      entry.bytes = row.blob(1);
                                      const auto leaf = row.blob(2);
                                      if (leaf.size() != entry.leafHash.size()) {
                                          malformed = true;
                                          return;
                                      }
                                      std::copy(leaf.begin(), leaf.end(), entry.leafHash.begin());
                                      entries.push_back(std::move(entry));
                                  }));
    if (malformed)
        return Error(ErrorCode::Integrity,
                     "A stored audit entry has a malformed leaf hash; restore the database "
                     "from a backup.");
    return entries;
}

Result<void> SqlAuditStore::appendHead(const std::string& signedNote)
{
    // Heads are written on their own; when a caller's transaction is open (a head signed from a
    // commit hook runs after COMMIT, so this is only a misuse) the head joins it.
    const bool own = !database_.inTransaction();
    std::unique_ptr<Transaction> transaction;
    if (own) {
        auto begun = database_.begin();
        if (!begun)
            return begun.error();
        transaction = std::move(*begun);
    }
    SEALTRAIN_TRY(database_.run("INSERT INTO audit_heads (note) VALUES (?)", {signedNote}));
    if (own)
        SEALTRAIN_TRY(transaction->commit());
    return success();
}

Result<std::vector<std::string>> SqlAuditStore::readHeads() const
{
    SEALTRAIN_TRY(requireNoTransaction());
    std::vector<std::string> heads;
    SEALTRAIN_TRY(database_.query("SELECT note FROM audit_heads ORDER BY id", {},
                                  [&](const Statement& row) { heads.push_back(row.text(0)); }));
    return heads;
}

}  // namespace sealtrain::core
