// What the compliance report reads before it judges (compliance.h): the facts of the database's
// users and jobs, and the audit entries that bear on each control, gathered in one pass over the
// log. Not installed: compliance.cpp gathers, compliance_controls.cpp judges.
#pragma once

#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store_verify.h"
#include "sealtrain/core/compliance.h"
#include "sealtrain/core/control_plane_options.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::core {

class Database;

namespace compliance_internal {

struct UserFact {
    std::string name;
    bool disabled = false;
    bool hasTotp = false;
    bool inReset = false;                  // an enrolment or reset code is open: no sign-in works
    std::optional<std::uint64_t> created;  // the control.init or user.create entry
    std::optional<std::uint64_t> secondFactorIssued;  // the newest complete_reset / totp_confirm
};

struct JobFact {
    std::int64_t id = 0;
    std::string name;
    std::string state;
    std::string submitter;
    std::string approver;        // empty: none recorded
    std::string specSha256;      // the stored spec's SHA-256 (hex), computed by the report
    std::string approvedSha256;  // the sha256 detail of the approver's job.approve entry
    bool pastApproval = false;   // approved, queued, running, succeeded, or any attempt started
    std::optional<std::uint64_t> submitEntry;
    std::optional<std::uint64_t> approveEntry;  // an ok job.approve of this job by `approver`
    std::string approveEntryActor;
    std::optional<std::uint64_t> runEntry;  // the first ok job.dispatch or job.start
};

struct BreakGlassUse {
    std::uint64_t sequence = 0;
    std::string actor;
    std::string grantee;
    std::string reason;
    std::int64_t expiresInSeconds = -1;  // -1: not recorded
};

// The log's entries by what they show, each list ascending.
struct LogEvidence {
    std::vector<std::uint64_t> init;               // control.init ok
    std::vector<std::uint64_t> signInsOk;          // session.sign_in ok
    std::vector<std::uint64_t> signInsWithoutMfa;  // ok, but not password+totp
    std::vector<std::uint64_t> signInsDenied;      // session.sign_in denied
    std::vector<std::uint64_t> lockouts;           // denied while locked out
    std::vector<std::uint64_t> expiredSessions;    // refused: the session expired
    std::vector<std::uint64_t> denied;             // every denied entry
    std::vector<std::uint64_t> dutyRefusals;       // denied by separation of duties
    std::vector<std::uint64_t> userCreates;        // user.create ok
    std::vector<std::uint64_t> accessChanges;   // grant.*, role.create/delete, user.disable/enable
    std::vector<std::uint64_t> removals;        // user.disable, grant.revoke, session.revoke
    std::vector<std::uint64_t> workerRevokes;   // worker.revoke ok
    std::vector<std::uint64_t> revokedRefused;  // worker.connect denied
    std::vector<std::uint64_t> rotations;       // keyring.rotate ok
    std::vector<std::uint64_t> sealedImports;   // dataset.import ok
    std::vector<std::uint64_t> overMutualTls;   // entries that name a client certificate
    std::vector<std::uint64_t> approvals;       // <kind>.approve ok
    std::vector<BreakGlassUse> breakGlass;      // grant.break_glass ok
};

struct Evidence {
    ControlPlaneOptions options;
    ComplianceFacts facts;
    std::uint64_t reportEntry = 0;
    audit::StoreVerification verification;
    std::vector<UserFact> users;
    std::vector<JobFact> jobs;
    LogEvidence log;
};

// One pass over `entries` (decoded, ascending), filling `evidence.log` and the entries that
// users and jobs name. `evidence.users` and `evidence.jobs` must be read first.
void indexEntries(const std::vector<audit::Entry>& entries, Evidence& evidence);

// The users and jobs as the database holds them.
[[nodiscard]] Result<void> readDatabaseFacts(const Database& database, Evidence& evidence);

// Every control, judged from `evidence` (compliance_controls.cpp).
[[nodiscard]] std::vector<ControlResult> evaluateControls(const Evidence& evidence);

}  // namespace compliance_internal
}  // namespace sealtrain::core
