// The import report (import_report.h): counts are complete, samples bounded.
#include "sealtrain/dataset/import_report.h"

#include <nlohmann/json.hpp>

namespace sealtrain::dataset {

const char* issueKindName(IssueKind kind) noexcept
{
    switch (kind) {
    case IssueKind::Unreadable: return "unreadable";
    case IssueKind::InvalidUtf8: return "invalid_utf8";
    case IssueKind::Empty: return "empty";
    case IssueKind::Oversized: return "oversized";
    case IssueKind::Malformed: return "malformed";
    }
    return "unknown";
}

void ImportReport::addIssue(Issue issue)
{
    if (++issueCounts[issue.kind] <= kMaxSamples)
        issues.push_back(std::move(issue));
}

void ImportReport::addPii(PiiKind kind, Location where)
{
    const auto index = static_cast<std::size_t>(kind);
    ++piiCounts[index];
    if (piiSamples[index].size() < kMaxSamples)
        piiSamples[index].push_back(std::move(where));
}

std::uint64_t ImportReport::piiTotal() const noexcept
{
    std::uint64_t total = 0;
    for (const std::uint64_t count : piiCounts)
        total += count;
    return total;
}

std::string ImportReport::toJson() const
{
    using nlohmann::json;
    json issueList = json::array();
    for (const Issue& issue : issues) {
        issueList.push_back({{"kind", issueKindName(issue.kind)},
                             {"file", issue.where.file},
                             {"line", issue.where.line},
                             {"detail", issue.detail}});
    }
    json issueCountMap = json::object();
    for (const auto& [kind, count] : issueCounts)
        issueCountMap[issueKindName(kind)] = count;
    json pii = json::object();
    for (const PiiKind kind : kAllPiiKinds) {
        const auto index = static_cast<std::size_t>(kind);
        json samples = json::array();
        for (const Location& where : piiSamples[index])
            samples.push_back(where.file + ":" + std::to_string(where.line));
        pii[piiKindName(kind)] = {{"count", piiCounts[index]}, {"samples", samples}};
    }
    const json report = {
        {"files_read", filesRead},       {"bytes_read", bytesRead},  {"records_read", recordsRead},
        {"records_kept", recordsKept},   {"duplicates", duplicates}, {"skipped", skipped},
        {"issue_counts", issueCountMap}, {"issues", issueList},      {"pii", pii},
        {"pii_redacted", piiRedacted}};
    return report.dump(2, ' ', false, json::error_handler_t::replace);
}

}  // namespace sealtrain::dataset
