// The client library's DatasetsClient, AuditClient and TrainingClient (datasets_client.h,
// audit_client.h, training_client.h; the other handles in the other client*.cpp files).
#include "client_state.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>
#include <vector>

namespace sealtrain::api {

namespace v1 = sealtrain::v1;
using client_internal::kStreamTimeout;
using client_internal::setDeadline;
using client_internal::splitOf;
using client_internal::summaryOf;
using client_internal::withoutReply;

Result<DatasetCheckResult> DatasetsClient::verifyDataset(const std::string& reference)
{
    v1::ShowDatasetRequest request;
    request.set_dataset(reference);
    // Every shard is read and decrypted: as long as a large dataset takes.
    auto reply = state_->call(*state_->datasets, &v1::Datasets::Stub::VerifyDataset, request,
                              std::chrono::seconds(3600));
    if (!reply)
        return reply.error();
    return DatasetCheckResult{summaryOf(reply->dataset()), reply->shards(), reply->tokens(),
                              reply->signer()};
}

Result<DatasetDetails> DatasetsClient::showDataset(const std::string& reference)
{
    v1::ShowDatasetRequest request;
    request.set_dataset(reference);
    auto reply = state_->call(*state_->datasets, &v1::Datasets::Stub::ShowDataset, request);
    if (!reply)
        return reply.error();
    DatasetDetails details;
    details.dataset = summaryOf(reply->dataset());
    details.parent = reply->parent();
    details.creator = reply->creator();
    details.signer = reply->signer();
    details.createdUnix = reply->created_unix();
    details.readers.assign(reply->readers().begin(), reply->readers().end());
    if (reply->has_manifest()) {
        const v1::ManifestSummary& manifest = reply->manifest();
        details.manifest = ManifestFacts{manifest.tokenizer(),
                                         manifest.input_format(),
                                         splitOf(manifest.train()),
                                         splitOf(manifest.validation()),
                                         {manifest.counts().begin(), manifest.counts().end()},
                                         manifest.sources()};
    }
    return details;
}

Result<void> DatasetsClient::grantRead(const std::string& reference, const std::string& user)
{
    return changeReadGrant(reference, user, true);
}

Result<void> DatasetsClient::revokeRead(const std::string& reference, const std::string& user)
{
    return changeReadGrant(reference, user, false);
}

Result<void> DatasetsClient::changeReadGrant(const std::string& reference, const std::string& user,
                                             bool grant)
{
    v1::ReadGrantRequest request;
    request.set_dataset(reference);
    request.set_user(user);
    return withoutReply(state_->call(
        *state_->datasets, grant ? &v1::Datasets::Stub::GrantRead : &v1::Datasets::Stub::RevokeRead,
        request));
}

Result<std::vector<DatasetSummary>> DatasetsClient::listDatasets()
{
    return state_->allKeyedPages<DatasetSummary>(
        *state_->datasets, &v1::Datasets::Stub::ListDatasets,
        [](const v1::ListDatasetsReply& reply, std::vector<DatasetSummary>& datasets) {
            for (const v1::Dataset& dataset : reply.datasets())
                datasets.push_back(summaryOf(dataset));
        });
}

Result<ImportedDataset> DatasetsClient::importDataset(const ImportSettings& settings,
                                                      const std::vector<UploadFile>& files,
                                                      const UploadProgress& progress,
                                                      CallCancel* cancel)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
    v1::ImportDatasetReply reply;
    auto stream = state_->datasets->ImportDataset(&context, &reply);
    const client_internal::CancelScope scope(cancel, context);
    std::uint64_t total = 0;
    for (const UploadFile& file : files)
        total += file.size;

    v1::ImportChunk chunk;
    v1::ImportHeader* header = chunk.mutable_header();
    header->set_name(settings.name);
    header->set_format(settings.format);
    header->set_field(settings.field);
    header->set_classification(settings.classification);
    header->set_policy(settings.policy);
    header->set_redact_pii(settings.redactPii);
    header->set_max_record_bytes(settings.maxRecordBytes);
    header->set_validation_basis_points(settings.validationBasisPoints);
    header->set_tokens_per_shard(settings.tokensPerShard);
    header->set_gpt2_vocab_json(settings.gpt2VocabJson);
    header->set_gpt2_merges_txt(settings.gpt2MergesTxt);
    header->set_total_bytes(total);
    // A failed write means the server ended the call: its status (below) says why.
    bool open = stream->Write(chunk);
    if (open) {
        auto sent = client_internal::sendUploadFiles<v1::ImportChunk>(*stream, context, files,
                                                                      progress, total);
        if (!sent)
            return sent.error();
        open = *sent;
    }
    if (open)
        stream->WritesDone();
    const grpc::Status status = stream->Finish();
    if (!status.ok() && cancel != nullptr && cancel->cancelled())
        return Error(ErrorCode::FailedPrecondition,
                     "The import was cancelled; nothing was imported.");
    if (!status.ok())
        return state_->failure(status);
    return ImportedDataset{summaryOf(reply.dataset()), reply.parent(), reply.signer(),
                           reply.report_json()};
}

