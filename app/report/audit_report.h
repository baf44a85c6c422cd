// The PDF audit report for people (docs/formats/audit.md, "The report"): a summary, the
// verification result and how to repeat it, and the entries as a table. Qt's QTextDocument and
// QPdfWriter, so it lives in the app layer, shared by `sealtrainctl audit report` and the desktop's
// Audit screen. Rendering needs no key: it reads what audit::verifyBundle reported.
#pragma once

#include "sealtrain/audit/bundle.h"
#include "sealtrain/base/result.h"

#include <QByteArray>
#include <QString>

#include <filesystem>
#include <string>

namespace sealtrain::report {

struct ReportSource {
    std::filesystem::path bundle;
    std::string bundleSha256;   // hex
    std::string repeatCommand;  // the sealtrainctl command that reproduces the verification
    std::string creator = "sealtrainctl";  // the PDF's Creator field
};

// The report as PDF bytes. Starts an offscreen QGuiApplication when the process has no Qt
// application; safe on a worker thread of a GUI application (it paints on no screen).
[[nodiscard]] Result<QByteArray> renderPdfReport(const audit::VerifyReport& report,
                                                 const ReportSource& source);

// `html` laid out by QTextDocument and printed to A4 PDF bytes (the audit and the compliance
// report share it). Starts an offscreen QGuiApplication when the process has no Qt application.
[[nodiscard]] Result<QByteArray> printHtmlToPdf(const QString& html, const QString& title,
                                                const std::string& creator);

// The "sealtrainctl audit verify" command a reviewer runs to repeat the verification.
[[nodiscard]] std::string repeatVerifyCommand(const std::string& bundle, const std::string& key,
                                              const std::string& witness);

}  // namespace sealtrain::report
