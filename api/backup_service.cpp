// Platform.Backup (control.proto): the archive core/backup/backup.h takes, sent in pieces. Its
// moment (the head, the database copy, the small files, the list of objects) is taken alone,
// between group commits; the archive is written while the control plane serves (keyring changes
// wait for it), recorded alone again, and sent. One backup is taken or sent at a time, so at most
// one archive waits on disk, and it is removed once sent (or when the call fails).
#include "server_shared.h"
#include "status.h"

#include "sealtrain/base/folder_cleanup.h"
#include "sealtrain/core/backup/backup.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <grpcpp/grpcpp.h>

#include <mutex>
#include <vector>

namespace sealtrain::api::server_internal {

Status streamBackup(Shared& shared, const ServerContext& context,
                    const sealtrain::v1::BackupRequest& request,
                    grpc::ServerWriter<sealtrain::v1::BackupChunk>& writer)
{
    // The caller first (issue #27): an anonymous caller's request is never read.
    core::BackupOptions options;
    if (shared.isSignedIn(context) && request.reference_over_bytes() != 0)
        options.referenceOver = request.reference_over_bytes();
    std::unique_lock one(shared.backupLock, std::try_to_lock);
    options.busy = !one.owns_lock();
    const std::string session = [&] {
        (void)shared.serialOf(peerCertificate(context));
        const std::lock_guard guard(shared.lock);
        return callerOf(shared, context).token;
    }();
    Result<core::BackupMade> made = Error(ErrorCode::Internal, "No backup.");
    {
        // Keyring changes wait until the archive is written: the objects it reads after the
        // moment must stay under the keyring it holds.
        std::unique_lock writing(shared.backupWrite, std::defer_lock);
        if (!options.busy)
            writing.lock();
        Result<core::PreparedBackup> prepared = Error(ErrorCode::Internal, "No backup.");
        {
            const std::lock_guard guard(shared.lock);
            const Shared::OriginScope origin(shared, shared.originOf(context));
            prepared = core::prepareBackup(shared.platform, session, options);
        }
        if (!prepared)
            return Internal::toStatus(prepared.error());
        // The control plane serves meanwhile.
        auto written = core::writeBackup(shared.platform, *prepared);
        const std::lock_guard guard(shared.lock);
        const Shared::OriginScope origin(shared, shared.originOf(context));
        made = core::recordBackup(shared.platform, session, *prepared, std::move(written));
    }
    if (!made)
        return Internal::toStatus(made.error());
    const FolderCleanup cleanup(made->folder);
    auto source = FileSource::open(made->archive);
    if (!source)
        return Internal::toStatus(source.error());
    constexpr std::size_t kPiece = std::size_t{1} << 20U;
    std::vector<std::uint8_t> piece(kPiece);
    sealtrain::v1::BackupChunk chunk;
    chunk.set_head(made->head);
    chunk.set_sha256(made->sha256);
    chunk.set_total_bytes(made->bytes);
    chunk.set_files(made->files);
    chunk.set_referenced(made->referenced);
    chunk.set_referenced_bytes(made->referencedBytes);
    std::uint64_t at = 0;
    do {
        const auto n =
            static_cast<std::size_t>(std::min<std::uint64_t>(kPiece, (*source)->size() - at));
        if (auto read = (*source)->readAt(at, {piece.data(), n}); !read)
            return Internal::toStatus(read.error());
        chunk.set_data(piece.data(), n);
        if (!writer.Write(chunk))
            return {grpc::StatusCode::CANCELLED, "The client went away during the backup."};
        chunk.Clear();
        at += n;
    } while (at < (*source)->size());
    return Status::OK;
}

}  // namespace sealtrain::api::server_internal
