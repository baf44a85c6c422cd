// The compliance report (issue #31; docs/operations/compliance.md): HIPAA 45 CFR 164.312 (a)-(e)
// and SOC 2 CC6.1-CC8.1 mapped to live evidence read from the control plane's database and audit
// log. Each control gets a verdict from its claims: failed when a claim shows its rule broken,
// no-evidence when no observed claim cites an audit entry, passed otherwise. Every claim cites
// the entries that prove it by sequence number, and the report comes with a signed bundle of
// exactly those entries, which a reviewer verifies offline (`sealtrainctl audit verify`).
#pragma once

#include "sealtrain/audit/forward.h"
#include "sealtrain/base/result.h"
#include "sealtrain/crypto/keyring.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;

enum class ControlVerdict { Passed, Failed, NoEvidence };

// "passed", "failed", "no evidence".
[[nodiscard]] const char* controlVerdictName(ControlVerdict verdict) noexcept;

// Configured: what the running control plane is set to enforce, as the report's own entry
// records it; it never makes a control pass alone. Observed: what the audit log shows happened.
enum class ClaimKind { Configured, Observed };

struct ComplianceClaim {
    ClaimKind kind = ClaimKind::Observed;
    std::string text;
    std::vector<std::uint64_t> sequences;  // ascending; the entries that prove it
    bool broken = false;                   // the claim shows the control's rule broken
    std::uint64_t count = 0;  // the entries that show it (the population), of which the newest
                              // kMaxCitedPerClaim are cited
};

struct ControlResult {
    std::string framework;  // "HIPAA" or "SOC 2"
    std::string id;         // "164.312(a)(2)(i)", "CC8.1"
    std::string title;
    ControlVerdict verdict = ControlVerdict::NoEvidence;
    std::vector<ComplianceClaim> claims;
    std::vector<std::string> tests;  // the CTest tests that guard it
};

// The one rule of verdicts: failed when any claim is broken, no-evidence when no observed claim
// cites an entry, passed otherwise.
[[nodiscard]] ControlVerdict verdictOf(const std::vector<ComplianceClaim>& claims);

// The period a report judges (issue #49): observed claims count and cite only entries whose time
// lies in [from, to); an open end is unbounded. Facts of the present state (a user without an
// audited creation, a job past approval without one) are judged whatever the period.
struct CompliancePeriod {
    std::optional<std::int64_t> fromUnixSeconds;
    std::optional<std::int64_t> toUnixSeconds;

    [[nodiscard]] bool bounded() const noexcept { return fromUnixSeconds || toUnixSeconds; }
    [[nodiscard]] bool contains(std::uint64_t timeNs) const noexcept;
    // "from 2026-11-01T00:00:00Z to 2026-12-01T00:00:00Z"; "the whole log" when unbounded.
    [[nodiscard]] std::string describe() const;
};

// What the control plane's core can not see itself, handed over by the process that serves it.
struct ComplianceFacts {
    // The lowest TLS version the serving process's OpenSSL accepts ("TLSv1.3"); empty: unknown.
    std::string minimumTls;
    bool clientCertificatesVerified = false;  // chained to the platform CA, not revoked
    // Client certificates the serving process checked at the handshake since it started, and
    // those it refused as revoked.
    std::uint64_t certificatesVerified = 0;
    std::uint64_t certificatesRefused = 0;
    std::uint64_t revokedCertificates = 0;  // refused at the handshake now
    std::vector<crypto::KekInfo> keks;      // the keyring's KEK versions
    // The witnesses outside the data directory that the serving process checked the log against
    // when it opened it and gives every head (DataDirectory::witnessesOutside).
    std::vector<std::string> witnessesOutside;
    // How far the audit forward target had the log when the report was made; nullopt when
    // nothing is forwarded (DataDirectory::forwardHealth).
    std::optional<audit::ForwardHealth> forwarding;
};

struct ComplianceReport {
    std::string origin;             // the audit log's
    std::string generatedAt;        // RFC 3339 UTC
    std::string auditor;            // who asked
    std::uint64_t reportEntry = 0;  // the compliance.report entry that records the facts
    std::uint64_t logSize = 0;      // entries when the evidence was read
    CompliancePeriod period;        // what was judged
    std::uint64_t inPeriod = 0;     // entries whose time lies in the period
    std::vector<ControlResult> controls;
    std::vector<std::uint64_t> cited;  // every cited sequence, ascending
    std::string bundle;                // the signed export of exactly `cited`
};

// At most this many entries are cited per claim (the newest); the claim's text gives the count.
inline constexpr std::size_t kMaxCitedPerClaim = 25;
// At most this many break-glass uses are listed (the newest); an older one outside the policy
// still fails the control in a claim of its own.
inline constexpr std::size_t kMaxBreakGlassListed = 100;

class Compliance final {
public:
    // `gate` must outlive this object.
    explicit Compliance(AuditedTransactions& gate);

    // audit.read and audit.export: the controls evaluated over `period` and the bundle of their
    // evidence. The caller is checked first (a refusal audited as compliance.report, denied),
    // then the period (from before to); the log is verified, the evidence read a page at a time
    // (memory bounded by users, jobs and kMaxCitedPerClaim, not by the log), the facts recorded
    // in a compliance.report entry (cited by the configured claims), and the cited entries
    // exported under a head signed for it. It judges the log as it stood when it began: its
    // first logSize entries and the database's facts read at that moment. The long reads (the
    // verification, the index) call `betweenPages` after each page, where the API lets other
    // calls run (api/compliance_service.cpp); what they append is left to the next report, and
    // the caller is checked again when the report's own entry is written.
    [[nodiscard]] Result<ComplianceReport> report(const std::string& session,
                                                  const ComplianceFacts& facts,
                                                  const CompliancePeriod& period = {},
                                                  const std::function<void()>& betweenPages = {});

private:
    AuditedTransactions& gate_;
};

}  // namespace sealtrain::core
