// Inside sealtrain_audit_forward: the syslog-over-TLS target, opened by openForwardTarget.
#pragma once

#include "sealtrain/audit/forward_spool.h"

#include <memory>
#include <string_view>

namespace sealtrain::audit::internal {

inline constexpr std::string_view kSyslogTlsScheme = "syslog-tls://";

// "syslog-tls://HOST:PORT" (an IPv6 host in brackets); nothing is connected yet.
[[nodiscard]] Result<std::unique_ptr<ForwardTarget>> syslogTlsTarget(std::string_view target,
                                                                     const TargetOptions& options);

// One RFC 5424 message for `line`, framed by octet counting (RFC 5425 section 4.3):
// "LEN SP <110>1 TIMESTAMP HOSTNAME sealtrain-control PROCID MSGID - LINE".
[[nodiscard]] std::string syslogFrame(const ForwardLine& line, std::string_view hostname,
                                      long processId);

}  // namespace sealtrain::audit::internal
