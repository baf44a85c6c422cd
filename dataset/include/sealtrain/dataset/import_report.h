// What an import found, for the data steward to review before the dataset is used: validation
// issues and PII, each with file and line. Never holds record text or matched values.
#pragma once

#include "sealtrain/dataset/pii.h"

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sealtrain::dataset {

enum class IssueKind { Unreadable, InvalidUtf8, Empty, Oversized, Malformed };
[[nodiscard]] const char* issueKindName(IssueKind kind) noexcept;

struct Location {
    std::string file;
    std::uint64_t line = 0;  // 1-based; 0 for the whole file
};

struct Issue {
    IssueKind kind = IssueKind::Malformed;
    Location where;
    std::string detail;  // about the shape of the record, never its content
};

struct ImportReport {
    // Samples kept per issue kind and per PII kind; the counts are always complete.
    static constexpr std::size_t kMaxSamples = 20;

    std::uint64_t filesRead = 0;
    std::uint64_t bytesRead = 0;
    std::uint64_t recordsRead = 0;
    std::uint64_t recordsKept = 0;
    std::uint64_t duplicates = 0;
    std::uint64_t skipped = 0;
    std::map<IssueKind, std::uint64_t> issueCounts;
    std::vector<Issue> issues;
    std::array<std::uint64_t, kPiiKindCount> piiCounts{};
    std::array<std::vector<Location>, kPiiKindCount> piiSamples;
    bool piiRedacted = false;

    void addIssue(Issue issue);
    void addPii(PiiKind kind, Location where);
    [[nodiscard]] std::uint64_t piiTotal() const noexcept;
    // The report as pretty JSON for a person or a tool (not canonical; not hashed).
    [[nodiscard]] std::string toJson() const;
};

}  // namespace sealtrain::dataset
