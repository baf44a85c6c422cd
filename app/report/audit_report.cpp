// The PDF audit report: HTML laid out by QTextDocument and printed through QPdfWriter.
#include "audit_report.h"
#include "report_html.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QGuiApplication>
#include <QPageSize>
#include <QPdfWriter>
#include <QString>
#include <QTextDocument>

#include <chrono>
#include <memory>

namespace sealtrain::report {
namespace {

using html::escaped;
using html::row;

QString timeText(std::uint64_t timeNs)
{
    return QString::fromStdString(
        audit::formatUtcSeconds(static_cast<std::int64_t>(timeNs / 1000000000U)));
}

QString entryRow(const audit::Entry& e)
{
    QString outcome = audit::outcomeName(e.outcome);
    if (!e.reason.empty())
        outcome += ": " + escaped(e.reason);
    const QString actor = QString(audit::actorKindName(e.actor.kind)) + " " + escaped(e.actor.id);
    return "<tr><td>" + QString::number(e.sequence) + "</td><td>" + timeText(e.timeNs) + "</td><td>"
           + actor + "</td><td>" + escaped(e.action) + "</td><td>" + escaped(e.target.kind) + " "
           + escaped(e.target.id) + "</td><td>" + outcome + "</td><td>" + escaped(e.requestId)
           + "</td></tr>";
}

QString reportHtml(const audit::VerifyReport& report, const ReportSource& source)
{
    QString html = "<html><body style='font-family: DejaVu Sans; font-size: 9pt'>";
    html += "<h1>Sealtrain audit report</h1>";
    const audit::Verdict verdict = report.verdict();
    html += "<h2>Verification result: " + QString(audit::verdictName(verdict)) + "</h2>";
    if (verdict == audit::Verdict::Verified)
        html += "<p>Every entry's hash and chain link, every signed head, every consistency proof "
                "between heads and the log's signed statement of what was exported were checked; "
                "each entry is proven part of the log by its inclusion proof or, for a complete "
                "bundle, by the roots recomputed from all the entries.</p>";
    else if (verdict == audit::Verdict::Unconfirmed)
        html += "<p><b>Nothing failed, but the warnings below name what this bundle does not "
                "prove. Do not treat it as verified.</b></p>";
    if (report.firstBadEntry)
        html += "<p><b>First bad entry: " + QString::number(*report.firstBadEntry) + "</b></p>";
    if (!report.errors.empty()) {
        html += "<p>Errors:</p><ul>";
        for (const auto& error : report.errors)
            html += "<li>" + escaped(error) + "</li>";
        html += "</ul>";
    }
    if (!report.warnings.empty()) {
        html += "<p>Warnings:</p><ul>";
        for (const auto& warning : report.warnings)
            html += "<li>" + escaped(warning) + "</li>";
        html += "</ul>";
    }

    html += "<h2>Summary</h2><table cellpadding=3>";
    html += row("Bundle", escaped(source.bundle.filename().string()));
    html += row("Bundle SHA-256", escaped(source.bundleSha256));
    html += row("Log", escaped(report.origin));
    html += row("Selection", escaped(report.selectionText()));
    html += row("Signing key", escaped(report.keyId)
                                   + (report.keyTrusted ? " (given by the reviewer)"
                                                        : " (taken from the bundle, not trusted)"));
    html += row("Signed heads", QString::number(report.heads.size()));
    if (!report.heads.empty()) {
        const auto& newest = report.heads.back();
        html += row("Newest head", "size " + QString::number(newest.size) + ", signed "
                                       + escaped(audit::formatUtcSeconds(newest.timeSeconds)));
    }
    html += row("Entries in the bundle", QString::number(report.entriesInBundle));
    html += row("Entries verified", QString::number(report.entriesVerified));
    if (report.witnessHeadsChecked > 0)
        html += row("Witness heads compared", QString::number(report.witnessHeadsChecked));
    html += "</table>";

    html += "<h2>How to repeat this verification</h2>";
    html += "<p>With Sealtrain:</p><p style='font-family: DejaVu Sans Mono; font-size: 7pt'>"
            + escaped(source.repeatCommand) + "</p>";
    html += "<p>Without Sealtrain: follow docs/formats/audit.md (section \"Verifying by "
            "hand\"), which checks a signed head and an inclusion proof with the openssl command "
            "and python3.</p>";

    html += "<h2>Entries</h2>";
    html += "<table border=1 cellspacing=0 cellpadding=2 width='100%' style='font-size: 7pt'>"
            "<tr><th>#</th><th>time (UTC)</th><th>actor</th><th>action</th><th>target</th>"
            "<th>outcome</th><th>request</th></tr>";
    for (const auto& entry : report.entries)
        html += entryRow(entry);
    html += "</table></body></html>";
    return html;
}

}  // namespace

Result<QByteArray> printHtmlToPdf(const QString& html, const QString& title,
                                  const std::string& creator)
{
    // QTextDocument needs fonts, which need a QGuiApplication; a command-line run has none, so
    // it gets an offscreen one for the length of the call.
    std::unique_ptr<QGuiApplication> guiApp;
    static int argc = 1;
    static char name[] = "sealtrainctl";
    static char* argv[] = {name, nullptr};
    if (QCoreApplication::instance() == nullptr) {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
        guiApp = std::make_unique<QGuiApplication>(argc, argv);
    } else if (qobject_cast<QGuiApplication*>(QCoreApplication::instance()) == nullptr) {
        return Error(ErrorCode::Internal,
                     "The PDF report needs a QGuiApplication; run it from sealtrainctl.");
    }
    // Laid out in memory; the caller writes it whole and private (it names users and data).
    QBuffer pdf;
    pdf.open(QIODevice::WriteOnly);
    {
        QPdfWriter writer(&pdf);
        writer.setPageSize(QPageSize(QPageSize::A4));
        writer.setResolution(300);
        writer.setTitle(title);
        writer.setCreator(QString::fromStdString(creator));
        QTextDocument document;
        document.setHtml(html);
        document.print(&writer);
    }
    if (pdf.data().isEmpty())
        return Error(ErrorCode::Internal, "The PDF report came out empty; this is a bug.");
    return pdf.data();
}

Result<QByteArray> renderPdfReport(const audit::VerifyReport& report, const ReportSource& source)
{
    return printHtmlToPdf(reportHtml(report, source), "Sealtrain audit report", source.creator);
}

std::string repeatVerifyCommand(const std::string& bundle, const std::string& key,
                                const std::string& witness)
{
    std::string command = "sealtrainctl audit verify " + bundle + " --key " + key;
    if (!witness.empty())
        command += " --witness " + witness;
    return command;
}

}  // namespace sealtrain::report
