// The job state machine's table (jobs/states.h; docs/operations/scheduling.md, "Job states").
#include "sealtrain/core/jobs/states.h"

#include <algorithm>
#include <array>

namespace sealtrain::core {
namespace {

using S = JobState;
using M = JobMover;

constexpr std::array kTransitions{
    // Vetting again: a job waiting for its approval, or one the policy (not an approver) refused.
    JobTransition{S::Submitted, S::Vetted, M::SubmitterOrApprover, "job.vet"},
    JobTransition{S::Submitted, S::Rejected, M::SubmitterOrApprover, "job.vet"},
    JobTransition{S::Vetted, S::Vetted, M::SubmitterOrApprover, "job.vet"},
    JobTransition{S::Vetted, S::Rejected, M::SubmitterOrApprover, "job.vet"},
    JobTransition{S::Rejected, S::Vetted, M::SubmitterOrApprover, "job.vet"},
    JobTransition{S::Rejected, S::Rejected, M::SubmitterOrApprover, "job.vet"},
    // An edit is vetted afresh and voids any approval, until the job runs.
    JobTransition{S::Submitted, S::Vetted, M::Submitter, "job.edit"},
    JobTransition{S::Submitted, S::Rejected, M::Submitter, "job.edit"},
    JobTransition{S::Vetted, S::Vetted, M::Submitter, "job.edit"},
    JobTransition{S::Vetted, S::Rejected, M::Submitter, "job.edit"},
    JobTransition{S::Approved, S::Vetted, M::Submitter, "job.edit"},
    JobTransition{S::Approved, S::Rejected, M::Submitter, "job.edit"},
    JobTransition{S::Queued, S::Vetted, M::Submitter, "job.edit"},
    JobTransition{S::Queued, S::Rejected, M::Submitter, "job.edit"},
    // A second person decides.
    JobTransition{S::Vetted, S::Approved, M::Approver, "job.approve"},
    JobTransition{S::Vetted, S::Rejected, M::Approver, "job.reject"},
    JobTransition{S::Approved, S::Rejected, M::Approver, "job.reject"},
    JobTransition{S::Queued, S::Rejected, M::Approver, "job.reject"},
    // Cancelled by its submitter or an approver at any time before it ended.
    JobTransition{S::Submitted, S::Cancelled, M::SubmitterOrApprover, "job.cancel"},
    JobTransition{S::Vetted, S::Cancelled, M::SubmitterOrApprover, "job.cancel"},
    JobTransition{S::Approved, S::Cancelled, M::SubmitterOrApprover, "job.cancel"},
    JobTransition{S::Queued, S::Cancelled, M::SubmitterOrApprover, "job.cancel"},
    JobTransition{S::Running, S::Cancelled, M::SubmitterOrApprover, "job.cancel"},
    // The control plane queues an approved job and hands it to a worker of its pool, or runs it
    // on its own trainer; a project out of budget fails it instead.
    JobTransition{S::Approved, S::Queued, M::ControlPlane, "job.queue"},
    JobTransition{S::Queued, S::Running, M::ControlPlane, "job.dispatch"},
    JobTransition{S::Queued, S::Failed, M::ControlPlane, "job.dispatch"},
    JobTransition{S::Approved, S::Running, M::ControlPlane, "job.start"},
    JobTransition{S::Queued, S::Running, M::ControlPlane, "job.start"},
    // How a run ends: its worker reports it; the control plane ends its own runs and a run
    // over its limits, and requeues (or, out of restarts, fails) the job of a lost worker.
    JobTransition{S::Running, S::Succeeded, M::Worker, "job.finish"},
    JobTransition{S::Running, S::Failed, M::Worker, "job.finish"},
    JobTransition{S::Running, S::Succeeded, M::ControlPlane, "job.finish"},
    JobTransition{S::Running, S::Failed, M::ControlPlane, "job.finish"},
    JobTransition{S::Running, S::Queued, M::ControlPlane, "job.requeue"},
    JobTransition{S::Running, S::Failed, M::ControlPlane, "job.requeue"},
};

}  // namespace

const char* jobMoverName(JobMover mover) noexcept
{
    switch (mover) {
    case JobMover::Submitter: return "its submitter";
    case JobMover::Approver: return "an approver";
    case JobMover::SubmitterOrApprover: return "its submitter or an approver";
    case JobMover::ControlPlane: return "the control plane";
    case JobMover::Worker: return "its worker";
    }
    return "nobody";
}

std::span<const JobTransition> jobTransitions() noexcept
{
    return kTransitions;
}

bool jobMayMove(JobState from, JobState to, JobMover by, std::string_view action) noexcept
{
    return std::any_of(kTransitions.begin(), kTransitions.end(), [&](const JobTransition& t) {
        return t.from == from && t.to == to && t.by == by && t.action == action;
    });
}

}  // namespace sealtrain::core
