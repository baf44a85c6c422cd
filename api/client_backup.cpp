// PlatformClient::backup (platform_client.h): the control plane's archive received into a file,
// written atomically and checked against the digest the control plane announced.
#include "client_state.h"

#include "sealtrain/api/client.h"
#include "sealtrain/base/byte_io.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/hash.h"

#include <fmt/format.h>

#include <chrono>

namespace sealtrain::api {
namespace {

namespace v1 = client_internal::v1;

// A backup of a big control plane takes long to write and to send.
constexpr std::chrono::hours kBackupTimeout{12};

}  // namespace

Result<BackupReceived>
PlatformClient::backup(const std::filesystem::path& out, std::uint64_t referenceOver,
                       const std::function<void(std::uint64_t, std::uint64_t)>& progress)
{
    auto sink = AtomicFileSink::create(out);
    if (!sink)
        return sink.error();
    v1::BackupRequest request;
    request.set_reference_over_bytes(referenceOver);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kBackupTimeout);
    auto stream = state_->platform->Backup(&context, request);
    BackupReceived received;
    crypto::Sha256 hash;
    std::uint64_t got = 0;
    std::optional<Error> failed;
    v1::BackupChunk chunk;
    for (bool first = true; stream->Read(&chunk); first = false) {
        if (first)
            received = {chunk.head(),  chunk.sha256(),     chunk.total_bytes(),
                        chunk.files(), chunk.referenced(), chunk.referenced_bytes()};
        if (failed)
            continue;
        const auto bytes = asBytes(chunk.data());
        hash.update(bytes);
        got += bytes.size();
        if (auto written = (*sink)->write(bytes); !written) {
            failed = written.error();
            context.TryCancel();
            continue;
        }
        if (progress)
            progress(got, received.bytes);
    }
    const grpc::Status status = stream->Finish();
    if (failed)
        return *failed;
    if (!status.ok())
        return state_->failure(status);
    if (got != received.bytes || toHex(hash.finish()) != received.sha256)
        return Error(ErrorCode::Integrity,
                     fmt::format("The backup arrived damaged ({} of {} bytes, or a different "
                                 "SHA-256); nothing was written to '{}': take it again.",
                                 got, received.bytes, out.string()));
    SEALTRAIN_TRY((*sink)->commit());
    return received;
}

}  // namespace sealtrain::api
