// What the compliance report reads before it judges (compliance.h): the facts of the database's
// users and jobs, and the audit entries that bear on each control, gathered in one pass over the
// log a page at a time: each kind of entry is a count and its newest sequences, so the memory it
// takes does not grow with the log. Not installed: compliance.cpp gathers,
// compliance/controls.cpp judges.
#pragma once

#include "sealtrain/audit/entry.h"
#include "sealtrain/audit/store_verify.h"
#include "sealtrain/core/compliance/compliance.h"
#include "sealtrain/core/control_plane_options.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::core {

class Database;

namespace compliance_internal {

// How many entries show a thing in the period, and the newest kMaxCitedPerClaim of them.
struct Tally {
    std::uint64_t count = 0;
    std::vector<std::uint64_t> newest;  // ascending, at most kMaxCitedPerClaim

    void add(std::uint64_t sequence);
    [[nodiscard]] bool empty() const noexcept { return count == 0; }
};

struct UserFact {
    std::string name;
    bool disabled = false;
    bool hasTotp = false;
    bool inReset = false;                  // an enrolment or reset code is open: no sign-in works
    std::optional<std::uint64_t> created;  // the control.init or user.create entry
    std::optional<std::uint64_t> secondFactorIssued;  // the newest complete_reset / totp_confirm
    bool createdInPeriod = false;
    bool secondFactorInPeriod = false;
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
    bool activeInPeriod = false;            // one of those entries lies in the period
};

struct BreakGlassUse {
    std::uint64_t sequence = 0;
    std::string actor;
    std::string grantee;
    std::string reason;
    std::int64_t expiresInSeconds = -1;  // -1: not recorded
};

// No reason, or longer than the policy's longest break-glass grant.
[[nodiscard]] bool outsidePolicy(const BreakGlassUse& use, const ControlPlaneOptions& options);

// The period's entries by what they show.
struct LogEvidence {
    Tally init;                             // control.init ok
    Tally signInsOk;                        // session.sign_in ok
    Tally signInsWithoutMfa;                // ok, but not password+totp
    Tally signInsDenied;                    // session.sign_in denied
    Tally lockouts;                         // denied while locked out
    Tally expiredSessions;                  // refused: the session expired
    Tally denied;                           // every denied entry
    Tally dutyRefusals;                     // denied by separation of duties
    Tally userCreates;                      // user.create ok
    Tally accessChanges;                    // grant.*, role.create/delete, user.disable/enable
    Tally removals;                         // user.disable, grant.revoke, session.revoke
    Tally workerRevokes;                    // worker.revoke ok
    Tally revokedRefused;                   // worker.connect denied
    Tally rotations;                        // keyring.rotate ok
    Tally sealedImports;                    // dataset.import ok
    Tally overMutualTls;                    // entries that name a client certificate
    Tally approvals;                        // <kind>.approve ok
    std::vector<BreakGlassUse> breakGlass;  // grant.break_glass ok, the newest kMaxBreakGlassListed
    std::uint64_t breakGlassCount = 0;
    Tally breakGlassOutsidePolicy;  // without a reason, or longer than the policy allows
    Tally starts;                   // platform.start ok (the control plane's own)
    Tally upgrades;                 // platform.upgrade ok
    Tally migrations;               // platform.migrate ok
    Tally witnessAttaches;          // audit.witness_attach ok (the control plane's own)
    Tally witnessResets;            // audit.witness_reset ok: a witness's loss accepted
    Tally witnessDetaches;          // audit.witness_detach ok: one no longer kept (issue #49)
    // The schema versions each audited platform.migrate went from (exclusive) and to, whenever
    // it was: one pair per open that migrated.
    std::vector<std::pair<std::int64_t, std::int64_t>> auditedMigrations;

    // Whether an audited migration brought the database to `version`.
    [[nodiscard]] bool migrationAudited(std::int64_t version) const;
    std::uint64_t entries = 0;  // entries in the period
};

// The first schema version whose migration the control plane audits (platform.migrate, issue
// #49): the ones before it were applied before migrations were audited, and are not judged.
inline constexpr int kFirstAuditedMigration = 17;

// A row of schema_version: a migration the database holds and when it was applied.
struct SchemaMigrationFact {
    int version = 0;
    std::int64_t appliedUnix = 0;
};

// A promotion or export decided by someone (model_promotions, model_exports).
struct DecisionFact {
    std::string what;  // "Promotion 3 (gpt@2 to prod)", "Export 2 (gpt@2)"
    std::string requester;
    std::string decider;
};

struct Evidence {
    ControlPlaneOptions options;
    ComplianceFacts facts;
    CompliancePeriod period;
    std::uint64_t reportEntry = 0;
    audit::StoreVerification verification;
    std::vector<UserFact> users;
    std::vector<std::string> admins;  // enabled, global, for good (Access::adminNames)
    std::vector<JobFact> jobs;
    std::vector<SchemaMigrationFact> schema;
    std::vector<DecisionFact> approvedDecisions;  // approved promotions and exports
    LogEvidence log;
};

// One pass over the log, a page of decoded entries at a time (ascending), filling
// `evidence.log` and the entries that users and jobs name. `evidence.users` and `evidence.jobs`
// must be read first and outlive it; so must `evidence`.
class EvidenceIndex final {
public:
    explicit EvidenceIndex(Evidence& evidence);
    void add(const std::vector<audit::Entry>& entries);

private:
    void addEntry(const audit::Entry& entry);
    void addPlatformEntry(const audit::Entry& entry, bool inPeriod);
    void addJobEntry(const audit::Entry& entry, JobFact& job, bool inPeriod);

    Evidence& evidence_;
    std::map<std::string, UserFact*, std::less<>> users_;
    std::map<std::string, JobFact*, std::less<>> jobs_;
};

// The users and jobs as the database holds them.
[[nodiscard]] Result<void> readDatabaseFacts(const Database& database, Evidence& evidence);

// Every control, judged from `evidence` (compliance/controls.cpp).
[[nodiscard]] std::vector<ControlResult> evaluateControls(const Evidence& evidence);

}  // namespace compliance_internal
}  // namespace sealtrain::core
