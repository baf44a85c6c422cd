// The model registry's exports (registry.h, "Exports"; docs/registry.md): asked by one person,
// approved by another for the version's digest, and only then built and handed to whoever asked.
#include "sealtrain/core/registry/registry.h"
#include "sealtrain/core/registry/requests.h"

#include "registry/rows.h"
#include "sealtrain/base/utf8.h"
#include "sealtrain/core/access/permissions.h"
#include "sealtrain/core/store/reason_codes.h"
#include "store/audited_transaction.h"

#include "sealtrain/core/datasets/datasets.h"
#include "sealtrain/core/jobs/scheduling/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace sealtrain::core {
namespace internal {
namespace {

constexpr std::string_view kExportColumns =
    "e.id, v.name, v.version, e.digest, e.reason, r.name, e.requested, e.state, "
    "COALESCE(d.name, ''), COALESCE(e.decided, 0), e.decision_reason, e.downloads, "
    "e.folder_digest FROM model_exports e JOIN model_versions v ON v.id = e.version_id "
    "JOIN users r ON r.id = e.requested_by LEFT JOIN users d ON d.id = e.decided_by";

ModelExport readExport(const Statement& row)
{
    ModelExport exported;
    exported.id = row.integer(0);
    exported.model = row.text(1);
    exported.version = row.integer(2);
    exported.digest = row.text(3);
    exported.reason = row.text(4);
    exported.requestedBy = row.text(5);
    exported.requested = row.integer(6);
    const std::string state = row.text(7);
    exported.state = state == "approved"   ? PromotionState::Approved
                     : state == "rejected" ? PromotionState::Rejected
                                           : PromotionState::Pending;
    exported.decidedBy = row.text(8);
    exported.decided = row.integer(9);
    exported.decisionReason = row.text(10);
    exported.downloads = row.integer(11);
    exported.folderDigest = row.text(12);
    return exported;
}

}  // namespace

Result<std::vector<std::string>> datasetsBehind(const Database& database,
                                                const ModelVersion& version)
{
    std::vector<std::string> datasets;
    ModelVersion current = version;
    for (int depth = 0;; ++depth) {
        if (!current.datasetId.empty()
            && std::find(datasets.begin(), datasets.end(), current.datasetId) == datasets.end())
            datasets.push_back(current.datasetId);
        if (current.base.empty())
            return datasets;
        if (depth >= kMaxLineage)
            return Error(ErrorCode::FailedPrecondition,
                         fmt::format("The lineage of {} is over {} versions deep; export an "
                                     "earlier version.",
                                     version.label(), kMaxLineage));
        auto reference = parseModelReference(current.base);
        if (!reference)
            return reference.error();
        auto base = loadVersion(database, reference->name, reference->version);
        if (!base)
            return base.error();
        current = std::move(base).value();
    }
}

Result<std::vector<DatasetReaderView>>
requireLineageReadable(AuditedTransactions& gate, const Caller& caller, const ModelVersion& version)
{
    auto datasets = datasetsBehind(gate.database(), version);
    if (!datasets)
        return datasets.error();
    if (!datasets->empty() && !gate.holds(caller, permission::kDatasetRead, version.project))
        return denied(fmt::format("The user '{}' may not read data in project '{}', and {} "
                                  "carries its data; ask for dataset.read there.",
                                  caller.name, version.project, version.label()));
    std::vector<DatasetReaderView> views;
    for (const std::string& id : *datasets) {
        auto view = datasetForReader(gate.database(), id, caller.userId);
        if (!view)
            return view.error();
        if (!view->granted)
            return denied(fmt::format("The user '{}' has no read grant on the dataset '{}' that "
                                      "{} was trained on; ask its steward for one.",
                                      caller.name, view->dataset.name, version.label()));
        views.push_back(std::move(view).value());
    }
    return views;
}

Result<void> requireDataMayLeave(AuditedTransactions& gate, const Caller& caller,
                                 const ModelVersion& version,
                                 const std::vector<std::string>& allowed)
{
    auto views = requireLineageReadable(gate, caller, version);
    if (!views)
        return views.error();
    for (const DatasetReaderView& view : *views) {
        const std::string& classification = view.dataset.classification;
        if (std::find(allowed.begin(), allowed.end(), classification) == allowed.end())
            return denied(fmt::format("The model {} was trained on '{}' data ({}), which the job "
                                      "policy does not let leave the platform "
                                      "(exports.classifications).",
                                      version.label(), classification, view.dataset.name));
    }
    return success();
}

Result<ModelExport> loadExport(const Database& database, std::int64_t id)
{
    std::optional<ModelExport> loaded;
    auto found = database.queryOne("SELECT " + std::string(kExportColumns) + " WHERE e.id = ?",
                                   {id}, [&](const Statement& row) { loaded = readExport(row); });
    if (!found)
        return found.error();
    if (!loaded)
        return Error(ErrorCode::NotFound,
                     fmt::format("There is no export {}; see 'sealtrainctl model show NAME'.", id));
    return std::move(*loaded);
}

Result<std::vector<ModelExport>> loadExports(const Database& database, const std::string& name)
{
    std::vector<ModelExport> exports;
    SEALTRAIN_TRY(
        database.query("SELECT " + std::string(kExportColumns) + " WHERE v.name = ? ORDER BY e.id",
                       {name}, [&](const Statement& row) { exports.push_back(readExport(row)); }));
    return exports;
}

}  // namespace internal

