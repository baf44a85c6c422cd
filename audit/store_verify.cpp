// Whole-log verification of a store (store_verify.h).
#include "sealtrain/audit/store_verify.h"

#include "sealtrain/audit/bundle.h"

#include <map>

namespace sealtrain::audit {
namespace {

constexpr std::uint64_t kPage = 4096;

// A head of `what` ("Signed head", "Witness head") `index`, verified under `key`.
Result<TreeHead> checkedHead(const std::string& note, const NoteVerifier& key,
                             const std::string& what, std::size_t index)
{
    auto head = verifyTreeHead(note, key);
    if (!head)
        return head.error().withContext(what + " " + std::to_string(index + 1));
    if (head->origin != key.name)
        return Error(ErrorCode::Integrity, what + " " + std::to_string(index + 1)
                                               + " names another log; restore the database from "
                                                 "a backup and verify it.");
    return head;
}

}  // namespace

StoreVerification verifyStore(const AuditStore& store, const NoteVerifier& key,
                              const std::vector<std::string>& witnessHeads,
                              const std::function<void()>& betweenPages)
{
    StoreVerification out;
    // Every root the entries must produce, by tree size, and who claimed it.
    std::multimap<std::uint64_t, std::pair<Hash, std::string>> claims;
    auto notes = store.readHeads();
    if (!notes) {
        out.failure = notes.error();
        return out;
    }
    std::uint64_t previousSize = 0;
    for (std::size_t i = 0; i < notes->size(); ++i) {
        auto head = checkedHead((*notes)[i], key, "Signed head", i);
        if (!head) {
            out.failure = head.error();
            return out;
        }
        if (head->size < previousSize) {
            out.failure = Error(ErrorCode::Integrity,
                                "Signed head " + std::to_string(i + 1)
                                    + " is smaller than the one before it; restore the database "
                                      "from a backup and verify it.");
            return out;
        }
        previousSize = head->size;
        claims.emplace(head->size,
                       std::make_pair(head->root, "Signed head " + std::to_string(i + 1)));
        out.newestHead = *head;
        ++out.heads;
    }
    for (std::size_t i = 0; i < witnessHeads.size(); ++i) {
        auto head = checkedHead(witnessHeads[i], key, "Witness head", i);
        if (!head) {
            out.failure = head.error();
            return out;
        }
        claims.emplace(head->size,
                       std::make_pair(head->root, "Witness head " + std::to_string(i + 1)));
    }

    auto count = store.entryCount();
    if (!count) {
        out.failure = count.error();
        return out;
    }
    LogVerifier stream;
    // A claim on the empty tree (size 0) is checked before any entry.
    auto check = [&]() -> std::optional<Error> {
        const auto [first, last] = claims.equal_range(stream.size());
        for (auto claim = first; claim != last; ++claim)
            if (claim->second.first != stream.root())
                return Error(ErrorCode::Integrity,
                             claim->second.second + " does not match the log's first "
                                 + std::to_string(stream.size())
                                 + " entries: the store was altered; restore the database from "
                                   "a backup and verify it.");
        return std::nullopt;
    };
    if (auto bad = check()) {
        out.failure = bad;
        return out;
    }
    for (std::uint64_t first = 0; first < *count; first += kPage) {
        auto page = store.readEntries(first, kPage);
        if (!page) {
            out.failure = page.error();
            return out;
        }
        if (page->empty())
            break;
        for (const StoredEntry& stored : *page) {
            auto leaf = stream.add(stored.bytes);
            if (!leaf || stored.sequence + 1 != stream.size() || *leaf != stored.leafHash) {
                out.failure = leaf ? Error(ErrorCode::Integrity,
                                           "Audit entry " + std::to_string(stored.sequence)
                                               + " in the store does not match its recorded "
                                                 "hash; restore the database from a backup and "
                                                 "verify it.")
                                   : leaf.error();
                return out;
            }
            ++out.entries;
            if (auto bad = check()) {
                out.failure = bad;
                return out;
            }
        }
        if (betweenPages)
            betweenPages();
    }
    for (const auto& [size, claim] : claims) {
        if (size > out.entries) {
            out.failure = Error(ErrorCode::Integrity,
                                claim.second + " covers " + std::to_string(size)
                                    + " entries but the store holds " + std::to_string(out.entries)
                                    + ": entries were removed; restore the database from a backup "
                                      "and verify it.");
            return out;
        }
    }
    out.witnessHeads = witnessHeads.size();
    return out;
}

}  // namespace sealtrain::audit
