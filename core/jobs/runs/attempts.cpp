// A job's attempts as they start and end (jobs/rows.h; read by runs.cpp).
#include "jobs/rows.h"

namespace sealtrain::core::internal {

Result<void> openAttempt(Database& database, std::int64_t jobId, std::int64_t attempt,
                         std::int64_t workerId, std::int64_t now)
{
    // A worker resumes from the newest recorded checkpoint (scheduler.h), the control plane's
    // own trainer from its run's newest; both are the job's newest.
    std::int64_t resumed = 0;
    SEALTRAIN_TRY(
        database.queryOne("SELECT COALESCE(MAX(step), 0) FROM job_checkpoints WHERE job_id = ?",
                          {jobId}, [&](const Statement& row) { resumed = row.integer(0); }));
    return database.run(
        "INSERT INTO job_attempts (job_id, attempt, worker_id, started, resumed_step, outcome) "
        "VALUES (?, ?, ?, ?, ?, 'running')",
        {jobId, attempt, workerId == 0 ? SqlValue(nullptr) : SqlValue(workerId), now, resumed});
}

Result<void> closeAttempt(Database& database, std::int64_t jobId, std::int64_t attempt,
                          std::string_view outcome, const std::string& reason, std::int64_t now)
{
    return database.run("UPDATE job_attempts SET ended = ?, outcome = ?, reason = ? "
                        "WHERE job_id = ? AND attempt = ? AND ended IS NULL",
                        {now, std::string(outcome), reason, jobId, attempt});
}

}  // namespace sealtrain::core::internal
