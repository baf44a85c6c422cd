// The Audit service (control.proto, "Audit"): signed export bundles, streamed in pieces.
#include "server_shared.h"
#include "status.h"

#include "sealtrain/base/encoding.h"
#include "sealtrain/core/access/access.h"
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
        // The caller first (issue #27): an anonymous caller's filter is never read.
        const audit::ExportFilter filter =
            shared_.isSignedIn(*context) ? filterOf(*request) : audit::ExportFilter{};
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

    Status QueryEntries(ServerContext* context, const v1::QueryEntriesRequest* request,
                        v1::QueryEntriesReply* reply) override
    {
        // The caller first (issue #27): an anonymous caller's fields are never read; core
        // refuses the empty query below, and audits it.
        core::AuditQuery query;
        const bool signedIn = shared_.isSignedIn(*context);
        if (signedIn) {
            query.filter = filterOf(request->filter());
            query.cursor = request->cursor();
            query.limit = request->limit() == 0 ? 200U : request->limit();
            query.oldestFirst = request->oldest_first();
        }
        // Judged by core after the caller (issue #54).
        if (signedIn)
            query.outcome = request->outcome();
        // A read: run between groups, like an export, so that a long scan holds no group.
        Result<core::AuditPage> page = Error(ErrorCode::Internal, "No page.");
        {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            page = shared_.platform.controlPlane().auditQueries().query(
                callerOf(shared_, *context).token, query);
        }
        if (!page)
            return Internal::toStatus(page.error());
        for (const audit::Entry& entry : page->entries)
            fillEntry(entry, reply->add_entries());
        reply->set_next_cursor(page->nextCursor);
        reply->set_log_size(page->logSize);
        return Status::OK;
    }

    Status VerifyLog(ServerContext* context, const v1::VerifyLogRequest*,
                     v1::VerifyLogReply* reply) override
    {
        Result<audit::StoreVerification> checked = Error(ErrorCode::Internal, "No check.");
        {
            const std::lock_guard guard(shared_.lock);
            const Shared::OriginScope origin(shared_, shared_.originOf(*context));
            checked = shared_.platform.controlPlane().auditQueries().verifyLog(
                callerOf(shared_, *context).token);
        }
        if (!checked)
            return Internal::toStatus(checked.error());
        reply->set_ok(checked->ok());
        if (checked->failure)
            reply->set_error(checked->failure->message());
        reply->set_entries(checked->entries);
        reply->set_heads(checked->heads);
        reply->set_witness_heads(checked->witnessHeads);
        if (checked->newestHead) {
            reply->set_newest_head_size(checked->newestHead->size);
            reply->set_newest_head_unix(checked->newestHead->timeSeconds);
            reply->set_newest_head_root(toHex(checked->newestHead->root));
        }
        reply->set_key_id(shared_.platform.signingKey().publicKey().keyId());
        return Status::OK;
    }

    Status NewestHead(ServerContext* context, const v1::NewestHeadRequest*,
                      v1::NewestHeadReply* reply) override
    {
        return shared_.inGroup(*context, [&]() -> Status {
            auto head = shared_.platform.controlPlane().auditQueries().newestHead(
                callerOf(shared_, *context).token);
            if (!head)
                return Internal::toStatus(head.error());
            reply->set_signed_note(*head);
            return Status::OK;
        });
    }

private:
    static audit::ExportFilter filterOf(const v1::ExportBundleRequest& request)
    {
        audit::ExportFilter filter;
        if (request.has_from_time_ns())
            filter.fromTimeNs = request.from_time_ns();
        if (request.has_to_time_ns())
            filter.toTimeNs = request.to_time_ns();
        filter.actor = request.actor();
        filter.action = request.action();
        filter.targetKind = request.target_kind();
        filter.targetId = request.target_id();
        return filter;
    }

    static void fillEntry(const audit::Entry& entry, v1::AuditEntry* out)
    {
        out->set_sequence(entry.sequence);
        out->set_time_ns(entry.timeNs);
        out->set_actor_kind(audit::actorKindName(entry.actor.kind));
        out->set_actor(entry.actor.id);
        out->set_actor_session(entry.actor.session);
        out->set_auth_method(entry.actor.authMethod);
        out->set_action(entry.action);
        out->set_target_kind(entry.target.kind);
        out->set_target_id(entry.target.id);
        out->set_outcome(audit::outcomeName(entry.outcome));
        out->set_reason(entry.reason);
        out->set_request_id(entry.requestId);
        for (const std::string& id : entry.approvalIds)
            out->add_approval_ids(id);
        for (const audit::Detail& detail : entry.details) {
            v1::AuditDetail* d = out->add_details();
            d->set_name(detail.name);
            if (detail.kind == audit::Detail::Kind::KeyedHash)
                d->set_keyed_hash(toHex(detail.value));
            else
                d->set_text(std::string(detail.value.begin(), detail.value.end()));
        }
    }

    Shared& shared_;
};

}  // namespace

std::unique_ptr<grpc::Service> makeAuditService(Shared& shared)
{
    return std::make_unique<AuditService>(shared);
}

}  // namespace sealtrain::api::server_internal
