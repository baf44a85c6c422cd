// The compliance report as a PDF for people (docs/operations/compliance.md): the controls in a
// table with their verdicts (green passed; red failed and no evidence), then each control's
// claims with the audit entries they cite and the tests that guard it, and how a reviewer checks
// the evidence bundle offline. Renders what the control plane judged; decides nothing.
#pragma once

#include "sealtrain/api/compliance_views.h"
#include "sealtrain/base/result.h"

#include <QByteArray>

#include <cstdint>
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

[[nodiscard]] Result<QByteArray> renderCompliancePdf(const api::ComplianceReportView& report,
                                                     const ComplianceSource& source);

}  // namespace sealtrain::report
