// The client library's ComplianceClient (compliance_client.h; compliance.proto).
#include "client_state.h"

#include "sealtrain/v1/compliance.grpc.pb.h"

#include <chrono>

namespace sealtrain::api {

namespace v1 = sealtrain::v1;

namespace {

ComplianceReportView viewOf(const v1::ComplianceReport& report)
{
    ComplianceReportView view;
    view.origin = report.origin();
    view.generatedAt = report.generated_at();
    view.auditor = report.auditor();
    view.reportEntry = report.report_entry();
    view.logSize = report.log_size();
    view.period = report.period();
    if (report.has_from_unix_s())
        view.fromUnixSeconds = report.from_unix_s();
    if (report.has_to_unix_s())
        view.toUnixSeconds = report.to_unix_s();
    view.inPeriod = report.in_period();
    view.cited.assign(report.cited().begin(), report.cited().end());
    for (const v1::ComplianceControl& control : report.controls()) {
        ComplianceControlView& to = view.controls.emplace_back();
        to.framework = control.framework();
        to.id = control.id();
        to.title = control.title();
        to.verdict = control.verdict();
        to.tests.assign(control.tests().begin(), control.tests().end());
        for (const v1::ComplianceClaim& claim : control.claims())
            to.claims.push_back({claim.kind(),
                                 claim.text(),
                                 {claim.sequences().begin(), claim.sequences().end()},
                                 claim.broken(),
                                 claim.count()});
    }
    return view;
}

}  // namespace

Result<ComplianceReportView>
ComplianceClient::complianceReport(const CompliancePeriodRequest& period)
{
    v1::ComplianceReportRequest request;
    if (period.fromUnixSeconds)
        request.set_from_unix_s(*period.fromUnixSeconds);
    if (period.toUnixSeconds)
        request.set_to_unix_s(*period.toUnixSeconds);
    const auto stub = v1::Compliance::NewStub(state_->channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + client_internal::kStreamTimeout);
    auto stream = stub->Report(&context, request);
    ComplianceReportView view;
    bool gotReport = false;
    v1::ComplianceReportPart part;
    while (stream->Read(&part)) {
        if (part.has_report()) {
            const std::string bundle = std::move(view.bundle);
            view = viewOf(part.report());
            view.bundle = bundle;
            gotReport = true;
        } else {
            view.bundle += part.bundle();
        }
    }
    const grpc::Status status = stream->Finish();
    if (!status.ok())
        return state_->failure(status);
    if (!gotReport)
        return Error(ErrorCode::Internal,
                     "The control plane sent no compliance report; check that it is as new as "
                     "this client.");
    return view;
}

}  // namespace sealtrain::api
