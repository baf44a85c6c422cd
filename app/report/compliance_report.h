// The compliance report as a PDF for people (docs/operations/compliance.md): the controls in a
// table with their verdicts (green passed; red failed and no evidence), then each control's
// claims with the audit entries they cite and the tests that guard it, and how a reviewer checks
// the evidence bundle offline. Renders what the control plane judged; decides nothing.
#pragma once

#include "sealtrain/api/compliance_views.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/base/result.h"

#include <QByteArray>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sealtrain::report {

struct ComplianceSource {
    std::string bundleName;     // the evidence bundle's file name, as shipped beside the PDF
    std::string bundleSha256;   // hex
    std::string bundleKeyId;    // the key its signatures verify with (taken from the bundle)
    std::string bundleVerdict;  // what verifying it here said: VERIFIED, UNCONFIRMED, FAILED
    std::string creator = "sealtrainctl";
};

// Every entry a control's claims cite, ascending, without repeats.
[[nodiscard]] std::vector<std::uint64_t> citedBy(const api::ComplianceControlView& control);

// The verdict as the report prints it: "PASSED", "FAILED", "NO EVIDENCE".
[[nodiscard]] std::string verdictHeading(const std::string& verdict);

// The report for programs (docs/formats/compliance-report.md): JSON, indented, ending in a
// newline; what `sealtrainctl compliance report --json` and the desktop's Compliance tab write.
[[nodiscard]] std::string complianceJson(const api::ComplianceReportView& report,
                                         const ComplianceSource& source);

[[nodiscard]] Result<QByteArray> renderCompliancePdf(const api::ComplianceReportView& report,
                                                     const ComplianceSource& source);

// Where a report goes: the PDF, its evidence bundle and, when `json` is not empty, the JSON.
struct ComplianceOutputs {
    std::filesystem::path pdf;
    std::filesystem::path bundle;
    std::filesystem::path json;
};

// The bundle's default name: the PDF's, with .bundle for .pdf ("report.pdf" -> "report.bundle").
[[nodiscard]] std::filesystem::path defaultBundlePath(const std::filesystem::path& pdf);

// InvalidArgument, saying which to rename, when two of `outputs` are the same file;
// AlreadyExists when one of them exists (nothing is ever overwritten).
[[nodiscard]] Result<void> checkComplianceOutputs(const ComplianceOutputs& outputs);

struct ComplianceWritten {
    ComplianceSource source;
    std::vector<audit::Entry> cited;  // the evidence bundle's entries, decoded and verified
};

// Checks the control plane's evidence bundle (signatures, proofs, signed selection) before
// anything is written, renders the PDF, then writes the bundle, the JSON and the PDF (mode 0600:
// they name users and data). Integrity, and nothing written, when the bundle does not verify.
// What `sealtrainctl compliance report` and the desktop's Compliance tab both do.
[[nodiscard]] Result<ComplianceWritten>
writeComplianceReport(const api::ComplianceReportView& report, const ComplianceOutputs& outputs,
                      const std::string& creator);

}  // namespace sealtrain::report
