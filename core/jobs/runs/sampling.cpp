// Whether a caller may sample (jobs.h, Jobs::admitSample; issue #54): decided whole, before any
// key is released or anything about the object is answered, and audited when refused.
#include "sealtrain/core/jobs/jobs.h"

#include "jobs/rows.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/model_lookup.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace sealtrain::core {
namespace {

// A run of the control plane's own trainer is named "run-" and 16 hexadecimal digits.
bool runIdIsWellFormed(const std::string& runId)
{
    return runId.size() == 20 && runId.starts_with("run-")
           && std::all_of(runId.begin() + 4, runId.end(),
                          [](unsigned char c) { return std::isxdigit(c) != 0; });
}

audit::Target sampleTarget(const SampleTarget& target)
{
    if (target.job != 0)
        return {"job", std::to_string(target.job)};
    if (!target.model.empty())
        return {"model", target.model.substr(0, 256)};
    return {"run", target.runId.substr(0, 64)};
}

// Job `job`'s checkpoint at `step` (0: any) is recorded; NotFound, saying what to do, otherwise.
Result<void> checkpointRecorded(const Database& database, std::int64_t job, std::uint64_t step)
{
    auto recorded =
        database.exists("SELECT 1 FROM job_checkpoints WHERE job_id = ? AND (? = 0 OR step = ?)",
                        {job, static_cast<std::int64_t>(step), static_cast<std::int64_t>(step)});
    if (!recorded)
        return recorded.error();
    if (*recorded)
        return success();
    return Error(ErrorCode::NotFound,
                 step == 0 ? fmt::format("Job {} has no checkpoint yet; wait for its worker.", job)
                           : fmt::format("Job {} has no checkpoint at step {}; leave --step out "
                                         "for its newest.",
                                         job, step));
}

}  // namespace

Result<void> internal::requireReadRelease(AuditedTransactions& gate, const Caller& caller,
                                          const std::string& datasetId, const std::string& what)
{
    if (!gate.holds(caller, permission::kDatasetRead, ""))
        return denied(fmt::format("The user '{}' may not read datasets (dataset.read), which {} "
                                  "needs; ask an admin for the role.",
                                  caller.name, what));
    auto view = datasetForReader(gate.database(), datasetId, caller.userId);
    if (!view)
        return view.error();
    if (!view->granted)
        return denied(fmt::format("The user '{}' holds no read grant on '{}' version {}, which {} "
                                  "needs; ask a data steward for one.",
                                  caller.name, view->dataset.name, view->dataset.version, what));
    return success();
}

Result<SamplerCall> Jobs::admitSample(const std::string& session, const SampleTarget& target,
                                      const std::vector<std::string>& arguments)
{
    std::optional<SamplerCall> call;
    auto admitted = gate_.admit(
        session, {"model.sample", "", "", sampleTarget(target)},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<void> {
            auto checked = samplerArguments(policy_.sampling, arguments);
            if (!checked)
                return checked.error();
            call = std::move(checked).value();
            if (target.job != 0) {
                draft.details.push_back(audit::textDetail("step", std::to_string(target.step)));
                auto job = internal::loadJob(database_, target.job);
                if (!job)
                    return job.error();
                SEALTRAIN_TRY(
                    internal::requireReadRelease(gate_, caller, job->info.datasetId,
                                                 fmt::format("sampling job {}", target.job)));
                return checkpointRecorded(database_, target.job, target.step);
            }
            if (!target.model.empty()) {
                auto reference = parseModelReference(target.model);
                if (!reference)
                    return reference.error();
                return models_.requireSampleReadable(gate_, caller, *reference);
            }
            if (!runIdIsWellFormed(target.runId))
                return Error(ErrorCode::InvalidArgument,
                             "A run is named 'run-' and 16 hexadecimal digits, as `sealtrainctl "
                             "train` printed it; check the name.");
            return success();
        });
    if (!admitted)
        return admitted.error();
    return std::move(call).value();
}

}  // namespace sealtrain::core
