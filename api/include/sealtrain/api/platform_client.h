// The client library's handle on the Platform service, ControlClient::platform() (docs/api.md). The
// control plane itself: its version and limits, its public keys, its backup (platform.backup).
// Every call returns a Result whose error is the server's one sentence, or the client's own for a
// transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/api/client_views.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace sealtrain::api {

// The platform's public keys, one per purpose.
struct SigningKeys {
    std::string auditPem;
    std::string manifestsPem;
    std::string checkpointsPem;
    std::string registryPem;  // the model registry's statements
    // The artefact root's certificate (issue #48): model exports chain to it, and nothing else
    // does; what a reviewer pins for `model_signing verify certificate`.
    std::string artefactRootPem;
};

// A backup received (ControlClient::backup): the archive's facts as the control plane sent them.
struct BackupReceived {
    std::uint64_t head = 0;  // the audit entries it holds
    std::string sha256;      // of the archive, hex; checked against the bytes received
    std::uint64_t bytes = 0;
    std::uint64_t files = 0;
    std::uint64_t referenced = 0;  // files named by digest only
    std::uint64_t referencedBytes = 0;
};

class PlatformClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // The control plane's version, the contract's, its session lifetimes and limits.
    [[nodiscard]] Result<ServerInfoView> serverInfo();
    [[nodiscard]] Result<SigningKeys> signingKeys();
    // platform.backup: the control plane's encrypted, signed archive of itself, written to
    // `out` (atomically: nothing is left at `out` when the call fails; an existing file is
    // refused). `referenceOver`: 0 for the control plane's default. `progress` sees the bytes
    // received and the total (client_backup.cpp).
    [[nodiscard]] Result<BackupReceived>
    backup(const std::filesystem::path& out, std::uint64_t referenceOver,
           const std::function<void(std::uint64_t received, std::uint64_t total)>& progress = {});
};

}  // namespace sealtrain::api
