// TLS 1.3 only, for a process that serves or calls gRPC (docs/decisions/0008-tls13-only.md).
// Debian's gRPC 1.51 links the system OpenSSL but its C++ API can not set a minimum protocol
// version, and its TLS layer sets OpenSSL's minimum to 1.2 itself. So the process points
// OPENSSL_CONF at a configuration of its own whose system-default TLS section disables every
// version but 1.3 (Protocol = -ALL, TLSv1.3: option flags, which a later minimum-version call
// does not clear) before OpenSSL reads any configuration. Call it first thing in main().
#pragma once

#include "sealtrain/base/result.h"

#include <filesystem>
#include <string>

namespace sealtrain::api {

// The configuration's text.
[[nodiscard]] std::string tls13OnlyOpensslConfig();

// Writes that configuration to `file` (mode 0600, replacing an older one), sets OPENSSL_CONF to
// it and has OpenSSL load it at once. OpenSSL loads a configuration once per process, so this
// must run before anything else in the process uses OpenSSL.
[[nodiscard]] Result<void> requireTls13(const std::filesystem::path& file);

// The lowest TLS version a new server context of this process accepts, asked of OpenSSL itself
// ("TLSv1.3" once requireTls13 ran; "none" when every version is off; empty when OpenSSL could
// not make a context): the compliance report's live evidence of the policy.
[[nodiscard]] std::string lowestAcceptedTlsVersion();

}  // namespace sealtrain::api
