// The client library's RegistryClient (registry_client.h; registry.proto).
#include "client_state.h"
#include "file_transfer.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/base/folder_cleanup.h"
#include "sealtrain/crypto/random.h"

#include <fmt/format.h>

#include <utility>

namespace sealtrain::api {

namespace v1 = sealtrain::v1;

namespace {

ModelVersionView viewOf(const v1::ModelVersion& version)
{
    ModelVersionView view;
    view.name = version.name();
    view.version = version.version();
    view.project = version.project();
    view.description = version.description();
    view.job = version.job();
    view.step = version.step();
    view.digest = version.digest();
    view.sealedSha256 = version.sealed_sha256();
    view.worker = version.worker();
    view.datasetId = version.dataset_id();
    view.registeredBy = version.registered_by();
    view.registeredUnix = version.registered_unix();
    view.aliases.assign(version.aliases().begin(), version.aliases().end());
    view.statement = version.statement();
    view.source = version.source();
    view.tokenizer = version.tokenizer();
    view.shape = version.shape();
    view.base = version.base();
    return view;
}

PromotionView viewOf(const v1::Promotion& promotion)
{
    PromotionView view;
    view.id = promotion.id();
    view.model = promotion.model();
    view.version = promotion.version();
    view.alias = promotion.alias();
    view.digest = promotion.digest();
    view.reason = promotion.reason();
    view.requestedBy = promotion.requested_by();
    view.requestedUnix = promotion.requested_unix();
    view.state = promotion.state();
    view.decidedBy = promotion.decided_by();
    view.decidedUnix = promotion.decided_unix();
    view.decisionReason = promotion.decision_reason();
    view.previousVersion = promotion.previous_version();
    view.statement = promotion.statement();
    return view;
}

ModelExportView viewOf(const v1::ModelExport& exported)
{
    ModelExportView view;
    view.id = exported.id();
    view.model = exported.model();
    view.version = exported.version();
    view.digest = exported.digest();
    view.reason = exported.reason();
    view.requestedBy = exported.requested_by();
    view.requestedUnix = exported.requested_unix();
    view.state = exported.state();
    view.decidedBy = exported.decided_by();
    view.decidedUnix = exported.decided_unix();
    view.decisionReason = exported.decision_reason();
    view.downloads = exported.downloads();
    view.folderDigest = exported.folder_digest();
    return view;
}

// An export holds a handful of files (docs/formats/model-export.md); a model of GPT-2's largest
// sizes is a few GiB.
constexpr std::size_t kMaxExportFiles = 16;
constexpr std::uint64_t kMaxExportBytes = std::uint64_t{64} << 30U;

}  // namespace

Result<ModelVersionView> RegistryClient::registerModel(const std::string& name,
                                                       const std::string& description,
                                                       std::int64_t job, std::int64_t step)
{
    v1::RegisterModelRequest request;
    request.set_name(name);
    request.set_description(description);
    request.set_job(job);
    request.set_step(step);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::RegisterModel, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->version());
}

Result<ModelVersionView> RegistryClient::importModel(const ModelImportRequest& request,
                                                     const UploadProgress& progress)
{
    // The four files, read from the folder as save_pretrained wrote them; a missing one is
    // named before anything is sent.
    std::vector<UploadFile> files;
    std::uint64_t total = 0;
    for (const char* name : {"config.json", "model.safetensors", "vocab.json", "merges.txt"}) {
        const std::filesystem::path path = std::filesystem::path(request.folder) / name;
        std::error_code ec;
        const auto size = std::filesystem::file_size(path, ec);
        if (ec)
            return Error(ErrorCode::NotFound,
                         fmt::format("The folder '{}' has no readable {}; a GPT-2 folder to "
                                     "import holds config.json, model.safetensors, vocab.json "
                                     "and merges.txt (save_pretrained writes them).",
                                     request.folder, name));
        files.push_back({path, name, size});
        total += size;
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + client_internal::kStreamTimeout);
    v1::ModelVersionReply reply;
    auto stream = state_->registry->ImportModel(&context, &reply);
    v1::ImportModelChunk chunk;
    v1::ImportModelHeader* header = chunk.mutable_header();
    header->set_name(request.name);
    header->set_project(request.project);
    header->set_description(request.description);
    header->set_total_bytes(total);
    bool open = stream->Write(chunk);
    if (open) {
        auto sent = client_internal::sendUploadFiles<v1::ImportModelChunk>(*stream, context, files,
                                                                           progress, total);
        if (!sent)
            return sent.error();
        open = *sent;
    }
    if (open)
        stream->WritesDone();
    const grpc::Status status = stream->Finish();
    if (!status.ok())
        return state_->failure(status);
    return viewOf(reply.version());
}

