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
    auto statement = database_.prepare(
        "INSERT INTO audit_entries (sequence, bytes, leaf_hash) VALUES (?, ?, ?)");
    if (!statement)
        return statement.error();
    statement->bind(1, static_cast<std::int64_t>(entry.sequence))
        .bindBlob(2, entry.bytes)
        .bindBlob(3, entry.leafHash);
    if (auto done = statement->run(); !done)
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
    auto statement = database_.prepare("SELECT count(*) FROM audit_entries");
    if (!statement)
        return statement.error();
    auto row = statement->step();
    if (!row)
        return row.error();
    return static_cast<std::uint64_t>(statement->integer(0));
}

Result<std::vector<audit::StoredEntry>> SqlAuditStore::readEntries(std::uint64_t first,
                                                                   std::uint64_t count) const
{
    SEALTRAIN_TRY(requireNoTransaction());
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    auto statement = database_.prepare("SELECT sequence, bytes, leaf_hash FROM audit_entries "
                                       "WHERE sequence >= ? ORDER BY sequence LIMIT ?");
    if (!statement)
        return statement.error();
    statement->bind(1, static_cast<std::int64_t>(std::min(first, kMax)))
        .bind(2, static_cast<std::int64_t>(std::min(count, kMax)));
    std::vector<audit::StoredEntry> entries;
    for (;;) {
        auto row = statement->step();
        if (!row)
            return row.error();
        if (!*row)
            break;
        audit::StoredEntry entry;
        entry.sequence = static_cast<std::uint64_t>(statement->integer(0));
        entry.bytes = statement->blob(1);
        const auto leaf = statement->blob(2);
        if (leaf.size() != entry.leafHash.size())
            return Error(ErrorCode::Integrity,
                         "A stored audit entry has a malformed leaf hash; restore the database "
                         "from a backup.");
        std::copy(leaf.begin(), leaf.end(), entry.leafHash.begin());
        entries.push_back(std::move(entry));
    }
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
    auto statement = database_.prepare("INSERT INTO audit_heads (note) VALUES (?)");
    if (!statement)
        return statement.error();
    statement->bind(1, signedNote);
    SEALTRAIN_TRY(statement->run());
    if (own)
        SEALTRAIN_TRY(transaction->commit());
    return success();
}

Result<std::vector<std::string>> SqlAuditStore::readHeads() const
{
    SEALTRAIN_TRY(requireNoTransaction());
    auto statement = database_.prepare("SELECT note FROM audit_heads ORDER BY id");
    if (!statement)
        return statement.error();
    std::vector<std::string> heads;
    for (;;) {
        auto row = statement->step();
        if (!row)
            return row.error();
        if (!*row)
            break;
        heads.push_back(statement->text(0));
    }
    return heads;
}

}  // namespace sealtrain::core
