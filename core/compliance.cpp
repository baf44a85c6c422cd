// The compliance report: the caller checked, the live log verified, the evidence read, the facts
// recorded in the report's own entry, the controls judged, and the cited entries exported.
#include "sealtrain/core/compliance.h"

#include "audited_transaction.h"
#include "compliance_evidence.h"

#include "sealtrain/audit/bundle.h"
#include "sealtrain/core/audit_queries.h"
#include "sealtrain/core/permissions.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace sealtrain::core {
namespace {

using compliance_internal::Evidence;

constexpr std::uint64_t kReadPage = 4096;

Result<std::vector<audit::Entry>> readEntries(const audit::AuditStore& store, std::uint64_t first,
                                              std::uint64_t end)
{
    std::vector<audit::Entry> entries;
    for (std::uint64_t at = first; at < end; at += kReadPage) {
        auto page = store.readEntries(at, std::min(kReadPage, end - at));
        if (!page)
            return page.error();
        if (page->empty())
            break;
        auto decoded = decodeStoredEntries(*page);
        if (!decoded)
            return decoded.error();
        std::move(decoded->begin(), decoded->end(), std::back_inserter(entries));
    }
    return entries;
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
            audit::textDetail("log_verification", verificationText(e.verification))};
}

}  // namespace

Compliance::Compliance(AuditedTransactions& gate)
    : gate_(gate)
{
}

Result<ComplianceReport> Compliance::report(const std::string& session,
                                            const ComplianceFacts& facts)
{
    const AuditedRequest request{
        "compliance.report", permission::kAuditExport, {}, {"compliance", "report"}};
    const auto needsAuditRead = [&](const Caller& caller, audit::EntryDraft&) -> Result<void> {
        if (!gate_.holds(caller, permission::kAuditRead, ""))
            return denied("The compliance report needs audit.read as well as audit.export; ask "
                          "an admin for the auditor role.");
        return success();
    };
    // The caller first: nothing is read for a caller who may not see it.
    auto caller = gate_.admit(session, request, needsAuditRead);
    if (!caller)
        return caller.error();

    Evidence evidence;
    evidence.options = gate_.options();
    evidence.facts = facts;
    audit::AuditLog& log = gate_.log();
    evidence.verification = verifyLiveLog(log);
    SEALTRAIN_TRY(compliance_internal::readDatabaseFacts(gate_.database(), evidence));
    auto size = log.store().entryCount();
    if (!size)
        return size.error();
    auto entries = readEntries(log.store(), 0, *size);
    if (!entries)
        return entries.error();
    compliance_internal::indexEntries(*entries, evidence);
    entries->clear();

    // The facts the configured claims cite, recorded where the bundle carries them.
    const auto recordFacts = [&](const Caller& c, audit::EntryDraft& draft) -> Result<void> {
        SEALTRAIN_TRY(needsAuditRead(c, draft));
        draft.details = factDetails(evidence);
        draft.details.push_back(audit::textDetail("log_size", std::to_string(*size)));
        return success();
    };
    SEALTRAIN_TRY(gate_.perform(session, request, recordFacts));
    auto after = log.store().entryCount();
    if (!after)
        return after.error();
    auto appended = readEntries(log.store(), *size, *after);
    if (!appended)
        return appended.error();
    const auto own = std::find_if(appended->begin(), appended->end(), [&](const audit::Entry& e) {
        return e.action == request.action && e.actor.session == caller->sessionId;
    });
    if (own == appended->end())
        return Error(ErrorCode::Internal,
                     "The compliance report's own audit entry was not found; this is a bug.");
    evidence.reportEntry = own->sequence;

    ComplianceReport report;
    report.origin = log.origin();
    report.generatedAt = audit::formatUtcSeconds(gate_.now());
    report.auditor = caller->name;
    report.reportEntry = evidence.reportEntry;
    report.logSize = *size;
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
