// Submissions and approvals: separation of duties for anything that needs a second person (a job
// spec, a model promotion). Whoever submitted may not approve, and an approval counts only for
// the exact content (its SHA-256) that was approved, so an edit voids it. The job state machine
// builds on it. Every call goes through the audited transaction.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/hash.h"

#include <cstdint>
#include <string>

namespace sealtrain::core {

class AuditedTransactions;
class Database;

class Submissions final {
public:
    // `gate` must outlive this object.
    explicit Submissions(AuditedTransactions& gate);

    // job.submit in `project`; returns the submission's number.
    [[nodiscard]] Result<std::int64_t> submit(const std::string& session, const std::string& kind,
                                              const std::string& name, const std::string& project,
                                              const crypto::Sha256Digest& contentHash);
    // Only the submitter may edit; the new hash voids every earlier approval.
    [[nodiscard]] Result<void> edit(const std::string& session, std::int64_t id,
                                    const crypto::Sha256Digest& contentHash);
    // job.approve in the submission's project, by someone other than the submitter, for the
    // submission's current content.
    [[nodiscard]] Result<void> approve(const std::string& session, std::int64_t id,
                                       const crypto::Sha256Digest& contentHash);
    // True when someone other than the submitter approved the current content.
    [[nodiscard]] Result<bool> isApproved(const std::string& session, std::int64_t id);

private:
    AuditedTransactions& gate_;
    Database& database_;
};

}  // namespace sealtrain::core
