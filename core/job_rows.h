// Job rows as the services that change jobs read them (jobs.cpp, scheduler.cpp): the columns,
// the row with what JobInfo does not show, and the helpers both need. Not installed.
#pragma once

#include "audited_transaction.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/database.h"
#include "sealtrain/core/jobs.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sealtrain::core::internal {

// GPU hours are kept in the database as whole thousandths.
[[nodiscard]] std::int64_t toMilli(double hours);
[[nodiscard]] double fromMilli(std::int64_t milli);

// A job row, with what JobInfo does not carry.
struct JobRow {
    JobInfo info;
    std::int64_t submitterId = 0;
    std::vector<std::uint8_t> specHash;
    std::vector<std::uint8_t> approvedHash;
    std::int64_t workerId = 0;  // 0: none
    // GPU thousandths of an hour that the attempts before the current one used: a report of the
    // current attempt's total sets the job's use to this plus that total.
    std::int64_t earlierMilli = 0;
    bool attemptEnded = false;  // the current attempt's worker called finish (or it never ran)
};

[[nodiscard]] Result<JobRow> loadJob(const Database& database, std::int64_t id);
// The job as a call left it.
[[nodiscard]] Result<JobInfo> reloaded(const Database& database, std::int64_t id);
// Every job matching `condition` (SQL over the alias `j`, with its ?s bound to `arguments`), in
// the order `orderBy` gives (which may end with a LIMIT).
[[nodiscard]] Result<std::vector<JobRow>> loadJobs(const Database& database,
                                                   std::string_view condition, SqlValues arguments,
                                                   std::string_view orderBy);

// The call `verb` on job `id`, scoped to its project (read before the transaction, as a
// submission's is; an unknown number is refused inside it).
[[nodiscard]] AuditedRequest jobRequest(const Database& database, std::int64_t id,
                                        std::string_view verb, std::string_view permission);

// Someone other than the submitter approved exactly the current spec.
[[nodiscard]] bool approvedAsIs(const JobRow& job);
[[nodiscard]] Error wrongState(const JobInfo& job, const std::string& action);

// Job `id` when `caller` may see it (job.submit or job.approve in its project), else denied.
[[nodiscard]] Result<JobRow> visibleJob(AuditedTransactions& gate, const Caller& caller,
                                        std::int64_t id);

// The actor of the control plane's own steps (queueing, dispatching, requeueing).
[[nodiscard]] audit::Actor controlPlaneActor();

}  // namespace sealtrain::core::internal
