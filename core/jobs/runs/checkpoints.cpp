// A job's checkpoints for the people who may see the job (jobs/runs/checkpoints.h).
#include "sealtrain/core/jobs/runs/checkpoints.h"

#include "jobs/rows.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>

namespace sealtrain::core {

JobCheckpointReads::JobCheckpointReads(AuditedTransactions& gate, Scheduler& scheduler)
    : gate_(gate)
    , scheduler_(scheduler)
{
}

Result<std::vector<JobCheckpoint>> JobCheckpointReads::list(const std::string& session,
                                                            std::int64_t jobId)
{
    return gate_.performReturning(
        session, internal::jobRequest(gate_.database(), jobId, "checkpoints", ""),
        [&](const Caller& caller, audit::EntryDraft&) -> Result<std::vector<JobCheckpoint>> {
            SEALTRAIN_TRY(internal::visibleJob(gate_, caller, jobId));
            return scheduler_.checkpoints(jobId);
        });
}

Result<JobCheckpoint> JobCheckpointReads::download(const std::string& session, std::int64_t jobId,
                                                   std::int64_t step)
{
    return gate_.performReturning(
        session, internal::jobRequest(gate_.database(), jobId, "checkpoint_download", ""),
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<JobCheckpoint> {
            SEALTRAIN_TRY(internal::visibleJob(gate_, caller, jobId));
            auto all = scheduler_.checkpoints(jobId);
            if (!all)
                return all.error();
            if (all->empty())
                return Error(ErrorCode::NotFound,
                             fmt::format("Job {} has no checkpoint yet; download one once its "
                                         "worker has written one.",
                                         jobId));
            const JobCheckpoint* chosen = step == 0 ? &all->back() : nullptr;
            for (const JobCheckpoint& checkpoint : *all)
                if (checkpoint.step == step)
                    chosen = &checkpoint;
            if (chosen == nullptr)
                return Error(ErrorCode::NotFound,
                             fmt::format("Job {} has no checkpoint at step {}; list them with "
                                         "'sealtrainctl job checkpoints {}'.",
                                         jobId, step, jobId));
            draft.details.push_back(audit::textDetail("step", std::to_string(chosen->step)));
            draft.details.push_back(audit::textDetail("sealed_sha256", chosen->sealedSha256));
            return *chosen;
        });
}

}  // namespace sealtrain::core
