// The Datasets service (control.proto, "Datasets"): uploads held in memory (memfd) and sealed by
// the import, the listing, manifests and read grants. The import permission is checked with the
// upload's header, before any data is held (issue #27).
#include "model_upload.h"
#include "server_shared.h"
#include "status.h"

#include "sealtrain/core/control_plane.h"
#include "sealtrain/core/datasets/uploads.h"
#include "sealtrain/core/keys/key_release.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

// An upload as the stream delivered it: the header, each file in memory, the tokenizer files.
struct Upload {
    v1::ImportHeader header;
    std::vector<MemoryFile> files;
    std::vector<std::uint64_t> declared;  // each file's size as its first chunk named it
    std::optional<MemoryFile> vocab;
    std::optional<MemoryFile> merges;
};

Status invalidUpload(const std::string& sentence)
{
    return Internal::toStatus(Error(ErrorCode::InvalidArgument, sentence));
}

void fillDataset(const core::DatasetInfo& info, v1::Dataset& out)
{
    out.set_id(info.id);
    out.set_name(info.name);
    out.set_version(info.version);
    out.set_classification(info.classification);
    out.set_records(info.records);
    out.set_tokens(info.tokens);
}

void fillSplit(const core::SplitSummary& split, v1::DatasetSplit& out)
{
    out.set_records(split.records);
    out.set_tokens(split.tokens);
    out.set_shards(split.shards);
}

void fillSummary(const core::ManifestSummary& manifest, v1::ManifestSummary& out)
{
    out.set_tokenizer(manifest.tokenizer);
    out.set_input_format(manifest.inputFormat);
    fillSplit(manifest.train, *out.mutable_train());
    fillSplit(manifest.validation, *out.mutable_validation());
    for (const auto& [name, count] : manifest.counts)
        (*out.mutable_counts())[name] = count;
    out.set_sources(manifest.sources);
}

// The upload's settings in core's terms (core::prepareImport judges them).
core::DatasetUpload uploadOf(const Upload& upload)
{
    const v1::ImportHeader& header = upload.header;
    core::DatasetUpload described;
    described.name = header.name();
    for (const MemoryFile& file : upload.files) {
        described.inputs.push_back(file.path());
        described.inputNames.push_back(file.name());
    }
    described.format = header.format();
    described.field = header.field();
    described.classification = header.classification();
    described.policy = header.policy();
    described.redactPii = header.redact_pii();
    described.maxRecordBytes = header.max_record_bytes();
    described.validationBasisPoints = header.validation_basis_points();
    described.tokensPerShard = header.tokens_per_shard();
    if (upload.vocab)
        described.gpt2Vocab = upload.vocab->path();
    if (upload.merges)
        described.gpt2Merges = upload.merges->path();
    return described;
}

class DatasetsService final : public v1::Datasets::Service {
public:
    explicit DatasetsService(Shared& shared)
        : shared_(shared)
    {
    }

