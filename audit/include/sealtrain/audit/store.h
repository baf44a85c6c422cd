// Where the audit log keeps its entries and signed heads. The control plane's SQLCipher store
// (issue #5) implements this over its database, so that an entry is written in the same
// transaction as the change it records; MemoryStore implements it for tests and tools.
#pragma once

#include "sealtrain/audit/merkle_hash.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace sealtrain::audit {

// The caller's open transaction. The log appends to it and learns how it ended: only entries of
// a committed transaction become part of the tree; a rolled back one leaves no trace.
class StoreTransaction {
public:
    virtual ~StoreTransaction() = default;
    // `action` runs once, after the transaction commits.
    virtual void onCommit(std::function<void()> action) = 0;
    // `action` runs once, after the transaction rolls back (or is abandoned).
    virtual void onRollback(std::function<void()> action) = 0;
};

struct StoredEntry {
    std::uint64_t sequence = 0;
    std::vector<std::uint8_t> bytes;  // the exact encoded entry that was hashed
    Hash leafHash{};
};

class AuditStore {
public:
    virtual ~AuditStore() = default;

    // Appends `entry` as part of `transaction`; sequence numbers arrive in order, without gaps.
    [[nodiscard]] virtual Result<void> appendEntry(StoreTransaction& transaction,
                                                   const StoredEntry& entry) = 0;
    // Committed entries (inside a transaction: also that transaction's own; the log reads only
    // before it appends). Several processes may share a store: these are re-read, never cached.
    [[nodiscard]] virtual Result<std::uint64_t> entryCount() const = 0;
    // Up to `count` committed entries from sequence number `first`, in order.
    [[nodiscard]] virtual Result<std::vector<StoredEntry>>
    readEntries(std::uint64_t first, std::uint64_t count) const = 0;
    // Signed heads are written on their own, outside any caller's transaction.
    [[nodiscard]] virtual Result<void> appendHead(const std::string& signedNote) = 0;
    // Every signed head, oldest first.
    [[nodiscard]] virtual Result<std::vector<std::string>> readHeads() const = 0;
    // The newest signed head; empty when none was signed yet. By default the last of readHeads;
    // a store that keeps many heads reads only that one.
    [[nodiscard]] virtual Result<std::string> readNewestHead() const
    {
        auto heads = readHeads();
        if (!heads)
            return heads.error();
        return heads->empty() ? std::string() : heads->back();
    }
    // Runs `body` holding the store's write lock (the database's exclusive transaction), so that
    // the entries and heads it reads stay the newest until it returns and a head it appends is
    // written with it: how a log that shares its store with another writer signs a head.
    [[nodiscard]] virtual Result<void>
    underWriteLock(const std::function<Result<void>()>& body) = 0;
};

}  // namespace sealtrain::audit
