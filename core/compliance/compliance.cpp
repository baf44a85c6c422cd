// The compliance report: the caller checked, the live log verified, the evidence read, the facts
// recorded in the report's own entry, the controls judged, and the cited entries exported.
#include "sealtrain/core/compliance/compliance.h"

#include "compliance/evidence.h"
#include "store/audited_transaction.h"

#include "sealtrain/audit/bundle.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/audit/queries.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

namespace sealtrain::core {
namespace {

using compliance_internal::Evidence;

constexpr std::uint64_t kReadPage = 4096;

// Calls `use` with each page of decoded entries in [first, end).
Result<void> forEachPage(const audit::AuditStore& store, std::uint64_t first, std::uint64_t end,
                         const std::function<void(const std::vector<audit::Entry>&)>& use,
                         const std::function<void()>& betweenPages = {})
{
    for (std::uint64_t at = first; at < end; at += kReadPage) {
        auto page = store.readEntries(at, std::min(kReadPage, end - at));
        if (!page)
            return page.error();
        if (page->empty())
            break;
        auto decoded = decodeStoredEntries(*page);
        if (!decoded)
            return decoded.error();
        use(*decoded);
        if (betweenPages)
            betweenPages();
    }
    return success();
}

std::string verificationText(const audit::StoreVerification& v)
{
    if (!v.ok())
        return "failed: " + v.failure->message();
    return fmt::format("verified: {} entries, {} heads, {} witness heads", v.entries, v.heads,
                       v.witnessHeads);
}

// The facts the configured claims rest on, as the report's entry records them.
std::vector<audit::Detail> factDetails(const Evidence& e)
{
    const ControlPlaneOptions& o = e.options;
    std::string keks;
    for (const crypto::KekInfo& kek : e.facts.keks)
        keks += fmt::format("{}{} v{} {} {}", keks.empty() ? "" : "; ", kek.id, kek.version,
                            crypto::kekStateName(kek.state), kek.created);
    std::string witnesses;
    for (const std::string& witness : e.facts.witnessesOutside)
        witnesses += (witnesses.empty() ? "" : "; ") + witness;
    return {audit::textDetail("tls_minimum",
                              e.facts.minimumTls.empty() ? "unknown" : e.facts.minimumTls),
            audit::textDetail("client_certificates",
                              e.facts.clientCertificatesVerified ? "verified" : "not verified"),
            audit::textDetail("revoked_certificates", std::to_string(e.facts.revokedCertificates)),
            audit::textDetail("session_idle_s", std::to_string(o.sessionIdle.count())),
            audit::textDetail("session_max_s", std::to_string(o.sessionMax.count())),
            audit::textDetail("max_failed_sign_ins", std::to_string(o.maxFailedSignIns)),
            audit::textDetail("lockout_s", std::to_string(o.lockout.count())),
            audit::textDetail("max_lockout_s", std::to_string(o.maxLockout.count())),
            audit::textDetail("max_break_glass_s", std::to_string(o.maxBreakGlass.count())),
            audit::textDetail("keks", keks.empty() ? "none" : keks),
            audit::textDetail("witnesses_outside", witnesses.empty() ? "none" : witnesses),
            audit::textDetail("audit_forwarding",
                              e.facts.forwarding ? fmt::format(
                                  "{}: {} of {} delivered, head {}{}", e.facts.forwarding->target,
                                  e.facts.forwarding->delivered, e.facts.forwarding->logSize,
                                  e.facts.forwarding->headSize,
                                  e.facts.forwarding->lastError.empty() ? "" : ", refusing")
                                                 : std::string("none")),
            audit::textDetail("log_verification", verificationText(e.verification))};
}

constexpr std::int64_t kNsPerSecond = 1'000'000'000;

}  // namespace

bool CompliancePeriod::contains(std::uint64_t timeNs) const noexcept
{
    const auto seconds = static_cast<std::int64_t>(timeNs / kNsPerSecond);
    return (!fromUnixSeconds || seconds >= *fromUnixSeconds)
           && (!toUnixSeconds || seconds < *toUnixSeconds);
}

std::string CompliancePeriod::describe() const
{
    if (!bounded())
        return "the whole log";
    if (!toUnixSeconds)
        return "from " + audit::formatUtcSeconds(*fromUnixSeconds);
    if (!fromUnixSeconds)
        return "until " + audit::formatUtcSeconds(*toUnixSeconds);
    return "from " + audit::formatUtcSeconds(*fromUnixSeconds) + " to "
           + audit::formatUtcSeconds(*toUnixSeconds);
}

Compliance::Compliance(AuditedTransactions& gate)
    : gate_(gate)
{
}

Result<ComplianceReport> Compliance::report(const std::string& session,
                                            const ComplianceFacts& facts,
                                            const CompliancePeriod& period,
                                            const std::function<void()>& betweenPages)
{
    const AuditedRequest request{
        "compliance.report", permission::kAuditExport, {}, {"compliance", "report"}};
    const auto needsAuditRead = [&](const Caller& caller, audit::EntryDraft&) -> Result<void> {
        if (!gate_.holds(caller, permission::kAuditRead, ""))
            return denied("The compliance report needs audit.read as well as audit.export; ask "
                          "an admin for the auditor role.");
        // The period is read only once the caller may see what it selects.
        if (period.fromUnixSeconds && period.toUnixSeconds
            && *period.fromUnixSeconds >= *period.toUnixSeconds)
            return Error(ErrorCode::InvalidArgument,
                         "The report's period ends before it begins; give a --from before "
                         "the --to.");
        return success();
    };
    // The caller first: nothing is read for a caller who may not see it.
    auto caller = gate_.admit(session, request, needsAuditRead);
    if (!caller)
        return caller.error();

    Evidence evidence;
    evidence.options = gate_.options();
    evidence.facts = facts;
    evidence.period = period;
    audit::AuditLog& log = gate_.log();
    // The database's facts and the log's size at one moment, before the first pause: what the
    // report judges (the verification below covers at least these entries).
    SEALTRAIN_TRY(compliance_internal::readDatabaseFacts(gate_.database(), evidence));
    auto size = log.store().entryCount();
    if (!size)
        return size.error();
    evidence.verification = verifyLiveLog(log, betweenPages);
    // A page at a time: what the index keeps does not grow with the log (compliance/evidence.h).
    compliance_internal::EvidenceIndex index(evidence);
    SEALTRAIN_TRY(forEachPage(
        log.store(), 0, *size, [&](const std::vector<audit::Entry>& page) { index.add(page); },
        betweenPages));

    // The facts the configured claims cite, recorded where the bundle carries them.
    const auto recordFacts = [&](const Caller& c, audit::EntryDraft& draft) -> Result<void> {
        SEALTRAIN_TRY(needsAuditRead(c, draft));
        draft.details = factDetails(evidence);
        draft.details.push_back(audit::textDetail("log_size", std::to_string(*size)));
        draft.details.push_back(audit::textDetail("period", period.describe()));
        return success();
    };
    SEALTRAIN_TRY(gate_.perform(session, request, recordFacts));
    auto after = log.store().entryCount();
    if (!after)
        return after.error();
    std::optional<std::uint64_t> own;
    SEALTRAIN_TRY(forEachPage(log.store(), *size, *after, [&](const auto& page) {
        for (const audit::Entry& e : page)
            if (!own && e.action == request.action && e.actor.session == caller->sessionId)
                own = e.sequence;
    }));
    if (!own)
        return Error(ErrorCode::Internal,
                     "The compliance report's own audit entry was not found; this is a bug.");
    evidence.reportEntry = *own;

    ComplianceReport report;
    report.origin = log.origin();
    report.generatedAt = audit::formatUtcSeconds(gate_.now());
    report.auditor = caller->name;
    report.reportEntry = evidence.reportEntry;
    report.logSize = *size;
    report.period = period;
    report.inPeriod = evidence.log.entries;
    report.controls = compliance_internal::evaluateControls(evidence);
    for (const ControlResult& control : report.controls)
        for (const ComplianceClaim& claim : control.claims)
            report.cited.insert(report.cited.end(), claim.sequences.begin(), claim.sequences.end());
    std::sort(report.cited.begin(), report.cited.end());
    report.cited.erase(std::unique(report.cited.begin(), report.cited.end()), report.cited.end());

    audit::ExportFilter filter;
    filter.sequences = report.cited;
    auto bundle = audit::exportBundle(log, filter);
    if (!bundle)
        return bundle.error();
    report.bundle = std::move(*bundle);
    return report;
}

}  // namespace sealtrain::core
