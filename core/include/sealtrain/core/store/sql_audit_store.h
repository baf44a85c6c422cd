// audit/'s AuditStore over the control plane's database: an entry is a row written inside the
// caller's core::Transaction, so it commits or rolls back with the change it records.
#pragma once

#include "sealtrain/audit/store.h"
#include "sealtrain/core/store/database.h"

namespace sealtrain::core {

class SqlAuditStore final : public audit::AuditStore {
public:
    // `database` must outlive the store.
    explicit SqlAuditStore(Database& database)
        : database_(database)
    {
    }

    // `transaction` must be an open core::Transaction of this store's database.
    [[nodiscard]] Result<void> appendEntry(audit::StoreTransaction& transaction,
                                           const audit::StoredEntry& entry) override;
    // These read the rows other connections committed; inside a transaction they also see that
    // transaction's own (the log reads only before it appends).
    [[nodiscard]] Result<std::uint64_t> entryCount() const override;
    [[nodiscard]] Result<std::vector<audit::StoredEntry>>
    readEntries(std::uint64_t first, std::uint64_t count) const override;
    [[nodiscard]] Result<void> appendHead(const std::string& signedNote) override;
    [[nodiscard]] Result<std::vector<std::string>> readHeads() const override;
    [[nodiscard]] Result<std::string> readNewestHead() const override;
    // BEGIN IMMEDIATE … COMMIT around `body`; inside an open transaction, `body` joins it.
    [[nodiscard]] Result<void> underWriteLock(const std::function<Result<void>()>& body) override;

private:
    Database& database_;
};

}  // namespace sealtrain::core
