// Receiving an imported model's folder (Registry.ImportModel; registry.proto): the header first,
// which the caller's permission is checked against before any data is held, then the four files
// of a Hugging Face GPT-2 folder, each in memory and whole as declared, within the operator's
// limit. Not installed.
#pragma once

#include "memory_file.h"
#include "server_shared.h"

#include "sealtrain/v1/registry.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

namespace sealtrain::api::server_internal {

// The files an import sends, each once.
inline constexpr std::array<const char*, 4> kModelUploadFiles{"config.json", "model.safetensors",
                                                              "vocab.json", "merges.txt"};

struct ModelUpload {
    v1::ImportModelHeader header;
    std::map<std::string, MemoryFile> files;  // by name, each of kModelUploadFiles
};

// The start of an upload (a dataset's, a model's): the caller, who must be signed in, and one
// of the --max-uploads slots while `slot` lives. A busy control plane refuses through
// `refuseBusy`, which audits the refusal with the caller and returns its error.
struct UploadStart {
    Caller caller;
    std::shared_ptr<void> slot;
};
using RefuseBusyUpload =
    std::function<Result<void>(const std::string& token, const std::string& reason)>;
[[nodiscard]] grpc::Status startUpload(Shared& shared, grpc::ServerContext& context,
                                       const RefuseBusyUpload& refuseBusy, UploadStart& start);

// Reads the stream into `upload`; `admit` decides on the header. A refusal (a status that is not
// OK) says in one sentence what to send instead.
[[nodiscard]] grpc::Status
receiveModelUpload(grpc::ServerReader<v1::ImportModelChunk>& reader, ModelUpload& upload,
                   const std::function<grpc::Status(const v1::ImportModelHeader&)>& admit,
                   IdleWatchdog& watchdog, std::uint64_t limit);

}  // namespace sealtrain::api::server_internal
