// What the client library returns of the compliance report (compliance.proto): plain values, no
// gRPC type, for sealtrainctl, the PDF report and the GUI.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sealtrain::api {

struct ComplianceClaimView {
    std::string kind;  // "configured" or "observed"
    std::string text;
    std::vector<std::uint64_t> sequences;
    bool broken = false;
    std::uint64_t count = 0;  // the entries that show it in the period; the newest are cited
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
    std::string period;  // "from … to …", or "the whole log"
    std::optional<std::int64_t> fromUnixSeconds;
    std::optional<std::int64_t> toUnixSeconds;
    std::uint64_t inPeriod = 0;  // entries whose time lies in the period
    std::vector<ComplianceControlView> controls;
    std::vector<std::uint64_t> cited;
    std::string bundle;  // the signed audit bundle of exactly `cited`
};

// The period a report judges: entries whose time lies in [from, to); absent ends are open.
struct CompliancePeriodRequest {
    std::optional<std::int64_t> fromUnixSeconds;
    std::optional<std::int64_t> toUnixSeconds;
};

}  // namespace sealtrain::api
