// The client library's handle on the Compliance service, ControlClient::compliance() (docs/api.md).
// The compliance report with its signed evidence bundle (compliance.proto). Every call returns a
// Result whose error is the server's one sentence, or the client's own for a transport failure; no
// gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/api/compliance_views.h"
#include "sealtrain/base/result.h"

namespace sealtrain::api {

class ComplianceClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // audit.read and audit.export: the compliance report with its signed evidence bundle
    // (client_compliance.cpp; compliance.proto).
    [[nodiscard]] Result<ComplianceReportView>
    complianceReport(const CompliancePeriodRequest& period = {});
};

}  // namespace sealtrain::api
