// What the job policy allows and how much of each project's GPU-hour budget is spent (issue #29,
// the desktop's overview and `sealtrainctl policy show`): the worker pools with the data
// classifications each may see, the caps, the sampling limits, and for each project the caller
// works in (job.submit or job.approve there, or globally) its budget, the hours its ended jobs
// used, and the hours held (what vetting counts: ended jobs' use plus the limit of every job that
// may still run). One audit entry (policy.show) per call; any signed-in user may read the pools
// and caps, which every vetting report already shows, but only their own projects' budgets.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/core/jobs/vetting/policy.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::core {

class AuditedTransactions;
class Database;
class Jobs;

struct BudgetUse {
    std::string project;
    double gpuHours = 0.0;   // the budget
    double alertAt = 0.8;    // share at which vetting warns
    double usedHours = 0.0;  // reported by the project's jobs so far
    double heldHours = 0.0;  // used, plus the limit of each job that may still run
    double cpuHours = 0.0;   // the CPU-hour budget, and the same two figures for it
    double cpuUsedHours = 0.0;
    double cpuHeldHours = 0.0;
};

struct PolicyView {
    JobPolicy policy;  // budgets left out: see `budgets`
    std::vector<BudgetUse> budgets;
};

// The one GPU-hour rule (issue #48): an attempt is charged its wall-clock hours times every GPU it
// holds, on every node: nodes × GPUs per node. The control plane's own runs and a worker's
// attempts alike (a worker is told the count with its job, Workers.TakeJob's `charged_gpus`).
[[nodiscard]] std::int64_t chargedGpus(const formats::JobSpec& spec);
[[nodiscard]] double gpuHoursCharged(const formats::JobSpec& spec, double wallClockHours);

// The one CPU-hour rule (issue #54): a CPU job (gpus_per_node 0) is charged its wall-clock hours
// times the cores it holds on every node: ranks × threads, or, where threads is 0 (the
// libraries take every core), the node's cores `nodeCores` (at least one per rank). A GPU job
// is charged no CPU-hours. The control plane measures a CPU attempt's hours itself, from its
// dispatch (the count is fixed then, from the worker's reported cores), never from a report.
[[nodiscard]] std::int64_t chargedCpus(const formats::JobSpec& spec, std::int64_t nodeCores);

// Which hours a budget counts.
enum class Hours { Gpu, Cpu };

// Hours, in thousandths, the project's jobs have used (what dispatch checks the budget against).
[[nodiscard]] Result<std::int64_t>
projectUsedMilli(const Database& database, const std::string& project, Hours hours = Hours::Gpu);
// Hours, in thousandths, the project's jobs other than `exceptJob` hold: an ended job what it
// used, a rejected one nothing, any other the larger of its limit and its use (what vetting
// adds a new job's limit to).
[[nodiscard]] Result<std::int64_t> projectHeldMilli(const Database& database,
                                                    const std::string& project,
                                                    std::int64_t exceptJob,
                                                    Hours hours = Hours::Gpu);

// The caps by their names in the policy file ("nodes", "gpus_per_node", …), in its order.
[[nodiscard]] std::vector<std::pair<std::string, double>> namedCaps(const JobPolicy::Caps& caps);

class PolicyReads final {
public:
    // `gate` and `jobs` (whose policy is read at each call) must outlive this object.
    PolicyReads(AuditedTransactions& gate, const Jobs& jobs);

    [[nodiscard]] Result<PolicyView> show(const std::string& session);

private:
    AuditedTransactions& gate_;
    const Jobs& jobs_;
};

}  // namespace sealtrain::core