Result<std::vector<ModelSummaryView>> RegistryClient::listModels()
{
    auto reply =
        state_->call(*state_->registry, &v1::Registry::Stub::ListModels, v1::ListModelsRequest());
    if (!reply)
        return reply.error();
    std::vector<ModelSummaryView> models;
    for (const v1::ModelSummary& model : reply->models()) {
        ModelSummaryView view{
            model.name(), model.project(), model.versions(), model.pending_promotions(), {}};
        for (const v1::ModelAlias& alias : model.aliases())
            view.aliases.emplace_back(alias.alias(), alias.version());
        models.push_back(std::move(view));
    }
    return models;
}

Result<ModelView> RegistryClient::showModel(const std::string& name)
{
    v1::ModelNameRequest request;
    request.set_name(name);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::ShowModel, request);
    if (!reply)
        return reply.error();
    ModelView view;
    view.name = reply->model().name();
    view.project = reply->model().project();
    for (const v1::ModelVersion& version : reply->model().versions())
        view.versions.push_back(viewOf(version));
    for (const v1::Promotion& promotion : reply->model().promotions())
        view.promotions.push_back(viewOf(promotion));
    for (const v1::ModelExport& exported : reply->model().exports())
        view.exports.push_back(viewOf(exported));
    return view;
}

Result<PromotionView> RegistryClient::requestPromotion(const std::string& name,
                                                       std::int64_t version,
                                                       const std::string& alias,
                                                       const std::string& reason)
{
    v1::PromotionRequest request;
    request.set_name(name);
    request.set_version(version);
    request.set_alias(alias);
    request.set_reason(reason);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::RequestPromotion, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->promotion());
}

Result<PromotionView> RegistryClient::approvePromotion(std::int64_t id, const std::string& digest)
{
    v1::DecidePromotionRequest request;
    request.set_id(id);
    request.set_digest(digest);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::ApprovePromotion, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->promotion());
}

Result<PromotionView> RegistryClient::rejectPromotion(std::int64_t id, const std::string& reason)
{
    v1::DecidePromotionRequest request;
    request.set_id(id);
    request.set_reason(reason);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::RejectPromotion, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->promotion());
}

Result<std::string> RegistryClient::modelLineage(const std::string& reference)
{
    v1::ModelReferenceRequest request;
    request.set_reference(reference);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::ModelLineage, request);
    if (!reply)
        return reply.error();
    return reply->document();
}

Result<ModelExportView> RegistryClient::requestExport(const std::string& reference,
                                                      const std::string& reason)
{
    v1::ExportRequest request;
    request.set_reference(reference);
    request.set_reason(reason);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::RequestExport, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->model_export());
}

Result<ModelExportView> RegistryClient::approveExport(std::int64_t id, const std::string& digest)
{
    v1::DecideExportRequest request;
    request.set_id(id);
    request.set_digest(digest);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::ApproveExport, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->model_export());
}

Result<ModelExportView> RegistryClient::rejectExport(std::int64_t id, const std::string& reason)
{
    v1::DecideExportRequest request;
    request.set_id(id);
    request.set_reason(reason);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::RejectExport, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->model_export());
}

Result<std::string> RegistryClient::downloadExport(std::int64_t id,
                                                   const std::filesystem::path& folder)
{
    std::error_code ec;
    if (std::filesystem::exists(folder, ec))
        return Error(ErrorCode::AlreadyExists,
                     fmt::format("'{}' exists already; name a folder that does not, so that "
                                 "nothing is mixed into the export.",
                                 folder.string()));
    const std::filesystem::path target = std::filesystem::absolute(folder);
    const std::filesystem::path temporary =
        target.parent_path()
        / fmt::format(".{}.partial-{}", target.filename().string(), toHex(crypto::randomBytes(6)));
    if (!std::filesystem::create_directory(temporary, ec))
        return Error(ErrorCode::Io, fmt::format("Cannot make a folder beside '{}' ({}); check "
                                                "the path and its permissions.",
                                                target.string(), ec.message()));
    FolderCleanup cleanup(temporary);
    v1::ExportIdRequest request;
    request.set_id(id);
    std::string digest;
    auto files = state_->receiveFiles<v1::ExportChunk>(
        [&](grpc::ClientContext& context) {
            return state_->registry->DownloadExport(&context, request);
        },
        temporary, kMaxExportBytes, kMaxExportFiles,
        [&](const v1::ExportChunk& first) -> Result<void> {
            digest = first.folder_digest();
            return success();
        });
    if (!files)
        return files.error();
    if (files->empty() || digest.empty())
        return Error(ErrorCode::Integrity, "The export ended early; download it again.");
    std::filesystem::rename(temporary, target, ec);
    if (ec)
        return Error(ErrorCode::Io, fmt::format("Cannot move the export into '{}' ({}); check "
                                                "that nothing else made it.",
                                                target.string(), ec.message()));
    cleanup.keep();
    return digest;
}

}  // namespace sealtrain::api
