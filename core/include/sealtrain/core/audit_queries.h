// Audit queries: reading the audit log (audit.read) and exporting a signed bundle of it for a
// reviewer (audit.export). Both are audited themselves, before they return anything, so that the
// log shows who looked at it.
#pragma once

#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

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

private:
    AuditedTransactions& gate_;
};

}  // namespace sealtrain::core
