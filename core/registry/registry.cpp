// The model registry's versions and reads (registry.h); promotions are in registry/promotions.cpp,
// the statements and the lineage document in registry/statements.cpp.
#include "sealtrain/core/registry/registry.h"

#include "jobs/rows.h"
#include "registry/rows.h"
#include "sealtrain/base/utf8.h"
#include "sealtrain/core/access/permissions.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace sealtrain::core {
namespace {

using internal::modelProject;

Error noSuchModel(const std::string& name)
{
    return Error(ErrorCode::NotFound,
                 fmt::format("There is no model '{}'; see 'sealtrainctl model list'.", name));
}

Result<void> requireCaption(std::string_view text, std::size_t limit, std::string_view what)
{
    if (text.size() > limit || !isValidUtf8(text))
        return Error(ErrorCode::InvalidArgument,
                     fmt::format("A {} is at most {} bytes of UTF-8; shorten it.", what, limit));
    return success();
}

// The newest recorded checkpoint of `jobId` at `step` (0: the newest); NotFound, saying what to do.
Result<JobCheckpoint> recordedCheckpoint(Scheduler& scheduler, std::int64_t jobId,
                                         std::int64_t step)
{
    auto checkpoints = scheduler.checkpoints(jobId);
    if (!checkpoints)
        return checkpoints.error();
    for (auto it = checkpoints->rbegin(); it != checkpoints->rend(); ++it)
        if (step == 0 || it->step == step)
            return *it;
    return Error(ErrorCode::NotFound,
                 step == 0 ? fmt::format("Job {} has no recorded checkpoint; only a checkpoint the "
                                         "control plane verified can be registered.",
                                         jobId)
                           : fmt::format("Job {} has no recorded checkpoint at step {}; see "
                                         "'sealtrainctl run show {}' for its checkpoints.",
                                         jobId, step, jobId));
}

}  // namespace

std::string_view promotionStateName(PromotionState state)
{
    switch (state) {
    case PromotionState::Pending: return "pending";
    case PromotionState::Approved: return "approved";
    case PromotionState::Rejected: return "rejected";
    }
    return "pending";
}

Registry::Registry(AuditedTransactions& gate, Scheduler& scheduler)
    : gate_(gate)
    , scheduler_(scheduler)
{
}

Result<std::string> Registry::checkCheckpoint(const JobCheckpoint& checkpoint,
                                              std::string& signerPem) const
{
    if (!check_ || key_ == nullptr)
        return Error(ErrorCode::FailedPrecondition,
                     "This control plane has no data directory to check checkpoints in; start it "
                     "with one.");
    // The key of the worker that uploaded it (a name freed by a revocation may be enrolled again).
    auto pem = gate_.database().queryOne(
        "SELECT w.signing_key FROM job_checkpoints c JOIN workers w ON w.id = c.worker_id WHERE "
        "c.job_id = ? AND c.step = ?",
        {checkpoint.jobId, checkpoint.step},
        [&](const Statement& row) { signerPem = row.text(0); });
    if (!pem)
        return pem.error();
    if (!*pem)
        return Error(ErrorCode::Integrity,
                     fmt::format("The worker '{}' that signed the checkpoint is not known; restore "
                                 "the database from a backup.",
                                 checkpoint.worker));
    return check_(checkpoint, signerPem);
}

Result<std::vector<CheckedCheckpoint>> Registry::checkedChain(std::int64_t jobId,
                                                              std::int64_t step) const
{
    auto recorded = scheduler_.checkpoints(jobId);
    if (!recorded)
        return recorded.error();
    std::vector<CheckedCheckpoint> chain;
    for (JobCheckpoint& checkpoint : *recorded) {
        if (checkpoint.step > step)
            break;
        CheckedCheckpoint checked;
        auto envelope = checkCheckpoint(checkpoint, checked.signerPem);
        if (!envelope)
            return envelope.error();
        checked.envelope = std::move(envelope).value();
        checked.recorded = std::move(checkpoint);
        chain.push_back(std::move(checked));
    }
    if (chain.empty() || chain.back().recorded.step != step)
        return Error(ErrorCode::NotFound,
                     fmt::format("Job {} has no recorded checkpoint at step {}; see "
                                 "'sealtrainctl run show {}' for its checkpoints.",
                                 jobId, step, jobId));
    return chain;
}