    Status ListDatasets(ServerContext* context, const v1::ListDatasetsRequest* request,
                        v1::ListDatasetsReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto datasets = shared_.platform.controlPlane().datasets().list(
                callerOf(shared_, *context).token, keyedPage(*request));
            if (!datasets)
                return Internal::toStatus(datasets.error());
            for (const core::DatasetInfo& dataset : *datasets)
                fillDataset(dataset, *reply->add_datasets());
            reply->set_next_after(datasets->nextAfter);
            return Status::OK;
        });
    }

    Status ShowDataset(ServerContext* context, const v1::ShowDatasetRequest* request,
                       v1::ShowDatasetReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto info = shared_.platform.controlPlane().datasets().show(
                callerOf(shared_, *context).token, request->dataset());
            if (!info)
                return Internal::toStatus(info.error());
            fillDataset(*info, *reply->mutable_dataset());
            reply->set_parent(info->parent);
            reply->set_creator(info->creator);
            reply->set_signer(info->signer);
            reply->set_created_unix(info->created);
            for (const std::string& reader : info->readers)
                reply->add_readers(reader);
            if (auto manifest = core::manifestSummary(shared_.platform.datasetsRoot(), info->id);
                manifest)
                fillSummary(*manifest, *reply->mutable_manifest());
            return Status::OK;
        });
    }

    // The release check in a group; the check itself, which reads every shard, outside it.
    Status VerifyDataset(ServerContext* context, const v1::ShowDatasetRequest* request,
                         v1::VerifyDatasetReply* reply) override
    {
        core::DatasetInfo info;
        Status authorised = shared_.inGroup(*context, [&]() -> Status {
            auto found = shared_.platform.controlPlane().datasets().authorizeRead(
                callerOf(shared_, *context).token, request->dataset(), "verify");
            if (!found)
                return Internal::toStatus(found.error());
            info = std::move(found).value();
            return Status::OK;
        });
        if (!authorised.ok())
            return authorised;
        auto checked = core::KeyRelease(shared_.platform.keyVault()).verifyDataset(info.id);
        if (!checked)
            return Internal::toStatus(checked.error());
        fillDataset(info, *reply->mutable_dataset());
        reply->set_shards(checked->shards);
        reply->set_tokens(checked->tokens);
        reply->set_signer(checked->signer);
        return Status::OK;
    }

    Status GrantRead(ServerContext* context, const v1::ReadGrantRequest* request,
                     v1::ReadGrantReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().datasets().grantRead(
                callerOf(shared_, *context).token, request->dataset(), request->user()));
        });
    }

    Status RevokeRead(ServerContext* context, const v1::ReadGrantRequest* request,
                      v1::ReadGrantReply* /*reply*/) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            return statusOf(shared_.platform.controlPlane().datasets().revokeRead(
                callerOf(shared_, *context).token, request->dataset(), request->user()));
        });
    }

    Status ImportDataset(ServerContext* context, grpc::ServerReader<v1::ImportChunk>* reader,
                         v1::ImportDatasetReply* reply) override
    {
        // Only a signed-in caller may upload at all; whether they may import is decided (and
        // audited) by the import itself, before any file is written.
        UploadStart start;
        if (Status started = startUpload(
                shared_, *context,
                [&](const std::string& token, const std::string& reason) {
                    return shared_.platform.controlPlane().datasets().refuseBusyUpload(token,
                                                                                       reason);
                },
                start);
            !started.ok())
            return started;
        const Caller& caller = start.caller;
        // An upload that sends nothing for uploadIdleTimeout is cancelled, so a stalled stream
        // holds its thread, its slot and its memory no longer than that.
        IdleWatchdog watchdog(*context, shared_.options.uploadIdleTimeout);
        Upload upload;
        // The import's permission is checked with the header, before a byte of data is held.
        bool refusedAtAdmission = false;  // then audited already
        const auto admit = [&](const v1::ImportHeader& header) -> Status {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            auto admitted =
                shared_.platform.controlPlane().datasets().admitUpload(caller.token, header.name());
            refusedAtAdmission = !admitted;
            return statusOf(admitted);
        };
        // Every later refusal of the upload is audited with the caller too (issue #54).
        const auto refuse = [&](const Error& why) -> Status {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            return Internal::toStatus(shared_.platform.controlPlane().datasets().refuseUpload(
                caller.token, upload.header.name(), why));
        };
        auto received = receive(*reader, upload, admit, watchdog);
        if (watchdog.fired())
            return refuse(Error(ErrorCode::ResourceExhausted,
                                "The upload sent nothing for too long and was cancelled; import "
                                "again."));
        // A client that went away (cancelled, cut off) imports nothing, however much it sent.
        const auto gone = [] {
            return Status{grpc::StatusCode::CANCELLED,
                          "The client went away during the upload; nothing was imported."};
        };
        if (context->IsCancelled())
            return gone();
        if (!received.ok())
            return refusedAtAdmission ? received : refuse(Internal::fromStatus(received, "upload"));

        auto prepared = core::prepareImport(uploadOf(upload), shared_.platform.datasetsRoot());
        if (!prepared)
            return refuse(prepared.error());
        if (context->IsCancelled())
            return gone();

        const std::lock_guard guard(shared_.lock);
        const Shared::OriginScope origin(shared_, shared_.originOf(*context));
        auto kek = shared_.platform.datasetsKek();
        if (!kek)
            return Internal::toStatus(kek.error());
        auto imported = shared_.platform.controlPlane().datasets().importDataset(
            caller.token, prepared->request, *prepared->tokenizer, **kek,
            shared_.platform.manifestsKey());
        if (!imported)
            return Internal::toStatus(imported.error());
        const core::DatasetInfo& info = imported->info;
        fillDataset(info, *reply->mutable_dataset());
        reply->set_parent(info.parent);
        reply->set_signer(info.signer);
        reply->set_report_json(imported->report.toJson());
        return Status::OK;
    }

