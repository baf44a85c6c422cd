// Receiving an imported model's folder (model_upload.h).
#include "model_upload.h"

#include "status.h"

#include "sealtrain/core/control_plane.h"

#include <fmt/format.h>

#include <algorithm>

namespace sealtrain::api::server_internal {
namespace {

grpc::Status invalid(const std::string& sentence)
{
    return Internal::toStatus(Error(ErrorCode::InvalidArgument, sentence));
}

grpc::Status overLimit(std::uint64_t limit)
{
    return Internal::toStatus(
        Error(ErrorCode::ResourceExhausted,
              fmt::format("The model is over this control plane's upload limit of {} bytes; ask "
                          "the operator to raise --max-import-bytes.",
                          limit)));
}

}  // namespace

grpc::Status startUpload(Shared& shared, grpc::ServerContext& context,
                         const RefuseBusyUpload& refuseBusy, UploadStart& start)
{
    start.caller = [&] {
        const std::lock_guard guard(shared.lock);
        return callerOf(shared, context);
    }();
    {
        const std::lock_guard guard(shared.lock);
        const Shared::OriginScope origin(shared, shared.originOf(context));
        if (auto session = shared.platform.controlPlane().identity().whoAmI(start.caller.token);
            !session)
            return Internal::toStatus(session.error());
    }
    start.slot = shared.uploadSlot();
    if (!start.slot) {
        const std::lock_guard guard(shared.lock);
        const Shared::OriginScope origin(shared, shared.originOf(context));
        return statusOf(refuseBusy(start.caller.token,
                                   fmt::format("The control plane is receiving {} uploads already; "
                                               "try again when one has finished.",
                                               shared.options.maxUploads)));
    }
    return grpc::Status::OK;
}

grpc::Status
receiveModelUpload(grpc::ServerReader<v1::ImportModelChunk>& reader, ModelUpload& upload,
                   const std::function<grpc::Status(const v1::ImportModelHeader&)>& admit,
                   IdleWatchdog& watchdog, std::uint64_t limit)
{
    v1::ImportModelChunk chunk;
    if (!reader.Read(&chunk) || !chunk.has_header())
        return invalid("A model import starts with its header; use a Sealtrain client of the "
                       "same version.");
    watchdog.progress();
    upload.header = chunk.header();
    if (grpc::Status admitted = admit(upload.header); !admitted.ok())
        return admitted;
    if (upload.header.total_bytes() > limit)
        return overLimit(limit);
    std::uint64_t received = 0;
    MemoryFile* current = nullptr;
    std::map<std::string, std::uint64_t> declared;
    while (reader.Read(&chunk)) {
        watchdog.progress();
        if (chunk.has_file()) {
            const std::string& name = chunk.file().name();
            if (std::find(kModelUploadFiles.begin(), kModelUploadFiles.end(), name)
                    == kModelUploadFiles.end()
                || upload.files.count(name) > 0)
                return invalid("A model import sends config.json, model.safetensors, vocab.json "
                               "and merges.txt, each once; send the folder save_pretrained "
                               "wrote.");
            auto file = MemoryFile::create(name);
            if (!file)
                return Internal::toStatus(file.error());
            current = &upload.files.emplace(name, std::move(file).value()).first->second;
            declared[name] = chunk.file().size();
        } else if (chunk.part_case() == v1::ImportModelChunk::kData) {
            if (current == nullptr)
                return invalid("The upload sent bytes before naming their file; use a Sealtrain "
                               "client of the same version.");
            received += chunk.data().size();
            if (received > limit)
                return overLimit(limit);
            if (auto written = current->append(chunk.data()); !written)
                return Internal::toStatus(written.error());
        } else {
            return invalid("A model import has one header; use a Sealtrain client of the same "
                           "version.");
        }
    }
    for (const char* name : kModelUploadFiles) {
        const auto found = upload.files.find(name);
        if (found == upload.files.end())
            return invalid(fmt::format("The folder has no {}; a GPT-2 folder to import holds "
                                       "config.json, model.safetensors, vocab.json and "
                                       "merges.txt.",
                                       name));
        // A stream cut short is not a model: every file must have arrived whole.
        if (found->second.size() != declared[name])
            return invalid(fmt::format("The upload of '{}' ended after {} of its {} bytes; "
                                       "nothing was imported, import it again.",
                                       name, found->second.size(), declared[name]));
    }
    return grpc::Status::OK;
}

}  // namespace sealtrain::api::server_internal
