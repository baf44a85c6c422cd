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
                                                   const ReturnedCheckpoints& checkpoints,
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
    SEALTRAIN_TRY(checkpoints.checkedJobCheckpoint(*checkpoint, signerPem));
    start.sealed = checkpoints.jobCheckpointFiles(version->jobId, version->step).sealed;
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

Result<std::int64_t> RegistryModelLookup::aliasVersion(const Database& database,
                                                       const std::string& name,
                                                       const std::string& alias) const
{
    return database.queryInteger(
        "SELECT v.version FROM model_aliases a JOIN model_versions v ON v.id = a.version_id "
        "WHERE a.name = ? AND a.alias = ?",
        {name, alias});
}

Result<StartingVersion> RegistryModelLookup::version(const Database& database,
                                                     const std::string& name,
                                                     std::int64_t version) const
{
    auto loaded = internal::loadVersion(database, name, version);
    if (!loaded)
        return loaded.error();
    StartingVersion facts;
    facts.label = loaded->label();
    facts.project = loaded->project;
    facts.digest = loaded->digest;
    facts.imported = loaded->imported();
    facts.jobId = loaded->jobId;
    facts.datasetId = loaded->datasetId;
    facts.tokenizer = loaded->tokenizer;
    facts.shape = loaded->shape;
    return facts;
}

Result<std::vector<std::string>> RegistryModelLookup::datasetsBehind(const Database& database,
                                                                     const std::string& name,
                                                                     std::int64_t version) const
{
    auto loaded = internal::loadVersion(database, name, version);
    if (!loaded)
        return loaded.error();
    return internal::datasetsBehind(database, *loaded);
}

Result<void> RegistryModelLookup::requireSampleReadable(AuditedTransactions& gate,
                                                        const Caller& caller,
                                                        const ModelReference& reference) const
{
    auto version = internal::resolveVersion(gate, caller, reference);
    if (!version)
        return version.error();
    auto readable = internal::requireLineageReadable(gate, caller, *version);
    if (!readable)
        return readable.error();
    return success();
}

}  // namespace sealtrain::core
