// The compliance report's PDF: HTML laid out by QTextDocument, printed by printHtmlToPdf.
#include "compliance_report.h"

#include "audit_report.h"
#include "report_html.h"

#include <QString>

#include <algorithm>
#include <cctype>

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

}  // namespace sealtrain::report
