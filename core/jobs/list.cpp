// One page of the jobs a caller may see (jobs.h, Jobs::list; store/list_page.h), and of the runs
// (runs.h, RunReads::list): the jobs that started.
#include "sealtrain/core/jobs/jobs.h"

#include "jobs/rows.h"
#include "sealtrain/core/access/permissions.h"
#include "store/audited_transaction.h"

#include <string>

namespace sealtrain::core {
namespace {

// Rows read at a time, and at most per page: a caller who may see few of many jobs gets a short
// page with a next_before rather than a call that reads the whole table.
constexpr std::int64_t kJobRowsAtATime = 500;
constexpr std::int64_t kMaxJobRowsPerPage = 20000;

}  // namespace

namespace internal {

Result<Paged<JobRow>> listVisibleJobs(AuditedTransactions& gate, const Caller& caller,
                                      const ListPage& page, bool startedOnly)
{
    SEALTRAIN_TRY(checkListPage(page));
    Paged<JobRow> listed;
    std::int64_t cursor = page.before;
    std::int64_t read = 0;
    for (;;) {
        auto rows = loadJobs(gate.database(), "(? = 0 OR j.id < ?) AND (? = 0 OR j.attempt > 0)",
                             {cursor, cursor, startedOnly ? 1 : 0},
                             "j.id DESC LIMIT " + std::to_string(kJobRowsAtATime));
        if (!rows)
            return rows.error();
        for (JobRow& row : *rows) {
            cursor = row.info.id;
            ++read;
            if (!gate.holds(caller, permission::kJobSubmit, row.info.project)
                && !gate.holds(caller, permission::kJobApprove, row.info.project))
                continue;
            if (listed.items.size() == page.limit) {
                listed.nextBefore = listed.items.back().info.id;  // one more is there
                return listed;
            }
            listed.items.push_back(std::move(row));
        }
        if (static_cast<std::int64_t>(rows->size()) < kJobRowsAtATime)
            return listed;  // the oldest job was read
        if (read >= kMaxJobRowsPerPage) {
            listed.nextBefore = cursor;
            return listed;
        }
    }
}

}  // namespace internal

Result<Paged<JobInfo>> Jobs::list(const std::string& session, const ListPage& page)
{
    return gate_.performReturning(
        session, {"job.list", "", "", {"job", "*"}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<Paged<JobInfo>> {
            draft.details.push_back(audit::textDetail("before", std::to_string(page.before)));
            auto rows = internal::listVisibleJobs(gate_, caller, page, false);
            if (!rows)
                return rows.error();
            Paged<JobInfo> listed;
            listed.nextBefore = rows->nextBefore;
            for (internal::JobRow& row : rows->items)
                listed.items.push_back(std::move(row.info));
            return listed;
        });
}

}  // namespace sealtrain::core
