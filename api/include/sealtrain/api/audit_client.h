// The client library's handle on the Audit service, ControlClient::audit() (docs/api.md). The audit
// log: pages of decoded entries, its verification, its signed head, bundles (audit.read,
// audit.export). Every call returns a Result whose error is the server's one sentence, or the
// client's own for a transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/api/client_views.h"
#include "sealtrain/base/result.h"

#include <optional>
#include <string>

namespace sealtrain::api {

// An audit export: the bundle, and what its reader must know of it (a single admin: "Four eyes is
// not guaranteed: …").
struct AuditExport {
    std::string bundle;
    std::optional<std::string> warning;
};

class AuditClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // An audit bundle (docs/formats/audit.md) of the entries `selection` selects.
    [[nodiscard]] Result<std::string> exportAuditBundle(const AuditSelection& selection);
    // The same, with the control plane's warning about it.
    [[nodiscard]] Result<AuditExport> exportAudit(const AuditSelection& selection);
    // One page of decoded audit entries (audit.read; client_views.cpp).
    [[nodiscard]] Result<AuditPageView> queryAudit(const AuditQueryOptions& options);
    // The control plane's verification of its live log (audit.read).
    [[nodiscard]] Result<LogVerificationView> verifyAuditLog();
    // The newest signed head as a signed note (audit.read; one row, unlike verifyAuditLog), for
    // the caller to check with signingKeys().auditPem; empty before the first head.
    [[nodiscard]] Result<std::string> newestAuditHead();
};

}  // namespace sealtrain::api