Result<ModelVersion> Registry::registerVersion(const std::string& session,
                                               const RegisterModel& request)
{
    AuditedRequest audited = internal::jobRequest(gate_.database(), request.jobId, "register",
                                                  permission::kModelRegister);
    audited.action = "model.register";
    audited.target = {"model", request.name};
    return gate_.performReturning(
        session, audited,
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<ModelVersion> {
            draft.details.push_back(audit::textDetail("job", std::to_string(request.jobId)));
            draft.details.push_back(audit::textDetail("step", std::to_string(request.step)));
            SEALTRAIN_TRY(requireValidName("model", request.name));
            SEALTRAIN_TRY(requireCaption(request.description, kMaxModelDescription,
                                         "model version's description"));
            auto job = internal::visibleJob(gate_, caller, request.jobId);
            if (!job)
                return job.error();
            auto project = modelProject(gate_.database(), request.name);
            if (!project)
                return project.error();
            if (project->has_value() && **project != job->info.project)
                return denied(fmt::format("The model '{}' belongs to project '{}'; register job "
                                          "{} of project '{}' under another name.",
                                          request.name, **project, request.jobId,
                                          job->info.project));
            auto checkpoint = recordedCheckpoint(scheduler_, request.jobId, request.step);
            if (!checkpoint)
                return checkpoint.error();
            draft.details.back() = audit::textDetail("step", std::to_string(checkpoint->step));
            auto chain = checkedChain(request.jobId, checkpoint->step);
            if (!chain)
                return chain.error();
            auto taken = gate_.database().exists(
                "SELECT 1 FROM model_versions WHERE name = ? AND job_id = ? AND step = ?",
                {request.name, request.jobId, checkpoint->step});
            if (!taken)
                return taken.error();
            if (*taken)
                return Error(ErrorCode::AlreadyExists,
                             fmt::format("The checkpoint of job {} at step {} is already a "
                                         "version of '{}'; see 'sealtrainctl model show {}'.",
                                         request.jobId, checkpoint->step, request.name,
                                         request.name));
            auto newest = gate_.database().queryInteger(
                "SELECT COALESCE(MAX(version), 0) FROM model_versions WHERE name = ?",
                {request.name});
            if (!newest)
                return newest.error();
            ModelVersion version;
            version.name = request.name;
            version.version = *newest + 1;
            version.project = job->info.project;
            version.description = request.description;
            version.jobId = request.jobId;
            version.step = checkpoint->step;
            version.digest = "sha256:" + checkpoint->plaintextSha256;
            version.sealedSha256 = checkpoint->sealedSha256;
            version.worker = checkpoint->worker;
            version.datasetId = job->info.datasetId;
            if (auto spec = formats::parseJobSpec(job->info.specJson, formats::kJobSpecCeiling);
                spec)
                version.base = spec->model.init;  // pinned to NAME@VERSION by the job's vetting
            version.registeredBy = caller.name;
            version.registered = gate_.now();
            auto statement = internal::registrationStatement(version, job->info, *chain, *key_);
            if (!statement)
                return statement.error();
            version.statement = std::move(statement).value();
            SEALTRAIN_TRY(gate_.database().run(
                "INSERT INTO model_versions (name, version, project, description, job_id, step, "
                "digest, sealed_sha256, worker, dataset_id, base, registered_by, registered, "
                "statement) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                {version.name, version.version, version.project, version.description, version.jobId,
                 version.step, version.digest, version.sealedSha256, version.worker,
                 version.datasetId, version.base, caller.userId, version.registered,
                 version.statement}));
            draft.target.id = version.name + "@" + std::to_string(version.version);
            draft.details.push_back(audit::textDetail("digest", version.digest));
            return version;
        });
}

Result<std::vector<ModelSummary>> Registry::list(const std::string& session)
{
    return gate_.performReturning(
        session, {"model.list", "", "", {"model", "*"}},
        [&](const Caller& caller, audit::EntryDraft&) -> Result<std::vector<ModelSummary>> {
            std::vector<ModelSummary> models;
            SEALTRAIN_TRY(gate_.database().query(
                "SELECT name, project, COUNT(*), (SELECT COUNT(*) FROM model_promotions p JOIN "
                "model_versions v ON v.id = p.version_id WHERE v.name = m.name AND p.state = "
                "'pending') FROM model_versions m GROUP BY name, project ORDER BY name",
                {}, [&](const Statement& row) {
                    models.push_back(
                        {row.text(0), row.text(1), row.integer(2), row.integer(3), {}});
                }));
            std::erase_if(models, [&](const ModelSummary& model) {
                return !internal::mayReadModels(gate_, caller, model.project);
            });
            for (ModelSummary& model : models)
                SEALTRAIN_TRY(gate_.database().query(
                    "SELECT a.alias, v.version FROM model_aliases a JOIN model_versions v ON v.id "
                    "= a.version_id WHERE a.name = ? ORDER BY a.alias",
                    {model.name}, [&](const Statement& row) {
                        model.aliases.emplace_back(row.text(0), row.integer(1));
                    }));
            return models;
        });
}

Result<ModelInfo> Registry::show(const std::string& session, const std::string& name)
{
    const auto project = modelProject(gate_.database(), name);
    return gate_.performReturning(
        session,
        {"model.show", "", project && project->has_value() ? **project : "", {"model", name}},
        [&](const Caller& caller, audit::EntryDraft&) -> Result<ModelInfo> {
            auto info = internal::loadModel(gate_, caller, name);
            if (!info)
                return info.error();
            if (info->versions.empty())
                return noSuchModel(name);
            return info;
        });
}

Result<ResolvedModel> Registry::resolve(const std::string& session, const std::string& reference,
                                        const std::string& purpose)
{
    auto parsed = parseModelReference(reference);
    const std::string name = parsed ? parsed->name : std::string();
    const auto project = modelProject(gate_.database(), name);
    return gate_.performReturning(
        session,
        {"model.use", "", project && project->has_value() ? **project : "", {"model", reference}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<ResolvedModel> {
            draft.details.push_back(audit::textDetail("purpose", purpose));
            if (!parsed)
                return parsed.error();
            auto version = internal::resolveVersion(gate_, caller, *parsed);
            if (!version)
                return version.error();
            if (version->imported())
                return Error(
                    ErrorCode::Unsupported,
                    fmt::format("Model version {} is an imported base model, which is not sampled "
                                "from directly; fine-tune it (a job with model.init) "
                                "and sample from that version.",
                                version->label()));
            auto checkpoint = recordedCheckpoint(scheduler_, version->jobId, version->step);
            if (!checkpoint)
                return checkpoint.error();
            ResolvedModel resolved;
            auto envelope = checkCheckpoint(*checkpoint, resolved.signerPem);
            if (!envelope)
                return envelope.error();
            draft.target.id = version->name + "@" + std::to_string(version->version);
            draft.details.push_back(audit::textDetail("digest", version->digest));
            resolved.version = std::move(version).value();
            resolved.checkpoint = std::move(checkpoint).value();
            return resolved;
        });
}

}  // namespace sealtrain::core
