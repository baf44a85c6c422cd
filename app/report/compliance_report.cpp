// The compliance report's PDF (HTML laid out by QTextDocument, printed by printHtmlToPdf) and
// its JSON for programs.
#include "compliance_report.h"

#include "audit_report.h"
#include "report_html.h"

#include "sealtrain/audit/bundle.h"
#include "sealtrain/audit/tree_head.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <QString>

#include <algorithm>
#include <cctype>
#include <map>

namespace sealtrain::report {
namespace {

using html::escaped;
using html::row;

QString sequencesText(const std::vector<std::uint64_t>& sequences)
{
    if (sequences.empty())
        return "none";
    QString out;
    for (const std::uint64_t sequence : sequences)
        out += (out.isEmpty() ? "" : ", ") + QString::number(sequence);
    return out;
}

// Green only for passed: failed and no evidence are red.
QString verdictCell(const std::string& verdict)
{
    const QString colour = verdict == "passed" ? "#1a7f37" : "#cf222e";
    return "<b><span style='color: " + colour + "'>" + escaped(verdictHeading(verdict))
           + "</span></b>";
}

QString controlSection(const api::ComplianceControlView& control)
{
    QString html = "<h3>" + escaped(control.framework) + " " + escaped(control.id) + " "
                   + escaped(control.title) + ": " + verdictCell(control.verdict) + "</h3><ul>";
    for (const auto& claim : control.claims) {
        QString text = "[" + escaped(claim.kind) + "] " + escaped(claim.text)
                       + " (entries: " + sequencesText(claim.sequences) + ")";
        if (claim.broken)
            text = "<span style='color: #cf222e'><b>RULE BROKEN:</b> " + text + "</span>";
        html += "<li>" + text + "</li>";
    }
    html += "</ul><p>Cited entries: " + sequencesText(citedBy(control)) + "<br>Guarded by: ";
    QString tests;
    for (const auto& test : control.tests)
        tests += (tests.isEmpty() ? "" : ", ") + escaped(test);
    return html + tests + "</p>";
}

QString reportHtml(const api::ComplianceReportView& report, const ComplianceSource& source)
{
    QString html = "<html><body style='font-family: DejaVu Sans; font-size: 9pt'>";
    html += "<h1>Sealtrain compliance report</h1>";
    html += "<p>HIPAA 45 CFR 164.312 (a)-(e) and SOC 2 CC6.1, CC6.2, CC6.3, CC6.6, CC6.7, CC7.2 "
            "and CC8.1, judged by the control plane from its live database and audit log. A "
            "control passes only when an observed claim cites audit entries and no claim shows "
            "its rule broken; without such evidence it reads NO EVIDENCE. Configured claims cite "
            "the report's own entry, which records the settings the control plane enforces.</p>";
    html += "<table cellpadding=3>";
    html += row("Log", escaped(report.origin));
    html += row("Generated", escaped(report.generatedAt) + " for " + escaped(report.auditor));
    html +=
        row("Period", escaped(report.period.empty() ? std::string("the whole log") : report.period)
                          + " (" + QString::number(report.inPeriod)
                          + " entries; observed claims count and cite only these)");
    html += row("Report entry", QString::number(report.reportEntry));
    html += row("Entries read", QString::number(report.logSize));
    html += row("Evidence bundle", escaped(source.bundleName) + " ("
                                       + QString::number(report.cited.size()) + " entries)");
    html += row("Bundle SHA-256", escaped(source.bundleSha256));
    html += row("Bundle key", escaped(source.bundleKeyId));
    html += row("Bundle checked here", escaped(source.bundleVerdict));
    html += "</table>";

    html += "<h2>Controls</h2>";
    html += "<table border=1 cellspacing=0 cellpadding=3 width='100%'>"
            "<tr><th>framework</th><th>control</th><th>title</th><th>verdict</th>"
            "<th>cited entries</th></tr>";
    for (const auto& control : report.controls)
        html += "<tr><td>" + escaped(control.framework) + "</td><td>" + escaped(control.id)
                + "</td><td>" + escaped(control.title) + "</td><td>" + verdictCell(control.verdict)
                + "</td><td>" + sequencesText(citedBy(control)) + "</td></tr>";
    html += "</table>";

    html += "<h2>How to check the evidence</h2>";
    html += "<p>Save the platform's audit key (<tt>sealtrainctl signing-keys --out-dir keys</tt>, "
            "or take it from the operators) and verify the bundle offline; it holds exactly the "
            "cited entries, each with its inclusion proof, under a head and a selection the log "
            "signed, so a deleted, added or changed entry fails:</p>";
    html += "<p style='font-family: DejaVu Sans Mono; font-size: 8pt'>sealtrainctl audit verify "
            + escaped(source.bundleName) + " --key keys/signing.pub.pem</p>";
    html += "<p>Each control's section below says what was checked; "
            "docs/operations/compliance.md says how to repeat each check by hand.</p>";

    html += "<h2>Claims and evidence</h2>";
    for (const auto& control : report.controls)
        html += controlSection(control);
    html += "</body></html>";
    return html;
}

}  // namespace

std::vector<std::uint64_t> citedBy(const api::ComplianceControlView& control)
{
    std::vector<std::uint64_t> cited;
    for (const auto& claim : control.claims)
        cited.insert(cited.end(), claim.sequences.begin(), claim.sequences.end());
    std::sort(cited.begin(), cited.end());
    cited.erase(std::unique(cited.begin(), cited.end()), cited.end());
    return cited;
}

std::string verdictHeading(const std::string& verdict)
{
    std::string heading = verdict;
    std::transform(heading.begin(), heading.end(), heading.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return heading;
}

Result<QByteArray> renderCompliancePdf(const api::ComplianceReportView& report,
                                       const ComplianceSource& source)
{
    return printHtmlToPdf(reportHtml(report, source), "Sealtrain compliance report",
                          source.creator);
}

// The report for programs (docs/formats/compliance-report.md).
std::string complianceJson(const api::ComplianceReportView& report, const ComplianceSource& source)
{
    using Json = nlohmann::ordered_json;
    const auto end = [](const std::optional<std::int64_t>& seconds) {
        return seconds ? Json(audit::formatUtcSeconds(*seconds)) : Json(nullptr);
    };
    Json controls = Json::array();
    std::map<std::string, int> summary{{"passed", 0}, {"failed", 0}, {"no evidence", 0}};
    for (const auto& control : report.controls) {
        ++summary[control.verdict];
        Json claims = Json::array();
        for (const auto& claim : control.claims)
            claims.push_back({{"kind", claim.kind},
                              {"text", claim.text},
                              {"broken", claim.broken},
                              {"count", claim.count},
                              {"cited", claim.sequences}});
        controls.push_back({{"framework", control.framework},
                            {"id", control.id},
                            {"title", control.title},
                            {"verdict", control.verdict},
                            {"claims", std::move(claims)},
                            {"tests", control.tests}});
    }
    const Json document{
        {"format", "sealtrain-compliance-report/1"},
        {"origin", report.origin},
        {"generated_at", report.generatedAt},
        {"auditor", report.auditor},
        {"period", {{"from", end(report.fromUnixSeconds)}, {"to", end(report.toUnixSeconds)}}},
        {"entries_in_period", report.inPeriod},
        {"log_size", report.logSize},
        {"report_entry", report.reportEntry},
        {"summary",
         {{"passed", summary["passed"]},
          {"failed", summary["failed"]},
          {"no_evidence", summary["no evidence"]}}},
        {"controls", std::move(controls)},
        {"bundle",
         {{"file", source.bundleName},
          {"sha256", source.bundleSha256},
          {"key_id", source.bundleKeyId},
          {"cited", report.cited}}}};
    return document.dump(2) + "\n";
}

std::filesystem::path defaultBundlePath(const std::filesystem::path& pdf)
{
    std::filesystem::path path(pdf);
    path.replace_extension(".bundle");
    return path;
}

Result<void> checkComplianceOutputs(const ComplianceOutputs& outputs)
{
    if (outputs.bundle == outputs.pdf)
        return Error(ErrorCode::InvalidArgument,
                     "Give the evidence bundle a name other than the PDF's.");
    if (!outputs.json.empty() && (outputs.json == outputs.pdf || outputs.json == outputs.bundle))
        return Error(ErrorCode::InvalidArgument, "Give the JSON report a name of its own.");
    for (const auto& path : {outputs.pdf, outputs.bundle, outputs.json}) {
        std::error_code error;
        if (!path.empty() && std::filesystem::exists(path, error))
            return Error(
                ErrorCode::AlreadyExists,
                fmt::format("'{}' exists already; remove it or name another file.", path.string()));
    }
    return success();
}

namespace {

Result<void> writeOutput(const std::filesystem::path& path, std::span<const std::uint8_t> bytes,
                         const std::string& what)
{
    auto written = writeFileAtomically(path, bytes, AtomicFileSink::Overwrite::Refuse,
                                       AtomicFileSink::kPrivateMode);
    if (!written)
        return written.error().withContext("Cannot write the " + what + " '" + path.string() + "'");
    return written;
}

}  // namespace

Result<ComplianceWritten> writeComplianceReport(const api::ComplianceReportView& report,
                                                const ComplianceOutputs& outputs,
                                                const std::string& creator)
{
    SEALTRAIN_TRY(checkComplianceOutputs(outputs));
    // Checked here before it is shipped: its signatures, proofs and signed selection.
    auto verified = audit::verifyBundle(report.bundle, {"", std::nullopt, true});
    if (!verified.ok())
        return Error(ErrorCode::Integrity, "The control plane's evidence bundle does not verify ("
                                               + verified.errors.front()
                                               + "); report this to the platform's operators.");
    ComplianceWritten written;
    written.source.bundleName = outputs.bundle.filename().string();
    written.source.bundleSha256 = toHex(crypto::sha256(asBytes(report.bundle)));
    written.source.bundleKeyId = verified.keyId;
    written.source.bundleVerdict = "signatures, proofs and selection hold (verify it with the "
                                   "platform's audit key to trust it)";
    written.source.creator = creator;
    written.cited = std::move(verified.entries);
    auto pdf = renderCompliancePdf(report, written.source);
    if (!pdf)
        return pdf.error();
    SEALTRAIN_TRY(writeOutput(outputs.bundle, asBytes(report.bundle), "evidence bundle"));
    if (!outputs.json.empty())
        SEALTRAIN_TRY(writeOutput(outputs.json, asBytes(complianceJson(report, written.source)),
                                  "JSON report"));
    SEALTRAIN_TRY(writeOutput(outputs.pdf,
                              {reinterpret_cast<const std::uint8_t*>(pdf->constData()),
                               static_cast<std::size_t>(pdf->size())},
                              "PDF report"));
    return written;
}

}  // namespace sealtrain::report
