// Audit queries: reading the audit log (audit.read) and exporting a signed bundle of it for a
// reviewer (audit.export). Both are audited themselves, before they return anything, so that the
// log shows who looked at it.
#pragma once

#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store_verify.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

// Stored entries decoded, in order.
[[nodiscard]] Result<std::vector<audit::Entry>>
decodeStoredEntries(const std::vector<audit::StoredEntry>& stored);

// The live log verified where it is kept: audit/store_verify.h over its store and its witness
// file (when it keeps one). Unaudited: the callers audit the look first. `betweenPages`: as
// verifyStore's.
[[nodiscard]] audit::StoreVerification
verifyLiveLog(const audit::AuditLog& log, const std::function<void()>& betweenPages = {});

// One page of the log as a browser asks for it (Audit.QueryEntries).
struct AuditQuery {
    audit::ExportFilter filter;
    // "", "ok", "denied" or "failed", as the caller wrote it: judged after the caller (issue
    // #54), a wrong one refused in the call's entry.
    std::string outcome;
    // Newest first: entries below this sequence number (0: from the newest). Oldest first:
    // entries from this sequence number on.
    std::uint64_t cursor = 0;
    std::uint32_t limit = 200;  // 1 to kMaxAuditPage
    bool oldestFirst = false;
};

inline constexpr std::uint32_t kMaxAuditPage = 1000;
// A page looks at no more entries than this, matching or not, so that a filter that matches
// nothing in a long log costs a bounded read per call; the next page goes on from there.
inline constexpr std::uint64_t kMaxAuditScan = 20'000;

struct AuditPage {
    std::vector<audit::Entry> entries;
    std::uint64_t nextCursor = 0;  // 0: nothing more in that direction
    std::uint64_t logSize = 0;
};

class AuditQueries final {
public:
    // `gate` must outlive this object.
    explicit AuditQueries(AuditedTransactions& gate);

    // Committed entries from `first` (audit.read); the read itself is audited.
    [[nodiscard]] Result<std::vector<audit::Entry>> read(const std::string& session,
                                                         std::uint64_t first, std::uint64_t count);

    // An export bundle (audit/bundle.h) of the entries `filter` selects, under a head signed for
    // it (audit.export); the export itself is audited first, so the bundle shows it.
    [[nodiscard]] Result<std::string> exportBundle(const std::string& session,
                                                   const audit::ExportFilter& filter);

    // One page of decoded entries `query` selects (audit.read), the look audited first.
    [[nodiscard]] Result<AuditPage> query(const std::string& session, const AuditQuery& query);

    // The live log verified where it is kept (audit.read; audited as audit.verify before it
    // runs): audit/store_verify.h over the store and the witness file.
    [[nodiscard]] Result<audit::StoreVerification> verifyLog(const std::string& session);

    // The newest signed head as stored, a signed note (docs/formats/audit.md) for a client to
    // check with the audit key it trusts (audit.read; audited as audit.head before it is read);
    // empty when none was signed yet. Cheap, unlike verifyLog: one row.
    [[nodiscard]] Result<std::string> newestHead(const std::string& session);

private:
    AuditedTransactions& gate_;
};

}  // namespace sealtrain::core
