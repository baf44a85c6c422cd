// The job state machine (issue #28, item 6): every change of a job's state, who makes it and the
// audit action that records it, in one table (docs/operations/scheduling.md, "Job states").
// Jobs and the Scheduler ask it before they write a state, and write it only where the job is
// still in the state they asked about (UPDATE … WHERE state = ?); the other rules of a call (the
// caller's permission, four eyes, the approved hash, the attempt's fencing) are checked besides.
#pragma once

#include "sealtrain/core/jobs/jobs.h"

#include <span>
#include <string_view>

namespace sealtrain::core {

// Who moves a job: its submitter; an approver of its project (never the submitter, which Jobs
// checks); either of them; the control plane itself (the scheduler, its own trainer, a reaper);
// or the worker that runs the attempt.
enum class JobMover { Submitter, Approver, SubmitterOrApprover, ControlPlane, Worker };

[[nodiscard]] const char* jobMoverName(JobMover mover) noexcept;

struct JobTransition {
    JobState from;
    JobState to;
    JobMover by;
    std::string_view action;  // the audit action of the entry that records the change
};

// The table, in the order docs/operations/scheduling.md lists it.
[[nodiscard]] std::span<const JobTransition> jobTransitions() noexcept;

// Whether the table holds (from → to) by `by` under `action`.
[[nodiscard]] bool jobMayMove(JobState from, JobState to, JobMover by,
                              std::string_view action) noexcept;

}  // namespace sealtrain::core
