// The client library's calls for a desktop client (client_views.h): pages of decoded audit
// entries, the control plane's verification of its live log, the server's facts and the
// permission catalogue.
#include "client_state.h"

#include "sealtrain/v1/control.grpc.pb.h"

#include <grpcpp/grpcpp.h>

namespace sealtrain::api {

namespace v1 = sealtrain::v1;
using client_internal::setDeadline;

namespace {

AuditEntryView viewOf(const v1::AuditEntry& entry)
{
    AuditEntryView view;
    view.sequence = entry.sequence();
    view.timeNs = entry.time_ns();
    view.actorKind = entry.actor_kind();
    view.actor = entry.actor();
    view.actorSession = entry.actor_session();
    view.authMethod = entry.auth_method();
    view.action = entry.action();
    view.targetKind = entry.target_kind();
    view.targetId = entry.target_id();
    view.outcome = entry.outcome();
    view.reason = entry.reason();
    view.requestId = entry.request_id();
    view.approvalIds = {entry.approval_ids().begin(), entry.approval_ids().end()};
    for (const v1::AuditDetail& detail : entry.details())
        view.details.push_back({detail.name(), detail.text(), detail.keyed_hash()});
    return view;
}

}  // namespace

Result<AuditPageView> AuditClient::queryAudit(const AuditQueryOptions& options)
{
    v1::QueryEntriesRequest request;
    *request.mutable_filter() = client_internal::filterOf(options.selection);
    request.set_outcome(options.outcome);
    request.set_cursor(options.cursor);
    request.set_limit(options.limit);
    request.set_oldest_first(options.oldestFirst);
    grpc::ClientContext context;
    setDeadline(context);
    v1::QueryEntriesReply reply;
    const grpc::Status status = state_->audit->QueryEntries(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    AuditPageView page;
    page.entries.reserve(static_cast<std::size_t>(reply.entries_size()));
    for (const v1::AuditEntry& entry : reply.entries())
        page.entries.push_back(viewOf(entry));
    page.nextCursor = reply.next_cursor();
    page.logSize = reply.log_size();
    return page;
}

Result<LogVerificationView> AuditClient::verifyAuditLog()
{
    grpc::ClientContext context;
    // A long log takes a while to re-read and hash: the export's deadline, not a call's.
    context.set_deadline(std::chrono::system_clock::now() + client_internal::kStreamTimeout);
    v1::VerifyLogReply reply;
    const grpc::Status status = state_->audit->VerifyLog(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    return LogVerificationView{reply.ok(),
                               reply.error(),
                               reply.entries(),
                               reply.heads(),
                               reply.witness_heads(),
                               reply.newest_head_size(),
                               reply.newest_head_unix(),
                               reply.newest_head_root(),
                               reply.key_id()};
}

Result<std::string> AuditClient::newestAuditHead()
{
    auto reply =
        state_->call(*state_->audit, &v1::Audit::Stub::NewestHead, v1::NewestHeadRequest{});
    if (!reply)
        return reply.error();
    return reply->signed_note();
}

Result<ServerInfoView> PlatformClient::serverInfo()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::GetServerInfoReply reply;
    const grpc::Status status = state_->platform->GetServerInfo(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    ServerInfoView info;
    info.version = reply.version();
    info.apiVersion = reply.api_version();
    info.sessionIdleSeconds = reply.session_idle_seconds();
    info.sessionMaxSeconds = reply.session_max_seconds();
    info.maxUploads = reply.max_uploads();
    info.maxImportBytes = reply.max_import_bytes();
    info.maxWatches = reply.max_watches();
    info.maxAuditPage = reply.max_audit_page();
    info.maxPasswordChecks = reply.max_password_checks();
    info.maxSpecBytes = reply.max_spec_bytes();
    info.enrolmentCodeLifetimeSeconds = reply.enrolment_code_lifetime_seconds();
    info.auditWitnessesOutside = reply.audit_witnesses_outside();
    if (reply.has_audit_forwarding()) {
        const auto& forwarding = reply.audit_forwarding();
        info.auditForwarding = AuditForwardingView{forwarding.kind(),
                                                   forwarding.delivered(),
                                                   forwarding.log_size(),
                                                   forwarding.head_size(),
                                                   forwarding.last_delivery_unix(),
                                                   forwarding.failing_since_unix(),
                                                   forwarding.failures()};
    }
    return info;
}

Result<std::vector<PermissionView>> AccessClient::listPermissions()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::ListPermissionsReply reply;
    const grpc::Status status = state_->access->ListPermissions(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    std::vector<PermissionView> permissions;
    for (const v1::PermissionInfo& permission : reply.permissions())
        permissions.push_back({permission.name(), permission.description(), permission.duty()});
    return permissions;
}

Result<std::vector<PendingResetView>> UsersClient::listPendingResets()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::ListPendingResetsReply reply;
    const grpc::Status status = state_->users->ListPendingResets(&context, {}, &reply);
    if (!status.ok())
        return state_->failure(status);
    std::vector<PendingResetView> resets;
    for (const v1::PendingReset& reset : reply.resets())
        resets.push_back({reset.user(), reset.requested_by(), reset.requested_unix()});
    return resets;
}

Result<PolicySummary> JobsClient::showPolicy()
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::ShowPolicyReply reply;
    const grpc::Status status = state_->jobs->ShowPolicy(&context, v1::ShowPolicyRequest(), &reply);
    if (!status.ok())
        return state_->failure(status);
    PolicySummary policy;
    for (const v1::PolicyPool& pool : reply.pools())
        policy.pools.push_back({pool.name(),
                                {pool.classifications().begin(), pool.classifications().end()},
                                pool.max_parameters(),
                                pool.max_memory_gib(),
                                pool.max_step_tflop()});
    for (const v1::PolicyCap& cap : reply.caps())
        policy.caps.emplace_back(cap.name(), cap.value());
    policy.sampleMaxLength = reply.sample_max_length();
    policy.sampleMaxPromptBytes = reply.sample_max_prompt_bytes();
    policy.sampleMaxSeconds = reply.sample_max_seconds();
    for (const v1::BudgetUse& budget : reply.budgets())
        policy.budgets.push_back({budget.project(), budget.gpu_hours(), budget.alert_at(),
                                  budget.used_hours(), budget.held_hours(), budget.cpu_hours(),
                                  budget.cpu_used_hours(), budget.cpu_held_hours()});
    return policy;
}

Result<std::vector<JobCheckpointView>> JobsClient::listCheckpoints(std::int64_t id)
{
    grpc::ClientContext context;
    setDeadline(context);
    v1::JobIdRequest request;
    request.set_id(id);
    v1::ListCheckpointsReply reply;
    const grpc::Status status = state_->jobs->ListCheckpoints(&context, request, &reply);
    if (!status.ok())
        return state_->failure(status);
    std::vector<JobCheckpointView> checkpoints;
    for (const v1::JobCheckpoint& checkpoint : reply.checkpoints())
        checkpoints.push_back(client_internal::checkpointViewOf(checkpoint));
    return checkpoints;
}

Result<std::vector<std::filesystem::path>>
JobsClient::downloadCheckpoint(std::int64_t id, std::int64_t step,
                               const std::filesystem::path& folder)
{
    v1::DownloadCheckpointRequest request;
    request.set_id(id);
    request.set_step(step);
    return state_->receiveFiles(
        [&](grpc::ClientContext& context) {
            return state_->jobs->DownloadCheckpoint(&context, request);
        },
        folder, std::uint64_t{1} << 40U);
}

}  // namespace sealtrain::api
