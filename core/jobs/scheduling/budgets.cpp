// The job policy and each project's budget use, for the people who work in it
// (jobs/scheduling/budgets.h).
#include "sealtrain/core/jobs/scheduling/budgets.h"

#include "jobs/rows.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/jobs/jobs.h"
#include "sealtrain/core/store/database.h"
#include "store/audited_transaction.h"

#include <algorithm>

namespace sealtrain::core {

std::int64_t chargedGpus(const formats::JobSpec& spec)
{
    return spec.resources.nodes * spec.resources.gpusPerNode;
}

double gpuHoursCharged(const formats::JobSpec& spec, double wallClockHours)
{
    return wallClockHours * static_cast<double>(chargedGpus(spec));
}

std::int64_t chargedCpus(const formats::JobSpec& spec, std::int64_t nodeCores)
{
    if (spec.resources.gpusPerNode > 0)
        return 0;
    const std::int64_t ranks = spec.resources.cpuRanksPerNode;
    const std::int64_t perNode =
        spec.resources.threads > 0 ? ranks * spec.resources.threads : std::max(ranks, nodeCores);
    return spec.resources.nodes * perNode;
}

namespace {

// The statements differ only in their columns' prefix; both are written out, never formatted.
const char* usedQuery(Hours hours)
{
    return hours == Hours::Gpu
               ? "SELECT COALESCE(SUM(gpu_millihours_used), 0) FROM jobs WHERE project = ?"
               : "SELECT COALESCE(SUM(cpu_millihours_used), 0) FROM jobs WHERE project = ?";
}

const char* heldQuery(Hours hours)
{
    return hours == Hours::Gpu
               ? "SELECT COALESCE(SUM(CASE WHEN state IN ('succeeded', 'failed', 'cancelled') "
                 "THEN gpu_millihours_used WHEN state = 'rejected' THEN 0 "
                 "ELSE MAX(gpu_millihours_limit, gpu_millihours_used) END), 0) "
                 "FROM jobs WHERE project = ? AND id != ?"
               : "SELECT COALESCE(SUM(CASE WHEN state IN ('succeeded', 'failed', 'cancelled') "
                 "THEN cpu_millihours_used WHEN state = 'rejected' THEN 0 "
                 "ELSE MAX(cpu_millihours_limit, cpu_millihours_used) END), 0) "
                 "FROM jobs WHERE project = ? AND id != ?";
}

}  // namespace

Result<std::int64_t> projectUsedMilli(const Database& database, const std::string& project,
                                      Hours hours)
{
    return database.queryInteger(usedQuery(hours), {project});
}

Result<std::int64_t> projectHeldMilli(const Database& database, const std::string& project,
                                      std::int64_t exceptJob, Hours hours)
{
    return database.queryInteger(heldQuery(hours), {project, exceptJob});
}

std::vector<std::pair<std::string, double>> namedCaps(const JobPolicy::Caps& caps)
{
    const auto whole = [](std::int64_t value) { return static_cast<double>(value); };
    return {{"nodes", whole(caps.nodes)},
            {"gpus_per_node", whole(caps.gpusPerNode)},
            {"steps", whole(caps.steps)},
            {"layers", whole(caps.layers)},
            {"width", whole(caps.width)},
            {"context", whole(caps.context)},
            {"batch", whole(caps.batch)},
            {"lr", caps.lr},
            {"max_restarts", whole(caps.maxRestarts)},
            {"gpu_hours", caps.gpuHours},
            {"cpu_hours", caps.cpuHours},
            {"grad_accum", whole(caps.gradAccum)},
            {"threads", whole(caps.threads)},
            {"cpu_ranks_per_node", whole(caps.cpuRanksPerNode)},
            {"cpu_steps", whole(caps.cpuSteps)}};
}

PolicyReads::PolicyReads(AuditedTransactions& gate, const Jobs& jobs)
    : gate_(gate)
    , jobs_(jobs)
{
}

Result<PolicyView> PolicyReads::show(const std::string& session)
{
    return gate_.performReturning(
        session, {"policy.show", "", "", {"policy", "jobs"}},
        [&](const Caller& caller, audit::EntryDraft&) -> Result<PolicyView> {
            PolicyView view;
            view.policy = jobs_.policy();
            view.policy.budgets.clear();
            for (const auto& [project, budget] : jobs_.policy().budgets) {
                if (!gate_.holds(caller, permission::kJobSubmit, project)
                    && !gate_.holds(caller, permission::kJobApprove, project))
                    continue;
                std::int64_t used = 0;
                std::int64_t held = 0;
                std::int64_t cpuUsed = 0;
                std::int64_t cpuHeld = 0;
                const Database& database = gate_.database();
                SEALTRAIN_ASSIGN(used, projectUsedMilli(database, project));
                SEALTRAIN_ASSIGN(held, projectHeldMilli(database, project, 0));
                SEALTRAIN_ASSIGN(cpuUsed, projectUsedMilli(database, project, Hours::Cpu));
                SEALTRAIN_ASSIGN(cpuHeld, projectHeldMilli(database, project, 0, Hours::Cpu));
                view.budgets.push_back({project, budget.gpuHours, budget.alertAt,
                                        internal::fromMilli(used), internal::fromMilli(held),
                                        budget.cpuHours, internal::fromMilli(cpuUsed),
                                        internal::fromMilli(cpuHeld)});
            }
            return view;
        });
}

}  // namespace sealtrain::core