private:
    // Reads the stream into memory: a header first (which `admit` checks before anything else is
    // read), then each file's name and its bytes; the watchdog hears of every message.
    Status receive(grpc::ServerReader<v1::ImportChunk>& reader, Upload& upload,
                   const std::function<Status(const v1::ImportHeader&)>& admit,
                   IdleWatchdog& watchdog) const
    {
        v1::ImportChunk chunk;
        if (!reader.Read(&chunk) || !chunk.has_header())
            return invalidUpload("An import stream starts with its header; use a Sealtrain "
                                 "client of the same version.");
        watchdog.progress();
        upload.header = chunk.header();
        if (Status admitted = admit(upload.header); !admitted.ok())
            return admitted;
        const std::uint64_t limit = shared_.options.maxImportBytes;
        if (upload.header.total_bytes() > limit)
            return Internal::toStatus(
                Error(ErrorCode::ResourceExhausted,
                      fmt::format("The upload ({} bytes) is over this control plane's limit of {} "
                                  "bytes; import it in parts, as versions, or ask the operator to "
                                  "raise --max-import-bytes.",
                                  upload.header.total_bytes(), limit)));
        std::uint64_t received = 0;
        for (const auto* part :
             {&upload.header.gpt2_vocab_json(), &upload.header.gpt2_merges_txt()}) {
            if (part->empty())
                continue;
            auto file = MemoryFile::create(part == &upload.header.gpt2_vocab_json() ? "vocab.json"
                                                                                    : "merges.txt");
            if (!file)
                return Internal::toStatus(file.error());
            if (auto written = file->append(*part); !written)
                return Internal::toStatus(written.error());
            (part == &upload.header.gpt2_vocab_json() ? upload.vocab : upload.merges)
                .emplace(std::move(file).value());
        }
        while (reader.Read(&chunk)) {
            watchdog.progress();
            if (chunk.has_file()) {
                if (!core::isPlainUploadName(chunk.file().name()))
                    return invalidUpload("An uploaded file's name must be a relative path of "
                                         "plain parts (no '..', no leading '/', no control "
                                         "characters); rename it and import again.");
                auto file = MemoryFile::create(chunk.file().name());
                if (!file)
                    return Internal::toStatus(file.error());
                upload.files.push_back(std::move(file).value());
                upload.declared.push_back(chunk.file().size());
            } else if (chunk.part_case() == v1::ImportChunk::kData) {
                if (upload.files.empty())
                    return invalidUpload("The upload sent bytes before naming their file; use a "
                                         "Sealtrain client of the same version.");
                received += chunk.data().size();
                if (received > limit)
                    return Internal::toStatus(Error(
                        ErrorCode::ResourceExhausted,
                        fmt::format("The upload is over this control plane's limit of {} bytes; "
                                    "import it in parts or ask the operator to raise "
                                    "--max-import-bytes.",
                                    limit)));
                if (auto written = upload.files.back().append(chunk.data()); !written)
                    return Internal::toStatus(written.error());
            } else {
                return invalidUpload("An import stream has one header; use a Sealtrain client "
                                     "of the same version.");
            }
        }
        if (upload.files.empty())
            return invalidUpload("The upload holds no files; name a file or a folder with text "
                                 "in it.");
        // A stream that ends early (a client cut off, a reader that stopped) is not a dataset:
        // every file must have arrived whole, as its first chunk declared.
        for (std::size_t i = 0; i < upload.files.size(); ++i) {
            if (upload.files[i].size() != upload.declared[i])
                return invalidUpload(fmt::format(
                    "The upload of '{}' ended after {} of its {} bytes; nothing was imported, "
                    "import it again.",
                    upload.files[i].name(), upload.files[i].size(), upload.declared[i]));
        }
        return Status::OK;
    }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeDatasetsService(Shared& shared)
{
    return std::make_unique<DatasetsService>(shared);
}

}  // namespace sealtrain::api::server_internal
