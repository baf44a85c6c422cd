// Imported base models (registry.h): a Hugging Face GPT-2 folder registered as a version, and the
// one check of a version's files that promotions, exports, lineage and fine-tuning share.
#include "sealtrain/core/registry/registry.h"

#include "registry/rows.h"
#include "sealtrain/base/utf8.h"
#include "sealtrain/core/access/permissions.h"
#include "store/audited_transaction.h"

#include <fmt/format.h>

namespace sealtrain::core {
namespace {

// Who may import: model.register in the project, checked with the upload's header and again
// with the import.
AuditedRequest importRequest(const std::string& name, const std::string& project)
{
    return {"model.import", permission::kModelRegister, project, {"model", name}};
}

}  // namespace

Result<void> Registry::checkVersionFiles(const ModelVersion& version) const
{
    if (!version.imported()) {
        auto chain = checkedChain(version.jobId, version.step);
        if (!chain)
            return chain.error();
        return success();
    }
    if (!importCheck_)
        return Error(ErrorCode::FailedPrecondition,
                     "This control plane has no data directory to check models in; start it "
                     "with one.");
    return importCheck_(version);
}

Result<void> Registry::admitImport(const std::string& session, const std::string& name,
                                   const std::string& project)
{
    auto caller = gate_.admit(session, importRequest(name, project),
                              [&](const Caller&, audit::EntryDraft&) -> Result<void> {
                                  SEALTRAIN_TRY(requireValidName("model", name));
                                  return requireValidName("project", project);
                              });
    if (!caller)
        return caller.error();
    return success();
}

Result<void> Registry::refuseBusyImport(const std::string& session, const std::string& reason)
{
    return refuseImport(session, "", "", Error(ErrorCode::ResourceExhausted, reason));
}

Error Registry::refuseImport(const std::string& session, const std::string& name,
                             const std::string& project, const Error& why)
{
    // Before a header there is no project to check a permission in: the caller's session alone.
    const AuditedRequest request = name.empty()
                                       ? AuditedRequest{"model.import", "", "", {"model", "*"}}
                                       : importRequest(name.substr(0, 256), project);
    auto caller = gate_.admit(
        session, request, [&](const Caller&, audit::EntryDraft&) -> Result<void> { return why; });
    if (!caller)
        return caller.error();
    return Error(ErrorCode::Internal, "A refused import was let through; report it.");
}

Result<ModelVersion> Registry::importModel(const std::string& session, const ImportModel& upload)
{
    return gate_.performReturning(
        session, importRequest(upload.name, upload.project),
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<ModelVersion> {
            SEALTRAIN_TRY(requireValidName("model", upload.name));
            SEALTRAIN_TRY(requireValidName("project", upload.project));
            if (upload.description.size() > kMaxModelDescription
                || !isValidUtf8(upload.description))
                return Error(ErrorCode::InvalidArgument,
                             fmt::format("A model version's description is at most {} bytes of "
                                         "UTF-8; shorten it.",
                                         kMaxModelDescription));
            if (!importStore_ || key_ == nullptr)
                return Error(ErrorCode::FailedPrecondition,
                             "This control plane has no data directory to keep models in; start "
                             "it with one.");
            auto project = internal::modelProject(gate_.database(), upload.name);
            if (!project)
                return project.error();
            if (project->has_value() && **project != upload.project)
                return denied(fmt::format("The model '{}' belongs to project '{}'; import into "
                                          "project '{}' under another name.",
                                          upload.name, **project, upload.project));
            auto newest = gate_.database().queryInteger(
                "SELECT COALESCE(MAX(version), 0) FROM model_versions WHERE name = ?",
                {upload.name});
            if (!newest)
                return newest.error();
            ModelVersion version;
            version.name = upload.name;
            version.version = *newest + 1;
            version.project = upload.project;
            version.description = upload.description;
            version.source = std::string(kVersionImported);
            // The same model twice under one name is refused before anything is written.
            const auto accept = [&](const StoredImport& found) -> Result<void> {
                for (const auto& [file, sha256] : found.sources)
                    draft.details.push_back(audit::textDetail(file, "sha256:" + sha256));
                auto taken = gate_.database().exists(
                    "SELECT 1 FROM model_versions WHERE name = ? AND digest = ? AND source = ?",
                    {upload.name, found.digest, std::string(kVersionImported)});
                if (!taken)
                    return taken.error();
                if (*taken)
                    return Error(ErrorCode::AlreadyExists,
                                 fmt::format("This model is already a version of '{}' (digest "
                                             "{}); see 'sealtrainctl model show {}'.",
                                             upload.name, found.digest, upload.name));
                return success();
            };
            auto stored = importStore_(upload, version.name, version.version, accept);
            if (!stored)
                return stored.error();
            version.digest = stored->digest;
            version.sealedSha256 = stored->sealedSha256;
            version.tokenizer = stored->tokenizer;
            version.shape = stored->shape;
            version.registeredBy = caller.name;
            version.registered = gate_.now();
            version.statement = internal::importStatement(version, *stored, *key_);
            SEALTRAIN_TRY(gate_.database().run(
                "INSERT INTO model_versions (name, version, project, description, source, job_id, "
                "step, digest, sealed_sha256, worker, dataset_id, tokenizer, shape, registered_by, "
                "registered, statement) VALUES (?, ?, ?, ?, ?, NULL, 0, ?, ?, '', '', ?, ?, ?, ?, "
                "?)",
                {version.name, version.version, version.project, version.description,
                 version.source, version.digest, version.sealedSha256, version.tokenizer,
                 version.shape, caller.userId, version.registered, version.statement}));
            draft.target.id = version.label();
            draft.details.push_back(audit::textDetail("digest", version.digest));
            return version;
        });
}

}  // namespace sealtrain::core
