// MemoryStore: committed entries in a vector; a transaction stages its entries until commit().
#include "sealtrain/audit/memory_store.h"

namespace sealtrain::audit {

MemoryTransaction::~MemoryTransaction()
{
    if (!finished_)
        rollback();
}

void MemoryTransaction::onCommit(std::function<void()> action)
{
    commitActions_.push_back(std::move(action));
}

void MemoryTransaction::onRollback(std::function<void()> action)
{
    rollbackActions_.push_back(std::move(action));
}

void MemoryTransaction::commit()
{
    if (finished_)
        return;
    finished_ = true;
    for (auto& entry : staged_)
        store_.entries_.push_back(std::move(entry));
    staged_.clear();
    for (auto& action : commitActions_)
        action();
}

void MemoryTransaction::rollback()
{
    if (finished_)
        return;
    finished_ = true;
    staged_.clear();
    for (auto& action : rollbackActions_)
        action();
}

std::unique_ptr<MemoryTransaction> MemoryStore::begin()
{
    return std::unique_ptr<MemoryTransaction>(new MemoryTransaction(*this));
}

Result<void> MemoryStore::appendEntry(StoreTransaction& transaction, const StoredEntry& entry)
{
    auto* memory = dynamic_cast<MemoryTransaction*>(&transaction);
    if (memory == nullptr || &memory->store_ != this || memory->finished_)
        return Error(ErrorCode::Internal,
                     "The audit entry was appended outside an open transaction of its store.");
    const std::uint64_t expected = entries_.size() + memory->staged_.size();
    if (entry.sequence != expected)
        return Error(ErrorCode::Internal, "The audit entry's sequence number is out of order.");
    memory->staged_.push_back(entry);
    return success();
}

Result<std::uint64_t> MemoryStore::entryCount() const
{
    return static_cast<std::uint64_t>(entries_.size());
}

Result<std::vector<StoredEntry>> MemoryStore::readEntries(std::uint64_t first,
                                                          std::uint64_t count) const
{
    std::vector<StoredEntry> out;
    for (std::uint64_t i = first; i < entries_.size() && i - first < count; ++i)
        out.push_back(entries_[i]);
    return out;
}

Result<void> MemoryStore::appendHead(const std::string& signedNote)
{
    heads_.push_back(signedNote);
    return success();
}

Result<std::vector<std::string>> MemoryStore::readHeads() const
{
    return heads_;
}

Result<void> MemoryStore::underWriteLock(const std::function<Result<void>()>& body)
{
    return body();
}

}  // namespace sealtrain::audit