Result<std::string> AuditClient::exportAuditBundle(const AuditSelection& selection)
{
    auto exported = exportAudit(selection);
    if (!exported)
        return exported.error();
    return std::move(exported->bundle);
}

Result<AuditExport> AuditClient::exportAudit(const AuditSelection& selection)
{
    const v1::ExportBundleRequest request = client_internal::filterOf(selection);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
    auto stream = state_->audit->ExportBundle(&context, request);
    AuditExport exported;
    v1::BundleChunk chunk;
    while (stream->Read(&chunk)) {
        exported.bundle += chunk.data();
        if (!chunk.warning().empty())
            exported.warning = chunk.warning();
    }
    const grpc::Status status = stream->Finish();
    if (!status.ok())
        return state_->failure(status);
    return exported;
}

Result<SigningKeys> PlatformClient::signingKeys()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::GetSigningKeysReply reply;
    const grpc::Status status = state_->platform->GetSigningKeys(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    return SigningKeys{reply.audit_public_key_pem(), reply.manifests_public_key_pem(),
                       reply.checkpoints_public_key_pem(), reply.registry_public_key_pem(),
                       reply.artefact_root_pem()};
}

Result<TrainOutcome> TrainingClient::train(const std::string& dataset,
                                           const std::vector<std::string>& trainerArguments,
                                           const std::function<void(const std::string&)>& onMetrics)
{
    v1::TrainRequest request;
    request.set_dataset(dataset);
    for (const std::string& argument : trainerArguments)
        request.add_trainer_arguments(argument);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
    return state_->trainingStream(*state_->training->Train(&context, request), onMetrics);
}

Result<TrainOutcome>
TrainingClient::runJob(std::int64_t id, const std::function<void(const std::string&)>& onMetrics)
{
    v1::RunJobRequest request;
    request.set_id(id);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kStreamTimeout);
    return state_->trainingStream(*state_->training->RunJob(&context, request), onMetrics);
}

Result<TrainOutcome> client_internal::ClientState::trainingStream(
    grpc::ClientReader<v1::TrainEvent>& stream,
    const std::function<void(const std::string&)>& onMetrics) const
{
    TrainOutcome outcome;
    bool finished = false;
    v1::TrainEvent event;
    while (stream.Read(&event)) {
        if (event.has_finished()) {
            outcome.runId = event.finished().run_id();
            outcome.exitCode = event.finished().exit_code();
            outcome.checkpoints = event.finished().checkpoints();
            finished = true;
        } else if (onMetrics) {
            onMetrics(event.metrics_line());
        }
    }
    const grpc::Status status = stream.Finish();
    if (!status.ok())
        return failure(status);
    if (!finished)
        return Error(ErrorCode::Io, "The control plane ended the training call without saying "
                                    "how the run ended; check its log.");
    return outcome;
}

Result<SampleOutcome> TrainingClient::sample(const std::string& runId, std::uint64_t step,
                                             const std::vector<std::string>& samplerArguments,
                                             CallCancel* cancel)
{
    v1::SampleRequest request;
    request.set_run_id(runId);
    return state_->sample(request, step, samplerArguments, cancel);
}

Result<SampleOutcome> TrainingClient::sampleJob(std::int64_t job, std::uint64_t step,
                                                const std::vector<std::string>& samplerArguments,
                                                CallCancel* cancel)
{
    v1::SampleRequest request;
    request.set_job(job);
    return state_->sample(request, step, samplerArguments, cancel);
}

Result<SampleOutcome> TrainingClient::sampleModel(const std::string& reference,
                                                  const std::vector<std::string>& samplerArguments,
                                                  CallCancel* cancel)
{
    v1::SampleRequest request;
    request.set_model(reference);
    return state_->sample(request, 0, samplerArguments, cancel);
}

}  // namespace sealtrain::api
