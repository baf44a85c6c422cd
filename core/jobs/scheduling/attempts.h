// A worker's attempt as the scheduler's files check it (scheduler.cpp, jobs/checkpoints.cpp):
// who the worker is in an audit entry, and fencing by attempt. Not installed.
#pragma once

#include "jobs/rows.h"
#include "sealtrain/audit/entry.h"
#include "sealtrain/base/result.h"
#include "sealtrain/core/store/database.h"
#include "sealtrain/core/workers/workers.h"

#include <cstdint>

namespace sealtrain::core::internal {

// The worker as an audit entry's actor (authentication "mtls").
[[nodiscard]] audit::Actor workerActor(const WorkerInfo& worker);
// The job when `attempt` is its current one on `workerId`, and it is running, or (with
// `endedToo`) was cancelled or failed by the control plane while it ran and the worker has not
// finished it yet. Denied otherwise (fencing).
[[nodiscard]] Result<JobRow> currentAttempt(const Database& database, std::int64_t workerId,
                                            std::int64_t jobId, std::int64_t attempt,
                                            bool endedToo);

}  // namespace sealtrain::core::internal
