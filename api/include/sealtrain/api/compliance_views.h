// What the client library returns of the compliance report (compliance.proto): plain values, no
// gRPC type, for sealtrainctl, the PDF report and the GUI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sealtrain::api {

struct ComplianceClaimView {
    std::string kind;  // "configured" or "observed"
    std::string text;
    std::vector<std::uint64_t> sequences;
    bool broken = false;
};

struct ComplianceControlView {
    std::string framework;
    std::string id;
    std::string title;
    std::string verdict;  // "passed", "failed" or "no evidence"
    std::vector<ComplianceClaimView> claims;
    std::vector<std::string> tests;
};

struct ComplianceReportView {
    std::string origin;
    std::string generatedAt;
    std::string auditor;
    std::uint64_t reportEntry = 0;
    std::uint64_t logSize = 0;
    std::vector<ComplianceControlView> controls;
    std::vector<std::uint64_t> cited;
    std::string bundle;  // the signed audit bundle of exactly `cited`
};

}  // namespace sealtrain::api
