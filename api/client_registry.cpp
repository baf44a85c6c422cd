// The client library's calls on the model registry (client.h, "The model registry";
// registry.proto).
#include "client_state.h"

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

}  // namespace

Result<ModelVersionView> ControlClient::registerModel(const std::string& name,
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

Result<std::vector<ModelSummaryView>> ControlClient::listModels()
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

Result<ModelView> ControlClient::showModel(const std::string& name)
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
    return view;
}

Result<PromotionView> ControlClient::requestPromotion(const std::string& name, std::int64_t version,
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

Result<PromotionView> ControlClient::approvePromotion(std::int64_t id, const std::string& digest)
{
    v1::DecidePromotionRequest request;
    request.set_id(id);
    request.set_digest(digest);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::ApprovePromotion, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->promotion());
}

Result<PromotionView> ControlClient::rejectPromotion(std::int64_t id, const std::string& reason)
{
    v1::DecidePromotionRequest request;
    request.set_id(id);
    request.set_reason(reason);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::RejectPromotion, request);
    if (!reply)
        return reply.error();
    return viewOf(reply->promotion());
}

Result<std::string> ControlClient::modelLineage(const std::string& reference)
{
    v1::ModelReferenceRequest request;
    request.set_reference(reference);
    auto reply = state_->call(*state_->registry, &v1::Registry::Stub::ModelLineage, request);
    if (!reply)
        return reply.error();
    return reply->document();
}

}  // namespace sealtrain::api
