// The model a fine-tuning job starts from (registry/starting_model.h).
#include "sealtrain/core/registry/starting_model.h"

#include "registry/base_models.h"
#include "registry/rows.h"

#include "sealtrain/core/jobs/scheduling/scheduler.h"
#include "sealtrain/core/registry/registry.h"
#include "sealtrain/formats/job_spec.h"

#include <fmt/format.h>

#include <algorithm>

namespace sealtrain::core {

Result<std::optional<StartingModel>> startingModel(Database& database, Scheduler& scheduler,
                                                   const KeyRelease& keys,
                                                   const BaseModelStore& store,
                                                   const formats::JobSpec& spec)
{
    if (spec.model.init.empty())
        return std::optional<StartingModel>();
    auto reference = parseModelReference(spec.model.init);
    if (!reference)
        return reference.error();
    if (reference->version == 0)
        return Error(ErrorCode::FailedPrecondition,
                     fmt::format("The job's model.init '{}' was not pinned to a version by its "
                                 "vetting; submit the job again.",
                                 spec.model.init));
    auto version = internal::loadVersion(database, reference->name, reference->version);
    if (!version)
        return version.error();
    StartingModel start;
    start.name = version->label();
    start.sha256 = version->digest.substr(version->digest.find(':') + 1);
    if (version->imported()) {
        SEALTRAIN_TRY(checkImport(store, *version));
        start.sealed = baseModelFolder(store, version->name, version->version) / "model.sealed";
        return std::optional(std::move(start));
    }
    std::string signerPem;
    auto found = database.queryOne(
        "SELECT w.signing_key FROM job_checkpoints c JOIN workers w ON w.id = c.worker_id "
        "WHERE c.job_id = ? AND c.step = ?",
        {version->jobId, version->step}, [&](const Statement& row) { signerPem = row.text(0); });
    if (!found)
        return found.error();
    auto recorded = scheduler.checkpoints(version->jobId);
    if (!recorded)
        return recorded.error();
    const auto checkpoint =
        std::find_if(recorded->begin(), recorded->end(),
                     [&](const JobCheckpoint& c) { return c.step == version->step; });
    if (!*found || checkpoint == recorded->end())
        return Error(ErrorCode::Integrity,
                     fmt::format("The checkpoint of {} is not recorded; restore the database "
                                 "from a backup.",
                                 version->label()));
    SEALTRAIN_TRY(keys.checkedJobCheckpoint(*checkpoint, signerPem));
    start.sealed = keys.jobCheckpointFiles(version->jobId, version->step).sealed;
    start.job = version->jobId;
    return std::optional(std::move(start));
}

Result<std::string> startingDigest(const Database& database, const formats::JobSpec& spec)
{
    if (spec.model.init.empty())
        return std::string();
    auto reference = parseModelReference(spec.model.init);
    if (!reference)
        return reference.error();
    auto version = internal::loadVersion(database, reference->name, reference->version);
    if (!version)
        return version.error();
    return version->digest.substr(version->digest.find(':') + 1);
}

}  // namespace sealtrain::core
