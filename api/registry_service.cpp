// The Registry service (registry.proto): model versions, aliases, promotions and lineage, each
// call mapped onto core's Registry (every rule and audit entry is there).
#include "model_upload.h"
#include "server_shared.h"
#include "status.h"

#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/registry/registry.h"

#include "sealtrain/v1/registry.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <span>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

void fillVersion(const core::ModelVersion& version, v1::ModelVersion* out)
{
    out->set_name(version.name);
    out->set_version(version.version);
    out->set_project(version.project);
    out->set_description(version.description);
    out->set_job(version.jobId);
    out->set_step(version.step);
    out->set_digest(version.digest);
    out->set_sealed_sha256(version.sealedSha256);
    out->set_worker(version.worker);
    out->set_dataset_id(version.datasetId);
    out->set_registered_by(version.registeredBy);
    out->set_registered_unix(version.registered);
    for (const std::string& alias : version.aliases)
        out->add_aliases(alias);
    out->set_statement(version.statement);
    out->set_source(version.source);
    out->set_tokenizer(version.tokenizer);
    out->set_shape(version.shape);
    out->set_base(version.base);
}

void fillPromotion(const core::Promotion& promotion, v1::Promotion* out)
{
    out->set_id(promotion.id);
    out->set_model(promotion.model);
    out->set_version(promotion.version);
    out->set_alias(promotion.alias);
    out->set_digest(promotion.digest);
    out->set_reason(promotion.reason);
    out->set_requested_by(promotion.requestedBy);
    out->set_requested_unix(promotion.requested);
    out->set_state(std::string(core::promotionStateName(promotion.state)));
    out->set_decided_by(promotion.decidedBy);
    out->set_decided_unix(promotion.decided);
    out->set_decision_reason(promotion.decisionReason);
    out->set_previous_version(promotion.previousVersion);
    out->set_statement(promotion.statement);
}

void fillExport(const core::ModelExport& exported, v1::ModelExport* out)
{
    out->set_id(exported.id);
    out->set_model(exported.model);
    out->set_version(exported.version);
    out->set_digest(exported.digest);
    out->set_reason(exported.reason);
    out->set_requested_by(exported.requestedBy);
    out->set_requested_unix(exported.requested);
    out->set_state(std::string(core::promotionStateName(exported.state)));
    out->set_decided_by(exported.decidedBy);
    out->set_decided_unix(exported.decided);
    out->set_decision_reason(exported.decisionReason);
    out->set_downloads(exported.downloads);
    out->set_folder_digest(exported.folderDigest);
}

constexpr std::size_t kChunkBytes = std::size_t{1} << 20U;

class RegistryService final : public v1::Registry::Service {
public:
    explicit RegistryService(Shared& shared)
        : shared_(shared)
    {
    }

