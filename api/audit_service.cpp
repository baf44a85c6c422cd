// The Audit service (control.proto, "Audit"): signed export bundles, streamed in pieces.
#include "server_shared.h"
#include "status.h"

#include "sealtrain/core/access.h"
#include "sealtrain/core/control_plane.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace sealtrain::api::server_internal {
namespace {

namespace v1 = sealtrain::v1;
using grpc::ServerContext;
using grpc::Status;

class AuditService final : public v1::Audit::Service {
public:
    explicit AuditService(Shared& shared)
        : shared_(shared)
    {
    }

    Status ExportBundle(ServerContext* context, const v1::ExportBundleRequest* request,
                        grpc::ServerWriter<v1::BundleChunk>* writer) override
    {
        audit::ExportFilter filter;
        if (request->has_from_time_ns())
            filter.fromTimeNs = request->from_time_ns();
        if (request->has_to_time_ns())
            filter.toTimeNs = request->to_time_ns();
        filter.actor = request->actor();
        filter.action = request->action();
        filter.targetKind = request->target_kind();
        filter.targetId = request->target_id();
        Result<std::string> bundle = Error(ErrorCode::Internal, "No bundle.");
        {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            bundle = shared_.platform.controlPlane().auditQueries().exportBundle(
                callerOf(shared_, *context).token, filter);
        }
        if (!bundle)
            return Internal::toStatus(bundle.error());
        // Whoever reads the export learns how far four eyes held (issue #27, item 3).
        std::optional<std::string> warning;
        {
            const std::lock_guard guard(shared_.lock);
            auto admins = shared_.platform.controlPlane().access().adminNames();
            if (!admins)
                return Internal::toStatus(admins.error());
            warning = core::fourEyesWarning(*admins);
        }
        constexpr std::size_t kPiece = std::size_t{1} << 20U;
        v1::BundleChunk chunk;
        chunk.set_warning(warning.value_or(""));
        for (std::size_t at = 0; at < bundle->size(); at += kPiece) {
            chunk.set_data(bundle->substr(at, kPiece));
            if (!writer->Write(chunk))
                return {grpc::StatusCode::CANCELLED, "The client went away during the export."};
            chunk.clear_warning();
        }
        return Status::OK;
    }

private:
    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeAuditService(Shared& shared)
{
    return std::make_unique<AuditService>(shared);
}

}  // namespace sealtrain::api::server_internal
