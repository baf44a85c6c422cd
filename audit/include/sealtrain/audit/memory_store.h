// An AuditStore in memory, with explicit transactions: for tests, benchmarks and the demo log.
#pragma once

#include "sealtrain/audit/store.h"

#include <memory>

namespace sealtrain::audit {

class MemoryStore;

class MemoryTransaction final : public StoreTransaction {
public:
    ~MemoryTransaction() override;  // rolls back unless committed
    MemoryTransaction(const MemoryTransaction&) = delete;
    MemoryTransaction& operator=(const MemoryTransaction&) = delete;

    void onCommit(std::function<void()> action) override;
    void onRollback(std::function<void()> action) override;

    // Makes the staged entries part of the store, then runs the commit actions.
    void commit();
    void rollback();

private:
    friend class MemoryStore;
    explicit MemoryTransaction(MemoryStore& store)
        : store_(store)
    {
    }

    MemoryStore& store_;
    std::vector<StoredEntry> staged_;
    std::vector<std::function<void()>> commitActions_;
    std::vector<std::function<void()>> rollbackActions_;
    bool finished_ = false;
};

class MemoryStore final : public AuditStore {
public:
    [[nodiscard]] std::unique_ptr<MemoryTransaction> begin();

    [[nodiscard]] Result<void> appendEntry(StoreTransaction& transaction,
                                           const StoredEntry& entry) override;
    [[nodiscard]] Result<std::uint64_t> entryCount() const override;
    [[nodiscard]] Result<std::vector<StoredEntry>> readEntries(std::uint64_t first,
                                                               std::uint64_t count) const override;
    [[nodiscard]] Result<void> appendHead(const std::string& signedNote) override;
    [[nodiscard]] Result<std::vector<std::string>> readHeads() const override;
    // One process, one thread: nothing to lock.
    [[nodiscard]] Result<void> underWriteLock(const std::function<Result<void>()>& body) override;

    // For tamper tests: the stored entries, as an attacker with database access would see them.
    [[nodiscard]] std::vector<StoredEntry>& rawEntries() { return entries_; }

private:
    friend class MemoryTransaction;
    std::vector<StoredEntry> entries_;
    std::vector<std::string> heads_;
};

}  // namespace sealtrain::audit
