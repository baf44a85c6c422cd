// What a start of the control plane runs with (change management, issue #49): recorded by
// platform/starts.h, given by the daemon to DataDirectory::recordStart.
#pragma once

#include <string>

namespace sealtrain::core {

// What a start of the control plane runs with (change management, issue #49).
struct PlatformStart {
    std::string version;       // the release (base/version.h's kVersion)
    std::string configSha256;  // SHA-256 (hex) of the daemon's effective options, as TOML
};

}  // namespace sealtrain::core