    Status RegisterModel(ServerContext* context, const v1::RegisterModelRequest* request,
                         v1::ModelVersionReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto version = registry().registerVersion(
                callerOf(shared_, *context).token,
                {request->name(), request->description(), request->job(), request->step()});
            if (!version)
                return Internal::toStatus(version.error());
            fillVersion(*version, reply->mutable_version());
            return Status::OK;
        });
    }

    Status ListModels(ServerContext* context, const v1::ListModelsRequest* /*request*/,
                      v1::ListModelsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto models = registry().list(callerOf(shared_, *context).token);
            if (!models)
                return Internal::toStatus(models.error());
            for (const core::ModelSummary& model : *models) {
                v1::ModelSummary* out = reply->add_models();
                out->set_name(model.name);
                out->set_project(model.project);
                out->set_versions(model.versions);
                out->set_pending_promotions(model.pendingPromotions);
                for (const auto& [alias, version] : model.aliases) {
                    v1::ModelAlias* named = out->add_aliases();
                    named->set_alias(alias);
                    named->set_version(version);
                }
            }
            return Status::OK;
        });
    }

    Status ShowModel(ServerContext* context, const v1::ModelNameRequest* request,
                     v1::ModelReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto model = registry().show(callerOf(shared_, *context).token, request->name());
            if (!model)
                return Internal::toStatus(model.error());
            v1::Model* out = reply->mutable_model();
            out->set_name(model->name);
            out->set_project(model->project);
            for (const core::ModelVersion& version : model->versions)
                fillVersion(version, out->add_versions());
            for (const core::Promotion& promotion : model->promotions)
                fillPromotion(promotion, out->add_promotions());
            for (const core::ModelExport& exported : model->exports)
                fillExport(exported, out->add_exports());
            return Status::OK;
        });
    }

    Status RequestPromotion(ServerContext* context, const v1::PromotionRequest* request,
                            v1::PromotionReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto promotion = registry().requestPromotion(callerOf(shared_, *context).token,
                                                         request->name(), request->version(),
                                                         request->alias(), request->reason());
            if (!promotion)
                return Internal::toStatus(promotion.error());
            fillPromotion(*promotion, reply->mutable_promotion());
            return Status::OK;
        });
    }

    Status ApprovePromotion(ServerContext* context, const v1::DecidePromotionRequest* request,
                            v1::PromotionReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto promotion = registry().approvePromotion(callerOf(shared_, *context).token,
                                                         request->id(), request->digest());
            if (!promotion)
                return Internal::toStatus(promotion.error());
            fillPromotion(*promotion, reply->mutable_promotion());
            return Status::OK;
        });
    }

    Status RejectPromotion(ServerContext* context, const v1::DecidePromotionRequest* request,
                           v1::PromotionReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto promotion = registry().rejectPromotion(callerOf(shared_, *context).token,
                                                        request->id(), request->reason());
            if (!promotion)
                return Internal::toStatus(promotion.error());
            fillPromotion(*promotion, reply->mutable_promotion());
            return Status::OK;
        });
    }

    Status ModelLineage(ServerContext* context, const v1::ModelReferenceRequest* request,
                        v1::LineageReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto document =
                registry().lineage(callerOf(shared_, *context).token, request->reference());
            if (!document)
                return Internal::toStatus(document.error());
            reply->set_document(*document);
            return Status::OK;
        });
    }

    Status RequestExport(ServerContext* context, const v1::ExportRequest* request,
                         v1::ExportReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto exported = registry().requestExport(callerOf(shared_, *context).token,
                                                     request->reference(), request->reason());
            if (!exported)
                return Internal::toStatus(exported.error());
            fillExport(*exported, reply->mutable_model_export());
            return Status::OK;
        });
    }

    Status ApproveExport(ServerContext* context, const v1::DecideExportRequest* request,
                         v1::ExportReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto exported = registry().approveExport(callerOf(shared_, *context).token,
                                                     request->id(), request->digest());
            if (!exported)
                return Internal::toStatus(exported.error());
            fillExport(*exported, reply->mutable_model_export());
            return Status::OK;
        });
    }

    Status RejectExport(ServerContext* context, const v1::DecideExportRequest* request,
                        v1::ExportReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto exported = registry().rejectExport(callerOf(shared_, *context).token,
                                                    request->id(), request->reason());
            if (!exported)
                return Internal::toStatus(exported.error());
            fillExport(*exported, reply->mutable_model_export());
            return Status::OK;
        });
    }

    // One of the download slots (options.maxDownloads; a refusal is audited with the caller),
    // then the export built and staged sealed on disk inside the commit group, then streamed
    // from there a chunk at a time outside it.
    Status DownloadExport(ServerContext* context, const v1::ExportIdRequest* request,
                          grpc::ServerWriter<v1::ExportChunk>* writer) override
    {
        const auto slot = shared_.downloadSlot();
        if (!slot) {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            return statusOf(registry().refuseBusyDownload(
                callerOf(shared_, *context).token, request->id(),
                fmt::format("The control plane is sending {} downloads already; try again when "
                            "one has finished.",
                            shared_.options.maxDownloads)));
        }
        std::optional<core::StagedExport> staged;
        Status built = shared_.inGroup(*context, [&]() -> Status {
            auto exported =
                registry().exportModel(callerOf(shared_, *context).token, request->id());
            if (!exported)
                return Internal::toStatus(exported.error());
            staged = std::move(exported).value();
            return Status::OK;
        });
        if (!built.ok())
            return built;
        bool first = true;
        bool gone = false;
        for (std::size_t i = 0; i < staged->files().size(); ++i) {
            const core::StagedExport::File& file = staged->files()[i];
            bool started = false;
            auto sent = staged->read(i, kChunkBytes, [&](std::span<const std::uint8_t> piece) {
                v1::ExportChunk chunk;
                if (first)
                    chunk.set_folder_digest(staged->digest());
                first = false;
                if (!started) {
                    chunk.set_name(file.name);
                    chunk.set_size(file.size);
                }
                started = true;
                chunk.set_data(piece.data(), piece.size());
                gone = !writer->Write(chunk);
                return !gone;
            });
            if (gone || context->IsCancelled())
                return Status(grpc::StatusCode::CANCELLED, "The caller went away.");
            if (!sent)
                return Internal::toStatus(sent.error());
        }
        return Status::OK;
    }

    // Like a dataset import (datasets_service.cpp): a signed-in caller only, one of the upload
    // slots, the permission checked with the header, the files in memory; then the import, which
    // checks, seals and registers, or keeps nothing.
    Status ImportModel(ServerContext* context, grpc::ServerReader<v1::ImportModelChunk>* reader,
                       v1::ModelVersionReply* reply) override
    {
        UploadStart start;
        if (Status started = startUpload(
                shared_, *context,
                [&](const std::string& token, const std::string& reason) {
                    return registry().refuseBusyImport(token, reason);
                },
                start);
            !started.ok())
            return started;
        const Caller& caller = start.caller;
        IdleWatchdog watchdog(*context, shared_.options.uploadIdleTimeout);
        ModelUpload upload;
        bool refusedAtAdmission = false;  // then audited already
        const auto admit = [&](const v1::ImportModelHeader& header) -> Status {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            auto admitted = registry().admitImport(caller.token, header.name(), header.project());
            refusedAtAdmission = !admitted;
            return statusOf(admitted);
        };
        // Every other refusal of the upload is audited with the caller too (issue #54).
        const auto refuse = [&](const Error& why) -> Status {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            return Internal::toStatus(registry().refuseImport(caller.token, upload.header.name(),
                                                              upload.header.project(), why));
        };
        auto received =
            receiveModelUpload(*reader, upload, admit, watchdog, shared_.options.maxImportBytes);
        if (watchdog.fired())
            return refuse(Error(ErrorCode::ResourceExhausted,
                                "The upload sent nothing for too long and was cancelled; import "
                                "again."));
        if (context->IsCancelled())
            return {grpc::StatusCode::CANCELLED,
                    "The client went away during the upload; nothing was imported."};
        if (!received.ok())
            return refusedAtAdmission ? received
                                      : refuse(Internal::fromStatus(received, "model upload"));
        const core::ImportModel request{upload.header.name(),
                                        upload.header.project(),
                                        upload.header.description(),
                                        upload.files.at("config.json").path(),
                                        upload.files.at("model.safetensors").path(),
                                        upload.files.at("vocab.json").path(),
                                        upload.files.at("merges.txt").path()};
        const std::lock_guard guard(shared_.lock);
        const Shared::OriginScope origin(shared_, shared_.originOf(*context));
        auto version = registry().importModel(caller.token, request);
        if (!version)
            return Internal::toStatus(version.error());
        fillVersion(*version, reply->mutable_version());
        return Status::OK;
    }

private:
    core::Registry& registry() { return shared_.platform.controlPlane().registry(); }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeRegistryService(Shared& shared)
{
    return std::make_unique<RegistryService>(shared);
}

}  // namespace sealtrain::api::server_internal
