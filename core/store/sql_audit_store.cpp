// Audit entries and heads as rows of the control plane's database.
#include "sealtrain/core/store/sql_audit_store.h"

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

Result<std::uint64_t> SqlAuditStore::entryCount() const
{
    // Sequence numbers are dense from 0 (the log checks it when it reads them), so the newest
    // one gives the count from the primary key's index, without a scan of the table.
    auto count =
        database_.queryInteger("SELECT coalesce(max(sequence) + 1, 0) FROM audit_entries", {});
    if (!count)
        return count.error();
    return static_cast<std::uint64_t>(*count);
}

Result<std::vector<audit::StoredEntry>> SqlAuditStore::readEntries(std::uint64_t first,
                                                                   std::uint64_t count) const
{
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
    return underWriteLock(
        [&] { return database_.run("INSERT INTO audit_heads (note) VALUES (?)", {signedNote}); });
}

Result<void> SqlAuditStore::underWriteLock(const std::function<Result<void>()>& body)
{
    // A head signed from a commit hook runs after COMMIT, so an open transaction here is the
    // log's own lock (signHead appending its head) or a misuse; either way `body` joins it.
    if (database_.inTransaction())
        return body();
    auto transaction = database_.begin();
    if (!transaction)
        return transaction.error();
    SEALTRAIN_TRY(body());
    return (*transaction)->commit();
}

Result<std::vector<std::string>> SqlAuditStore::readHeads() const
{
    std::vector<std::string> heads;
    SEALTRAIN_TRY(database_.query("SELECT note FROM audit_heads ORDER BY id", {},
                                  [&](const Statement& row) { heads.push_back(row.text(0)); }));
    return heads;
}

Result<std::string> SqlAuditStore::readNewestHead() const
{
    std::string head;
    SEALTRAIN_TRY(database_.queryOne("SELECT note FROM audit_heads ORDER BY id DESC LIMIT 1", {},
                                     [&](const Statement& row) { head = row.text(0); }));
    return head;
}

}  // namespace sealtrain::core