namespace {

// An imported base model is not exported: whoever imported it has its folder.
Error importedExport(const ModelVersion& version)
{
    return Error(
        ErrorCode::Unsupported,
        fmt::format("Model version {} is an imported base model, which its source already holds; "
                    "export a version fine-tuned from it.",
                    version.label()));
}

// The project of export `id`'s model, read before the call's transaction.
std::string exportProject(const Database& database, std::int64_t id)
{
    std::string project;
    (void)database.queryOne("SELECT v.project FROM model_exports e JOIN model_versions v ON v.id "
                            "= e.version_id WHERE e.id = ?",
                            {id}, [&](const Statement& row) { project = row.text(0); });
    return project;
}

Result<void> requireReason(const std::string& reason)
{
    if (reason.size() > kMaxPromotionReason || !isValidUtf8(reason))
        return Error(
            ErrorCode::InvalidArgument,
            fmt::format("A reason is at most {} bytes of UTF-8; shorten it.", kMaxPromotionReason));
    return success();
}

}  // namespace

Result<ModelExport> Registry::requestExport(const std::string& session,
                                            const std::string& reference, const std::string& reason)
{
    auto parsed = parseModelReference(reference);
    const auto project = internal::modelProject(gate_.database(), parsed ? parsed->name : "");
    return gate_.performReturning(
        session,
        {"model.export_request",
         permission::kModelRegister,
         project && project->has_value() ? **project : "",
         {"model", reference}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<ModelExport> {
            if (!parsed)
                return parsed.error();
            if (parsed->version == 0)
                return Error(ErrorCode::InvalidArgument,
                             "An export names one version, as NAME@VERSION; an alias may move "
                             "after the approval.");
            SEALTRAIN_TRY(requireReason(reason));
            auto version = internal::loadVersion(gate_.database(), parsed->name, parsed->version);
            if (!version)
                return version.error();
            if (version->imported())
                return importedExport(*version);
            // The same data rule as every way out, at request and again at download.
            SEALTRAIN_TRY(internal::requireDataMayLeave(gate_, caller, *version,
                                                        scheduler_.policy().exportClassifications));
            auto pending = gate_.database().queryInteger(
                "SELECT COUNT(*) FROM model_exports e JOIN model_versions v ON v.id = "
                "e.version_id WHERE v.name = ? AND e.state = 'pending'",
                {parsed->name});
            if (!pending)
                return pending.error();
            if (*pending >= kMaxModelAliases)
                return Error(ErrorCode::ResourceExhausted,
                             fmt::format("The model '{}' has {} exports waiting for approval, the "
                                         "most it may have; have them approved or rejected.",
                                         parsed->name, kMaxModelAliases));
            SEALTRAIN_TRY(gate_.database().run(
                "INSERT INTO model_exports (version_id, digest, reason, requested_by, requested, "
                "state) SELECT id, digest, ?, ?, ?, 'pending' FROM model_versions WHERE name = ? "
                "AND version = ?",
                {reason, caller.userId, gate_.now(), parsed->name, parsed->version}));
            const std::int64_t id = gate_.database().lastInsertId();
            draft.details.push_back(audit::textDetail("export", std::to_string(id)));
            draft.details.push_back(audit::textDetail("digest", version->digest));
            return internal::loadExport(gate_.database(), id);
        });
}

Result<ModelExport> Registry::approveExport(const std::string& session, std::int64_t id,
                                            const std::string& digest)
{
    return decideExport(session, id, digest, "", true);
}

Result<ModelExport> Registry::rejectExport(const std::string& session, std::int64_t id,
                                           const std::string& reason)
{
    return decideExport(session, id, "", reason, false);
}

Result<ModelExport> Registry::decideExport(const std::string& session, std::int64_t id,
                                           const std::string& digest, const std::string& reason,
                                           bool approve)
{
    return gate_.performReturning(
        session,
        {approve ? "model.export_approve" : "model.export_reject",
         permission::kModelApprove,
         exportProject(gate_.database(), id),
         {"export", std::to_string(id)}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<ModelExport> {
            if (approve)
                draft.details.push_back(audit::textDetail("digest", digest));
            else if (!reason.empty())
                draft.details.push_back(audit::textDetail("reason", reason));
            SEALTRAIN_TRY(requireReason(reason));
            auto exported = internal::loadExport(gate_.database(), id);
            if (!exported)
                return exported.error();
            draft.details.push_back(audit::textDetail(
                "model", exported->model + "@" + std::to_string(exported->version)));
            auto requester = gate_.database().queryInteger(
                "SELECT requested_by FROM model_exports WHERE id = ?", {id});
            if (!requester)
                return requester.error();
            if (*requester == caller.userId)
                return denied("Nobody may decide on their own export; ask another approver.")
                    .because(reason::kOwnApproval);
            const PromotionState from = exported->state;
            if (!requestMayMove(RequestKind::Export, from,
                                approve ? PromotionState::Approved : PromotionState::Rejected,
                                RequestMover::Approver, draft.action))
                return Error(
                    ErrorCode::FailedPrecondition,
                    fmt::format("Export {} was {} already.", id, promotionStateName(from)));
            if (approve && digest != exported->digest)
                return Error(ErrorCode::FailedPrecondition,
                             fmt::format("Export {} is of {}@{} with digest {}; review that "
                                         "version with 'sealtrainctl model show {}' and approve "
                                         "its digest.",
                                         id, exported->model, exported->version, exported->digest,
                                         exported->model));
            SEALTRAIN_TRY(gate_.database().run(
                "UPDATE model_exports SET state = ?, decided_by = ?, decided = ?, "
                "decision_reason = ? WHERE id = ? AND state = ?",
                {approve ? "approved" : "rejected", caller.userId, gate_.now(), reason, id,
                 std::string(promotionStateName(from))}));
            return internal::loadExport(gate_.database(), id);
        });
}

Result<void> Registry::refuseBusyDownload(const std::string& session, std::int64_t id,
                                          const std::string& reason)
{
    auto caller = gate_.admit(session, {"model.export", "", "", {"export", std::to_string(id)}},
                              [&](const Caller&, audit::EntryDraft&) -> Result<void> {
                                  return Error(ErrorCode::ResourceExhausted, reason);
                              });
    if (!caller)
        return caller.error();
    return Error(ErrorCode::Internal, "A download refused as busy was let through; report it.");
}

Result<StagedExport> Registry::exportModel(const std::string& session, std::int64_t id)
{
    return gate_.performReturning(
        session,
        {"model.export",
         permission::kModelRegister,
         exportProject(gate_.database(), id),
         {"export", std::to_string(id)}},
        [&](const Caller& caller, audit::EntryDraft& draft) -> Result<StagedExport> {
            auto exported = internal::loadExport(gate_.database(), id);
            if (!exported)
                return exported.error();
            draft.details.push_back(audit::textDetail(
                "model", exported->model + "@" + std::to_string(exported->version)));
            auto requester = gate_.database().queryInteger(
                "SELECT requested_by FROM model_exports WHERE id = ?", {id});
            if (!requester)
                return requester.error();
            if (*requester != caller.userId)
                return denied(fmt::format("Export {} was asked for by {}; only they receive it.",
                                          id, exported->requestedBy));
            if (!requestMayMove(RequestKind::Export, exported->state, PromotionState::Approved,
                                RequestMover::Requester, draft.action))
                return denied(fmt::format("Export {} is {}; a second person approves it first.", id,
                                          promotionStateName(exported->state)));
            if (!export_)
                return Error(ErrorCode::FailedPrecondition,
                             "This control plane has no data directory to export from; start it "
                             "with one.");
            auto version =
                internal::loadVersion(gate_.database(), exported->model, exported->version);
            if (!version)
                return version.error();
            if (version->imported())
                return importedExport(*version);
            SEALTRAIN_TRY(internal::requireDataMayLeave(gate_, caller, *version,
                                                        scheduler_.policy().exportClassifications));
            auto chain = checkedChain(version->jobId, version->step);
            if (!chain)
                return chain.error();
            const CheckedCheckpoint& last = chain->back();
            auto folder = export_(last.recorded, last.signerPem,
                                  exported->model + "-" + std::to_string(exported->version));
            if (!folder)
                return folder.error();
            auto staged = StagedExport::stage(std::move(folder).value(), exportStaging_);
            if (!staged)
                return staged.error();
            SEALTRAIN_TRY(gate_.database().run("UPDATE model_exports SET downloads = downloads + "
                                               "1, folder_digest = ? WHERE id = ?",
                                               {staged->digest(), id}));
            draft.details.push_back(audit::textDetail("folder_digest", staged->digest()));
            return staged;
        });
}

}  // namespace sealtrain::core
